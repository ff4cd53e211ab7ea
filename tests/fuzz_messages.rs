//! Deterministic fuzzing of incoming MCP messages.
//!
//! Well-formed requests, notifications and responses of both eras (legacy and 2026-07-28) are
//! mutated by a seeded PRNG (splitmix64) and sent through every entry point: the stateless
//! `Registry::handle_mcp_message` and `handle_mcp_text`, and `ServerSession::handle` and
//! `handle_text` on sessions initialized under each legacy revision (2025-03-26 has batches).
//! Every case checks:
//!
//! - nothing panics (a panic fails this test: cases run directly, not under `catch_unwind`);
//! - a request (an `id` and a `method`) gets exactly one reply, under its id when that is a
//!   string or an integer (i64 or u64), without an `id` member otherwise;
//! - a notification (a `method`, no `id` member) and a response (no `method`; a `result` or
//!   an `error`) get no reply, however malformed;
//! - every reply is valid against the official schema of the revision it was sent under;
//! - the text entry points answer what the value entry points answer, except text nested
//!   deeper than `MAX_DEPTH`, which does not parse (serde_json's own limit) and is answered
//!   with -32700 as unparseable text is (crate docs' error table), whatever it holds.
//!
//! The same cases go through the Streamable HTTP router as POST bodies (a third as many;
//! some cut short or spoiled) with headers that mostly match them: no panic, a documented
//! status, and a body that is a JSON-RPC response (under the message's id), SSE of JSON, or
//! empty for `202`.
//!
//! `MCP_FUZZ_CASES` (default 3000) sets the number of cases and `MCP_FUZZ_SEED` the base seed;
//! a failure names its case's seed, which `MCP_FUZZ_REPLAY=<seed>` runs alone.

mod common;

use common::{LEGACY, MODERN, math_server, modern_meta, schema_errors, small_server};
use mcp_registry::protocol::MAX_DEPTH;
use mcp_registry::{Lifecycle, Registry, ServerSession};
use serde_json::{Map, Value, json};

const DEFAULT_SEED: u64 = 0x6d63_702d_6675_7a7a;
const DEFAULT_CASES: u64 = 3000;
const SERVER: &str = "math";
/// The revision a stateless legacy request is served under (none was negotiated).
const STATELESS: &str = "2025-11-25";

/// splitmix64: small, fast, and the same sequence everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn env_u64(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{name}={text:?} is not a number: {e}")))
}

// ---------------------------------------------------------------------------------------
// Generation

/// Member names a mutation renames to or adds.
const NAMES: &[&str] = &[
    "id",
    "jsonrpc",
    "method",
    "params",
    "result",
    "error",
    "_meta",
    "name",
    "arguments",
    "cursor",
    "text",
    "a",
    "b",
    "protocolVersion",
    "capabilities",
    "clientInfo",
    "requestId",
    "progressToken",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "",
    "x",
];

/// Strings a mutation puts in: methods, tool names (not `boom` or `sleep`), versions,
/// cursors (`tools:2`, `tools:99`) and junk.
const STRINGS: &[&str] = &[
    "",
    "2.0",
    "1.0",
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "server/discover",
    "notifications/initialized",
    "notifications/cancelled",
    "resources/list",
    "rpc.discover",
    "add",
    "echo",
    "divide",
    "t",
    "nope",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
    "2026-07-28",
    "1999-01-01",
    "dG9vbHM6Mg",
    "dG9vbHM6OTk",
    "é\u{0}\"\\\u{1f600}",
];

fn random_id(rng: &mut Rng) -> Value {
    match rng.below(22) {
        0 => json!(0),
        1 => json!(1),
        2 => json!(-1),
        3 => json!(i64::MAX),
        4 => json!(i64::MIN),
        5 => json!(u64::MAX),
        6 => json!(i64::MAX as u64 + 1),
        7 => json!(1.5),
        8 => json!(-0.5),
        9 => json!(1e20),
        10 => json!(2.0),
        11 => json!(""),
        12 => json!("abc"),
        13 => json!("1"),
        14 => Value::Null,
        15 => json!(true),
        16 => json!([]),
        17 => json!([1]),
        18 => json!({"id": 1}),
        19 => json!(rng.next() as i64),
        20 => json!(rng.next()),
        _ => json!(format!("id-{}", rng.next())),
    }
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    let kinds = if depth >= 3 { 8 } else { 11 };
    match rng.below(kinds) {
        0 => Value::Null,
        1 => json!(rng.one_in(2)),
        2 => json!(rng.below(10)),
        3 => json!(*rng.pick(&[i64::MIN, -1, i64::MAX])),
        4 => json!(u64::MAX),
        5 => json!(*rng.pick(&[0.5, -1e300, 1e-300, 3.0])),
        6 => json!(*rng.pick(STRINGS)),
        7 => random_id(rng),
        8 => Value::Array(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth + 1))
                .collect(),
        ),
        9 => {
            let mut map = Map::new();
            for _ in 0..rng.below(4) {
                map.insert(rng.pick(NAMES).to_string(), random_value(rng, depth + 1));
            }
            Value::Object(map)
        }
        _ => rng
            .pick(&[
                modern_meta(),
                json!({"name": "add", "arguments": {"a": 1}}),
                json!({"code": -32601, "message": "no"}),
            ])
            .clone(),
    }
}

/// `value` as another JSON type.
fn retype(rng: &mut Rng, value: Value) -> Value {
    match rng.below(6) {
        0 if !value.is_null() => Value::Null,
        1 if !value.is_string() => json!(value.to_string()),
        2 if !value.is_number() => match &value {
            Value::String(s) => s.parse::<i64>().map_or(json!(s.len()), |n| json!(n)),
            _ => json!(7),
        },
        3 if !value.is_array() => json!([value]),
        4 if !value.is_object() => json!({"value": value}),
        _ => json!(!value.as_bool().unwrap_or(false)),
    }
}

/// `value` nested in `levels` arrays.
fn nested(levels: usize, value: Value) -> Value {
    (0..levels).fold(value, |v, _| Value::Array(vec![v]))
}

/// JSON pointers to every array and object in `value`, itself included.
fn containers(value: &Value) -> Vec<String> {
    fn walk(value: &Value, at: String, out: &mut Vec<String>) {
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, format!("{at}/{i}"), out);
                }
            }
            Value::Object(members) => {
                for (k, v) in members {
                    let k = k.replace('~', "~0").replace('/', "~1");
                    walk(v, format!("{at}/{k}"), out);
                }
            }
            _ => return,
        }
        out.push(at);
    }
    let mut out = Vec::new();
    walk(value, String::new(), &mut out);
    out
}

/// One mutation somewhere inside `message`: a member or element dropped, renamed, retyped,
/// replaced or added.
fn mutate_inside(rng: &mut Rng, message: &mut Value) {
    let places = containers(message);
    if places.is_empty() {
        *message = retype(rng, message.take());
        return;
    }
    let place = rng.pick(&places).clone();
    let fresh = random_value(rng, 1);
    match message.pointer_mut(&place) {
        Some(Value::Object(members)) => {
            let keys: Vec<String> = members.keys().cloned().collect();
            let key = (!keys.is_empty()).then(|| rng.pick(&keys).clone());
            match (rng.below(5), key) {
                (0, Some(key)) => {
                    members.remove(&key);
                }
                (1, Some(key)) => {
                    let value = members.remove(&key).unwrap_or_default();
                    members.insert(rng.pick(NAMES).to_string(), value);
                }
                (2, Some(key)) => {
                    let value = members.remove(&key).unwrap_or_default();
                    members.insert(key, retype(rng, value));
                }
                (3, Some(key)) => {
                    members.insert(key, fresh);
                }
                _ => {
                    members.insert(rng.pick(NAMES).to_string(), fresh);
                }
            }
        }
        Some(Value::Array(items)) => {
            let len = items.len();
            match rng.below(3) {
                0 if len > 0 => {
                    items.remove(rng.below(len));
                }
                1 if len > 0 => {
                    let i = rng.below(len);
                    items[i] = retype(rng, items[i].take());
                }
                _ => items.insert(rng.below(len + 1), fresh),
            }
        }
        _ => unreachable!("{place} is a container of {message}"),
    }
}

/// One mutation of `message`, aimed mostly at the envelope and the members MCP reads.
fn mutate(rng: &mut Rng, message: &mut Value) {
    let choice = rng.below(14);
    let fresh = random_value(rng, 1);
    let id = random_id(rng);
    let Some(map) = message.as_object_mut() else {
        return mutate_inside(rng, message);
    };
    match choice {
        0 => {
            map.insert("id".into(), id);
        }
        1 => {
            map.remove("id");
        }
        2 => {
            let junk = [
                json!("1.0"),
                json!(2.0),
                json!("2.0 "),
                Value::Null,
                json!([]),
            ];
            map.insert("jsonrpc".into(), rng.pick(&junk).clone());
        }
        3 => {
            map.remove(*rng.pick(&["jsonrpc", "method", "params"]));
        }
        4 => {
            map.insert("method".into(), json!(*rng.pick(STRINGS)));
        }
        5 => {
            let junk = [json!([]), json!([1, 2]), json!("x"), Value::Null, json!(3)];
            map.insert("params".into(), rng.pick(&junk).clone());
        }
        6 => {
            // `_meta` and its members: versions of the other era, unsupported ones, wrong types.
            let params = map.entry("params").or_insert_with(|| json!({}));
            if let Some(params) = params.as_object_mut() {
                let meta = params.entry("_meta").or_insert_with(modern_meta);
                match (rng.below(3), meta.as_object_mut()) {
                    (0, Some(meta)) => {
                        meta.insert(
                            "io.modelcontextprotocol/protocolVersion".into(),
                            rng.pick(&[json!("2025-06-18"), json!("1999-01-01"), json!(2026)])
                                .clone(),
                        );
                    }
                    (1, Some(meta)) => {
                        meta.insert("io.modelcontextprotocol/clientCapabilities".into(), fresh);
                    }
                    _ => *meta = fresh,
                }
            }
        }
        7 => {
            // Junk nested around the limit somewhere in the message.
            let levels = *rng.pick(&[3, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 20]);
            map.insert(rng.pick(NAMES).to_string(), nested(levels, fresh));
        }
        8 => {
            let keys: Vec<String> = map.keys().cloned().collect();
            if !keys.is_empty() {
                let key = rng.pick(&keys).clone();
                let value = map.remove(&key).unwrap_or_default();
                map.insert(key, retype(rng, value));
            }
        }
        _ => mutate_inside(rng, message),
    }
}

/// The messages mutations start from; `cursor` is a real `tools/list` cursor.
fn base_messages(cursor: &str) -> Vec<Value> {
    let meta = modern_meta();
    vec![
        // Legacy requests.
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {"roots": {}},
            "clientInfo": {"name": "fuzz", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"cursor": cursor}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
               "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}),
        json!({"jsonrpc": "2.0", "id": "six", "method": "tools/call",
               "params": {"name": "echo", "arguments": {"text": "hi"},
                          "_meta": {"progressToken": 6}}}),
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": "divide", "arguments": {"a": 1, "b": 0}}}),
        // Notifications.
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 7, "reason": "user"}}),
        // Responses.
        json!({"jsonrpc": "2.0", "id": 8, "result": {}}),
        json!({"jsonrpc": "2.0", "id": "s-1", "error": {"code": -32601, "message": "no"}}),
        // 2026-07-28 requests.
        json!({"jsonrpc": "2.0", "id": 9, "method": "server/discover",
               "params": {"_meta": meta}}),
        json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list",
               "params": {"_meta": meta, "cursor": cursor}}),
        json!({"jsonrpc": "2.0", "id": "eleven", "method": "tools/call",
               "params": {"_meta": meta, "name": "add", "arguments": {"a": 4}}}),
        json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call",
               "params": {"_meta": meta, "name": "echo", "arguments": {"text": 5}}}),
    ]
}

/// One case: the message as a value and as the text sent to the text entry points (the
/// value's serialization, or a text with a duplicated member that parses to the value).
struct Case {
    seed: u64,
    message: Value,
    text: String,
}

fn generate(seed: u64, bases: &[Value]) -> Case {
    let mut rng = Rng(seed);
    let mut message = rng.pick(bases).clone();
    for _ in 0..rng.below(4) {
        mutate(&mut rng, &mut message);
    }
    if rng.one_in(8) {
        let mut batch = vec![message];
        for _ in 0..rng.below(4) {
            let mut other = rng.pick(bases).clone();
            if rng.one_in(2) {
                mutate(&mut rng, &mut other);
            }
            batch.insert(rng.below(batch.len() + 1), other);
        }
        if rng.one_in(6) {
            batch.clear();
        }
        message = Value::Array(batch);
    }
    let mut text = message.to_string();
    // A duplicated member: serde_json keeps the last one, so the text still parses to
    // `message`, but the text path has to read past the first.
    if let Some(map) = message
        .as_object()
        .filter(|m| !m.is_empty() && rng.one_in(10))
    {
        let keys: Vec<&String> = map.keys().collect();
        let key = Value::String(rng.pick(&keys).to_string());
        let first = random_value(&mut rng, 2);
        text = format!("{{{key}:{first},{}", &text[1..]);
    }
    Case {
        seed,
        message,
        text,
    }
}

// ---------------------------------------------------------------------------------------
// What each entry point must answer

/// Arrays and objects nested in `value` (a scalar is 0, `[1]` is 1).
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The id a reply must carry: the request's when it is a valid MCP id (a string or an
/// integer, i64 or u64), else none.
fn reply_id(message: &Value) -> Option<Value> {
    message
        .get("id")
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
        .cloned()
}

#[derive(Debug)]
enum Expect {
    /// Nothing is sent back.
    Silent,
    /// One reply: under `id` (no `id` member when `None`), valid against `version`'s schema as
    /// the answer to `method` (`None`: an error).
    Reply {
        id: Option<Value>,
        version: String,
        method: Option<String>,
    },
    /// A batch reply: these replies, in this order.
    Batch(Vec<Expect>),
}

fn error_without_id() -> Expect {
    Expect::Reply {
        id: None,
        version: STATELESS.to_owned(),
        method: None,
    }
}

/// The revision a request is served under: its `_meta` version when supported, else the
/// connection's.
fn served_version(message: &Value, connection: &str) -> String {
    let named = message
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str)
        .filter(|v| LEGACY.contains(v) || *v == MODERN);
    named.unwrap_or(connection).to_owned()
}

/// What one message (not a batch, or an element of one) must get.
fn expect_one(message: &Value, connection: &str) -> Expect {
    let has = |member: &str| message.get(member).is_some();
    if depth(message) > MAX_DEPTH {
        // Refused before it is read: answered only when it is a request (or a batch).
        return if message.is_array() || (has("method") && has("id")) {
            Expect::Reply {
                id: reply_id(message),
                version: STATELESS.to_owned(),
                method: None,
            }
        } else {
            Expect::Silent
        };
    }
    if !message.is_object() {
        return error_without_id();
    }
    if (has("method") && !has("id")) || (!has("method") && (has("result") || has("error"))) {
        return Expect::Silent;
    }
    Expect::Reply {
        id: reply_id(message),
        version: served_version(message, connection),
        method: message["method"].as_str().map(str::to_owned),
    }
}

/// What a whole message must get from an entry point that serves batches (or not) and
/// serves legacy requests under `connection`.
fn expect(message: &Value, connection: &str, batches: bool) -> Expect {
    let Value::Array(batch) = message else {
        return expect_one(message, connection);
    };
    if depth(message) > MAX_DEPTH || !batches || batch.is_empty() {
        return error_without_id();
    }
    let replies: Vec<Expect> = batch
        .iter()
        .map(|m| expect_one(m, connection))
        .filter(|e| !matches!(e, Expect::Silent))
        .collect();
    if replies.is_empty() {
        Expect::Silent
    } else {
        Expect::Batch(replies)
    }
}

/// Schema errors of `reply`, the answer to `method` under `version` (`None`: an error).
fn schema_check(version: &str, method: Option<&str>, reply: &Value) -> Vec<String> {
    if reply.get("error").is_some() {
        // An error under no id: revisions before 2025-11-25 require an id on every error,
        // 2025-11-25 is the first that lets an unknown one be left out (as it must be).
        let version = if reply.get("id").is_none() {
            version.max(STATELESS)
        } else {
            version
        };
        let def = if version >= STATELESS {
            "JSONRPCErrorResponse"
        } else {
            "JSONRPCError"
        };
        return schema_errors(version, def, reply);
    }
    let Some(method) = method else {
        return vec!["a result where an error was due".to_owned()];
    };
    let def = match method {
        "initialize" => "InitializeResult",
        "ping" => "EmptyResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "server/discover" => "DiscoverResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "resources/subscribe" | "resources/unsubscribe" => "EmptyResult",
        _ => return vec![format!("a result for {method:?}, which has none")],
    };
    if version == MODERN {
        return match def {
            "DiscoverResult"
            | "ListToolsResult"
            | "CallToolResult"
            | "ListResourcesResult"
            | "ListResourceTemplatesResult"
            | "ReadResourceResult" => schema_errors(MODERN, &format!("{def}Response"), reply),
            _ => vec![format!(
                "a 2026-07-28 result for {method:?}, which has none"
            )],
        };
    }
    if def == "DiscoverResult" {
        return vec![format!("a {version} result for server/discover")];
    }
    let envelope = if version >= STATELESS {
        "JSONRPCResultResponse"
    } else {
        "JSONRPCResponse"
    };
    let mut errors = schema_errors(version, envelope, reply);
    errors.extend(schema_errors(version, def, &reply["result"]));
    errors
}

/// Checks `reply` against `expect`; `Err` says what is wrong.
fn check(expect: &Expect, reply: Option<&Value>) -> Result<(), String> {
    match (expect, reply) {
        (Expect::Silent, None) => Ok(()),
        (Expect::Silent, Some(_)) => Err("answered a message that must not be answered".into()),
        (_, None) => Err("no reply".into()),
        (Expect::Batch(expected), Some(reply)) => {
            let Value::Array(replies) = reply else {
                return Err("a batch answered with something else than an array".into());
            };
            if replies.len() != expected.len() {
                return Err(format!(
                    "{} replies in the batch reply, {} expected",
                    replies.len(),
                    expected.len()
                ));
            }
            for (i, (expect, reply)) in expected.iter().zip(replies).enumerate() {
                check(expect, Some(reply)).map_err(|e| format!("batch reply {i}: {e}"))?;
            }
            Ok(())
        }
        (
            Expect::Reply {
                id,
                version,
                method,
            },
            Some(reply),
        ) => {
            if !reply.is_object() {
                return Err("a reply that is not an object".into());
            }
            match (id, reply.get("id")) {
                (Some(id), Some(got)) if got == id => {}
                (None, None) => {}
                (Some(id), got) => return Err(format!("reply id {got:?}, the request's is {id}")),
                (None, Some(got)) => {
                    return Err(format!("reply id {got}, but the request's id is not valid"));
                }
            }
            let errors = schema_check(version, method.as_deref(), reply);
            if errors.is_empty() {
                Ok(())
            } else {
                Err(format!("not valid under {version}: {errors:#?}"))
            }
        }
    }
}

/// What the text entry point must answer, given the value entry point's reply.
fn check_text(
    message: &Value,
    value_reply: Option<&Value>,
    text: Option<String>,
) -> Result<(), String> {
    let text_reply = match text {
        None => None,
        Some(text) => Some(
            serde_json::from_str::<Value>(&text)
                .map_err(|e| format!("the text reply is not JSON ({e}): {text}"))?,
        ),
    };
    if depth(message) > MAX_DEPTH {
        // Documented difference: text nested that deep does not parse (-32700, no id).
        return match &text_reply {
            Some(r) if r["error"]["code"] == -32700 && r.get("id").is_none() => Ok(()),
            other => Err(format!(
                "text deeper than the limit answered {other:?}, not -32700"
            )),
        };
    }
    if text_reply.as_ref() == value_reply {
        Ok(())
    } else {
        Err(format!(
            "the text reply {text_reply:?} differs from the value reply {value_reply:?}"
        ))
    }
}

// ---------------------------------------------------------------------------------------
// The run

struct Harness {
    registry: Registry,
    /// Initialized sessions with the version each negotiated.
    sessions: Vec<(ServerSession, &'static str)>,
    _outgoing: Vec<mcp_registry::dispatch::Outgoing>,
    bases: Vec<Value>,
}

async fn harness() -> Harness {
    let registry = Registry::builder()
        .page_size(2)
        .server(math_server())
        .server(small_server("other", "t", "x"))
        .build();
    let first = registry
        .handle_mcp_message(
            SERVER,
            json!({"jsonrpc": "2.0", "id": 0, "method": "tools/list"}),
        )
        .await
        .expect("a tools/list reply");
    let cursor = first["result"]["nextCursor"]
        .as_str()
        .unwrap_or_else(|| panic!("a first page of two tools has a next cursor: {first}"))
        .to_owned();
    let mut sessions = Vec::new();
    let mut outgoing = Vec::new();
    for version in LEGACY {
        let (session, out) = ServerSession::new(registry.clone(), SERVER);
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "1"}}});
        let reply = session.handle(init).await;
        assert_eq!(
            reply.as_ref().map(|r| &r["result"]["protocolVersion"]),
            Some(&json!(version)),
            "initialize under {version}: {reply:?}"
        );
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(session.handle(initialized).await, None);
        assert_eq!(session.lifecycle(), Lifecycle::Ready);
        sessions.push((session, version));
        outgoing.push(out);
    }
    Harness {
        registry,
        sessions,
        _outgoing: outgoing,
        bases: base_messages(&cursor),
    }
}

/// Runs one case through every entry point; `Err` names the entry point and what is wrong.
async fn run_case(h: &Harness, case: &Case) -> Result<(), String> {
    let message = &case.message;

    let reply = h.registry.handle_mcp_message(SERVER, message.clone()).await;
    check(&expect(message, STATELESS, true), reply.as_ref())
        .map_err(|e| format!("Registry::handle_mcp_message: {e}\n  reply: {reply:?}"))?;
    let text = h.registry.handle_mcp_text(SERVER, &case.text).await;
    check_text(message, reply.as_ref(), text)
        .map_err(|e| format!("Registry::handle_mcp_text: {e}"))?;

    let (session, version) = &h.sessions[(case.seed % h.sessions.len() as u64) as usize];
    let batches = *version == "2025-03-26";
    let reply = session.handle(message.clone()).await;
    check(&expect(message, version, batches), reply.as_ref()).map_err(|e| {
        format!("ServerSession::handle (negotiated {version}): {e}\n  reply: {reply:?}")
    })?;
    let text = session.handle_text(&case.text).await;
    check_text(message, reply.as_ref(), text)
        .map_err(|e| format!("ServerSession::handle_text (negotiated {version}): {e}"))?;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn mutated_messages_are_answered_by_the_rules() {
    let base = env_u64("MCP_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let cases = env_u64("MCP_FUZZ_CASES").unwrap_or(DEFAULT_CASES);
    let seeds: Vec<u64> = match env_u64("MCP_FUZZ_REPLAY") {
        Some(seed) => vec![seed],
        None => (0..cases)
            .map(|i| Rng(base.wrapping_add(i)).next())
            .collect(),
    };
    let h = harness().await;
    for (i, &seed) in seeds.iter().enumerate() {
        let case = generate(seed, &h.bases);
        if let Err(failure) = run_case(&h, &case).await {
            let mut shown = case.text.clone();
            if shown.len() > 4000 {
                shown.truncate(4000);
                shown.push_str("...");
            }
            panic!(
                "fuzz case {i} of base seed {base:#x} failed; replay with MCP_FUZZ_REPLAY={seed:#x}\n  message: {shown}\n  {failure}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// The Streamable HTTP transport: the same mutated messages, as POST bodies (sometimes cut
// short or spoiled) with headers that mostly match them and sometimes do not, through the
// axum router.

/// Headers for `message`: those a client sends (`Content-Type`, `Accept`, the mirrored
/// 2026-07-28 ones read from the message, a session id), each then kept, dropped or spoiled.
fn http_headers(rng: &mut Rng, message: &Value, session: &str) -> Vec<(&'static str, String)> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
    let params = message.get("params");
    let version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"));
    let mut headers = vec![
        ("content-type", "application/json".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
        ("mcp-method", text(message.get("method"))),
        ("mcp-name", text(params.and_then(|p| p.get("name")))),
        ("mcp-protocol-version", text(version)),
        ("mcp-session-id", session.to_owned()),
        ("mcp-param-a", "1".to_owned()),
    ];
    let spoiled = [
        "",
        "text/plain",
        "application/json; charset=utf-8",
        "*/*",
        "text/event-stream;q=0, application/json",
        "2025-11-25",
        "2026-07-28",
        "=?base64?@@@?=",
        "=?base64?YWRk?=",
        "unknown-session",
        "localhost.evil.example",
    ];
    for header in &mut headers {
        match rng.below(8) {
            0 => header.1 = rng.pick(&spoiled).to_string(),
            1 => header.1 = rng.pick(STRINGS).to_string(),
            _ => {}
        }
    }
    headers.retain(|(_, v)| !v.is_empty() && !rng.one_in(10));
    if rng.one_in(12) {
        headers.push(("host", rng.pick(&spoiled).to_string()));
    }
    if rng.one_in(12) {
        headers.push(("origin", format!("http://{}", rng.pick(&spoiled))));
    }
    headers
}

/// The body for `case`: its text, sometimes cut short or with a byte spoiled.
fn http_body(rng: &mut Rng, case: &Case) -> Vec<u8> {
    let mut body = case.text.clone().into_bytes();
    match rng.below(10) {
        0 if !body.is_empty() => body.truncate(rng.below(body.len())),
        1 if !body.is_empty() => {
            let at = rng.below(body.len());
            body[at] = rng.pick(&[0u8, b'"', b'{', b']', 0xff, b'\\']).to_owned();
        }
        _ => {}
    }
    body
}

/// What any answer from the HTTP transport must be: a status it documents; `202` empty; a
/// JSON body a JSON-RPC response (or a batch of them) whose `id`, when the message was one
/// object, is its id or none; an SSE body of JSON events.
fn check_http(message: &Value, status: u16, content_type: &str, body: &str) -> Result<(), String> {
    const STATUSES: &[u16] = &[200, 202, 400, 401, 403, 404, 405, 406, 408, 413, 415, 503];
    if !STATUSES.contains(&status) {
        return Err(format!("status {status}"));
    }
    if status == 202 {
        return if body.is_empty() {
            Ok(())
        } else {
            Err("a 202 with a body".to_owned())
        };
    }
    if content_type.starts_with("text/event-stream") {
        for data in body.lines().filter_map(|l| l.strip_prefix("data:")) {
            serde_json::from_str::<Value>(data.trim()).map_err(|e| format!("SSE data: {e}"))?;
        }
        return Ok(());
    }
    let reply: Value = serde_json::from_str(body).map_err(|e| format!("body: {e}"))?;
    let replies = match &reply {
        Value::Array(replies) => replies.iter().collect(),
        one => vec![one],
    };
    for reply in replies {
        let shaped = reply["jsonrpc"] == "2.0"
            && (reply.get("result").is_some()
                || (reply["error"]["code"].is_i64() && reply["error"]["message"].is_string()));
        if !shaped {
            return Err(format!("not a JSON-RPC response: {reply}"));
        }
    }
    if message.is_object() && !reply.is_array() {
        let id = reply.get("id").filter(|id| !id.is_null());
        if id.is_some() && id != reply_id(message).as_ref() {
            return Err(format!(
                "reply id {id:?} for message id {:?}",
                message.get("id")
            ));
        }
    }
    Ok(())
}

/// One request through the router; the status, content type and body it got (`None` when
/// the HTTP crate refuses a header value: no server ever sees such a request).
async fn http_exchange(
    app: &axum::Router,
    headers: &[(&'static str, String)],
    body: Vec<u8>,
) -> Option<(u16, String, String)> {
    use http_body_util::BodyExt as _;
    use tower::ServiceExt as _;
    let mut request = axum::http::Request::builder().method("POST").uri("/mcp");
    for (name, value) in headers {
        request = request.header(*name, value.as_bytes());
    }
    let request = request.body(axum::body::Body::from(body)).ok()?;
    let response = app.clone().oneshot(request).await.expect("infallible");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    Some((
        status,
        content_type,
        String::from_utf8_lossy(&bytes).into_owned(),
    ))
}

#[tokio::test(start_paused = true)]
async fn mutated_http_requests_are_answered_by_the_rules() {
    use mcp_registry::transport::http::{HttpConfig, router};
    let base = env_u64("MCP_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let cases = env_u64("MCP_FUZZ_CASES").unwrap_or(DEFAULT_CASES) / 3;
    let h = harness().await;
    let app = router(h.registry.clone(), SERVER, HttpConfig::default());
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#;
    let headers = [
        ("content-type", "application/json".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
    ];
    let seeds: Vec<u64> = match env_u64("MCP_FUZZ_REPLAY") {
        Some(seed) => vec![seed],
        None => (0..cases)
            .map(|i| Rng(base.wrapping_add(!i)).next())
            .collect(),
    };
    // A live session id, learned once: the first initialize's.
    let session = {
        let response = {
            use tower::ServiceExt as _;
            let mut request = axum::http::Request::builder().method("POST").uri("/mcp");
            for (name, value) in &headers {
                request = request.header(*name, value.as_str());
            }
            let request = request.body(axum::body::Body::from(init)).unwrap();
            app.clone().oneshot(request).await.unwrap()
        };
        response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned()
    };
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for (i, &seed) in seeds.iter().enumerate() {
        let case = generate(seed, &h.bases);
        let mut rng = Rng(seed ^ 0x4854_5450);
        let headers = http_headers(&mut rng, &case.message, &session);
        let body = http_body(&mut rng, &case);
        let Some((status, content_type, reply)) = http_exchange(&app, &headers, body.clone()).await
        else {
            continue;
        };
        *statuses.entry(status).or_default() += 1;
        if let Err(failure) = check_http(&case.message, status, &content_type, &reply) {
            panic!(
                "HTTP fuzz case {i} of base seed {base:#x} failed; replay with MCP_FUZZ_REPLAY={seed:#x}\n  headers: {headers:?}\n  body: {}\n  {failure}\n  reply: {status} {reply}",
                String::from_utf8_lossy(&body[..body.len().min(2000)])
            );
        }
    }
    // The cases reach the server's answers, not only its refusals.
    if seeds.len() > 100 {
        for status in [200, 202, 400, 404] {
            assert!(
                statuses.contains_key(&status),
                "no {status} in {statuses:?}"
            );
        }
    }
}

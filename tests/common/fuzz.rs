//! Deterministic fuzzing of incoming MCP messages (`tests/fuzz_messages.rs`,
//! `tests/fuzz_http.rs`): a seeded PRNG (splitmix64), the messages mutations start from, the
//! mutations, and a registry with sessions initialized under each legacy revision.

use mcp_registry::protocol::MAX_DEPTH;
use mcp_registry::{Lifecycle, Registry, ServerSession};
use serde_json::{Map, Value, json};

use super::{LEGACY, math_server, modern_meta, small_server};

pub const DEFAULT_SEED: u64 = 0x6d63_702d_6675_7a7a;
pub const DEFAULT_CASES: u64 = 3000;
pub const SERVER: &str = "math";
/// splitmix64: small, fast, and the same sequence everywhere.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

pub fn env_u64(name: &str) -> Option<u64> {
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
pub const STRINGS: &[&str] = &[
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
pub struct Case {
    pub seed: u64,
    pub message: Value,
    pub text: String,
}

pub fn generate(seed: u64, bases: &[Value]) -> Case {
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

/// The id a reply must carry: the request's when it is a valid MCP id (a string or an
/// integer, i64 or u64), else none.
pub fn reply_id(message: &Value) -> Option<Value> {
    message
        .get("id")
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
        .cloned()
}

// ---------------------------------------------------------------------------------------
// The registry the cases go to

pub struct Harness {
    pub registry: Registry,
    /// Initialized sessions with the version each negotiated.
    pub sessions: Vec<(ServerSession, &'static str)>,
    _outgoing: Vec<mcp_registry::Outgoing>,
    pub bases: Vec<Value>,
}

pub async fn harness() -> Harness {
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

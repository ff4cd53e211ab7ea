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
//! The same cases go through the Streamable HTTP router in `tests/fuzz_http.rs`.
//!
//! `MCP_FUZZ_CASES` (default 3000) sets the number of cases and `MCP_FUZZ_SEED` the base seed;
//! a failure names its case's seed, which `MCP_FUZZ_REPLAY=<seed>` runs alone.

use crate::common;

use common::fuzz::{
    Case, DEFAULT_CASES, DEFAULT_SEED, Harness, Rng, SERVER, env_u64, generate, harness, reply_id,
};
use common::{LEGACY, MODERN, schema_errors};
use mcp_registry::protocol::MAX_DEPTH;
use serde_json::Value;

/// The revision a stateless legacy request is served under (none was negotiated).
const STATELESS: &str = "2025-11-25";

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

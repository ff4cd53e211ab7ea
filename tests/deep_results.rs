//! A tool whose result nests deeper than `protocol::MAX_DEPTH` is refused with an `isError`
//! result, on a thread with an ordinary stack: serializing it used to overflow the stack and
//! abort the process (15,000 levels of `Json<Value>`).

use mcp_registry::protocol::MAX_DEPTH;
use mcp_registry::{Json, Registry, Server, Tool};
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Levels {
    levels: usize,
}

/// A value nesting `levels` arrays and objects, built without recursion (`json!` would
/// copy the inner value recursively).
fn nested(levels: usize) -> Value {
    let mut v = Value::from(1);
    for i in 0..levels {
        v = if i % 2 == 0 {
            Value::Array(vec![v])
        } else {
            Value::Object(serde_json::Map::from_iter([("k".to_owned(), v)]))
        };
    }
    v
}

/// A struct holding a value: serialized through its own `Serialize`, not taken as a `Value`.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Holder {
    data: Value,
}

fn registry() -> Registry {
    let deep = Tool::builder("deep")
        .typed(|a: Levels| async move { Json(nested(a.levels)) })
        .unwrap();
    let held = Tool::builder("held")
        .typed(|a: Levels| async move {
            Json(Holder {
                data: nested(a.levels),
            })
        })
        .unwrap();
    Registry::from_servers([Server::new("s", None, [deep, held]).unwrap()])
}

/// Calls `tool` with `levels` on a thread with a 2 MiB stack (a Tokio worker's).
fn call(tool: &'static str, levels: usize) -> Value {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": tool, "arguments": {"levels": levels}}});
                let reply = registry().handle_mcp_message("s", request).await.unwrap();
                // Only the verdict leaves the thread: a deep reply would be dropped here.
                json!({
                    "isError": reply["result"]["isError"],
                    "text": reply["result"]["content"][0]["text"],
                })
            })
        })
        .unwrap()
        .join()
        .expect("the call did not crash its thread")
}

#[test]
fn a_json_value_result_too_deep_is_refused_whatever_its_depth() {
    for levels in [MAX_DEPTH + 1, 15_000, 100_000] {
        let verdict = call("deep", levels);
        assert_eq!(verdict["isError"], true, "{levels}: {verdict}");
        let text = verdict["text"].as_str().unwrap();
        assert!(text.contains("deeper than 127 levels"), "{text}");
    }
    // A bare value is wrapped in `{"result": …}`, a level more: at the limit it is served.
    assert_eq!(call("deep", MAX_DEPTH - 1)["isError"], Value::Null);
}

#[test]
fn a_typed_result_too_deep_is_refused() {
    // The struct adds a level of its own.
    let verdict = call("held", MAX_DEPTH);
    assert_eq!(verdict["isError"], true, "{verdict}");
    assert!(
        verdict["text"]
            .as_str()
            .unwrap()
            .contains("protocol::MAX_DEPTH")
    );
    assert_eq!(call("held", MAX_DEPTH - 1)["isError"], Value::Null);
}

//! The request-state key ring on live registries: two registries standing for two replicas
//! share keys, a key is rotated on both while multi round-trip requests go back and forth
//! between them, and none fails; a retired key's state is refused with a clear error.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use mcp_registry::tool::{Elicitation, InputError, RequestStateKeys};
use mcp_registry::{Registry, Server, Tool, ToolContext};
use serde_json::{Map, Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

/// A replica: `greet` asks a name, then greets.
fn replica(keys: RequestStateKeys) -> Registry {
    let greet = Tool::builder("greet")
        .typed(|ctx: ToolContext, _: Map<String, Value>| async move {
            match ctx.elicit::<Name>("Who are you?").await? {
                Elicitation::Accept(Name { name }) => {
                    Ok::<_, InputError>(format!("Hello, {name}!"))
                }
                _ => Ok("Hello, stranger!".to_owned()),
            }
        })
        .unwrap();
    Registry::builder()
        .request_state_keys(keys)
        .server(Server::new("s", None, [greet]).unwrap())
        .build()
}

fn call(id: u64, extra: Value) -> Value {
    let mut params = json!({
        "name": "greet",
        "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        }
    });
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// The first round on `first`; the state it issued.
async fn ask(first: &Registry) -> String {
    let reply = first
        .handle_mcp_message("s", call(1, json!({})))
        .await
        .unwrap();
    reply["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState in {reply}"))
        .to_owned()
}

/// The retry of a request whose state is `state`, on `second`: the JSON-RPC reply.
async fn answer(second: &Registry, state: String) -> Value {
    let retry = json!({
        "inputResponses": {"elicitation-0": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": state,
    });
    second
        .handle_mcp_message("s", call(2, retry))
        .await
        .unwrap()
}

/// One multi round-trip request: asked on `first`, answered on `second`; whether it
/// completed.
async fn round_trip(first: &Registry, second: &Registry) -> Result<(), Value> {
    let state = ask(first).await;
    // Let a rotation step run between the rounds.
    tokio::task::yield_now().await;
    let done = answer(second, state).await;
    if done["result"]["content"][0]["text"] == "Hello, Ada!" {
        Ok(())
    } else {
        Err(done)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_rotated_on_both_replicas_under_load_fails_no_request() {
    let (old, new) = ([1u8; 32], [2u8; 32]);
    let keys = [RequestStateKeys::new(old), RequestStateKeys::new(old)];
    let replicas = Arc::new([replica(keys[0].clone()), replica(keys[1].clone())]);
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let mut load = Vec::new();
    for worker in 0..4usize {
        let (replicas, stop, done) = (replicas.clone(), stop.clone(), done.clone());
        load.push(tokio::spawn(async move {
            let mut failures = Vec::new();
            let mut i = worker;
            // At least 20 requests each, then until the rotation is over.
            while i < worker + 20 || !stop.load(Ordering::SeqCst) {
                let (a, b) = (&replicas[i % 2], &replicas[(i + 1) % 2]);
                if let Err(reply) = round_trip(a, b).await {
                    failures.push(reply);
                }
                done.fetch_add(1, Ordering::SeqCst);
                i += 1;
            }
            failures
        }));
    }
    // The three steps, each on both replicas before the next, while the load runs.
    let progressed = |n: usize| {
        let done = done.clone();
        async move {
            while done.load(Ordering::SeqCst) < n {
                tokio::task::yield_now().await;
            }
        }
    };
    progressed(10).await;
    keys.iter().for_each(|k| k.accept(new));
    progressed(30).await;
    keys.iter().for_each(|k| k.rotate(new));
    progressed(50).await;
    stop.store(true, Ordering::SeqCst);
    let mut failures = Vec::new();
    for worker in load {
        failures.extend(worker.await.unwrap());
    }
    assert!(failures.is_empty(), "failed during rotation: {failures:?}");
    assert!(done.load(Ordering::SeqCst) >= 80);

    // A state signed with the old key, then the old key retired: refused, clearly.
    let signed_by_old = {
        let legacy = replica(RequestStateKeys::new(old));
        ask(&legacy).await
    };
    answer(&replicas[1], signed_by_old.clone())
        .await
        .get("result")
        .expect("the old key still verifies before it is retired");
    keys.iter().for_each(|k| k.retire(&old).unwrap());
    let refused = answer(&replicas[1], signed_by_old).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("integrity check"), "{message}");
    round_trip(&replicas[0], &replicas[1]).await.unwrap();
}

#[tokio::test]
async fn a_registry_without_keys_rotates_through_its_own_handle() {
    let registry = replica(RequestStateKeys::random());
    let plain = Registry::builder()
        .server(Server::new("s", None, []).unwrap())
        .build();
    // A registry that was given no key has one anyway, and a handle to it.
    assert_eq!(plain.request_state_keys().fingerprints().len(), 1);
    let state = ask(&registry).await;
    let handle = registry.request_state_keys();
    handle.rotate([5; 32]);
    assert_eq!(handle.fingerprints().len(), 2);
    // The state issued before the rotation still verifies.
    let done = answer(&registry, state).await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");
    // And the new key signs: a replica with only it accepts the new state.
    let state = ask(&registry).await;
    let other = replica(RequestStateKeys::new([5; 32]));
    let done = answer(&other, state).await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");
}

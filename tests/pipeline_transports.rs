//! The registry's layers see every request kind over stdio and Streamable HTTP too, and a
//! layer's refusal reaches the peer.

use crate::common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use mcp_registry::client::Client;
use mcp_registry::layer::{RequestKind, layer_fn};
use mcp_registry::protocol::{CompleteArgument, CompleteParams, CompletionReference, Completions};
use mcp_registry::transport::http::{HttpConfig, serve};
use mcp_registry::{Prompt, Registry, Resource, Server, Tool};
use serde_json::{Value, json};

type Seen = Arc<Mutex<Vec<RequestKind>>>;

/// A server with one item of each kind, behind a layer that records every request and
/// refuses those whose arguments name "forbidden".
fn watched() -> (Registry, Seen) {
    let hi = Tool::new("hi", "Say hi", json!({"type": "object"}), |_| async {
        "hi"
    })
    .unwrap();
    let greet = Prompt::builder("greet")
        .optional_argument("name", "Who")
        .complete("name", |partial, _ctx| async move {
            Completions::matching(["Ada", "Alan"], &partial)
        })
        .handler(|_| async { "Hello" })
        .unwrap();
    let motd = Resource::builder("text://motd", "motd")
        .handler(|_| async { "Welcome" })
        .unwrap();
    let server = Server::builder("s")
        .tool(hi)
        .prompt(greet)
        .resource(motd)
        .build()
        .unwrap();
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let registry = Registry::builder()
        .server(server)
        .layer(layer_fn(move |request, next| {
            log.lock().unwrap().push(request.kind());
            async move {
                if request.arguments()["name"] == "forbidden" {
                    return request.refuse("not over this transport");
                }
                next.run(request).await
            }
        }))
        .build();
    (registry, seen)
}

fn every_kind() -> Vec<RequestKind> {
    vec![
        RequestKind::Tool,
        RequestKind::Prompt,
        RequestKind::Resource,
        RequestKind::Completion,
        RequestKind::Tool,
    ]
}

#[tokio::test]
async fn over_streamable_http() {
    let (registry, seen) = watched();
    let port = common::free_port();
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let served =
        tokio::spawn(async move { serve(registry, "s", addr, HttpConfig::default()).await });
    let url = format!("http://127.0.0.1:{port}/mcp");
    let client: Client = common::connect_http_when_up(Client::builder, &url).await;
    assert_eq!(
        client
            .call_tool("hi", json!({}))
            .await
            .unwrap()
            .first_text(),
        Some("hi")
    );
    client
        .get_prompt("greet", Default::default())
        .await
        .unwrap();
    client.read_resource("text://motd").await.unwrap();
    client
        .complete(CompleteParams {
            reference: CompletionReference::Prompt {
                name: "greet".into(),
            },
            argument: CompleteArgument {
                name: "name".into(),
                value: "A".into(),
            },
            context: None,
        })
        .await
        .unwrap();
    let refused = client
        .call_tool("hi", json!({"name": "forbidden"}))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        refused.first_text(),
        Some("calling tool \"hi\" was denied: not over this transport")
    );
    assert_eq!(*seen.lock().unwrap(), every_kind());
    served.abort();
}

#[tokio::test]
async fn over_stdio() {
    let (registry, seen) = watched();
    let (mut pipe, server) = common::stdio::serve_piped(registry, "s");
    let messages = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hi"}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "greet"}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "text://motd"}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "completion/complete", "params": {
            "ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "A"}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
               "params": {"name": "hi", "arguments": {"name": "forbidden"}}}),
    ];
    let mut last = Value::Null;
    for message in messages {
        let answered = message.get("id").is_some();
        pipe.send_json(message).await;
        if answered {
            last = pipe.recv().await;
            assert!(last.get("result").is_some(), "{last}");
        }
    }
    assert_eq!(last["result"]["isError"], true);
    assert_eq!(
        last["result"]["content"][0]["text"],
        "calling tool \"hi\" was denied: not over this transport"
    );
    assert_eq!(*seen.lock().unwrap(), every_kind());
    // The client's end closed whole: the server sees the end of its input and stops.
    drop(pipe);
    tokio::time::timeout(std::time::Duration::from_secs(10), server)
        .await
        .expect("the server stops once its input ends")
        .unwrap()
        .unwrap();
}

//! 2026-07-28 `subscriptions/listen`: the acknowledgement first, then only the notification
//! types asked for, tagged with the subscription id, until cancelled (no reply) or the server
//! goes away (a graceful result); in-process and in a session. Every message validated against
//! the official 2026-07-28 schema.

use crate::common;

use std::time::Duration;

use common::listen::{Notes, cancel_unanswered, listen, next, open};
use common::{MODERN, assert_reply, assert_valid, modern_meta};
use mcp_registry::{Prompt, Registry, Resource, Server, ServerSession, Tool};
use serde_json::json;

fn server(tools: &[&str]) -> Server {
    let tools = tools.iter().map(|name| {
        Tool::new(*name, "A tool", json!({"type": "object"}), |_| async {
            "ok"
        })
        .unwrap()
    });
    let prompt = Prompt::builder("p").handler(|_| async { "p" }).unwrap();
    let resource = Resource::builder("data://a", "a")
        .handler(|_| async { "a" })
        .unwrap();
    Server::builder("live")
        .tools(tools)
        .prompt(prompt)
        .resource(resource)
        .build()
        .unwrap()
}

async fn quiet(rx: &mut Notes) {
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(rx.try_recv().is_err(), "nothing more was sent");
}

#[tokio::test]
async fn acknowledged_first_then_only_what_was_asked_until_cancelled() {
    let registry = Registry::from_servers([server(&["t1"])]);
    let (task, mut rx, token) = open(
        &registry,
        "live",
        listen(
            json!(7),
            json!({"toolsListChanged": true, "promptsListChanged": true}),
        ),
    );
    let ack = next(&mut rx).await;
    assert_valid(MODERN, "SubscriptionsAcknowledgedNotification", &ack);
    assert_eq!(
        ack["params"],
        json!({"_meta": {"io.modelcontextprotocol/subscriptionId": 7},
               "notifications": {"toolsListChanged": true, "promptsListChanged": true}})
    );

    registry.register_server(server(&["t1", "t2"]));
    let tools = next(&mut rx).await;
    assert_valid(MODERN, "ToolListChangedNotification", &tools);
    assert_eq!(tools["method"], "notifications/tools/list_changed");
    assert_eq!(
        tools["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    let prompts = next(&mut rx).await;
    assert_valid(MODERN, "PromptListChangedNotification", &prompts);
    quiet(&mut rx).await; // no resources list change: not asked for

    // Another server's change is not this stream's.
    registry.register_server(Server::builder("other").build().unwrap());
    quiet(&mut rx).await;

    cancel_unanswered(task, token).await;
}

#[tokio::test]
async fn a_filter_keeps_other_types_out_and_unsupported_ones_are_not_acknowledged() {
    let registry = Registry::from_servers([server(&["t1"])]);
    let plain = Server::builder("plain").build().unwrap();
    registry.register_server(plain);
    let (_task, mut rx, token) = open(
        &registry,
        "live",
        listen(json!("s"), json!({"promptsListChanged": true})),
    );
    next(&mut rx).await;
    registry.register_server(server(&["t1", "t2"]));
    let only = next(&mut rx).await;
    assert_eq!(only["method"], "notifications/prompts/list_changed");
    quiet(&mut rx).await;
    token.cancel();

    // A server without prompts or resources agrees to tool changes only.
    let everything = json!({"toolsListChanged": true, "promptsListChanged": true,
                            "resourcesListChanged": true, "resourceSubscriptions": ["data://a"]});
    let (_task, mut rx, token) = open(&registry, "plain", listen(json!(1), everything));
    let ack = next(&mut rx).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    token.cancel();
}

#[tokio::test]
async fn resource_updates_for_the_uris_subscribed_to() {
    let registry = Registry::from_servers([server(&["t1"])]);
    let (_task, mut rx, token) = open(
        &registry,
        "live",
        listen(
            json!(3),
            json!({"resourceSubscriptions": ["data://a", "data://a"]}),
        ),
    );
    let ack = next(&mut rx).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": ["data://a"]})
    );
    assert_eq!(registry.notify_resource_updated("data://b"), 0);
    assert_eq!(registry.notify_resource_updated("data://a"), 1);
    let updated = next(&mut rx).await;
    assert_valid(MODERN, "ResourceUpdatedNotification", &updated);
    assert_eq!(
        updated["params"],
        json!({"uri": "data://a", "_meta": {"io.modelcontextprotocol/subscriptionId": 3}})
    );
    token.cancel();
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(
        registry.notify_resource_updated("data://a"),
        0,
        "a closed stream watches nothing"
    );
}

#[tokio::test]
async fn the_stream_ends_gracefully_when_its_server_goes_away() {
    let registry = Registry::from_servers([server(&["t1"])]);
    let (task, mut rx, _token) = open(
        &registry,
        "live",
        listen(json!(9), json!({"toolsListChanged": true})),
    );
    next(&mut rx).await;
    registry.unregister_server("live");
    let reply = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap()
        .expect("a graceful end is a reply");
    assert_reply(MODERN, "SubscriptionsListenResult", &reply);
    assert_eq!(reply["id"], 9);
    assert_eq!(reply["result"]["resultType"], "complete");
    assert_eq!(
        reply["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        9
    );
}

#[tokio::test]
async fn refused_without_a_stream_or_outside_2026_07_28() {
    let registry = Registry::from_servers([server(&["t1"])]);
    let reply = registry
        .handle_mcp_message("live", listen(json!(1), json!({"toolsListChanged": true})))
        .await
        .unwrap();
    assert_reply(MODERN, "SubscriptionsListenResult", &reply);
    assert_eq!(reply["error"]["code"], -32600);
    let legacy = registry
        .handle_mcp_message(
            "live",
            json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen", "params": {"notifications": {}}}),
        )
        .await
        .unwrap();
    assert_eq!(legacy["error"]["code"], -32601);
    let discover = registry
        .handle_mcp_message(
            "live",
            json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": modern_meta()}}),
        )
        .await
        .unwrap();
    assert_reply(MODERN, "DiscoverResult", &discover);
    let capabilities = &discover["result"]["capabilities"];
    assert_eq!(capabilities["tools"]["listChanged"], true);
    assert_eq!(capabilities["prompts"]["listChanged"], true);
    assert_eq!(
        capabilities["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
}

#[tokio::test]
async fn in_a_session_notifications_cancelled_ends_the_stream() {
    let registry = Registry::from_servers([server(&["t1"])]);
    let (session, mut out) = ServerSession::new(registry.clone(), "live");
    let listening = {
        let session: ServerSession = session.clone();
        tokio::spawn(async move {
            session
                .handle(listen(json!(5), json!({"toolsListChanged": true})))
                .await
        })
    };
    let ack = tokio::time::timeout(Duration::from_secs(5), out.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    registry.register_server(server(&["t1", "t3"]));
    let changed = tokio::time::timeout(Duration::from_secs(5), out.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        5
    );
    session
        .handle(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}))
        .await;
    let reply = tokio::time::timeout(Duration::from_secs(5), listening)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reply, None);
}

/// Regression (D7): the stream started watching the registry and the resources only when its
/// task first ran, after the acknowledgement was sent: a change made on the acknowledgement
/// (as a client that acts on it does) was taken as already seen, and never sent.
#[tokio::test]
async fn a_change_made_on_the_acknowledgement_is_sent() {
    let registry = Registry::from_servers([server(&["t1"])]);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let sink = {
        let registry = registry.clone();
        mcp_registry::NotificationSink::new(move |note| {
            let acknowledged = note["method"] == "notifications/subscriptions/acknowledged";
            let _ = tx.send(note);
            if acknowledged {
                registry.register_server(server(&["t1", "t2"]));
                registry.notify_resource_updated("data://a");
            }
        })
    };
    let token = mcp_registry::CancellationToken::new();
    let options = mcp_registry::CallOptions::new()
        .notifications(sink)
        .cancellation(token.clone());
    let filter = json!({"toolsListChanged": true, "resourceSubscriptions": ["data://a"]});
    let message = listen(json!(3), filter);
    let task = {
        let registry = registry.clone();
        tokio::spawn(async move {
            registry
                .handle_mcp_message("live", message)
                .options(options)
                .await
        })
    };
    let ack = next(&mut rx).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let mut heard = [next(&mut rx).await, next(&mut rx).await];
    heard.sort_by_key(|n| n["method"].as_str().unwrap_or_default().to_owned());
    assert_eq!(heard[0]["method"], "notifications/resources/updated");
    assert_eq!(heard[0]["params"]["uri"], "data://a");
    assert_eq!(heard[1]["method"], "notifications/tools/list_changed");
    cancel_unanswered(task, token).await;
}

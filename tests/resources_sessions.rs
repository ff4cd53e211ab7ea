//! Resources in sessions: subscriptions and their update notifications, and announcements
//! of resource list changes.

use crate::common;

use common::resources::{ask, request, server, static_text};
use common::{assert_reply, modern_meta};
use mcp_registry::{Registry, Server, ServerSession};
use serde_json::{Value, json};

/// A session of the server `data`, initialized under 2025-11-25, and its outgoing messages.
async fn initialized(r: &Registry) -> (ServerSession, mcp_registry::Outgoing) {
    let (session, out) = ServerSession::new(r.clone(), "data");
    let init = session
        .handle(request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        ))
        .await
        .unwrap();
    assert_eq!(
        init["result"]["capabilities"]["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    session
        .handle(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    (session, out)
}

/// `session`'s reply to a `method` request.
async fn reply(session: &ServerSession, id: u32, method: &str, params: Value) -> Value {
    session.handle(request(id, method, params)).await.unwrap()
}

#[tokio::test]
async fn sessions_subscribe_and_get_updates() {
    let r = Registry::from_servers([server()]);
    let (session, mut out) = initialized(&r).await;
    let (other, mut other_out) = initialized(&r).await;
    let ok = reply(
        &session,
        2,
        "resources/subscribe",
        json!({"uri": "test://static-text"}),
    )
    .await;
    assert_reply("2025-11-25", "EmptyResult", &ok);
    let templated = reply(
        &session,
        3,
        "resources/subscribe",
        json!({"uri": "test://template/1/data"}),
    )
    .await;
    assert_eq!(templated["result"], json!({}));
    let unknown = reply(
        &session,
        4,
        "resources/subscribe",
        json!({"uri": "test://nope"}),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32002);
    assert_eq!(
        session.subscriptions(),
        ["test://static-text", "test://template/1/data"]
    );

    assert_eq!(r.notify_resource_updated("test://static-text"), 1);
    let updated = out.recv().await.unwrap();
    assert_eq!(
        updated,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://static-text"}})
    );
    assert_eq!(r.notify_resource_updated("test://static-binary"), 0);
    assert!(
        other_out.try_recv().is_err(),
        "the other session did not subscribe"
    );

    let bye = reply(
        &session,
        5,
        "resources/unsubscribe",
        json!({"uri": "test://static-text"}),
    )
    .await;
    assert_eq!(bye["result"], json!({}));
    assert_eq!(r.notify_resource_updated("test://static-text"), 0);
    assert!(out.try_recv().is_err());

    subscribing_needs_a_legacy_session(&r, &session).await;

    drop(other);
    drop(session);
    assert_eq!(
        r.notify_resource_updated("test://template/1/data"),
        0,
        "ended sessions drop out"
    );
}

/// 2026-07-28 has no `resources/subscribe`, and neither has a stateless exchange: both are
/// -32601.
async fn subscribing_needs_a_legacy_session(r: &Registry, session: &ServerSession) {
    // 2026-07-28 has no resources/subscribe (subscriptions/listen replaces it).
    let modern = reply(
        session,
        6,
        "resources/subscribe",
        json!({"uri": "test://static-text", "_meta": modern_meta()}),
    )
    .await;
    assert_eq!(modern["error"]["code"], -32601);
    // Nor does a stateless exchange: nothing would keep the subscription.
    let stateless = ask(
        r,
        request(
            7,
            "resources/subscribe",
            json!({"uri": "test://static-text"}),
        ),
    )
    .await;
    assert_eq!(stateless["error"]["code"], -32601);
}

#[tokio::test]
async fn sessions_announce_resource_list_changes() {
    let r = Registry::from_servers([server()]);
    let (_session, mut out) = initialized(&r).await;
    r.register_server(
        Server::builder("data")
            .resource(static_text())
            .build()
            .unwrap(),
    );
    let first = out.recv().await.unwrap();
    let second = out.recv().await.unwrap();
    assert_eq!(first["method"], "notifications/tools/list_changed");
    assert_eq!(second["method"], "notifications/resources/list_changed");
}

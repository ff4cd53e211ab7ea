//! Two replicas of one server in one process (two registries, two HTTP routers, one real
//! `redis-server`), sharing changes through `RedisBus` and legacy sessions through
//! `RedisSessions`: a session opened on one is served by the other, a change made on one
//! reaches the streams held by the other, `DELETE` on one ends the session on both, and
//! everything comes back after Redis restarts.

use crate::common;

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::http::{INIT, modern, send, send_streaming};
use common::math_server;
use common::redis::RedisServer;
use http_body_util::BodyExt;
use mcp_registry::replicas::{Redis, RedisBus, RedisSessions};
use mcp_registry::transport::http::auth::{AccessClaims, Auth, BearerToken, TokenError};
use mcp_registry::transport::http::{HttpConfig, router};
use mcp_registry::{Elicitation, Registry, Resource, Server, Tool, ToolContext};
use serde_json::{Map, Value, json};
use tower::ServiceExt;

/// The resource the sessions subscribe to.
const NOTE: &str = "note://today";

/// One replica: its registry, its router and its bus.
struct Replica {
    registry: Registry,
    app: axum::Router,
    bus: RedisBus,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    confirm: bool,
}

/// The `math` server, with a resource and a tool that asks the client to confirm.
fn server(extra: Option<Tool>) -> Server {
    let note = Resource::builder(NOTE, "today")
        .handler(|_| async { "buy milk" })
        .unwrap();
    let ask = Tool::builder("ask")
        .typed(|ctx: ToolContext, _: Map<String, Value>| async move {
            match ctx.elicit::<Confirm>("Go ahead?").await {
                Ok(Elicitation::Accept(c)) => format!("confirmed: {}", c.confirm),
                Ok(_) => "not confirmed".to_owned(),
                Err(e) => format!("error: {e}"),
            }
        })
        .unwrap();
    let math = math_server();
    let tools = math.tools().iter().cloned().chain([ask]).chain(extra);
    Server::builder("math")
        .tools(tools)
        .resource(note)
        .build()
        .unwrap()
}

/// A replica on the Redis at `url`, subscribed to its bus.
async fn replica(url: &str) -> Replica {
    replica_with(url, HttpConfig::default()).await
}

/// A replica on the Redis at `url` with `config`, subscribed to its bus.
async fn replica_with(url: &str, config: HttpConfig) -> Replica {
    replica_serving(url, config, None).await
}

/// A replica on the Redis at `url` with `config` whose server has the `extra` tool too,
/// subscribed to its bus.
async fn replica_serving(url: &str, config: HttpConfig, extra: Option<Tool>) -> Replica {
    let redis = Redis::new(url).unwrap().prefix("replicas");
    let bus = RedisBus::new(&redis);
    let registry = Registry::builder()
        .server(server(extra))
        .change_bus(bus.clone())
        .build();
    let config = config.session_store(RedisSessions::new(&bus));
    let app = router(registry.clone(), "math", config);
    bus.ready().await.expect("the bus subscribes");
    Replica { registry, app, bus }
}

/// Two replicas on a fresh Redis, or `None` (skipped) without `redis-server`.
async fn two_replicas() -> Option<(RedisServer, Replica, Replica)> {
    let redis = RedisServer::start().await?;
    let a = replica(&redis.url()).await;
    let b = replica(&redis.url()).await;
    Some((redis, a, b))
}

/// Opens a legacy session on `app` (initialize, then `notifications/initialized` on
/// `then`): its id.
async fn open_session(app: &axum::Router, init: &str, then: &axum::Router) -> String {
    let init = send(app, "POST", &[], init.to_owned()).await;
    assert_eq!(init.status, StatusCode::OK, "{}", init.body);
    let sid = init.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let note = send(
        then,
        "POST",
        &session(&sid),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(note.status, StatusCode::ACCEPTED, "{}", note.body);
    sid
}

fn session(sid: &str) -> [(&str, &str); 2] {
    [
        ("mcp-session-id", sid),
        ("mcp-protocol-version", "2025-11-25"),
    ]
}

/// A POST whose response is left unread (an SSE stream).
async fn post_streaming(app: &axum::Router, headers: &[(&str, &str)], body: String) -> Body {
    let mut request = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::from(body)).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.into_body()
}

/// The next SSE message on `body` (10 s at most), keep-alive comments skipped.
async fn next_message(body: &mut Body) -> Value {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .expect("a message in time")
            .expect("the stream is open")
            .unwrap();
        let text = String::from_utf8(frame.into_data().unwrap().to_vec()).unwrap();
        if let Some(data) = text.lines().find_map(|l| l.strip_prefix("data: ")) {
            return serde_json::from_str(data).unwrap();
        }
    }
}

/// The next message of `method` on `body`, others skipped (10 s at most each).
async fn next_of(body: &mut Body, method: &str) -> Value {
    for _ in 0..20 {
        let message = next_message(body).await;
        if message["method"] == method {
            return message;
        }
    }
    panic!("no {method} among 20 messages");
}

/// Opens a session's GET stream on `app`.
/// A 2026-07-28 `subscriptions/listen` stream (request `id`) on `app` for `notifications`,
/// once acknowledged.
async fn listen_on(app: &axum::Router, id: i64, notifications: Value) -> Body {
    let request = modern(
        id,
        "subscriptions/listen",
        json!({"notifications": notifications}),
    );
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "subscriptions/listen"),
    ];
    let mut stream = post_streaming(app, &headers, request).await;
    next_of(&mut stream, "notifications/subscriptions/acknowledged").await;
    stream
}

async fn get_stream(app: &axum::Router, sid: &str) -> Body {
    let response = send_streaming(app, "GET", &[("mcp-session-id", sid)]).await;
    assert_eq!(response.status(), StatusCode::OK);
    response.into_body()
}

fn generation(registry: &Registry) -> u64 {
    registry.subscribe().borrow().generation
}

#[tokio::test]
async fn a_session_opened_on_one_replica_is_served_by_the_other() {
    let Some((_redis, a, b)) = two_replicas().await else {
        return;
    };
    let sid = open_session(&a.app, INIT, &b.app).await;
    let h = session(&sid);
    let list = send(
        &b.app,
        "POST",
        &h,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert!(list.json()["result"]["tools"].as_array().unwrap().len() > 1);
    // A subscription made on B is known to A's copy of the session: an update announced
    // on B reaches A's GET stream through the bus.
    let mut stream = get_stream(&a.app, &sid).await;
    let subscribe = json!({"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe", "params": {"uri": NOTE}});
    let subscribed = send(&b.app, "POST", &h, subscribe.to_string()).await;
    assert_eq!(
        subscribed.json()["result"],
        json!({}),
        "{}",
        subscribed.body
    );
    b.registry.notify_resource_updated(NOTE);
    let updated = next_of(&mut stream, "notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], NOTE);
    // An id no replica minted is unknown everywhere.
    let unknown = send(
        &b.app,
        "POST",
        &session("0123"),
        r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
    )
    .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_list_change_on_one_replica_reaches_the_streams_of_the_other() {
    let Some((_redis, a, b)) = two_replicas().await else {
        return;
    };
    let sid = open_session(&b.app, INIT, &b.app).await;
    let mut get = get_stream(&b.app, &sid).await;
    let mut listen = listen_on(&b.app, 1, json!({"toolsListChanged": true})).await;
    let (before_a, before_b) = (generation(&a.registry), generation(&b.registry));

    let extra = Tool::new("extra", "x", json!({"type": "object"}), |_| async { "ok" }).unwrap();
    a.registry.register_server(server(Some(extra)));
    let changed = next_of(&mut listen, "notifications/tools/list_changed").await;
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    next_of(&mut get, "notifications/tools/list_changed").await;

    // Back the other way, and no echo: each registry saw each change once.
    let mut listen_a = listen_on(&a.app, 2, json!({"toolsListChanged": true})).await;
    b.registry.toggle_server("math", false).unwrap();
    next_of(&mut listen_a, "notifications/tools/list_changed").await;
    assert_eq!(generation(&a.registry), before_a + 2);
    assert_eq!(generation(&b.registry), before_b + 2);
}

#[tokio::test]
async fn delete_on_one_replica_ends_the_session_on_the_other() {
    let Some((_redis, a, b)) = two_replicas().await else {
        return;
    };
    let sid = open_session(&a.app, INIT, &a.app).await;
    let mut stream = get_stream(&a.app, &sid).await;
    let deleted = send(&b.app, "DELETE", &session(&sid), "").await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    // A's stream ends (keep-alive comments aside) and A no longer knows the session.
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(frame) = stream.frame().await {
            frame.unwrap();
        }
    })
    .await;
    assert!(ended.is_ok(), "A's GET stream ended");
    let ping = r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
    assert_eq!(
        send(&a.app, "POST", &session(&sid), ping).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        send(&b.app, "DELETE", &session(&sid), "").await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_reply_to_an_elicitation_posted_to_the_other_replica_reaches_the_call() {
    let Some((_redis, a, b)) = two_replicas().await else {
        return;
    };
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
    let sid = open_session(&a.app, init, &b.app).await;
    let h = session(&sid);
    let call =
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask","arguments":{}}}"#;
    let mut stream = post_streaming(&a.app, &h, call.to_owned()).await;
    let asked = next_of(&mut stream, "elicitation/create").await;
    let reply = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"confirm": true}}});
    let posted = send(&b.app, "POST", &h, reply.to_string()).await;
    assert_eq!(posted.status, StatusCode::ACCEPTED, "{}", posted.body);
    let answer = next_message(&mut stream).await;
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "confirmed: true",
        "{answer}"
    );
}

#[tokio::test]
async fn redis_down_refuses_shared_sessions_only_and_everything_recovers() {
    let Some((mut redis, a, b)) = two_replicas().await else {
        return;
    };
    let sid = open_session(&a.app, INIT, &b.app).await;
    let h = session(&sid);
    let ping = r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#;
    let mut listen = listen_on(&b.app, 1, json!({"resourceSubscriptions": [NOTE]})).await;

    redis.stop();
    let refused = send(&b.app, "POST", &h, ping).await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        refused.body
    );
    let message = refused.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("session store did not answer"),
        "{message}"
    );
    assert!(message.contains("2026-07-28"), "{message}");
    let stateless = modern(2, "tools/list", json!({}));
    let listed = send(
        &b.app,
        "POST",
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
        stateless,
    )
    .await;
    assert_eq!(
        listed.status,
        StatusCode::OK,
        "stateless requests need no Redis: {}",
        listed.body
    );

    // Redis comes back empty: A, which holds the session, puts it back, and B serves it.
    redis.restart().await;
    assert_eventually(|| async { send(&a.app, "POST", &h, ping).await.status == StatusCode::OK })
        .await;
    assert_eq!(send(&b.app, "POST", &h, ping).await.status, StatusCode::OK);
    // The buses subscribed again: an update on A reaches B's listen stream.
    b.bus.ready().await.expect("B's bus subscribes again");
    a.bus.ready().await.expect("A's bus subscribes again");
    a.registry.notify_resource_updated(NOTE);
    let updated = next_of(&mut listen, "notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], NOTE);
}

/// Bearer tokens: two subjects.
async fn validate(token: BearerToken) -> Result<AccessClaims, TokenError> {
    match token.secret() {
        "alice-token" => Ok(AccessClaims::new("alice").with_audience([RESOURCE])),
        "bob-token" => Ok(AccessClaims::new("bob").with_audience([RESOURCE])),
        _ => Err(TokenError::InvalidToken("not in the table".into())),
    }
}

const RESOURCE: &str = "https://mcp.example.com/mcp";

#[tokio::test]
async fn a_shared_session_serves_only_the_subject_that_opened_it() {
    let Some(redis) = RedisServer::start().await else {
        return;
    };
    let config = || HttpConfig::default().auth(Auth::new(RESOURCE, validate).unwrap());
    let a = replica_with(&redis.url(), config()).await;
    let b = replica_with(&redis.url(), config()).await;
    let alice = [("authorization", "Bearer alice-token")];
    let init = send(&a.app, "POST", &alice, INIT).await;
    assert_eq!(init.status, StatusCode::OK, "{}", init.body);
    let sid = init.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let as_bob = [
        ("mcp-session-id", sid.as_str()),
        ("authorization", "Bearer bob-token"),
    ];
    assert_eq!(
        send(&b.app, "POST", &as_bob, ping).await.status,
        StatusCode::NOT_FOUND
    );
    let as_alice = [
        ("mcp-session-id", sid.as_str()),
        ("authorization", "Bearer alice-token"),
    ];
    assert_eq!(
        send(&b.app, "POST", &as_alice, ping).await.status,
        StatusCode::OK
    );
    // Held by B now, still not Bob's.
    assert_eq!(
        send(&b.app, "POST", &as_bob, ping).await.status,
        StatusCode::NOT_FOUND
    );
}

/// Says so on `tx` when dropped.
struct Dropped(tokio::sync::mpsc::UnboundedSender<&'static str>);

impl Drop for Dropped {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

/// `slow`: says "started" on `tx` and runs for an hour, saying "dropped" when its future is
/// dropped.
fn slow_tool(tx: tokio::sync::mpsc::UnboundedSender<&'static str>) -> Tool {
    Tool::new(
        "slow",
        "An hour of work",
        json!({"type": "object"}),
        move |_| {
            let running = Dropped(tx.clone());
            async move {
                let _ = running.0.send("started");
                tokio::time::sleep(Duration::from_secs(3600)).await;
                drop(running);
                "done"
            }
        },
    )
    .unwrap()
}

/// The next thing `rx` hears (10 s at most).
async fn heard(rx: &mut tokio::sync::mpsc::UnboundedReceiver<&'static str>) -> &'static str {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("in time")
        .expect("open")
}

/// Regression (D6): a `notifications/cancelled` POSTed to a replica where the call does not
/// run was answered `202` and dropped; the call ran on, and its result was sent.
#[tokio::test]
async fn a_cancellation_posted_to_the_other_replica_cancels_the_call() {
    let Some(redis) = RedisServer::start().await else {
        return;
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let a = replica_serving(&redis.url(), HttpConfig::default(), Some(slow_tool(tx))).await;
    let b = replica(&redis.url()).await;
    let sid = open_session(&a.app, INIT, &b.app).await;
    let call =
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{}}}"#;
    let calling = {
        let (app, sid) = (a.app.clone(), sid.clone());
        tokio::spawn(async move { send(&app, "POST", &session(&sid), call).await })
    };
    assert_eq!(heard(&mut rx).await, "started");
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#;
    let posted = send(&b.app, "POST", &session(&sid), cancel).await;
    assert_eq!(posted.status, StatusCode::ACCEPTED, "{}", posted.body);
    assert_eq!(heard(&mut rx).await, "dropped", "A's call was cancelled");
    let answered = tokio::time::timeout(Duration::from_secs(10), calling)
        .await
        .expect("the call's POST ends")
        .unwrap();
    assert_eq!(
        answered.status,
        StatusCode::ACCEPTED,
        "no result: {}",
        answered.body
    );
}

/// Regression (D9): a 2025-03-26 batch changed only the copy of the session on the replica
/// it reached: the other replicas never heard of its `resources/subscribe`.
#[tokio::test]
async fn a_batchs_subscription_on_one_replica_is_known_to_the_other() {
    let Some((_redis, a, b)) = two_replicas().await else {
        return;
    };
    let init = INIT.replace("2025-11-25", "2025-03-26");
    let sid = open_session(&a.app, &init, &a.app).await;
    let mut stream = get_stream(&b.app, &sid).await;
    let batch = json!([{"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": NOTE}}]);
    let headers = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-03-26"),
    ];
    let replied = send(&a.app, "POST", &headers, batch.to_string()).await;
    assert_eq!(replied.status, StatusCode::OK, "{}", replied.body);
    assert_eq!(replied.json()[0]["result"], json!({}), "{}", replied.body);
    a.registry.notify_resource_updated(NOTE);
    let updated = next_of(&mut stream, "notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], NOTE);
}

/// Polls `check` until it holds (60 s at most, generous for a loaded machine).
async fn assert_eventually<F, Fut>(check: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..240 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("not within 60 s");
}

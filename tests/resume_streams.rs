//! Resumable SSE streams of legacy sessions (issue 39, 2025-11-25 "Resumability and
//! Redelivery"): every event of a session's POST and GET streams carries an id naming its
//! stream, and a `GET` with `Last-Event-ID` replays what followed it, then goes on live. In
//! memory on one server; through a real `redis-server` on another replica (skipped without
//! one outside CI); the bound of the buffer, forged ids and other sessions' ids refused.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::http::{INIT, Reply, send};
use common::math_server;
use common::redis::RedisServer;
use http_body_util::BodyExt as _;
use mcp_registry::replicas::{Redis, RedisBus, RedisSessions};
use mcp_registry::transport::http::{HttpConfig, Shutdown, router};
use mcp_registry::{Registry, Resource, Server, Tool, ToolContext};
use serde_json::{Map, Value, json};
use tokio::sync::Semaphore;
use tower::ServiceExt as _;

/// How long a test waits for something the server must do.
const BOUND: Duration = Duration::from_secs(10);

/// The resources the sessions subscribe to: `note://1` ... `note://5`.
fn note(i: usize) -> String {
    format!("note://{i}")
}

/// The `math` server with five resources and `gated`: progress 1 and 2, then (once `gate`
/// gives a permit) progress 3 and the reply "done".
fn server(gate: &Arc<Semaphore>) -> Server {
    let gate = gate.clone();
    let gated = Tool::builder("gated")
        .typed(move |ctx: ToolContext, _: Map<String, Value>| {
            let gate = gate.clone();
            async move {
                ctx.progress(1.0, Some(3.0), None).unwrap();
                ctx.progress(2.0, Some(3.0), None).unwrap();
                gate.acquire().await.unwrap().forget();
                ctx.progress(3.0, Some(3.0), None).unwrap();
                "done"
            }
        })
        .unwrap();
    let math = math_server();
    let job = common::job::job_tool();
    let mut server =
        Server::builder("math").tools(math.tools().iter().cloned().chain([gated, job]));
    for i in 1..=5 {
        let resource = Resource::builder(note(i), format!("note {i}"))
            .handler(|_| async { "text" })
            .unwrap();
        server = server.resource(resource);
    }
    server.build().unwrap()
}

/// A server on its own (events kept in memory): its registry and router.
fn single(config: HttpConfig, gate: &Arc<Semaphore>) -> (Registry, axum::Router) {
    let registry = Registry::from_servers([server(gate)]);
    (registry.clone(), router(registry, "math", config))
}

/// One replica on the Redis at `url`.
async fn replica(url: &str, config: HttpConfig, gate: &Arc<Semaphore>) -> (Registry, axum::Router) {
    let bus = RedisBus::new(&Redis::new(url).unwrap().prefix("resume"));
    let registry = Registry::builder()
        .server(server(gate))
        .change_bus(bus.clone())
        .build();
    let app = router(
        registry.clone(),
        "math",
        config.session_store(RedisSessions::new(&bus)),
    );
    bus.ready().await.expect("the bus subscribes");
    (registry, app)
}

fn session(sid: &str) -> [(&str, &str); 2] {
    [
        ("mcp-session-id", sid),
        ("mcp-protocol-version", "2025-11-25"),
    ]
}

/// Opens an initialized session on `app`, subscribed to the five notes: its id.
async fn open(app: &axum::Router) -> String {
    let init = send(app, "POST", &[], INIT).await;
    assert_eq!(init.status, StatusCode::OK, "{}", init.body);
    let sid = init.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        send(app, "POST", &session(&sid), initialized).await.status,
        StatusCode::ACCEPTED
    );
    for i in 1..=5 {
        let subscribe = json!({"jsonrpc": "2.0", "id": 100 + i, "method": "resources/subscribe", "params": {"uri": note(i)}});
        let done = send(app, "POST", &session(&sid), subscribe.to_string()).await;
        assert_eq!(done.json()["result"], json!({}), "{}", done.body);
    }
    sid
}

/// An SSE response read event by event.
struct Events {
    status: StatusCode,
    body: Body,
    text: String,
}

/// One SSE event: its id, its message, whether it carried a `retry:`.
#[derive(Debug)]
struct Sse {
    id: Option<String>,
    message: Option<Value>,
    retry: bool,
}

impl Events {
    /// The next event (comments alone skipped); `None` at the end of the stream.
    async fn next(&mut self) -> Option<Sse> {
        loop {
            if let Some(end) = self.text.find("\n\n") {
                let block: String = self.text.drain(..end + 2).collect();
                let field = |name: &str| {
                    block
                        .lines()
                        .find_map(|l| l.strip_prefix(name))
                        .map(str::to_owned)
                };
                let event = Sse {
                    id: field("id: ").or_else(|| field("id:")),
                    message: field("data: ").map(|d| serde_json::from_str(&d).unwrap()),
                    retry: field("retry:").is_some(),
                };
                if event.id.is_some() || event.message.is_some() || event.retry {
                    return Some(event);
                }
                continue;
            }
            let frame = tokio::time::timeout(BOUND, self.body.frame())
                .await
                .expect("an event in time")?
                .unwrap();
            if let Ok(data) = frame.into_data() {
                self.text.push_str(&String::from_utf8_lossy(&data));
            }
        }
    }

    /// The next event carrying a message.
    async fn message(&mut self) -> (String, Value) {
        let event = self.next().await.expect("the stream is open");
        (
            event.id.expect("an event id"),
            event.message.expect("a message"),
        )
    }

    /// The body read to its end, as a whole reply.
    async fn rest(self) -> Reply {
        let bytes = self.body.collect().await.unwrap().to_bytes();
        Reply {
            status: self.status,
            headers: Default::default(),
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }
}

/// `method` on `app` in session `sid` (`last`: its `Last-Event-ID`), its response unread.
async fn stream(
    app: &axum::Router,
    method: &str,
    sid: &str,
    last: Option<&str>,
    body: String,
) -> Events {
    let mut request = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", sid)
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(last) = last {
        request = request.header("last-event-id", last);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::from(body)).unwrap())
        .await
        .unwrap();
    Events {
        status: response.status(),
        body: response.into_body(),
        text: String::new(),
    }
}

/// A `GET` stream of session `sid`, resumed after `last` when given.
async fn get(app: &axum::Router, sid: &str, last: Option<&str>) -> Events {
    stream(app, "GET", sid, last, String::new()).await
}

/// A call of `tool` as request `id`, with a progress token: its POST stream.
async fn call(app: &axum::Router, sid: &str, id: i64, tool: &str, arguments: Value) -> Events {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": {"progressToken": id}}});
    let events = stream(app, "POST", sid, None, body.to_string()).await;
    assert_eq!(events.status, StatusCode::OK);
    events
}

/// A `gated` call's POST stream resumed after its first event: progress 2, then (the gate
/// opened) progress 3 and reply `id`, then its end. The reply's event id.
async fn resumed_to_its_reply(mut resumed: Events, gate: &Semaphore, id: i64) -> String {
    assert_eq!(resumed.status, StatusCode::OK);
    let (_, m2) = resumed.message().await;
    assert_eq!(progress(&m2), 2.0);
    gate.add_permits(1);
    let (_, m3) = resumed.message().await;
    assert_eq!(progress(&m3), 3.0);
    let (last, reply) = resumed.message().await;
    assert_eq!(reply["id"], id);
    assert_eq!(reply["result"]["content"][0]["text"], "done", "{reply}");
    assert!(
        resumed.next().await.is_none(),
        "the stream ends after its reply"
    );
    last
}

fn progress(message: &Value) -> f64 {
    assert_eq!(message["method"], "notifications/progress", "{message}");
    message["params"]["progress"].as_f64().unwrap()
}

fn uri(message: &Value) -> &str {
    assert_eq!(
        message["method"], "notifications/resources/updated",
        "{message}"
    );
    message["params"]["uri"].as_str().unwrap()
}

/// The stream and sequence number of an event id (`{stream}-{seq}`).
fn split(id: &str) -> (&str, u64) {
    let (stream, seq) = id.split_once('-').unwrap();
    (stream, seq.parse().unwrap())
}

#[tokio::test]
async fn a_get_stream_resumes_after_the_last_event_received() {
    let gate = Arc::new(Semaphore::new(0));
    let (registry, app) = single(HttpConfig::default(), &gate);
    let sid = open(&app).await;
    let mut first = get(&app, &sid, None).await;
    registry.notify_resource_updated(&note(1));
    registry.notify_resource_updated(&note(2));
    let (id1, m1) = first.message().await;
    let (id2, m2) = first.message().await;
    assert_eq!((uri(&m1), uri(&m2)), ("note://1", "note://2"));
    let (stream1, seq1) = split(&id1);
    assert!(stream1.starts_with('g'), "{id1}");
    assert_eq!(split(&id2), (stream1, seq1 + 1));
    // The connection drops: the client got event 1 only (2 was lost on the way), and 3
    // is sent while it is away.
    drop(first);
    registry.notify_resource_updated(&note(3));
    let mut resumed = get(&app, &sid, Some(&id1)).await;
    assert_eq!(resumed.status, StatusCode::OK);
    registry.notify_resource_updated(&note(4));
    let mut got = Vec::new();
    for _ in 0..3 {
        let (id, m) = resumed.message().await;
        got.push((id, uri(&m).to_owned()));
    }
    assert_eq!(
        got[0],
        (id2, "note://2".to_owned()),
        "event 2 replayed under its id"
    );
    assert_eq!(got[1].1, "note://3");
    assert_eq!(got[2].1, "note://4");
    assert_eq!(split(&got[2].0), (stream1, seq1 + 3), "the stream goes on");
}

#[tokio::test]
async fn a_post_stream_resumes_up_to_its_reply_and_its_call_outlives_the_connection() {
    let gate = Arc::new(Semaphore::new(0));
    let (_registry, app) = single(HttpConfig::default(), &gate);
    let sid = open(&app).await;
    let mut post = call(&app, &sid, 7, "gated", json!({})).await;
    let (id1, m1) = post.message().await;
    assert_eq!(progress(&m1), 1.0);
    assert!(id1.starts_with('p'), "{id1}");
    drop(post);
    let last = resumed_to_its_reply(get(&app, &sid, Some(&id1)).await, &gate, 7).await;
    // Resumed again after its reply: nothing more, and the stream ends.
    let again = get(&app, &sid, Some(&last)).await.rest().await;
    assert_eq!(again.status, StatusCode::OK);
    assert!(again.events().is_empty(), "{}", again.body);
}

#[tokio::test]
async fn an_id_older_than_the_buffer_is_refused_with_410_and_a_clear_error() {
    let config = HttpConfig::default().resume_buffer(2);
    let (_registry, app) = single(config, &Arc::new(Semaphore::new(0)));
    let sid = open(&app).await;
    let mut post = call(&app, &sid, 8, "job", json!({"steps": 5})).await;
    let mut ids = Vec::new();
    while let Some(event) = post.next().await {
        ids.push(event.id.unwrap());
    }
    assert_eq!(ids.len(), 6, "five progress notifications and the reply");
    let old = get(&app, &sid, Some(&ids[0])).await.rest().await;
    assert_eq!(old.status, StatusCode::GONE, "{}", old.body);
    let message = old.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("resume_buffer") && message.contains("lost"),
        "{message}"
    );
    // Within the bound: the reply replayed.
    let kept = get(&app, &sid, Some(&ids[4])).await.rest().await;
    assert_eq!(kept.status, StatusCode::OK);
    assert_eq!(kept.events()[0]["id"], 8, "{}", kept.body);
}

#[tokio::test]
async fn forged_and_other_sessions_ids_replay_nothing() {
    let (_registry, app) = single(HttpConfig::default(), &Arc::new(Semaphore::new(0)));
    let (mine, theirs) = (open(&app).await, open(&app).await);
    let mut post = call(&app, &theirs, 9, "job", json!({"steps": 2})).await;
    let (their_id, _) = post.message().await;
    // Their event id in my session names no stream of mine.
    let stolen = get(&app, &mine, Some(&their_id)).await.rest().await;
    assert_eq!(stolen.status, StatusCode::GONE, "{}", stolen.body);
    assert!(!stolen.body.contains("progress"), "{}", stolen.body);
    let (stream, _) = split(&their_id);
    for forged in ["1", "g-1", "../x-1", &format!("{stream}-x")] {
        let refused = get(&app, &mine, Some(forged)).await.rest().await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{forged}: {}",
            refused.body
        );
    }
    // An event its stream never sent.
    let ahead = get(&app, &theirs, Some(&format!("{stream}-99")))
        .await
        .rest()
        .await;
    assert_eq!(ahead.status, StatusCode::BAD_REQUEST, "{}", ahead.body);
}

#[tokio::test]
async fn without_resumption_events_carry_no_id() {
    let config = HttpConfig::default().resume_buffer(0);
    let (_registry, app) = single(config, &Arc::new(Semaphore::new(0)));
    let sid = open(&app).await;
    let reply = call(&app, &sid, 3, "job", json!({"steps": 2}))
        .await
        .rest()
        .await;
    assert_eq!(reply.events().len(), 3, "{}", reply.body);
    assert!(!reply.body.contains("id:"), "{}", reply.body);
}

/// Issue 39's Done-when: a GET stream cut on replica A resumes on replica B (the events A
/// sent that the client missed replayed from Redis, then B's live), nothing lost or
/// duplicated; A drains with a retry hint.
#[tokio::test]
async fn a_get_stream_cut_on_one_replica_resumes_on_another() {
    let Some(redis) = RedisServer::start().await else {
        return;
    };
    let gate = Arc::new(Semaphore::new(0));
    let shutdown = Shutdown::new();
    let (reg_a, a) = replica(
        &redis.url(),
        HttpConfig::default().shutdown(shutdown.clone()),
        &gate,
    )
    .await;
    let (reg_b, b) = replica(&redis.url(), HttpConfig::default(), &gate).await;
    let sid = open(&a).await;
    let mut on_a = get(&a, &sid, None).await;
    for i in 1..=3 {
        reg_a.notify_resource_updated(&note(i));
    }
    let mut sent = Vec::new();
    for _ in 0..3 {
        sent.push(on_a.message().await);
    }
    // A drains: its stream ends with a retry hint.
    shutdown.trigger();
    let hint = on_a.next().await.expect("a retry hint");
    assert!(hint.retry, "{hint:?}");
    assert!(on_a.next().await.is_none());
    // The client got event 1 only (2 and 3 were lost with the connection).
    let mut on_b = get(&b, &sid, Some(&sent[0].0)).await;
    assert_eq!(on_b.status, StatusCode::OK);
    reg_b.notify_resource_updated(&note(4));
    let mut got = vec![sent[0].clone()];
    for _ in 0..3 {
        got.push(on_b.message().await);
    }
    let uris: Vec<&str> = got.iter().map(|(_, m)| uri(m)).collect();
    assert_eq!(uris, ["note://1", "note://2", "note://3", "note://4"]);
    assert_eq!(got[1].0, sent[1].0, "replayed under the ids A gave");
    let ids: std::collections::HashSet<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids.len(), 4, "unique ids: {got:?}");
}

/// Issue 39's Done-when: a POST stream cut while its call runs on replica A resumes on
/// replica B, which replays what the client missed and relays what A's call still sends,
/// up to the reply.
#[tokio::test]
async fn an_in_flight_post_stream_cut_on_one_replica_resumes_on_another() {
    let Some(redis) = RedisServer::start().await else {
        return;
    };
    let gate = Arc::new(Semaphore::new(0));
    let (_, a) = replica(&redis.url(), HttpConfig::default(), &gate).await;
    let (_, b) = replica(&redis.url(), HttpConfig::default(), &gate).await;
    let sid = open(&a).await;
    let mut post = call(&a, &sid, 11, "gated", json!({})).await;
    let (id1, m1) = post.message().await;
    assert_eq!(progress(&m1), 1.0);
    drop(post);
    resumed_to_its_reply(get(&b, &sid, Some(&id1)).await, &gate, 11).await;
    // Another session cannot read it, even knowing the id.
    let other = open(&b).await;
    let stolen = get(&b, &other, Some(&id1)).await.rest().await;
    assert_eq!(stolen.status, StatusCode::GONE, "{}", stolen.body);
}

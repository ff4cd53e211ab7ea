//! `QuotaLayer`: token buckets per caller, in memory (burst, refill on a paused clock,
//! isolation, anonymous callers sharing one bucket), the -32029 error and its retry hint on
//! the wire in both eras, and buckets in a real Redis failing open or closed while it is down.

use crate::common;

use std::time::Duration;

use common::modern_meta;
use common::redis::RedisServer;
use mcp_registry::quota::{self, Outage, Quota, QuotaLayer};
use mcp_registry::replicas::{Redis, RedisBuckets};
use mcp_registry::{CallError, CallOptions, Caller, Principal, Registry, Server, Tool};
use serde_json::{Value, json};

fn registry(layer: QuotaLayer) -> Registry {
    let hi = Tool::new("hi", "Say hi", json!({"type": "object"}), |_| async {
        "hi"
    })
    .unwrap();
    Registry::builder()
        .server(Server::new("s", None, [hi]).unwrap())
        .layer(layer)
        .build()
}

fn as_(subject: &str) -> CallOptions {
    CallOptions::new().caller(Caller::principal_of(Principal::new(subject)))
}

async fn call(registry: &Registry, options: CallOptions) -> Result<(), CallError> {
    registry
        .call_tool_by_name("hi", json!({}))
        .options(options)
        .await
        .map(|_| ())
}

fn limited(error: CallError) -> Duration {
    let CallError::Rejected { error, .. } = &error else {
        panic!("not a rejection: {error}");
    };
    assert_eq!(error.code, quota::RATE_LIMITED);
    quota::retry_after(error).expect("a retry hint")
}

#[tokio::test(start_paused = true)]
async fn a_burst_then_the_refill_rate_per_caller() {
    let registry = registry(QuotaLayer::new(Quota::per_second(2).burst(3)));
    for _ in 0..3 {
        call(&registry, as_("ada")).await.unwrap();
    }
    let wait = limited(call(&registry, as_("ada")).await.unwrap_err());
    assert_eq!(wait, Duration::from_millis(500));
    // Another caller is not limited by ada's bucket.
    call(&registry, as_("bob")).await.unwrap();
    tokio::time::advance(Duration::from_millis(500)).await;
    call(&registry, as_("ada")).await.unwrap();
    assert!(call(&registry, as_("ada")).await.is_err());
}

#[tokio::test(start_paused = true)]
async fn anonymous_callers_share_one_bucket() {
    let registry =
        registry(QuotaLayer::new(Quota::per_minute(100)).anonymous(Quota::per_minute(1)));
    call(&registry, CallOptions::new()).await.unwrap();
    let wait = limited(call(&registry, CallOptions::new()).await.unwrap_err());
    assert_eq!(wait, Duration::from_secs(60));
    call(&registry, as_("ada")).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_error_and_its_hint_on_the_wire_in_both_eras() {
    let registry = registry(QuotaLayer::new(Quota::per_second(1)));
    let legacy =
        |id| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "hi"}});
    let mut modern = legacy(3);
    modern["params"]["_meta"] = modern_meta();
    let first: Value = registry.handle_mcp_message("s", legacy(1)).await.unwrap();
    assert!(first.get("result").is_some(), "{first}");
    for message in [legacy(2), modern] {
        let reply: Value = registry.handle_mcp_message("s", message).await.unwrap();
        assert_eq!(reply["error"]["code"], -32029, "{reply}");
        assert_eq!(reply["error"]["data"]["retryAfter"], 1, "{reply}");
        assert_eq!(reply["error"]["data"]["retryAfterMs"], 1000, "{reply}");
    }
}

#[tokio::test]
async fn redis_buckets_are_shared_and_fail_open_or_closed() {
    let Some(mut server) = RedisServer::start().await else {
        return;
    };
    let redis = Redis::new(&server.url()).unwrap().prefix("quota-test");
    let layer =
        |outage| QuotaLayer::new(Quota::per_minute(2)).store(RedisBuckets::new(&redis), outage);
    // Two replicas draw on one bucket.
    let (one, two) = (
        registry(layer(Outage::Open)),
        registry(layer(Outage::Closed)),
    );
    call(&one, as_("ada")).await.unwrap();
    call(&two, as_("ada")).await.unwrap();
    let wait = limited(call(&one, as_("ada")).await.unwrap_err());
    assert!(
        wait > Duration::from_secs(20) && wait <= Duration::from_secs(30),
        "{wait:?}"
    );
    call(&two, as_("bob")).await.unwrap();
    server.stop();
    // Redis down: one fails open (runs, unlimited), two fails closed (-32029, 1 s).
    call(&one, as_("ada")).await.unwrap();
    assert_eq!(
        limited(call(&two, as_("ada")).await.unwrap_err()),
        Duration::from_secs(1)
    );
}

#[tokio::test(start_paused = true)]
async fn a_stateless_http_reply_over_the_limit_is_429_with_retry_after() {
    use axum::http::StatusCode;
    use common::http::{modern, send};
    use mcp_registry::transport::http::{HttpConfig, router};
    let app = router(
        registry(QuotaLayer::new(Quota::per_minute(1))),
        "s",
        HttpConfig::default(),
    );
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "hi"),
    ];
    let body = |id| modern(id, "tools/call", json!({"name": "hi", "arguments": {}}));
    let ok = send(&app, "POST", &headers, body(1)).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    let refused = send(&app, "POST", &headers, body(2)).await;
    assert_eq!(
        refused.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        refused.body
    );
    assert_eq!(refused.headers["retry-after"], "60");
    assert_eq!(refused.json()["error"]["code"], -32029);
}

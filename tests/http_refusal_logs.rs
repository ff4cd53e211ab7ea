//! Refusals of the Streamable HTTP transport say what to change and are logged at a level an
//! operator sees. Alone in its test binary: it installs a scoped `tracing` subscriber, and a
//! test without one running beside it could leave the call sites it checks cached as unwanted.

mod common;

use axum::http::StatusCode;
use common::http::{INIT, app, send};
use mcp_registry::transport::http::HttpConfig;

/// Every tracing event at `level` or above, as its level and fields.
#[derive(Clone, Default)]
struct Capture(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

struct Fields<'a>(&'a mut String);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut line = event.metadata().level().to_string();
        event.record(&mut Fields(&mut line));
        self.0.lock().unwrap().push(line);
    }
}

/// Regression: a request refused by the Host check got `host "…" is not allowed` and the
/// server logged nothing; a user who put the server in a container did not learn what to
/// change. Refusals now name the setting, and are logged.
#[tokio::test]
async fn refusals_say_what_to_change_and_are_logged() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let app = app(HttpConfig::default().max_sessions(1).max_body_bytes(64));
    let host = send(&app, "POST", &[("host", "myhost.lan:8766")], INIT).await;
    assert_eq!(host.status, StatusCode::FORBIDDEN);
    let message = host.json()["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains(r#""myhost.lan:8766""#), "{message}");
    assert!(message.contains("HttpConfig::allowed_hosts"), "{message}");
    let origin = send(&app, "POST", &[("origin", "https://app.example")], INIT).await;
    assert!(
        origin.body.contains("HttpConfig::allowed_origins"),
        "{}",
        origin.body
    );
    let big = send(&app, "POST", &[], "x".repeat(100)).await;
    assert!(
        big.body.contains("HttpConfig::max_body_bytes"),
        "{}",
        big.body
    );
    let json = send(&app, "POST", &[("content-type", "text/plain")], INIT).await;
    assert!(json.body.contains(r#"not \"text/plain\""#), "{}", json.body);
    let small_init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let app = self::app(HttpConfig::default().max_sessions(1));
    assert_eq!(
        send(&app, "POST", &[], small_init).await.status,
        StatusCode::OK
    );
    let full = send(&app, "POST", &[], small_init).await;
    assert_eq!(full.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        full.body.contains("HttpConfig::max_sessions"),
        "{}",
        full.body
    );
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let unknown = send(&app, "POST", &[("mcp-session-id", "nope")], ping).await;
    assert!(
        unknown.body.contains("initialize a new one"),
        "{}",
        unknown.body
    );

    let logs = capture.0.lock().unwrap().clone();
    let logged = |level: &str, text: &str| {
        logs.iter()
            .any(|l| l.starts_with(level) && l.contains(text))
    };
    assert!(logged("WARN", "HttpConfig::allowed_hosts"), "{logs:#?}");
    assert!(logged("WARN", "HttpConfig::allowed_origins"), "{logs:#?}");
    assert!(logged("WARN", "HttpConfig::max_sessions"), "{logs:#?}");
    assert!(logged("INFO", "HttpConfig::max_body_bytes"), "{logs:#?}");
    assert!(logged("DEBUG", "Content-Type"), "{logs:#?}");
    assert!(logged("DEBUG", "unknown session"), "{logs:#?}");
}

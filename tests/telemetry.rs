//! Traces across the wire: the client's span context travels in `_meta` (`traceparent`,
//! SEP-414) and the server's request span continues it; both carry the attributes
//! OpenTelemetry's MCP conventions name. Exported with the OpenTelemetry SDK's in-memory
//! exporter through `tracing-opentelemetry`. The binary also holds the metrics tests
//! (`otel_metrics.rs`), run one after the other with the trace test.

mod common;
#[path = "otel_metrics.rs"]
mod otel_metrics;

/// The tests of this binary run one at a time: `set_default` is per thread, and a test
/// without a subscriber running beside the trace test could leave the spans' call sites cached
/// as unwanted (a new subscriber rebuilds that cache once registered, so one after the other
/// is safe).
static ALONE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

use common::math_server;
use mcp_registry::Registry;
use mcp_registry::client::Client;
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry::{Key, Value as OtelValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt as _;

fn attribute(span: &SpanData, key: &str) -> Option<OtelValue> {
    span.attributes
        .iter()
        .find(|kv| kv.key == Key::from(key.to_owned()))
        .map(|kv| kv.value.clone())
}

/// The span named `name` of `kind`.
fn named<'a>(spans: &'a [SpanData], name: &str, kind: SpanKind) -> &'a SpanData {
    spans
        .iter()
        .find(|s| s.name == name && s.span_kind == kind)
        .unwrap_or_else(|| {
            let names: Vec<_> = spans
                .iter()
                .map(|s| format!("{} ({:?})", s.name, s.span_kind))
                .collect();
            panic!("no {kind:?} span {name:?} among {names:?}")
        })
}

/// The finished spans once there are at least `count` (a server's span ends when its
/// session lets go of the call, which may be just after the client has the reply): a bounded
/// wait, generous for a loaded machine.
async fn finished(exporter: &InMemorySpanExporter, count: usize) -> Vec<SpanData> {
    for _ in 0..1000 {
        let spans = exporter.get_finished_spans().unwrap();
        if spans.len() >= count {
            return spans;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("fewer than {count} spans after 10 s")
}

#[tokio::test]
async fn a_call_is_one_trace_from_client_to_server() {
    let _alone = ALONE.lock().await;
    // The metrics test's meter provider, set before this binary's first request.
    otel_metrics::meter();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    let _default = tracing::subscriber::set_default(subscriber);

    let client = Client::in_process(Registry::from_servers([math_server()]), "math")
        .await
        .unwrap();
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"value": 5})));
    let failed = client
        .call_tool("divide", json!({"a": 1, "b": 0}))
        .await
        .unwrap();
    assert_eq!(failed.is_error, Some(true));
    let spans = finished(&exporter, 5).await;
    let client_span = named(&spans, "tools/call add", SpanKind::Client);
    let server_span = named(&spans, "tools/call add", SpanKind::Server);
    // One trace: the server's span is the client's span's child, across `_meta`.
    assert_eq!(
        server_span.span_context.trace_id(),
        client_span.span_context.trace_id()
    );
    assert_eq!(
        server_span.parent_span_id,
        client_span.span_context.span_id()
    );
    assert_eq!(
        attribute(server_span, "mcp.method.name"),
        Some(OtelValue::from("tools/call"))
    );
    assert_eq!(
        attribute(server_span, "gen_ai.tool.name"),
        Some(OtelValue::from("add"))
    );
    assert_eq!(
        attribute(server_span, "mcp.server.name"),
        Some(OtelValue::from("math"))
    );
    assert_eq!(
        attribute(server_span, "gen_ai.operation.name"),
        Some(OtelValue::from("execute_tool"))
    );
    assert_eq!(server_span.status, Status::Unset);

    // A tool's error result marks both spans failed.
    let server_failed = named(&spans, "tools/call divide", SpanKind::Server);
    assert_eq!(
        attribute(server_failed, "error.type"),
        Some(OtelValue::from("tool_error"))
    );
    assert!(matches!(server_failed.status, Status::Error { .. }));
    let client_failed = named(&spans, "tools/call divide", SpanKind::Client);
    assert!(matches!(client_failed.status, Status::Error { .. }));

    a_foreign_trace_is_continued(&exporter).await;
    // Its session ends here, under the lock, not during the metrics test.
    client.close().await;
}

/// A request from another process's trace (`_meta.traceparent`) continues that trace.
async fn a_foreign_trace_is_continued(exporter: &InMemorySpanExporter) {
    // A request from another process's trace (`_meta.traceparent`) continues that trace.
    let registry = Registry::from_servers([math_server()]);
    let reply = registry
        .handle_mcp_message(
            "math",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "add", "arguments": {"a": 1, "b": 1},
                              "_meta": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"}}}),
        )
        .await
        .unwrap();
    assert_eq!(reply["result"]["structuredContent"]["value"], 2);
    let spans = finished(exporter, 6).await;
    let foreign = spans
        .iter()
        .find(|s| s.span_context.trace_id().to_string() == "0af7651916cd43dd8448eb211c80319c")
        .expect("the server's span in the caller's trace");
    assert_eq!(foreign.parent_span_id.to_string(), "00f067aa0ba902b7");
    assert_eq!(foreign.span_kind, SpanKind::Server);

    through_the_union(&registry, exporter).await;
}

/// Through a registry's union of servers, the span names the tool's own server and name.
async fn through_the_union(registry: &Registry, exporter: &InMemorySpanExporter) {
    let reply = registry
        .handle_mcp_message(
            mcp_registry::ALL_SERVERS,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "mcp__math__add", "arguments": {"a": 1, "b": 2}}}),
        )
        .await
        .unwrap();
    assert_eq!(reply["result"]["structuredContent"]["value"], 3);
    let spans = finished(exporter, 7).await;
    let through = named(&spans, "tools/call mcp__math__add", SpanKind::Server);
    assert_eq!(
        attribute(through, "mcp.server.name"),
        Some(OtelValue::from("math"))
    );
    assert_eq!(
        attribute(through, "gen_ai.tool.name"),
        Some(OtelValue::from("add"))
    );
}

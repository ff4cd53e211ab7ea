//! Traces of MCP calls, exported over OTLP: a client calls tools of an in-process server, and
//! each call is one trace (the client's span, and the server's span continuing it through
//! `_meta.traceparent`), sent to an OpenTelemetry collector over OTLP/HTTP.
//!
//! ```text
//! docker run -p 4318:4318 -p 16686:16686 jaegertracing/jaeger   # or any OTLP collector
//! cargo run --example otel --features otel                                       # then open localhost:16686
//! ```
//!
//! The endpoint is `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`). Without a
//! collector the calls still run; the exporter reports that it could not send.

use mcp_registry::client::Client;
use mcp_registry::{Json, Registry, Server, Tool};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::SpanExporter;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt as _;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    value: i64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // W3C trace context in `_meta`: how the server's span joins the client's trace.
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    let exporter = SpanExporter::builder().with_http().build()?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name("mcp-registry-otel-example")
                .build(),
        )
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("mcp-registry")));
    tracing::subscriber::set_global_default(subscriber)?;

    let add = Tool::builder("add")
        .description("Add two integers")
        .typed(|a: AddArgs| async move { Json(Sum { value: a.a + a.b }) })?;
    let registry = Registry::from_servers([Server::new("math", Some("1.0.0"), [add])?]);
    let client = Client::in_process(registry, "math").await?;
    for (a, b) in [(1, 2), (20, 22)] {
        let result = client.call_tool("add", json!({"a": a, "b": b})).await?;
        println!("add({a}, {b}) = {:?}", result.structured_content);
    }
    // Sends what is batched before exiting.
    provider.shutdown()?;
    println!(
        "traces sent to the OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318)"
    );
    Ok(())
}

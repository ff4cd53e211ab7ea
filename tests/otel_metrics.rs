//! The OpenTelemetry MCP conventions' histograms (feature `otel`), read back with the SDK's
//! in-memory metric exporter: server operations (a tool call, a failing tool, a prompt, an
//! unknown tool), client operations against a real HTTP server, session durations; and the
//! Grafana dashboard in `dashboards/mcp.json`, which must query only metrics we emit.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use common::math_server;
use mcp_registry::client::Client;
use mcp_registry::telemetry::metrics::METRIC_NAMES;
use mcp_registry::{Prompt, Registry, Server};
use opentelemetry::{Key, Value as OtelValue};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, HistogramDataPoint, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use serde_json::{Value, json};

/// The data points of histogram `name` in the latest export (cumulative), after a flush.
fn points(
    provider: &SdkMeterProvider,
    exporter: &InMemoryMetricExporter,
    name: &str,
) -> Vec<HistogramDataPoint<f64>> {
    provider.force_flush().unwrap();
    let exports = exporter.get_finished_metrics().unwrap();
    let Some(latest) = exports.last() else {
        return Vec::new();
    };
    for scope in latest.scope_metrics() {
        for metric in scope.metrics() {
            if metric.name() != name {
                continue;
            }
            assert_eq!(metric.unit(), "s", "{name} is in seconds");
            match metric.data() {
                AggregatedMetrics::F64(MetricData::Histogram(h)) => {
                    return h.data_points().cloned().collect();
                }
                _ => panic!("{name} is not an f64 histogram"),
            }
        }
    }
    Vec::new()
}

fn attribute(point: &HistogramDataPoint<f64>, key: &str) -> Option<OtelValue> {
    point
        .attributes()
        .find(|kv| kv.key == Key::from(key.to_owned()))
        .map(|kv| kv.value.clone())
}

/// The number of `name` recordings whose attributes include all of `with`, since the test
/// began (the histograms are cumulative, and the trace test of this binary may have run first).
fn count(
    provider: &SdkMeterProvider,
    exporter: &InMemoryMetricExporter,
    name: &str,
    with: &[(&str, &str)],
) -> u64 {
    let matching = |points: &[HistogramDataPoint<f64>]| -> u64 {
        points
            .iter()
            .filter(|p| {
                with.iter()
                    .all(|(k, v)| attribute(p, k) == Some(OtelValue::from(v.to_string())))
            })
            .map(HistogramDataPoint::count)
            .sum()
    };
    let before = BASELINE
        .lock()
        .unwrap()
        .get(name)
        .map_or(0, |points| matching(points));
    matching(&points(provider, exporter, name)) - before
}

/// Each histogram's points when the test began.
static BASELINE: Mutex<BTreeMap<String, Vec<HistogramDataPoint<f64>>>> =
    Mutex::new(BTreeMap::new());

/// The process's meter provider, exporting to memory: set once, before the first request of
/// this binary, since the crate creates its instruments once, from the global provider.
pub(crate) fn meter() -> &'static (SdkMeterProvider, InMemoryMetricExporter) {
    static METER: OnceLock<(SdkMeterProvider, InMemoryMetricExporter)> = OnceLock::new();
    METER.get_or_init(|| {
        let exporter = InMemoryMetricExporter::default();
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter.clone()).build())
            .build();
        opentelemetry::global::set_meter_provider(provider.clone());
        (provider, exporter)
    })
}

fn registry() -> Registry {
    let greet = Prompt::builder("greet")
        .handler(|_| async { "hello" })
        .unwrap();
    let words = Server::builder("words").prompt(greet).build().unwrap();
    Registry::from_servers([math_server(), words])
}

async fn http_url(registry: Registry) -> String {
    let app = mcp_registry::transport::http::router(
        registry,
        "math",
        mcp_registry::transport::http::HttpConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/mcp")
}

#[tokio::test]
async fn the_conventions_histograms_are_recorded() {
    // Never beside the trace test of this binary (see `crate::ALONE`).
    let _alone = crate::ALONE.lock().await;
    let (provider, exporter) = meter();
    for name in [SERVER_OP, CLIENT_OP, SERVER_SESSION, CLIENT_SESSION] {
        let before = points(provider, exporter, name);
        BASELINE.lock().unwrap().insert(name.to_owned(), before);
    }
    let registry = registry();
    server_side(provider, exporter, &registry).await;
    client_side(provider, exporter, &registry).await;
}

const SERVER_OP: &str = "mcp.server.operation.duration";
const CLIENT_OP: &str = "mcp.client.operation.duration";
const SERVER_SESSION: &str = "mcp.server.session.duration";
const CLIENT_SESSION: &str = "mcp.client.session.duration";

/// Server side, in process: a call, a failing tool, an unknown tool, a prompt.
async fn server_side(p: &SdkMeterProvider, e: &InMemoryMetricExporter, registry: &Registry) {
    let server_op = SERVER_OP;
    let ask = |server: &'static str, id: i64, method: &'static str, params: Value| {
        let registry = registry.clone();
        async move {
            registry
                .handle_mcp_message(
                    server,
                    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
                )
                .await
                .unwrap()
        }
    };
    let add = json!({"name": "add", "arguments": {"a": 1, "b": 2}});
    assert_eq!(
        ask("math", 1, "tools/call", add).await["result"]["structuredContent"]["value"],
        3
    );
    let divide = json!({"name": "divide", "arguments": {"a": 1, "b": 0}});
    assert_eq!(
        ask("math", 2, "tools/call", divide).await["result"]["isError"],
        true
    );
    let unknown = json!({"name": "nope", "arguments": {}});
    let code = ask("math", 3, "tools/call", unknown).await["error"]["code"].clone();
    let greet = json!({"name": "greet"});
    assert!(ask("words", 4, "prompts/get", greet).await["result"]["messages"].is_array());

    let call = [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "add"),
    ];
    assert_eq!(count(p, e, server_op, &call), 1);
    assert_eq!(
        count(
            p,
            e,
            server_op,
            &[("gen_ai.operation.name", "execute_tool")]
        ),
        3
    );
    let failed = [("gen_ai.tool.name", "divide"), ("error.type", "tool_error")];
    assert_eq!(count(p, e, server_op, &failed), 1);
    let code = code.to_string();
    let unknown = [
        ("error.type", code.as_str()),
        ("rpc.response.status_code", code.as_str()),
    ];
    assert_eq!(count(p, e, server_op, &unknown), 1);
    // An unknown tool's name is not a label (the series stay bounded).
    assert_eq!(count(p, e, server_op, &[("gen_ai.tool.name", "nope")]), 0);
    let prompt = [
        ("mcp.method.name", "prompts/get"),
        ("gen_ai.prompt.name", "greet"),
    ];
    assert_eq!(count(p, e, server_op, &prompt), 1);
    let point = &points(p, e, server_op)[0];
    let bounds: Vec<f64> = point.bounds().collect();
    assert_eq!(bounds.first(), Some(&0.01));
    assert_eq!(bounds.last(), Some(&300.0));
}

/// Client side, against a real HTTP server: client and server operations, then sessions.
async fn client_side(p: &SdkMeterProvider, e: &InMemoryMetricExporter, registry: &Registry) {
    let (server_op, client_op) = (SERVER_OP, CLIENT_OP);
    let client = Client::http(&http_url(registry.clone()).await)
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
    let call = [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "add"),
    ];
    assert_eq!(count(p, e, client_op, &call), 1);
    let failed = [("gen_ai.tool.name", "divide"), ("error.type", "tool_error")];
    assert_eq!(count(p, e, client_op, &failed), 1);
    assert_eq!(count(p, e, server_op, &call), 2, "the HTTP server's too");

    let sessions = |name| count(p, e, name, &[]);
    assert_eq!(sessions(CLIENT_SESSION), 0);
    client.close().await;
    drop(client);
    let in_process = Client::in_process(registry.clone(), "math").await.unwrap();
    in_process.close().await;
    drop(in_process);
    for _ in 0..1000 {
        if sessions(CLIENT_SESSION) >= 2 && sessions(SERVER_SESSION) >= 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(sessions(CLIENT_SESSION), 2);
    assert!(sessions(SERVER_SESSION) >= 1);
}

/// The attributes we record whose Prometheus label names start like a metric's.
const LABELS: [&str; 2] = ["mcp_method_name", "mcp_protocol_version"];

/// Every metric the dashboard queries is one of ours, as Prometheus names it after the
/// collector's translation (dots to underscores, the unit `s` as `_seconds`, histogram series
/// `_bucket`, `_sum`, `_count`).
#[test]
fn the_dashboard_queries_only_metrics_we_emit() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/dashboards/mcp.json");
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let ours: BTreeSet<String> = METRIC_NAMES
        .iter()
        .flat_map(|name| {
            let base = format!("{}_seconds", name.replace('.', "_"));
            ["_bucket", "_sum", "_count"].map(|suffix| format!("{base}{suffix}"))
        })
        .collect();
    let panels = dashboard["panels"].as_array().expect("panels");
    assert!(panels.len() >= 4, "rate, errors, latency, sessions");
    for panel in panels {
        for target in panel["targets"].as_array().into_iter().flatten() {
            assert!(target["expr"].is_string(), "a PromQL expression");
        }
    }
    // Every `mcp_…` word anywhere in it: the panels' queries and the variables'.
    let text = dashboard.to_string();
    let queried: BTreeSet<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with("mcp_") && !LABELS.contains(word))
        .collect();
    assert!(!queried.is_empty());
    let stray: Vec<_> = queried.iter().filter(|q| !ours.contains(**q)).collect();
    assert!(
        stray.is_empty(),
        "the dashboard queries {stray:?}, which we do not emit"
    );
    for name in METRIC_NAMES {
        let base = name.replace('.', "_");
        assert!(
            queried.iter().any(|q| q.starts_with(base.as_str())),
            "the dashboard shows {name}"
        );
    }
}

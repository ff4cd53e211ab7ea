//! Metrics by OpenTelemetry's semantic conventions for MCP (feature `otel`): the histograms
//! `mcp.server.operation.duration`, `mcp.client.operation.duration`,
//! `mcp.server.session.duration` and `mcp.client.session.duration`, in seconds, with the
//! conventions' bucket boundaries, recorded through the global meter provider
//! (`opentelemetry::global::set_meter_provider`). The instruments are created once, on first
//! use: set the meter provider before the first request is served or sent.
//!
//! Cardinality stays bounded: a method the crate does not know is recorded as `_OTHER`, and a
//! tool's or prompt's name only when the request reached one (an unknown name is an error
//! without it).
//!
//! The cost: each request is timed and its attributes made whether or not a meter provider
//! is set (OpenTelemetry's API cannot tell its no-op provider from a real one): about 160 ns
//! and 1,400 instructions per in-process `tools/call` on the development machine
//! (`benches/call_path.rs`, built with and without the feature), before what an SDK's
//! provider adds. A build without `otel` pays nothing for metrics.

use std::sync::OnceLock;
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;

use crate::protocol::method;

/// The name of the meter the instruments come from (the instrumentation scope).
pub const METER_NAME: &str = "mcp_registry";

/// The histograms' names, as the conventions give them (the dashboard test checks its
/// queries against them).
pub const METRIC_NAMES: [&str; 4] = [
    SERVER_OPERATION,
    CLIENT_OPERATION,
    SERVER_SESSION,
    CLIENT_SESSION,
];

const SERVER_OPERATION: &str = "mcp.server.operation.duration";
const CLIENT_OPERATION: &str = "mcp.client.operation.duration";
const SERVER_SESSION: &str = "mcp.server.session.duration";
const CLIENT_SESSION: &str = "mcp.client.session.duration";

/// The bucket boundaries the conventions recommend for the operation and session durations.
const BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The request methods recorded by name; any other is `_OTHER`.
const KNOWN: [&str; 20] = [
    method::INITIALIZE,
    method::PING,
    method::DISCOVER,
    method::TOOLS_LIST,
    method::TOOLS_CALL,
    method::PROMPTS_LIST,
    method::PROMPTS_GET,
    method::RESOURCES_LIST,
    method::RESOURCES_TEMPLATES_LIST,
    method::RESOURCES_READ,
    method::RESOURCES_SUBSCRIBE,
    method::RESOURCES_UNSUBSCRIBE,
    method::COMPLETION_COMPLETE,
    method::LOGGING_SET_LEVEL,
    method::TASKS_GET,
    method::TASKS_UPDATE,
    method::TASKS_CANCEL,
    method::TASKS_LIST,
    method::TASKS_RESULT,
    method::SUBSCRIPTIONS_LISTEN,
];

struct Instruments {
    server_operation: Histogram<f64>,
    client_operation: Histogram<f64>,
    server_session: Histogram<f64>,
    client_session: Histogram<f64>,
}

fn instruments() -> &'static Instruments {
    static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();
    INSTRUMENTS.get_or_init(|| {
        let meter = opentelemetry::global::meter(METER_NAME);
        let histogram = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(BOUNDARIES.to_vec())
                .build()
        };
        Instruments {
            server_operation: histogram(
                SERVER_OPERATION,
                "MCP request duration as observed on the receiver",
            ),
            client_operation: histogram(
                CLIENT_OPERATION,
                "MCP request duration as observed by the sender",
            ),
            server_session: histogram(
                SERVER_SESSION,
                "The duration of the MCP session as observed on the MCP server",
            ),
            client_session: histogram(
                CLIENT_SESSION,
                "The duration of the MCP session as observed on the MCP client",
            ),
        }
    })
}

/// `method` as recorded: itself when known, `_OTHER` otherwise (no allocation either way).
fn method_name(method: &str) -> &'static str {
    KNOWN
        .iter()
        .find(|known| **known == method)
        .copied()
        .unwrap_or("_OTHER")
}

/// How a request ended, as far as the metrics see it.
pub(crate) enum Ending<'a> {
    /// A result.
    Success,
    /// A tool's error result (`isError`): `error.type` is `tool_error`.
    ToolError,
    /// A JSON-RPC error with this code.
    Code(i64),
    /// Another failure (client side: `transport`, `closed`, ...), or a cancellation.
    Other(&'a str),
}

/// One request, timed from its start to its answer.
pub(crate) struct Operation {
    started: Instant,
    method: &'static str,
    /// `gen_ai.tool.name` or `gen_ai.prompt.name`, and the name.
    target: Option<(&'static str, String)>,
    version: Option<&'static str>,
}

impl Operation {
    /// Starts timing a request of `method`, naming `name` (a tool's or prompt's).
    pub(crate) fn start(method: &str, name: Option<&str>, version: Option<&'static str>) -> Self {
        let method = method_name(method);
        let key = match method {
            method::TOOLS_CALL => Some("gen_ai.tool.name"),
            method::PROMPTS_GET => Some("gen_ai.prompt.name"),
            _ => None,
        };
        Self {
            started: Instant::now(),
            method,
            target: key.zip(name).map(|(key, name)| (key, name.to_owned())),
            version,
        }
    }

    /// Records the request's duration on the server's histogram.
    pub(crate) fn server(&self, ending: Ending<'_>) {
        self.record(&instruments().server_operation, ending);
    }

    /// Records the request's duration on the client's histogram.
    pub(crate) fn client(&self, ending: Ending<'_>) {
        self.record(&instruments().client_operation, ending);
    }

    fn record(&self, histogram: &Histogram<f64>, ending: Ending<'_>) {
        let seconds = self.started.elapsed().as_secs_f64();
        let mut attributes = Vec::with_capacity(6);
        attributes.push(KeyValue::new("mcp.method.name", self.method));
        if let Some(version) = self.version {
            attributes.push(KeyValue::new("mcp.protocol.version", version));
        }
        if self.method == method::TOOLS_CALL {
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        let reached = match ending {
            Ending::Success => true,
            Ending::ToolError => {
                attributes.push(KeyValue::new("error.type", "tool_error"));
                true
            }
            Ending::Code(code) => {
                attributes.push(KeyValue::new("error.type", code.to_string()));
                attributes.push(KeyValue::new("rpc.response.status_code", code.to_string()));
                false
            }
            Ending::Other(what) => {
                attributes.push(KeyValue::new("error.type", what.to_owned()));
                false
            }
        };
        // A name the request did not reach (an unknown tool) would grow the series unbounded.
        if reached && let Some((key, name)) = &self.target {
            attributes.push(KeyValue::new(*key, name.clone()));
        }
        histogram.record(seconds, &attributes);
    }
}

/// Times a session from its creation to its end (its drop), on the server's or the client's
/// histogram.
pub(crate) struct Session {
    started: Instant,
    server: bool,
}

impl Session {
    /// A server session starting now.
    pub(crate) fn server() -> Self {
        Self {
            started: Instant::now(),
            server: true,
        }
    }

    /// A client session starting now.
    pub(crate) fn client() -> Self {
        Self {
            started: Instant::now(),
            server: false,
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let instruments = instruments();
        let histogram = if self.server {
            &instruments.server_session
        } else {
            &instruments.client_session
        };
        histogram.record(self.started.elapsed().as_secs_f64(), &[]);
    }
}

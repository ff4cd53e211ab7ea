//! Traces: one `tracing` span per request on each side, named and attributed as
//! OpenTelemetry's semantic conventions for MCP say (`{method} {target}`, `mcp.method.name`,
//! `mcp.protocol.version`, `gen_ai.operation.name`, `gen_ai.tool.name`, `jsonrpc.request.id`,
//! `error.type`), so a `tracing-opentelemetry`
//! layer exports them as they are. With the `otel` feature, W3C trace context travels in
//! `_meta` (`traceparent`, `tracestate`, `baggage`: SEP-414): the server's span continues the
//! client's trace, and the client writes its span's context into every request it sends,
//! through the process's OpenTelemetry propagator
//! (`opentelemetry::global::set_text_map_propagator`).
//!
//! Metrics (feature `otel`, `telemetry::metrics`): the conventions' histograms
//! `mcp.server.operation.duration`, `mcp.client.operation.duration`,
//! `mcp.server.session.duration` and `mcp.client.session.duration`, through the global meter
//! provider.

use std::fmt;

use serde_json::{Map, Value};
use tracing::Span;
use tracing::field::Empty;

use crate::protocol::decode::IncomingRequest;
use crate::protocol::{ErrorObject, method};

#[cfg(feature = "otel")]
pub mod metrics;

/// A server request's span and (feature `otel`) its timing: what records its outcome.
pub(crate) struct Observed {
    pub(crate) span: Span,
    #[cfg(feature = "otel")]
    pub(crate) operation: metrics::Operation,
}

impl Observed {
    /// Opens the span and (feature `otel`) starts the timing of `request`.
    pub(crate) fn start(server: Option<&str>, request: &IncomingRequest<'_>) -> Self {
        Self {
            span: server_span(server, request),
            #[cfg(feature = "otel")]
            operation: metrics::Operation::start(
                &request.method,
                request.name(),
                request
                    .era
                    .as_ref()
                    .ok()
                    .and_then(|era| era.version())
                    .map(|v| v.as_str()),
            ),
        }
    }

    /// Whether nothing is observed: no span wanted, and no metrics (without `otel`).
    #[inline]
    pub(crate) fn is_disabled(&self) -> bool {
        cfg!(not(feature = "otel")) && self.span.is_disabled()
    }
}

/// Times a session (feature `otel`: `mcp.server.session.duration` or
/// `mcp.client.session.duration`, recorded when it is dropped; nothing without the feature).
pub(crate) struct SessionTimer {
    #[cfg(feature = "otel")]
    _session: metrics::Session,
}

impl SessionTimer {
    /// A server session starting now.
    #[inline]
    pub(crate) fn server() -> Self {
        Self {
            #[cfg(feature = "otel")]
            _session: metrics::Session::server(),
        }
    }

    /// A client session starting now.
    #[inline]
    pub(crate) fn client() -> Self {
        Self {
            #[cfg(feature = "otel")]
            _session: metrics::Session::client(),
        }
    }
}

/// The target of the server's request spans (filter on it to keep or drop them).
pub const SERVER_TARGET: &str = "mcp_registry::server";

/// `{method} {target}`: the span name the conventions ask for.
struct SpanName<'a>(&'a str, Option<&'a str>);

impl fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(target) => write!(f, "{} {target}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// The `{target}` of a span's name: a tool's or prompt's name, never a resource's URI (the
/// conventions keep span names low in cardinality).
fn span_target<'a>(method: &str, name: Option<&'a str>) -> Option<&'a str> {
    match method {
        method::TOOLS_CALL | method::PROMPTS_GET => name,
        _ => None,
    }
}

/// Records on the current request span the server and name (`field`: `gen_ai.tool.name` or
/// `gen_ai.prompt.name`) of the item a request to a registry's union of servers reached: the
/// span was opened without them.
pub(crate) fn record_own_names(server: &str, name: &str, field: &'static str) {
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    span.record("mcp.server.name", server);
    span.record(field, name);
}

/// The span of one request a server answers: a child of the trace the request's `_meta`
/// carries, if any (feature `otel`). Disabled (and free) when no subscriber wants it.
/// `server`: `None` for a registry's union of servers, whose requests record the server they
/// reach once it is known.
pub(crate) fn server_span(server: Option<&str>, request: &IncomingRequest<'_>) -> Span {
    let (method, id, meta) = (&*request.method, &request.id, request.meta.as_deref());
    // The fields are computed only when the span is enabled: `target` is looked up then.
    let span = tracing::info_span!(
        target: SERVER_TARGET,
        "mcp.server.request",
        otel.name = %SpanName(method, span_target(method, request.name())),
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = method,
        mcp.protocol.version = Empty,
        gen_ai.operation.name = Empty,
        mcp.server.name = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        mcp.resource.uri = Empty,
        jsonrpc.request.id = %id,
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    if let Some(server) = server {
        span.record("mcp.server.name", server);
    }
    if let Some(version) = request.era.as_ref().ok().and_then(|era| era.version()) {
        span.record("mcp.protocol.version", version.as_str());
    }
    if method == method::TOOLS_CALL {
        span.record("gen_ai.operation.name", "execute_tool");
    }
    if let Some(target) = request.name() {
        match method {
            // Through the union (no server yet), the tool's or prompt's own name is recorded
            // once it is resolved (`record_own_names`).
            method::TOOLS_CALL if server.is_some() => span.record("gen_ai.tool.name", target),
            method::PROMPTS_GET if server.is_some() => span.record("gen_ai.prompt.name", target),
            method::RESOURCES_READ => span.record("mcp.resource.uri", target),
            _ => &span,
        };
    }
    #[cfg(feature = "otel")]
    if let Some(meta) = meta {
        otel::set_parent(&span, meta);
    }
    #[cfg(not(feature = "otel"))]
    let _ = meta;
    span
}

/// Marks `span` failed with a JSON-RPC error (`error.type` is its code).
pub(crate) fn record_error(span: &Span, error: &ErrorObject) {
    if !span.is_disabled() {
        // Strings, as the conventions ask: `-32602`.
        let code = tracing::field::display(error.code.0);
        span.record("error.type", &code);
        span.record("rpc.response.status_code", &code);
        span.record("otel.status_code", "ERROR");
    }
}

/// Marks `span` failed by a tool's own error result (`isError`).
pub(crate) fn record_tool_error(span: &Span) {
    if !span.is_disabled() {
        span.record("error.type", "tool_error");
        span.record("otel.status_code", "ERROR");
    }
}

/// The trace context of the current span, as the `_meta` members a request carries (empty
/// without the `otel` feature, outside a span, or when the propagator writes nothing).
pub(crate) fn current_trace_context() -> Map<String, Value> {
    #[cfg(feature = "otel")]
    {
        otel::current()
    }
    #[cfg(not(feature = "otel"))]
    {
        Map::new()
    }
}

#[cfg(feature = "otel")]
mod otel {
    use crate::protocol::meta::RequestMeta;
    use opentelemetry::propagation::{Extractor, Injector};
    use serde_json::{Map, Value};
    use tracing::Span;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    struct Reader<'a>(&'a Map<String, Value>);

    impl Extractor for Reader<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key)?.as_str()
        }
        fn keys(&self) -> Vec<&str> {
            self.0.keys().map(String::as_str).collect()
        }
    }

    struct Writer<'a>(&'a mut Map<String, Value>);

    impl Injector for Writer<'_> {
        fn set(&mut self, key: &str, value: String) {
            self.0.insert(key.to_owned(), Value::String(value));
        }
    }

    /// Makes `span` continue the trace `meta` carries.
    pub(super) fn set_parent(span: &Span, meta: &RequestMeta) {
        if !meta.contains_key("traceparent") {
            return;
        }
        let meta = meta.as_map();
        let parent = opentelemetry::global::get_text_map_propagator(|p| p.extract(&Reader(meta)));
        let _ = span.set_parent(parent);
    }

    /// The current span's context as `_meta` members.
    pub(super) fn current() -> Map<String, Value> {
        let mut meta = Map::new();
        let span = Span::current();
        if span.is_disabled() {
            return meta;
        }
        let context = span.context();
        opentelemetry::global::get_text_map_propagator(|p| {
            p.inject_context(&context, &mut Writer(&mut meta));
        });
        meta
    }
}

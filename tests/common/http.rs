//! Helpers for the Streamable HTTP transport tests: a router over the `math` server (plus a
//! `job` tool that reports progress), requests sent to it in-process, and their replies.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use mcp_registry::transport::http::{HttpConfig, router};
use mcp_registry::{Registry, Server};
use serde_json::{Value, json};
use tower::ServiceExt;

use super::math_server;

/// A router over the `math` server and a `job` tool that reports `steps` progress
/// notifications before it finishes.
pub fn app(config: HttpConfig) -> axum::Router {
    let job = super::job::job_tool();
    let math = math_server();
    let tools = math.tools().iter().cloned().chain([job]);
    let registry = Registry::from_servers([Server::builder("math")
        .version("1.2.0")
        .tools(tools)
        .build()
        .unwrap()]);
    router(registry, "math", config)
}

/// A reply read whole: status, headers and body text.
pub struct Reply {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub body: String,
}

impl Reply {
    /// `response`, read whole.
    pub async fn read(response: axum::response::Response) -> Reply {
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        Reply {
            status,
            headers,
            body: String::from_utf8(bytes.to_vec()).unwrap(),
        }
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {:?}", self.body))
    }
    /// The `data:` payloads of an SSE body.
    pub fn events(&self) -> Vec<Value> {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data: ").or_else(|| l.strip_prefix("data:")))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }
}

/// Sends a request with no body and returns the response unread (for SSE streams).
pub async fn send_streaming(
    app: &axum::Router,
    method: &str,
    headers: &[(&str, &str)],
) -> axum::response::Response {
    let mut req = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("accept", "text/event-stream");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    app.clone()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap()
}

/// Sends a request to `/mcp` and reads the reply whole (see [`send_to`]).
pub async fn send(
    app: &axum::Router,
    method: &str,
    headers: &[(&str, &str)],
    body: impl Into<Body>,
) -> Reply {
    send_to(app, method, "/mcp", headers, body).await
}

/// Sends a request to `uri` and reads the reply whole: JSON sent, JSON or SSE accepted.
/// `headers` replace those defaults of the same name; an empty value leaves the header out;
/// a name given twice is sent twice.
pub async fn send_to(
    app: &axum::Router,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: impl Into<Body>,
) -> Reply {
    let defaults = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ];
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in defaults {
        if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case(k)) {
            req = req.header(k, v);
        }
    }
    for (k, v) in headers.iter().filter(|(_, v)| !v.is_empty()) {
        req = req.header(*k, *v);
    }
    let response = app
        .clone()
        .oneshot(req.body(body.into()).unwrap())
        .await
        .unwrap();
    Reply::read(response).await
}

/// A 2025-11-25 `initialize` request.
pub const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// A 2026-07-28 request: `params` with the `_meta` every modern request carries.
pub fn modern(id: i64, method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// A 2026-07-28 `tools/call` of `tool` (no arguments) as raw HTTP/1.1 to `/mcp`, for tests
/// that talk to a served endpoint over a socket: `meta` joins the `_meta` every modern
/// request carries, and `headers` (each line ending in `\r\n`) join the required ones.
pub fn raw_modern_call(id: i64, tool: &str, meta: Value, headers: &str) -> String {
    let mut body: Value = serde_json::from_str(&modern(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {}}),
    ))
    .unwrap();
    if let (Some(into), Value::Object(extra)) = (body["params"]["_meta"].as_object_mut(), meta) {
        into.extend(extra);
    }
    let body = body.to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

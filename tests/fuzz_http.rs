//! Deterministic fuzzing of the Streamable HTTP transport: the mutated messages of
//! `tests/fuzz_messages.rs` go through the axum router as POST bodies (a third as many; some
//! cut short or spoiled) with headers that mostly match them and sometimes do not. Every case
//! checks: no panic, a documented status, and a body that is a JSON-RPC response (under the
//! message's id), SSE of JSON, or empty for `202`.
//!
//! `MCP_FUZZ_CASES` (default 3000, a third of them here) sets the number of cases and
//! `MCP_FUZZ_SEED` the base seed; a failure names its case's seed, which
//! `MCP_FUZZ_REPLAY=<seed>` runs alone.

use crate::common;

use common::fuzz::{
    Case, DEFAULT_CASES, DEFAULT_SEED, Rng, SERVER, STRINGS, env_u64, generate, harness, reply_id,
};
use serde_json::Value;

/// Headers for `message`: those a client sends (`Content-Type`, `Accept`, the mirrored
/// 2026-07-28 ones read from the message, a session id), each then kept, dropped or spoiled.
fn http_headers(rng: &mut Rng, message: &Value, session: &str) -> Vec<(&'static str, String)> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
    let params = message.get("params");
    let version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"));
    let mut headers = vec![
        ("content-type", "application/json".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
        ("mcp-method", text(message.get("method"))),
        ("mcp-name", text(params.and_then(|p| p.get("name")))),
        ("mcp-protocol-version", text(version)),
        ("mcp-session-id", session.to_owned()),
        ("mcp-param-a", "1".to_owned()),
    ];
    let spoiled = [
        "",
        "text/plain",
        "application/json; charset=utf-8",
        "*/*",
        "text/event-stream;q=0, application/json",
        "2025-11-25",
        "2026-07-28",
        "=?base64?@@@?=",
        "=?base64?YWRk?=",
        "unknown-session",
        "localhost.evil.example",
    ];
    for header in &mut headers {
        match rng.below(8) {
            0 => header.1 = rng.pick(&spoiled).to_string(),
            1 => header.1 = rng.pick(STRINGS).to_string(),
            _ => {}
        }
    }
    headers.retain(|(_, v)| !v.is_empty() && !rng.one_in(10));
    if rng.one_in(12) {
        headers.push(("host", rng.pick(&spoiled).to_string()));
    }
    if rng.one_in(12) {
        headers.push(("origin", format!("http://{}", rng.pick(&spoiled))));
    }
    headers
}

/// The body for `case`: its text, sometimes cut short or with a byte spoiled.
fn http_body(rng: &mut Rng, case: &Case) -> Vec<u8> {
    let mut body = case.text.clone().into_bytes();
    match rng.below(10) {
        0 if !body.is_empty() => body.truncate(rng.below(body.len())),
        1 if !body.is_empty() => {
            let at = rng.below(body.len());
            body[at] = rng.pick(&[0u8, b'"', b'{', b']', 0xff, b'\\']).to_owned();
        }
        _ => {}
    }
    body
}

/// What any answer from the HTTP transport must be: a status it documents; `202` empty; a
/// JSON body a JSON-RPC response (or a batch of them) whose `id`, when the message was one
/// object, is its id or none; an SSE body of JSON events.
fn check_http(message: &Value, status: u16, content_type: &str, body: &str) -> Result<(), String> {
    const STATUSES: &[u16] = &[200, 202, 400, 401, 403, 404, 405, 406, 408, 413, 415, 503];
    if !STATUSES.contains(&status) {
        return Err(format!("status {status}"));
    }
    if status == 202 {
        return if body.is_empty() {
            Ok(())
        } else {
            Err("a 202 with a body".to_owned())
        };
    }
    if content_type.starts_with("text/event-stream") {
        for data in body.lines().filter_map(|l| l.strip_prefix("data:")) {
            serde_json::from_str::<Value>(data.trim()).map_err(|e| format!("SSE data: {e}"))?;
        }
        return Ok(());
    }
    let reply: Value = serde_json::from_str(body).map_err(|e| format!("body: {e}"))?;
    let replies = match &reply {
        Value::Array(replies) => replies.iter().collect(),
        one => vec![one],
    };
    for reply in replies {
        let shaped = reply["jsonrpc"] == "2.0"
            && (reply.get("result").is_some()
                || (reply["error"]["code"].is_i64() && reply["error"]["message"].is_string()));
        if !shaped {
            return Err(format!("not a JSON-RPC response: {reply}"));
        }
    }
    if message.is_object() && !reply.is_array() {
        let id = reply.get("id").filter(|id| !id.is_null());
        if id.is_some() && id != reply_id(message).as_ref() {
            return Err(format!(
                "reply id {id:?} for message id {:?}",
                message.get("id")
            ));
        }
    }
    Ok(())
}

/// One request through the router; the status, content type and body it got (`None` when
/// the HTTP crate refuses a header value: no server ever sees such a request).
async fn http_exchange(
    app: &axum::Router,
    headers: &[(&'static str, String)],
    body: Vec<u8>,
) -> Option<(u16, String, String)> {
    use http_body_util::BodyExt as _;
    use tower::ServiceExt as _;
    let mut request = axum::http::Request::builder().method("POST").uri("/mcp");
    for (name, value) in headers {
        request = request.header(*name, value.as_bytes());
    }
    let request = request.body(axum::body::Body::from(body)).ok()?;
    let response = app.clone().oneshot(request).await.expect("infallible");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    Some((
        status,
        content_type,
        String::from_utf8_lossy(&bytes).into_owned(),
    ))
}

#[tokio::test(start_paused = true)]
async fn mutated_http_requests_are_answered_by_the_rules() {
    use mcp_registry::transport::http::{HttpConfig, router};
    let base = env_u64("MCP_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let cases = env_u64("MCP_FUZZ_CASES").unwrap_or(DEFAULT_CASES) / 3;
    let h = harness().await;
    let app = router(h.registry.clone(), SERVER, HttpConfig::default());
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#;
    let headers = [
        ("content-type", "application/json".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
    ];
    let seeds: Vec<u64> = match env_u64("MCP_FUZZ_REPLAY") {
        Some(seed) => vec![seed],
        None => (0..cases)
            .map(|i| Rng(base.wrapping_add(!i)).next())
            .collect(),
    };
    // A live session id, learned once: the first initialize's.
    let session = {
        let response = {
            use tower::ServiceExt as _;
            let mut request = axum::http::Request::builder().method("POST").uri("/mcp");
            for (name, value) in &headers {
                request = request.header(*name, value.as_str());
            }
            let request = request.body(axum::body::Body::from(init)).unwrap();
            app.clone().oneshot(request).await.unwrap()
        };
        response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned()
    };
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for (i, &seed) in seeds.iter().enumerate() {
        let case = generate(seed, &h.bases);
        let mut rng = Rng(seed ^ 0x4854_5450);
        let headers = http_headers(&mut rng, &case.message, &session);
        let body = http_body(&mut rng, &case);
        let Some((status, content_type, reply)) = http_exchange(&app, &headers, body.clone()).await
        else {
            continue;
        };
        *statuses.entry(status).or_default() += 1;
        if let Err(failure) = check_http(&case.message, status, &content_type, &reply) {
            panic!(
                "HTTP fuzz case {i} of base seed {base:#x} failed; replay with MCP_FUZZ_REPLAY={seed:#x}\n  headers: {headers:?}\n  body: {}\n  {failure}\n  reply: {status} {reply}",
                String::from_utf8_lossy(&body[..body.len().min(2000)])
            );
        }
    }
    // The cases reach the server's answers, not only its refusals.
    if seeds.len() > 100 {
        for status in [200, 202, 400, 404] {
            assert!(
                statuses.contains_key(&status),
                "no {status} in {statuses:?}"
            );
        }
    }
}

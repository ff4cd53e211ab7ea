//! The header checks: `Host` and `Origin` (DNS rebinding), `Accept`, `Content-Type`, the
//! declared length, and the 2026-07-28 mirrored headers (`Mcp-Method`, `Mcp-Name`,
//! `MCP-Protocol-Version`, `Mcp-Param-*`).

use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::Response;

use super::auth::AccessClaims;
use super::sessions::AppState;
use super::{METHOD_NAME, NAME_NAME, VERSION_NAME, error_response, header_str};
use crate::protocol::decode::{Decoded, IncomingRequest};
use crate::protocol::headers::decode_header_value;
use crate::protocol::{ErrorCode, method};
use crate::registry::Registry;

/// `Some(403 response)` when the request's `Host` or `Origin` is not allowed. The host is
/// the `Host` header, or the URI's authority (HTTP/2); a request with neither comes from no
/// browser, so no rebinding page, and is let through.
pub(super) fn check_host_and_origin(
    state: &AppState,
    uri: &Uri,
    headers: &HeaderMap,
) -> Option<Response> {
    check_host(state, uri, headers).or_else(|| check_origin(state, headers))
}

/// `Some(403 response)` when the request's `Host` is not allowed (see
/// [`check_host_and_origin`]).
pub(super) fn check_host(state: &AppState, uri: &Uri, headers: &HeaderMap) -> Option<Response> {
    let host = match headers.get(header::HOST) {
        Some(host) => Some(host.to_str().unwrap_or_default()),
        None => uri.authority().map(|a| a.as_str()),
    };
    if let Some(host) = host
        && !state.config.host_allowed(host.trim())
    {
        return Some(error_response(
            StatusCode::FORBIDDEN,
            None,
            ErrorCode::INVALID_REQUEST,
            format!(
                "host {host:?} is not allowed (DNS rebinding protection): add it to HttpConfig::allowed_hosts, or turn HttpConfig::check_host off if a proxy in front checks the host"
            ),
        ));
    }
    None
}

/// `Some(403 response)` when the request's `Origin` is not allowed.
fn check_origin(state: &AppState, headers: &HeaderMap) -> Option<Response> {
    match headers.get(header::ORIGIN) {
        None => None,
        Some(origin) => match origin.to_str() {
            Ok(o) if state.config.origin_allowed(o) => None,
            _ => Some(error_response(
                StatusCode::FORBIDDEN,
                None,
                ErrorCode::INVALID_REQUEST,
                format!("origin {origin:?} is not allowed: add it to HttpConfig::allowed_origins"),
            )),
        },
    }
}

/// Checks a 2026-07-28 `tools/call`'s `Mcp-Param-{Name}` headers against its arguments, for
/// the parameters the tool annotates with `x-mcp-header`: each value the body has must come
/// in its header, decoded equal (a header that cannot be decoded is refused too). A tool this
/// server does not have is left to dispatch to refuse. The arguments are read only for a
/// tool with such parameters.
pub(super) fn check_param_headers(
    registry: &Registry,
    server: &str,
    headers: &HeaderMap,
    request: &IncomingRequest<'_>,
) -> Result<(), String> {
    let snapshot = registry.snapshot();
    let Some(tool) = request.name().and_then(|name| {
        snapshot
            .served(server, registry.union_identity())?
            .tool(name)
    }) else {
        return Ok(());
    };
    // A server's own annotation it got wrong is not the client's fault: nothing to check.
    let annotated = tool.param_headers();
    if annotated.is_empty() {
        return Ok(());
    }
    let arguments = request.arguments().unwrap_or_default();
    for param in annotated {
        let header = format!("mcp-param-{}", param.name());
        let sent = match headers.get(header.as_str()) {
            None => None,
            Some(raw) => match raw.to_str().ok().and_then(decode_header_value) {
                Some(decoded) => Some(decoded),
                None => {
                    return Err(format!(
                        "Header mismatch: the Mcp-Param-{} header is not a valid value",
                        param.name()
                    ));
                }
            },
        };
        let body = param.value_in(&arguments);
        if sent != body {
            return Err(match (sent, body) {
                (None, Some(_)) => {
                    format!(
                        "Header mismatch: the Mcp-Param-{} header is missing",
                        param.name()
                    )
                }
                (sent, body) => format!(
                    "Header mismatch: Mcp-Param-{} header value {sent:?} does not match body value {body:?}",
                    param.name()
                ),
            });
        }
    }
    Ok(())
}

/// Checks a modern message's mirrored headers against its decoded body: the version (in
/// `_meta`), the method, and what a `tools/call`, `resources/read` or `prompts/get` names.
pub(super) fn check_modern_headers(
    headers: &HeaderMap,
    message: &Decoded<'_>,
    version: Option<&str>,
) -> Result<(), String> {
    let (method, request) = match message {
        Decoded::Request(request) => (&*request.method, Some(request)),
        Decoded::Notification(n) => (n.method.as_str(), None),
        _ => ("", None),
    };
    match header_str(headers, &VERSION_NAME) {
        None => {
            return Err("Header mismatch: the MCP-Protocol-Version header is missing".to_owned());
        }
        Some(h) if version.is_some_and(|v| v != h) => {
            let version = version.unwrap_or_default();
            return Err(format!(
                "Header mismatch: MCP-Protocol-Version header value {h:?} does not match body value {version:?}"
            ));
        }
        Some(_) => {}
    }
    match header_str(headers, &METHOD_NAME) {
        None if request.is_some() => {
            return Err("Header mismatch: the Mcp-Method header is missing".to_owned());
        }
        Some(h) if h != method => {
            return Err(format!(
                "Header mismatch: Mcp-Method header value {h:?} does not match body value {method:?}"
            ));
        }
        _ => {}
    }
    // The body member the Mcp-Name header mirrors (SEP-2243; tasks: SEP-2663).
    if let Some(request) = request
        && matches!(
            method,
            method::TOOLS_CALL
                | method::RESOURCES_READ
                | method::PROMPTS_GET
                | method::TASKS_GET
                | method::TASKS_UPDATE
                | method::TASKS_CANCEL
        )
    {
        check_name_header(headers, request.name().unwrap_or_default())?;
    }
    Ok(())
}

/// The `Mcp-Name` header against what the body names.
fn check_name_header(headers: &HeaderMap, body_name: &str) -> Result<(), String> {
    match headers
        .get(&NAME_NAME)
        .map(|v| v.to_str().ok().and_then(decode_header_value))
    {
        None => Err("Header mismatch: the Mcp-Name header is missing".to_owned()),
        Some(None) => Err("Header mismatch: the Mcp-Name header is not valid".to_owned()),
        Some(Some(h)) if h != body_name => Err(format!(
            "Header mismatch: Mcp-Name header value {h:?} does not match body value {body_name:?}"
        )),
        Some(Some(_)) => Ok(()),
    }
}

/// Checks a POST's headers (after `Host`, `Origin` and the token) before its body is read:
/// `Some(refusal)` when they fail.
pub(super) fn check_post_headers(state: &AppState, headers: &HeaderMap) -> Option<Response> {
    if accepts_each(headers, ["application/json", "text/event-stream"]) != [true, true] {
        return Some(error_response(
            StatusCode::NOT_ACCEPTABLE,
            None,
            ErrorCode::INVALID_REQUEST,
            "the Accept header must list both application/json and text/event-stream (the Streamable HTTP transport requires it)",
        ));
    }
    if !is_json(headers) {
        return Some(error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            None,
            ErrorCode::INVALID_REQUEST,
            format!(
                "the Content-Type must be application/json, not {:?}",
                header_str(headers, &header::CONTENT_TYPE).unwrap_or("missing")
            ),
        ));
    }
    let max = state.config.max_body_bytes;
    let declared =
        header_str(headers, &header::CONTENT_LENGTH).and_then(|len| len.trim().parse::<u64>().ok());
    if declared.is_some_and(|len| len > max as u64) {
        return Some(error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            None,
            ErrorCode::INVALID_REQUEST,
            format!("the body is over the limit of {max} bytes (HttpConfig::max_body_bytes)"),
        ));
    }
    None
}

/// Whether the `Content-Type` is `application/json` (parameters such as `charset` allowed).
fn is_json(headers: &HeaderMap) -> bool {
    header_str(headers, &header::CONTENT_TYPE)
        .and_then(|ct| ct.split(';').next())
        .is_some_and(|ct| ct.trim().eq_ignore_ascii_case("application/json"))
}

/// Whether the `Accept` header allows `media_type` (`type/subtype`): listed as such, as
/// `type/*` or as `*/*`, and not with `q=0`. A missing `Accept` allows nothing: the transport
/// spec requires clients to send one.
pub(super) fn accepts(headers: &HeaderMap, media_type: &str) -> bool {
    accepts_each(headers, [media_type]) == [true]
}

/// [`accepts`] for each of `media_types`, reading the header once (a POST asks for two).
fn accepts_each<const N: usize>(headers: &HeaderMap, media_types: [&str; N]) -> [bool; N] {
    let mut allowed = [false; N];
    for list in headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
    {
        let mut rest = Some(list);
        while let Some(ranges) = rest {
            let (range, more) = cut(ranges, b',');
            if let Some(name) = unrefused(range) {
                for (allowed, media_type) in allowed.iter_mut().zip(media_types) {
                    *allowed |= names(name, media_type);
                }
            }
            rest = more;
        }
    }
    allowed
}

/// `s` up to the first `separator`, and what follows it (if it is there). A plain loop: the
/// header values split here are a few bytes long, too short for `memchr` to pay.
fn cut(s: &str, separator: u8) -> (&str, Option<&str>) {
    match s.bytes().position(|b| b == separator) {
        // Splitting at an ASCII byte keeps both halves UTF-8.
        Some(at) => (&s[..at], Some(&s[at + 1..])),
        None => (s, None),
    }
}

/// A media range's `type/subtype`, unless the range refuses it (`q=0`).
fn unrefused(range: &str) -> Option<&str> {
    let (name, mut params) = cut(range, b';');
    while let Some(rest) = params {
        let (param, more) = cut(rest, b';');
        let (key, value) = cut(param, b'=');
        if key.trim().eq_ignore_ascii_case("q") && value.unwrap_or("").trim().parse() == Ok(0.0_f32)
        {
            return None;
        }
        params = more;
    }
    Some(name.trim())
}

/// Whether a media range's `name` (`type/subtype`, `type/*` or `*/*`) covers `media_type`,
/// compared without case and without allocating.
fn names(name: &str, media_type: &str) -> bool {
    match cut(name, b'/') {
        ("*", Some("*")) => true,
        (ty, Some("*")) => ty.eq_ignore_ascii_case(cut(media_type, b'/').0),
        _ => name.eq_ignore_ascii_case(media_type),
    }
}

/// What every request passes first: a due sweep of idle sessions, the Host and Origin
/// checks, then authentication (of a `method` request); `Err` is the refusal to send.
pub(super) async fn admit(
    state: &AppState,
    method: &str,
    uri: &Uri,
    headers: &HeaderMap,
) -> Result<Option<AccessClaims>, Response> {
    state.sweep_if_due();
    if let Some(denied) = check_host_and_origin(state, uri, headers) {
        return Err(denied);
    }
    state.authenticate(headers, method, uri.path()).await
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, header};

    use super::accepts;

    fn with_accept(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(
                header::ACCEPT,
                HeaderValue::from_str(value).expect("a value"),
            );
        }
        headers
    }

    #[test]
    fn accept_lists_ranges_wildcards_and_refusals() {
        let json = "application/json";
        let sse = "text/event-stream";
        let both = with_accept(&["application/json, text/event-stream"]);
        assert!(accepts(&both, json) && accepts(&both, sse));
        let spaced = with_accept(&[" Application/JSON ;charset=utf-8 ,TEXT/event-stream;q=0.5"]);
        assert!(accepts(&spaced, json) && accepts(&spaced, sse));
        let split = with_accept(&["application/json", "text/event-stream"]);
        assert!(accepts(&split, json) && accepts(&split, sse));
        let any = with_accept(&["*/*"]);
        assert!(accepts(&any, json) && accepts(&any, sse));
        let family = with_accept(&["text/*, application/*"]);
        assert!(accepts(&family, json) && accepts(&family, sse));
        let refused = with_accept(&["application/json; q=0, text/event-stream"]);
        assert!(!accepts(&refused, json) && accepts(&refused, sse));
        let refused_spaced = with_accept(&["application/json;Q = 0.0"]);
        assert!(!accepts(&refused_spaced, json));
        let other = with_accept(&["application/jsonx, text/event-streams, text"]);
        assert!(!accepts(&other, json) && !accepts(&other, sse));
        assert!(!accepts(&HeaderMap::new(), json));
        let empty = with_accept(&["", ",,;"]);
        assert!(!accepts(&empty, json));
    }
}

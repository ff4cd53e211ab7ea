//! The wire forms of authorization on the HTTP server: resource identifiers read and
//! compared, challenge parameters quoted, OAuth error bodies.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An OAuth-style error response: `{"error", "error_description"}` with the challenge.
pub(super) fn auth_body(
    status: StatusCode,
    challenge: Option<String>,
    error: &str,
    description: &str,
) -> Response {
    let body = json!({"error": error, "error_description": description}).to_string();
    let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Some(value) = challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// `text` with what cannot stand in a quoted-string of a challenge (RFC 6750 §3: `"`, `\`,
/// control and non-ASCII characters) left out.
pub(super) fn quotable(text: &str) -> String {
    text.chars()
        .filter(|c| matches!(c, ' ' | '!' | '#'..='[' | ']'..='~'))
        .collect()
}

/// `(scheme://authority lowercased, path-and-query)` of an absolute http(s) URL without a
/// fragment; the path is `""` for the root.
pub(super) fn split_resource(resource: &str) -> Option<(String, String)> {
    let (scheme, rest) = resource.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if !matches!(scheme.as_str(), "http" | "https") || resource.contains('#') {
        return None;
    }
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let path = if path == "/" { "" } else { path };
    Some((
        format!("{scheme}://{}", authority.to_ascii_lowercase()),
        path.to_owned(),
    ))
}

/// Whether two resource identifiers name the same resource: scheme and host compared without
/// case, a trailing slash ignored (MCP: servers should accept both forms).
pub(super) fn same_resource(a: &str, b: &str) -> bool {
    let canonical = |r: &str| {
        split_resource(r).map(|(origin, path)| {
            let path = path.strip_suffix('/').unwrap_or(&path).to_owned();
            (origin, path)
        })
    };
    match (canonical(a), canonical(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_compare_without_case_or_trailing_slash() {
        assert!(same_resource(
            "HTTPS://MCP.example.com/mcp/",
            "https://mcp.example.com/mcp"
        ));
        assert!(!same_resource(
            "https://mcp.example.com/MCP",
            "https://mcp.example.com/mcp"
        ));
        assert!(!same_resource(
            "https://other.example.com/mcp",
            "https://mcp.example.com/mcp"
        ));
    }
}

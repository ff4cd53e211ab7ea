//! Discovery: the `WWW-Authenticate` challenge, protected resource metadata (RFC 9728) and
//! authorization server metadata (RFC 8414, OpenID Connect discovery).

use std::collections::HashMap;

use reqwest::Url;
use reqwest::header::ACCEPT;
use serde::Deserialize;

use super::AuthError;

/// The auth-params of the `Bearer` (or `DPoP`) challenge in a `WWW-Authenticate` value (RFC 9110 §11.6.1):
/// names lowercased, quoted strings unescaped. `None` when there is no Bearer challenge.
pub(crate) fn bearer_params(header: &str) -> Option<HashMap<String, String>> {
    let mut chars = header.chars().peekable();
    let mut params = HashMap::new();
    let mut in_bearer = false;
    let mut found = false;
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
            chars.next();
        }
        let mut token = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() || c == ',' || c == '=' {
                break;
            }
            token.push(c);
            chars.next();
        }
        if token.is_empty() {
            if chars.next().is_none() {
                break;
            }
            continue;
        }
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        if chars.peek() == Some(&'=') {
            chars.next();
            while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
                chars.next();
            }
            let mut value = String::new();
            if chars.peek() == Some(&'"') {
                chars.next();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => value.extend(chars.next()),
                        '"' => break,
                        c => value.push(c),
                    }
                }
            } else {
                while let Some(&c) = chars.peek() {
                    if c == ',' || c.is_whitespace() {
                        break;
                    }
                    value.push(c);
                    chars.next();
                }
            }
            if in_bearer {
                params.insert(token.to_ascii_lowercase(), value);
            }
        } else {
            // A new challenge's scheme: Bearer, or DPoP (RFC 9449 §7.1) with the same params.
            in_bearer = token.eq_ignore_ascii_case("bearer") || token.eq_ignore_ascii_case("dpop");
            found |= in_bearer;
        }
    }
    found.then_some(params)
}

/// Protected resource metadata (RFC 9728), the fields used.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ResourceMetadata {
    pub resource: String,
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// Authorization server metadata (RFC 8414 / OpenID Connect discovery), the fields used.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ServerMetadata {
    pub issuer: String,
    /// Absent at a server that offers no authorization code flow (client credentials only).
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    pub token_endpoint: String,
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    #[serde(default)]
    pub client_id_metadata_document_supported: Option<bool>,
    #[serde(default)]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    /// The 2025-03-26 defaults of a server without metadata: `/authorize`, `/token` and
    /// `/register` at the authorization base URL (the MCP URL without its path).
    pub(crate) fn defaults(base: &str) -> Self {
        ServerMetadata {
            issuer: base.to_owned(),
            authorization_endpoint: Some(format!("{base}/authorize")),
            token_endpoint: format!("{base}/token"),
            registration_endpoint: Some(format!("{base}/register")),
            scopes_supported: None,
            // 2025-03-26 makes PKCE mandatory: S256 is assumed.
            code_challenge_methods_supported: Some(vec!["S256".into()]),
            token_endpoint_auth_methods_supported: None,
            authorization_response_iss_parameter_supported: None,
            client_id_metadata_document_supported: None,
            dpop_signing_alg_values_supported: None,
        }
    }

    /// Whether DPoP-bound tokens can be had with an ES256 key.
    pub(crate) fn supports_dpop(&self) -> bool {
        self.dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|algs| algs.iter().any(|a| a == "ES256"))
    }
}

/// The well-known protected resource metadata URLs for `server`: path-inserted, then root.
pub(crate) fn resource_metadata_urls(server: &Url) -> Vec<String> {
    let origin = server.origin().ascii_serialization();
    let path = server.path().trim_end_matches('/');
    let mut urls = Vec::new();
    if !path.is_empty() {
        urls.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    urls.push(format!("{origin}/.well-known/oauth-protected-resource"));
    urls
}

/// The metadata URLs for issuer `issuer`, in the spec's order: with a path, RFC 8414
/// path-inserted, OpenID path-inserted, OpenID path-appended; without, RFC 8414 then OpenID.
pub(crate) fn server_metadata_urls(issuer: &Url) -> Vec<String> {
    let origin = issuer.origin().ascii_serialization();
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// Whether the MCP URL `server` is part of the protected resource `resource`: same origin,
/// and its path is the resource's or below it.
pub(crate) fn resource_covers(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server.origin() {
        return false;
    }
    let base = resource.path().trim_end_matches('/');
    let path = server.path().trim_end_matches('/');
    base.is_empty() || path == base || path.starts_with(&format!("{base}/"))
}

/// Whether `url` is HTTPS, or HTTP on this machine (OAuth 2.1 §1.5; loopback for development).
pub(crate) fn secure(url: &str) -> bool {
    let Ok(url) = Url::parse(url) else {
        return false;
    };
    match url.scheme() {
        "https" => true,
        "http" => url.host_str().is_some_and(|host| {
            host == "localhost"
                || host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }),
        _ => false,
    }
}

/// Whether `url` is the redirect URI `redirect_uri` (with a query added).
pub(crate) fn is_redirect_to(url: &Url, redirect_uri: &str) -> bool {
    let Ok(target) = Url::parse(redirect_uri) else {
        return false;
    };
    url.scheme() == target.scheme()
        && url.host_str() == target.host_str()
        && url.port_or_known_default() == target.port_or_known_default()
        && url.path() == target.path()
}

/// GETs `url` as JSON: `Ok(None)` when it is not there (non-2xx, not the JSON expected).
async fn get_json<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    url: &str,
) -> Result<Option<T>, AuthError> {
    let response = match http
        .get(url)
        .header(ACCEPT, "application/json")
        .send()
        .await
    {
        Ok(response) => response,
        Err(e) => {
            tracing::debug!(%url, error = %e, "metadata request failed");
            return Ok(None);
        }
    };
    if !response.status().is_success() {
        return Ok(None);
    }
    let body = response
        .bytes()
        .await
        .map_err(|e| AuthError::Http(format!("GET {url}: {e}")))?;
    Ok(serde_json::from_slice(&body).ok())
}

/// The protected resource metadata: from `from_challenge` when given, else the well-known
/// URLs of `server`.
pub(crate) async fn resource_metadata(
    http: &reqwest::Client,
    server: &Url,
    from_challenge: Option<&str>,
) -> Result<ResourceMetadata, AuthError> {
    let mut tried = Vec::new();
    let urls = from_challenge
        .map(str::to_owned)
        .into_iter()
        .chain(resource_metadata_urls(server));
    for url in urls {
        if let Some(metadata) = get_json::<ResourceMetadata>(http, &url).await? {
            return Ok(metadata);
        }
        tried.push(url);
    }
    Err(AuthError::ResourceMetadataNotFound { tried })
}

/// The metadata of the authorization server `issuer`, whose `issuer` must be `issuer`
/// exactly (RFC 8414 §3.3).
pub(crate) async fn server_metadata(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<ServerMetadata, AuthError> {
    let issuer_url = Url::parse(issuer).map_err(|e| {
        AuthError::Http(format!("invalid authorization server URL {issuer:?}: {e}"))
    })?;
    let mut tried = Vec::new();
    for url in server_metadata_urls(&issuer_url) {
        if let Some(metadata) = get_json::<ServerMetadata>(http, &url).await? {
            if metadata.issuer != issuer {
                return Err(AuthError::IssuerMismatch {
                    expected: issuer.to_owned(),
                    found: metadata.issuer,
                });
            }
            let endpoints = [
                metadata.authorization_endpoint.as_ref(),
                Some(&metadata.token_endpoint),
                metadata.registration_endpoint.as_ref(),
            ];
            if let Some(insecure) = endpoints.into_iter().flatten().find(|e| !secure(e)) {
                return Err(AuthError::InsecureEndpoint(insecure.clone()));
            }
            return Ok(metadata);
        }
        tried.push(url);
    }
    Err(AuthError::ServerMetadataNotFound {
        issuer: issuer.to_owned(),
        tried,
    })
}

/// Discovery for a server without protected resource metadata (MCP 2025-03-26): the
/// resource is the MCP URL and its authorization server sits at the URL's origin, described
/// by RFC 8414 metadata there or, without any, by the default endpoints.
pub(crate) async fn legacy_discovery(
    http: &reqwest::Client,
    server: &Url,
) -> Result<(ResourceMetadata, ServerMetadata), AuthError> {
    let base = server.origin().ascii_serialization();
    let resource = ResourceMetadata {
        resource: server.to_string(),
        authorization_servers: vec![base.clone()],
        scopes_supported: None,
    };
    let metadata = match server_metadata(http, &base).await {
        Ok(metadata) => metadata,
        Err(AuthError::ServerMetadataNotFound { .. }) => ServerMetadata::defaults(&base),
        Err(e) => return Err(e),
    };
    Ok((resource, metadata))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_challenge_params() {
        let p = bearer_params(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://x/y?q=\"1\"""#,
        )
        .unwrap();
        assert_eq!(p["error"], "insufficient_scope");
        assert_eq!(p["scope"], "a b");
        assert_eq!(p["resource_metadata"], r#"http://x/y?q="1""#);
        let p = bearer_params(r#"Basic realm="x", Bearer realm=api, scope=mcp"#).unwrap();
        assert_eq!(p["realm"], "api");
        assert_eq!(p["scope"], "mcp");
        assert!(bearer_params("Basic realm=x").is_none());
        assert!(bearer_params("Bearer").unwrap().is_empty());
    }

    #[test]
    fn well_known_urls_in_order() {
        let server = Url::parse("https://mcp.example/api/mcp").unwrap();
        assert_eq!(
            resource_metadata_urls(&server),
            [
                "https://mcp.example/.well-known/oauth-protected-resource/api/mcp",
                "https://mcp.example/.well-known/oauth-protected-resource",
            ]
        );
        let issuer = Url::parse("https://as.example/tenant1").unwrap();
        assert_eq!(
            server_metadata_urls(&issuer),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ]
        );
        let issuer = Url::parse("https://as.example").unwrap();
        assert_eq!(server_metadata_urls(&issuer).len(), 2);
    }

    #[test]
    fn endpoints_must_be_https_or_loopback() {
        assert!(secure("https://as.example/token"));
        assert!(secure("http://localhost:3000/token"));
        assert!(secure("http://127.0.0.1:3000/token"));
        assert!(secure("http://[::1]:3000/token"));
        assert!(!secure("http://as.example/token"));
        assert!(!secure("ftp://as.example/token"));
        assert!(!secure("not a url"));
    }

    #[test]
    fn resource_coverage() {
        let server = Url::parse("http://localhost:3000/mcp").unwrap();
        assert!(resource_covers("http://localhost:3000/mcp", &server));
        assert!(resource_covers("http://localhost:3000", &server));
        assert!(resource_covers("http://localhost:3000/", &server));
        assert!(!resource_covers("http://localhost:3000/mcpx", &server));
        assert!(!resource_covers("https://evil.example.com/mcp", &server));
        assert!(!resource_covers("http://localhost:3001/mcp", &server));
    }
}

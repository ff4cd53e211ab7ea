//! Authorization for the Streamable HTTP transport: the MCP server as an OAuth 2.1 resource
//! server (MCP authorization, 2025-11-25 and 2026-07-28).
//!
//! Configure it with [`Auth`] and [`HttpConfig::auth`](super::HttpConfig::auth). The
//! transport then:
//!
//! - serves the RFC 9728 protected resource metadata at
//!   `/.well-known/oauth-protected-resource` and at the path-suffixed form for the endpoint
//!   (`/.well-known/oauth-protected-resource/mcp`), open to any origin (CORS `*`);
//! - takes an access token only from the `Authorization: Bearer` header (never the query
//!   string; `Authorization: DPoP` with a proof under [`Auth::dpop`], feature `http-dpop`),
//!   hands it to your [`TokenValidator`], and checks that the claims name the configured
//!   resource as audience (RFC 8707) and have not expired;
//! - answers a missing, invalid, expired or foreign token with `401` and
//!   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` (plus `error="invalid_token"`
//!   when a token was presented), and a token without the required scopes, or without the
//!   scopes of the tool being called, with `403` and `error="insufficient_scope"`;
//! - hands the validated [`AccessClaims`] to tools: `ctx.get::<AccessClaims>()`;
//! - binds a legacy session (`Mcp-Session-Id`) to the subject that opened it.
//!
//! The token itself is never forwarded, logged or shown: [`BearerToken`]'s `Debug` is
//! redacted, and only the claims reach tools (no token passthrough).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::auth_wire::{auth_body, quotable, same_resource, split_resource};
pub use super::claims::{AccessClaims, BearerToken};
use crate::tool::BoxFuture;

/// The well-known path of RFC 9728 protected resource metadata.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Why a token was refused. The texts go to logs at `debug` and never to the client (which
/// gets a fixed description per kind): they must not contain the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// Unknown, malformed, revoked, or with a bad signature: `401 invalid_token`.
    #[error("invalid access token: {0}")]
    InvalidToken(String),
    /// Past its expiry: `401 invalid_token`.
    #[error("the access token has expired")]
    Expired,
    /// Issued for another resource: `401 invalid_token`.
    #[error("the access token was issued for another resource")]
    WrongAudience,
    /// The validator could not decide (its introspection endpoint or key set is down):
    /// `503`, so the client retries rather than re-authorizing.
    #[error("the access token could not be validated: {0}")]
    Unavailable(String),
}

/// Renamed [`TokenError`] (the client's `client::auth::AuthError` kept the name).
#[deprecated(since = "0.1.0", note = "renamed `TokenError`")]
#[doc(hidden)]
pub type AuthError = TokenError;

/// The future of one validation.
pub type ValidationFuture = BoxFuture<'static, Result<AccessClaims, TokenError>>;

/// Turns a bearer token into claims: checks its signature (a JWT library, your own HMAC) or
/// asks the authorization server (RFC 7662 introspection). The transport then checks the
/// audience, the expiry and the scopes itself.
///
/// Implemented for every `Fn(BearerToken) -> impl Future<Output = Result<AccessClaims,
/// TokenError>>`.
pub trait TokenValidator: Send + Sync + 'static {
    /// Validates `token`.
    fn validate(&self, token: BearerToken) -> ValidationFuture;
}

impl<F, Fut> TokenValidator for F
where
    F: Fn(BearerToken) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AccessClaims, TokenError>> + Send + 'static,
{
    fn validate(&self, token: BearerToken) -> ValidationFuture {
        Box::pin(self(token))
    }
}

/// A resource identifier that is not an absolute `http(s)` URL without a fragment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the resource {0:?} is not an absolute http(s) URL without a fragment")]
pub struct InvalidResource(pub String);

/// Authorization settings of the HTTP transport: this server as an OAuth 2.1 resource
/// server. See the [module docs](self).
///
/// ```
/// use mcp_registry::transport::http::HttpConfig;
/// use mcp_registry::transport::http::auth::{AccessClaims, Auth, TokenError, BearerToken};
///
/// let auth = Auth::new("https://mcp.example.com/mcp", |token: BearerToken| async move {
///     match token.secret() {
///         "let-me-in" => Ok(AccessClaims::new("alice")
///             .with_audience(["https://mcp.example.com/mcp"])
///             .with_scopes(["mcp:tools"])),
///         _ => Err(TokenError::InvalidToken("unknown token".into())),
///     }
/// })
/// .unwrap()
/// .authorization_servers(["https://auth.example.com"])
/// .scopes_supported(["mcp:tools", "files:write"])
/// .required_scopes(["mcp:tools"])
/// .tool_scopes("wipe", ["files:write"]);
/// let config = HttpConfig::default().auth(auth);
/// ```
#[derive(Clone)]
pub struct Auth {
    resource: String,
    /// `scheme://authority`, lowercased.
    origin: String,
    /// The resource's path (and query), `""` at the root.
    resource_path: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    required_scopes: Vec<String>,
    tool_scopes: HashMap<String, Vec<String>>,
    resource_name: Option<String>,
    validator: Arc<dyn TokenValidator>,
    #[cfg(feature = "http-dpop")]
    dpop: Option<super::dpop::Dpop>,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auth")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("required_scopes", &self.required_scopes)
            .field("tool_scopes", &self.tool_scopes)
            .finish_non_exhaustive()
    }
}

impl Auth {
    /// Protects the endpoint whose canonical URL is `resource` (RFC 8707: what clients pass
    /// as `resource` and tokens carry as audience, e.g. `https://mcp.example.com/mcp`), with
    /// `validator` reading tokens. Fails when `resource` is not an absolute `http(s)` URL.
    pub fn new(
        resource: impl Into<String>,
        validator: impl TokenValidator,
    ) -> Result<Self, InvalidResource> {
        let resource = resource.into();
        let (origin, resource_path) =
            split_resource(&resource).ok_or_else(|| InvalidResource(resource.clone()))?;
        Ok(Auth {
            origin,
            resource_path,
            resource,
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
            tool_scopes: HashMap::new(),
            resource_name: None,
            validator: Arc::new(validator),
            #[cfg(feature = "http-dpop")]
            dpop: None,
        })
    }

    /// The issuer URLs of the authorization servers that issue tokens for this resource
    /// (`authorization_servers` of the metadata; MCP needs at least one).
    pub fn authorization_servers<S: Into<String>>(
        mut self,
        issuers: impl IntoIterator<Item = S>,
    ) -> Self {
        self.authorization_servers = issuers.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes advertised in the metadata (`scopes_supported`): what a client asks for
    /// when a challenge names none.
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes every request needs (default none: any valid token for this resource).
    /// Named in the `scope` of every challenge.
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes a `tools/call` of `tool` needs besides the required ones (step-up): a token
    /// without them gets `403 insufficient_scope` naming every scope the call needs.
    pub fn tool_scopes<S: Into<String>>(
        mut self,
        tool: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.tool_scopes
            .insert(tool.into(), scopes.into_iter().map(Into::into).collect());
        self
    }

    /// A human-readable name for the metadata (`resource_name`).
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// Takes DPoP-bound tokens (RFC 9449; feature `http-dpop`): see
    /// [`dpop`](super::dpop). The metadata then lists `dpop_signing_alg_values_supported`.
    #[cfg(feature = "http-dpop")]
    pub fn dpop(mut self, dpop: super::dpop::Dpop) -> Self {
        self.dpop = Some(dpop);
        self
    }

    /// The DPoP settings, when DPoP-bound tokens are taken.
    #[cfg(feature = "http-dpop")]
    pub(crate) fn dpop_settings(&self) -> Option<&super::dpop::Dpop> {
        self.dpop.as_ref()
    }

    /// The protected resource's identifier.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The URL of the metadata document, as named in challenges (`resource_metadata`): the
    /// well-known path inserted between the resource's host and path (RFC 9728 §3.1).
    pub fn metadata_url(&self) -> String {
        format!("{}{METADATA_PATH}{}", self.origin, self.resource_path)
    }

    /// The RFC 9728 protected resource metadata document.
    pub fn metadata(&self) -> Value {
        let mut doc = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes_supported.is_empty() {
            doc["scopes_supported"] = json!(self.scopes_supported);
        }
        if let Some(name) = &self.resource_name {
            doc["resource_name"] = json!(name);
        }
        #[cfg(feature = "http-dpop")]
        if let Some(dpop) = &self.dpop {
            doc["dpop_signing_alg_values_supported"] = json!(dpop.algorithms());
            doc["dpop_bound_access_tokens_required"] = json!(dpop.is_required());
        }
        doc
    }

    /// The paths the metadata is served at on a router whose endpoint is `endpoint_path`:
    /// the root well-known path, the one suffixed with the endpoint's path, and the one
    /// suffixed with the resource URL's path when a proxy maps it elsewhere.
    pub(crate) fn metadata_paths(&self, endpoint_path: &str) -> Vec<String> {
        let resource_path = self.resource_path.split('?').next().unwrap_or_default();
        let mut paths = vec![METADATA_PATH.to_owned()];
        for suffix in [endpoint_path, resource_path] {
            let suffix = suffix.trim_end_matches('/');
            let path = format!("{METADATA_PATH}{suffix}");
            if !suffix.is_empty() && suffix.starts_with('/') && !paths.contains(&path) {
                paths.push(path);
            }
        }
        paths
    }

    /// The claims of the request's access token, or why it is refused; `method` is the
    /// request's (a DPoP proof names it).
    pub(crate) async fn authenticate(
        &self,
        headers: &HeaderMap,
        method: &str,
        path: &str,
    ) -> Result<AccessClaims, Refusal> {
        let (token, scheme) = match bearer_token(headers, self.takes_dpop()) {
            Presented::None => return Err(Refusal::NoToken),
            Presented::Malformed => {
                tracing::debug!("malformed Authorization header refused");
                return Err(Refusal::InvalidToken(
                    "The Authorization header is malformed",
                ));
            }
            Presented::Token(token, scheme) => (token, scheme),
        };
        let claims = match self.validator.validate(token.clone()).await {
            Ok(claims) => claims,
            Err(TokenError::Unavailable(reason)) => {
                tracing::warn!(%reason, "access token validation unavailable");
                return Err(Refusal::Unavailable);
            }
            Err(e) => {
                tracing::debug!(error = %e, "access token refused");
                return Err(Refusal::InvalidToken(describe(&e)));
            }
        };
        if !claims
            .audience
            .iter()
            .any(|a| same_resource(a, &self.resource))
        {
            tracing::debug!(subject = %claims.subject, "access token refused: issued for another resource");
            return Err(Refusal::InvalidToken(describe(&TokenError::WrongAudience)));
        }
        if claims.expires_at.is_some_and(|at| at <= SystemTime::now()) {
            tracing::debug!(subject = %claims.subject, "access token refused: expired");
            return Err(Refusal::InvalidToken(describe(&TokenError::Expired)));
        }
        self.check_binding(headers, (method, path), &token, scheme, &claims)?;
        self.check_scopes(&claims, &[])?;
        Ok(claims)
    }

    fn takes_dpop(&self) -> bool {
        #[cfg(feature = "http-dpop")]
        return self.dpop.is_some();
        #[cfg(not(feature = "http-dpop"))]
        false
    }

    /// A DPoP-bound token needs the DPoP scheme and a valid proof by its key; a bearer token
    /// is refused where only bound ones are taken.
    #[cfg_attr(not(feature = "http-dpop"), allow(unused_variables))]
    fn check_binding(
        &self,
        headers: &HeaderMap,
        (method, path): (&str, &str),
        token: &BearerToken,
        scheme: Scheme,
        claims: &AccessClaims,
    ) -> Result<(), Refusal> {
        #[cfg(feature = "http-dpop")]
        if let Some(dpop) = &self.dpop {
            return match scheme {
                Scheme::Dpop => dpop
                    .verify(
                        headers,
                        method,
                        &self.resource,
                        path,
                        token.secret(),
                        claims.dpop_jkt.as_deref(),
                    )
                    .map_err(Refusal::Dpop),
                Scheme::Bearer if dpop.is_required() => {
                    Err(Refusal::Dpop(super::dpop::DpopRefusal::Required))
                }
                Scheme::Bearer if claims.dpop_jkt.is_some() => Err(Refusal::Dpop(
                    super::dpop::DpopRefusal::InvalidProof(BOUND_AS_BEARER),
                )),
                Scheme::Bearer => Ok(()),
            };
        }
        if claims.dpop_jkt.is_some() {
            return Err(Refusal::InvalidToken(BOUND_AS_BEARER));
        }
        Ok(())
    }

    /// `Err(403 insufficient_scope)` when `claims` lack a scope the request needs: the
    /// required ones and those of every tool in `tools`, each named by its own server and
    /// name (resolved: a scope set for `wipe` holds for `mcp__fs__wipe` too, and one set for
    /// `mcp__fs__wipe` for `wipe` of `fs`). The challenge names all of them at once, so one
    /// re-authorization is enough.
    pub(crate) fn check_scopes(
        &self,
        claims: &AccessClaims,
        tools: &[(Arc<str>, Arc<str>)],
    ) -> Result<(), Refusal> {
        let mut needed: Vec<&str> = self.required_scopes.iter().map(String::as_str).collect();
        for (server, tool) in tools {
            let qualified = crate::registry::qualified_name(server, tool);
            let scopes = [
                self.tool_scopes.get(&**tool),
                self.tool_scopes.get(&qualified),
            ];
            for scope in scopes.into_iter().flatten().flatten() {
                if !needed.contains(&scope.as_str()) {
                    needed.push(scope);
                }
            }
        }
        if needed.iter().all(|s| claims.has_scope(s)) {
            return Ok(());
        }
        tracing::debug!(subject = %claims.subject, needed = ?needed, "insufficient scope");
        Err(Refusal::InsufficientScope(needed.join(" ")))
    }

    /// The response to a refused request: `401`, `403` or `503`, with the challenge.
    pub(crate) fn refuse(&self, refusal: Refusal) -> Response {
        // A missing token is the usual first step of a client's authorization: not news.
        match &refusal {
            Refusal::NoToken => tracing::debug!("MCP over HTTP: refused: no bearer token (401)"),
            Refusal::InvalidToken(why) => {
                tracing::info!("MCP over HTTP: refused: invalid bearer token (401): {why}")
            }
            Refusal::InsufficientScope(scope) => tracing::info!(
                "MCP over HTTP: refused: the token lacks scopes {scope:?} (403); grant them, or change the scopes Auth requires"
            ),
            Refusal::Unavailable => tracing::warn!(
                "MCP over HTTP: refused: the token validator could not decide (503); check that it can reach its issuer"
            ),
            #[cfg(feature = "http-dpop")]
            Refusal::Dpop(refusal) => {
                tracing::info!("MCP over HTTP: refused: DPoP (401): {:?}", refusal.error())
            }
        }
        match refusal {
            #[cfg(feature = "http-dpop")]
            Refusal::Dpop(refusal) => self.refuse_dpop(&refusal),
            Refusal::NoToken => self.unauthorized(None),
            Refusal::InvalidToken(description) => self.unauthorized(Some(description)),
            Refusal::InsufficientScope(scope) => {
                let description = "The access token lacks scopes this request needs";
                let challenge = format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\", error_description=\"{description}\"",
                    quotable(&scope),
                    quotable(&self.metadata_url()),
                );
                auth_body(
                    StatusCode::FORBIDDEN,
                    Some(challenge),
                    "insufficient_scope",
                    description,
                )
            }
            Refusal::Unavailable => auth_body(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                "temporarily_unavailable",
                "The access token could not be validated now; retry later",
            ),
        }
    }

    /// `401` with the DPoP challenge (and the nonce to use, when nonces are on).
    #[cfg(feature = "http-dpop")]
    fn refuse_dpop(&self, refusal: &super::dpop::DpopRefusal) -> Response {
        let Some(dpop) = &self.dpop else {
            return self.unauthorized(None);
        };
        let challenge = dpop.challenge(refusal, &quotable(&self.metadata_url()));
        let (error, description) = refusal.error();
        let mut response = auth_body(
            StatusCode::UNAUTHORIZED,
            Some(challenge),
            error.unwrap_or("invalid_token"),
            description,
        );
        if let Some(nonce) = dpop
            .current_nonce()
            .ok()
            .flatten()
            .and_then(|n| HeaderValue::from_str(&n).ok())
        {
            response
                .headers_mut()
                .insert(super::dpop::DPOP_NONCE, nonce);
        }
        response
    }

    /// `401` with the challenge: `error="invalid_token"` when a token was presented
    /// (`Some(description)`), none when the request had no credentials (RFC 6750 §3.1).
    fn unauthorized(&self, invalid: Option<&str>) -> Response {
        let mut challenge = String::from("Bearer ");
        if let Some(description) = invalid {
            challenge.push_str(&format!(
                "error=\"invalid_token\", error_description=\"{}\", ",
                quotable(description)
            ));
        }
        challenge.push_str(&format!(
            "resource_metadata=\"{}\"",
            quotable(&self.metadata_url())
        ));
        if !self.required_scopes.is_empty() {
            challenge.push_str(&format!(
                ", scope=\"{}\"",
                quotable(&self.required_scopes.join(" "))
            ));
        }
        match invalid {
            Some(description) => auth_body(
                StatusCode::UNAUTHORIZED,
                Some(challenge),
                "invalid_token",
                description,
            ),
            None => auth_body(
                StatusCode::UNAUTHORIZED,
                Some(challenge),
                "invalid_token",
                "This MCP endpoint needs an access token in the Authorization: Bearer header",
            ),
        }
    }
}

/// What a bound token presented as a bearer token is told.
const BOUND_AS_BEARER: &str =
    "The access token is DPoP-bound: present it as Authorization: DPoP with a proof";

/// How the token was presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Bearer,
    Dpop,
}

/// Why a request is refused, before it becomes a response.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// A DPoP proof refused, a nonce asked for, or a bearer token where DPoP is required.
    #[cfg(feature = "http-dpop")]
    Dpop(super::dpop::DpopRefusal),
    /// No bearer token: `401` without an error code.
    NoToken,
    /// A token that is malformed, invalid, expired or foreign: `401 invalid_token`.
    InvalidToken(&'static str),
    /// A token without the scopes the request needs (space-separated): `403`.
    InsufficientScope(String),
    /// The validator could not decide: `503`.
    Unavailable,
}

/// The description a client gets for a refused token: fixed per kind, never the validator's
/// text (which may say more than a client should learn).
fn describe(error: &TokenError) -> &'static str {
    match error {
        TokenError::Expired => "The access token expired",
        TokenError::WrongAudience => "The access token was not issued for this resource",
        _ => "The access token is invalid",
    }
}

enum Presented {
    None,
    Malformed,
    Token(BearerToken, Scheme),
}

/// The request's access token: only from the `Authorization` header, never the query string
/// (MCP forbids tokens in URIs). `Bearer`, or `DPoP` when `dpop` (RFC 9449 §7.1); another
/// scheme (`Basic`) counts as no token.
fn bearer_token(headers: &HeaderMap, dpop: bool) -> Presented {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Presented::None;
    };
    if values.next().is_some() {
        return Presented::Malformed;
    }
    let Ok(value) = value.to_str() else {
        return Presented::Malformed;
    };
    let value = value.trim();
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    let scheme = if scheme.eq_ignore_ascii_case("bearer") {
        Scheme::Bearer
    } else if dpop && scheme.eq_ignore_ascii_case("dpop") {
        Scheme::Dpop
    } else {
        return Presented::None;
    };
    let token = token.trim();
    // RFC 6750 b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    let body = token.trim_end_matches('=');
    let valid = !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b));
    if valid {
        Presented::Token(BearerToken(token.to_owned()), scheme)
    } else {
        Presented::Malformed
    }
}

/// The metadata document response, readable from any origin (browser-based clients discover
/// it cross-origin; it holds nothing private).
pub(crate) fn metadata_response(auth: &Auth) -> Response {
    let mut response = (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        auth.metadata().to_string(),
    )
        .into_response();
    add_cors(response.headers_mut());
    response
}

/// The CORS preflight answer for the metadata document.
pub(crate) fn metadata_preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    add_cors(response.headers_mut());
    response
}

fn add_cors(headers: &mut HeaderMap) {
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("*"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_url_inserts_the_well_known_path() {
        let auth = |r: &str| Auth::new(r, |_t: BearerToken| async { Err(TokenError::Expired) });
        assert_eq!(
            auth("https://MCP.example.com/public/mcp")
                .unwrap()
                .metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp"
        );
        assert_eq!(
            auth("https://mcp.example.com/").unwrap().metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        assert!(auth("mcp.example.com/mcp").is_err());
        assert!(auth("ftp://mcp.example.com/mcp").is_err());
        assert!(auth("https://mcp.example.com/mcp#x").is_err());
    }

    #[test]
    fn metadata_is_routed_at_the_root_the_endpoint_and_the_resource_path() {
        let validator = |_t: BearerToken| async { Err(TokenError::Expired) };
        let behind_proxy = Auth::new("https://example.com/public/mcp", validator).unwrap();
        assert_eq!(
            behind_proxy.metadata_paths("/mcp"),
            [
                METADATA_PATH.to_owned(),
                format!("{METADATA_PATH}/mcp"),
                format!("{METADATA_PATH}/public/mcp"),
            ]
        );
        let direct = Auth::new("https://example.com/mcp", validator).unwrap();
        assert_eq!(
            direct.metadata_paths("/mcp"),
            [METADATA_PATH.to_owned(), format!("{METADATA_PATH}/mcp")]
        );
        let root = Auth::new("https://example.com", validator).unwrap();
        assert_eq!(root.metadata_paths("/"), [METADATA_PATH.to_owned()]);
    }

    #[test]
    fn bearer_tokens_come_only_from_the_authorization_header() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::AUTHORIZATION, HeaderValue::from_str(v).unwrap());
            bearer_token(&h, false)
        };
        assert!(
            matches!(with("Bearer abc.DEF-_~+/=="), Presented::Token(t, Scheme::Bearer) if t.secret() == "abc.DEF-_~+/==")
        );
        assert!(matches!(with("bearer abc"), Presented::Token(..)));
        assert!(matches!(with("DPoP abc"), Presented::None));
        assert!(matches!(with("Basic abc"), Presented::None));
        assert!(matches!(with("Bearer "), Presented::Malformed));
        assert!(matches!(with("Bearer a b"), Presented::Malformed));
        assert!(matches!(
            bearer_token(&HeaderMap::new(), false),
            Presented::None
        ));
    }

    #[test]
    fn token_debug_is_redacted() {
        let token = BearerToken::new("s3cr3t-token");
        assert_eq!(format!("{token:?}"), "BearerToken(<redacted>)");
    }
}

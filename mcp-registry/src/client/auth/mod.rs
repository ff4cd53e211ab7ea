//! OAuth 2.1 authorization for the Streamable HTTP client (feature `client-auth`), as the MCP
//! authorization specification has it (2025-11-25 and 2026-07-28).
//!
//! Configure an [`OAuth`] on [`ClientBuilder::oauth`](super::ClientBuilder::oauth). When the
//! MCP endpoint answers 401, the transport:
//!
//! 1. reads the protected resource metadata (RFC 9728): the `resource_metadata` of the
//!    `WWW-Authenticate` challenge, else `/.well-known/oauth-protected-resource{path}`, then
//!    `/.well-known/oauth-protected-resource`; its `resource` must cover the MCP URL;
//! 2. reads the first authorization server's metadata (RFC 8414, then OpenID Connect
//!    discovery, path-inserted then path-appended), whose `issuer` must be the one the URL
//!    was built from, whose endpoints must be HTTPS (or loopback), and which must offer PKCE
//!    S256;
//! 3. gets a client ID: pre-registered [`ClientCredentials`], else one registered earlier with
//!    that issuer, else a client ID metadata document URL when the server supports them, else
//!    dynamic client registration (RFC 7591); credentials are never carried to another issuer;
//! 4. refreshes the token when it can, else runs the authorization code flow with PKCE S256
//!    and the `resource` indicator (RFC 8707): the [`AuthorizationHandler`] takes the user to
//!    the authorization URL and hands back the redirect, whose `iss` is checked (RFC 9207:
//!    compared as a plain string; required when the server advertises it) and `state`
//!    matched before the code is exchanged;
//! 5. retries the request with the new token.
//!
//! Scopes come from the challenge's `scope`, else the resource's `scopes_supported`, else none
//! are asked for; `offline_access` is added when the authorization server lists it. A 403
//! `insufficient_scope` re-authorizes with the union of the scopes asked for so far and the
//! challenged ones. Authorizations that do not lead to an accepted request are counted:
//! after [`OAuth::max_authorizations`] in a row the request fails with
//! [`AuthError::RetryLimit`].
//!
//! Tokens live in a [`TokenStore`] ([`MemoryTokenStore`] unless set), keyed by the MCP URL,
//! with the client they were issued to; one about to expire is refreshed before it is sent.
//! Secrets (tokens, client secrets, PKCE verifiers) never appear in `Debug` output or logs.

mod discovery;
mod dpop;
mod flow;
mod grant;
mod jose;
mod token;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use crate::sync::MutexExt;
use crate::tool::BoxFuture;

pub(crate) use flow::{Authorizer, Challenge};
pub use grant::{EnterpriseIdp, TokenSource};
pub use jose::SigningKey;

use grant::Grant;

/// Why authorization failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No protected resource metadata at any of the URLs tried.
    #[error("no protected resource metadata found (tried {tried:?})")]
    ResourceMetadataNotFound {
        /// The URLs tried, in order.
        tried: Vec<String>,
    },
    /// The protected resource metadata names a resource the MCP URL is not part of.
    #[error("the protected resource metadata is for {found:?}, not the MCP server {expected:?}")]
    ResourceMismatch {
        /// The MCP URL.
        expected: String,
        /// The metadata's `resource`.
        found: String,
    },
    /// The protected resource metadata names no authorization server.
    #[error("the protected resource metadata names no authorization server")]
    NoAuthorizationServer,
    /// No authorization server metadata at any of the URLs tried.
    #[error("no authorization server metadata for {issuer:?} (tried {tried:?})")]
    ServerMetadataNotFound {
        /// The authorization server's issuer identifier.
        issuer: String,
        /// The URLs tried, in order.
        tried: Vec<String>,
    },
    /// The authorization server metadata's `issuer` is not the issuer it was fetched for.
    #[error("authorization server metadata for {expected:?} names issuer {found:?}")]
    IssuerMismatch {
        /// The issuer the well-known URL was built from.
        expected: String,
        /// The metadata's `issuer`.
        found: String,
    },
    /// An authorization server endpoint is neither HTTPS nor on this machine (loopback).
    #[error("the authorization server endpoint {0:?} is not HTTPS")]
    InsecureEndpoint(String),
    /// The authorization server does not advertise PKCE with S256.
    #[error("the authorization server {issuer:?} does not support PKCE S256")]
    PkceUnsupported {
        /// The issuer.
        issuer: String,
    },
    /// No client ID to use: nothing pre-registered, no client ID metadata document, no
    /// registration endpoint.
    #[error("no way to get a client ID from {issuer:?} (no credentials, CIMD or registration)")]
    RegistrationUnavailable {
        /// The issuer.
        issuer: String,
    },
    /// Dynamic client registration failed.
    #[error("client registration failed: {0}")]
    RegistrationFailed(String),
    /// The authorization step failed (the handler, or an `error` in the redirect).
    #[error("authorization failed: {0}")]
    Authorization(String),
    /// The redirect's `state` is not the one sent.
    #[error("the authorization response's state does not match the request")]
    StateMismatch,
    /// The redirect's `iss` is not the authorization server's issuer (RFC 9207).
    #[error("the authorization response came from issuer {found:?}, not {expected:?}")]
    IssMismatch {
        /// The recorded issuer.
        expected: String,
        /// The `iss` received.
        found: String,
    },
    /// The server advertises `iss` in authorization responses but the redirect has none.
    #[error("the authorization response lacks the iss parameter {issuer:?} advertises")]
    IssMissing {
        /// The recorded issuer.
        issuer: String,
    },
    /// The redirect carries no authorization code.
    #[error("the authorization response carries no code")]
    MissingCode,
    /// The token endpoint refused the code (or could not be reached).
    #[error("token exchange failed: {0}")]
    TokenExchange(String),
    /// The token endpoint refused the refresh token.
    #[error("token refresh failed: {0}")]
    Refresh(String),
    /// Authorizations kept being refused (401, or 403 `insufficient_scope`).
    #[error("gave up after {attempts} authorizations the server kept refusing")]
    RetryLimit {
        /// How many authorizations were made.
        attempts: usize,
    },
    /// A metadata or registration request could not be made.
    #[error("HTTP: {0}")]
    Http(String),
    /// A signing key (`private_key_jwt`, DPoP) could not be read or used.
    #[error("signing key: {0}")]
    Key(String),
    /// A workload or ID token could not be read from its [`TokenSource`].
    #[error("token source: {0}")]
    TokenSource(String),
    /// The enterprise IdP refused the token exchange (or answered with no ID-JAG).
    #[error("enterprise IdP token exchange failed: {0}")]
    IdentityProvider(String),
}

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenEndpointAuthMethod {
    /// HTTP Basic with the client ID and secret.
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the form body.
    ClientSecretPost,
    /// A public client: `client_id` in the body, no secret.
    None,
    /// A JWT signed with the client's key (RFC 7523 §2.2): see
    /// [`ClientCredentials::private_key_jwt`].
    PrivateKeyJwt,
}

impl TokenEndpointAuthMethod {
    /// The registered name (`client_secret_basic`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TokenEndpointAuthMethod::ClientSecretBasic => "client_secret_basic",
            TokenEndpointAuthMethod::ClientSecretPost => "client_secret_post",
            TokenEndpointAuthMethod::None => "none",
            TokenEndpointAuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// The method a registered name stands for.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "client_secret_basic" => Some(TokenEndpointAuthMethod::ClientSecretBasic),
            "client_secret_post" => Some(TokenEndpointAuthMethod::ClientSecretPost),
            "none" => Some(TokenEndpointAuthMethod::None),
            "private_key_jwt" => Some(TokenEndpointAuthMethod::PrivateKeyJwt),
            _ => None,
        }
    }
}

/// A client ID, with its secret or signing key when confidential: pre-registered, or what
/// registration returned. `Debug` leaves the secret out.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) signing_key: Option<SigningKey>,
    pub(crate) auth_method: Option<TokenEndpointAuthMethod>,
}

impl ClientCredentials {
    /// A public client's ID.
    pub fn new(client_id: impl Into<String>) -> Self {
        ClientCredentials {
            client_id: client_id.into(),
            client_secret: None,
            signing_key: None,
            auth_method: None,
        }
    }

    /// Authenticates with JWTs signed by `key` (`private_key_jwt`, RFC 7523 §2.2; the
    /// public key registered with the authorization server beforehand).
    pub fn private_key_jwt(mut self, key: SigningKey) -> Self {
        self.signing_key = Some(key);
        self.auth_method = Some(TokenEndpointAuthMethod::PrivateKeyJwt);
        self
    }

    /// The client secret (a confidential client).
    pub fn secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// The token endpoint authentication method (by default: the first of
    /// `client_secret_basic`, `client_secret_post` the server supports when there is a
    /// secret, else `none`).
    pub fn auth_method(mut self, method: TokenEndpointAuthMethod) -> Self {
        self.auth_method = Some(method);
        self
    }

    /// The client ID.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }
}

impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field(
                "signing_key",
                &self.signing_key.as_ref().map(|_| "[redacted]"),
            )
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

/// Tokens for one MCP server. `Debug` leaves the tokens out.
#[derive(Clone, PartialEq, Eq)]
pub struct Tokens {
    /// The access token, sent as `Authorization: Bearer` (or `DPoP` when bound).
    pub access_token: String,
    /// Whether the token is bound to the client's DPoP key (`token_type` `DPoP`): sent as
    /// `Authorization: DPoP` with a proof.
    pub dpop_bound: bool,
    /// The refresh token, when the server issued one.
    pub refresh_token: Option<String>,
    /// When the access token expires, when the server said.
    pub expires_at: Option<SystemTime>,
    /// The scopes granted (or asked for, when the server did not say).
    pub scopes: Vec<String>,
    /// The issuer of the authorization server that issued them.
    pub issuer: String,
    /// The client they were issued to (a refresh needs it; registration is per issuer).
    pub client: Option<ClientCredentials>,
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"[redacted]")
            .field("dpop_bound", &self.dpop_bound)
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "[redacted]"),
            )
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .field("issuer", &self.issuer)
            .field("client", &self.client)
            .finish()
    }
}

/// Where tokens are kept, keyed by the MCP server's URL. Calls are quick (no I/O waits a
/// request should notice); a store that persists should keep the tokens confidential.
pub trait TokenStore: Send + Sync + 'static {
    /// The tokens kept for `resource`.
    fn load(&self, resource: &str) -> Option<Tokens>;
    /// Keeps `tokens` for `resource`, replacing any.
    fn save(&self, resource: &str, tokens: Tokens);
    /// Forgets the tokens for `resource`.
    fn clear(&self, resource: &str);
}

/// The default [`TokenStore`]: in memory, gone with the process.
#[derive(Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<HashMap<String, Tokens>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl fmt::Debug for MemoryTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tokens = self.tokens.lock_unpoisoned();
        f.debug_struct("MemoryTokenStore")
            .field("resources", &tokens.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, resource: &str) -> Option<Tokens> {
        self.tokens.lock_unpoisoned().get(resource).cloned()
    }

    fn save(&self, resource: &str, tokens: Tokens) {
        self.tokens
            .lock_unpoisoned()
            .insert(resource.to_owned(), tokens);
    }

    fn clear(&self, resource: &str) {
        self.tokens.lock_unpoisoned().remove(resource);
    }
}

/// Takes the user through the authorization step: opens `authorization_url` (a desktop host
/// opens a browser and listens on its redirect URI) and returns the URL the authorization
/// server redirected to, with `code`, `state` and `iss` in its query.
pub trait AuthorizationHandler: Send + Sync + 'static {
    /// Authorizes at `authorization_url`; resolves to the redirect URL.
    fn authorize(&self, authorization_url: String) -> BoxFuture<'_, Result<String, AuthError>>;
}

impl<F, Fut> AuthorizationHandler for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<String, AuthError>> + Send + 'static,
{
    fn authorize(&self, authorization_url: String) -> BoxFuture<'_, Result<String, AuthError>> {
        Box::pin(self(authorization_url))
    }
}

/// An [`AuthorizationHandler`] for headless use (tests, conformance, servers that approve
/// without a user): GETs the authorization URL and follows redirects until one points at the
/// request's `redirect_uri`, which it returns without following.
#[derive(Debug, Clone)]
pub struct FollowRedirects {
    http: reqwest::Client,
}

impl Default for FollowRedirects {
    fn default() -> Self {
        Self::new()
    }
}

impl FollowRedirects {
    /// The handler.
    pub fn new() -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(30))
            .build()
            .unwrap_or_default();
        FollowRedirects { http }
    }
}

impl AuthorizationHandler for FollowRedirects {
    fn authorize(&self, authorization_url: String) -> BoxFuture<'_, Result<String, AuthError>> {
        Box::pin(async move {
            let mut url = reqwest::Url::parse(&authorization_url)
                .map_err(|e| AuthError::Authorization(format!("invalid URL: {e}")))?;
            let redirect_uri = url
                .query_pairs()
                .find(|(k, _)| k == "redirect_uri")
                .map(|(_, v)| v.into_owned())
                .ok_or_else(|| AuthError::Authorization("no redirect_uri".into()))?;
            for _ in 0..10 {
                let response = self
                    .http
                    .get(url.clone())
                    .send()
                    .await
                    .map_err(|e| AuthError::Authorization(format!("GET {url}: {e}")))?;
                let status = response.status();
                let location = response
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|v| v.to_str().ok());
                let Some(location) = location.filter(|_| status.is_redirection()) else {
                    return Err(AuthError::Authorization(format!(
                        "the authorization endpoint answered {status} without redirecting"
                    )));
                };
                let next = url
                    .join(location)
                    .map_err(|e| AuthError::Authorization(format!("invalid redirect: {e}")))?;
                if discovery::is_redirect_to(&next, &redirect_uri) {
                    return Ok(next.into());
                }
                url = next;
            }
            Err(AuthError::Authorization("too many redirects".into()))
        })
    }
}

/// OAuth 2.1 authorization for an HTTP client: how to register, authorize and keep tokens.
/// `Debug` leaves secrets out.
#[derive(Clone)]
pub struct OAuth {
    pub(crate) redirect_uri: String,
    pub(crate) handler: Arc<dyn AuthorizationHandler>,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) client_name: String,
    pub(crate) credentials: Option<ClientCredentials>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) max_authorizations: usize,
    pub(crate) grant: Grant,
    pub(crate) dpop_key: Option<SigningKey>,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("credentials", &self.credentials)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("max_authorizations", &self.max_authorizations)
            .field("grant", &self.grant.name())
            .field("dpop", &self.dpop_key.is_some())
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// Authorization redirecting to `redirect_uri` (registered with the authorization
    /// server; `http://localhost:<port>/...` or HTTPS), through `handler`.
    pub fn new(redirect_uri: impl Into<String>, handler: impl AuthorizationHandler) -> Self {
        OAuth {
            redirect_uri: redirect_uri.into(),
            handler: Arc::new(handler),
            store: Arc::new(MemoryTokenStore::new()),
            client_name: "mcp-registry".into(),
            credentials: None,
            client_metadata_url: None,
            max_authorizations: 3,
            grant: Grant::AuthorizationCode,
            dpop_key: None,
        }
    }

    /// Authorization without a user (no redirect, no handler).
    fn unattended(grant: Grant, credentials: ClientCredentials) -> Self {
        let no_user = |_url: String| async {
            Err(AuthError::Authorization(
                "this client authorizes without a user".into(),
            ))
        };
        OAuth {
            grant,
            credentials: Some(credentials),
            ..OAuth::new("", no_user)
        }
    }

    /// The client credentials grant (the OAuth client credentials extension): a
    /// pre-registered client authenticating with its secret (`client_secret_basic`, or
    /// `client_secret_post` when set or the only one offered) or its signing key
    /// ([`ClientCredentials::private_key_jwt`]). No user, no registration.
    ///
    /// ```
    /// use mcp_registry::client::auth::{ClientCredentials, OAuth, SigningKey};
    /// let with_secret = OAuth::client_credentials(ClientCredentials::new("svc").secret("s3cret"));
    /// let key = SigningKey::generate()?; // registered with the authorization server
    /// let with_key = OAuth::client_credentials(ClientCredentials::new("svc").private_key_jwt(key));
    /// # let _ = (with_secret, with_key);
    /// # Ok::<(), mcp_registry::client::auth::AuthError>(())
    /// ```
    pub fn client_credentials(credentials: ClientCredentials) -> Self {
        Self::unattended(Grant::ClientCredentials, credentials)
    }

    /// Workload identity federation: the JWT bearer grant (RFC 7523 §2.1) with the
    /// workload's own identity token (read from `token` for every grant) as the assertion,
    /// for the client `client` registered to trust that workload's issuer. A refused
    /// assertion fails the request: it is not retried, nor another grant tried.
    ///
    /// ```
    /// use mcp_registry::client::auth::{ClientCredentials, OAuth, TokenSource};
    /// let oauth = OAuth::workload_identity(
    ///     ClientCredentials::new("my-workload"),
    ///     TokenSource::file("/var/run/secrets/tokens/mcp-token"),
    /// );
    /// # let _ = oauth;
    /// ```
    pub fn workload_identity(client: ClientCredentials, token: TokenSource) -> Self {
        Self::unattended(Grant::WorkloadIdentity(token), client)
    }

    /// Enterprise-managed authorization (SEP-990): the user's ID token is exchanged at the
    /// enterprise IdP for an ID-JAG naming the MCP server's authorization server and
    /// resource, which `client` (registered with that authorization server) presents in
    /// the JWT bearer grant.
    ///
    /// ```
    /// use mcp_registry::client::auth::{ClientCredentials, EnterpriseIdp, OAuth, TokenSource};
    /// let idp = EnterpriseIdp::new(
    ///     "https://idp.example.com/oauth2/token",
    ///     ClientCredentials::new("mcp-client-at-idp"),
    ///     TokenSource::env("SSO_ID_TOKEN"),
    /// );
    /// let oauth = OAuth::enterprise_managed(ClientCredentials::new("mcp-client").secret("s3cret"), idp);
    /// # let _ = oauth;
    /// ```
    pub fn enterprise_managed(client: ClientCredentials, idp: EnterpriseIdp) -> Self {
        Self::unattended(Grant::Enterprise(Box::new(idp)), client)
    }

    /// Binds tokens to `key` with DPoP (RFC 9449) when the authorization server supports
    /// it (`dpop_signing_alg_values_supported` lists ES256): a proof on every token request
    /// and every request to the MCP server, the servers' nonces honoured. Keep the key with
    /// the tokens ([`SigningKey::to_pkcs8_der`]): a bound token is useless without it.
    pub fn dpop(mut self, key: SigningKey) -> Self {
        self.dpop_key = Some(key);
        self
    }

    /// The `client_name` registered (dynamic registration).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// Pre-registered credentials, used with every authorization server (no registration).
    pub fn credentials(mut self, credentials: ClientCredentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// The HTTPS URL of this client's metadata document, used as its client ID with
    /// authorization servers that support client ID metadata documents.
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Where tokens are kept (in memory unless set).
    pub fn token_store(mut self, store: impl TokenStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// How many authorizations in a row may be refused before a request fails (3 unless
    /// set; at least 1).
    pub fn max_authorizations(mut self, max: usize) -> Self {
        self.max_authorizations = max.max(1);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_stay_out_of_debug() {
        let credentials = ClientCredentials::new("id-1").secret("s3cret-client");
        let tokens = Tokens {
            access_token: "s3cret-access".into(),
            dpop_bound: false,
            refresh_token: Some("s3cret-refresh".into()),
            expires_at: None,
            scopes: vec!["mcp".into()],
            issuer: "https://as.example".into(),
            client: Some(ClientCredentials::new("id-2").secret("s3cret-again")),
        };
        let store = MemoryTokenStore::new();
        store.save("https://mcp.example/mcp", tokens.clone());
        let oauth = OAuth::new("http://localhost:1/cb", FollowRedirects::new())
            .credentials(credentials.clone())
            .token_store(store);
        for shown in [
            format!("{credentials:?}"),
            format!("{tokens:?}"),
            format!("{oauth:?}"),
        ] {
            assert!(!shown.contains("s3cret"), "{shown}");
            assert!(shown.len() > 10);
        }
        assert!(format!("{credentials:?}").contains("id-1"));
    }
}

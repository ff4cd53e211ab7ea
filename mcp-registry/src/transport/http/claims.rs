//! What a request's `Authorization` header carries ([`BearerToken`]) and what a validated token
//! says ([`AccessClaims`]), re-exported from [`auth`](super::auth).

use std::fmt;
use std::time::SystemTime;

use serde_json::{Map, Value};

/// An access token as presented in `Authorization: Bearer`. Its `Debug` never shows it; read
/// it with [`secret`](Self::secret) only to validate it.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(pub(super) String);

impl BearerToken {
    /// Wraps a token (for testing a validator).
    pub fn new(token: impl Into<String>) -> Self {
        BearerToken(token.into())
    }

    /// The token's text. Never log it, put it in an error, or send it to another service.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(<redacted>)")
    }
}

/// What a validated access token says: who, for which resource, with which scopes, until
/// when. A tool reads them with `ctx.get::<AccessClaims>()`.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use mcp_registry::transport::http::auth::AccessClaims;
/// let claims = AccessClaims::new("alice")
///     .with_audience(["https://mcp.example.com/mcp"])
///     .with_scopes(["files:read"])
///     .with_expiry(SystemTime::now() + Duration::from_secs(300));
/// assert!(claims.has_scope("files:read"));
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct AccessClaims {
    /// The resource owner (`sub`), or the client for a client-credentials token.
    pub subject: String,
    /// The client the token was issued to (`client_id`), when known.
    pub client_id: Option<String>,
    /// The granted scopes.
    pub scopes: Vec<String>,
    /// The resources the token was issued for (`aud`, or the RFC 8707 `resource`): it must
    /// include the configured resource.
    pub audience: Vec<String>,
    /// When the token stops being valid (`exp`); `None` for a token that does not expire.
    pub expires_at: Option<SystemTime>,
    /// The thumbprint of the key the token is bound to (`cnf.jkt`, RFC 9449 §6): such a
    /// token is taken only as `Authorization: DPoP` with a proof by that key (feature
    /// `http-dpop`), never as a bearer token.
    pub dpop_jkt: Option<String>,
    /// Any other claims the validator wants tools to see.
    pub extra: Map<String, Value>,
}

impl AccessClaims {
    /// The [`Caller`](crate::Caller) these claims make: their subject, client, scopes and
    /// audience as a principal.
    pub fn caller(&self) -> crate::Caller {
        crate::Caller::principal_of(crate::Principal {
            subject: self.subject.clone(),
            client_id: self.client_id.clone(),
            scopes: self.scopes.clone(),
            audience: self.audience.clone(),
        })
    }

    /// Claims of `subject`, with no scopes, audience or expiry yet.
    pub fn new(subject: impl Into<String>) -> Self {
        AccessClaims {
            subject: subject.into(),
            ..AccessClaims::default()
        }
    }

    /// The client the token was issued to.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The granted scopes.
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The resources the token was issued for.
    pub fn with_audience<S: Into<String>>(mut self, audience: impl IntoIterator<Item = S>) -> Self {
        self.audience = audience.into_iter().map(Into::into).collect();
        self
    }

    /// When the token expires.
    pub fn with_expiry(mut self, at: SystemTime) -> Self {
        self.expires_at = Some(at);
        self
    }

    /// The thumbprint of the DPoP key the token is bound to (its `cnf.jkt`).
    pub fn with_dpop_jkt(mut self, jkt: impl Into<String>) -> Self {
        self.dpop_jkt = Some(jkt.into());
        self
    }

    /// One more claim for tools.
    pub fn with_claim(mut self, name: impl Into<String>, value: Value) -> Self {
        self.extra.insert(name.into(), value);
        self
    }

    /// Whether `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

//! The grants without a user at a browser: client credentials (the OAuth client credentials
//! extension, SEP-1046), the JWT bearer grant with a workload's token (workload identity
//! federation, RFC 7523 §2.1) and enterprise-managed authorization (SEP-990: an ID-JAG from
//! the enterprise IdP by token exchange, RFC 8693, then the JWT bearer grant).

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::tool::BoxFuture;

use super::discovery::{ResourceMetadata, ServerMetadata};
use super::dpop::Dpop;
use super::token::{ClientAuth, TokenRequest, TokenResponse};
use super::{AuthError, ClientCredentials, TokenEndpointAuthMethod};

/// `grant_type` of the JWT bearer grant (RFC 7523 §2.1).
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

type Callback = dyn Fn() -> BoxFuture<'static, Result<String, AuthError>> + Send + Sync;

#[derive(Clone)]
enum Source {
    File(PathBuf),
    Env(String),
    Callback(Arc<Callback>),
}

/// Where a token the client presents comes from (a workload's identity token, a user's ID
/// token at the enterprise IdP): read afresh for every grant, since platforms rotate them.
/// `Debug` shows where, never the token.
///
/// ```
/// use mcp_registry::client::auth::TokenSource;
/// let projected = TokenSource::file("/var/run/secrets/tokens/mcp");
/// let from_env = TokenSource::env("MCP_WORKLOAD_TOKEN");
/// let from_code = TokenSource::callback(|| async { Ok("eyJ...".to_string()) });
/// assert!(format!("{projected:?}").contains("/var/run/secrets"));
/// # let _ = (from_env, from_code);
/// ```
#[derive(Clone)]
pub struct TokenSource(Source);

impl TokenSource {
    /// The contents of a file (e.g. a Kubernetes projected service account token), trimmed.
    pub fn file(path: impl Into<PathBuf>) -> Self {
        TokenSource(Source::File(path.into()))
    }

    /// The value of an environment variable, trimmed.
    pub fn env(name: impl Into<String>) -> Self {
        TokenSource(Source::Env(name.into()))
    }

    /// What `f` resolves to (a cloud metadata service, a secret manager, a fixed token).
    pub fn callback<F, Fut>(f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, AuthError>> + Send + 'static,
    {
        TokenSource(Source::Callback(Arc::new(move || Box::pin(f()))))
    }

    /// Reads the token.
    pub async fn read(&self) -> Result<String, AuthError> {
        let token = match &self.0 {
            Source::File(path) => tokio::fs::read_to_string(path).await.map_err(|e| {
                AuthError::TokenSource(format!(
                    "reading {}: {e}; check the path and that this process may read it",
                    path.display()
                ))
            })?,
            Source::Env(name) => std::env::var(name).map_err(|e| {
                AuthError::TokenSource(format!("environment variable {name}: {e}; set it"))
            })?,
            Source::Callback(f) => f().await?,
        };
        let token = token.trim();
        if token.is_empty() {
            return Err(AuthError::TokenSource(format!("{self:?} is empty")));
        }
        Ok(token.to_owned())
    }
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Source::File(path) => write!(f, "TokenSource::file({})", path.display()),
            Source::Env(name) => write!(f, "TokenSource::env({name})"),
            Source::Callback(_) => f.write_str("TokenSource::callback"),
        }
    }
}

/// The enterprise identity provider of enterprise-managed authorization: where the user's
/// ID token is exchanged for an identity assertion authorization grant (ID-JAG).
#[derive(Clone)]
pub struct EnterpriseIdp {
    pub(crate) token_endpoint: String,
    pub(crate) client: ClientCredentials,
    pub(crate) id_token: TokenSource,
}

impl EnterpriseIdp {
    /// The IdP's token endpoint, this client's registration there, and where the user's ID
    /// token (from the enterprise single sign-on) comes from.
    pub fn new(
        token_endpoint: impl Into<String>,
        client: ClientCredentials,
        id_token: TokenSource,
    ) -> Self {
        EnterpriseIdp {
            token_endpoint: token_endpoint.into(),
            client,
            id_token,
        }
    }
}

impl fmt::Debug for EnterpriseIdp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterpriseIdp")
            .field("token_endpoint", &self.token_endpoint)
            .field("client", &self.client)
            .field("id_token", &self.id_token)
            .finish()
    }
}

/// How tokens are obtained.
#[derive(Clone, Debug)]
pub(crate) enum Grant {
    /// The authorization code flow with PKCE, through the user.
    AuthorizationCode,
    /// Client credentials (pre-registered, with a secret or a signing key).
    ClientCredentials,
    /// The JWT bearer grant with a workload's token as the assertion.
    WorkloadIdentity(TokenSource),
    /// Token exchange at the enterprise IdP, then the JWT bearer grant.
    Enterprise(Box<EnterpriseIdp>),
}

impl Grant {
    /// The grant's name in errors.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Grant::AuthorizationCode => "authorization_code",
            Grant::ClientCredentials => "client_credentials",
            Grant::WorkloadIdentity(_) => "jwt-bearer (workload identity)",
            Grant::Enterprise(_) => "jwt-bearer (enterprise-managed)",
        }
    }
}

/// What a grant needs besides its own configuration.
pub(crate) struct GrantContext<'a> {
    pub http: &'a reqwest::Client,
    pub credentials: &'a ClientCredentials,
    pub method: TokenEndpointAuthMethod,
    pub metadata: &'a ServerMetadata,
    pub resource: &'a ResourceMetadata,
    pub scopes: &'a [String],
    pub dpop: Option<&'a Dpop>,
}

impl GrantContext<'_> {
    fn request(&self, mut form: Vec<(&'static str, String)>) -> TokenRequest<'_> {
        form.push(("resource", self.resource.resource.clone()));
        if !self.scopes.is_empty() {
            form.push(("scope", self.scopes.join(" ")));
        }
        let client = ClientAuth {
            credentials: self.credentials,
            method: self.method,
            issuer: &self.metadata.issuer,
        };
        TokenRequest {
            http: self.http,
            endpoint: &self.metadata.token_endpoint,
            form,
            client: Some(client),
            dpop: self.dpop,
        }
    }
}

/// Runs `grant` (not the authorization code flow) at `cx`'s authorization server.
pub(crate) async fn obtain(
    grant: &Grant,
    cx: &GrantContext<'_>,
) -> Result<TokenResponse, AuthError> {
    match grant {
        Grant::AuthorizationCode => Err(AuthError::Authorization(
            "the authorization code flow runs through the handler".into(),
        )),
        Grant::ClientCredentials => {
            let form = vec![("grant_type", "client_credentials".into())];
            cx.request(form).send().await
        }
        Grant::WorkloadIdentity(source) => {
            // One attempt: a refused assertion is reported, not retried nor swapped for
            // another grant (SEP-1933).
            let assertion = source.read().await?;
            let form = vec![("grant_type", JWT_BEARER.into()), ("assertion", assertion)];
            cx.request(form).send().await
        }
        Grant::Enterprise(idp) => {
            let id_jag = id_jag(idp, cx).await?;
            let form = vec![("grant_type", JWT_BEARER.into()), ("assertion", id_jag)];
            cx.request(form).send().await
        }
    }
}

/// Token exchange at the IdP (RFC 8693): the user's ID token for an ID-JAG naming the
/// authorization server as audience and the MCP server as resource.
async fn id_jag(idp: &EnterpriseIdp, cx: &GrantContext<'_>) -> Result<String, AuthError> {
    let id_token = idp.id_token.read().await?;
    let mut form = vec![
        ("grant_type", TOKEN_EXCHANGE.into()),
        ("requested_token_type", ID_JAG.into()),
        ("audience", cx.metadata.issuer.clone()),
        ("resource", cx.resource.resource.clone()),
        ("subject_token", id_token),
        ("subject_token_type", ID_TOKEN.into()),
    ];
    if !cx.scopes.is_empty() {
        form.push(("scope", cx.scopes.join(" ")));
    }
    let method = idp
        .client
        .auth_method
        .unwrap_or(if idp.client.client_secret.is_some() {
            TokenEndpointAuthMethod::ClientSecretBasic
        } else {
            TokenEndpointAuthMethod::None
        });
    let response = TokenRequest {
        http: cx.http,
        endpoint: &idp.token_endpoint,
        form,
        client: Some(ClientAuth {
            credentials: &idp.client,
            method,
            issuer: &idp.token_endpoint,
        }),
        dpop: None,
    }
    .send()
    .await
    .map_err(|e| AuthError::IdentityProvider(e.to_string()))?;
    if response
        .issued_token_type
        .as_deref()
        .is_some_and(|t| t != ID_JAG)
    {
        return Err(AuthError::IdentityProvider(format!(
            "the IdP issued a {:?}, not an ID-JAG",
            response.issued_token_type.unwrap_or_default()
        )));
    }
    Ok(response.access_token)
}

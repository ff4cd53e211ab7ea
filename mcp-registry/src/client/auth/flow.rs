//! The authorization flow the HTTP transport runs on a 401 or a 403 `insufficient_scope`.

use std::collections::HashMap;
use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use oauth2::basic::{BasicClient, BasicTokenResponse};
use oauth2::{
    AsyncHttpClient, AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken,
    EndpointNotSet, EndpointSet, HttpClientError, HttpRequest, HttpResponse, PkceCodeChallenge,
    RedirectUrl, RefreshToken, RequestTokenError, Scope, TokenResponse, TokenUrl,
};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue, WWW_AUTHENTICATE};
use reqwest::{StatusCode, Url};
use serde_json::{Value, json};

use super::discovery::{self, ResourceMetadata, ServerMetadata};
use super::dpop::{DPOP, Dpop};
use super::grant::{self, Grant, GrantContext};
use super::{AuthError, ClientCredentials, OAuth, TokenEndpointAuthMethod, Tokens};

/// What the MCP server asked for: a 401 (no or a bad token) or a 403 `insufficient_scope`,
/// with the challenge's parameters.
#[derive(Debug, Clone, Default)]
pub(crate) struct Challenge {
    step_up: bool,
    scope: Option<String>,
    resource_metadata: Option<String>,
    /// A DPoP `use_dpop_nonce` error (RFC 9449 §9): retry with the response's `DPoP-Nonce`.
    use_dpop_nonce: bool,
    /// The response's headers (its `DPoP-Nonce`).
    headers: HeaderMap,
}

impl Challenge {
    /// The challenge of a response, when it asks for (more) authorization.
    pub(crate) fn of(status: StatusCode, headers: &HeaderMap) -> Option<Challenge> {
        let params = headers
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(discovery::bearer_params);
        let step_up = match status {
            StatusCode::UNAUTHORIZED => false,
            StatusCode::FORBIDDEN
                if params
                    .as_ref()
                    .and_then(|p| p.get("error"))
                    .is_some_and(|e| e == "insufficient_scope") =>
            {
                true
            }
            _ => return None,
        };
        let mut params = params.unwrap_or_default();
        Some(Challenge {
            step_up,
            scope: params.remove("scope").filter(|s| !s.trim().is_empty()),
            resource_metadata: params.remove("resource_metadata"),
            use_dpop_nonce: params.get("error").is_some_and(|e| e == "use_dpop_nonce"),
            headers: headers.clone(),
        })
    }
}

type OAuthClient =
    BasicClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

/// The authorization state of one HTTP transport.
pub(crate) struct Authorizer {
    config: OAuth,
    /// The MCP URL: the token store's key.
    server: Url,
    /// Metadata, registration and token requests: never following redirects.
    http: reqwest::Client,
    state: tokio::sync::Mutex<State>,
    /// Authorizations since a request was last accepted.
    refused: AtomicUsize,
    /// The DPoP key and nonces, when DPoP is configured.
    dpop: Option<Dpop>,
}

#[derive(Default)]
struct State {
    /// Client IDs by issuer: never carried to another authorization server.
    registrations: HashMap<String, ClientCredentials>,
    /// The scopes asked for so far, with their issuer.
    requested: Option<(String, Vec<String>)>,
    /// What the last authorization discovered: a refresh before expiry needs no discovery.
    discovered: Option<(ResourceMetadata, ServerMetadata)>,
}

/// How long before its expiry a token is refreshed.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

impl fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorizer")
            .field("config", &self.config)
            .field("server", &self.server.as_str())
            .finish_non_exhaustive()
    }
}

fn http_error(e: impl fmt::Display) -> AuthError {
    AuthError::Http(e.to_string())
}

fn token_error<RE: std::error::Error + 'static>(
    e: RequestTokenError<RE, oauth2::basic::BasicErrorResponse>,
) -> String {
    match e {
        RequestTokenError::ServerResponse(response) => response.to_string(),
        RequestTokenError::Request(e) => format!("request failed: {e}"),
        RequestTokenError::Parse(e, _) => format!("unreadable token response: {e}"),
        RequestTokenError::Other(e) => e,
    }
}

fn split_scopes(scopes: &str) -> Vec<String> {
    scopes.split_whitespace().map(str::to_owned).collect()
}

impl Authorizer {
    pub(crate) fn new(config: OAuth, server: Url) -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(30))
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap_or_default();
        Authorizer {
            dpop: config.dpop_key.clone().map(Dpop::new),
            config,
            server,
            http,
            state: tokio::sync::Mutex::new(State::default()),
            refused: AtomicUsize::new(0),
        }
    }

    fn key(&self) -> &str {
        self.server.as_str()
    }

    /// Puts the access token (if any) into `headers` for a `method` request to the MCP
    /// server: `Authorization: Bearer`, or `Authorization: DPoP` with a fresh proof for a
    /// DPoP-bound token. Returns the token presented.
    pub(crate) fn present(&self, headers: &mut HeaderMap, method: &str) -> Option<String> {
        let tokens = self.config.store.load(self.key())?;
        let (scheme, proof) = match (&self.dpop, tokens.dpop_bound) {
            (Some(dpop), true) => {
                let proof = dpop.header(method, &self.server, Some(&tokens.access_token));
                match proof {
                    Ok(proof) => ("DPoP", Some(proof)),
                    Err(e) => {
                        tracing::warn!(error = %e, "no DPoP proof could be made");
                        return None;
                    }
                }
            }
            _ => ("Bearer", None),
        };
        let mut value = HeaderValue::try_from(format!("{scheme} {}", tokens.access_token)).ok()?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
        if let Some(proof) = proof {
            headers.insert(DPOP, proof);
        }
        Some(tokens.access_token)
    }

    /// A request was accepted (its response `headers`): the refusals in a row start over,
    /// and a new DPoP nonce is kept.
    pub(crate) fn accepted(&self, headers: &HeaderMap) {
        self.refused.store(0, Ordering::Relaxed);
        if let Some(dpop) = &self.dpop {
            dpop.remember_nonce(&self.server, headers);
        }
    }

    /// Answers `challenge` to a request that carried `presented`: afterwards the request is
    /// retried with [`present`](Self::present).
    pub(crate) async fn authorize(
        &self,
        challenge: &Challenge,
        presented: Option<&str>,
    ) -> Result<(), AuthError> {
        if let Some(outcome) = self.nonce_retry(challenge) {
            return outcome;
        }
        let mut state = self.state.lock().await;
        let current = self.config.store.load(self.key());
        if current.as_ref().map(|t| t.access_token.as_str()) != presented && current.is_some() {
            // Another request got a new token meanwhile: retry with it.
            return Ok(());
        }
        let attempts = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
        if attempts > self.config.max_authorizations {
            return Err(AuthError::RetryLimit {
                attempts: attempts - 1,
            });
        }
        let (resource, metadata) = self.discover(challenge).await?;
        if let Some(tokens) = &current
            && tokens.issuer == metadata.issuer
            && let Some(client) = &tokens.client
        {
            // The client the stored tokens were issued to (e.g. registered by an earlier run).
            state
                .registrations
                .entry(metadata.issuer.clone())
                .or_insert_with(|| client.clone());
        }
        state.discovered = Some((resource.clone(), metadata.clone()));
        let credentials = self.credentials(&mut state, &metadata).await?;
        if !matches!(self.config.grant, Grant::AuthorizationCode) {
            let scopes = self.scopes(&mut state, challenge, &resource, &metadata);
            return self
                .unattended(&credentials, &metadata, &resource, &scopes)
                .await;
        }
        if !metadata
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"))
        {
            return Err(AuthError::PkceUnsupported {
                issuer: metadata.issuer,
            });
        }
        let client = self.client(&credentials, &metadata)?;
        if !challenge.step_up
            && let Some(tokens) = current.filter(|t| t.issuer == metadata.issuer)
            && let Some(refresh) = tokens.refresh_token.clone()
        {
            let refreshed = self
                .refresh(
                    &client,
                    &credentials,
                    &metadata,
                    &resource,
                    refresh,
                    &tokens.scopes,
                )
                .await;
            match refreshed {
                Ok(()) => return Ok(()),
                Err(e) => tracing::debug!(error = %e, "refresh failed; authorizing anew"),
            }
        }
        let scopes = self.scopes(&mut state, challenge, &resource, &metadata);
        self.authorization_code(&client, &credentials, &metadata, &resource, scopes)
            .await
    }

    /// A DPoP `use_dpop_nonce` challenge is no refusal of the token: the proof lacked the
    /// server's current nonce. `Some(Ok)` to retry with the new one.
    fn nonce_retry(&self, challenge: &Challenge) -> Option<Result<(), AuthError>> {
        let dpop = self.dpop.as_ref().filter(|_| challenge.use_dpop_nonce)?;
        if dpop.remember_nonce(&self.server, &challenge.headers) {
            return Some(Ok(()));
        }
        Some(Err(AuthError::Authorization(
            "the MCP server asks for a DPoP nonce without handing out a new one".into(),
        )))
    }

    /// The protected resource and its authorization server: from the resource's metadata
    /// (RFC 9728), else as MCP 2025-03-26 had it (the MCP server's origin).
    async fn discover(
        &self,
        challenge: &Challenge,
    ) -> Result<(ResourceMetadata, ServerMetadata), AuthError> {
        let from_challenge = challenge.resource_metadata.as_deref();
        let resource =
            match discovery::resource_metadata(&self.http, &self.server, from_challenge).await {
                Ok(resource) => resource,
                Err(AuthError::ResourceMetadataNotFound { tried }) => {
                    tracing::debug!(
                        ?tried,
                        "no protected resource metadata: 2025-03-26 discovery"
                    );
                    return discovery::legacy_discovery(&self.http, &self.server).await;
                }
                Err(e) => return Err(e),
            };
        if !discovery::resource_covers(&resource.resource, &self.server) {
            return Err(AuthError::ResourceMismatch {
                expected: self.server.to_string(),
                found: resource.resource,
            });
        }
        let issuer = resource
            .authorization_servers
            .first()
            .cloned()
            .ok_or(AuthError::NoAuthorizationServer)?;
        let metadata = discovery::server_metadata(&self.http, &issuer).await?;
        Ok((resource, metadata))
    }

    /// The DPoP state to use with `metadata`'s server: when configured and supported there.
    fn dpop_for(&self, metadata: &ServerMetadata) -> Option<&Dpop> {
        self.dpop.as_ref().filter(|_| metadata.supports_dpop())
    }

    /// A grant without a user (client credentials, workload identity, enterprise-managed).
    async fn unattended(
        &self,
        credentials: &ClientCredentials,
        metadata: &ServerMetadata,
        resource: &ResourceMetadata,
        scopes: &[String],
    ) -> Result<(), AuthError> {
        let method = credentials
            .auth_method
            .unwrap_or_else(|| preferred_method(metadata, credentials.client_secret.is_some()));
        let dpop = self.dpop_for(metadata);
        let cx = GrantContext {
            http: &self.http,
            credentials,
            method,
            metadata,
            resource,
            scopes,
            dpop,
        };
        let response = grant::obtain(&self.config.grant, &cx)
            .await
            .map_err(|e| match e {
                AuthError::TokenExchange(why) => {
                    AuthError::TokenExchange(format!("{} grant: {why}", self.config.grant.name()))
                }
                e => e,
            })?;
        let dpop_bound = dpop.is_some() && is_dpop(response.token_type.as_deref());
        self.config.store.save(
            self.key(),
            Tokens {
                dpop_bound,
                expires_at: response.expires_at(),
                scopes: response
                    .scope
                    .as_deref()
                    .map(split_scopes)
                    .unwrap_or_else(|| scopes.to_vec()),
                access_token: response.access_token,
                refresh_token: response.refresh_token,
                issuer: metadata.issuer.clone(),
                client: Some(credentials.clone()),
            },
        );
        Ok(())
    }

    /// The HTTP client of the oauth2 crate's token requests to `metadata`'s server.
    fn token_http<'a>(&'a self, metadata: &ServerMetadata) -> TokenHttp<'a> {
        TokenHttp {
            authorizer: self,
            dpop: self.dpop_for(metadata),
        }
    }

    /// The oauth2 crate's token requests (code exchange, refresh), with a DPoP proof when
    /// `dpop`, retried once with the server's nonce on `use_dpop_nonce` (RFC 9449 §8).
    async fn token_call(
        &self,
        request: HttpRequest,
        dpop: Option<&Dpop>,
    ) -> Result<HttpResponse, HttpClientError<reqwest::Error>> {
        let Some(dpop) = dpop else {
            return self.http.call(request).await;
        };
        let (parts, body) = request.into_parts();
        let url = Url::parse(&parts.uri.to_string())
            .map_err(|e| HttpClientError::Other(format!("token endpoint: {e}")))?;
        let mut retried = false;
        loop {
            let mut request = HttpRequest::new(body.clone());
            *request.method_mut() = parts.method.clone();
            *request.uri_mut() = parts.uri.clone();
            *request.headers_mut() = parts.headers.clone();
            let proof = dpop
                .header(parts.method.as_str(), &url, None)
                .map_err(|e| HttpClientError::Other(e.to_string()))?;
            request.headers_mut().insert(DPOP, proof);
            let response = self.http.call(request).await?;
            let new_nonce = dpop.remember_nonce(&url, response.headers());
            let asks_nonce = response.status() == StatusCode::BAD_REQUEST
                && serde_json::from_slice::<Value>(response.body())
                    .ok()
                    .is_some_and(|v| {
                        v.get("error").and_then(Value::as_str) == Some("use_dpop_nonce")
                    });
            if !retried && new_nonce && asks_nonce {
                retried = true;
                continue;
            }
            return Ok(response);
        }
    }

    /// Refreshes a token about to expire (or, without a refresh token, makes a grant without
    /// a user again), with what the last authorization discovered; on
    /// failure the old token is presented and a 401 leads to [`authorize`](Self::authorize).
    pub(crate) async fn refresh_if_expiring(&self) {
        let Some(tokens) = self.config.store.load(self.key()) else {
            return;
        };
        let expiring = tokens
            .expires_at
            .is_some_and(|at| at <= SystemTime::now() + EXPIRY_MARGIN);
        // Without a refresh token, a grant without a user is simply made again.
        let unattended = !matches!(self.config.grant, Grant::AuthorizationCode);
        if !expiring || (tokens.refresh_token.is_none() && !unattended) {
            return;
        }
        let state = self.state.lock().await;
        let latest = self.config.store.load(self.key());
        if latest.as_ref().map(|t| &t.access_token) != Some(&tokens.access_token) {
            return; // refreshed meanwhile
        }
        let Some((resource, metadata)) = state.discovered.clone() else {
            return;
        };
        let Some(refresh) = tokens.refresh_token.clone() else {
            if let Some(credentials) = &self.config.credentials {
                let renewed = self
                    .unattended(credentials, &metadata, &resource, &tokens.scopes)
                    .await;
                if let Err(e) = renewed {
                    tracing::debug!(error = %e, "renewing an expiring token failed");
                }
            }
            return;
        };
        let credentials = match (&self.config.credentials, &tokens.client) {
            (Some(c), _) | (None, Some(c)) => c.clone(),
            (None, None) => match state.registrations.get(&metadata.issuer) {
                Some(c) => c.clone(),
                None => return,
            },
        };
        // The lock stays held: one refresh at a time (a rotated refresh token works once).
        let Ok(client) = self.client(&credentials, &metadata) else {
            return;
        };
        if let Err(e) = self
            .refresh(
                &client,
                &credentials,
                &metadata,
                &resource,
                refresh,
                &tokens.scopes,
            )
            .await
        {
            tracing::debug!(error = %e, "refreshing an expiring token failed");
        }
    }

    /// The client ID for `metadata`'s issuer: pre-registered, registered before, a client ID
    /// metadata document, or registered now.
    async fn credentials(
        &self,
        state: &mut State,
        metadata: &ServerMetadata,
    ) -> Result<ClientCredentials, AuthError> {
        if let Some(credentials) = &self.config.credentials {
            return Ok(credentials.clone());
        }
        if let Some(credentials) = state.registrations.get(&metadata.issuer) {
            return Ok(credentials.clone());
        }
        if metadata.client_id_metadata_document_supported == Some(true)
            && let Some(url) = &self.config.client_metadata_url
        {
            return Ok(
                ClientCredentials::new(url.clone()).auth_method(TokenEndpointAuthMethod::None)
            );
        }
        let Some(endpoint) = &metadata.registration_endpoint else {
            return Err(AuthError::RegistrationUnavailable {
                issuer: metadata.issuer.clone(),
            });
        };
        let credentials = self.register(endpoint, metadata).await?;
        state
            .registrations
            .insert(metadata.issuer.clone(), credentials.clone());
        Ok(credentials)
    }

    /// Dynamic client registration (RFC 7591).
    async fn register(
        &self,
        endpoint: &str,
        metadata: &ServerMetadata,
    ) -> Result<ClientCredentials, AuthError> {
        let native = Url::parse(&self.config.redirect_uri).is_ok_and(|u| {
            !matches!(u.scheme(), "http" | "https")
                || matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"))
        });
        let method = preferred_method(metadata, true);
        let body = json!({
            "client_name": self.config.client_name,
            "redirect_uris": [self.config.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method.as_str(),
            "application_type": if native { "native" } else { "web" },
        });
        let response = self
            .http
            .post(endpoint)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| AuthError::RegistrationFailed(format!("POST {endpoint}: {e}")))?;
        let status = response.status();
        let body = response.bytes().await.map_err(http_error)?;
        if !status.is_success() {
            return Err(AuthError::RegistrationFailed(format!(
                "HTTP {status}: {}",
                String::from_utf8_lossy(&body[..body.len().min(200)])
            )));
        }
        let registered: Value = serde_json::from_slice(&body)
            .map_err(|e| AuthError::RegistrationFailed(format!("unreadable response: {e}")))?;
        let client_id = registered
            .get("client_id")
            .and_then(Value::as_str)
            .ok_or_else(|| AuthError::RegistrationFailed("no client_id in the response".into()))?;
        let mut credentials = ClientCredentials::new(client_id);
        credentials.client_secret = registered
            .get("client_secret")
            .and_then(Value::as_str)
            .map(str::to_owned);
        credentials.auth_method = registered
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
            .and_then(TokenEndpointAuthMethod::parse);
        Ok(credentials)
    }

    fn client(
        &self,
        credentials: &ClientCredentials,
        metadata: &ServerMetadata,
    ) -> Result<OAuthClient, AuthError> {
        let method = credentials
            .auth_method
            .unwrap_or_else(|| preferred_method(metadata, credentials.client_secret.is_some()));
        let endpoint = metadata.authorization_endpoint.clone().ok_or_else(|| {
            AuthError::Http(format!(
                "{} names no authorization_endpoint",
                metadata.issuer
            ))
        })?;
        let auth_url = AuthUrl::new(endpoint)
            .map_err(|e| AuthError::Http(format!("invalid authorization_endpoint: {e}")))?;
        let token_url = TokenUrl::new(metadata.token_endpoint.clone())
            .map_err(|e| AuthError::Http(format!("invalid token_endpoint: {e}")))?;
        let redirect = RedirectUrl::new(self.config.redirect_uri.clone())
            .map_err(|e| AuthError::Authorization(format!("invalid redirect URI: {e}")))?;
        let mut client = BasicClient::new(ClientId::new(credentials.client_id.clone()))
            .set_auth_uri(auth_url)
            .set_token_uri(token_url)
            .set_redirect_uri(redirect);
        match (method, &credentials.client_secret) {
            (TokenEndpointAuthMethod::ClientSecretBasic, Some(secret)) => {
                client = client
                    .set_client_secret(ClientSecret::new(secret.clone()))
                    .set_auth_type(AuthType::BasicAuth);
            }
            (TokenEndpointAuthMethod::ClientSecretPost, Some(secret)) => {
                client = client
                    .set_client_secret(ClientSecret::new(secret.clone()))
                    .set_auth_type(AuthType::RequestBody);
            }
            _ => client = client.set_auth_type(AuthType::RequestBody),
        }
        Ok(client)
    }

    /// The scopes to ask for: the challenge's, else the resource's `scopes_supported`, else
    /// none; joined to those asked of the same issuer before; `offline_access` when the
    /// authorization server offers it.
    fn scopes(
        &self,
        state: &mut State,
        challenge: &Challenge,
        resource: &ResourceMetadata,
        metadata: &ServerMetadata,
    ) -> Vec<String> {
        let mut scopes = match &challenge.scope {
            Some(scope) => split_scopes(scope),
            None => resource.scopes_supported.clone().unwrap_or_default(),
        };
        if let Some((issuer, before)) = &state.requested
            && *issuer == metadata.issuer
        {
            let mut union = before.clone();
            union.extend(scopes.into_iter().filter(|s| !before.contains(s)));
            scopes = union;
        }
        let offline = metadata
            .scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|s| s == "offline_access"));
        let code_flow = matches!(self.config.grant, Grant::AuthorizationCode);
        if code_flow && offline && !scopes.iter().any(|s| s == "offline_access") {
            scopes.push("offline_access".into());
        }
        state.requested = Some((metadata.issuer.clone(), scopes.clone()));
        scopes
    }

    async fn authorization_code(
        &self,
        client: &OAuthClient,
        credentials: &ClientCredentials,
        metadata: &ServerMetadata,
        resource: &ResourceMetadata,
        scopes: Vec<String>,
    ) -> Result<(), AuthError> {
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state) = client
            .authorize_url(CsrfToken::new_random)
            .add_scopes(scopes.iter().cloned().map(Scope::new))
            .set_pkce_challenge(challenge)
            .add_extra_param("resource", resource.resource.clone())
            .url();
        let redirect = self.config.handler.authorize(url.into()).await?;
        let redirect = Url::parse(&redirect)
            .map_err(|e| AuthError::Authorization(format!("invalid redirect URL: {e}")))?;
        let query: HashMap<String, String> = redirect.query_pairs().into_owned().collect();
        // RFC 9207 §2.4: before anything else in the response is acted on.
        match query.get("iss") {
            Some(iss) if *iss != metadata.issuer => {
                return Err(AuthError::IssMismatch {
                    expected: metadata.issuer.clone(),
                    found: iss.clone(),
                });
            }
            None if metadata.authorization_response_iss_parameter_supported == Some(true) => {
                return Err(AuthError::IssMissing {
                    issuer: metadata.issuer.clone(),
                });
            }
            _ => {}
        }
        if query.get("state").map(String::as_str) != Some(state.secret().as_str()) {
            return Err(AuthError::StateMismatch);
        }
        if let Some(error) = query.get("error") {
            let description = query
                .get("error_description")
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            return Err(AuthError::Authorization(format!("{error}{description}")));
        }
        let code = query.get("code").ok_or(AuthError::MissingCode)?;
        let response = client
            .exchange_code(AuthorizationCode::new(code.clone()))
            .set_pkce_verifier(verifier)
            .add_extra_param("resource", resource.resource.clone())
            .request_async(&self.token_http(metadata))
            .await
            .map_err(|e| AuthError::TokenExchange(token_error(e)))?;
        self.save(&response, credentials, metadata, &scopes, None);
        Ok(())
    }

    async fn refresh(
        &self,
        client: &OAuthClient,
        credentials: &ClientCredentials,
        metadata: &ServerMetadata,
        resource: &ResourceMetadata,
        refresh: String,
        scopes: &[String],
    ) -> Result<(), AuthError> {
        let token = RefreshToken::new(refresh.clone());
        let response = client
            .exchange_refresh_token(&token)
            .add_extra_param("resource", resource.resource.clone())
            .request_async(&self.token_http(metadata))
            .await
            .map_err(|e| AuthError::Refresh(token_error(e)))?;
        self.save(&response, credentials, metadata, scopes, Some(refresh));
        Ok(())
    }

    fn save(
        &self,
        response: &BasicTokenResponse,
        credentials: &ClientCredentials,
        metadata: &ServerMetadata,
        requested: &[String],
        previous_refresh: Option<String>,
    ) {
        let token_type = response.token_type().as_ref();
        let tokens = Tokens {
            dpop_bound: self.dpop_for(metadata).is_some() && is_dpop(Some(token_type)),
            access_token: response.access_token().secret().clone(),
            refresh_token: response
                .refresh_token()
                .map(|t| t.secret().clone())
                .or(previous_refresh),
            expires_at: response.expires_in().map(|d| SystemTime::now() + d),
            scopes: response
                .scopes()
                .map(|s| s.iter().map(|s| s.to_string()).collect())
                .unwrap_or_else(|| requested.to_vec()),
            issuer: metadata.issuer.clone(),
            client: Some(credentials.clone()),
        };
        self.config.store.save(self.key(), tokens);
    }
}

/// The oauth2 crate's HTTP client for token requests: ours, with DPoP when on.
struct TokenHttp<'a> {
    authorizer: &'a Authorizer,
    dpop: Option<&'a Dpop>,
}

impl<'c> AsyncHttpClient<'c> for TokenHttp<'_> {
    type Error = HttpClientError<reqwest::Error>;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Self::Error>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(self.authorizer.token_call(request, self.dpop))
    }
}

/// Whether a `token_type` is `DPoP` (compared without case, RFC 9449 §5).
fn is_dpop(token_type: Option<&str>) -> bool {
    token_type.is_some_and(|t| t.eq_ignore_ascii_case("dpop"))
}

/// The token endpoint auth method to use (or register) with `metadata`'s server.
fn preferred_method(metadata: &ServerMetadata, has_secret: bool) -> TokenEndpointAuthMethod {
    if !has_secret {
        return TokenEndpointAuthMethod::None;
    }
    let supported = metadata
        .token_endpoint_auth_methods_supported
        .clone()
        .unwrap_or_else(|| vec!["client_secret_basic".into()]);
    [
        TokenEndpointAuthMethod::ClientSecretBasic,
        TokenEndpointAuthMethod::ClientSecretPost,
        TokenEndpointAuthMethod::None,
    ]
    .into_iter()
    .find(|m| supported.iter().any(|s| s == m.as_str()))
    .unwrap_or(TokenEndpointAuthMethod::ClientSecretBasic)
}

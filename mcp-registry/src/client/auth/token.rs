//! Token requests of the grants the oauth2 crate does not make (client credentials with a
//! signed assertion, the JWT bearer grant, token exchange): a form POST with the client's
//! authentication and, when DPoP is on, a proof (retried once with the server's nonce).

use std::time::{Duration, SystemTime};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use oauth2::url::form_urlencoded::byte_serialize;
use reqwest::Url;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderValue};
use serde::Deserialize;

use super::dpop::{DPOP, Dpop};
use super::{AuthError, ClientCredentials, TokenEndpointAuthMethod, jose};

/// The `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
const JWT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A token endpoint's success response (RFC 6749 §5.1, RFC 8693 §2.2.1).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct TokenResponse {
    pub access_token: String,
    #[serde(default)]
    pub token_type: Option<String>,
    #[serde(default)]
    pub expires_in: Option<u64>,
    #[serde(default)]
    pub refresh_token: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub issued_token_type: Option<String>,
}

impl TokenResponse {
    /// When the token expires, when the server said.
    pub(crate) fn expires_at(&self) -> Option<SystemTime> {
        self.expires_in
            .map(|s| SystemTime::now() + Duration::from_secs(s))
    }
}

/// A token endpoint's error response (RFC 6749 §5.2).
#[derive(Debug, Deserialize)]
struct ErrorResponse {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// How the client authenticates at the endpoint: who, how, and for which issuer (the
/// audience of a client assertion).
pub(crate) struct ClientAuth<'a> {
    pub credentials: &'a ClientCredentials,
    pub method: TokenEndpointAuthMethod,
    pub issuer: &'a str,
}

/// One token request.
pub(crate) struct TokenRequest<'a> {
    pub http: &'a reqwest::Client,
    pub endpoint: &'a str,
    pub form: Vec<(&'static str, String)>,
    pub client: Option<ClientAuth<'a>>,
    pub dpop: Option<&'a Dpop>,
}

/// `application/x-www-form-urlencoded` encoding of a component (RFC 6749 §2.3.1 asks the
/// client ID and secret of HTTP Basic to be encoded so first).
fn form_encode(text: &str) -> String {
    byte_serialize(text.as_bytes()).collect()
}

impl TokenRequest<'_> {
    /// Adds the client's authentication: to the form, or as the returned `Authorization`
    /// header value (HTTP Basic).
    fn authenticate(&mut self) -> Result<Option<String>, AuthError> {
        let Some(client) = &self.client else {
            return Ok(None);
        };
        let credentials = client.credentials;
        let id = credentials.client_id.clone();
        match (
            client.method,
            &credentials.client_secret,
            &credentials.signing_key,
        ) {
            (TokenEndpointAuthMethod::ClientSecretBasic, Some(secret), _) => {
                let pair = format!("{}:{}", form_encode(&id), form_encode(secret));
                return Ok(Some(format!("Basic {}", STANDARD.encode(pair))));
            }
            (TokenEndpointAuthMethod::ClientSecretPost, Some(secret), _) => {
                self.form.push(("client_id", id));
                self.form.push(("client_secret", secret.clone()));
            }
            (TokenEndpointAuthMethod::PrivateKeyJwt, _, Some(key)) => {
                let assertion = jose::client_assertion(key, &id, client.issuer)?;
                self.form
                    .push(("client_assertion_type", JWT_ASSERTION_TYPE.into()));
                self.form.push(("client_assertion", assertion));
            }
            _ => self.form.push(("client_id", id)),
        }
        Ok(None)
    }

    /// Sends the request; the token, or why the server refused it.
    pub(crate) async fn send(mut self) -> Result<TokenResponse, AuthError> {
        let basic = self.authenticate()?;
        let endpoint = Url::parse(self.endpoint)
            .map_err(|e| AuthError::Http(format!("invalid token endpoint: {e}")))?;
        // A use_dpop_nonce answer is retried once with the nonce it carries (RFC 9449 §8).
        for _ in 0..2 {
            let mut request = self
                .http
                .post(endpoint.clone())
                .header(ACCEPT, "application/json")
                .form(&self.form);
            if let Some(basic) = &basic {
                let mut value = HeaderValue::try_from(basic.as_str())
                    .map_err(|e| AuthError::Http(format!("client credentials: {e}")))?;
                value.set_sensitive(true);
                request = request.header(AUTHORIZATION, value);
            }
            if let Some(dpop) = self.dpop {
                request = request.header(DPOP, dpop.header("POST", &endpoint, None)?);
            }
            let response = request
                .send()
                .await
                .map_err(|e| AuthError::Http(format!("POST {endpoint}: {e}")))?;
            let status = response.status();
            let new_nonce = self
                .dpop
                .is_some_and(|d| d.remember_nonce(&endpoint, response.headers()));
            let bytes = response
                .bytes()
                .await
                .map_err(|e| AuthError::Http(format!("POST {endpoint}: {e}")))?;
            if status.is_success() {
                return serde_json::from_slice(&bytes).map_err(|e| {
                    AuthError::TokenExchange(format!("unreadable token response: {e}"))
                });
            }
            let error = serde_json::from_slice::<ErrorResponse>(&bytes).ok();
            if new_nonce && error.as_ref().is_some_and(|e| e.error == "use_dpop_nonce") {
                continue;
            }
            return Err(AuthError::TokenExchange(match error {
                Some(e) => match e.error_description {
                    Some(d) => format!("{}: {d}", e.error),
                    None => e.error,
                },
                None => format!(
                    "HTTP {status}: {}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                ),
            }));
        }
        Err(AuthError::TokenExchange(
            "the server kept asking for a new DPoP nonce".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_form_encoded_first() {
        assert_eq!(form_encode("a b:c/é"), "a+b%3Ac%2F%C3%A9");
        assert_eq!(form_encode("client-1"), "client-1");
    }
}

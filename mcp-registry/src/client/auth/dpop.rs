//! DPoP (RFC 9449) on the client: a proof per request, signed with the client's key, bound to
//! the request's method and URL (and, at the resource, to the access token), carrying the
//! nonce the server last handed out.

use std::collections::HashMap;
use std::sync::Mutex;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::AuthError;
use super::jose::{self, SigningKey};
use crate::sync::MutexExt;

/// The `DPoP` request header (the proof).
pub(crate) const DPOP: HeaderName = HeaderName::from_static("dpop");
/// The `DPoP-Nonce` response header.
pub(crate) const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// A client's DPoP key and the nonces servers gave it.
#[derive(Debug)]
pub(crate) struct Dpop {
    key: SigningKey,
    /// The last nonce of each origin (an authorization server, the MCP server).
    nonces: Mutex<HashMap<String, String>>,
}

#[derive(Serialize)]
struct ProofClaims<'a> {
    jti: String,
    htm: &'a str,
    htu: String,
    iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ath: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<String>,
}

/// `url` without its query and fragment (RFC 9449 §4.2 `htu`).
fn htu(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.into()
}

/// `ath`: base64url of the SHA-256 of the access token (RFC 9449 §4.2).
pub(crate) fn token_hash(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(access_token.as_bytes()))
}

impl Dpop {
    pub(crate) fn new(key: SigningKey) -> Self {
        Dpop {
            key,
            nonces: Mutex::new(HashMap::new()),
        }
    }

    fn origin(url: &Url) -> String {
        url.origin().ascii_serialization()
    }

    /// A fresh proof for `method` on `url`; bound to `access_token` when one is presented.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &Url,
        access_token: Option<&str>,
    ) -> Result<String, AuthError> {
        let nonce = self
            .nonces
            .lock_unpoisoned()
            .get(&Self::origin(url))
            .cloned();
        let claims = ProofClaims {
            jti: jose::random_id()?,
            htm: method,
            htu: htu(url),
            iat: jose::now(),
            ath: access_token.map(token_hash),
            nonce,
        };
        self.key.sign("dpop+jwt", true, &claims)
    }

    /// The `DPoP` header for `method` on `url`.
    pub(crate) fn header(
        &self,
        method: &str,
        url: &Url,
        access_token: Option<&str>,
    ) -> Result<HeaderValue, AuthError> {
        let proof = self.proof(method, url, access_token)?;
        HeaderValue::try_from(proof).map_err(|e| AuthError::Key(format!("DPoP proof: {e}")))
    }

    /// Keeps the `DPoP-Nonce` of a response from `url`'s server; whether it is a new one.
    pub(crate) fn remember_nonce(&self, url: &Url, headers: &HeaderMap) -> bool {
        let Some(nonce) = headers.get(DPOP_NONCE).and_then(|v| v.to_str().ok()) else {
            return false;
        };
        let mut nonces = self.nonces.lock_unpoisoned();
        let previous = nonces.insert(Self::origin(url), nonce.to_owned());
        previous.as_deref() != Some(nonce)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(jwt: &str, index: usize) -> serde_json::Value {
        let part = jwt.split('.').nth(index).unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn proofs_bind_method_url_token_and_the_servers_nonce() {
        let dpop = Dpop::new(SigningKey::generate().unwrap());
        let url = Url::parse("https://mcp.example/mcp?x=1#f").unwrap();
        let first = dpop.proof("POST", &url, Some("tok")).unwrap();
        let header = claims(&first, 0);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none());
        let body = claims(&first, 1);
        assert_eq!(body["htm"], "POST");
        assert_eq!(body["htu"], "https://mcp.example/mcp");
        assert_eq!(body["ath"], token_hash("tok"));
        assert!(body.get("nonce").is_none());

        let mut headers = HeaderMap::new();
        headers.insert(DPOP_NONCE, HeaderValue::from_static("n-1"));
        assert!(dpop.remember_nonce(&url, &headers));
        assert!(!dpop.remember_nonce(&url, &headers));
        let second = claims(&dpop.proof("GET", &url, None).unwrap(), 1);
        assert_eq!(second["nonce"], "n-1");
        assert!(second.get("ath").is_none());
        assert_ne!(second["jti"], body["jti"]);
        let elsewhere = Url::parse("https://as.example/token").unwrap();
        assert!(
            claims(&dpop.proof("POST", &elsewhere, None).unwrap(), 1)
                .get("nonce")
                .is_none()
        );
    }
}

//! DPoP-bound access tokens on the HTTP server (RFC 9449, feature `http-dpop`).
//!
//! With [`Auth::dpop`](super::auth::Auth::dpop), a token presented as `Authorization: DPoP`
//! must come with one `DPoP` proof header: a JWT typed `dpop+jwt`, signed with an asymmetric
//! algorithm by the public key in its `jwk` header (no private parts); its `htm` is the
//! request's method, its `htu` the protected resource's URL (no query or fragment), its `iat`
//! within [`Dpop::max_age`] of now, its `ath` the hash of the token, its `jti` not seen
//! before within that window, and, when nonces are on, its `nonce` one this server issued
//! (the current or the one before it). The key's thumbprint (RFC 7638) must be the token's
//! `cnf.jkt`, which the [`TokenValidator`](super::auth::TokenValidator) reports as
//! [`AccessClaims::dpop_jkt`](super::auth::AccessClaims::dpop_jkt). A bound token presented
//! as `Bearer` is refused.
//!
//! Refusals are `401` with `WWW-Authenticate: DPoP error="invalid_dpop_proof"` (and `algs`), or
//! `error="use_dpop_nonce"` with the nonce to use in `DPoP-Nonce`; with nonces on, every
//! response of the endpoint carries the current one.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::random::RandomUnavailable;
use crate::sync::MutexExt;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Uri};
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The `DPoP` request header.
const DPOP: HeaderName = HeaderName::from_static("dpop");
/// The `DPoP-Nonce` response header.
pub(crate) const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

/// The proof algorithms accepted: asymmetric only (RFC 9449 §4.2).
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::EdDSA,
];

/// How far in the future a proof's `iat` may be (clock skew).
const FUTURE_LEEWAY: u64 = 60;
/// Above this many remembered `jti`s, expired ones are dropped; past the cap, proofs are
/// refused until some expire.
const PURGE_AT: usize = 4096;
const MAX_SEEN: usize = 100_000;
/// The most remembered `jti`s of one key (one token holder) unless
/// [`Dpop::max_proofs_per_key`] says otherwise: a tenth of the whole, so that one holder
/// cannot fill the cache for everyone.
const MAX_SEEN_PER_KEY: usize = MAX_SEEN / 10;

type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// DPoP verification settings and state (seen proofs, nonces) of one HTTP endpoint.
///
/// ```
/// use std::time::Duration;
/// use mcp_registry::transport::http::dpop::Dpop;
/// let dpop = Dpop::new()
///     .max_age(Duration::from_secs(120))
///     .nonces(Duration::from_secs(300)) // issued, rotated every 5 minutes
///     .required(); // no plain bearer tokens
/// # let _ = dpop;
/// ```
#[derive(Clone)]
pub struct Dpop {
    max_age: u64,
    nonce_lifetime: Option<u64>,
    required: bool,
    per_key: usize,
    clock: Clock,
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    /// `jti`s (with their key's thumbprint) seen, and when they may be forgotten.
    seen: HashMap<(String, String), u64>,
    /// How many of `seen` each key's thumbprint has.
    per_key: HashMap<String, usize>,
    /// The current nonce and when it was issued; the one before it.
    nonce: Option<(String, u64)>,
    previous_nonce: Option<String>,
}

impl fmt::Debug for Dpop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dpop")
            .field("max_age", &self.max_age)
            .field("nonce_lifetime", &self.nonce_lifetime)
            .field("required", &self.required)
            .finish_non_exhaustive()
    }
}

impl Default for Dpop {
    fn default() -> Self {
        Self::new()
    }
}

fn system_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// Why a proof is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DpopRefusal {
    /// `invalid_dpop_proof`, with the description the client gets.
    InvalidProof(&'static str),
    /// `use_dpop_nonce`: retry with the nonce in `DPoP-Nonce`.
    UseNonce,
    /// A bearer token where only DPoP-bound ones are taken.
    Required,
}

/// The claims of a proof that are checked.
#[derive(Deserialize)]
struct ProofClaims {
    jti: Option<String>,
    htm: Option<String>,
    htu: Option<String>,
    iat: Option<u64>,
    ath: Option<String>,
    nonce: Option<String>,
}

impl Dpop {
    /// Verification with proofs valid for 300 s, no nonces, bearer tokens still taken.
    pub fn new() -> Self {
        Dpop {
            max_age: 300,
            nonce_lifetime: None,
            required: false,
            per_key: MAX_SEEN_PER_KEY,
            clock: Arc::new(system_now),
            state: Arc::new(Mutex::new(State::default())),
        }
    }

    /// How old a proof's `iat` may be (300 s unless set; replays are remembered as long).
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age.as_secs().max(1);
        self
    }

    /// Proofs must carry a nonce this server issued (RFC 9449 §9), a new one every
    /// `lifetime` (the one before stays good until the next rotation).
    pub fn nonces(mut self, lifetime: Duration) -> Self {
        self.nonce_lifetime = Some(lifetime.as_secs().max(1));
        self
    }

    /// Only DPoP-bound tokens are taken: a bearer token gets a DPoP challenge.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// How many proofs of one key (one token holder) are remembered at once, within their
    /// `max_age` window (10,000 unless set): past it, that key's proofs are refused until
    /// some expire, and other keys' proofs are not affected.
    pub fn max_proofs_per_key(mut self, max: usize) -> Self {
        self.per_key = max.max(1);
        self
    }

    /// The clock, in seconds since the Unix epoch (the system's unless set: tests set one).
    pub fn clock(mut self, now: impl Fn() -> u64 + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(now);
        self
    }

    pub(crate) fn is_required(&self) -> bool {
        self.required
    }

    /// The proof algorithms accepted, by name.
    pub(crate) fn algorithms(&self) -> Vec<String> {
        ALGORITHMS.iter().map(|a| format!("{a:?}")).collect()
    }

    /// The nonce to hand out now (rotated when due); `None` when nonces are off; an error
    /// when a new one is due and the OS has no randomness to make it.
    pub(crate) fn current_nonce(&self) -> Result<Option<String>, RandomUnavailable> {
        let Some(lifetime) = self.nonce_lifetime else {
            return Ok(None);
        };
        let now = (self.clock)();
        let mut state = self.state.lock_unpoisoned();
        match &state.nonce {
            Some((nonce, issued)) if now < issued + lifetime => Ok(Some(nonce.clone())),
            _ => {
                let fresh = crate::random::token().inspect_err(|e| {
                    tracing::error!(error = %e, "DPoP: no new nonce can be made; refusing proofs");
                })?;
                let old = state.nonce.replace((fresh.clone(), now));
                state.previous_nonce = old.map(|(n, _)| n);
                Ok(Some(fresh))
            }
        }
    }

    /// Puts the nonce to use next on `response` (RFC 9449 §9: any response may carry it), so
    /// a client learns a rotated one without being refused first.
    pub(crate) fn add_nonce(&self, response: &mut Response) {
        if response.headers().contains_key(DPOP_NONCE) {
            return;
        }
        if let Some(nonce) = self
            .current_nonce()
            .ok()
            .flatten()
            .and_then(|n| HeaderValue::from_str(&n).ok())
        {
            response.headers_mut().insert(DPOP_NONCE, nonce);
        }
    }

    fn nonce_ok(&self, nonce: Option<&str>) -> bool {
        let current = match self.current_nonce() {
            Ok(Some(current)) => current,
            Ok(None) => return true,
            // No nonce can be made: no proof is accepted (fail closed).
            Err(_) => return false,
        };
        let state = self.state.lock_unpoisoned();
        nonce.is_some_and(|n| n == current || state.previous_nonce.as_deref() == Some(n))
    }

    /// Checks the request's proof for `method` on `path` of `resource` (its scheme and
    /// authority: the request's own URI as the client sees it), presenting `token` bound to
    /// the key thumbprint `jkt`.
    pub(crate) fn verify(
        &self,
        headers: &HeaderMap,
        method: &str,
        resource: &str,
        path: &str,
        token: &str,
        jkt: Option<&str>,
    ) -> Result<(), DpopRefusal> {
        use DpopRefusal::InvalidProof;
        let mut proofs = headers.get_all(DPOP).iter();
        let (Some(proof), None) = (proofs.next(), proofs.next()) else {
            return Err(InvalidProof("Exactly one DPoP proof header is required"));
        };
        let proof = proof
            .to_str()
            .map_err(|_| InvalidProof("The DPoP proof is not a JWT"))?;
        let (claims, thumbprint) = decode_proof(proof)?;
        if claims.htm.as_deref() != Some(method) {
            return Err(InvalidProof(
                "The DPoP proof's htm is not the request method",
            ));
        }
        let htu = claims.htu.as_deref().unwrap_or_default();
        if htu.contains(['?', '#']) || !htu_matches(htu, resource, path) {
            return Err(InvalidProof(
                "The DPoP proof's htu is not this resource's URL",
            ));
        }
        let now = (self.clock)();
        let iat = claims.iat.unwrap_or_default();
        if iat + self.max_age < now || iat > now + FUTURE_LEEWAY {
            return Err(InvalidProof(
                "The DPoP proof's iat is outside the accepted window",
            ));
        }
        if claims.ath.as_deref() != Some(token_hash(token).as_str()) {
            return Err(InvalidProof(
                "The DPoP proof's ath does not match the access token",
            ));
        }
        if jkt != Some(thumbprint.as_str()) {
            return Err(InvalidProof(
                "The access token is not bound to the DPoP proof's key",
            ));
        }
        if !self.nonce_ok(claims.nonce.as_deref()) {
            return Err(DpopRefusal::UseNonce);
        }
        let jti = claims
            .jti
            .filter(|j| !j.is_empty() && j.len() <= 256)
            .ok_or(InvalidProof("The DPoP proof has no usable jti"))?;
        self.remember(jti, thumbprint, iat, now)
    }

    /// Refuses a proof seen before within the window; remembers a new one.
    fn remember(&self, jti: String, jkt: String, iat: u64, now: u64) -> Result<(), DpopRefusal> {
        let mut state = self.state.lock_unpoisoned();
        let state = &mut *state;
        if state.seen.len() >= PURGE_AT || state.per_key.get(&jkt) >= Some(&self.per_key) {
            let per_key = &mut state.per_key;
            state.seen.retain(|(key, _), until| {
                let keep = *until > now;
                if !keep && let Some(n) = per_key.get_mut(key) {
                    *n -= 1;
                }
                keep
            });
            state.per_key.retain(|_, n| *n > 0);
        }
        if state.seen.len() >= MAX_SEEN {
            return Err(DpopRefusal::InvalidProof(
                "Too many DPoP proofs in the window; retry shortly",
            ));
        }
        if state.per_key.get(&jkt) >= Some(&self.per_key) {
            tracing::warn!(
                jkt,
                "DPoP: one key sent more proofs than it may have remembered at once"
            );
            return Err(DpopRefusal::InvalidProof(
                "Too many DPoP proofs by this key in the window; retry shortly",
            ));
        }
        let until = iat.max(now) + self.max_age + FUTURE_LEEWAY;
        if state.seen.contains_key(&(jkt.clone(), jti.clone())) {
            return Err(DpopRefusal::InvalidProof("The DPoP proof was used before"));
        }
        *state.per_key.entry(jkt.clone()).or_default() += 1;
        state.seen.insert((jkt, jti), until);
        Ok(())
    }

    /// The `WWW-Authenticate` challenge of `refusal`.
    pub(crate) fn challenge(&self, refusal: &DpopRefusal, metadata_url: &str) -> String {
        let algs = ALGORITHMS.map(|a| format!("{a:?}")).join(" ");
        let (error, description) = refusal.error();
        match error {
            Some(error) => format!(
                "DPoP error=\"{error}\", error_description=\"{description}\", algs=\"{algs}\", resource_metadata=\"{metadata_url}\""
            ),
            None => format!("DPoP algs=\"{algs}\", resource_metadata=\"{metadata_url}\""),
        }
    }
}

impl DpopRefusal {
    /// The error code (none for a missing DPoP token) and the description.
    pub(crate) fn error(&self) -> (Option<&'static str>, &'static str) {
        match self {
            DpopRefusal::InvalidProof(why) => (Some("invalid_dpop_proof"), why),
            DpopRefusal::UseNonce => (
                Some("use_dpop_nonce"),
                "Resource server requires nonce in DPoP proof",
            ),
            DpopRefusal::Required => (None, "This resource takes DPoP-bound access tokens only"),
        }
    }
}

/// The proof's claims (signature checked with the key in its header) and that key's
/// thumbprint.
fn decode_proof(proof: &str) -> Result<(ProofClaims, String), DpopRefusal> {
    use DpopRefusal::InvalidProof;
    let raw_header: Value = proof
        .split('.')
        .next()
        .and_then(|h| URL_SAFE_NO_PAD.decode(h).ok())
        .and_then(|h| serde_json::from_slice(&h).ok())
        .ok_or(InvalidProof("The DPoP proof is not a JWT"))?;
    let header = jsonwebtoken::decode_header(proof)
        .map_err(|_| InvalidProof("The DPoP proof is not a JWT"))?;
    if header.typ.as_deref() != Some("dpop+jwt") {
        return Err(InvalidProof("The DPoP proof's typ is not dpop+jwt"));
    }
    if !ALGORITHMS.contains(&header.alg) {
        return Err(InvalidProof(
            "The DPoP proof's alg is not an accepted asymmetric one",
        ));
    }
    let raw_jwk = raw_header
        .get("jwk")
        .ok_or(InvalidProof("The DPoP proof has no jwk header"))?;
    if ["d", "p", "q", "dp", "dq", "qi", "k"]
        .iter()
        .any(|private| raw_jwk.get(private).is_some())
    {
        return Err(InvalidProof("The DPoP proof's jwk holds a private key"));
    }
    let thumbprint = thumbprint(raw_jwk).ok_or(InvalidProof("The DPoP proof's jwk is unusable"))?;
    let key = header
        .jwk
        .as_ref()
        .and_then(|jwk| DecodingKey::from_jwk(jwk).ok())
        .ok_or(InvalidProof("The DPoP proof's jwk is unusable"))?;
    let mut validation = Validation::new(header.alg);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_aud = false;
    let data = jsonwebtoken::decode::<ProofClaims>(proof, &key, &validation)
        .map_err(|_| InvalidProof("The DPoP proof's signature does not verify"))?;
    Ok((data.claims, thumbprint))
}

/// The RFC 7638 SHA-256 thumbprint of a public JWK: its required members, in order.
pub fn thumbprint(jwk: &Value) -> Option<String> {
    let member = |name: &str| -> Option<String> {
        let value = jwk.get(name)?.as_str()?;
        Some(format!("\"{name}\":{}", serde_json::to_string(value).ok()?))
    };
    let members: &[&str] = match jwk.get("kty")?.as_str()? {
        "EC" => &["crv", "kty", "x", "y"],
        "RSA" => &["e", "kty", "n"],
        "OKP" => &["crv", "kty", "x"],
        _ => return None,
    };
    let parts: Option<Vec<String>> = members.iter().map(|m| member(m)).collect();
    let canonical = format!("{{{}}}", parts?.join(","));
    Some(URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes())))
}

/// `ath`: base64url of the SHA-256 of the access token.
fn token_hash(token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes()))
}

/// An http(s) URL as RFC 9449 §4.3 compares it: scheme and host without case, the port
/// (the scheme's default when none is given), and the path without a trailing slash; the
/// query and fragment are not part of it.
#[derive(PartialEq, Eq)]
struct HtuParts {
    scheme: String,
    host: String,
    port: u16,
    path: String,
}

impl HtuParts {
    fn of(url: &str) -> Option<HtuParts> {
        let uri: Uri = url.parse().ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "https" => 443,
            "http" => 80,
            _ => return None,
        };
        Some(HtuParts {
            port: uri.port_u16().unwrap_or(default_port),
            host: uri.host()?.to_ascii_lowercase(),
            path: uri.path().trim_end_matches('/').to_owned(),
            scheme,
        })
    }
}

/// Whether a proof's `htu` names this request: the configured `resource`'s scheme and
/// authority, with the request's `path` (the URL the client sent to, as §4.3 asks, e.g. a
/// per-server endpoint under `router_all`) or the resource's own path.
fn htu_matches(htu: &str, resource: &str, path: &str) -> bool {
    let (Some(htu), Some(resource)) = (HtuParts::of(htu), HtuParts::of(resource)) else {
        return false;
    };
    let same_origin =
        htu.scheme == resource.scheme && htu.host == resource.host && htu.port == resource.port;
    same_origin && (htu.path == resource.path || htu.path == path.trim_end_matches('/'))
}

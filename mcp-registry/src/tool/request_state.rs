//! The 2026-07-28 `requestState`: what a tool's earlier rounds were answered, carried by the
//! client from one round of a multi round-trip request to the next, integrity-protected.
//!
//! The state is `base64url(payload) "." base64url(HMAC-SHA256(key, payload))`, the payload a
//! JSON object naming the request it belongs to (method, server, tool or prompt, a digest of
//! the arguments), when it was issued, and the answers so far. The keys are the registry's
//! ring ([`super::key_ring`]): one drawn from the OS on first use, or the host's
//! (`RegistryBuilder::request_state_keys`), so that every instance behind a load balancer
//! accepts the others' state; the first signs, all verify.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::protocol::{ErrorCode, ErrorObject};

type HmacSha256 = Hmac<Sha256>;

/// How long a `requestState` is accepted after it was issued, unless the host says otherwise.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(15 * 60);

/// State issued this far in the future (clock skew between instances) is still accepted.
const SKEW: u64 = 60;

/// The payload's format; a state of another format is refused.
const VERSION: u8 = 1;

/// A registry's key for `requestState`: its 32 bytes, and the HMAC keyed with them once
/// (cloned for each use rather than keyed again).
#[derive(Clone)]
pub(crate) struct RequestStateKey {
    bytes: [u8; 32],
    mac: HmacSha256,
}

impl RequestStateKey {
    pub(crate) fn new(bytes: [u8; 32]) -> Self {
        // HMAC takes a key of any length: this cannot fail.
        let mac = <HmacSha256 as Mac>::new_from_slice(&bytes).unwrap_or_else(|_| unreachable!());
        RequestStateKey { bytes, mac }
    }

    /// A key from the OS's random source (see [`crate::random`]).
    #[cfg(test)]
    pub(crate) fn random() -> Self {
        let mut bytes = [0u8; 32];
        crate::random::fill(&mut bytes).expect("the OS's random source");
        RequestStateKey::new(bytes)
    }

    /// The key's bytes.
    pub(crate) fn bytes(&self) -> &[u8; 32] {
        &self.bytes
    }

    /// `payload` signed, as the opaque string sent to the client.
    pub(crate) fn sign(&self, payload: &StatePayload) -> String {
        // Plain data with string keys: serializing it cannot fail.
        let json = serde_json::to_vec(payload).unwrap_or_default();
        let mut mac = self.mac.clone();
        mac.update(&json);
        let tag = mac.finalize().into_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&json),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// Whether this key's tag of `payload` is `tag`.
    fn signed(&self, payload: &[u8], tag: &[u8]) -> bool {
        let mut mac = self.mac.clone();
        mac.update(payload);
        mac.verify_slice(tag).is_ok()
    }

    /// The payload of `state`, when this key signed it (see [`verify`]).
    #[cfg(test)]
    pub(crate) fn verify(&self, state: &str) -> Result<StatePayload, ErrorObject> {
        verify(std::slice::from_ref(self), state)
    }
}

/// The payload of `state`, when one of `keys` signed it; -32602 otherwise. The state is
/// decoded once, whatever the number of keys. The payload's claims (request, expiry) are
/// checked by [`StatePayload::check`].
pub(crate) fn verify(keys: &[RequestStateKey], state: &str) -> Result<StatePayload, ErrorObject> {
    let (payload, tag) = state.split_once('.').ok_or_else(tampered)?;
    let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| tampered())?;
    let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| tampered())?;
    if !keys.iter().any(|key| key.signed(&payload, &tag)) {
        return Err(tampered());
    }
    let payload: StatePayload = serde_json::from_slice(&payload).map_err(|_| tampered())?;
    if payload.v != VERSION {
        return Err(tampered());
    }
    Ok(payload)
}

impl std::fmt::Debug for RequestStateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequestStateKey(..)")
    }
}

/// What a `requestState` says, once verified.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StatePayload {
    v: u8,
    /// The request's method: `tools/call`, `prompts/get`.
    method: String,
    /// The server it was sent to.
    server: String,
    /// The tool or prompt.
    name: String,
    /// [`arguments_digest`] of its arguments.
    args: String,
    /// Seconds since the Unix epoch when it was issued.
    iat: u64,
    /// [`caller_digest`] of the owner key of the caller it was issued to; absent for an
    /// anonymous caller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    who: Option<String>,
    /// The answers so far, by input key.
    pub(crate) answers: Map<String, Value>,
}

/// Which request a state belongs to.
#[derive(Debug, Clone)]
pub(crate) struct StateScope {
    pub(crate) method: &'static str,
    pub(crate) server: String,
    pub(crate) name: String,
    pub(crate) args: String,
    /// [`caller_digest`] of the caller's owner key; `None`: anonymous.
    pub(crate) who: Option<String>,
}

impl StatePayload {
    /// A payload for `scope`, issued now, carrying `answers`.
    pub(crate) fn new(scope: &StateScope, answers: Map<String, Value>) -> Self {
        StatePayload {
            v: VERSION,
            method: scope.method.to_owned(),
            server: scope.server.clone(),
            name: scope.name.clone(),
            args: scope.args.clone(),
            iat: now_secs(),
            who: scope.who.clone(),
            answers,
        }
    }

    /// -32602 unless this state was issued for `scope` within `ttl`.
    pub(crate) fn check(&self, scope: &StateScope, ttl: Duration) -> Result<(), ErrorObject> {
        if self.method != scope.method
            || self.server != scope.server
            || self.name != scope.name
            || self.args != scope.args
        {
            return Err(ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!(
                    "`requestState` belongs to another request: it was issued for {} {:?} with other arguments or on another server",
                    self.method, self.name
                ),
            ));
        }
        if self.who != scope.who {
            return Err(ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                "`requestState` belongs to another caller: it was issued to whoever sent the first request, and only they may send it back",
            ));
        }
        let now = now_secs();
        if self.iat > now.saturating_add(SKEW) || now.saturating_sub(self.iat) > ttl.as_secs() {
            return Err(ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                "`requestState` has expired: call again without it to start over",
            ));
        }
        Ok(())
    }
}

pub(crate) fn tampered() -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        "`requestState` failed its integrity check: send it back exactly as the server returned it",
    )
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A digest of a caller's [`owner`](crate::Caller::owner) key: what a `requestState` binds
/// (readable by its holder, so it names no subject or session id in the clear).
pub(crate) fn caller_digest(owner: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(owner.as_bytes()))
}

/// A digest of a request's arguments that does not depend on the order of object members:
/// base64url of SHA-256 over a canonical form (members sorted by key).
pub(crate) fn arguments_digest(arguments: &Map<String, Value>) -> String {
    let mut hasher = Sha256::new();
    digest_object(&mut hasher, arguments);
    URL_SAFE_NO_PAD.encode(hasher.finalize())
}

fn digest_object(hasher: &mut Sha256, object: &Map<String, Value>) {
    let mut members: Vec<(&String, &Value)> = object.iter().collect();
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    hasher.update(b"{");
    for (key, value) in members {
        digest_string(hasher, key);
        digest_value(hasher, value);
    }
    hasher.update(b"}");
}

fn digest_string(hasher: &mut Sha256, s: &str) {
    hasher.update((s.len() as u64).to_le_bytes());
    hasher.update(s.as_bytes());
}

fn digest_value(hasher: &mut Sha256, value: &Value) {
    match value {
        Value::Null => hasher.update(b"n"),
        Value::Bool(b) => hasher.update(if *b { b"t" } else { b"f" }),
        Value::Number(n) => {
            hasher.update(b"#");
            digest_string(hasher, &n.to_string());
        }
        Value::String(s) => {
            hasher.update(b"s");
            digest_string(hasher, s);
        }
        Value::Array(items) => {
            hasher.update(b"[");
            for item in items {
                digest_value(hasher, item);
            }
            hasher.update(b"]");
        }
        Value::Object(object) => digest_object(hasher, object),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scope() -> StateScope {
        StateScope {
            method: "tools/call",
            server: "s".into(),
            name: "t".into(),
            args: arguments_digest(json!({"a": 1}).as_object().unwrap()),
            who: Some(caller_digest("sub:ada")),
        }
    }

    #[test]
    fn signed_state_round_trips_and_tampering_is_refused() {
        let key = RequestStateKey::random();
        let mut answers = Map::new();
        answers.insert("k".into(), json!({"action": "decline"}));
        let payload = StatePayload::new(&scope(), answers);
        let state = key.sign(&payload);
        assert_eq!(key.verify(&state).unwrap(), payload);
        payload.check(&scope(), DEFAULT_TTL).unwrap();

        for forged in [
            format!("{state}-TAMPERED"),
            state.replacen('.', "x.", 1),
            String::new(),
            "not-a-state".into(),
            "..".into(),
        ] {
            let e = key.verify(&forged).unwrap_err();
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{forged}");
        }
        // Another registry's key.
        assert!(RequestStateKey::random().verify(&state).is_err());
    }

    #[test]
    fn state_is_bound_to_its_request_and_expires() {
        let payload = StatePayload::new(&scope(), Map::new());
        let other = StateScope {
            args: arguments_digest(json!({"a": 2}).as_object().unwrap()),
            ..scope()
        };
        assert!(payload.check(&other, DEFAULT_TTL).is_err());
        for who in [None, Some(caller_digest("sub:bob"))] {
            let replayed = StateScope { who, ..scope() };
            let refused = payload.check(&replayed, DEFAULT_TTL).unwrap_err();
            assert!(
                refused.message.contains("another caller"),
                "{}",
                refused.message
            );
        }
        let old = StatePayload {
            iat: now_secs() - 120,
            ..payload
        };
        assert!(old.check(&scope(), Duration::from_secs(60)).is_err());
        old.check(&scope(), DEFAULT_TTL).unwrap();
    }

    #[test]
    fn the_digest_ignores_member_order() {
        let a = json!({"x": 1, "y": {"b": [1, "2"], "a": null}});
        let b = json!({"y": {"a": null, "b": [1, "2"]}, "x": 1});
        assert_eq!(
            arguments_digest(a.as_object().unwrap()),
            arguments_digest(b.as_object().unwrap())
        );
        let c = json!({"x": 1, "y": {"b": [1, 2], "a": null}});
        assert_ne!(
            arguments_digest(a.as_object().unwrap()),
            arguments_digest(c.as_object().unwrap())
        );
    }
}

//! [`RequestStateKeys`]: the keys that sign and verify 2026-07-28 `requestState`, shared by
//! every replica of a server and rotated while it runs.

use std::fmt;
use std::sync::Arc;

use arc_swap::ArcSwap;
use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use sha2::{Digest as _, Sha256};

use super::request_state::{RequestStateKey, StatePayload, verify};
use crate::protocol::ErrorObject;

/// The keys of 2026-07-28 `requestState` (HMAC-SHA256): the first signs, every one verifies.
///
/// A handle: cheap to clone, every clone the same ring. Give one to
/// [`RegistryBuilder::request_state_keys`](crate::RegistryBuilder::request_state_keys) and
/// keep another to rotate the keys while the registry serves; a request already under way
/// keeps the keys it started with.
///
/// Replicas behind a load balancer must all accept a key before any of them signs with it,
/// so a rotation has three steps, each done on every replica before the next:
///
/// 1. [`accept`](Self::accept) the new key (it verifies, it does not sign yet);
/// 2. [`rotate`](Self::rotate) to it (it signs; the old key still verifies, so the state
///    issued before keeps working);
/// 3. after the request-state TTL (default 15 minutes), [`retire`](Self::retire) the old one.
///
/// With keys from the environment or a file ([`parse`](Self::parse)), the same three steps
/// are three lists: `OLD,NEW`, then `NEW,OLD`, then `NEW`, each applied with
/// [`replace`](Self::replace) (or a restart).
///
/// ```
/// use mcp_registry::{Registry, tool::RequestStateKeys};
/// let keys = RequestStateKeys::new([1; 32]);
/// let registry = Registry::builder().request_state_keys(keys.clone()).build();
/// keys.accept([2; 32]); // on every replica, then:
/// keys.rotate([2; 32]); // on every replica, then, a TTL later:
/// keys.retire(&[1; 32]).unwrap();
/// assert_eq!(keys.fingerprints().len(), 1);
/// # drop(registry);
/// ```
#[derive(Clone)]
pub struct RequestStateKeys {
    ring: Arc<ArcSwap<KeySet>>,
}

/// The keys at one moment: `keys[0]` signs; none is repeated.
#[derive(Clone)]
pub(crate) struct KeySet {
    keys: Vec<RequestStateKey>,
}

impl fmt::Debug for KeySet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.keys.iter().map(|key| fingerprint(key.bytes())))
            .finish()
    }
}

impl KeySet {
    fn new(keys: Vec<[u8; 32]>) -> Self {
        let mut set = KeySet { keys: Vec::new() };
        for key in keys {
            if !set.contains(&key) {
                set.keys.push(RequestStateKey::new(key));
            }
        }
        set
    }

    fn contains(&self, key: &[u8; 32]) -> bool {
        self.keys.iter().any(|k| k.bytes() == key)
    }

    fn bytes(&self) -> Vec<[u8; 32]> {
        self.keys.iter().map(|key| *key.bytes()).collect()
    }

    /// `payload` signed with the signing key.
    pub(crate) fn sign(&self, payload: &StatePayload) -> String {
        // A ring is never empty: every way to make or change one keeps a signing key.
        self.keys
            .first()
            .map(|key| key.sign(payload))
            .unwrap_or_default()
    }

    /// The payload of `state`, when one of the keys signed it; -32602 otherwise.
    pub(crate) fn verify(&self, state: &str) -> Result<StatePayload, ErrorObject> {
        verify(&self.keys, state)
    }
}

impl RequestStateKeys {
    /// A ring of one key, which signs.
    pub fn new(key: [u8; 32]) -> Self {
        Self::of(KeySet::new(vec![key]))
    }

    /// A ring of `keys`, the first signing, the others verifying only (duplicates dropped).
    /// Fails when there is none.
    pub fn from_keys(
        keys: impl IntoIterator<Item = [u8; 32]>,
    ) -> Result<Self, RequestStateKeysError> {
        let keys: Vec<[u8; 32]> = keys.into_iter().collect();
        if keys.is_empty() {
            return Err(RequestStateKeysError::Empty {
                origin: "the list given to RequestStateKeys::from_keys".to_owned(),
            });
        }
        Ok(Self::of(KeySet::new(keys)))
    }

    /// One random key, good for this process only (what a registry uses when the host sets
    /// no key).
    ///
    /// # Panics
    ///
    /// When the operating system has no random source (there is no weaker fallback for a
    /// key); [`try_random`](Self::try_random) returns that as an error.
    pub fn random() -> Self {
        Self::try_random().unwrap_or_else(|e| panic!("{e}"))
    }

    /// One random key from the operating system's random source, or why there is none.
    pub fn try_random() -> Result<Self, RequestStateKeysError> {
        let mut bytes = [0u8; 32];
        crate::random::fill(&mut bytes).map_err(|e| RequestStateKeysError::NoRandomness {
            reason: e.to_string(),
        })?;
        Ok(Self::new(bytes))
    }

    /// The keys written as text: each 32 bytes in base64 (standard or URL-safe alphabet,
    /// padded or not), separated by commas, the signing key first. Spaces and newlines
    /// around a key are ignored, so the text may come from a file. Make a key with
    /// `openssl rand -base64 32`.
    pub fn parse(text: &str) -> Result<Self, RequestStateKeysError> {
        parse_in(text, "the request-state key list")
    }

    /// The keys in the environment variable `name`, written as [`parse`](Self::parse) reads
    /// them (for example `MCP_REQUEST_STATE_KEYS=NEW_KEY_BASE64,OLD_KEY_BASE64`). Fails,
    /// saying what to do, when the variable is unset or a key is malformed; the error never
    /// shows key material.
    pub fn from_env(name: &str) -> Result<Self, RequestStateKeysError> {
        let origin = format!("the environment variable {name}");
        match std::env::var(name) {
            Ok(text) => parse_in(&text, &origin),
            Err(std::env::VarError::NotPresent) => Err(RequestStateKeysError::Missing { origin }),
            Err(std::env::VarError::NotUnicode(_)) => Err(RequestStateKeysError::NotBase64 {
                origin,
                position: 1,
                reason: "the value is not UTF-8".to_owned(),
            }),
        }
    }

    fn of(set: KeySet) -> Self {
        RequestStateKeys {
            ring: Arc::new(ArcSwap::from_pointee(set)),
        }
    }

    /// The keys as they are now, for one request.
    pub(crate) fn current(&self) -> Arc<KeySet> {
        self.ring.load_full()
    }

    /// Changes the ring in one step (concurrent changes are applied one after another).
    fn change(
        &self,
        f: impl Fn(&KeySet) -> Result<Vec<[u8; 32]>, RequestStateKeysError>,
    ) -> Result<(), RequestStateKeysError> {
        let mut failure = None;
        self.ring.rcu(|set| match f(set) {
            Ok(keys) => {
                failure = None;
                Arc::new(KeySet::new(keys))
            }
            Err(e) => {
                failure = Some(e);
                Arc::clone(set)
            }
        });
        failure.map_or(Ok(()), Err)
    }

    /// Step 1 of a rotation: `key` verifies from now on but does not sign. Nothing changes
    /// when it is already in the ring.
    pub fn accept(&self, key: [u8; 32]) {
        let _ = self.change(|set| {
            let mut keys = set.bytes();
            if !set.contains(&key) {
                keys.push(key);
            }
            Ok(keys)
        });
    }

    /// Step 2: `key` signs from now on (added when it was not in the ring); the key that
    /// signed before keeps verifying until it is [`retire`](Self::retire)d.
    pub fn rotate(&self, key: [u8; 32]) {
        let _ = self.change(|set| {
            let mut keys = vec![key];
            keys.extend(set.bytes().into_iter().filter(|k| *k != key));
            Ok(keys)
        });
    }

    /// Step 3: `key` no longer verifies (a state it signed is refused, and its client starts
    /// over). Nothing changes when it is not in the ring; the signing key cannot be retired:
    /// [`rotate`](Self::rotate) to another first.
    pub fn retire(&self, key: &[u8; 32]) -> Result<(), RequestStateKeysError> {
        self.change(|set| {
            if set.keys.first().is_some_and(|k| k.bytes() == key) {
                return Err(RequestStateKeysError::RetiringSigningKey {
                    fingerprint: fingerprint(key),
                });
            }
            Ok(set.bytes().into_iter().filter(|k| k != key).collect())
        })
    }

    /// This ring's keys become `other`'s (for keys read again from the environment or a
    /// file); `other` stays a ring of its own.
    pub fn replace(&self, other: &RequestStateKeys) {
        self.ring.store(other.current());
    }

    /// A fingerprint of each key, the signing key's first: 12 hex digits of a SHA-256 over
    /// the key, enough to tell keys apart in logs without showing them.
    pub fn fingerprints(&self) -> Vec<String> {
        self.current()
            .keys
            .iter()
            .map(|key| fingerprint(key.bytes()))
            .collect()
    }
}

impl fmt::Debug for RequestStateKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RequestStateKeys")
            .field(&self.fingerprints())
            .finish()
    }
}

/// The fingerprint of `key` (see [`RequestStateKeys::fingerprints`]).
fn fingerprint(key: &[u8; 32]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"mcp-registry request-state key\0");
    hasher.update(key);
    hasher.finalize()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Base64 with either alphabet (URL-safe characters mapped to the standard ones first),
/// padding optional.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

fn parse_in(text: &str, origin: &str) -> Result<RequestStateKeys, RequestStateKeysError> {
    let mut keys = Vec::new();
    for (index, item) in text.split(',').map(str::trim).enumerate() {
        let position = index + 1;
        if item.is_empty() {
            if text.trim().is_empty() {
                break;
            }
            return Err(RequestStateKeysError::NotBase64 {
                origin: origin.to_owned(),
                position,
                reason: "it is empty (two commas in a row, or one at an end)".to_owned(),
            });
        }
        let standard: String = item
            .chars()
            .map(|c| match c {
                '-' => '+',
                '_' => '/',
                c => c,
            })
            .collect();
        let bytes = BASE64
            .decode(standard)
            .map_err(|e| RequestStateKeysError::NotBase64 {
                origin: origin.to_owned(),
                position,
                reason: e.to_string(),
            })?;
        let key: [u8; 32] =
            bytes
                .try_into()
                .map_err(|b: Vec<u8>| RequestStateKeysError::WrongLength {
                    origin: origin.to_owned(),
                    position,
                    len: b.len(),
                })?;
        keys.push(key);
    }
    if keys.is_empty() {
        return Err(RequestStateKeysError::Empty {
            origin: origin.to_owned(),
        });
    }
    Ok(RequestStateKeys::of(KeySet::new(keys)))
}

/// Request-state keys that could not be read or changed. The message says what to fix and
/// never shows key material.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestStateKeysError {
    /// No random key can be made: the operating system's random source failed.
    #[error("{reason}")]
    NoRandomness {
        /// What failed.
        reason: String,
    },
    /// The environment variable is not set.
    #[error(
        "{origin} is not set: set it to the request-state keys, each 32 bytes in base64 (`openssl rand -base64 32`), comma-separated, the signing key first"
    )]
    Missing {
        /// Where the keys were looked for.
        origin: String,
    },
    /// No key at all.
    #[error(
        "{origin} holds no key: give at least one, 32 bytes in base64 (`openssl rand -base64 32`)"
    )]
    Empty {
        /// Where the keys were read from.
        origin: String,
    },
    /// A key is not base64.
    #[error(
        "key {position} of {origin} is not base64 ({reason}): write each key as 32 bytes in base64 (`openssl rand -base64 32`), keys separated by commas"
    )]
    NotBase64 {
        /// Where the keys were read from.
        origin: String,
        /// Which key, counting from 1.
        position: usize,
        /// What the decoder said.
        reason: String,
    },
    /// A key is base64 but not 32 bytes long.
    #[error(
        "key {position} of {origin} is {len} bytes, not 32: make a key with `openssl rand -base64 32`"
    )]
    WrongLength {
        /// Where the keys were read from.
        origin: String,
        /// Which key, counting from 1.
        position: usize,
        /// How many bytes it decodes to.
        len: usize,
    },
    /// [`RequestStateKeys::retire`] was given the key that signs.
    #[error(
        "the key {fingerprint} signs requestState and cannot be retired: rotate to another key first"
    )]
    RetiringSigningKey {
        /// The key's fingerprint.
        fingerprint: String,
    },
}

#[cfg(test)]
mod tests;

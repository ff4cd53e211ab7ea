//! Random bytes, from one place: the OS's source, and should the OS have none, the process's
//! hash seeds (themselves drawn at random per `RandomState`) mixed with the clock, so a key or
//! a nonce is still unpredictable from outside and never repeats within a process.

use std::hash::{BuildHasher as _, Hasher as _};
use std::time::{SystemTime, UNIX_EPOCH};

/// Fills `bytes` with random bytes.
pub(crate) fn fill(bytes: &mut [u8]) {
    if getrandom::fill(bytes).is_ok() {
        return;
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    for chunk in bytes.chunks_mut(8) {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(now);
        chunk.copy_from_slice(&h.finish().to_le_bytes()[..chunk.len()]);
    }
}

/// 128 random bits, base64url without padding (22 characters): an id or a nonce.
pub(crate) fn token() -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; 16];
    fill(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_are_22_characters_and_differ() {
        assert_eq!(super::token().len(), 22);
        assert_ne!(super::token(), super::token());
    }
}

//! Random bytes, from one place: the operating system's source, and nothing else. Keys,
//! nonces, session ids and task ids are made from it; should the OS have none, the operation
//! that needs them fails with [`RandomUnavailable`] (there is no weaker fallback).

/// The operating system supplied no random bytes; what needed them (a key, a nonce, an id)
/// was not made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the operating system's random source failed ({0}); no key, nonce or id is made without it"
)]
pub(crate) struct RandomUnavailable(String);

/// Fills `bytes` from the OS's random source.
pub(crate) fn fill(bytes: &mut [u8]) -> Result<(), RandomUnavailable> {
    getrandom::fill(bytes).map_err(|e| RandomUnavailable(e.to_string()))
}

/// 128 random bits, base64url without padding (22 characters): an id or a nonce.
pub(crate) fn token() -> Result<String, RandomUnavailable> {
    use base64::Engine as _;
    let mut bytes = [0u8; 16];
    fill(&mut bytes)?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_22_characters_and_differ() {
        assert_eq!(token().unwrap().len(), 22);
        assert_ne!(token().unwrap(), token().unwrap());
    }

    #[test]
    fn a_failing_source_is_an_error_naming_it() {
        let error = RandomUnavailable("no entropy".to_owned());
        let message = error.to_string();
        assert!(
            message.contains("random source failed (no entropy)"),
            "{message}"
        );
        assert!(message.contains("no key, nonce or id"), "{message}");
    }
}

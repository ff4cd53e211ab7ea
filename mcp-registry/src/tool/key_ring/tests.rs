use super::*;
use crate::tool::request_state::{StateScope, arguments_digest};
use serde_json::{Map, json};

fn payload() -> StatePayload {
    let scope = StateScope {
        method: "tools/call",
        server: "s".into(),
        name: "t".into(),
        args: arguments_digest(json!({}).as_object().unwrap()),
        who: None,
    };
    StatePayload::new(&scope, Map::new())
}

fn b64(key: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(key)
}

#[test]
fn the_first_key_signs_and_every_key_verifies() {
    let keys = RequestStateKeys::from_keys([[1; 32], [2; 32], [1; 32]]).unwrap();
    assert_eq!(keys.fingerprints().len(), 2, "duplicates dropped");
    let by_first = keys.current().sign(&payload());
    let by_second = RequestStateKeys::new([2; 32]).current().sign(&payload());
    keys.current().verify(&by_first).unwrap();
    keys.current().verify(&by_second).unwrap();
    // Only the first signs: a ring of the second alone does not accept the ring's state.
    assert!(
        RequestStateKeys::new([2; 32])
            .current()
            .verify(&by_first)
            .is_err()
    );
    assert!(RequestStateKeys::from_keys([]).is_err());
}

#[test]
fn rotation_in_three_steps_keeps_earlier_state_valid() {
    let a = RequestStateKeys::new([1; 32]);
    let b = RequestStateKeys::new([1; 32]);
    let old_state = a.current().sign(&payload());
    // 1: accepted everywhere, signing nowhere yet.
    a.accept([2; 32]);
    b.accept([2; 32]);
    assert_eq!(a.fingerprints()[0], fingerprint(&[1; 32]));
    // 2: a signs with the new key first; b already accepts it.
    a.rotate([2; 32]);
    let new_state = a.current().sign(&payload());
    b.current().verify(&new_state).unwrap();
    a.current().verify(&old_state).unwrap();
    b.rotate([2; 32]);
    assert_eq!(a.fingerprints(), b.fingerprints());
    // The signing key cannot go; the old one can, and its state is refused after.
    let e = a.retire(&[2; 32]).unwrap_err();
    assert!(matches!(
        e,
        RequestStateKeysError::RetiringSigningKey { .. }
    ));
    assert!(e.to_string().contains("rotate to another key first"), "{e}");
    a.retire(&[1; 32]).unwrap();
    a.retire(&[9; 32]).unwrap();
    assert!(a.current().verify(&old_state).is_err());
    a.current().verify(&new_state).unwrap();
    assert_eq!(a.fingerprints(), vec![fingerprint(&[2; 32])]);
}

#[test]
fn a_snapshot_taken_by_a_request_outlives_a_change() {
    let keys = RequestStateKeys::new([1; 32]);
    let snapshot = keys.current();
    let state = snapshot.sign(&payload());
    keys.replace(&RequestStateKeys::new([3; 32]));
    snapshot.verify(&state).unwrap();
    assert!(keys.current().verify(&state).is_err());
}

#[test]
fn keys_parse_from_text_in_either_base64_alphabet() {
    let a = [0xfb; 32];
    let b = [0x3e; 32];
    let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
    let keys = RequestStateKeys::parse(&format!(" {} ,\n{url_safe}\n", b64(&a))).unwrap();
    assert_eq!(keys.fingerprints(), vec![fingerprint(&a), fingerprint(&b)]);
}

#[test]
fn malformed_keys_are_refused_saying_which_and_why() {
    let good = b64(&[1; 32]);
    let short = b64(&[1; 16]);
    let cases = [
        ("", "holds no key"),
        ("  \n", "holds no key"),
        (&*format!("{good},,{good}") as &str, "key 2 of"),
        (&format!("{good},"), "key 2 of"),
        (
            "not base64!",
            "key 1 of the request-state key list is not base64",
        ),
        (
            &format!("{good},{short}"),
            "key 2 of the request-state key list is 16 bytes, not 32",
        ),
    ];
    for (text, expected) in cases {
        let e = RequestStateKeys::parse(text).unwrap_err().to_string();
        assert!(e.contains(expected), "{text:?}: {e}");
        assert!(e.contains("openssl rand -base64 32"), "{e}");
        assert!(!e.contains(&good), "no key material in {e}");
    }
}

#[test]
fn an_unset_variable_says_what_to_set() {
    let e = RequestStateKeys::from_env("MCP_REGISTRY_TEST_KEYS_NEVER_SET_7d1f")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the environment variable MCP_REGISTRY_TEST_KEYS_NEVER_SET_7d1f is not set"),
        "{e}"
    );
}

#[test]
fn debug_shows_fingerprints_only() {
    let keys = RequestStateKeys::new([7; 32]);
    let shown = format!("{keys:?}");
    assert!(shown.contains(&fingerprint(&[7; 32])), "{shown}");
    assert!(!shown.contains("7, 7"), "{shown}");
}

//! Two collected servers with one name are reported, naming both definitions.

use mcp_registry::{Registry, RegistryError, mcp_tool, server};

/// Ping.
#[mcp_tool]
async fn ping() -> &'static str {
    "pong"
}

server!(name = "twin", tools = [ping]);
server!(name = "twin", tools = [ping]);

#[test]
fn duplicate_server_names_are_an_error_when_collecting() {
    let err = Registry::try_collected().map(|_| ()).unwrap_err();
    let RegistryError::DuplicateServer {
        name,
        first,
        second,
    } = &err
    else {
        panic!("expected DuplicateServer, got {err}");
    };
    assert_eq!(name, "twin");
    assert!(first.starts_with("tests/collect_duplicate.rs:"), "{first}");
    assert!(
        second.starts_with("tests/collect_duplicate.rs:"),
        "{second}"
    );
    assert_ne!(first, second);
    assert!(err.to_string().contains(first.as_str()) && err.to_string().contains(second.as_str()));
}

#[test]
#[should_panic(expected = "two servers are named \"twin\"")]
fn collected_panics_with_the_same_message() {
    let _ = Registry::collected();
}

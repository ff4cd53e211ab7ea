//! What a driver relies on: handshake replies with their id, handshake deadlines, the
//! names HTTP mirrors.

use std::time::{Duration, Instant};

use serde_json::json;

use super::tests::{info, ready_legacy};
use super::*;
use crate::protocol::CallToolParams;

#[test]
fn handshake_replies_carry_their_id_and_the_handshake_times_out_by_the_machine() {
    let mut config = ClientConfig::new(info()).handshake_timeout(Duration::from_secs(5));
    config.version = VersionPreference::Auto;
    let mut m = ClientMachine::new(config);
    let start = Instant::now();
    let d = m.discover(start).unwrap();
    assert_eq!(m.next_deadline(), Some(start + Duration::from_secs(5)));
    assert!(m.check_timeouts(start + Duration::from_secs(4)).is_empty());
    let timed_out = m.check_timeouts(start + Duration::from_secs(5));
    assert_eq!(timed_out.len(), 1);
    assert_eq!(timed_out[0].id, d.id);
    assert!(matches!(
        m.handshake_timed_out(&timed_out[0]),
        Handshake::FallBackToInitialize { .. }
    ));
    let init = m.initialize(start).unwrap();
    let reply = json!({"jsonrpc": "2.0", "id": init.id.to_value(), "result": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"}}});
    let Incoming::Handshake {
        id,
        step: Handshake::Initialized(_),
    } = m.handle(reply)
    else {
        panic!("not initialized");
    };
    assert_eq!(id, init.id);
}

#[test]
fn requests_name_what_they_call_for_http_headers() {
    let mut m = ready_legacy();
    let now = Instant::now();
    let call = CallToolParams {
        name: "add".into(),
        ..Default::default()
    };
    let tool = m
        .call_tool(&call, &RequestSettings::default(), now)
        .unwrap();
    assert_eq!(tool.name.as_deref(), Some("add"));
    let read = m
        .read_resource("file:///a", &RequestSettings::default(), now)
        .unwrap();
    assert_eq!(read.name.as_deref(), Some("file:///a"));
    let list = m.list_tools(None, now).unwrap();
    assert_eq!(list.name, None);
}

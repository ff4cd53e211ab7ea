use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::*;

mod operations;
use crate::protocol::{
    CallToolParams, CompleteParams, ErrorCode, ErrorObject, GetPromptParams, Implementation,
    ListenParams, LoggingLevel, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION, ProgressNotificationParams, ProtocolEra, ProtocolVersion, RequestId,
};

pub(super) fn info() -> Implementation {
    Implementation {
        name: "test-client".into(),
        version: "1.0.0".into(),
        title: None,
    }
}

fn machine(version: VersionPreference) -> ClientMachine {
    let mut config = ClientConfig::new(info());
    config.version = version;
    ClientMachine::new(config)
}

fn legacy() -> ClientMachine {
    machine(VersionPreference::Exactly(ProtocolVersion::V2025_11_25))
}

fn result(id: &RequestId, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.to_value(), "result": result})
}

fn error(id: &RequestId, code: i32, data: Option<Value>) -> Value {
    let mut e = json!({"code": code, "message": "nope"});
    if let Some(d) = data {
        e["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id.to_value(), "error": e})
}

fn init_result(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {"tools": {"listChanged": true}},
           "serverInfo": {"name": "srv", "version": "2.0"}, "instructions": "be nice"})
}

fn discover_result(versions: Value) -> Value {
    json!({"supportedVersions": versions, "capabilities": {"tools": {}}, "resultType": "complete",
           "ttlMs": 0, "cacheScope": "private",
           "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "3"}}})
}

pub(super) fn ready_legacy() -> ClientMachine {
    let mut m = legacy();
    let init = m.initialize(Instant::now()).unwrap();
    m.handle(result(&init.id, init_result("2025-11-25")));
    m.initialized().unwrap();
    m
}

fn ready_modern() -> ClientMachine {
    let mut m = machine(VersionPreference::Auto);
    let d = m.discover(Instant::now()).unwrap();
    let out = m.handle(result(
        &d.id,
        discover_result(json!(["2026-07-28", "2025-11-25"])),
    ));
    assert!(matches!(
        out,
        Incoming::Handshake {
            step: Handshake::Discovered(_),
            ..
        }
    ));
    m
}

#[test]
fn legacy_handshake_walks_uninitialized_initializing_ready() {
    let mut m = legacy();
    assert_eq!(m.lifecycle(), &ClientLifecycle::Uninitialized);
    assert!(!m.starts_with_discover());
    let init = m.initialize(Instant::now()).unwrap();
    assert_eq!(init.method(), "initialize");
    let params = init.request.params.as_ref().unwrap();
    assert_eq!(params["protocolVersion"], "2025-11-25");
    assert_eq!(params["clientInfo"]["name"], "test-client");
    assert_eq!(m.lifecycle(), &ClientLifecycle::Initializing);
    assert!(m.initialized().is_err(), "initialized before the result");
    assert!(m.initialize(Instant::now()).is_err(), "initialize twice");
    let out = m.handle(result(&init.id, init_result("2025-06-18")));
    let Incoming::Handshake {
        step: Handshake::Initialized(r),
        ..
    } = out
    else {
        panic!("{out:?}")
    };
    assert_eq!(r.server_info.name, "srv");
    assert_eq!(m.negotiated_version(), Some(ProtocolVersion::V2025_06_18));
    assert_eq!(m.era(), Some(ProtocolEra::Legacy));
    assert_eq!(m.instructions(), Some("be nice"));
    assert!(m.server_capabilities().unwrap().tools.is_some());
    let n = m.initialized().unwrap();
    assert_eq!(n.method, "notifications/initialized");
    assert!(m.is_ready());
    assert_eq!(m.pending_count(), 0);
}

#[test]
fn initialize_with_an_unknown_or_newer_version_fails() {
    let mut m = legacy();
    let init = m.initialize(Instant::now()).unwrap();
    let out = m.handle(result(&init.id, init_result("1999-01-01")));
    assert!(
        matches!(out, Incoming::Handshake { step: Handshake::Failed(ref r), .. } if r.contains("1999-01-01"))
    );
    assert!(matches!(m.lifecycle(), ClientLifecycle::Error(_)));

    let mut m = machine(VersionPreference::Exactly(ProtocolVersion::V2025_03_26));
    let init = m.initialize(Instant::now()).unwrap();
    let out = m.handle(result(&init.id, init_result("2025-11-25")));
    assert!(matches!(
        out,
        Incoming::Handshake {
            step: Handshake::Failed(_),
            ..
        }
    ));

    let mut m = legacy();
    let init = m.initialize(Instant::now()).unwrap();
    let out = m.handle(error(&init.id, -32603, None));
    assert!(matches!(
        out,
        Incoming::Handshake {
            step: Handshake::Failed(_),
            ..
        }
    ));
}

#[test]
fn discover_makes_a_modern_client_ready() {
    let mut m = machine(VersionPreference::Auto);
    assert!(m.starts_with_discover());
    let d = m.discover(Instant::now()).unwrap();
    let meta = &d.request.params.as_ref().unwrap()["_meta"];
    assert_eq!(meta[META_PROTOCOL_VERSION], "2026-07-28");
    assert_eq!(meta[META_CLIENT_INFO]["name"], "test-client");
    assert!(meta[META_CLIENT_CAPABILITIES].is_object());
    let out = m.handle(result(
        &d.id,
        discover_result(json!(["2026-07-28", "2099-01-01"])),
    ));
    assert!(matches!(
        out,
        Incoming::Handshake {
            step: Handshake::Discovered(_),
            ..
        }
    ));
    assert!(m.is_ready());
    assert_eq!(m.era(), Some(ProtocolEra::Modern));
    assert_eq!(m.server_info().unwrap().name, "modern");
    assert!(
        m.initialized().is_err(),
        "no initialized notification in 2026-07-28"
    );
    let list = m.list_tools(None, Instant::now()).unwrap();
    let meta = &list.request.params.as_ref().unwrap()["_meta"];
    assert_eq!(meta[META_PROTOCOL_VERSION], "2026-07-28");
}

#[test]
fn discover_falls_back_to_initialize_on_a_legacy_server() {
    // Any error that is not a recognized modern one: fall back.
    let mut m = machine(VersionPreference::Auto);
    let d = m.discover(Instant::now()).unwrap();
    let out = m.handle(error(&d.id, -32601, None));
    assert!(
        matches!(out, Incoming::Handshake { step: Handshake::FallBackToInitialize { version, .. }, .. } if version == ProtocolVersion::V2025_11_25)
    );
    assert_eq!(m.lifecycle(), &ClientLifecycle::Uninitialized);
    let init = m.initialize(Instant::now()).unwrap();
    assert!(init.request.params.as_ref().unwrap().get("_meta").is_none());

    // An unreadable result (a legacy server answering `{}`): fall back too.
    let mut m = machine(VersionPreference::Auto);
    let d = m.discover(Instant::now()).unwrap();
    let out = m.handle(result(&d.id, json!({})));
    assert!(matches!(
        out,
        Incoming::Handshake {
            step: Handshake::FallBackToInitialize { .. },
            ..
        }
    ));

    // Silence: fall back.
    let mut m = machine(VersionPreference::Auto);
    let d = m.discover(Instant::now()).unwrap();
    let silence = TimedOut {
        id: d.id.clone(),
        method: d.method().to_owned(),
        sent_at: Instant::now(),
    };
    assert!(matches!(
        m.handshake_timed_out(&silence),
        Handshake::FallBackToInitialize { .. }
    ));

    // A server that lists only legacy versions: initialize at its newest.
    let mut m = machine(VersionPreference::Auto);
    let d = m.discover(Instant::now()).unwrap();
    let out = m.handle(result(
        &d.id,
        discover_result(json!(["2025-03-26", "2025-06-18"])),
    ));
    assert!(
        matches!(out, Incoming::Handshake { step: Handshake::FallBackToInitialize { version, .. }, .. } if version == ProtocolVersion::V2025_06_18)
    );
    let init = m.initialize(Instant::now()).unwrap();
    assert_eq!(
        init.request.params.as_ref().unwrap()["protocolVersion"],
        "2025-06-18"
    );
}

#[test]
fn a_modern_error_never_falls_back() {
    let mut m = machine(VersionPreference::Auto);
    let d = m.discover(Instant::now()).unwrap();
    let out = m.handle(error(
        &d.id,
        -32022,
        Some(json!({"supported": ["2026-07-28"], "requested": "2026-07-28"})),
    ));
    assert!(matches!(
        out,
        Incoming::Handshake {
            step: Handshake::RetryDiscover,
            ..
        }
    ));
    let d2 = m.discover(Instant::now()).unwrap();
    assert_ne!(d.id, d2.id);

    // -32022 naming only legacy versions: initialize with the newest one.
    let mut m = machine(VersionPreference::Auto);
    let d = m.discover(Instant::now()).unwrap();
    let out = m.handle(error(
        &d.id,
        -32022,
        Some(json!({"supported": ["2025-06-18"]})),
    ));
    assert!(
        matches!(out, Incoming::Handshake { step: Handshake::FallBackToInitialize { version, .. }, .. } if version == ProtocolVersion::V2025_06_18)
    );

    // A pinned 2026-07-28 client fails instead of falling back.
    let mut m = machine(VersionPreference::Exactly(ProtocolVersion::V2026_07_28));
    let d = m.discover(Instant::now()).unwrap();
    assert!(matches!(
        m.handle(error(&d.id, -32601, None)),
        Incoming::Handshake {
            step: Handshake::Failed(_),
            ..
        }
    ));
    // ... and so does one the server speaks nothing of.
    let mut m = machine(VersionPreference::Auto);
    let d = m.discover(Instant::now()).unwrap();
    let out = m.handle(error(
        &d.id,
        -32022,
        Some(json!({"supported": ["3000-01-01"]})),
    ));
    assert!(matches!(
        out,
        Incoming::Handshake {
            step: Handshake::Failed(_),
            ..
        }
    ));
}

#[test]
fn requests_need_a_ready_client() {
    let mut m = legacy();
    let now = Instant::now();
    let e = m.list_tools(None, now).unwrap_err();
    assert_eq!(e.state, ClientLifecycle::Uninitialized);
    assert!(e.to_string().contains("tools/list"));
    assert!(m.ping(now).is_err());
    m.initialize(now).unwrap();
    assert!(m.ping(now).is_ok(), "ping is allowed while initializing");
    assert!(
        m.call_tool(&CallToolParams::default(), &RequestSettings::default(), now)
            .is_err()
    );
}

#[test]
fn modern_requests_carry_meta_and_the_log_level() {
    let mut m = ready_modern();
    let now = Instant::now();
    assert!(
        m.set_logging_level(LoggingLevel::Debug, now)
            .unwrap()
            .is_none()
    );
    let opts = RequestSettings {
        progress_token: Some(json!(7)),
        ..Default::default()
    };
    let r = m
        .call_tool(
            &CallToolParams {
                name: "t".into(),
                ..Default::default()
            },
            &opts,
            now,
        )
        .unwrap();
    let meta = &r.request.params.as_ref().unwrap()["_meta"];
    assert_eq!(meta[META_LOG_LEVEL], "debug");
    assert_eq!(meta["progressToken"], 7);
    assert_eq!(meta[META_PROTOCOL_VERSION], "2026-07-28");
    assert!(m.listen(&ListenParams::default(), now).is_ok());
}

#[test]
fn responses_match_pending_requests_by_id() {
    let mut m = ready_legacy();
    let now = Instant::now();
    let a = m.list_tools(None, now).unwrap();
    let b = m.ping(now).unwrap();
    let out = m.handle(result(&b.id, json!({})));
    assert_eq!(
        out,
        Incoming::Response {
            id: b.id.clone(),
            method: "ping".into(),
            result: json!({})
        }
    );
    let out = m.handle(error(&a.id, -32602, None));
    assert!(
        matches!(out, Incoming::Error { id: Some(ref id), method: Some(ref me), .. } if *id == a.id && me == "tools/list")
    );
    assert_eq!(m.pending_count(), 0);
    // A second reply to the same id is not ours.
    assert_eq!(
        m.handle(result(&a.id, json!({}))),
        Incoming::NotOurs(NotOurs::UnknownId(a.id.clone()))
    );
    // An error with no id.
    let out = m.handle(json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "parse"}}));
    assert!(matches!(out, Incoming::Error { id: None, .. }));
}

#[test]
fn malformed_messages_are_not_ours_and_never_panic() {
    let mut m = ready_legacy();
    for bad in [
        json!(null),
        json!([1, 2]),
        json!("text"),
        json!({"id": 1, "result": {}}),
        json!({"jsonrpc": "1.0", "id": 1, "result": {}}),
        json!({"jsonrpc": "2.0", "method": 5}),
        json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 1}),
        json!({"jsonrpc": "2.0", "result": {}}),
        json!({"jsonrpc": "2.0", "id": 1, "error": "bad"}),
        json!({"jsonrpc": "2.0", "method": "x", "params": [1]}),
    ] {
        let out = m.handle(bad.clone());
        assert!(
            matches!(out, Incoming::NotOurs(NotOurs::Malformed(_))),
            "{bad}: {out:?}"
        );
    }
    assert!(matches!(
        m.handle_text("{not json"),
        Incoming::NotOurs(NotOurs::Malformed(_))
    ));
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!([deep]);
    }
    assert!(matches!(
        m.handle(deep),
        Incoming::NotOurs(NotOurs::Malformed(_))
    ));
    // A request whose params are not an object is answered -32602.
    let out = m.handle(json!({"jsonrpc": "2.0", "id": 9, "method": "roots/list", "params": 3}));
    assert!(matches!(
        out,
        Incoming::Request(ServerRequest {
            kind: ServerRequestKind::Invalid { .. },
            ..
        })
    ));
    assert!(m.is_ready(), "malformed input changes nothing");
}

#[test]
fn server_requests_and_notifications_are_typed() {
    let mut m = ready_legacy();
    let req = |m: &mut ClientMachine, method: &str, params: Value| {
        m.handle(json!({"jsonrpc": "2.0", "id": "s1", "method": method, "params": params}))
    };
    assert!(matches!(
        req(&mut m, "ping", json!({})),
        Incoming::Request(ServerRequest {
            kind: ServerRequestKind::Ping,
            ..
        })
    ));
    assert!(matches!(
        req(&mut m, "roots/list", json!({})),
        Incoming::Request(ServerRequest {
            kind: ServerRequestKind::ListRoots,
            ..
        })
    ));
    let out = req(
        &mut m,
        "elicitation/create",
        json!({"message": "name?", "requestedSchema": {"type": "object"}}),
    );
    let Incoming::Request(ServerRequest {
        id,
        kind: ServerRequestKind::Elicit(p),
    }) = out
    else {
        panic!()
    };
    assert_eq!(id, RequestId::from("s1"));
    assert_eq!(p.message, "name?");
    let out = req(
        &mut m,
        "sampling/createMessage",
        json!({"messages": [], "maxTokens": 5}),
    );
    assert!(matches!(
        out,
        Incoming::Request(ServerRequest {
            kind: ServerRequestKind::CreateMessage(_),
            ..
        })
    ));
    let out = req(&mut m, "elicitation/create", json!({"nomessage": true}));
    assert!(
        matches!(out, Incoming::Request(ServerRequest { kind: ServerRequestKind::Invalid { ref error, .. }, .. }) if error.code == ErrorCode::INVALID_PARAMS)
    );
    assert!(matches!(
        req(&mut m, "x/y", json!({})),
        Incoming::Request(ServerRequest {
            kind: ServerRequestKind::Other { .. },
            ..
        })
    ));
}

#[test]
fn server_notifications_are_typed() {
    let mut m = ready_legacy();
    let note = |m: &mut ClientMachine, method: &str, params: Value| {
        m.handle(json!({"jsonrpc": "2.0", "method": method, "params": params}))
    };
    assert!(matches!(
        note(
            &mut m,
            "notifications/progress",
            json!({"progressToken": 1, "progress": 0.5})
        ),
        Incoming::Notification(ServerNotification::Progress(_))
    ));
    assert!(matches!(
        note(
            &mut m,
            "notifications/message",
            json!({"level": "info", "data": "hi"})
        ),
        Incoming::Notification(ServerNotification::Log(_))
    ));
    assert!(matches!(
        note(&mut m, "notifications/tools/list_changed", json!({})),
        Incoming::Notification(ServerNotification::ToolsListChanged)
    ));
    assert!(matches!(
        note(&mut m, "notifications/prompts/list_changed", json!(null)),
        Incoming::Notification(ServerNotification::PromptsListChanged)
    ));
    assert!(matches!(
        note(&mut m, "notifications/resources/list_changed", json!({})),
        Incoming::Notification(ServerNotification::ResourcesListChanged)
    ));
    assert!(matches!(
        note(
            &mut m,
            "notifications/resources/updated",
            json!({"uri": "u"})
        ),
        Incoming::Notification(ServerNotification::ResourceUpdated(_))
    ));
    assert!(matches!(
        note(&mut m, "notifications/cancelled", json!({"requestId": 3})),
        Incoming::Notification(ServerNotification::Cancelled(_))
    ));
    // A known notification with unreadable params is passed on untyped.
    assert!(matches!(
        note(&mut m, "notifications/progress", json!({"progress": "x"})),
        Incoming::Notification(ServerNotification::Other { .. })
    ));
}

#[test]
fn timeouts_are_checked_against_the_callers_clock() {
    let mut m = ready_legacy();
    let t0 = Instant::now();
    let short = RequestSettings {
        timeout: Some(Duration::from_secs(1)),
        ..Default::default()
    };
    let long = RequestSettings {
        timeout: Some(Duration::from_secs(10)),
        ..Default::default()
    };
    let a = m.request("a", None, &short, t0).unwrap();
    let b = m.request("b", None, &long, t0).unwrap();
    let _c = m
        .request("c", None, &RequestSettings::default(), t0)
        .unwrap();
    assert_eq!(m.next_deadline(), Some(t0 + Duration::from_secs(1)));
    assert!(m.check_timeouts(t0 + Duration::from_millis(999)).is_empty());
    let out = m.check_timeouts(t0 + Duration::from_secs(1));
    assert_eq!(
        out,
        vec![TimedOut {
            id: a.id.clone(),
            method: "a".into(),
            sent_at: t0
        }]
    );
    assert_eq!(m.pending_count(), 2);
    let out = m.check_timeouts(t0 + Duration::from_secs(3600));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].id, b.id);
    assert_eq!(m.pending_count(), 1, "no deadline, never times out");
    // A late reply is not ours.
    assert_eq!(
        m.handle(result(&a.id, json!({}))),
        Incoming::NotOurs(NotOurs::UnknownId(a.id))
    );
}

#[test]
fn cancel_forgets_the_request_and_builds_the_notification() {
    let mut m = ready_legacy();
    let r = m.list_tools(None, Instant::now()).unwrap();
    let n = m.cancel(&r.id, Some("user".into()));
    assert_eq!(n.method, "notifications/cancelled");
    let params = n.params.unwrap();
    assert_eq!(params["requestId"], r.id.to_value());
    assert_eq!(params["reason"], "user");
    assert_eq!(m.pending_count(), 0);
    assert!(!m.forget(&r.id));
}

#[test]
fn error_disconnect_reset_and_shutdown_transitions() {
    let mut m = ready_legacy();
    m.list_tools(None, Instant::now()).unwrap();
    m.mark_disconnected("pipe closed").unwrap();
    assert_eq!(
        m.lifecycle(),
        &ClientLifecycle::Disconnected("pipe closed".into())
    );
    assert_eq!(m.pending_count(), 0);
    assert!(m.ping(Instant::now()).is_err());
    assert!(
        m.mark_disconnected("again").is_err(),
        "only from initializing or ready"
    );
    m.reset().unwrap();
    assert_eq!(m.lifecycle(), &ClientLifecycle::Uninitialized);
    assert!(m.negotiated_version().is_none() && m.server_info().is_none());
    assert!(m.reset().is_err(), "reset only from error or disconnected");

    m.mark_error("boom").unwrap();
    assert_eq!(m.lifecycle(), &ClientLifecycle::Error("boom".into()));
    assert!(m.initialize(Instant::now()).is_err());
    m.reset().unwrap();
    m.initialize(Instant::now()).unwrap();
    m.mark_disconnected("gone").unwrap();

    m.mark_shutting_down();
    assert_eq!(m.lifecycle(), &ClientLifecycle::ShuttingDown);
    assert!(m.mark_error("late").is_err(), "shutdown is final");
    assert!(m.reset().is_err());
}

#[test]
fn an_expired_session_goes_back_to_initialize() {
    let mut m = ready_legacy();
    let r = m.list_tools(None, Instant::now()).unwrap();
    m.session_expired().unwrap();
    assert_eq!(m.lifecycle(), &ClientLifecycle::Uninitialized);
    assert_eq!(m.pending_count(), 1, "the request is kept, to retry");
    let init = m.initialize(Instant::now()).unwrap();
    m.handle(result(&init.id, init_result("2025-11-25")));
    m.initialized().unwrap();
    assert!(m.forget(&r.id));
}

#[test]
fn retry_with_input_echoes_request_state_exactly() {
    let mut m = ready_modern();
    let now = Instant::now();
    let params = json!({"name": "t", "arguments": {}, "requestState": "stale"});
    let params = params.as_object().unwrap().clone();
    let first = m
        .call_tool(
            &CallToolParams {
                name: "t".into(),
                ..Default::default()
            },
            &RequestSettings::default(),
            now,
        )
        .unwrap();
    let mut responses = Map::new();
    responses.insert(
        "confirm".into(),
        json!({"action": "accept", "content": {"ok": true}}),
    );
    let retry = m
        .retry_with_input(
            "tools/call",
            params.clone(),
            responses.clone(),
            Some(" opaque=/+ ".into()),
            &RequestSettings::default(),
            now,
        )
        .unwrap();
    assert_ne!(retry.id, first.id);
    let p = retry.request.params.as_ref().unwrap();
    assert_eq!(p["requestState"], " opaque=/+ ");
    assert_eq!(p["inputResponses"]["confirm"]["action"], "accept");
    assert_eq!(p["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
    let retry = m
        .retry_with_input(
            "tools/call",
            params,
            responses,
            None,
            &RequestSettings::default(),
            now,
        )
        .unwrap();
    assert!(
        retry
            .request
            .params
            .as_ref()
            .unwrap()
            .get("requestState")
            .is_none()
    );
}

#[test]
fn server_responses_are_built_typed() {
    let r = ClientMachine::response(
        RequestId::from("s"),
        &crate::protocol::ElicitResult::decline(),
    );
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"jsonrpc": "2.0", "id": "s", "result": {"action": "decline"}})
    );
    let e = ClientMachine::error_response(
        RequestId::from(2_i64),
        ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no"),
    );
    assert_eq!(serde_json::to_value(&e).unwrap()["error"]["code"], -32601);
}

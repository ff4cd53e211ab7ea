//! Every operation's request, and the client's own notifications.

use std::time::Instant;

use serde_json::json;

use super::*;

/// One request of every operation, in the order `every_operation_builds_its_request` lists.
fn every_request(
    m: &mut ClientMachine,
    opts: &RequestSettings,
    now: Instant,
) -> Vec<OutgoingRequest> {
    let call = CallToolParams {
        name: "add".into(),
        arguments: Some(json!({"a": 1}).as_object().unwrap().clone()),
        ..Default::default()
    };
    vec![
        m.ping(now).unwrap(),
        m.list_tools(Some("c1".into()), now).unwrap(),
        m.call_tool(&call, opts, now).unwrap(),
        m.list_resources(None, now).unwrap(),
        m.list_resource_templates(None, now).unwrap(),
        m.read_resource("file:///a", opts, now).unwrap(),
        m.subscribe("file:///a", now).unwrap(),
        m.unsubscribe("file:///a", now).unwrap(),
        m.list_prompts(None, now).unwrap(),
        m.get_prompt(
            &GetPromptParams {
                name: "p".into(),
                arguments: None,
            },
            opts,
            now,
        )
        .unwrap(),
        m.complete(
            &CompleteParams {
                reference: crate::protocol::CompletionReference::Prompt { name: "p".into() },
                argument: crate::protocol::CompleteArgument {
                    name: "a".into(),
                    value: "x".into(),
                },
                context: None,
            },
            now,
        )
        .unwrap(),
        m.set_logging_level(LoggingLevel::Info, now)
            .unwrap()
            .unwrap(),
        m.request("x/custom", Some(Map::new()), opts, now).unwrap(),
    ]
}

#[test]
fn every_operation_builds_its_request() {
    let mut m = ready_legacy();
    let now = Instant::now();
    let opts = RequestSettings::default();
    let built = every_request(&mut m, &opts, now);
    let methods: Vec<&str> = built.iter().map(|r| r.method()).collect();
    assert_eq!(
        methods,
        [
            "ping",
            "tools/list",
            "tools/call",
            "resources/list",
            "resources/templates/list",
            "resources/read",
            "resources/subscribe",
            "resources/unsubscribe",
            "prompts/list",
            "prompts/get",
            "completion/complete",
            "logging/setLevel",
            "x/custom"
        ]
    );
    assert_eq!(m.pending_count(), built.len());
    let ids: std::collections::HashSet<_> = built.iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids.len(), built.len(), "ids are unique");
    let text = built[1].to_text();
    assert!(text.contains(r#""cursor":"c1""#), "{text}");
    assert_eq!(built[2].to_value()["params"]["arguments"]["a"], 1);
    assert_eq!(built[11].to_value()["params"]["level"], "info");
    assert!(
        m.listen(&ListenParams::default(), now).is_err(),
        "listen is modern only"
    );
    // Legacy requests carry no version _meta.
    assert!(
        built[1]
            .request
            .params
            .as_ref()
            .unwrap()
            .get("_meta")
            .is_none()
    );
}

#[test]
fn client_notifications_are_typed() {
    let m = ready_legacy();
    assert_eq!(
        m.roots_list_changed().method,
        "notifications/roots/list_changed"
    );
    let p = m.progress(&ProgressNotificationParams {
        progress_token: json!("t"),
        progress: 1.0,
        total: Some(2.0),
        message: None,
    });
    assert_eq!(p.params.unwrap()["total"], 2.0);
}

//! The table: (entry point, endpoint, filter, caller, name form) for every request kind a
//! filter or a scope governs, checking that listing and calling agree, and (owner, reader)
//! for the task methods.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use axum::http::StatusCode;
use mcp_registry::agent::ControlRouter;
use mcp_registry::catalog::{FilteredRegistry, ToolFilter};
use mcp_registry::transport::http::{HttpConfig, router_all};
use mcp_registry::{ALL_SERVERS, Caller, Principal};
use serde_json::{Value, json};

use super::{READER, WRITER, auth, open, post, read_only, registry, request};
use crate::common::control_mcp_message;

/// Every tool of [`registry`], as (server, tool).
const TOOLS: [(&str, &str); 3] = [("fs", "read"), ("fs", "wipe"), ("web", "fetch")];

/// The filters of the table.
fn filters() -> Vec<(&'static str, ToolFilter)> {
    vec![
        ("allow all", ToolFilter::allow_all()),
        ("keep read-only", read_only()),
        (
            "deny mcp__fs__read",
            ToolFilter::builder().deny("mcp__fs__read").build().unwrap(),
        ),
        (
            "allow mcp__web__*",
            ToolFilter::builder().allow("mcp__web__*").build().unwrap(),
        ),
    ]
}

/// The names a tool can be called by at `endpoint` (plain and qualified on the union, plain
/// on its own server), or none where it is not served.
fn name_forms(endpoint: &str, (server, tool): (&str, &str)) -> Vec<String> {
    if endpoint == ALL_SERVERS {
        vec![tool.to_owned(), format!("mcp__{server}__{tool}")]
    } else if endpoint == server {
        vec![tool.to_owned()]
    } else {
        Vec::new()
    }
}

/// The tool a listed name stands for (the tools' names are unique in [`registry`]).
fn tool_of(listed: &str) -> String {
    listed.rsplit("__").next().unwrap().to_owned()
}

/// One entry point: a message to `endpoint`, answered.
enum Entry {
    View(FilteredRegistry),
    Control(ControlRouter),
}

impl Entry {
    async fn ask(&self, endpoint: &str, caller: &Caller, message: Value) -> Value {
        match self {
            Entry::View(view) => view
                .handle_mcp_message(endpoint, message)
                .caller(caller.clone())
                .await
                .unwrap(),
            Entry::Control(router) => {
                let control = control_mcp_message("r", endpoint, message);
                let reply = router.handle_control_request(&control).await.unwrap();
                reply["response"]["response"]["mcp_response"].clone()
            }
        }
    }
}

/// For every filter, entry point, endpoint, caller and name form: a tool is called
/// successfully exactly when it is listed there.
#[tokio::test]
async fn listing_and_calling_agree_at_every_in_process_entry_point() {
    let callers = [
        Caller::Anonymous,
        Caller::session_of("s-1"),
        Caller::principal_of(Principal::new("ada").with_scopes(["files:read"])),
    ];
    let mut rows = 0;
    for (label, filter) in filters() {
        let view = FilteredRegistry::new(registry(Arc::new(AtomicUsize::new(0))), filter);
        let entries = [
            ("view", Entry::View(view.clone())),
            ("control", Entry::Control(ControlRouter::new(view))),
        ];
        for (entry_name, entry) in &entries {
            let endpoints: &[&str] = match entry {
                // The control protocol names a server.
                Entry::Control(_) => &["fs", "web"],
                Entry::View(_) => &["fs", "web", ALL_SERVERS],
            };
            for endpoint in endpoints {
                for caller in &callers {
                    let listed = entry
                        .ask(endpoint, caller, request(1, "tools/list", json!({})))
                        .await;
                    let listed: BTreeSet<String> =
                        super::names(&listed).iter().map(|n| tool_of(n)).collect();
                    for tool in TOOLS {
                        for name in name_forms(endpoint, tool) {
                            let call = request(2, "tools/call", json!({"name": name}));
                            let called = entry.ask(endpoint, caller, call).await;
                            let ran = called.get("result").is_some();
                            assert_eq!(
                                ran,
                                listed.contains(tool.1),
                                "{label} / {entry_name} / {endpoint} / {caller:?} / {name}: listed {listed:?}, call {called}"
                            );
                            rows += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(rows >= 100, "{rows} rows");
}

/// Over HTTP, for every token, endpoint and name form: the tool is listed either way (a
/// client steps up when refused), and called exactly when the token holds its scope.
#[tokio::test]
async fn scopes_decide_calls_on_the_resolved_tool_at_every_http_endpoint() {
    let app = router_all(
        registry(Arc::new(AtomicUsize::new(0))),
        HttpConfig::default().auth(auth()),
    );
    for (token, writes) in [(WRITER, true), (READER, false)] {
        for (path, endpoint) in [
            ("/mcp", ALL_SERVERS),
            ("/mcp/fs", "fs"),
            ("/mcp/web", "web"),
        ] {
            let session = open(&app, path, Some(token)).await;
            let list = request(1, "tools/list", json!({}));
            let listed = post(&app, path, Some(token), Some(&session), &list).await;
            let listed: BTreeSet<String> = super::names(&listed.json())
                .iter()
                .map(|n| tool_of(n))
                .collect();
            for tool in TOOLS {
                for name in name_forms(endpoint, tool) {
                    let call = request(2, "tools/call", json!({"name": name}));
                    let reply = post(&app, path, Some(token), Some(&session), &call).await;
                    let allowed = tool.1 != "wipe" || writes;
                    let expected = if allowed {
                        StatusCode::OK
                    } else {
                        StatusCode::FORBIDDEN
                    };
                    assert_eq!(
                        reply.status, expected,
                        "{token} {path} {name}: {}",
                        reply.body
                    );
                    assert!(listed.contains(tool.1), "{token} {path}: {listed:?}");
                    if allowed {
                        assert!(reply.json().get("result").is_some(), "{}", reply.body);
                    }
                }
            }
        }
    }
}

/// The task methods for every (owner, reader) pair over HTTP: a reader reaches a task
/// exactly when it is the owner, and lists exactly its own.
#[tokio::test]
async fn a_task_is_reached_only_by_its_owner_at_every_task_method() {
    let app = super::tasks_app_with(HttpConfig::default().auth(auth()));
    let open_app = super::tasks_app_with(HttpConfig::default());
    // (app, token) pairs: two principals on one app, two anonymous sessions on the other.
    let callers: Vec<(&axum::Router, Option<&str>)> = vec![
        (&app, Some(WRITER)),
        (&app, Some(READER)),
        (&open_app, None),
        (&open_app, None),
    ];
    let mut sessions = Vec::new();
    for (app, token) in &callers {
        sessions.push(open(app, "/mcp", *token).await);
    }
    for (owner, (app, token)) in callers.iter().enumerate() {
        let call = request(
            2,
            "tools/call",
            json!({"name": "slow", "task": {"ttl": 60_000}}),
        );
        let started = post(app, "/mcp", *token, Some(&sessions[owner]), &call)
            .await
            .json();
        let task = started["result"]["task"]["taskId"]
            .as_str()
            .unwrap()
            .to_owned();
        for (reader, (other_app, other_token)) in callers.iter().enumerate() {
            if !std::ptr::eq(*app, *other_app) {
                continue;
            }
            let session = Some(sessions[reader].as_str());
            let list = request(3, "tasks/list", json!({}));
            let listed = post(other_app, "/mcp", *other_token, session, &list).await;
            let listed = listed.json();
            let ids: Vec<&str> = listed["result"]["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["taskId"].as_str().unwrap())
                .collect();
            assert_eq!(
                ids.contains(&task.as_str()),
                reader == owner,
                "{owner}/{reader}: {listed}"
            );
            for method in ["tasks/get", "tasks/cancel"] {
                let asked = request(4, method, json!({"taskId": task}));
                let reply = post(other_app, "/mcp", *other_token, session, &asked)
                    .await
                    .json();
                assert_eq!(
                    reply.get("result").is_some(),
                    reader == owner,
                    "{method} {owner}/{reader}: {reply}"
                );
            }
        }
    }
}

//! Trust: who is calling, and what each caller may see and use, at every entry point.
//!
//! - D1: a tool a `ToolFilter`'s `keep` function hides is neither listed nor callable, through
//!   `FilteredRegistry::handle_mcp_message` and `ControlRouter` as in-process.
//! - D2: a per-tool OAuth scope holds for the tool, whatever name reaches it (plain,
//!   qualified alias, per-server endpoint).
//! - D3: HTTP clients without a token own their tasks by session; another session neither
//!   lists nor reads them, and an anonymous caller lists none.
//! - The caller reaches functions as a typed parameter.
//! - A table over (caller, entry point, name form, filter, scope): listing and calling agree
//!   (`table`).
//! - 10⁵ generated requests through the HTTP entry reach nothing their caller may not use
//!   (`fuzz`).

use crate::common;
#[path = "trust/fuzz.rs"]
mod fuzz;
#[path = "trust/table.rs"]
mod table;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::control_mcp_message;
use common::http::{INIT, Reply};
use common::tasks::{legacy, slow_tool};
use mcp_registry::agent::ControlRouter;
use mcp_registry::catalog::{FilteredRegistry, ToolFilter};
use mcp_registry::transport::http::auth::{AccessClaims, Auth, BearerToken, TokenError};
use mcp_registry::transport::http::{HttpConfig, router, router_all};
use mcp_registry::{CallOptions, Caller, Principal, Registry, Server, Tool};
use serde_json::{Value, json};
use tower::ServiceExt;

/// A tool `name` described as `description`, counting its runs in `runs`.
fn counted(name: &str, description: &str, runs: Arc<AtomicUsize>) -> Tool {
    Tool::new(
        name,
        description,
        json!({"type": "object"}),
        move |_: Value| {
            let runs = runs.clone();
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                "ran"
            }
        },
    )
    .unwrap()
}

/// Server `fs` with `read` (read-only) and `wipe` (destructive), and server `web` with
/// `fetch`; `wipe`'s runs are counted.
fn registry(wiped: Arc<AtomicUsize>) -> Registry {
    let fs = Server::new(
        "fs",
        None,
        [
            counted("read", "read a file", Arc::default()),
            counted("wipe", "destructive: wipe the disk", wiped),
        ],
    )
    .unwrap();
    let web = Server::new(
        "web",
        None,
        [counted("fetch", "fetch a page", Arc::default())],
    )
    .unwrap();
    Registry::from_servers([fs, web])
}

/// A filter whose `keep` function hides what its description calls destructive.
fn read_only() -> ToolFilter {
    ToolFilter::builder()
        .keep(|_, tool| {
            !tool
                .description
                .as_deref()
                .is_some_and(|d| d.starts_with("destructive"))
        })
        .build()
        .unwrap()
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn names(listed: &Value) -> Vec<String> {
    listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {listed}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// D1: the `keep` function is applied to calls made as MCP messages, not only to listings.
#[tokio::test]
async fn a_tool_the_keep_function_hides_cannot_be_called_through_mcp_messages() {
    let wiped = Arc::new(AtomicUsize::new(0));
    let view = FilteredRegistry::new(registry(wiped.clone()), read_only());
    for (endpoint, name) in [
        ("fs", "wipe"),
        ("fs", "mcp__fs__wipe"),
        (mcp_registry::ALL_SERVERS, "wipe"),
        (mcp_registry::ALL_SERVERS, "mcp__fs__wipe"),
    ] {
        let listed = view
            .handle_mcp_message(endpoint, request(1, "tools/list", json!({})))
            .await
            .unwrap();
        assert!(
            !names(&listed).iter().any(|n| n.ends_with("wipe")),
            "{listed}"
        );
        let called = view
            .handle_mcp_message(endpoint, request(2, "tools/call", json!({"name": name})))
            .await
            .unwrap();
        assert_eq!(
            called["error"]["code"], -32602,
            "{endpoint} {name}: {called}"
        );
    }
    // And through the agent control protocol, which routes to the same view.
    let router = ControlRouter::new(view);
    let reply = router
        .handle_control_request(&control_mcp_message(
            "r",
            "fs",
            request(3, "tools/call", json!({"name": "wipe"})),
        ))
        .await
        .unwrap();
    let answer = &reply["response"]["response"]["mcp_response"];
    assert_eq!(answer["error"]["code"], -32602, "{reply}");
    assert_eq!(wiped.load(Ordering::SeqCst), 0, "a hidden tool ran");
}

const WRITER: &str = "token-writer-2b1c";
const READER: &str = "token-reader-9f3e";

async fn validate(token: BearerToken) -> Result<AccessClaims, TokenError> {
    let claims = |subject: &str, scopes: &[&str]| {
        AccessClaims::new(subject)
            .with_audience(["http://localhost/mcp"])
            .with_scopes(scopes.iter().copied())
            .with_expiry(std::time::SystemTime::now() + Duration::from_secs(3600))
    };
    match token.secret() {
        WRITER => Ok(claims("wendy", &["files:read", "files:write"])),
        READER => Ok(claims("rita", &["files:read"])),
        _ => Err(TokenError::InvalidToken("not ours".into())),
    }
}

fn auth() -> Auth {
    Auth::new("http://localhost/mcp", validate)
        .unwrap()
        .tool_scopes("wipe", ["files:write"])
}

/// POSTs `body` to `path` with `token` (and `session`, when given) as a 2025-11-25 client.
async fn post(
    app: &axum::Router,
    path: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: &Value,
) -> Reply {
    let session = session.map(|id| ("mcp-session-id", id));
    let headers: Vec<_> = [("mcp-protocol-version", "2025-11-25")]
        .into_iter()
        .chain(session)
        .collect();
    post_with(app, path, token, &headers, body).await
}

/// POSTs `body` to `path` with `token` and `headers` (besides `Host`, `Content-Type`,
/// `Accept`).
async fn post_with(
    app: &axum::Router,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: &Value,
) -> Reply {
    let mut req = Request::builder()
        .method("POST")
        .uri(path)
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    if let Some(token) = token {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    let response = app
        .clone()
        .oneshot(req.body(Body::from(body.to_string())).unwrap())
        .await
        .unwrap();
    Reply::read(response).await
}

/// Opens a 2025-11-25 session at `path` as `token`'s holder; its id.
async fn open(app: &axum::Router, path: &str, token: Option<&str>) -> String {
    let init: Value = serde_json::from_str(INIT).unwrap();
    let opened = post(app, path, token, None, &init).await;
    assert_eq!(opened.status, StatusCode::OK, "{}", opened.body);
    let id = opened.headers["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let done = post(app, path, token, Some(&id), &initialized).await;
    assert_eq!(done.status, StatusCode::ACCEPTED);
    id
}

/// D2: the scope of `wipe` holds for every name that reaches it, on the union and on the
/// server's own endpoint; the tool never runs for a token without it.
#[tokio::test]
async fn a_per_tool_scope_holds_for_every_name_of_the_tool() {
    let wiped = Arc::new(AtomicUsize::new(0));
    let app = router_all(registry(wiped.clone()), HttpConfig::default().auth(auth()));
    for (path, name) in [
        ("/mcp", "wipe"),
        ("/mcp", "mcp__fs__wipe"),
        ("/mcp/fs", "wipe"),
    ] {
        let session = open(&app, path, Some(READER)).await;
        let call = request(2, "tools/call", json!({"name": name}));
        let refused = post(&app, path, Some(READER), Some(&session), &call).await;
        assert_eq!(
            refused.status,
            StatusCode::FORBIDDEN,
            "{path} {name}: {}",
            refused.body
        );
        let challenge = refused.headers["www-authenticate"].to_str().unwrap();
        assert!(challenge.contains("files:write"), "{challenge}");
    }
    assert_eq!(
        wiped.load(Ordering::SeqCst),
        0,
        "wipe ran without files:write"
    );
    let session = open(&app, "/mcp", Some(WRITER)).await;
    let call = request(2, "tools/call", json!({"name": "mcp__fs__wipe"}));
    let served = post(&app, "/mcp", Some(WRITER), Some(&session), &call).await;
    assert_eq!(served.status, StatusCode::OK, "{}", served.body);
    assert_eq!(wiped.load(Ordering::SeqCst), 1);
}

/// A router over server `s` with a slow task tool, served with `config`.
fn tasks_app_with(config: HttpConfig) -> axum::Router {
    let slow = slow_tool(Arc::default(), 3600, "secret of the first session");
    let registry = Registry::from_servers([Server::new("s", None, [slow]).unwrap()]);
    router(registry, "s", config)
}

/// D3: without a token, each legacy session owns its tasks: another session's
/// `tasks/list`, `tasks/get`, `tasks/result` and `tasks/cancel` find nothing.
#[tokio::test]
async fn sessions_without_a_token_do_not_share_tasks() {
    let app = tasks_app_with(HttpConfig::default());
    let (a, b) = (
        open(&app, "/mcp", None).await,
        open(&app, "/mcp", None).await,
    );
    let call = legacy(
        2,
        "tools/call",
        json!({"name": "slow", "task": {"ttl": 60_000}}),
    );
    let started = post(&app, "/mcp", None, Some(&a), &call).await.json();
    let task = started["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();

    let listed = post(
        &app,
        "/mcp",
        None,
        Some(&a),
        &legacy(3, "tasks/list", json!({})),
    )
    .await;
    assert_eq!(listed.json()["result"]["tasks"][0]["taskId"], task.as_str());
    let theirs = post(
        &app,
        "/mcp",
        None,
        Some(&b),
        &legacy(3, "tasks/list", json!({})),
    )
    .await;
    assert_eq!(
        theirs.json()["result"]["tasks"],
        json!([]),
        "{}",
        theirs.body
    );
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let asked = legacy(4, method, json!({"taskId": task}));
        let refused = post(&app, "/mcp", None, Some(&b), &asked).await.json();
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
    }
    let get = legacy(5, "tasks/get", json!({"taskId": task}));
    let mine = post(&app, "/mcp", None, Some(&a), &get).await.json();
    assert_eq!(mine["result"]["status"], "working", "{mine}");
}

/// A session declares `tasks.list` (it can be told apart); an anonymous in-process caller
/// is not offered it, lists nothing, and reaches its task by id alone.
#[tokio::test]
async fn an_anonymous_caller_lists_no_tasks_and_is_not_offered_the_list() {
    let slow = slow_tool(Arc::default(), 3600, "done");
    let registry = Registry::from_servers([Server::new("s", None, [slow]).unwrap()]);
    let init: Value = serde_json::from_str(INIT).unwrap();
    let anonymous = registry
        .handle_mcp_message("s", init.clone())
        .await
        .unwrap();
    let tasks = &anonymous["result"]["capabilities"]["tasks"];
    assert!(
        tasks.get("cancel").is_some() && tasks.get("list").is_none(),
        "{tasks}"
    );
    let (_session, _out, reply) =
        common::session::legacy_session(registry.clone(), "s", json!({})).await;
    assert!(
        reply["result"]["capabilities"]["tasks"]
            .get("list")
            .is_some(),
        "{reply}"
    );

    let call = legacy(2, "tools/call", json!({"name": "slow", "task": {}}));
    let started = registry.handle_mcp_message("s", call).await.unwrap();
    let task = started["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let listed = registry
        .handle_mcp_message("s", legacy(3, "tasks/list", json!({})))
        .await
        .unwrap();
    assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
    let got = registry
        .handle_mcp_message("s", legacy(4, "tasks/get", json!({"taskId": task})))
        .await
        .unwrap();
    assert_eq!(got["result"]["status"], "working", "{got}");
    // A named caller neither lists nor reads it.
    let ada = Caller::principal_of(Principal::new("ada"));
    let theirs = registry
        .handle_mcp_message("s", legacy(5, "tasks/get", json!({"taskId": task})))
        .caller(ada)
        .await
        .unwrap();
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
}

/// The caller a transport resolved reaches the function: a token's principal over HTTP.
#[tokio::test]
async fn a_function_reads_the_caller_the_transport_resolved() {
    let whoami = Tool::builder("whoami")
        .typed(
            |ctx: mcp_registry::ToolContext, _: serde_json::Map<String, Value>| async move {
                let caller = ctx.caller();
                match (caller.principal(), caller.session()) {
                    (Some(p), _) => format!("principal {} {}", p.subject, p.scopes.join(",")),
                    (None, Some(_)) => "session".to_owned(),
                    (None, None) => "anonymous".to_owned(),
                }
            },
        )
        .unwrap();
    let registry = Registry::from_servers([Server::new("id", None, [whoami]).unwrap()]);
    let call = request(2, "tools/call", json!({"name": "whoami"}));
    let text = |reply: &Value| reply["result"]["content"][0]["text"].clone();

    let app = router(registry.clone(), "id", HttpConfig::default().auth(auth()));
    let session = open(&app, "/mcp", Some(READER)).await;
    let reply = post(&app, "/mcp", Some(READER), Some(&session), &call)
        .await
        .json();
    assert_eq!(text(&reply), "principal rita files:read");

    let open_app = router(registry.clone(), "id", HttpConfig::default());
    let session = open(&open_app, "/mcp", None).await;
    let reply = post(&open_app, "/mcp", None, Some(&session), &call)
        .await
        .json();
    assert_eq!(text(&reply), "session");

    let in_process = registry
        .handle_mcp_message("id", call.clone())
        .await
        .unwrap();
    assert_eq!(text(&in_process), "anonymous");
    let named = registry
        .handle_mcp_message("id", call)
        .options(CallOptions::new().caller(Caller::session_of("s-1")))
        .await
        .unwrap();
    assert_eq!(text(&named), "session");
}

/// A 2026-07-28 `requestState` is bound to the caller it was issued to: replayed by another
/// caller (or by an anonymous one) it is refused, and its own caller's retry completes.
#[tokio::test]
async fn a_request_state_is_refused_for_another_caller() {
    use mcp_registry::tool::{Elicitation, InputError};
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Name {
        name: String,
    }
    let greet = Tool::builder("greet")
        .typed(
            |ctx: mcp_registry::ToolContext, _: serde_json::Map<String, Value>| async move {
                match ctx.elicit::<Name>("Who are you?").await? {
                    Elicitation::Accept(Name { name }) => Ok::<_, InputError>(name),
                    _ => Ok("stranger".to_owned()),
                }
            },
        )
        .unwrap();
    let registry = Registry::from_servers([Server::new("s", None, [greet]).unwrap()]);
    let call = |id: u64, extra: Value| {
        let mut params = json!({"name": "greet", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        }});
        if let Value::Object(extra) = extra {
            params.as_object_mut().unwrap().extend(extra);
        }
        request(id, "tools/call", params)
    };
    let as_who =
        |caller: Caller, message: Value| registry.handle_mcp_message("s", message).caller(caller);
    let ada = Caller::principal_of(Principal::new("ada"));
    let first = as_who(ada.clone(), call(1, json!({}))).await.unwrap();
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let retry = json!({
        "inputResponses": {"elicitation-0": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": state,
    });
    let bob = Caller::principal_of(Principal::new("bob"));
    for thief in [bob, Caller::session_of("ada"), Caller::Anonymous] {
        let refused = as_who(thief.clone(), call(2, retry.clone())).await.unwrap();
        assert_eq!(refused["error"]["code"], -32602, "{thief:?}: {refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains("another caller"), "{message}");
    }
    let done = as_who(ada, call(3, retry)).await.unwrap();
    assert_eq!(done["result"]["content"][0]["text"], "Ada", "{done}");
}

/// The approval callback hears who is asking, as the gate does.
#[tokio::test]
async fn the_approval_callback_is_told_the_caller() {
    use mcp_registry::Approval;
    let registry = Registry::builder()
        .server(Server::new("fs", None, [counted("wipe", "wipe", Arc::default())]).unwrap())
        .approval(|asked| async move {
            match asked.caller.principal() {
                Some(p) if p.has_scope("files:write") => Approval::Allow,
                _ => Approval::Deny(format!("{:?} may not {}", asked.caller, asked.tool)),
            }
        })
        .build();
    let refused = registry.call_tool_by_name("wipe", json!({})).await;
    assert!(
        refused
            .unwrap_err()
            .to_string()
            .contains("Anonymous may not wipe")
    );
    let writer = Caller::principal_of(Principal::new("w").with_scopes(["files:write"]));
    let allowed = registry
        .call_tool_by_name("wipe", json!({}))
        .caller(writer)
        .await
        .unwrap();
    assert_eq!(allowed.first_text(), Some("ran"));
}

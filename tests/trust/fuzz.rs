//! 10⁵ generated 2026-07-28 requests through the HTTP entry (`router_all` with
//! authorization): random endpoints, tool names and aliases, tokens, task ids and request
//! states. None reaches an item its caller may not see or use: `wipe` runs only for a token
//! holding `files:write`, a task answers only its owner, a request state completes only for
//! the caller it was issued to.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_registry::protocol::TaskSupport;
use mcp_registry::tool::{Elicitation, InputError};
use mcp_registry::transport::http::{HttpConfig, router_all};
use mcp_registry::{Registry, Server, Tool, ToolContext};
use serde_json::{Map, Value, json};

use super::{READER, WRITER, auth, post_with};
use crate::common::http::Reply;
use crate::common::tasks::meta_with_tasks;

/// How many requests the run sends.
const REQUESTS: usize = 100_000;

/// xorshift64*: a fixed sequence, so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

/// What the tools saw that they must never see.
#[derive(Default)]
struct Breaches {
    /// `wipe` ran for a caller without `files:write`.
    wiped_without_scope: AtomicUsize,
    /// `wipe` ran at all.
    wiped: AtomicUsize,
}

/// `fs`: `read`, `wipe` (needs `files:write`, and checks the caller itself), `ask` (asks a
/// question: a request state); `web`: `fetch`; `vault`: `secret`, a task tool whose result
/// names its owner.
fn registry(breaches: Arc<Breaches>) -> Registry {
    let plain = |name: &str| {
        Tool::new(name, name, json!({"type": "object"}), |_: Value| async {
            "ok"
        })
        .unwrap()
    };
    let wipe = Tool::builder("wipe")
        .typed(move |ctx: ToolContext, _: Map<String, Value>| {
            let breaches = breaches.clone();
            async move {
                breaches.wiped.fetch_add(1, Ordering::SeqCst);
                if !ctx.caller().has_scope("files:write") {
                    breaches.wiped_without_scope.fetch_add(1, Ordering::SeqCst);
                }
                "wiped"
            }
        })
        .unwrap();
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Answer {
        answer: String,
    }
    let ask = Tool::builder("ask")
        .typed(|ctx: ToolContext, _: Map<String, Value>| async move {
            let who = ctx.caller().principal().map(|p| p.subject.clone());
            match ctx.elicit::<Answer>("Sure?").await? {
                Elicitation::Accept(a) => Ok::<_, InputError>(format!(
                    "answered {} for {}",
                    a.answer,
                    who.unwrap_or_default()
                )),
                _ => Ok("declined".to_owned()),
            }
        })
        .unwrap();
    let secret = Tool::builder("secret")
        .task_support(TaskSupport::Optional)
        .typed(|ctx: ToolContext, _: Map<String, Value>| async move {
            // Long enough to become a task, short enough to end before it is asked about.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let who = ctx.caller().principal().map(|p| p.subject.clone());
            format!("secret of {}", who.unwrap_or_default())
        })
        .unwrap();
    Registry::from_servers([
        Server::new("fs", None, [plain("read"), wipe, ask]).unwrap(),
        Server::new("web", None, [plain("fetch")]).unwrap(),
        Server::new("vault", None, [secret]).unwrap(),
    ])
}

/// A 2026-07-28 request to `path` as `token`'s holder, its mirrored headers set.
async fn send(
    app: &axum::Router,
    path: &str,
    token: Option<&str>,
    method: &str,
    name: &str,
    mut params: Value,
) -> Reply {
    params["_meta"] = meta_with_tasks();
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"]["elicitation"] = json!({});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ];
    if !name.is_empty() && name.is_ascii() {
        headers.push(("mcp-name", name));
    }
    post_with(app, path, token, &headers, &body).await
}

/// The subject a token stands for (none: refused at the door).
fn subject(token: Option<&str>) -> Option<&'static str> {
    match token {
        Some(WRITER) => Some("wendy"),
        Some(READER) => Some("rita"),
        _ => None,
    }
}

/// The tool names a request may carry: real ones, aliases, and near misses.
const NAMES: [&str; 16] = [
    "read",
    "wipe",
    "ask",
    "fetch",
    "secret",
    "mcp__fs__wipe",
    "mcp__fs__read",
    "mcp__web__wipe",
    "mcp__vault__secret",
    "mcp__fs__",
    "mcp____wipe",
    "WIPE",
    "wipe ",
    "mcp__fs__wipe__x",
    "",
    "мcp__fs__wipe",
];

/// What [`mint`] makes: (id or state, the subject it belongs to).
type Minted = Vec<(String, &'static str)>;

/// Real task ids and request states, each minted for one principal, with its subject.
async fn mint(app: &axum::Router) -> (Minted, Minted) {
    let mut tasks: Minted = Vec::new();
    let mut states: Minted = Vec::new();
    for token in [WRITER, READER] {
        let params = json!({"name": "secret", "arguments": {}});
        let started = send(app, "/mcp", Some(token), "tools/call", "secret", params).await;
        let id = started.json()["result"]["taskId"]
            .as_str()
            .unwrap()
            .to_owned();
        tasks.push((id, subject(Some(token)).unwrap()));
        let params = json!({"name": "ask", "arguments": {}});
        let asked = send(app, "/mcp", Some(token), "tools/call", "ask", params).await;
        let state = asked.json()["result"]["requestState"]
            .as_str()
            .unwrap()
            .to_owned();
        states.push((state, subject(Some(token)).unwrap()));
    }
    (tasks, states)
}

#[tokio::test]
async fn generated_requests_never_reach_what_their_caller_may_not_use() {
    let breaches = Arc::new(Breaches::default());
    let app = router_all(
        registry(breaches.clone()),
        HttpConfig::default().auth(auth()),
    );
    let (tasks, states) = mint(&app).await;
    let tokens = [Some(WRITER), Some(READER), None, Some("forged-token")];
    let paths = ["/mcp", "/mcp/fs", "/mcp/web", "/mcp/vault"];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut served, mut owners_reached, mut owners_completed) = (0usize, 0usize, 0usize);
    for i in 0..REQUESTS {
        let token = *rng.pick(&tokens);
        let path = *rng.pick(&paths);
        let reply = match rng.next() % 4 {
            0 | 1 => {
                let name = *rng.pick(&NAMES);
                let params = json!({"name": name, "arguments": {}});
                send(&app, path, token, "tools/call", name, params).await
            }
            2 => {
                let (task, owner) = rng.pick(&tasks).clone();
                let task = if rng.next().is_multiple_of(8) {
                    format!("{task}x")
                } else {
                    task
                };
                let method = *rng.pick(&["tasks/get", "tasks/result", "tasks/cancel"]);
                let params = json!({"taskId": task});
                let reply = send(&app, path, token, method, &task, params).await;
                let reached = reply.json().get("result").is_some();
                assert!(
                    !reached || subject(token) == Some(owner) && !task.ends_with('x'),
                    "request {i}: {method} of {owner}'s task reached by {token:?}: {}",
                    reply.body
                );
                owners_reached += usize::from(reached);
                reply
            }
            _ => {
                let (state, owner) = rng.pick(&states).clone();
                let params = json!({"name": "ask", "arguments": {}, "requestState": state,
                    "inputResponses": {"elicitation-0": {"action": "accept", "content": {"answer": "yes"}}}});
                let reply = send(&app, path, token, "tools/call", "ask", params).await;
                let text = reply.json()["result"]["content"][0]["text"].clone();
                assert!(
                    text.is_null() || subject(token) == Some(owner),
                    "request {i}: {owner}'s request state completed for {token:?}: {}",
                    reply.body
                );
                owners_completed += usize::from(!text.is_null());
                reply
            }
        };
        if reply.status.is_success() {
            served += 1;
        }
        assert_eq!(
            breaches.wiped_without_scope.load(Ordering::SeqCst),
            0,
            "request {i}: wipe ran without files:write"
        );
    }
    // The run exercised both sides: calls were served, and wipe did run for its writer.
    assert!(served > REQUESTS / 4, "only {served} served");
    assert!(breaches.wiped.load(Ordering::SeqCst) > 0);
    assert!(
        owners_reached > 0 && owners_completed > 0,
        "{owners_reached} {owners_completed}"
    );
}

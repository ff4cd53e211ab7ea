//! Serving a whole registry as one server (`ALL_SERVERS`): the union's names (plain, qualified
//! on a clash), calls by either, the registry's changes followed live, host state and layers
//! kept, and the HTTP router with the union and every server at its own path.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::{assert_reply, math_server, small_server};
use http_body_util::BodyExt;
use mcp_registry::Outgoing;
use mcp_registry::layer::layer_fn;
use mcp_registry::transport::http::{HttpConfig, router_all};
use mcp_registry::{
    ALL_SERVERS, Prompt, Registry, Resource, Server, ServerSession, State, Tool, ToolContext,
};
use serde_json::{Value, json};
use tower::ServiceExt;

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn ask(registry: &Registry, method: &str, params: Value) -> Value {
    registry
        .handle_mcp_message(ALL_SERVERS, request(1, method, params))
        .await
        .expect("a reply")
}

/// The tool names of a `tools/list` reply.
fn names_of(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a tool list: {list}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn tool_names(registry: &Registry) -> Vec<String> {
    names_of(&ask(registry, "tools/list", json!({})).await)
}

/// A 2025-11-25 `initialize` request.
fn initialize() -> Value {
    request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    )
}

async fn call_text(registry: &Registry, name: &str, arguments: Value) -> Value {
    let reply = ask(
        registry,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
    .await;
    reply["result"]["content"][0]["text"].clone()
}

/// `math` (add, …) and two servers that both have `whoami`.
fn clashing() -> Registry {
    Registry::from_servers([
        math_server(),
        small_server("left", "whoami", "left"),
        small_server("right", "whoami", "right"),
    ])
}

#[tokio::test]
async fn the_union_lists_plain_names_and_qualifies_a_clash() {
    let registry = clashing();
    let names = tool_names(&registry).await;
    assert!(names.contains(&"add".to_owned()), "{names:?}");
    assert!(names.contains(&"mcp__left__whoami".to_owned()), "{names:?}");
    assert!(
        names.contains(&"mcp__right__whoami".to_owned()),
        "{names:?}"
    );
    assert!(!names.contains(&"whoami".to_owned()), "{names:?}");
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "listed in name order");

    assert_eq!(
        call_text(&registry, "add", json!({"a": 2, "b": 3})).await,
        r#"{"value":5}"#
    );
    // A uniquely named tool answers to its qualified name too.
    assert_eq!(
        call_text(&registry, "mcp__math__add", json!({"a": 2, "b": 3})).await,
        r#"{"value":5}"#
    );
    assert_eq!(
        call_text(&registry, "mcp__right__whoami", json!({})).await,
        "right"
    );
    assert_eq!(
        call_text(&registry, "mcp__left__whoami", json!({})).await,
        "left"
    );
    // The shared plain name is refused, naming what to call instead.
    let refused = ask(&registry, "tools/call", json!({"name": "whoami"})).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("mcp__left__whoami") && message.contains("mcp__right__whoami"),
        "{message}"
    );
}

#[tokio::test]
async fn the_union_introduces_itself_as_the_registry_says() {
    let registry = Registry::builder()
        .name("hub")
        .version("2.1.0")
        .server(
            Server::builder("math")
                .instructions("Adds numbers.")
                .tools(math_server().tools().iter().cloned())
                .build()
                .unwrap(),
        )
        .build();
    let init = registry
        .handle_mcp_message(ALL_SERVERS, initialize())
        .await
        .expect("a reply");
    assert_reply("2025-11-25", "InitializeResult", &init);
    assert_eq!(init["result"]["serverInfo"]["name"], "hub");
    assert_eq!(init["result"]["serverInfo"]["version"], "2.1.0");
    assert_eq!(init["result"]["instructions"], "math: Adds numbers.");
}

#[tokio::test]
async fn prompts_clash_like_tools_and_the_first_server_wins_a_uri() {
    let prompt = |name: &str, text: &'static str| {
        Prompt::builder(name)
            .handler(move |_| async move { text })
            .unwrap()
    };
    let resource = |text: &'static str| {
        Resource::builder("mem://motd", "motd")
            .handler(move |_| async move { text })
            .unwrap()
    };
    let a = Server::builder("a")
        .prompt(prompt("greet", "from a"))
        .prompt(prompt("only_a", "only a"))
        .resource(resource("a's motd"))
        .build()
        .unwrap();
    let b = Server::builder("b")
        .prompt(prompt("greet", "from b"))
        .resource(resource("b's motd"))
        .build()
        .unwrap();
    let registry = Registry::from_servers([a, b]);
    let list = ask(&registry, "prompts/list", json!({})).await;
    let names: Vec<&str> = list["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mcp__a__greet", "mcp__b__greet", "only_a"]);
    let got = ask(&registry, "prompts/get", json!({"name": "mcp__b__greet"})).await;
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"], "from b",
        "{got}"
    );
    let got = ask(&registry, "prompts/get", json!({"name": "mcp__a__only_a"})).await;
    assert_eq!(got["result"]["messages"][0]["content"]["text"], "only a");

    let resources = ask(&registry, "resources/list", json!({})).await;
    assert_eq!(
        resources["result"]["resources"].as_array().unwrap().len(),
        1,
        "one URI, listed once: {resources}"
    );
    let read = ask(&registry, "resources/read", json!({"uri": "mem://motd"})).await;
    assert_eq!(read["result"]["contents"][0]["text"], "a's motd", "{read}");
}

async fn next_sent(rx: &mut Outgoing) -> Value {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("a message from the session within 5 s")
        .expect("the session's channel is open")
}

async fn ready_union_session(registry: &Registry) -> (ServerSession, Outgoing) {
    let (session, outgoing, reply) =
        common::session::legacy_session(registry.clone(), ALL_SERVERS, json!({})).await;
    // Prompts and resources too, though no server has any yet: one may arrive.
    let capabilities = &reply["result"]["capabilities"];
    assert_eq!(capabilities["tools"]["listChanged"], true, "{reply}");
    assert_eq!(capabilities["prompts"]["listChanged"], true, "{reply}");
    assert_eq!(capabilities["resources"]["listChanged"], true, "{reply}");
    (session, outgoing)
}

async fn session_tools(session: &ServerSession) -> Vec<String> {
    let list = session
        .handle(request(9, "tools/list", json!({})))
        .await
        .unwrap();
    names_of(&list)
}

#[tokio::test]
async fn an_open_session_follows_servers_coming_and_going() {
    let registry = Registry::from_servers([small_server("left", "whoami", "left")]);
    let (session, mut outgoing) = ready_union_session(&registry).await;
    assert_eq!(session_tools(&session).await, ["whoami"]);

    registry.register_server(small_server("right", "whoami", "right"));
    let sent = next_sent(&mut outgoing).await;
    assert_eq!(sent["method"], "notifications/tools/list_changed");
    assert_eq!(
        session_tools(&session).await,
        ["mcp__left__whoami", "mcp__right__whoami"]
    );

    registry.toggle_server("left", false).unwrap();
    let sent = next_sent(&mut outgoing).await;
    assert_eq!(sent["method"], "notifications/tools/list_changed");
    assert_eq!(session_tools(&session).await, ["whoami"]);
    let reply = session
        .handle(request(
            10,
            "tools/call",
            json!({"name": "whoami", "arguments": {}}),
        ))
        .await
        .unwrap();
    assert_eq!(reply["result"]["content"][0]["text"], "right");

    // A server with prompts arriving changes the union's prompts too.
    let greet = Prompt::builder("greet")
        .handler(|_| async { "hi" })
        .unwrap();
    registry.register_server(Server::builder("p").prompt(greet).build().unwrap());
    let first = next_sent(&mut outgoing).await;
    let second = next_sent(&mut outgoing).await;
    assert_eq!(first["method"], "notifications/tools/list_changed");
    assert_eq!(second["method"], "notifications/prompts/list_changed");
}

struct Store {
    notes: Vec<&'static str>,
}

#[tokio::test]
async fn host_state_and_layers_see_each_tool_as_its_own() {
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let recorded = seen.clone();
    let registry = Registry::builder()
        .extension(Store {
            notes: vec!["one", "two"],
        })
        .layer(layer_fn(move |request, next| {
            recorded
                .lock()
                .unwrap()
                .push((request.server().to_owned(), request.name().to_owned()));
            next.run(request)
        }))
        .build();
    // Registered after the registry was built, as a host adds servers at run time.
    let count = Tool::builder("count")
        .typed(
            |ctx: ToolContext, _: serde_json::Map<String, Value>| async move {
                let store = State::<Store>::from_context(&ctx).expect("the registry's state");
                format!(
                    "{} notes, {}/{}",
                    store.notes.len(),
                    ctx.server_name(),
                    ctx.tool_name()
                )
            },
        )
        .unwrap();
    registry.register_server(Server::builder("notes").tool(count).build().unwrap());
    registry.register_server(small_server("left", "whoami", "left"));
    registry.register_server(small_server("right", "whoami", "right"));
    for server in ["pa", "pb"] {
        let greet = Prompt::builder("greet")
            .handler_with_context(|ctx: ToolContext, _| async move {
                format!("from {}/{}", ctx.server_name(), ctx.tool_name())
            })
            .unwrap();
        registry.register_server(Server::builder(server).prompt(greet).build().unwrap());
    }

    assert_eq!(
        call_text(&registry, "count", json!({})).await,
        "2 notes, notes/count"
    );
    let got = ask(&registry, "prompts/get", json!({"name": "mcp__pb__greet"})).await;
    assert_eq!(
        got["result"]["messages"][0]["content"]["text"], "from pb/greet",
        "{got}"
    );
    assert_eq!(
        call_text(&registry, "mcp__right__whoami", json!({})).await,
        "right"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("notes".to_owned(), "count".to_owned()),
            ("pb".to_owned(), "greet".to_owned()),
            ("right".to_owned(), "whoami".to_owned())
        ],
        "layers see the tool's own server and name, not the union's"
    );
}

/// A POST of JSON to `path`, accepting JSON or SSE.
fn post_to(path: &str) -> axum::http::request::Builder {
    Request::builder()
        .method("POST")
        .uri(path)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
}

async fn post(
    app: &axum::Router,
    path: &str,
    session: Option<&str>,
    body: Value,
) -> (StatusCode, Option<String>, Value) {
    let mut req = post_to(path);
    if let Some(id) = session {
        req = req
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let response = app
        .clone()
        .oneshot(req.body(Body::from(body.to_string())).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, session, body)
}

/// The tool names `tools/list` gives in `session` at `path`.
async fn listed_at(app: &axum::Router, path: &str, session: &str) -> Vec<String> {
    let (_, _, list) = post(
        app,
        path,
        Some(session),
        request(1, "tools/list", json!({})),
    )
    .await;
    names_of(&list)
}

#[tokio::test]
async fn one_router_serves_the_union_and_every_server_at_its_path() {
    let registry = clashing();
    let app = router_all(registry.clone(), HttpConfig::default());

    let (status, session, init) = post(&app, "/mcp/math", None, initialize()).await;
    assert_eq!(status, StatusCode::OK, "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "math");
    let math = session.expect("a session id");
    let listed = listed_at(&app, "/mcp/math", &math).await;
    assert!(
        !listed.contains(&"mcp__left__whoami".to_owned()),
        "math alone: {listed:?}"
    );
    let (_, _, whoami) = post(&app, "/mcp/left", None, initialize()).await;
    assert_eq!(whoami["result"]["serverInfo"]["name"], "left");

    // The union at the configured path, with its own sessions.
    let (status, union, init) = post(&app, "/mcp", None, initialize()).await;
    assert_eq!(status, StatusCode::OK, "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "registry");
    let union = union.expect("a session id");
    let listed = listed_at(&app, "/mcp", &union).await;
    assert!(
        listed.contains(&"mcp__left__whoami".to_owned()),
        "{listed:?}"
    );
    let (status, _, _) = post(
        &app,
        "/mcp",
        Some(&math),
        request(2, "tools/list", json!({})),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "math's session is not the union's"
    );
}

#[tokio::test]
async fn a_missing_or_disabled_server_is_404_naming_the_servers() {
    let registry = clashing();
    let app = router_all(registry.clone(), HttpConfig::default());
    let (_, session, _) = post(&app, "/mcp/math", None, initialize()).await;
    let math = session.expect("a session id");
    let (status, _, refused) = post(&app, "/mcp/nope", None, initialize()).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("\"nope\"")
            && message.contains("/mcp/math")
            && message.contains("/mcp/right"),
        "{message}"
    );
    registry.toggle_server("math", false).unwrap();
    let (status, _, refused) = post(
        &app,
        "/mcp/math",
        Some(&math),
        request(3, "tools/list", json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("disabled"),
        "{refused}"
    );
}

/// 2026-07-28: a `subscriptions/listen` stream on the union hears every server's changes, and
/// outlives any one server.
#[tokio::test]
async fn a_listen_stream_on_the_union_hears_every_server() {
    use common::listen::{cancel_unanswered, listen, next, open};
    let registry = Registry::from_servers([small_server("left", "whoami", "left")]);
    let filter = json!({"toolsListChanged": true, "resourcesListChanged": true});
    let (task, mut rx, token) = open(&registry, ALL_SERVERS, listen(json!(7), filter));
    assert_eq!(
        next(&mut rx).await["method"],
        "notifications/subscriptions/acknowledged"
    );
    let motd = Resource::builder("mem://motd", "motd")
        .handler(|_| async { "hi" })
        .unwrap();
    registry.register_server(Server::builder("docs").resource(motd).build().unwrap());
    assert_eq!(
        next(&mut rx).await["method"],
        "notifications/tools/list_changed"
    );
    assert_eq!(
        next(&mut rx).await["method"],
        "notifications/resources/list_changed"
    );
    registry.toggle_server("left", false).unwrap();
    assert_eq!(
        next(&mut rx).await["method"],
        "notifications/tools/list_changed"
    );
    assert!(!task.is_finished(), "the union's stream outlives a server");
    cancel_unanswered(task, token).await;
}

/// `completion/complete` of a prompt the union lists by its qualified name reaches that
/// server's prompt.
#[tokio::test]
async fn completion_through_the_union_reaches_the_named_servers_prompt() {
    use mcp_registry::completion::Completions;
    let review = |language: &'static str| {
        Prompt::builder("review")
            .required_argument("language", "The language")
            .complete("language", move |partial, _ctx| async move {
                Completions::matching([language], &partial)
            })
            .handler(|args| async move { format!("Review {}", args["language"]) })
            .unwrap()
    };
    let registry = Registry::from_servers([
        Server::builder("a")
            .prompt(review("python"))
            .build()
            .unwrap(),
        Server::builder("b").prompt(review("rust")).build().unwrap(),
    ]);
    let completed = ask(
        &registry,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "mcp__b__review"},
               "argument": {"name": "language", "value": ""}}),
    )
    .await;
    assert_eq!(
        completed["result"]["completion"]["values"],
        json!(["rust"]),
        "{completed}"
    );
}

/// With authorization, every endpoint is the one protected resource: a server's own path
/// wants the same token, and a missing server's 404 names nothing.
#[tokio::test]
async fn per_server_endpoints_share_the_unions_authorization() {
    use mcp_registry::transport::http::auth::{AccessClaims, Auth, BearerToken, TokenError};
    async fn validate(token: BearerToken) -> Result<AccessClaims, TokenError> {
        match token.secret() {
            "good-token-5c1f" => Ok(AccessClaims::new("alice")
                .with_audience(["http://localhost/mcp"])
                .with_expiry(std::time::SystemTime::now() + Duration::from_secs(3600))),
            _ => Err(TokenError::InvalidToken("not ours".into())),
        }
    }
    let auth = Auth::new("http://localhost/mcp", validate).unwrap();
    let app = router_all(clashing(), HttpConfig::default().auth(auth));
    let send = |path: &str, token: Option<&str>| {
        let mut req = post_to(path).header("host", "localhost");
        if let Some(token) = token {
            req = req.header("authorization", format!("Bearer {token}"));
        }
        app.clone()
            .oneshot(req.body(Body::from(initialize().to_string())).unwrap())
    };
    let refused = send("/mcp/math", None).await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let challenge = refused.headers()["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.contains("http://localhost/.well-known/oauth-protected-resource/mcp"),
        "{challenge}"
    );
    let served = send("/mcp/math", Some("good-token-5c1f")).await.unwrap();
    assert_eq!(served.status(), StatusCode::OK);
    let missing = send("/mcp/nope", None).await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    let body = missing.into_body().collect().await.unwrap().to_bytes();
    let body = String::from_utf8_lossy(&body);
    assert!(body.contains("nope") && !body.contains("math"), "{body}");
}

/// Host and Origin are checked on every endpoint (once, by the server's own router, or
/// before a missing server's 404), so a rebinding page learns nothing, not even which
/// servers there are.
#[tokio::test]
async fn every_endpoint_refuses_a_foreign_host_or_origin() {
    let app = router_all(clashing(), HttpConfig::default());
    let send = |path: &str, header: (&'static str, &'static str)| {
        let req = post_to(path).header(header.0, header.1);
        app.clone()
            .oneshot(req.body(Body::from(initialize().to_string())).unwrap())
    };
    for path in ["/mcp", "/mcp/math", "/mcp/nope"] {
        for foreign in [("host", "evil.example"), ("origin", "https://evil.example")] {
            let refused = send(path, foreign).await.unwrap();
            assert_eq!(
                refused.status(),
                StatusCode::FORBIDDEN,
                "{path} {foreign:?}"
            );
            let body = refused.into_body().collect().await.unwrap().to_bytes();
            let body = String::from_utf8_lossy(&body);
            assert!(
                body.contains("not allowed") && !body.contains("/mcp/math"),
                "{path}: {body}"
            );
        }
        let local = send(path, ("host", "localhost")).await.unwrap();
        let expected = match path {
            "/mcp/nope" => StatusCode::NOT_FOUND,
            _ => StatusCode::OK,
        };
        assert_eq!(local.status(), expected, "{path}");
    }
}

//! MCP authorization on the Streamable HTTP transport (the server as an OAuth 2.1 resource
//! server), driven through the axum router in-process.

use crate::common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::http::StatusCode;
use common::http::{Reply, send_to};
use mcp_registry::transport::http::auth::{AccessClaims, Auth, BearerToken, TokenError};
use mcp_registry::transport::http::{HttpConfig, router};
use mcp_registry::{Registry, Server, Tool, ToolContext};
use serde_json::{Value, json};
use tracing_subscriber::layer::SubscriberExt as _;

const RESOURCE: &str = "http://localhost/mcp";
const METADATA_URL: &str = "http://localhost/.well-known/oauth-protected-resource/mcp";

/// Tokens long and odd enough that finding one in a log cannot be a coincidence.
const ALICE: &str = "alice-tok-8f3e2a91c7d4";
const BOB: &str = "bob-tok-51b0e6c2aa93";
const FOREIGN: &str = "foreign-tok-77d1c04e9b2f";
const EXPIRED: &str = "expired-tok-0c9a6d3e5f18";
const NO_SCOPE: &str = "noscope-tok-3e8b1f7a2c60";
const DOWN: &str = "down-tok-9a2f4c6e8b1d";
const UNKNOWN: &str = "unknown-tok-6d5c4b3a2f1e";
const ALL_TOKENS: [&str; 7] = [ALICE, BOB, FOREIGN, EXPIRED, NO_SCOPE, DOWN, UNKNOWN];

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

/// The validator a user would write: a static table of tokens.
async fn validate(token: BearerToken) -> Result<AccessClaims, TokenError> {
    let hour = Duration::from_secs(3600);
    let claims = |subject: &str| {
        AccessClaims::new(subject)
            .with_audience([RESOURCE])
            .with_scopes(["mcp:tools"])
            .with_expiry(SystemTime::now() + hour)
    };
    match token.secret() {
        ALICE => Ok(claims("alice")
            .with_client_id("test-client")
            .with_claim("tenant", json!("acme"))),
        BOB => Ok(claims("bob").with_scopes(["mcp:tools", "files:write"])),
        FOREIGN => Ok(claims("alice").with_audience(["https://other.example.com/mcp"])),
        EXPIRED => Ok(claims("alice").with_expiry(SystemTime::now() - hour)),
        NO_SCOPE => Ok(claims("carol").with_scopes(Vec::<String>::new())),
        DOWN => Err(TokenError::Unavailable(
            "introspection endpoint down".into(),
        )),
        _ => Err(TokenError::InvalidToken("not in the table".into())),
    }
}

fn auth() -> Auth {
    Auth::new(RESOURCE, validate)
        .unwrap()
        .authorization_servers(["https://auth.example.com"])
        .scopes_supported(["mcp:tools", "files:write"])
        .required_scopes(["mcp:tools"])
        .tool_scopes("wipe", ["files:write"])
}

fn app() -> axum::Router {
    let whoami = Tool::builder("whoami")
        .typed(|ctx: ToolContext, _: NoArgs| async move {
            match ctx.get::<AccessClaims>() {
                Some(c) => json!({
                    "subject": c.subject,
                    "client": c.client_id,
                    "scopes": c.scopes,
                    "tenant": c.extra.get("tenant"),
                })
                .to_string(),
                None => "anonymous".to_owned(),
            }
        })
        .unwrap();
    let wipe = Tool::builder("wipe")
        .typed(|_: NoArgs| async { "wiped" })
        .unwrap();
    let registry = Registry::from_servers([Server::builder("files")
        .version("1.0.0")
        .tools([whoami, wipe])
        .build()
        .unwrap()]);
    router(registry, "files", HttpConfig::default().auth(auth()))
}

impl Reply {
    fn challenge(&self) -> &str {
        self.headers
            .get("www-authenticate")
            .unwrap_or_else(|| panic!("no WWW-Authenticate in {:?}", self.headers))
            .to_str()
            .unwrap()
    }
    /// The text of the first tool result's first content block.
    fn tool_text(&self) -> String {
        let reply = self.json();
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no tool text in {reply}"))
            .to_owned()
    }
}

async fn send(
    app: &axum::Router,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Reply {
    send_to(app, method, uri, headers, body.to_owned()).await
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// Opens a 2025-11-25 session with `authorization`: its id.
async fn open_session(app: &axum::Router, authorization: &str) -> String {
    let init = send(
        app,
        "POST",
        "/mcp",
        &[("authorization", authorization)],
        INIT,
    )
    .await;
    assert_eq!(init.status, StatusCode::OK, "{}", init.body);
    init.headers["mcp-session-id"].to_str().unwrap().to_owned()
}

/// The headers of a request in session `sid` with `authorization`.
fn in_session<'a>(authorization: &'a str, sid: &'a str) -> [(&'a str, &'a str); 3] {
    [
        ("authorization", authorization),
        ("mcp-session-id", sid),
        ("mcp-protocol-version", "2025-11-25"),
    ]
}

/// A stateless (2026-07-28) `tools/call` of `tool` with `token`.
async fn call(app: &axum::Router, token: Option<&str>, tool: &str) -> Reply {
    let auth = token.map(bearer);
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", tool),
    ];
    if let Some(auth) = &auth {
        headers.push(("authorization", auth));
    }
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    });
    send(app, "POST", "/mcp", &headers, &body.to_string()).await
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

#[tokio::test]
async fn metadata_is_served_at_both_well_known_paths() {
    let app = app();
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let r = send(
            &app,
            "GET",
            path,
            &[("origin", "https://inspector.example")],
            "",
        )
        .await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.body);
        assert_eq!(r.headers["content-type"], "application/json");
        assert_eq!(r.headers["access-control-allow-origin"], "*");
        assert_eq!(
            r.json(),
            json!({
                "resource": RESOURCE,
                "authorization_servers": ["https://auth.example.com"],
                "scopes_supported": ["mcp:tools", "files:write"],
                "bearer_methods_supported": ["header"],
            })
        );
        let preflight = send(&app, "OPTIONS", path, &[], "").await;
        assert_eq!(preflight.status, StatusCode::NO_CONTENT);
        assert_eq!(preflight.headers["access-control-allow-origin"], "*");
    }
    // The challenge points at the path-suffixed document, which is served.
    assert_eq!(auth().metadata_url(), METADATA_URL);
    // The metadata is still subject to the Host check against DNS rebinding.
    let r = send(
        &app,
        "GET",
        "/.well-known/oauth-protected-resource",
        &[("host", "evil.example")],
        "",
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn no_token_gets_401_with_the_metadata_url_and_scope() {
    let app = app();
    let r = call(&app, None, "whoami").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        r.challenge(),
        format!(r#"Bearer resource_metadata="{METADATA_URL}", scope="mcp:tools""#)
    );
    // Legacy initialize, GET and DELETE are protected too.
    for (method, body) in [("POST", INIT), ("GET", ""), ("DELETE", "")] {
        let r = send(&app, method, "/mcp", &[("mcp-session-id", "x")], body).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{method}");
        assert!(r.challenge().starts_with("Bearer resource_metadata="));
    }
    // Another scheme is no bearer token: no error code either.
    let r = send(
        &app,
        "POST",
        "/mcp",
        &[("authorization", "Basic dXNlcjpwdw==")],
        INIT,
    )
    .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(!r.challenge().contains("error="), "{}", r.challenge());
}

#[tokio::test]
async fn a_token_in_the_query_string_is_never_accepted() {
    let app = app();
    let uri = format!("/mcp?access_token={ALICE}");
    let r = send(&app, "POST", &uri, &[], INIT).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(!r.challenge().contains("error="));
}

#[tokio::test]
async fn a_bad_token_gets_401_invalid_token() {
    let app = app();
    for token in [UNKNOWN, "not a token"] {
        let r = call(&app, Some(token), "whoami").await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{token}");
        let challenge = r.challenge();
        assert!(
            challenge.starts_with(r#"Bearer error="invalid_token", error_description=""#),
            "{challenge}"
        );
        assert!(challenge.contains(&format!(r#"resource_metadata="{METADATA_URL}""#)));
        assert!(challenge.contains(r#"scope="mcp:tools""#));
        assert_eq!(r.json()["error"], "invalid_token");
        // The validator's own reason stays on the server.
        assert!(!r.body.contains("not in the table") && !challenge.contains("not in the table"));
    }
}

#[tokio::test]
async fn a_token_for_another_resource_or_expired_gets_401() {
    let app = app();
    let r = call(&app, Some(FOREIGN), "whoami").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(r.challenge().contains(r#"error="invalid_token""#));
    assert!(r.challenge().contains("not issued for this resource"));

    let r = call(&app, Some(EXPIRED), "whoami").await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    assert!(r.challenge().contains(r#"error="invalid_token""#));
    assert!(r.challenge().contains("expired"));
}

#[tokio::test]
async fn the_audience_matches_without_case_in_scheme_and_host_or_a_trailing_slash() {
    let validator = |_: BearerToken| async {
        Ok(AccessClaims::new("alice").with_audience(["HTTP://LocalHost/mcp/"]))
    };
    let app = router(
        Registry::new(),
        "none",
        HttpConfig::default().auth(Auth::new(RESOURCE, validator).unwrap()),
    );
    let r = send(
        &app,
        "POST",
        "/mcp",
        &[("authorization", &bearer(ALICE))],
        INIT,
    )
    .await;
    assert_ne!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);
}

#[tokio::test]
async fn a_valid_token_reaches_the_tool_as_claims() {
    let app = app();
    // Stateless (2026-07-28).
    let r = call(&app, Some(ALICE), "whoami").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let seen: Value = serde_json::from_str(&r.tool_text()).unwrap();
    assert_eq!(
        seen,
        json!({"subject": "alice", "client": "test-client", "scopes": ["mcp:tools"], "tenant": "acme"})
    );

    // A legacy session.
    let auth = bearer(ALICE);
    let sid = open_session(&app, &auth).await;
    let h = in_session(&auth, &sid);
    let r = send(
        &app,
        "POST",
        "/mcp",
        &h,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}"#,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.tool_text().contains(r#""subject":"alice""#));
}

#[tokio::test]
async fn a_session_is_bound_to_the_subject_that_opened_it() {
    let app = app();
    let sid = open_session(&app, &bearer(ALICE)).await;
    let bob = bearer(BOB);
    let h = in_session(&bob, &sid);
    let r = send(
        &app,
        "POST",
        "/mcp",
        &h,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let r = send(&app, "DELETE", "/mcp", &h, "").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    // Alice's session is still there for her.
    let alice = bearer(ALICE);
    let r = send(
        &app,
        "DELETE",
        "/mcp",
        &[("authorization", &alice), ("mcp-session-id", &sid)],
        "",
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
}

#[tokio::test]
async fn a_tool_needing_more_scope_gets_403_insufficient_scope() {
    let app = app();
    let r = call(&app, Some(ALICE), "wipe").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let challenge = r.challenge();
    assert!(
        challenge
            .starts_with(r#"Bearer error="insufficient_scope", scope="mcp:tools files:write""#),
        "{challenge}"
    );
    assert!(challenge.contains(&format!(r#"resource_metadata="{METADATA_URL}""#)));
    assert_eq!(r.json()["error"], "insufficient_scope");

    // With the scope, the call goes through.
    let r = call(&app, Some(BOB), "wipe").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.tool_text(), "wiped");

    // A token without the scopes every request needs: 403 naming them.
    let r = call(&app, Some(NO_SCOPE), "whoami").await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(
        r.challenge()
            .starts_with(r#"Bearer error="insufficient_scope", scope="mcp:tools""#)
    );
}

#[tokio::test]
async fn a_validator_that_cannot_decide_gets_503() {
    let r = call(&app(), Some(DOWN), "whoami").await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.json()["error"], "temporarily_unavailable");
}

#[tokio::test]
async fn without_auth_tools_see_no_claims() {
    let whoami = Tool::builder("whoami")
        .typed(|ctx: ToolContext, _: NoArgs| async move {
            ctx.get::<AccessClaims>().is_none().to_string()
        })
        .unwrap();
    let registry =
        Registry::from_servers([Server::builder("files").tools([whoami]).build().unwrap()]);
    let app = router(registry, "files", HttpConfig::default());
    let r = call(&app, Some(ALICE), "whoami").await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.tool_text(), "true");
    let r = send(
        &app,
        "GET",
        "/.well-known/oauth-protected-resource",
        &[],
        "",
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

/// Every tracing event and span, as text: message and fields.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(format!("{fields:?}"));
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(format!("{fields:?}"));
    }
}

#[tokio::test]
async fn tokens_never_appear_in_logs_debug_or_responses() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);

    let app = app();
    let mut responses = Vec::new();
    for token in ALL_TOKENS {
        for tool in ["whoami", "wipe"] {
            let r = call(&app, Some(token), tool).await;
            responses.push(format!("{:?} {}", r.headers, r.body));
        }
    }
    let logs = capture.0.lock().unwrap().clone();
    // The refusals are logged (so this test looks at something), without the token.
    assert!(
        logs.iter().any(|l| l.contains("access token refused")),
        "{logs:#?}"
    );
    let claims = validate(BearerToken::new(ALICE)).await.unwrap();
    let debug = [
        format!("{:?}", BearerToken::new(ALICE)),
        format!("{:?}", HttpConfig::default().auth(auth())),
        format!("{claims:?}"),
    ];
    for token in ALL_TOKENS {
        for text in logs.iter().chain(&responses).chain(&debug) {
            assert!(!text.contains(token), "{token} leaked in {text}");
        }
    }
}

//! OAuth 2.1 in the HTTP client (feature `client-auth`), against an in-test authorization
//! server and an MCP server that wants bearer tokens, on one axum listener.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use mcp_registry::client::auth::{AuthError, FollowRedirects, MemoryTokenStore, OAuth, TokenStore};
use mcp_registry::client::transport::TransportError;
use mcp_registry::client::{Client, ClientError};
use mcp_registry::transport::http::{HttpConfig, router};
use mcp_registry::{Registry, Server, Tool};
use serde_json::json;
use sha2::Digest;

const REDIRECT: &str = "http://localhost:1/callback";

#[derive(Default)]
struct Auth {
    base: String,
    /// What the authorization endpoint puts in `iss`: the issuer unless set.
    iss: Option<String>,
    challenges: HashMap<String, String>,
    valid: HashSet<String>,
    issued: usize,
    authorize_requests: usize,
    registrations: usize,
    grants: Vec<String>,
    resources: Vec<String>,
    pkce_ok: Vec<bool>,
    scopes: Vec<String>,
    /// `expires_in` of issued tokens (3600 unless set).
    expires_in: Option<u64>,
    unauthorized: usize,
    /// Valid tokens are refused as lacking scope `admin`.
    forbid: bool,
    /// A 2025-03-26 server: no metadata documents, no `resource_metadata` in challenges.
    legacy: bool,
}

type Shared = Arc<Mutex<Auth>>;

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

fn form(s: &str) -> HashMap<String, String> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// The base URL the metadata documents name; none on a 2025-03-26 server, which has none.
fn metadata_base(auth: &Shared) -> Option<String> {
    let auth = auth.lock().unwrap();
    (!auth.legacy).then(|| auth.base.clone())
}

async fn resource_metadata(State(auth): State<Shared>) -> Response {
    let Some(base) = metadata_base(&auth) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    axum::Json(json!({
        "resource": format!("{base}/mcp"),
        "authorization_servers": [base],
        "scopes_supported": ["mcp"],
    }))
    .into_response()
}

async fn server_metadata(State(auth): State<Shared>) -> Response {
    let Some(base) = metadata_base(&auth) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    axum::Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": true,
    }))
    .into_response()
}

async fn register(State(auth): State<Shared>) -> Response {
    auth.lock().unwrap().registrations += 1;
    (
        StatusCode::CREATED,
        axum::Json(json!({"client_id": "client-1", "redirect_uris": [REDIRECT]})),
    )
        .into_response()
}

async fn authorize(State(auth): State<Shared>, uri: Uri) -> Response {
    let query = form(uri.query().unwrap_or(""));
    let mut auth = auth.lock().unwrap();
    auth.authorize_requests += 1;
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["redirect_uri"], REDIRECT);
    auth.resources.push(query["resource"].clone());
    auth.scopes
        .push(query.get("scope").cloned().unwrap_or_default());
    let code = format!("code-{}", auth.authorize_requests);
    auth.challenges
        .insert(code.clone(), query["code_challenge"].clone());
    let iss = auth.iss.clone().unwrap_or_else(|| auth.base.clone());
    let location = format!(
        "{REDIRECT}?code={code}&state={}&iss={}",
        query["state"],
        iss.replace(':', "%3A").replace('/', "%2F")
    );
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

async fn token(State(auth): State<Shared>, body: String) -> Response {
    let body = form(&body);
    let mut auth = auth.lock().unwrap();
    let grant = body["grant_type"].clone();
    auth.grants.push(grant.clone());
    auth.resources.push(body["resource"].clone());
    assert_eq!(body["client_id"], "client-1");
    if grant == "authorization_code" {
        let challenge = auth.challenges.get(&body["code"]).cloned();
        let digest = sha2::Sha256::digest(body["code_verifier"].as_bytes());
        let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
        auth.pkce_ok.push(challenge == Some(computed));
    } else {
        assert_eq!(body["refresh_token"], "refresh-1");
    }
    auth.issued += 1;
    let access = format!("access-{}", auth.issued);
    auth.valid.insert(access.clone());
    axum::Json(json!({
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": auth.expires_in.unwrap_or(3600),
        "refresh_token": "refresh-1",
    }))
    .into_response()
}

/// The MCP endpoint's gate: a valid bearer token, else 401 with the resource metadata URL.
async fn gate(
    State(auth): State<Shared>,
    headers: HeaderMap,
    request: Request,
    next: Next,
) -> Response {
    let (valid, base, forbid, legacy) = {
        let auth = auth.lock().unwrap();
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        (
            presented.is_some_and(|t| auth.valid.contains(t)),
            auth.base.clone(),
            auth.forbid,
            auth.legacy,
        )
    };
    if valid && forbid {
        return Response::builder()
            .status(StatusCode::FORBIDDEN)
            .header(
                header::WWW_AUTHENTICATE,
                r#"Bearer error="insufficient_scope", scope="admin""#,
            )
            .body(Body::empty())
            .unwrap();
    }
    if valid {
        return next.run(request).await;
    }
    auth.lock().unwrap().unauthorized += 1;
    let challenge = if legacy {
        r#"Bearer error="invalid_token""#.to_owned()
    } else {
        format!(
            r#"Bearer error="invalid_token", resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
        )
    };
    Response::builder()
        .status(StatusCode::UNAUTHORIZED)
        .header(header::WWW_AUTHENTICATE, challenge)
        .body(Body::empty())
        .unwrap()
}

async fn start(iss: Option<&str>) -> (String, Shared) {
    let echo = Tool::new("echo", "Echoes", json!({"type": "object"}), |_| async {
        "hi"
    })
    .unwrap();
    let server = Server::builder("guarded").tools([echo]).build().unwrap();
    let registry = Registry::from_servers([server]);
    let auth: Shared = Arc::default();
    auth.lock().unwrap().iss = iss.map(str::to_owned);
    let mcp = router(registry, "guarded", HttpConfig::default())
        .layer(axum::middleware::from_fn_with_state(auth.clone(), gate));
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(resource_metadata),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(server_metadata),
        )
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/register", post(register))
        .with_state(auth.clone())
        .merge(mcp);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    auth.lock().unwrap().base = base.clone();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, auth)
}

fn oauth(store: Arc<MemoryTokenStore>) -> OAuth {
    struct Shared(Arc<MemoryTokenStore>);
    impl TokenStore for Shared {
        fn load(&self, r: &str) -> Option<mcp_registry::client::auth::Tokens> {
            self.0.load(r)
        }
        fn save(&self, r: &str, t: mcp_registry::client::auth::Tokens) {
            self.0.save(r, t)
        }
        fn clear(&self, r: &str) {
            self.0.clear(r)
        }
    }
    OAuth::new(REDIRECT, FollowRedirects::new())
        .client_name("auth-test")
        .token_store(Shared(store))
}

/// A client of the MCP endpoint at `base` authorizing with OAuth, its tokens in a fresh store.
async fn connect(base: &str) -> Result<Client, ClientError> {
    Client::builder()
        .oauth(oauth(Arc::new(MemoryTokenStore::new())))
        .connect_http(&format!("{base}/mcp"))
        .await
}

#[tokio::test]
async fn discovery_registration_pkce_and_token() {
    let (base, auth) = start(None).await;
    let store = Arc::new(MemoryTokenStore::new());
    let url = format!("{base}/mcp");
    let client = Client::builder()
        .oauth(oauth(store.clone()))
        .connect_http(&url)
        .await
        .unwrap();
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools[0].name, "echo");
    client.call_tool("echo", json!({})).await.unwrap();
    client.close().await;
    let auth = auth.lock().unwrap();
    assert_eq!(auth.registrations, 1);
    assert_eq!(
        auth.authorize_requests, 1,
        "one authorization serves every request"
    );
    assert_eq!(auth.grants, ["authorization_code"]);
    assert_eq!(auth.pkce_ok, [true]);
    assert!(
        auth.resources.iter().all(|r| *r == url),
        "{:?}",
        auth.resources
    );
    let tokens = store.load(&url).unwrap();
    assert_eq!(tokens.access_token, "access-1");
    assert_eq!(tokens.issuer, base);
    assert_eq!(tokens.scopes, ["mcp"]);
}

#[tokio::test]
async fn a_2025_03_26_server_without_metadata_gets_the_default_endpoints() {
    let (base, auth) = start(None).await;
    auth.lock().unwrap().legacy = true;
    let client = connect(&base).await.unwrap();
    client.list_tools().await.unwrap();
    client.close().await;
    let auth = auth.lock().unwrap();
    // /register, /authorize and /token at the MCP URL's origin, PKCE all the same.
    assert_eq!(auth.registrations, 1);
    assert_eq!(auth.authorize_requests, 1);
    assert_eq!(auth.grants, ["authorization_code"]);
    assert_eq!(auth.pkce_ok, [true]);
}

#[tokio::test]
async fn an_expired_token_is_refreshed() {
    let (base, auth) = start(None).await;
    let url = format!("{base}/mcp");
    let client = connect(&base).await.unwrap();
    client.list_tools().await.unwrap();
    // The server forgets every token: the next request is refused and the client refreshes.
    auth.lock().unwrap().valid.clear();
    client.call_tool("echo", json!({})).await.unwrap();
    client.close().await;
    let auth = auth.lock().unwrap();
    assert_eq!(auth.authorize_requests, 1, "no second authorization");
    assert_eq!(auth.grants, ["authorization_code", "refresh_token"]);
    assert!(auth.resources.iter().all(|r| *r == url));
}

#[tokio::test]
async fn a_wrong_iss_is_refused_before_the_code_is_exchanged() {
    let (base, auth) = start(Some("https://evil.example.com")).await;
    let err = connect(&base).await.unwrap_err();
    let auth_error = match &err {
        ClientError::Transport(TransportError::Auth(e)) => e.clone(),
        other => panic!("not an authorization error: {other:?}"),
    };
    assert_eq!(
        auth_error,
        AuthError::IssMismatch {
            expected: base.clone(),
            found: "https://evil.example.com".into(),
        }
    );
    let auth = auth.lock().unwrap();
    assert_eq!(auth.authorize_requests, 1);
    assert!(
        auth.grants.is_empty(),
        "the code never reached the token endpoint"
    );
}

#[tokio::test]
async fn a_normalized_iss_is_refused() {
    let (base, auth) = start(None).await;
    // The issuer with a trailing slash: the same after URL normalization, not as a string.
    auth.lock().unwrap().iss = Some(format!("{base}/"));
    let err = connect(&base).await.unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Transport(TransportError::Auth(AuthError::IssMismatch { .. }))
        ),
        "{err:?}"
    );
    assert!(auth.lock().unwrap().grants.is_empty());
}

#[tokio::test]
async fn secrets_stay_out_of_debug() {
    let (base, _auth) = start(None).await;
    let store = Arc::new(MemoryTokenStore::new());
    let client = Client::builder()
        .oauth(oauth(store.clone()))
        .connect_http(&format!("{base}/mcp"))
        .await
        .unwrap();
    let tokens = store.load(&format!("{base}/mcp")).unwrap();
    for shown in [
        format!("{tokens:?}"),
        format!("{store:?}"),
        format!("{client:?}"),
    ] {
        assert!(!shown.contains("access-1"), "{shown}");
        assert!(!shown.contains("refresh-1"), "{shown}");
    }
    client.close().await;
}

#[tokio::test]
async fn step_up_asks_for_the_union_and_gives_up_after_the_limit() {
    let (base, auth) = start(None).await;
    auth.lock().unwrap().forbid = true;
    let err = connect(&base).await.unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Transport(TransportError::Auth(AuthError::RetryLimit { attempts: 3 }))
        ),
        "{err:?}"
    );
    let auth = auth.lock().unwrap();
    assert_eq!(
        auth.authorize_requests, 3,
        "the initial one and two step-ups"
    );
    assert_eq!(auth.grants.len(), 3);
    assert_eq!(auth.scopes, ["mcp", "mcp admin", "mcp admin"]);
}

#[tokio::test]
async fn a_token_about_to_expire_is_refreshed_before_it_is_sent() {
    let (base, auth) = start(None).await;
    auth.lock().unwrap().expires_in = Some(1);
    let client = connect(&base).await.unwrap();
    let refused = auth.lock().unwrap().unauthorized;
    client.list_tools().await.unwrap();
    client.close().await;
    let auth = auth.lock().unwrap();
    assert_eq!(auth.unauthorized, refused, "no request was refused");
    assert_eq!(auth.authorize_requests, 1);
    assert_eq!(auth.grants[0], "authorization_code");
    assert!(auth.grants.len() >= 2);
    assert!(auth.grants[1..].iter().all(|g| g == "refresh_token"));
}

#[tokio::test]
async fn a_static_authorization_header_still_goes_out() {
    let (base, auth) = start(None).await;
    auth.lock().unwrap().valid.insert("static".into());
    let client = Client::builder()
        .header("Authorization", "Bearer static")
        .connect_http(&format!("{base}/mcp"))
        .await
        .unwrap();
    client.list_tools().await.unwrap();
    client.close().await;
    assert_eq!(auth.lock().unwrap().unauthorized, 0);
}

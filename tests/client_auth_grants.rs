//! The client's authorization extensions (feature `client-auth`) against an in-test
//! authorization server and enterprise IdP, and this crate's own HTTP server as the protected
//! resource (with DPoP, feature `http-dpop`), on one axum listener: client credentials with a
//! secret and with a signed assertion, workload identity, enterprise-managed authorization,
//! and DPoP end to end (nonces at both servers).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use jsonwebtoken::{DecodingKey, Validation};
use mcp_registry::client::auth::{
    AuthError, ClientCredentials, EnterpriseIdp, OAuth, SigningKey, TokenSource,
};
use mcp_registry::client::transport::TransportError;
use mcp_registry::client::{Client, ClientError};
use mcp_registry::transport::http::auth::{AccessClaims, Auth, BearerToken};
use mcp_registry::transport::http::dpop::{Dpop, thumbprint};
use mcp_registry::transport::http::{HttpConfig, router};
use mcp_registry::{Registry, Server, Tool};
use serde_json::{Value, json};

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const AS_NONCE: &str = "as-nonce-1";

/// What the authorization server and the IdP saw and are told to do.
#[derive(Default)]
struct Servers {
    base: String,
    /// Token requests: the form and the `Authorization` header.
    requests: Vec<(HashMap<String, String>, Option<String>)>,
    idp_requests: Vec<HashMap<String, String>>,
    /// Issued tokens and the DPoP key thumbprint each is bound to.
    issued: HashMap<String, Option<String>>,
    /// The public key of a `private_key_jwt` client, and the claims of its assertions.
    client_key: Option<Value>,
    assertions: Vec<Value>,
    /// Advertise DPoP and require a proof (with `AS_NONCE`) at the token endpoint.
    dpop: bool,
    nonce_challenges: usize,
    /// Refuse every token request with this error.
    refuse: Option<&'static str>,
    /// `expires_in` of issued tokens (3600 unless set).
    expires_in: Option<u64>,
}

type Shared = Arc<Mutex<Servers>>;

fn form(body: &str) -> HashMap<String, String> {
    body.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| {
            let decode = |s: &str| {
                let s = s.replace('+', " ");
                let mut out = Vec::new();
                let mut bytes = s.bytes();
                while let Some(b) = bytes.next() {
                    if b == b'%' {
                        let hex: String = bytes.by_ref().take(2).map(char::from).collect();
                        out.push(u8::from_str_radix(&hex, 16).unwrap());
                    } else {
                        out.push(b);
                    }
                }
                String::from_utf8(out).unwrap()
            };
            (decode(k), decode(v))
        })
        .collect()
}

fn oauth_error(error: &str) -> Response {
    (StatusCode::BAD_REQUEST, axum::Json(json!({"error": error}))).into_response()
}

async fn server_metadata(State(s): State<Shared>) -> Response {
    let s = s.lock().unwrap();
    let mut metadata = json!({
        "issuer": s.base,
        "token_endpoint": format!("{}/token", s.base),
        "grant_types_supported": ["client_credentials", JWT_BEARER],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "private_key_jwt", "none"],
        "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
    });
    if s.dpop {
        metadata["dpop_signing_alg_values_supported"] = json!(["ES256"]);
    }
    axum::Json(metadata).into_response()
}

/// The DPoP proof of a token request: its key's thumbprint, or the error answer.
fn check_proof(s: &mut Servers, headers: &HeaderMap) -> Result<String, Box<Response>> {
    let proof = headers
        .get("dpop")
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| Box::new(oauth_error("invalid_dpop_proof")))?;
    let header = jsonwebtoken::decode_header(proof).unwrap();
    assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
    let jwk = header.jwk.unwrap();
    let mut validation = Validation::new(header.alg);
    validation.required_spec_claims.clear();
    validation.validate_aud = false;
    let key = DecodingKey::from_jwk(&jwk).unwrap();
    let claims = jsonwebtoken::decode::<Value>(proof, &key, &validation)
        .unwrap()
        .claims;
    assert_eq!(claims["htm"], "POST");
    assert_eq!(claims["htu"], format!("{}/token", s.base));
    assert!(
        claims.get("ath").is_none(),
        "no token at the token endpoint"
    );
    if claims["nonce"] != AS_NONCE {
        s.nonce_challenges += 1;
        let mut response = oauth_error("use_dpop_nonce");
        response
            .headers_mut()
            .insert("dpop-nonce", AS_NONCE.parse().unwrap());
        return Err(Box::new(response));
    }
    Ok(thumbprint(&serde_json::to_value(&jwk).unwrap()).unwrap())
}

async fn token(State(s): State<Shared>, headers: HeaderMap, body: String) -> Response {
    let body = form(&body);
    let mut s = s.lock().unwrap();
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap().to_owned());
    s.requests.push((body.clone(), authorization));
    if let Some(error) = s.refuse {
        return oauth_error(error);
    }
    if let Some(assertion) = body.get("client_assertion") {
        let jwk = serde_json::from_value(s.client_key.clone().unwrap()).unwrap();
        let mut validation = Validation::new(jsonwebtoken::Algorithm::ES256);
        validation.set_audience(&[&s.base]);
        let key = DecodingKey::from_jwk(&jwk).unwrap();
        let claims = jsonwebtoken::decode::<Value>(assertion, &key, &validation)
            .unwrap()
            .claims;
        s.assertions.push(claims);
    }
    let jkt = if s.dpop {
        match check_proof(&mut s, &headers) {
            Ok(jkt) => Some(jkt),
            Err(response) => return *response,
        }
    } else {
        None
    };
    let access = format!("tok-{}", s.issued.len() + 1);
    let token_type = if jkt.is_some() { "DPoP" } else { "Bearer" };
    s.issued.insert(access.clone(), jkt);
    let expires_in = s.expires_in.unwrap_or(3600);
    axum::Json(json!({"access_token": access, "token_type": token_type, "expires_in": expires_in}))
        .into_response()
}

async fn idp_token(State(s): State<Shared>, body: String) -> Response {
    s.lock().unwrap().idp_requests.push(form(&body));
    axum::Json(json!({
        "access_token": "id-jag-1",
        "issued_token_type": ID_JAG,
        "token_type": "N_A",
    }))
    .into_response()
}

/// The servers, and the MCP URL (this crate's server, taking the tokens the authorization
/// server issued, DPoP with nonces on).
async fn start(dpop: bool) -> (String, Shared) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let resource = format!("{base}/mcp");
    let shared: Shared = Arc::default();
    {
        let mut s = shared.lock().unwrap();
        s.base = base.clone();
        s.dpop = dpop;
    }
    let issued = shared.clone();
    let audience = resource.clone();
    let validate = move |token: BearerToken| {
        let bound = issued.lock().unwrap().issued.get(token.secret()).cloned();
        let claims = AccessClaims::new("svc").with_audience([audience.clone()]);
        async move {
            match bound {
                Some(Some(jkt)) => Ok(claims.with_dpop_jkt(jkt)),
                Some(None) => Ok(claims),
                None => Err(
                    mcp_registry::transport::http::auth::TokenError::InvalidToken(
                        "not issued".into(),
                    ),
                ),
            }
        }
    };
    let auth = Auth::new(&resource, validate)
        .unwrap()
        .authorization_servers([base.clone()])
        .dpop(Dpop::new().nonces(Duration::from_secs(300)));
    let echo = Tool::new("echo", "Echoes", json!({"type": "object"}), |_| async {
        "hi"
    })
    .unwrap();
    let registry = Registry::from_servers([Server::builder("s").tools([echo]).build().unwrap()]);
    let config = HttpConfig::default()
        .auth(auth)
        .allowed_hosts([listener.local_addr().unwrap().to_string()]);
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            get(server_metadata),
        )
        .route("/token", post(token))
        .route("/idp/token", post(idp_token))
        .with_state(shared.clone())
        .merge(router(registry, "s", config));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (resource, shared)
}

async fn list_tools(oauth: OAuth, url: &str) -> Result<(), ClientError> {
    let client = Client::builder().oauth(oauth).connect_http(url).await?;
    let tools = client.list_tools().await?;
    assert_eq!(tools[0].name, "echo");
    client.call_tool("echo", json!({})).await?;
    client.close().await;
    Ok(())
}

#[tokio::test]
async fn client_credentials_with_a_secret_use_http_basic() {
    let (url, servers) = start(false).await;
    let credentials = ClientCredentials::new("svc one").secret("s3:cret");
    list_tools(OAuth::client_credentials(credentials), &url)
        .await
        .unwrap();
    let s = servers.lock().unwrap();
    assert_eq!(s.requests.len(), 1, "one grant serves every request");
    let (form, authorization) = &s.requests[0];
    assert_eq!(form["grant_type"], "client_credentials");
    assert_eq!(form["resource"], url);
    assert!(!form.contains_key("client_secret"));
    // RFC 6749 §2.3.1: form-encoded before Basic.
    let expected = format!("Basic {}", STANDARD.encode("svc+one:s3%3Acret"));
    assert_eq!(authorization.as_deref(), Some(expected.as_str()));
}

#[tokio::test]
async fn an_expiring_client_credentials_token_is_renewed_before_it_is_sent() {
    let (url, servers) = start(false).await;
    // Inside the client's 30 s margin from the start: every request renews first.
    servers.lock().unwrap().expires_in = Some(5);
    let credentials = ClientCredentials::new("svc").secret("pw");
    let client = Client::builder()
        .oauth(OAuth::client_credentials(credentials))
        .connect_http(&url)
        .await
        .unwrap();
    let after_connect = servers.lock().unwrap().requests.len();
    client.list_tools().await.unwrap();
    client.call_tool("echo", json!({})).await.unwrap();
    client.close().await;
    let s = servers.lock().unwrap();
    assert!(
        s.requests.len() >= after_connect + 2,
        "renewed before each request: {} grants, {after_connect} after connecting",
        s.requests.len()
    );
    assert!(
        s.requests
            .iter()
            .all(|(f, _)| f["grant_type"] == "client_credentials")
    );
}

#[tokio::test]
async fn client_credentials_with_a_key_send_a_signed_assertion() {
    let (url, servers) = start(false).await;
    let key = SigningKey::generate().unwrap();
    servers.lock().unwrap().client_key = Some(key.public_jwk());
    let credentials = ClientCredentials::new("svc").private_key_jwt(key);
    list_tools(OAuth::client_credentials(credentials), &url)
        .await
        .unwrap();
    let s = servers.lock().unwrap();
    let (form, authorization) = &s.requests[0];
    assert_eq!(
        form["client_assertion_type"],
        "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    );
    assert!(authorization.is_none());
    let claims = &s.assertions[0];
    assert_eq!(claims["iss"], "svc");
    assert_eq!(claims["sub"], "svc");
    assert_eq!(claims["aud"], s.base);
    assert!(claims["jti"].as_str().is_some_and(|j| !j.is_empty()));
}

#[tokio::test]
async fn workload_identity_presents_the_token_from_its_file() {
    let (url, servers) = start(false).await;
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("wif-token-ok");
    std::fs::write(&path, "workload-jwt-1\n").unwrap();
    let oauth = OAuth::workload_identity(ClientCredentials::new("wl"), TokenSource::file(&path));
    list_tools(oauth, &url).await.unwrap();
    let s = servers.lock().unwrap();
    let (form, _) = &s.requests[0];
    assert_eq!(form["grant_type"], JWT_BEARER);
    assert_eq!(form["assertion"], "workload-jwt-1");
    assert_eq!(form["client_id"], "wl");
}

#[tokio::test]
async fn a_refused_workload_assertion_is_not_retried() {
    let (url, servers) = start(false).await;
    servers.lock().unwrap().refuse = Some("invalid_grant");
    let source = TokenSource::callback(|| async { Ok("workload-jwt-2".to_string()) });
    let err = list_tools(
        OAuth::workload_identity(ClientCredentials::new("wl"), source),
        &url,
    )
    .await
    .unwrap_err();
    match err {
        ClientError::Transport(TransportError::Auth(AuthError::TokenExchange(why))) => {
            assert!(why.contains("invalid_grant"), "{why}")
        }
        other => panic!("not a refused grant: {other:?}"),
    }
    assert_eq!(servers.lock().unwrap().requests.len(), 1);

    let missing = TokenSource::env("MCP_REGISTRY_TEST_UNSET_WORKLOAD_TOKEN");
    let err = list_tools(
        OAuth::workload_identity(ClientCredentials::new("wl"), missing),
        &url,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            &err,
            ClientError::Transport(TransportError::Auth(AuthError::TokenSource(why)))
                if why.contains("MCP_REGISTRY_TEST_UNSET_WORKLOAD_TOKEN")
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn enterprise_managed_exchanges_the_id_token_for_an_id_jag_then_presents_it() {
    let (url, servers) = start(false).await;
    let base = servers.lock().unwrap().base.clone();
    let idp = EnterpriseIdp::new(
        format!("{base}/idp/token"),
        ClientCredentials::new("at-idp"),
        TokenSource::callback(|| async { Ok("user-id-token".to_string()) }),
    );
    let client = ClientCredentials::new("host").secret("pw");
    list_tools(OAuth::enterprise_managed(client, idp), &url)
        .await
        .unwrap();
    let s = servers.lock().unwrap();
    let exchange = &s.idp_requests[0];
    assert_eq!(
        exchange["grant_type"],
        "urn:ietf:params:oauth:grant-type:token-exchange"
    );
    assert_eq!(exchange["requested_token_type"], ID_JAG);
    assert_eq!(exchange["subject_token"], "user-id-token");
    assert_eq!(
        exchange["subject_token_type"],
        "urn:ietf:params:oauth:token-type:id_token"
    );
    assert_eq!(exchange["audience"], base);
    assert_eq!(exchange["resource"], url);
    assert_eq!(exchange["client_id"], "at-idp");
    let (form, authorization) = &s.requests[0];
    assert_eq!(form["grant_type"], JWT_BEARER);
    assert_eq!(form["assertion"], "id-jag-1");
    let basic = format!("Basic {}", STANDARD.encode("host:pw"));
    assert_eq!(authorization.as_deref(), Some(basic.as_str()));
}

#[tokio::test]
async fn dpop_end_to_end_with_nonces_at_both_servers() {
    let (url, servers) = start(true).await;
    let key = SigningKey::generate().unwrap();
    let jkt = thumbprint(&key.public_jwk()).unwrap();
    let oauth = OAuth::client_credentials(ClientCredentials::new("svc").secret("pw")).dpop(key);
    list_tools(oauth, &url).await.unwrap();
    let token = {
        let s = servers.lock().unwrap();
        assert_eq!(
            s.nonce_challenges, 1,
            "the token request retried once with the nonce"
        );
        assert_eq!(s.requests.len(), 2);
        assert_eq!(s.issued.values().cloned().collect::<Vec<_>>(), [Some(jkt)]);
        s.issued.keys().next().unwrap().clone()
    };
    // The MCP server took the bound token only with proofs by that key (its nonce included):
    // a bearer presentation of it is refused.
    let refused = reqwest::Client::new()
        .post(&url)
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), reqwest::StatusCode::UNAUTHORIZED);
    let challenge = refused.headers()["www-authenticate"].to_str().unwrap();
    assert!(
        challenge.starts_with("DPoP error=\"invalid_dpop_proof\""),
        "{challenge}"
    );
}

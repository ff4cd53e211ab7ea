//! DPoP-bound access tokens on the Streamable HTTP server (RFC 9449, feature `http-dpop`),
//! driven through the axum router in-process (and once through `serve`, over loopback) with
//! proofs signed here, on a fixed clock.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::http::Reply;
use http_body_util::BodyExt;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_registry::client::auth::SigningKey;
use mcp_registry::transport::http::auth::{AccessClaims, Auth, BearerToken, TokenError};
use mcp_registry::transport::http::dpop::{Dpop, thumbprint};
use mcp_registry::transport::http::{HttpConfig, router, serve_listener};
use mcp_registry::{Registry, Server, Tool};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tower::ServiceExt;

const RESOURCE: &str = "http://localhost/mcp";
/// The server's clock at the start of each test (seconds since the Unix epoch).
const NOW: u64 = 1_800_000_000;
const BOUND: &str = "bound-tok-4c1e9a";
const PLAIN: &str = "plain-tok-77b2d0";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

/// A client's DPoP key, and what it signs proofs with.
struct Prover {
    key: SigningKey,
    encoding: EncodingKey,
}

impl Prover {
    fn new() -> Self {
        let key = SigningKey::generate().unwrap();
        let encoding = EncodingKey::from_ec_der(key.to_pkcs8_der());
        Prover { key, encoding }
    }

    fn jkt(&self) -> String {
        thumbprint(&self.key.public_jwk()).unwrap()
    }

    /// A proof with `claims`, the header's `jwk` replaced by `jwk` when given.
    fn sign_with(&self, claims: &Value, jwk: Option<Value>) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".into());
        header.jwk = Some(serde_json::from_value(self.key.public_jwk()).unwrap());
        let jwt = jsonwebtoken::encode(&header, claims, &self.encoding).unwrap();
        let Some(jwk) = jwk else { return jwt };
        // Swap the header (the signature no longer covers it; the jwk check comes first).
        let mut raw: Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(jwt.split('.').next().unwrap())
                .unwrap(),
        )
        .unwrap();
        raw["jwk"] = jwk;
        let rest = jwt.split_once('.').unwrap().1;
        format!("{}.{rest}", URL_SAFE_NO_PAD.encode(raw.to_string()))
    }

    /// The claims of a good proof of a POST to the resource presenting `token`.
    fn claims(token: &str, jti: &str) -> Value {
        json!({
            "jti": jti,
            "htm": "POST",
            "htu": RESOURCE,
            "iat": NOW,
            "ath": URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())),
        })
    }

    fn proof(&self, claims: &Value) -> String {
        self.sign_with(claims, None)
    }
}

/// The router, its DPoP settings made by `dpop` on a clock the test moves, and the key the
/// bound token is bound to.
fn app(prover: &Prover, dpop: impl FnOnce(Dpop) -> Dpop) -> (axum::Router, Arc<AtomicU64>) {
    let (auth, clock) = auth(vec![(BOUND, prover.jkt())], dpop);
    (
        router(registry(), "s", HttpConfig::default().auth(auth)),
        clock,
    )
}

/// The endpoint's auth: `bindings` are the bound tokens and their keys' thumbprints (and
/// [`PLAIN`] a bearer token); DPoP made by `dpop` on a clock the test moves.
fn auth(
    bindings: Vec<(&'static str, String)>,
    dpop: impl FnOnce(Dpop) -> Dpop,
) -> (Auth, Arc<AtomicU64>) {
    let clock = Arc::new(AtomicU64::new(NOW));
    let now = clock.clone();
    let bindings = Arc::new(bindings);
    let validate = move |token: BearerToken| {
        let bindings = bindings.clone();
        async move {
            let claims = AccessClaims::new("alice").with_audience([RESOURCE]);
            if token.secret() == PLAIN {
                return Ok(claims);
            }
            match bindings.iter().find(|(t, _)| *t == token.secret()) {
                Some((_, jkt)) => Ok(claims.with_dpop_jkt(jkt.clone())),
                None => Err(TokenError::InvalidToken("unknown".into())),
            }
        }
    };
    let settings = dpop(Dpop::new().clock(move || now.load(Ordering::SeqCst)));
    let auth = Auth::new(RESOURCE, validate)
        .unwrap()
        .authorization_servers(["https://auth.example.com"])
        .dpop(settings);
    (auth, clock)
}

fn registry() -> Registry {
    let echo = Tool::builder("echo")
        .typed(|_: NoArgs| async { "ok" })
        .unwrap();
    Registry::from_servers([Server::builder("s")
        .version("1.0.0")
        .tools([echo])
        .build()
        .unwrap()])
}

impl Reply {
    fn challenges(&self) -> String {
        self.headers
            .get_all("www-authenticate")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect::<Vec<_>>()
            .join(" | ")
    }

    fn nonce(&self) -> Option<String> {
        let value = self.headers.get("dpop-nonce")?;
        Some(value.to_str().unwrap().to_owned())
    }

    /// A 401 whose DPoP challenge carries `error`.
    fn assert_refused(&self, error: &str) {
        assert_eq!(self.status, StatusCode::UNAUTHORIZED, "{}", self.body);
        let challenge = self.challenges();
        assert!(
            challenge.starts_with(&format!("DPoP error=\"{error}\"")),
            "{challenge}"
        );
        assert!(challenge.contains("algs=\"ES256"), "{challenge}");
    }
}

/// A stateless `tools/call` of `echo` with `authorization` and the `proofs`.
async fn call(app: &axum::Router, authorization: &str, proofs: &[&str]) -> Reply {
    call_at(app, "/mcp", authorization, proofs).await
}

/// [`call`] at `path`.
async fn call_at(app: &axum::Router, path: &str, authorization: &str, proofs: &[&str]) -> Reply {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    });
    let mut request = Request::builder()
        .method("POST")
        .uri(path)
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .header("authorization", authorization);
    for proof in proofs {
        request = request.header("dpop", *proof);
    }
    let request = request.body(Body::from(body.to_string())).unwrap();
    Reply::read(app.clone().oneshot(request).await.unwrap()).await
}

fn dpop(token: &str) -> String {
    format!("DPoP {token}")
}

#[tokio::test]
async fn a_good_proof_is_accepted_and_the_metadata_says_dpop() {
    let prover = Prover::new();
    let (app, _) = app(&prover, |d| d);
    let proof = prover.proof(&Prover::claims(BOUND, "j-1"));
    let reply = call(&app, &dpop(BOUND), &[&proof]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert!(reply.body.contains("\"ok\""), "{}", reply.body);
    // An htu with a trailing slash or the default port is the same URL.
    let mut claims = Prover::claims(BOUND, "j-2");
    claims["htu"] = json!("http://LOCALHOST:80/mcp/");
    let reply = call(&app, &dpop(BOUND), &[&prover.proof(&claims)]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);

    let request = Request::builder()
        .uri("/.well-known/oauth-protected-resource/mcp")
        .header("host", "localhost")
        .body(Body::empty())
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let metadata: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(
        metadata["dpop_signing_alg_values_supported"]
            .as_array()
            .unwrap()
            .contains(&json!("ES256")),
        "{metadata}"
    );
}

#[tokio::test]
async fn proofs_for_another_method_url_token_or_time_are_refused() {
    let prover = Prover::new();
    let (app, _) = app(&prover, |d| d);
    let cases: [(&str, Value); 7] = [
        ("htm", json!("GET")),
        ("htu", json!("http://localhost/other")),
        ("htu", json!("http://localhost/mcp?x=1")),
        (
            "ath",
            json!(URL_SAFE_NO_PAD.encode(Sha256::digest(b"another token"))),
        ),
        ("iat", json!(NOW - 301)),
        ("iat", json!(NOW + 120)),
        ("jti", json!("")),
    ];
    for (i, (claim, value)) in cases.into_iter().enumerate() {
        let mut claims = Prover::claims(BOUND, &format!("bad-{i}"));
        claims[claim] = value.clone();
        let reply = call(&app, &dpop(BOUND), &[&prover.proof(&claims)]).await;
        reply.assert_refused("invalid_dpop_proof");
        assert!(
            reply.body.contains(claim),
            "{claim}={value}: {}",
            reply.body
        );
    }
    // An iat just inside the window is fine.
    let mut claims = Prover::claims(BOUND, "edge");
    claims["iat"] = json!(NOW - 299);
    let reply = call(&app, &dpop(BOUND), &[&prover.proof(&claims)]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
}

#[tokio::test]
async fn a_replayed_proof_is_refused_within_the_window() {
    let prover = Prover::new();
    let (app, clock) = app(&prover, |d| d);
    let proof = prover.proof(&Prover::claims(BOUND, "once"));
    assert_eq!(
        call(&app, &dpop(BOUND), &[&proof]).await.status,
        StatusCode::OK
    );
    let again = call(&app, &dpop(BOUND), &[&proof]).await;
    again.assert_refused("invalid_dpop_proof");
    assert!(again.body.contains("used before"), "{}", again.body);
    // Later still, the proof is too old rather than forgotten.
    clock.store(NOW + 1000, Ordering::SeqCst);
    call(&app, &dpop(BOUND), &[&proof])
        .await
        .assert_refused("invalid_dpop_proof");
}

#[tokio::test]
async fn the_key_must_be_the_tokens_and_public_and_the_proof_single() {
    let prover = Prover::new();
    let (app, _) = app(&prover, |d| d);
    let stranger = Prover::new();
    let reply = call(
        &app,
        &dpop(BOUND),
        &[&stranger.proof(&Prover::claims(BOUND, "k-1"))],
    )
    .await;
    reply.assert_refused("invalid_dpop_proof");
    assert!(reply.body.contains("not bound"), "{}", reply.body);
    // An unbound token presented with DPoP is not bound to the proof's key either.
    call(
        &app,
        &dpop(PLAIN),
        &[&prover.proof(&Prover::claims(PLAIN, "k-2"))],
    )
    .await
    .assert_refused("invalid_dpop_proof");

    let mut private = prover.key.public_jwk();
    private["d"] = json!("AAAA");
    let proof = prover.sign_with(&Prover::claims(BOUND, "k-3"), Some(private));
    let reply = call(&app, &dpop(BOUND), &[&proof]).await;
    reply.assert_refused("invalid_dpop_proof");
    assert!(reply.body.contains("private"), "{}", reply.body);

    // A header swapped for another key's: the signature no longer verifies.
    let proof = prover.sign_with(
        &Prover::claims(BOUND, "k-4"),
        Some(stranger.key.public_jwk()),
    );
    call(&app, &dpop(BOUND), &[&proof])
        .await
        .assert_refused("invalid_dpop_proof");

    call(&app, &dpop(BOUND), &[])
        .await
        .assert_refused("invalid_dpop_proof");
    let (a, b) = (
        prover.proof(&Prover::claims(BOUND, "k-5")),
        prover.proof(&Prover::claims(BOUND, "k-6")),
    );
    call(&app, &dpop(BOUND), &[&a, &b])
        .await
        .assert_refused("invalid_dpop_proof");
}

#[tokio::test]
async fn bound_tokens_are_not_bearer_tokens_and_required_means_required() {
    let prover = Prover::new();
    let (app, _) = app(&prover, |d| d);
    call(&app, &format!("Bearer {BOUND}"), &[])
        .await
        .assert_refused("invalid_dpop_proof");
    let reply = call(&app, &format!("Bearer {PLAIN}"), &[]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);

    let (strict, _) = self::app(&prover, Dpop::required);
    let reply = call(&strict, &format!("Bearer {PLAIN}"), &[]).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    assert!(
        reply.challenges().starts_with("DPoP algs="),
        "{}",
        reply.challenges()
    );
    let proof = prover.proof(&Prover::claims(BOUND, "r-1"));
    assert_eq!(
        call(&strict, &dpop(BOUND), &[&proof]).await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn nonces_are_issued_honoured_and_rotated() {
    let prover = Prover::new();
    let (app, clock) = app(&prover, |d| d.nonces(std::time::Duration::from_secs(60)));
    let reply = call(
        &app,
        &dpop(BOUND),
        &[&prover.proof(&Prover::claims(BOUND, "n-1"))],
    )
    .await;
    reply.assert_refused("use_dpop_nonce");
    let first = reply.nonce().expect("a DPoP-Nonce");

    let mut claims = Prover::claims(BOUND, "n-2");
    claims["nonce"] = json!(first);
    let reply = call(&app, &dpop(BOUND), &[&prover.proof(&claims)]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(
        reply.nonce().as_deref(),
        Some(first.as_str()),
        "every response carries it"
    );
    let mut claims = Prover::claims(BOUND, "n-3");
    claims["nonce"] = json!("made-up");
    call(&app, &dpop(BOUND), &[&prover.proof(&claims)])
        .await
        .assert_refused("use_dpop_nonce");

    // One rotation: the previous nonce still counts; two: it is refused with the new one.
    clock.store(NOW + 60, Ordering::SeqCst);
    let mut claims = Prover::claims(BOUND, "n-4");
    claims["nonce"] = json!(first);
    claims["iat"] = json!(NOW + 60);
    let reply = call(&app, &dpop(BOUND), &[&prover.proof(&claims)]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let second = reply
        .nonce()
        .expect("the rotated nonce, handed out on success");
    assert_ne!(second, first);
    clock.store(NOW + 120, Ordering::SeqCst);
    let mut claims = Prover::claims(BOUND, "n-5");
    claims["nonce"] = json!(first);
    claims["iat"] = json!(NOW + 120);
    let reply = call(&app, &dpop(BOUND), &[&prover.proof(&claims)]).await;
    reply.assert_refused("use_dpop_nonce");
    let third = reply.nonce().unwrap();
    assert_ne!(third, first);
    assert_ne!(third, second);
    let mut claims = Prover::claims(BOUND, "n-6");
    claims["nonce"] = json!(third);
    claims["iat"] = json!(NOW + 120);
    assert_eq!(
        call(&app, &dpop(BOUND), &[&prover.proof(&claims)])
            .await
            .status,
        StatusCode::OK
    );
}

/// D13: under `router_all` every `/mcp/{server}` shares the union's auth; a proof whose
/// `htu` is the URL the request went to (RFC 9449 §4.3) is accepted, one naming another
/// endpoint is not.
#[tokio::test]
async fn under_router_all_the_htu_is_the_request_url() {
    let prover = Prover::new();
    let (auth, _) = auth(vec![(BOUND, prover.jkt())], |d| d);
    let app =
        mcp_registry::transport::http::router_all(registry(), HttpConfig::default().auth(auth));
    let mut claims = Prover::claims(BOUND, "per-server");
    claims["htu"] = json!("http://localhost/mcp/s");
    let reply = call_at(&app, "/mcp/s", &dpop(BOUND), &[&prover.proof(&claims)]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    // The union's URL is still taken there (the configured resource).
    let proof = prover.proof(&Prover::claims(BOUND, "union"));
    let reply = call_at(&app, "/mcp/s", &dpop(BOUND), &[&proof]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    // Another endpoint's URL, or another origin's, is not.
    for (i, htu) in [
        "http://localhost/mcp/t",
        "http://elsewhere/mcp/s",
        "https://localhost/mcp/s",
    ]
    .into_iter()
    .enumerate()
    {
        let mut claims = Prover::claims(BOUND, &format!("other-{i}"));
        claims["htu"] = json!(htu);
        let reply = call_at(&app, "/mcp/s", &dpop(BOUND), &[&prover.proof(&claims)]).await;
        reply.assert_refused("invalid_dpop_proof");
        assert!(reply.body.contains("htu"), "{htu}: {}", reply.body);
    }
}

/// D13: the replay cache has a quota per key, so one token holder cannot fill it for
/// everyone: past it, that key's proofs are refused until some expire, others' are not.
#[tokio::test]
async fn one_key_cannot_fill_the_replay_cache_for_everyone() {
    const OTHER: &str = "other-bound-tok-91d3";
    let (greedy, other) = (Prover::new(), Prover::new());
    let (auth, clock) = auth(vec![(BOUND, greedy.jkt()), (OTHER, other.jkt())], |d| {
        d.max_proofs_per_key(3)
    });
    let app = router(registry(), "s", HttpConfig::default().auth(auth));
    for i in 0..3 {
        let proof = greedy.proof(&Prover::claims(BOUND, &format!("g-{i}")));
        let reply = call(&app, &dpop(BOUND), &[&proof]).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }
    let proof = greedy.proof(&Prover::claims(BOUND, "g-3"));
    let refused = call(&app, &dpop(BOUND), &[&proof]).await;
    refused.assert_refused("invalid_dpop_proof");
    assert!(refused.body.contains("by this key"), "{}", refused.body);
    // Another holder is not affected.
    let proof = other.proof(&Prover::claims(OTHER, "o-0"));
    let reply = call(&app, &dpop(OTHER), &[&proof]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    // Once the window has passed, the key's proofs are taken again.
    let later = NOW + 1000;
    clock.store(later, Ordering::SeqCst);
    let mut claims = Prover::claims(BOUND, "g-4");
    claims["iat"] = json!(later);
    let reply = call(&app, &dpop(BOUND), &[&greedy.proof(&claims)]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
}

/// `serve` calls its endpoint's `POST` without the router, except with DPoP, whose nonces a
/// router layer puts on every response: a reply over the wire carries the nonce too.
#[tokio::test]
async fn a_served_reply_carries_the_nonce_too() {
    let prover = Prover::new();
    let (auth, _clock) = auth(vec![(BOUND, prover.jkt())], |d| {
        d.nonces(std::time::Duration::from_secs(60))
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = HttpConfig::default().auth(auth);
    tokio::spawn(serve_listener(listener, registry(), "s", config));
    // No nonce yet: refused, with one; then a proof with it.
    let refused = post_over_tcp(addr, &prover.proof(&Prover::claims(BOUND, "w-1"))).await;
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    let nonce = refused
        .lines()
        .find_map(|l| l.strip_prefix("dpop-nonce: "))
        .expect("a DPoP-Nonce")
        .to_owned();
    let mut claims = Prover::claims(BOUND, "w-2");
    claims["nonce"] = json!(nonce);
    let reply = post_over_tcp(addr, &prover.proof(&claims)).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(
        reply.lines().any(|l| l == format!("dpop-nonce: {nonce}")),
        "every response carries the nonce: {reply}"
    );
}

/// The response, head and body, to a stateless `tools/call` of `echo` sent over a new
/// connection to `addr` with the bound token and `proof`.
async fn post_over_tcp(addr: std::net::SocketAddr, proof: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let headers = format!(
        "Authorization: {}\r\nDPoP: {proof}\r\nConnection: close\r\n",
        dpop(BOUND)
    );
    let request = common::http::raw_modern_call(1, "echo", json!({}), &headers);
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reply = String::new();
    let read = stream.read_to_string(&mut reply);
    tokio::time::timeout(std::time::Duration::from_secs(10), read)
        .await
        .expect("a reply in time")
        .unwrap();
    reply
}

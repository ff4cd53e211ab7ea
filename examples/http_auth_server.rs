//! An MCP server over Streamable HTTP protected by OAuth 2.1 bearer tokens (MCP authorization),
//! at `http://127.0.0.1:8000/mcp` by default.
//!
//! ```text
//! cargo run --example http_auth_server --features http                 # 127.0.0.1:8000
//! cargo run --example http_auth_server --features http -- 8123         # 127.0.0.1:8123
//! ```
//!
//! The token validator is a static table, so it runs without an authorization server:
//!
//! | token | subject | scopes |
//! |---|---|---|
//! | `demo-user-token` | `alice` | `mcp:tools` |
//! | `demo-admin-token` | `root` | `mcp:tools admin` |
//! | `demo-expired-token` | `alice` | expired an hour ago |
//! | `demo-foreign-token` | `alice` | issued for another resource |
//!
//! A real one checks a JWT's signature (a JWT crate and the issuer's JWKS) or asks the
//! authorization server (RFC 7662 introspection), and fills `AccessClaims` from the answer.
//! `MCP_AUTH_ISSUER` sets the authorization server advertised in the metadata (default
//! `https://auth.example.com`, which does not exist: clients that try to log in get nowhere).
//!
//! Try it with curl:
//!
//! ```text
//! curl -s http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp
//! curl -si http://127.0.0.1:8000/mcp -H 'Content-Type: application/json' \
//!   -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
//!   -H 'Mcp-Method: tools/call' -H 'Mcp-Name: whoami' \
//!   -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
//! # 401, WWW-Authenticate: Bearer resource_metadata="...", scope="mcp:tools"
//! # the same with -H 'Authorization: Bearer demo-user-token': the tool names alice
//! # -H 'Mcp-Name: reset' and "name":"reset" with demo-user-token: 403 insufficient_scope
//! ```
//!
//! `tests/e2e/auth_client.py` drives it with the official Python MCP client.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use mcp_registry::transport::http::HttpConfig;
use mcp_registry::transport::http::auth::{AccessClaims, Auth, BearerToken, TokenError};
use mcp_registry::{Registry, ToolContext, mcp_tool, server};

/// Who is calling, as the validated access token says.
#[mcp_tool(read_only)]
async fn whoami(ctx: ToolContext) -> String {
    match ctx.get::<AccessClaims>() {
        Some(claims) => format!("{} (scopes: {})", claims.subject, claims.scopes.join(" ")),
        None => "nobody: this server was started without authorization".to_owned(),
    }
}

/// Resets the demo (needs the `admin` scope).
#[mcp_tool(destructive)]
async fn reset(ctx: ToolContext) -> String {
    let who = ctx
        .get::<AccessClaims>()
        .map_or("nobody", |c| c.subject.as_str());
    format!("reset by {who}")
}

server!(name = "secured", version = "0.1.0", tools = [whoami, reset]);

/// The table of demo tokens; `resource` is this server's endpoint URL, the audience the
/// tokens are issued for.
fn validator(
    resource: String,
) -> impl Fn(BearerToken) -> std::future::Ready<Result<AccessClaims, TokenError>> + Send + Sync {
    move |token: BearerToken| {
        let hour = Duration::from_secs(3600);
        let claims = |subject: &str, scopes: &[&str]| {
            AccessClaims::new(subject)
                .with_audience([resource.as_str()])
                .with_scopes(scopes.iter().copied())
                .with_expiry(SystemTime::now() + hour)
        };
        std::future::ready(match token.secret() {
            "demo-user-token" => Ok(claims("alice", &["mcp:tools"])),
            "demo-admin-token" => Ok(claims("root", &["mcp:tools", "admin"])),
            "demo-expired-token" => {
                Ok(claims("alice", &["mcp:tools"]).with_expiry(SystemTime::now() - hour))
            }
            "demo-foreign-token" => Ok(claims("alice", &["mcp:tools"])
                .with_audience(["https://elsewhere.example.com/mcp"])),
            _ => Err(TokenError::InvalidToken("not a demo token".into())),
        })
    }
}

/// The listening address: a port (first argument, default 8000) on loopback.
fn listen_addr() -> Result<SocketAddr, String> {
    let raw = std::env::args().nth(1).unwrap_or_else(|| "8000".to_owned());
    let port = raw
        .parse::<u16>()
        .map_err(|e| format!("bad port {raw:?}: {e}"))?;
    Ok(SocketAddr::from(([127, 0, 0, 1], port)))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = listen_addr().map_err(std::io::Error::other)?;
    let resource = format!("http://{addr}/mcp");
    let issuer =
        std::env::var("MCP_AUTH_ISSUER").unwrap_or_else(|_| "https://auth.example.com".into());
    let auth = Auth::new(resource.clone(), validator(resource.clone()))
        .map_err(std::io::Error::other)?
        .authorization_servers([issuer])
        .scopes_supported(["mcp:tools", "admin"])
        .required_scopes(["mcp:tools"])
        .tool_scopes("reset", ["admin"])
        .resource_name("mcp-registry auth demo");
    eprintln!(
        "http_auth_server: serving `secured` at {resource}, metadata at {}",
        auth.metadata_url()
    );
    mcp_registry::transport::http::serve(
        Registry::collected(),
        "secured",
        addr,
        HttpConfig::default().auth(auth),
    )
    .await
}

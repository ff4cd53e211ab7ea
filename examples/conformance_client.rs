//! The MCP client under the official conformance suite's client leg.
//!
//! The suite runs `conformance_client <url>` with the scenario in `MCP_CONFORMANCE_SCENARIO`,
//! the protocol revision in `MCP_CONFORMANCE_PROTOCOL_VERSION` and scenario data in
//! `MCP_CONFORMANCE_CONTEXT`; each scenario below does what the suite's own client does for
//! it, through `mcp_registry::client::Client`. Exits non-zero when the flow fails.

use std::collections::BTreeMap;
use std::process::ExitCode;

use mcp_registry::client::auth::{
    AuthError, ClientCredentials, EnterpriseIdp, FollowRedirects, OAuth, SigningKey, TokenSource,
};
use mcp_registry::client::transport::TransportError;
use mcp_registry::client::{Client, ClientBuilder, ClientError};
use mcp_registry::protocol::{ElicitAction, ElicitResult, ProtocolVersion, ToolDescriptor};
use mcp_registry::skill::SkillResources;
use serde_json::{Map, Value, json};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // The URL is the last argument.
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: MCP_CONFORMANCE_SCENARIO=<scenario> conformance_client <url>");
        return ExitCode::FAILURE;
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&scenario, &url).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance_client {scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn builder() -> ClientBuilder {
    let mut builder = Client::builder().info("mcp-registry-conformance-client", "1.0.0");
    if let Some(version) = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .ok()
        .and_then(|v| ProtocolVersion::parse(&v))
    {
        builder = builder.protocol_version(version);
    }
    builder
}

/// Accepts every elicitation with `content` (defaults are filled in by the client).
fn accepting(content: Value) -> ClientBuilder {
    builder().on_elicitation(move |_params| {
        let content = content.as_object().cloned().unwrap_or_default();
        async move {
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(content),
            })
        }
    })
}

/// OAuth as the suite's client does it: redirects followed over HTTP, a client ID metadata
/// document URL where the server supports them, pre-registered credentials when the scenario
/// gives some.
fn oauth() -> OAuth {
    let mut oauth = OAuth::new("http://localhost:3000/callback", FollowRedirects::new())
        .client_name("mcp-registry-conformance-client")
        .client_metadata_url("https://conformance-test.local/client-metadata.json");
    let context = context();
    if let Some(id) = context.get("client_id").and_then(Value::as_str) {
        let mut credentials = ClientCredentials::new(id);
        if let Some(secret) = context.get("client_secret").and_then(Value::as_str) {
            credentials = credentials.secret(secret);
        }
        oauth = oauth.credentials(credentials);
    }
    oauth
}

/// A string of `MCP_CONFORMANCE_CONTEXT`.
fn context_str(name: &str) -> Result<String, AuthError> {
    context()
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| AuthError::Authorization(format!("no {name} in MCP_CONFORMANCE_CONTEXT")))
}

/// A token source that hands out the context's `name`.
fn context_token(name: &str) -> Result<TokenSource, AuthError> {
    let token = context_str(name)?;
    Ok(TokenSource::callback(move || {
        let token = token.clone();
        async move { Ok(token) }
    }))
}

/// The authorization each `auth/` scenario calls for: the extensions' grants by name, DPoP
/// where the scenario checks it, else the authorization code flow.
fn scenario_oauth(scenario: &str) -> Result<OAuth, AuthError> {
    let client = || context_str("client_id").map(ClientCredentials::new);
    Ok(match scenario {
        "auth/client-credentials-basic" => {
            OAuth::client_credentials(client()?.secret(context_str("client_secret")?))
        }
        "auth/client-credentials-jwt" => {
            let key = SigningKey::from_pkcs8_pem(&context_str("private_key_pem")?)?;
            OAuth::client_credentials(client()?.private_key_jwt(key))
        }
        "auth/wif-jwt-bearer" => OAuth::workload_identity(client()?, context_token("valid_jwt")?),
        "auth/enterprise-managed-authorization" => {
            let idp = EnterpriseIdp::new(
                context_str("idp_token_endpoint")?,
                ClientCredentials::new(context_str("idp_client_id")?),
                context_token("idp_id_token")?,
            );
            OAuth::enterprise_managed(client()?.secret(context_str("client_secret")?), idp)
        }
        "auth/dpop" | "auth/dpop-nonce" => oauth().dpop(SigningKey::generate()?),
        _ => oauth(),
    })
}

/// Authorization: connect (the server asks for a token), list the tools, call the scenario's
/// tool.
async fn run_auth(scenario: &str, url: &str) -> Result<(), ClientError> {
    let oauth = scenario_oauth(scenario).map_err(TransportError::from)?;
    let client = builder().oauth(oauth).connect_http(url).await?;
    let tools = client.list_tools().await?;
    if tools.iter().any(|t| t.name == "test-tool") {
        client.call_tool("test-tool", json!({})).await?;
    }
    client.close().await;
    Ok(())
}

/// The HTTP header scenarios (SEP-2243): every tool, resource and prompt
/// (`http-standard-headers`); the context's calls (`http-custom-headers`); the tools that
/// remain once those with invalid `x-mcp-header` are left out (`http-invalid-tool-headers`).
async fn run_headers(scenario: &str, url: &str) -> Result<(), ClientError> {
    match scenario {
        "http-standard-headers" => {
            let client = builder().connect_http(url).await?;
            for tool in client.list_tools().await? {
                client.call_tool(&tool.name, json!({})).await?;
            }
            for resource in client.list_resources().await? {
                client.read_resource(&resource.uri).await?;
            }
            for prompt in client.list_prompts().await? {
                client.get_prompt(&prompt.name, BTreeMap::new()).await?;
            }
            client.close().await;
        }
        "http-custom-headers" => {
            let client = builder().connect_http(url).await?;
            client.list_tools().await?;
            for (name, arguments) in context_tool_calls() {
                client.call_tool(&name, arguments).await?;
            }
            client.close().await;
        }
        // http-invalid-tool-headers: the client leaves out tools with invalid x-mcp-header;
        // call what remains.
        _ => {
            let client = builder().connect_http(url).await?;
            for tool in client.list_tools().await? {
                client
                    .call_tool(&tool.name, sample_arguments(&tool))
                    .await?;
            }
            client.close().await;
        }
    }
    Ok(())
}

async fn run(scenario: &str, url: &str) -> Result<(), ClientError> {
    match scenario {
        s if s.starts_with("auth/") => run_auth(s, url).await?,
        "json-schema-ref-no-deref" => {
            let client = builder().connect_http(url).await?;
            client.list_tools().await?;
            client.close().await;
        }
        "json-schema-2020-12-preservation" => {
            let client = builder().connect_http(url).await?;
            let tools = client.list_tools().await?;
            if let Some(focal) = tools.iter().find(|t| t.name == "json_schema_2020_12_tool") {
                let schema = (*focal.input_schema).clone();
                client
                    .call_tool("json_schema_echo", json!({ "schema": schema }))
                    .await?;
            }
            client.close().await;
        }
        "request-metadata" => {
            // Connecting sends server/discover (retried after the scenario's -32022).
            let client = builder().connect_http(url).await?;
            client.list_tools().await?;
            client.close().await;
        }
        "sep-2322-client-request-state" => {
            let client = accepting(json!({"confirmed": true}))
                .connect_http(url)
                .await?;
            client.list_tools().await?;
            for tool in [
                "test_mrtr_echo_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_state",
                "test_mrtr_no_result_type",
            ] {
                client.call_tool(tool, json!({})).await?;
            }
            client.close().await;
        }
        "elicitation-sep1034-client-defaults" => {
            let client = accepting(json!({})).connect_http(url).await?;
            client.list_tools().await?;
            client
                .call_tool("test_client_elicitation_defaults", json!({}))
                .await?;
            client.close().await;
        }
        "http-standard-headers" | "http-custom-headers" | "http-invalid-tool-headers" => {
            run_headers(scenario, url).await?
        }
        s if s.starts_with("sep-2640-client-") => run_skills(s, url).await?,
        // initialize, tools_call, sse-retry and anything else: list the tools, call the first.
        _ => {
            let client = builder().connect_http(url).await?;
            let tools = client.list_tools().await?;
            if let Some(tool) = tools.first() {
                client
                    .call_tool(&tool.name, json!({"a": 2, "b": 3}))
                    .await?;
            }
            client.close().await;
        }
    }
    Ok(())
}

/// The Skills scenarios (SEP-2640).
async fn run_skills(scenario: &str, url: &str) -> Result<(), ClientError> {
    let client = builder().skills().connect_http(url).await?;
    // Listing reads no skill file (`sep-2640-client-no-prefetch`); the `verify` scenarios
    // load each skill (its SKILL.md, verified), then read its other files (each verified):
    // a file that fails verification stops here, refused.
    let entries = client.list_skills().await?;
    if scenario.starts_with("sep-2640-client-verify-") {
        for entry in entries {
            let skill = client.load_skill(&entry).await?;
            if let SkillResources::Files(files) = &skill.entry.resources {
                for file in files.iter().filter(|f| f.uri != entry.uri) {
                    client.read_skill_file(&entry, &file.uri).await?;
                }
            }
        }
    }
    client.close().await;
    Ok(())
}

/// `MCP_CONFORMANCE_CONTEXT`, parsed.
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null)
}

/// `toolCalls` of `MCP_CONFORMANCE_CONTEXT`: the calls the scenario asks for.
fn context_tool_calls() -> Vec<(String, Value)> {
    context()
        .get("toolCalls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| {
                    let name = c.get("name")?.as_str()?.to_owned();
                    let arguments = c.get("arguments").cloned().unwrap_or(json!({}));
                    Some((name, arguments))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Arguments that satisfy a tool's required string, integer and boolean properties.
fn sample_arguments(tool: &ToolDescriptor) -> Value {
    let schema = &tool.input_schema;
    let mut arguments = Map::new();
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let kind = schema
            .get("properties")
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        let value = match kind {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(true),
            _ => json!("us-west1"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}

//! A hub: mounts the MCP server a command runs beside this example's own tools, and serves
//! the whole registry over stdio as one server (`hub`), so any MCP client sees both.
//!
//! ```text
//! cargo run --example hub --features agent,client-stdio,stdio -- npx -y @modelcontextprotocol/server-everything
//! ```
//!
//! The remote is started with `Client::stdio` and mounted with `client::RemoteServer` into a
//! registry beside the in-process server `local` and the hub's own `hub_servers` tool (each
//! server's connection state); `transport::stdio::serve_all` serves every enabled server as
//! one, following the registry as the remote reconnects or relists (a tool name two servers
//! share is listed as `mcp__<server>__<tool>`, see `ALL_SERVERS`).
//!
//! `--check` (used by CI, `.ci/e2e.sh`) serves nothing: it drives the union through
//! `handle_mcp_message(ALL_SERVERS, ..)` and the mounted remote through an agent session
//! (`agent::ControlRouter`, the Claude Code control protocol's `mcp_message`), prints what it
//! saw and exits non-zero on a mismatch.
//!
//! ```text
//! cargo run --example hub --features agent,client-stdio,stdio -- --check node node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio
//! ```

use std::process::ExitCode;

use mcp_registry::agent::{ControlRouter, McpMessageRequest};
use mcp_registry::client::{Client, RemoteServer};
use mcp_registry::{ALL_SERVERS, Registry, Server, Tool, mcp_tool, server};
use serde_json::{Value, json};

/// Count the words in a text.
///
/// # Arguments
/// * `text` - the text to count
#[mcp_tool(read_only, idempotent)]
async fn word_count(text: String) -> String {
    text.split_whitespace().count().to_string()
}

server!(name = "local", version = "1.0.0", tools = [word_count], fn = local);

/// The server `hub` with the tool reporting every server of `registry` and its connection.
/// (The tool holds the registry it reports on: both live as long as the process.)
fn hub_server(registry: Registry) -> Server {
    let hub_servers = Tool::builder("hub_servers")
        .description("The servers behind this hub, their tool counts and connection states")
        .read_only(true)
        .typed(move |_: serde_json::Map<String, Value>| {
            let registry = registry.clone();
            async move {
                let lines: Vec<String> = registry
                    .server_status()
                    .into_iter()
                    .map(|s| {
                        let connection = match s.connection {
                            None => "in-process".to_owned(),
                            Some(state) => format!("{state:?}"),
                        };
                        format!("{}: {} tools, {connection}", s.name, s.tool_count)
                    })
                    .collect();
                lines.join("\n")
            }
        })
        .expect("hub_servers is a valid tool");
    Server::builder("hub")
        .tool(hub_servers)
        .build()
        .expect("hub is a valid server")
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.first().is_some_and(|a| a == "--check");
    if check {
        args.remove(0);
    }
    if args.first().is_some_and(|a| a == "--") {
        args.remove(0);
    }
    let Some((program, rest)) = args.split_first() else {
        eprintln!("usage: hub [--check] [--] <command> [args...]");
        return ExitCode::from(2);
    };
    let (program, rest) = (program.clone(), rest.to_vec());

    let registry = Registry::builder()
        .name("hub")
        .version(env!("CARGO_PKG_VERSION"))
        .server(local())
        .build();
    registry.register_server(hub_server(registry.clone()));
    // Called again by each reconnect: a fresh child process.
    let remote = RemoteServer::new("remote", move || {
        let mut command = tokio::process::Command::new(&program);
        command.args(&rest);
        Client::stdio(command)
    });
    if let Err(e) = remote.mount(&registry).await {
        eprintln!("hub: {e}");
        return ExitCode::FAILURE;
    }
    if check {
        return match run_checks(&registry).await {
            Ok(()) => {
                println!("hub check: ok");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("hub check FAILED: {e}");
                ExitCode::FAILURE
            }
        };
    }
    eprintln!("hub: serving every server as `hub` on stdin/stdout");
    match mcp_registry::transport::stdio::serve_all(registry).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hub: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The checks CI runs against a mounted `@modelcontextprotocol/server-everything`.
async fn run_checks(registry: &Registry) -> Result<(), String> {
    println!("servers: {:#?}", registry.server_status());
    check_tools(registry).await?;
    check_prompts_and_resources(registry).await?;
    check_agent_session(registry).await
}

fn ensure(ok: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(what()) }
}

/// The union's answer to `message`, through `handle_mcp_message(ALL_SERVERS, ..)`.
async fn ask(registry: &Registry, message: Value) -> Result<Value, String> {
    let method = message["method"].clone();
    registry
        .handle_mcp_message(ALL_SERVERS, message)
        .await
        .ok_or_else(|| format!("no reply to {method}"))
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

fn first_text(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// The union lists the remote's tools beside the local ones, and calls both.
async fn check_tools(registry: &Registry) -> Result<(), String> {
    let list = ask(
        registry,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await?;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    println!("hub tools: {names:?}");
    for expected in ["echo", "hub_servers", "word_count"] {
        ensure(names.contains(&expected), || {
            format!("hub lacks {expected}: {names:?}")
        })?;
    }
    let echo = ask(
        registry,
        call(2, "echo", json!({"message": "through the hub"})),
    )
    .await?;
    println!("echo: {echo}");
    ensure(first_text(&echo).contains("through the hub"), || {
        format!("echo answered {echo}")
    })?;
    let local = ask(
        registry,
        call(3, "word_count", json!({"text": "one two three"})),
    )
    .await?;
    ensure(first_text(&local) == "3", || {
        format!("word_count answered {local}")
    })?;
    let servers = ask(registry, call(4, "hub_servers", json!({}))).await?;
    let text = first_text(&servers);
    println!("hub_servers: {text}");
    ensure(
        text.contains("remote:") && text.contains("Connected"),
        || format!("hub_servers answered {servers}"),
    )
}

/// The union serves the remote's prompts and resources.
async fn check_prompts_and_resources(registry: &Registry) -> Result<(), String> {
    let prompts = ask(
        registry,
        json!({"jsonrpc": "2.0", "id": 5, "method": "prompts/list"}),
    )
    .await?;
    let prompt_count = prompts["result"]["prompts"].as_array().map_or(0, Vec::len);
    ensure(prompt_count > 0, || {
        format!("no prompts from the remote: {prompts}")
    })?;
    let resources = ask(
        registry,
        json!({"jsonrpc": "2.0", "id": 6, "method": "resources/list"}),
    )
    .await?;
    let uri = resources["result"]["resources"][0]["uri"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let read = ask(
        registry,
        json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": uri}}),
    )
    .await?;
    ensure(read["result"]["contents"][0]["uri"] == uri.as_str(), || {
        format!("reading {uri} answered {read}")
    })?;
    println!("prompts: {prompt_count}, read {uri}");
    Ok(())
}

/// The mounted server itself, through an agent session's `mcp_message` control requests.
async fn check_agent_session(registry: &Registry) -> Result<(), String> {
    let router = ControlRouter::new(registry.clone());
    let config = router.mcp_servers_config();
    ensure(config["mcpServers"].get("remote").is_some(), || {
        format!("the session's servers lack remote: {config}")
    })?;
    let request = McpMessageRequest {
        request_id: "r1".into(),
        server_name: "remote".into(),
        message: call(8, "echo", json!({"message": "through an agent session"})),
    };
    let response = router.answer(request).await;
    println!("agent session: {response}");
    let reply = &response["response"]["response"]["mcp_response"];
    ensure(
        first_text(reply).contains("through an agent session"),
        || format!("the session answered {response}"),
    )
}

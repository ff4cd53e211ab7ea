//! A hub: mounts the MCP server a command runs beside this example's own tools, and serves the
//! union over stdio, so any MCP client sees one server (`hub`) with both.
//!
//! ```text
//! cargo run --example hub -- npx -y @modelcontextprotocol/server-everything
//! ```
//!
//! The remote is started with `Client::stdio` and mounted with `client::RemoteServer` into a
//! registry beside the in-process server `local`; the served server `hub` is rebuilt from both
//! whenever either changes (a local name wins over a remote one). `hub_servers` reports each
//! server's connection state.
//!
//! `--check` (used by CI, `.ci/e2e.sh`) serves nothing: it drives the mounted remote through
//! `handle_mcp_message` and through an agent session (`agent::ControlRouter`, the Claude Code
//! control protocol's `mcp_message`), prints what it saw and exits non-zero on a mismatch.
//!
//! ```text
//! cargo run --example hub -- --check node node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio
//! ```

use std::collections::BTreeSet;
use std::process::ExitCode;

use mcp_registry::agent::{ControlRouter, McpMessageRequest};
use mcp_registry::client::{Client, RemoteServer};
use mcp_registry::{Registry, Server, Tool, mcp_tool, server};
use serde_json::{Value, json};

/// Count the words in a text.
///
/// # Arguments
/// * `text` - the text to count
#[mcp_tool(read_only, idempotent)]
async fn word_count(text: String) -> String {
    text.split_whitespace().count().to_string()
}

server!(name = "local", version = "1.0.0", tools = [word_count]);

/// The tool reporting every server of `mounts` and its connection.
fn hub_servers(mounts: Registry) -> Tool {
    Tool::builder("hub_servers")
        .description("The servers behind this hub, their tool counts and connection states")
        .read_only(true)
        .typed(move |_: serde_json::Map<String, Value>| {
            let mounts = mounts.clone();
            async move {
                let lines: Vec<String> = mounts
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
        .expect("hub_servers is a valid tool")
}

/// One server `hub` with every tool, prompt and resource of `mounts` (`local` first, so
/// its names win), plus `hub_servers`.
fn union(mounts: &Registry) -> Server {
    let mut names: Vec<String> = mounts.server_names();
    names.sort_by_key(|n| n != "local");
    let mut builder = Server::builder("hub").version(env!("CARGO_PKG_VERSION"));
    let (mut tools, mut prompts, mut uris, mut templates) = (
        BTreeSet::from(["hub_servers".to_owned()]),
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
    );
    builder = builder.tool(hub_servers(mounts.clone()));
    for server in names.iter().filter_map(|n| mounts.server(n)) {
        for tool in server
            .tools()
            .iter()
            .filter(|t| tools.insert(t.name().to_owned()))
        {
            builder = builder.tool(tool.clone());
        }
        for prompt in server
            .prompts()
            .iter()
            .filter(|p| prompts.insert(p.name().to_owned()))
        {
            builder = builder.prompt(prompt.clone());
        }
        for resource in server
            .resources()
            .iter()
            .filter(|r| uris.insert(r.uri().to_owned()))
        {
            builder = builder.resource(resource.clone());
        }
        for template in server
            .resource_templates()
            .iter()
            .filter(|t| templates.insert(t.uri_template().to_owned()))
        {
            builder = builder.resource_template(template.clone());
        }
    }
    builder.build().expect("names are deduplicated")
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

    let mounts = Registry::collected();
    // Called again by each reconnect: a fresh child process.
    let remote = RemoteServer::new("remote", move || {
        let mut command = tokio::process::Command::new(&program);
        command.args(&rest);
        Client::stdio(command)
    });
    if let Err(e) = remote.mount(&mounts).await {
        eprintln!("hub: {e}");
        return ExitCode::FAILURE;
    }
    if check {
        return match run_checks(&mounts).await {
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

    let served = Registry::from_servers([union(&mounts)]);
    let follow = {
        let (mounts, served) = (mounts.clone(), served.clone());
        async move {
            let mut changes = mounts.subscribe();
            while changes.changed().await.is_ok() {
                served.register_server(union(&mounts));
            }
        }
    };
    tokio::spawn(follow);
    let tools = served.server("hub").map_or(0, |s| s.tools().len());
    eprintln!("hub: serving `hub` ({tools} tools) on stdin/stdout");
    match mcp_registry::transport::stdio::serve(served, "hub").await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hub: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The checks CI runs against a mounted `@modelcontextprotocol/server-everything`.
async fn run_checks(mounts: &Registry) -> Result<(), String> {
    let ensure = |ok: bool, what: String| if ok { Ok(()) } else { Err(what) };
    let status = mounts.server_status();
    println!("servers: {status:#?}");

    // The union, in-process through handle_mcp_message.
    let hub = Registry::from_servers([union(mounts)]);
    let list = hub
        .handle_mcp_message(
            "hub",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await
        .ok_or("no tools/list reply")?;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    println!("hub tools: {names:?}");
    for expected in ["echo", "hub_servers", "word_count"] {
        ensure(
            names.contains(&expected),
            format!("hub lacks {expected}: {names:?}"),
        )?;
    }
    let call = |id: u64, name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    };
    let echo = hub
        .handle_mcp_message(
            "hub",
            call(2, "echo", json!({"message": "through the hub"})),
        )
        .await
        .ok_or("no echo reply")?;
    println!("echo: {echo}");
    let text = echo["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    ensure(
        text.contains("through the hub"),
        format!("echo answered {echo}"),
    )?;
    let local = hub
        .handle_mcp_message(
            "hub",
            call(3, "word_count", json!({"text": "one two three"})),
        )
        .await
        .ok_or("no word_count reply")?;
    ensure(
        local["result"]["content"][0]["text"] == "3",
        format!("word_count answered {local}"),
    )?;
    let servers = hub
        .handle_mcp_message("hub", call(4, "hub_servers", json!({})))
        .await
        .ok_or("no hub_servers reply")?;
    let text = servers["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    println!("hub_servers: {text}");
    ensure(
        text.contains("remote:") && text.contains("Connected"),
        format!("hub_servers answered {servers}"),
    )?;
    let prompts = hub
        .handle_mcp_message(
            "hub",
            json!({"jsonrpc": "2.0", "id": 5, "method": "prompts/list"}),
        )
        .await
        .ok_or("no prompts/list reply")?;
    let prompt_count = prompts["result"]["prompts"].as_array().map_or(0, Vec::len);
    ensure(
        prompt_count > 0,
        format!("no prompts from the remote: {prompts}"),
    )?;
    let resources = hub
        .handle_mcp_message(
            "hub",
            json!({"jsonrpc": "2.0", "id": 6, "method": "resources/list"}),
        )
        .await
        .ok_or("no resources/list reply")?;
    let uri = resources["result"]["resources"][0]["uri"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let read = hub
        .handle_mcp_message(
            "hub",
            json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": uri}}),
        )
        .await
        .ok_or("no resources/read reply")?;
    ensure(
        read["result"]["contents"][0]["uri"] == uri.as_str(),
        format!("reading {uri} answered {read}"),
    )?;
    println!("prompts: {prompt_count}, read {uri}");

    // The mounted server itself, through an agent session's mcp_message control requests.
    let router = ControlRouter::new(mounts.clone());
    let config = router.mcp_servers_config();
    ensure(
        config["mcpServers"].get("remote").is_some(),
        format!("the session's servers lack remote: {config}"),
    )?;
    let request = McpMessageRequest {
        request_id: "r1".into(),
        server_name: "remote".into(),
        message: call(8, "echo", json!({"message": "through an agent session"})),
    };
    let response = router.answer(request).await;
    println!("agent session: {response}");
    let reply = &response["response"]["response"]["mcp_response"];
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    ensure(
        text.contains("through an agent session"),
        format!("the session answered {response}"),
    )?;
    Ok(())
}

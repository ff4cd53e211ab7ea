//! URL-mode elicitation (2025-11-25 onward): a tool sends the user to a URL, in both eras,
//! through this project's client; a client that did not declare URL mode gets no request;
//! a tool that needs the user elsewhere first refuses the call with -32042.

use std::sync::{Arc, Mutex};

use mcp_registry::client::{Client, ClientBuilder};
use mcp_registry::protocol::{ElicitParams, ElicitResult, ProtocolVersion};
use mcp_registry::{Registry, Server, Tool, ToolContext, ToolError};
use serde_json::{Map, Value, json};

type Args = Map<String, Value>;

fn registry() -> Registry {
    let connect = Tool::builder("connect")
        .typed(|ctx: ToolContext, _: Args| async move {
            let url = "https://example.com/connect?e=41";
            match ctx.elicit_url("Sign in to Example Co", url, "41").await {
                Ok(action) => format!("{action:?}"),
                Err(e) => format!("error: {e}"),
            }
        })
        .unwrap();
    let files = Tool::builder("files")
        .typed(|_: ToolContext, _: Args| async move {
            Err::<String, _>(ToolError::url_elicitation_required(
                "Example Co is not connected yet",
                [ElicitParams::url(
                    "Connect Example Co",
                    "https://example.com/connect?e=7",
                    "7",
                )],
            ))
        })
        .unwrap();
    Registry::from_servers([Server::new("s", None, [connect, files]).unwrap()])
}

/// A client whose user accepts every elicitation, recording what it was shown.
fn user(seen: Arc<Mutex<Vec<ElicitParams>>>) -> ClientBuilder {
    Client::builder().on_elicitation(move |params| {
        seen.lock().unwrap().push(params);
        async { Ok(ElicitResult::accept(Map::new())) }
    })
}

#[tokio::test]
async fn the_user_is_sent_to_the_url_in_both_eras() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::MODERN] {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let client = user(seen.clone())
            .url_elicitation()
            .protocol_version(version)
            .connect_in_process(registry(), "s")
            .await
            .unwrap();
        let result = client.call_tool("connect", json!({})).await.unwrap();
        let text = result.first_text().unwrap().to_owned();
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1, "{version:?}: {text}");
        let asked = &seen[0];
        assert!(asked.is_url());
        assert_eq!(
            asked.url.as_deref(),
            Some("https://example.com/connect?e=41")
        );
        assert_eq!(asked.message, "Sign in to Example Co");
        assert_eq!(asked.elicitation_id.as_deref(), Some("41"));
        assert_eq!(text, "Accept", "{version:?}");
    }
}

#[tokio::test]
async fn a_client_without_url_mode_is_not_asked() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::MODERN] {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let client = user(seen.clone())
            .protocol_version(version)
            .connect_in_process(registry(), "s")
            .await
            .unwrap();
        let result = client.call_tool("connect", json!({})).await.unwrap();
        let text = result.first_text().unwrap();
        assert!(text.contains("elicitation.url"), "{version:?}: {text}");
        assert!(seen.lock().unwrap().is_empty());
    }
}

#[tokio::test]
async fn a_tool_refuses_the_call_until_the_user_has_been_there() {
    let client = Client::builder()
        .protocol_version(ProtocolVersion::V2025_11_25)
        .connect_in_process(registry(), "s")
        .await
        .unwrap();
    let error = client.call_tool("files", json!({})).await.unwrap_err();
    assert_eq!(error.server_error().unwrap().code.0, -32042);
    assert_eq!(
        error.server_error().unwrap().message,
        "Example Co is not connected yet"
    );
    let elicitations = error.url_elicitations().unwrap();
    assert_eq!(elicitations.len(), 1);
    assert_eq!(elicitations[0].elicitation_id.as_deref(), Some("7"));
    assert_eq!(
        elicitations[0].url.as_deref(),
        Some("https://example.com/connect?e=7")
    );

    // As a plain MCP exchange, in the 2026-07-28 era too.
    let reply = registry()
        .handle_mcp_message(
            "s",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "files",
                   "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}}}}),
        )
        .await
        .unwrap();
    assert_eq!(reply["error"]["code"], -32042, "{reply}");
    assert_eq!(reply["error"]["data"]["elicitations"][0]["mode"], "url");
    assert_eq!(
        reply["error"]["data"]["elicitations"][0]["elicitationId"],
        "7"
    );
    // In-process, by name: the error says what to do.
    let by_name = registry()
        .call_tool_by_name("files", json!({}))
        .await
        .unwrap_err();
    assert!(
        by_name.to_string().contains("not connected yet"),
        "{by_name}"
    );
}

//! The MCP client against the reference server `@modelcontextprotocol/server-everything` (npm)
//! over stdio and Streamable HTTP: every kind of request a client makes, and every kind of
//! request that server makes of a client (sampling, form and URL elicitation), answered by the
//! client's handlers.
//!
//! Ignored by `cargo test` (it needs Node and the npm package); `.ci/e2e.sh` installs them and
//! runs `MCP_E2E_NODE=<node> MCP_E2E_EVERYTHING=<dist/index.js> cargo test --all-features
//! --test e2e -- --ignored client_everything::`.

use crate::common;

use common::everything::{
    canned_sampling, echo_and_sum, everything, long_running, prompt_and_first_resource,
    sampling_is_answered, text,
};

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_registry::client::{Client, ClientBuilder, ServerNotification};
use mcp_registry::protocol::{
    CompleteArgument, CompleteParams, CompletionReference, ElicitParams, ElicitResult, LoggingLevel,
};
use serde_json::{Map, json};

/// What the client's handlers were asked.
#[derive(Clone, Default)]
struct Asked {
    elicitations: Arc<Mutex<Vec<ElicitParams>>>,
    samplings: Arc<Mutex<usize>>,
}

fn builder(asked: &Asked) -> ClientBuilder {
    let (elicitations, samplings) = (asked.elicitations.clone(), asked.samplings.clone());
    Client::builder()
        .info("rust-client", "0.1")
        .url_elicitation()
        .on_elicitation(move |params| {
            let url_mode = params.is_url();
            elicitations.lock().unwrap().push(params);
            async move {
                if url_mode {
                    return Ok(ElicitResult::accept(Map::new()));
                }
                let form = json!({"name": "Ada Lovelace", "check": true});
                Ok(ElicitResult::accept(
                    form.as_object().cloned().unwrap_or_default(),
                ))
            }
        })
        .on_sampling(move |_| {
            *samplings.lock().unwrap() += 1;
            async { Ok(canned_sampling()) }
        })
}

/// Every kind of request a client makes, and every kind the server makes of the client.
async fn exercise(client: &Client, asked: &Asked) {
    assert_eq!(client.server_info().unwrap().name, "mcp-servers/everything");
    tools_are_listed(client).await;
    calls_report_progress(client).await;
    sampling_and_form_elicitation_reach_the_handlers(client, asked).await;
    url_elicitation_reaches_the_handler(client, asked).await;
    completion_prompts_and_resources(client).await;
    log_messages_arrive(client).await;
    client.ping().await.unwrap();
}

/// The tools this test calls are listed, those that need the client's capabilities once it has
/// declared them.
async fn tools_are_listed(client: &Client) {
    // Tools that need the client's capabilities are registered once it has declared them.
    let mut tools = Vec::new();
    for _ in 0..50 {
        tools = client
            .list_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        if tools.iter().any(|t| t == "trigger-sampling-request") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for expected in [
        "echo",
        "get-sum",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "trigger-url-elicitation",
    ] {
        assert!(
            tools.iter().any(|t| t == expected),
            "{expected} missing from {tools:?}"
        );
    }
}

/// Plain calls, and one that reports progress under the caller's token.
async fn calls_report_progress(client: &Client) {
    echo_and_sum(client).await;

    let mut notes = client.notifications();
    let long = long_running(client).await;
    assert_ne!(long.is_error, Some(true), "{long:?}");
    let mut progress = Vec::new();
    while let Ok(Ok(note)) = tokio::time::timeout(Duration::from_millis(300), notes.recv()).await {
        if let ServerNotification::Progress(p) = note
            && p.progress_token == json!("op")
        {
            progress.push(p.progress);
        }
    }
    assert_eq!(progress, [1.0, 2.0]);
}

/// The server's sampling and form elicitation requests are answered by the client's handlers.
async fn sampling_and_form_elicitation_reach_the_handlers(client: &Client, asked: &Asked) {
    sampling_is_answered(client).await;
    assert_eq!(*asked.samplings.lock().unwrap(), 1);

    let form = client
        .call_tool("trigger-elicitation-request", json!({}))
        .await
        .unwrap();
    assert!(text(&form).contains("Ada Lovelace"), "{form:?}");
}

/// A URL elicitation is answered by the client's handler; on the error path (-32042) it is
/// listed for the client to handle.
async fn url_elicitation_reaches_the_handler(client: &Client, asked: &Asked) {
    let url = client
        .call_tool(
            "trigger-url-elicitation",
            json!({"url": "https://example.com/connect", "elicitationId": "e-1"}),
        )
        .await
        .unwrap();
    assert_ne!(url.is_error, Some(true), "{url:?}");
    {
        let seen = asked.elicitations.lock().unwrap();
        let url_asks: Vec<_> = seen.iter().filter(|p| p.is_url()).collect();
        assert_eq!(url_asks.len(), 1, "{seen:?}");
        assert_eq!(
            url_asks[0].url.as_deref(),
            Some("https://example.com/connect")
        );
        assert_eq!(url_asks[0].elicitation_id.as_deref(), Some("e-1"));
    }
    // The error path: -32042 lists the elicitation for the client to handle.
    let refused = client
        .call_tool(
            "trigger-url-elicitation",
            json!({"url": "https://example.com/other", "elicitationId": "e-2", "errorPath": true}),
        )
        .await
        .unwrap_err();
    let listed = refused
        .url_elicitations()
        .unwrap_or_else(|| panic!("{refused}"));
    assert!(listed[0].is_url(), "{listed:?}");
    assert!(
        listed[0]
            .url
            .as_deref()
            .is_some_and(|u| u.starts_with("https://"))
    );
    assert!(
        listed[0]
            .elicitation_id
            .as_deref()
            .is_some_and(|id| !id.is_empty())
    );
}

/// Completion, a prompt with arguments, resources and resource templates.
async fn completion_prompts_and_resources(client: &Client) {
    let completed = client
        .complete(CompleteParams {
            reference: CompletionReference::Prompt {
                name: "completable-prompt".into(),
            },
            argument: CompleteArgument {
                name: "department".into(),
                value: "Eng".into(),
            },
            context: None,
        })
        .await
        .unwrap();
    assert_eq!(completed.completion.values, ["Engineering"]);

    prompt_and_first_resource(client).await;
    let templates = client.list_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "demo://resource/dynamic/text/{resourceId}")
    );
    let dynamic = client
        .read_resource("demo://resource/dynamic/text/1")
        .await
        .unwrap();
    assert!(!dynamic.contents.is_empty());
}

/// Log messages arrive at the level asked for.
async fn log_messages_arrive(client: &Client) {
    // Log messages at the level asked for.
    client.set_logging_level(LoggingLevel::Debug).await.unwrap();
    let mut notes = client.notifications();
    client
        .call_tool("toggle-simulated-logging", json!({}))
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    let mut logged = false;
    while !logged && let Ok(Ok(note)) = tokio::time::timeout_at(deadline, notes.recv()).await {
        logged = matches!(note, ServerNotification::Log(_));
    }
    assert!(logged, "no log message within 15 s");
    client
        .call_tool("toggle-simulated-logging", json!({}))
        .await
        .unwrap();
}

#[tokio::test]
#[ignore = "needs Node and @modelcontextprotocol/server-everything: run by .ci/e2e.sh"]
async fn everything_over_stdio() {
    let asked = Asked::default();
    let client = builder(&asked)
        .connect_stdio(everything("stdio"))
        .await
        .unwrap();
    exercise(&client, &asked).await;
    client.close().await;
}

#[tokio::test]
#[ignore = "needs Node and @modelcontextprotocol/server-everything: run by .ci/e2e.sh"]
async fn everything_over_http() {
    let port = common::free_port();
    let mut server = everything("streamableHttp");
    server.env("PORT", port.to_string()).kill_on_drop(true);
    let mut server = server.spawn().unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let asked = Asked::default();
    let client = common::connect_http_when_up(|| builder(&asked), &url).await;
    exercise(&client, &asked).await;
    client.close().await;
    server.kill().await.unwrap();
}

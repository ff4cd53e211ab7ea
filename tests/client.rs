//! The MCP client against this project's own servers: in-process, over stdio
//! (examples/stdio_server) and over Streamable HTTP, in both protocol eras.

use crate::common::examples;
use crate::common::job;

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_registry::client::{
    Client, ClientBuilder, ClientError, RequestOptions, ServerNotification,
};
use mcp_registry::protocol::{ProtocolEra, ProtocolVersion};
use mcp_registry::{Prompt, PromptMessage, Registry, Server, Tool};
use serde_json::json;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

fn registry() -> Registry {
    let add = Tool::builder("add")
        .description("Add two integers")
        .typed(|a: Add| async move { (a.a + a.b).to_string() })
        .unwrap();
    let job = job::job_tool();
    let slow = Tool::new("slow", "Sleeps", json!({"type": "object"}), |_| async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        "late"
    })
    .unwrap();
    let hello = Prompt::builder("hello")
        .description("Greets")
        .argument(mcp_registry::protocol::PromptArgument::required("name"))
        .handler(|args: mcp_registry::prompt::PromptArguments| async move {
            vec![PromptMessage::user(format!("Hello, {}!", args["name"]))]
        })
        .unwrap();
    let server = Server::builder("math")
        .version("1.0.0")
        .tools([add, job, slow])
        .prompts([hello])
        .build()
        .unwrap();
    Registry::from_servers([server])
}

fn builder(era: ProtocolEra) -> ClientBuilder {
    let b = Client::builder().info("test-client", "0.1");
    match era {
        ProtocolEra::Legacy => b.protocol_version(ProtocolVersion::V2025_11_25),
        ProtocolEra::Modern => b,
    }
}

/// What every transport must do, in `era`.
async fn exercise(client: &Client, era: ProtocolEra) {
    assert_eq!(
        client.protocol_version().map(ProtocolVersion::era),
        Some(era)
    );
    assert!(client.server_capabilities().unwrap().tools.is_some());
    client.ping().await.unwrap();
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add", "job", "slow"]);
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum.first_text(), Some("5"));
    failures_concurrency_and_prompts(client).await;
    progress_comes_before_the_reply(client).await;
    timeouts_and_cancellations_forget_the_request(client).await;
    // Still usable.
    client.ping().await.unwrap();
}

/// A tool failure is a result and an unknown tool an error; several requests are in flight at
/// once; prompts are listed and got.
async fn failures_concurrency_and_prompts(client: &Client) {
    // A tool failure is a result; an unknown tool an error.
    let bad = client.call_tool("add", json!({"a": "x"})).await.unwrap();
    assert!(bad.is_error());
    let unknown = client.call_tool("nope", json!({})).await.unwrap_err();
    assert_eq!(
        unknown.server_error().map(|e| e.code.0),
        Some(-32602),
        "{unknown}"
    );
    // Several requests in flight at once.
    let calls = (0..8).map(|i| client.call_tool("add", json!({"a": i, "b": 1})));
    let results = futures_util::future::join_all(calls).await;
    for (i, r) in results.into_iter().enumerate() {
        assert_eq!(r.unwrap().first_text(), Some((i + 1).to_string().as_str()));
    }
    // Prompts.
    let prompts = client.list_prompts().await.unwrap();
    assert_eq!(prompts[0].name, "hello");
    let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
    let got = client.get_prompt("hello", args).await.unwrap();
    assert_eq!(got.messages[0].content.as_text(), Some("Hello, Ada!"));
}

/// Progress notifications arrive before the reply.
async fn progress_comes_before_the_reply(client: &Client) {
    // Progress, before the reply.
    let mut notes = client.notifications();
    let done = client
        .call_tool("job", json!({"steps": 3}))
        .options(RequestOptions::new().progress_token("p1"))
        .await
        .unwrap();
    assert_eq!(done.first_text(), Some("finished"));
    let mut progress = Vec::new();
    while let Ok(Ok(note)) = tokio::time::timeout(Duration::from_millis(500), notes.recv()).await {
        if let ServerNotification::Progress(p) = note {
            progress.push(p.progress);
            if progress.len() == 3 {
                break;
            }
        }
    }
    assert_eq!(progress, [1.0, 2.0, 3.0]);
}

/// A timeout gives up on the request and forgets it; so does a cancellation.
async fn timeouts_and_cancellations_forget_the_request(client: &Client) {
    // A timeout gives up on the request and forgets it.
    let late = client
        .call_tool("slow", json!({}))
        .options(RequestOptions::new().timeout(Duration::from_millis(100)))
        .await
        .unwrap_err();
    assert!(matches!(late, ClientError::Timeout { .. }), "{late}");
    // So does a cancellation.
    let token = mcp_registry::CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    });
    let cancelled = client
        .call_tool("slow", json!({}))
        .options(RequestOptions::new().cancellation(token))
        .await
        .unwrap_err();
    assert!(
        matches!(cancelled, ClientError::Cancelled { .. }),
        "{cancelled}"
    );
    assert_eq!(client.pending_count(), 0);
}

#[tokio::test]
async fn in_process_legacy() {
    let client = builder(ProtocolEra::Legacy)
        .connect_in_process(registry(), "math")
        .await
        .unwrap();
    assert_eq!(client.server_info().unwrap().name, "math");
    exercise(&client, ProtocolEra::Legacy).await;
    client.close().await;
    assert!(client.ping().await.is_err(), "closed");
}

#[tokio::test]
async fn in_process_modern() {
    let client = builder(ProtocolEra::Modern)
        .connect_in_process(registry(), "math")
        .await
        .unwrap();
    exercise(&client, ProtocolEra::Modern).await;
    // 2026-07-28: the log level travels in _meta; no request.
    client
        .set_logging_level(mcp_registry::protocol::LoggingLevel::Info)
        .await
        .unwrap();
    client.close().await;
}

/// Every list follows `nextCursor` to its end: a registry paging one item at a time still
/// gives the client every tool, prompt, resource and template.
#[tokio::test]
async fn every_list_follows_the_pages_to_the_end() {
    let tools = ["a", "b", "c"].map(|name| {
        Tool::new(name, "A tool", json!({"type": "object"}), |_| async {
            "ok"
        })
        .unwrap()
    });
    let prompts = ["p", "q"].map(|name| Prompt::builder(name).handler(|_| async { "hi" }).unwrap());
    let resources = ["mem://r", "mem://s"].map(|uri| {
        mcp_registry::Resource::builder(uri, &uri[6..])
            .handler(|_| async { "text" })
            .unwrap()
    });
    let templates = ["mem://t/{id}", "mem://u/{id}"].map(|uri| {
        mcp_registry::ResourceTemplate::builder(uri, &uri[6..7])
            .handler(|_| async { "text" })
            .unwrap()
    });
    let server = Server::builder("paged")
        .tools(tools)
        .prompts(prompts)
        .resources(resources)
        .resource_templates(templates)
        .build()
        .unwrap();
    let registry = Registry::builder().page_size(1).server(server).build();
    let client = Client::in_process(registry, "paged").await.unwrap();
    let tools = client.list_tools().await.unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["a", "b", "c"]
    );
    let prompts = client.list_prompts().await.unwrap();
    assert_eq!(
        prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["p", "q"]
    );
    let resources = client.list_resources().await.unwrap();
    assert_eq!(
        resources.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(),
        ["mem://r", "mem://s"]
    );
    let templates = client.list_resource_templates().await.unwrap();
    assert_eq!(
        templates
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["t", "u"]
    );
    client.close().await;
}

#[tokio::test]
async fn unknown_server_fails_the_handshake() {
    let err = Client::in_process(registry(), "nope").await.unwrap_err();
    assert!(
        err.to_string().contains("nope") || matches!(err, ClientError::Handshake(_)),
        "{err}"
    );
}

async fn http_url(registry: Registry) -> String {
    let app = mcp_registry::transport::http::router(
        registry,
        "math",
        mcp_registry::transport::http::HttpConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/mcp")
}

#[tokio::test]
async fn http_legacy() {
    let url = http_url(registry()).await;
    let client = builder(ProtocolEra::Legacy)
        .connect_http(&url)
        .await
        .unwrap();
    exercise(&client, ProtocolEra::Legacy).await;
    client.close().await;
}

#[tokio::test]
async fn http_modern() {
    let url = http_url(registry()).await;
    let client = builder(ProtocolEra::Modern)
        .connect_http(&url)
        .await
        .unwrap();
    exercise(&client, ProtocolEra::Modern).await;
    client.close().await;
}

#[tokio::test]
async fn http_unreachable_is_a_clear_error() {
    let err = Client::http("http://127.0.0.1:1/mcp").await.unwrap_err();
    assert!(err.to_string().contains("127.0.0.1:1"), "{err}");
}

fn stdio_server() -> tokio::process::Command {
    tokio::process::Command::new(examples::example("stdio_server"))
}

#[tokio::test]
async fn stdio_both_eras() {
    for era in [ProtocolEra::Legacy, ProtocolEra::Modern] {
        let client = builder(era).connect_stdio(stdio_server()).await.unwrap();
        assert_eq!(
            client.protocol_version().map(ProtocolVersion::era),
            Some(era)
        );
        assert_eq!(client.server_info().unwrap().name, "demo");
        let tools = client.list_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "add"));
        let sum = client
            .call_tool("add", json!({"a": 20, "b": 22}))
            .await
            .unwrap();
        assert_eq!(sum.structured_content, Some(json!({"sum": 42})));
        client.close().await;
    }
}

#[tokio::test]
async fn stdio_missing_program_is_a_spawn_error() {
    let err = Client::stdio(tokio::process::Command::new("/no/such/mcp-server"))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Spawn { .. }), "{err}");
    assert!(err.to_string().contains("/no/such/mcp-server"), "{err}");
}

#[tokio::test]
async fn stdio_early_exit_says_why() {
    let mut command = tokio::process::Command::new("sh");
    command.args(["-c", "echo 'config missing' >&2; exit 3"]);
    let err = Client::stdio(command).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("exit") && text.contains("config missing"),
        "{text}"
    );
}

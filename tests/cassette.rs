//! Cassettes (feature `testing`): a session recorded and replayed without the server.
//!
//! - `everything_replays_without_node`: tests/cassettes/everything.json, recorded once against
//!   `@modelcontextprotocol/server-everything` over stdio, replays with no Node and no network.
//!   Re-record it with `MCP_CASSETTE_RECORD=1 MCP_E2E_NODE=<node>
//!   MCP_E2E_EVERYTHING=<dist/index.js> cargo test --all-features --test clients cassette::everything`
//!   (`.ci/e2e.sh` shows how the package is installed).
//! - the round trips record fresh on every run against this project's own servers (stdio:
//!   examples/stdio_server; Streamable HTTP: a registry served on loopback), then replay.

use crate::common;

use common::everything;

use std::sync::{Arc, Mutex};

use mcp_registry::client::{Client, ClientBuilder, ServerNotification};
use mcp_registry::protocol::{ElicitResult, ProtocolEra, ProtocolVersion};
use mcp_registry::testing::{CASSETTE_RECORD_ENV, Cassette, CassetteFile, CassetteMode};
use mcp_registry::{Registry, Server, Tool};
use serde_json::{Value, json};

/// A client that answers the server's sampling and elicitation requests with canned replies.
fn answering_builder(asked: &Arc<Mutex<Vec<String>>>) -> ClientBuilder {
    let (sampled, elicited) = (asked.clone(), asked.clone());
    Client::builder()
        .info("cassette-test", "1.0")
        .on_sampling(move |_| {
            sampled.lock().unwrap().push("sampling".into());
            async { Ok(everything::canned_sampling()) }
        })
        .on_elicitation(move |_| {
            elicited.lock().unwrap().push("elicitation".into());
            let form = json!({"confirm": true});
            async move {
                Ok(ElicitResult::accept(
                    form.as_object().cloned().unwrap_or_default(),
                ))
            }
        })
}

#[tokio::test]
async fn everything_replays_without_node() {
    let cassette = Cassette::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/cassettes/everything.json"
    ));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let client = cassette
        .connect(answering_builder(&asked), |builder| async move {
            builder.connect_stdio(everything::everything("stdio")).await
        })
        .await
        .unwrap();
    assert_eq!(client.server_info().unwrap().name, "mcp-servers/everything");
    if cassette.is_recording() {
        // The tools that need the client's capabilities come once it has declared them.
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
    everything_tools(&client).await;
    everything_asks_and_reads(&client, &asked).await;
    if !cassette.is_recording() {
        // Not recorded: a clear error saying how to record it.
        let err = client
            .call_tool("echo", json!({"message": "never recorded"}))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("everything.json"), "{err}");
        assert!(err.contains(CASSETTE_RECORD_ENV), "{err}");
        assert!(err.contains("tools/call"), "{err}");
    }
    client.close().await;
}

/// server-everything's tools: listed, called, and one reporting progress.
async fn everything_tools(client: &Client) {
    let tools: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    for expected in ["echo", "get-sum", "trigger-sampling-request"] {
        assert!(
            tools.iter().any(|t| t == expected),
            "{expected} in {tools:?}"
        );
    }
    everything::echo_and_sum(client).await;

    // Progress notifications come back before the reply, under the caller's token.
    let mut notes = client.notifications();
    everything::long_running(client).await;
    let mut progress = Vec::new();
    while let Ok(note) = notes.try_recv() {
        if let ServerNotification::Progress(p) = note {
            progress.push(p.progress);
        }
    }
    assert_eq!(progress, [1.0, 2.0]);
}

/// server-everything asking the client (sampling), then a prompt, a resource and a ping.
async fn everything_asks_and_reads(client: &Client, asked: &Mutex<Vec<String>>) {
    // The server's own requests are replayed to the client's handlers, and the replay waits
    // for their answers.
    everything::sampling_is_answered(client).await;
    assert_eq!(*asked.lock().unwrap(), ["sampling"]);
    everything::prompt_and_first_resource(client).await;
    client.ping().await.unwrap();
}

fn stdio_server() -> tokio::process::Command {
    tokio::process::Command::new(common::examples::example("stdio_server"))
}

/// A fresh path under the target's scratch directory.
fn scratch(name: &str) -> std::path::PathBuf {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cassettes")
        .join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// What the round trips ask: the same on record and replay, so the answers can be compared.
/// `wipe` and `summarize` ask the client (legacy: server requests the replay pauses at until
/// the client answers; 2026-07-28: `input_required` rounds with their `requestState`).
async fn demo_session(client: &Client) -> Vec<Value> {
    let mut seen = Vec::new();
    let tools = client.list_tools().await.unwrap();
    seen.push(json!(tools.iter().map(|t| &t.name).collect::<Vec<_>>()));
    for (tool, args) in [
        ("add", json!({"a": 2, "b": 40})),
        ("echo", json!({"text": "hi"})),
        ("divide", json!({"dividend": 1, "divisor": 0})),
        ("wipe", json!({"table": "notes"})),
        ("summarize", json!({"text": "a long story"})),
    ] {
        let result = client.call_tool(tool, args).await.unwrap();
        seen.push(serde_json::to_value(&result).unwrap());
    }
    seen
}

#[tokio::test]
async fn stdio_round_trip_records_and_replays() {
    for era in [ProtocolEra::Legacy, ProtocolEra::Modern] {
        let path = scratch(&format!("stdio_server-{era:?}.json"));
        let asked = Arc::new(Mutex::new(Vec::new()));
        let builder = || {
            let b = answering_builder(&asked);
            match era {
                ProtocolEra::Legacy => b.protocol_version(ProtocolVersion::LATEST_LEGACY),
                _ => b,
            }
        };
        let record = Cassette::new(&path).mode(CassetteMode::Record);
        let connect =
            |builder: ClientBuilder| async move { builder.connect_stdio(stdio_server()).await };
        let client = record.connect(builder(), connect).await.unwrap();
        let recorded = demo_session(&client).await;
        client.close().await;
        let first = std::fs::read_to_string(&path).unwrap();
        assert!(recorded[1].to_string().contains("42"), "{recorded:?}");
        assert!(
            recorded[4].to_string().contains("wiped notes"),
            "{recorded:?}"
        );
        assert!(
            recorded[5].to_string().contains("a canned model reply"),
            "{recorded:?}"
        );

        // Replayed: no process started, the same answers, the handlers asked again.
        let replay = Cassette::new(&path).mode(CassetteMode::Replay);
        let client = replay
            .connect(builder(), |_| async {
                panic!("replay connected to a server")
            })
            .await
            .unwrap();
        assert_eq!(client.server_info().unwrap().name, "demo");
        assert_eq!(
            client.protocol_version().map(ProtocolVersion::era),
            Some(era)
        );
        assert_eq!(demo_session(&client).await, recorded, "{era:?}");
        client.close().await;
        assert_eq!(asked.lock().unwrap().len(), 4, "{era:?}");

        // Recorded again: the same file, byte for byte (ids and request state normalized).
        let client = record.connect(builder(), connect).await.unwrap();
        demo_session(&client).await;
        client.close().await;
        assert_eq!(std::fs::read_to_string(&path).unwrap(), first, "{era:?}");
        let file: CassetteFile = serde_json::from_str(&first).unwrap();
        assert!(!first.contains("\"jsonrpc\""), "{first}");
        assert_eq!(file.format, 1);
    }
}

fn http_registry() -> Registry {
    let echo = Tool::new(
        "echo",
        "Echo",
        json!({"type": "object"}),
        |args: Value| async move { args.to_string() },
    )
    .unwrap();
    Registry::from_servers([Server::new("loopback", Some("1.0"), [echo]).unwrap()])
}

#[tokio::test]
async fn http_round_trip_keeps_secrets_out_of_the_file() {
    let app = mcp_registry::transport::http::router(
        http_registry(),
        "loopback",
        mcp_registry::transport::http::HttpConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let served = tokio::spawn(async move { axum::serve(listener, app).await });

    let path = scratch("http.json");
    let builder = || Client::builder().header("Authorization", "Bearer s3cret-token");
    let client = Cassette::new(&path)
        .mode(CassetteMode::Record)
        .connect(builder(), |b| async move { b.connect_http(&url).await })
        .await
        .unwrap();
    let answer = client.call_tool("echo", json!({"x": 1})).await.unwrap();
    client.close().await;
    served.abort();
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(!file.contains("s3cret"), "{file}");
    assert!(!file.to_lowercase().contains("authorization"), "{file}");

    let client = Cassette::new(&path)
        .mode(CassetteMode::Replay)
        .connect(builder(), |_| async {
            panic!("replay connected to a server")
        })
        .await
        .unwrap();
    assert_eq!(
        client.call_tool("echo", json!({"x": 1})).await.unwrap(),
        answer
    );
    client.close().await;
}

#[tokio::test]
async fn a_missing_cassette_says_how_to_record_it() {
    let err = Cassette::new(scratch("never-recorded.json"))
        .mode(CassetteMode::Replay)
        .connect(Client::builder(), |_| async {
            panic!("replay connected to a server")
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("never-recorded.json"), "{err}");
    assert!(err.contains("MCP_CASSETTE_RECORD=1"), "{err}");
}

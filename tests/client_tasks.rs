//! The MCP client against this project's own server of task tools
//! (examples/tasks_server), in both protocol eras, over stdio and Streamable HTTP: a call
//! the server makes a task of is followed to its result (`call_tool`), a task started
//! explicitly is polled and cancelled, and a task's input request is answered by the
//! client's elicitation handler.

use crate::common::examples;

use std::future::IntoFuture;
use std::time::Duration;

use mcp_registry::client::{Client, ClientBuilder, ToolTask};
use mcp_registry::protocol::{ElicitResult, ProtocolEra, ProtocolVersion, TaskStatus, TaskSupport};
use serde_json::{Map, json};

fn builder(era: ProtocolEra) -> ClientBuilder {
    let b = Client::builder()
        .info("tasks-test", "0.1")
        .timeout(Some(Duration::from_secs(30)))
        .on_elicitation(|params| async move {
            assert!(
                params.message.starts_with("Deploy to"),
                "{}",
                params.message
            );
            let mut content = Map::new();
            content.insert("confirm".to_owned(), json!(true));
            Ok(ElicitResult::accept(content))
        });
    match era {
        ProtocolEra::Legacy => b.protocol_version(ProtocolVersion::V2025_11_25),
        ProtocolEra::Modern => b,
    }
}

fn tasks_server() -> tokio::process::Command {
    tokio::process::Command::new(examples::example("tasks_server"))
}

/// `fut`, or a failure naming `what` after 30 s (a bounded wait).
async fn within<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within 30 s"))
}

/// What the client must do with a server of task tools, in `era`.
async fn exercise(client: &Client, era: ProtocolEra) {
    assert_eq!(
        client.protocol_version().map(ProtocolVersion::era),
        Some(era)
    );
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 3);
    // A task-required tool: call_tool runs it as a task, answers its question, returns the
    // result.
    let deployed = within(
        "deploy",
        client.call_tool("deploy", json!({"target": "staging"})),
    )
    .await
    .unwrap();
    assert_eq!(
        deployed.first_text(),
        Some("deployed to staging"),
        "{era:?}"
    );
    // An optional one: a task or not, call_tool gives the result.
    let built = within("build", client.call_tool("build", json!({"ms": 300})))
        .await
        .unwrap();
    assert_eq!(built.first_text(), Some("built in 300 ms"));
    let status = client.call_tool("status", json!({})).await.unwrap();
    assert_eq!(status.first_text(), Some("up"));

    // Started explicitly: polled, then its result.
    let ToolTask::Started(task) = client
        .call_tool_as_task("build", json!({"ms": 200}))
        .await
        .unwrap()
    else {
        panic!("a 200 ms build becomes a task ({era:?})");
    };
    assert_eq!(task.status().await.unwrap().status, TaskStatus::Working);
    assert_eq!(
        task.result().await.unwrap().first_text(),
        Some("built in 200 ms")
    );
    let done = task.status().await.unwrap();
    assert_eq!(done.status, TaskStatus::Completed);

    // Cancelled half-way.
    let ToolTask::Started(long) = client
        .call_tool_as_task("build", json!({"ms": 60_000}))
        .await
        .unwrap()
    else {
        panic!("a long build becomes a task");
    };
    long.cancel().await.unwrap();
    assert_eq!(long.status().await.unwrap().status, TaskStatus::Cancelled);
    let err = long.result().await.unwrap_err();
    assert!(err.to_string().contains("cancelled"), "{err}");
}

#[tokio::test]
async fn stdio_both_eras() {
    for era in [ProtocolEra::Legacy, ProtocolEra::Modern] {
        let client = builder(era).connect_stdio(tasks_server()).await.unwrap();
        exercise(&client, era).await;
        client.close().await;
    }
}

#[tokio::test]
async fn http_both_eras() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut command = tasks_server();
    command
        .args(["--http", &port.to_string()])
        .kill_on_drop(true);
    let _server = command.spawn().unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    for era in [ProtocolEra::Legacy, ProtocolEra::Modern] {
        let client = connect_when_up(builder(era), &url).await;
        exercise(&client, era).await;
        client.close().await;
    }
}

/// Connects once the server listens (a bounded wait: 30 s).
async fn connect_when_up(builder: ClientBuilder, url: &str) -> Client {
    for _ in 0..300 {
        if let Ok(client) = builder.clone().connect_http(url).await {
            return client;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("tasks_server did not come up at {url}");
}

/// A mounted remote server's task tools stay task tools in the registry: a local call
/// (plain, or as a local task) runs the remote one as a task and follows it.
#[tokio::test]
async fn a_mounted_servers_tasks_are_forwarded() {
    let registry = mcp_registry::Registry::builder().build();
    mcp_registry::client::RemoteServer::new("remote", || {
        builder(ProtocolEra::Modern).connect_stdio(tasks_server())
    })
    .mount(&registry)
    .await
    .unwrap();
    let remote = registry.server("remote").unwrap();
    let deploy = remote
        .tools()
        .iter()
        .find(|t| t.name() == "deploy")
        .unwrap();
    assert_eq!(deploy.task_support(), TaskSupport::Required);
    let deployed = within(
        "mounted deploy",
        registry
            .call_tool_by_name("deploy", json!({"target": "prod"}))
            .into_future(),
    )
    .await
    .unwrap();
    assert_eq!(deployed.first_text(), Some("deployed to prod"));
    let task = registry
        .call_tool_by_name("mcp__remote__build", json!({"ms": 100}))
        .as_task()
        .await
        .unwrap();
    let built = within("mounted build task", task.result()).await.unwrap();
    assert_eq!(built.first_text(), Some("built in 100 ms"));
}

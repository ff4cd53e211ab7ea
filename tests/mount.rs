//! Remote MCP servers mounted into a registry (`client::RemoteServer`): listed, called, read
//! and prompted through the registry beside in-process servers; progress and cancellation
//! relayed; list changes followed; a lost connection reported and reconnected; unregistering
//! closes the connection.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_registry::client::transport::{InProcessTransport, Inbound};
use mcp_registry::client::{Client, ClientError, ClientLifecycle, RemoteServer};
use mcp_registry::{
    CallOptions, CancellationToken, ConnectionState, NotificationSink, Prompt, PromptMessage,
    Registry, Resource, Server, Tool, ToolContext,
};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

type Args = Map<String, Value>;

/// The "remote" side: an ordinary registry, reached through a client.
fn upstream(cancelled: Arc<AtomicBool>) -> Registry {
    let echo = Tool::new(
        "echo",
        "Echo the arguments",
        json!({"type": "object"}),
        |a| async move { a.to_string() },
    )
    .unwrap();
    let steps = Tool::builder("steps")
        .typed(|ctx: ToolContext, _: Args| async move {
            for i in 1..=3 {
                ctx.progress(f64::from(i), Some(3.0), Some("working"))
                    .unwrap();
                tokio::task::yield_now().await;
            }
            "done"
        })
        .unwrap();
    let hang = Tool::builder("hang")
        .typed(move |ctx: ToolContext, _: Args| {
            let cancelled = cancelled.clone();
            async move {
                ctx.cancelled().await;
                cancelled.store(true, Ordering::SeqCst);
                "cancelled"
            }
        })
        .unwrap();
    let greet = Prompt::builder("greet")
        .description("Greets someone")
        .required_argument("name", "Who")
        .handler(|args: mcp_registry::prompt::PromptArguments| async move {
            vec![PromptMessage::user(format!("Hello, {}!", args["name"]))]
        })
        .unwrap();
    let motd = Resource::builder("memo://motd", "motd")
        .mime_type("text/plain")
        .handler(|_| async { "remote news" })
        .unwrap();
    let server = Server::builder("upstream")
        .version("3.1.4")
        .tools([echo, steps, hang])
        .prompts([greet])
        .resource(motd)
        .build()
        .unwrap();
    Registry::from_servers([server])
}

fn local() -> Server {
    let add = Tool::new(
        "add",
        "Add",
        json!({"type": "object"}),
        |a: Value| async move {
            (a["a"].as_i64().unwrap_or(0) + a["b"].as_i64().unwrap_or(0)).to_string()
        },
    )
    .unwrap();
    Server::new("local", None, [add]).unwrap()
}

/// How the test reaches the mounted connection: every client the mount made, and a way to
/// cut the newest one's connection as a crashed server would.
#[derive(Clone, Default)]
struct Connections {
    made: Arc<AtomicUsize>,
    clients: Arc<Mutex<Vec<Client>>>,
    cut: Arc<Mutex<Option<mpsc::UnboundedSender<Inbound>>>>,
}

impl Connections {
    fn remote(&self, registry: Registry) -> RemoteServer {
        let this = self.clone();
        RemoteServer::new("remote", move || {
            let (this, registry) = (this.clone(), registry.clone());
            async move {
                this.made.fetch_add(1, Ordering::SeqCst);
                let (tx, rx) = mpsc::unbounded_channel();
                *this.cut.lock().unwrap() = Some(tx.clone());
                let transport = InProcessTransport::new(registry, "upstream", tx);
                let client = Client::builder().connect_transport(transport, rx).await?;
                this.clients.lock().unwrap().push(client.clone());
                Ok::<_, ClientError>(client)
            }
        })
    }

    fn cut(&self) {
        let tx = self.cut.lock().unwrap().clone().unwrap();
        tx.send(Inbound::Closed("the server crashed".into()))
            .unwrap();
    }
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

fn connection(registry: &Registry, name: &str) -> Option<ConnectionState> {
    registry
        .server_status()
        .into_iter()
        .find(|s| s.name == name)
        .and_then(|s| s.connection)
}

async fn mounted() -> (Registry, Registry, Connections, Arc<AtomicBool>) {
    let cancelled = Arc::new(AtomicBool::new(false));
    let up = upstream(cancelled.clone());
    let registry = Registry::from_servers([local()]);
    let connections = Connections::default();
    connections
        .remote(up.clone())
        .mount(&registry)
        .await
        .unwrap();
    (registry, up, connections, cancelled)
}

#[tokio::test]
async fn a_mounted_server_is_listed_and_called_beside_local_ones() {
    let (registry, _up, _c, _) = mounted().await;
    let status = registry.server_status();
    let names: Vec<_> = status
        .iter()
        .map(|s| (s.name.as_str(), s.connection.clone()))
        .collect();
    assert_eq!(
        names,
        [
            ("local", None),
            ("remote", Some(ConnectionState::Connected))
        ]
    );
    let remote = &status[1];
    assert_eq!(remote.version, "3.1.4");
    assert_eq!(remote.tool_names, ["echo", "hang", "steps"]);
    assert_eq!(remote.prompt_names, ["greet"]);
    assert_eq!(remote.resource_count, 1);

    let qualified: Vec<_> = registry
        .all_tool_definitions()
        .into_iter()
        .map(|d| d.qualified_name)
        .collect();
    assert_eq!(
        qualified,
        [
            "mcp__local__add",
            "mcp__remote__echo",
            "mcp__remote__hang",
            "mcp__remote__steps"
        ]
    );
    let echo = &registry.all_tool_definitions()[1].tool;
    assert_eq!(echo.description.as_deref(), Some("Echo the arguments"));

    the_remote_answers_through_the_registry(&registry).await;
    // Toggling works as for any server.
    registry.toggle_server("remote", false).unwrap();
    assert!(registry.call_tool_by_name("echo", json!({})).await.is_err());
    registry.toggle_server("remote", true).unwrap();
    assert!(registry.call_tool_by_name("echo", json!({})).await.is_ok());
}

/// The remote's tool called by name, and its tool, prompt and resource as MCP through the
/// registry.
async fn the_remote_answers_through_the_registry(registry: &Registry) {
    // By name, and as MCP through the registry.
    let result = registry
        .call_tool_by_name("echo", json!({"k": "v"}))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some(r#"{"k":"v"}"#));
    let reply = registry
        .handle_mcp_message(
            "remote",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"n": 1}}}),
        )
        .await
        .unwrap();
    assert_eq!(
        reply["result"]["content"][0]["text"], r#"{"n":1}"#,
        "{reply}"
    );
    let reply = registry
        .handle_mcp_message(
            "remote",
            json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/get",
                   "params": {"name": "greet", "arguments": {"name": "Ada"}}}),
        )
        .await
        .unwrap();
    assert_eq!(
        reply["result"]["messages"][0]["content"]["text"], "Hello, Ada!",
        "{reply}"
    );
    let reply = registry
        .handle_mcp_message(
            "remote",
            json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "memo://motd"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        reply["result"]["contents"][0]["text"], "remote news",
        "{reply}"
    );
}

#[tokio::test]
async fn progress_reaches_the_caller_under_its_own_token() {
    let (registry, _up, _c, _) = mounted().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = seen.clone();
        NotificationSink::new(move |n| seen.lock().unwrap().push(n))
    };
    let mut meta = Map::new();
    meta.insert("progressToken".into(), json!("mine"));
    let result = registry
        .call_tool_by_name("steps", json!({}))
        .options(CallOptions::new().notifications(sink).meta(meta))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("done"));
    let seen = seen.lock().unwrap();
    let progress: Vec<_> = seen
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| {
            (
                n["params"]["progressToken"].clone(),
                n["params"]["progress"].clone(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        [
            (json!("mine"), json!(1.0)),
            (json!("mine"), json!(2.0)),
            (json!("mine"), json!(3.0))
        ]
    );
}

#[tokio::test]
async fn a_cancelled_call_is_cancelled_on_the_remote() {
    let (registry, _up, _c, cancelled) = mounted().await;
    let token = CancellationToken::new();
    let call = registry
        .call_tool_by_name("hang", json!({}))
        .cancellation(token.clone());
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        token.cancel();
    };
    let (result, ()) = tokio::join!(call, cancel);
    assert!(result.is_err());
    eventually("the remote tool to see its cancellation", || {
        cancelled.load(Ordering::SeqCst)
    })
    .await;
}

#[tokio::test]
async fn remote_errors_name_the_server() {
    let (registry, _up, _c, _) = mounted().await;
    let reply = registry
        .handle_mcp_message(
            "remote",
            json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "greet"}}),
        )
        .await
        .unwrap();
    assert!(
        reply["error"]["message"].as_str().unwrap().contains("name"),
        "{reply}"
    );
}

#[tokio::test]
async fn a_remote_list_change_is_followed() {
    let (registry, up, _c, _) = mounted().await;
    let mut server = up.server("upstream").unwrap().tools().to_vec();
    server.push(
        Tool::new(
            "late",
            "Added later",
            json!({"type": "object"}),
            |_| async { "late" },
        )
        .unwrap(),
    );
    up.register_server(Server::new("upstream", Some("3.1.5"), server).unwrap());
    eventually("the new tool to be mounted", || {
        registry
            .server("remote")
            .is_some_and(|s| s.tool("late").is_some())
    })
    .await;
    let result = registry.call_tool_by_name("late", json!({})).await.unwrap();
    assert_eq!(result.first_text(), Some("late"));
}

#[tokio::test]
async fn a_lost_connection_is_reported_and_reconnected() {
    let (registry, _up, connections, _) = mounted().await;
    connections.cut();
    eventually("the status to say disconnected", || {
        matches!(
            connection(&registry, "remote"),
            Some(ConnectionState::Disconnected(_))
        )
    })
    .await;
    let Some(ConnectionState::Disconnected(reason)) = connection(&registry, "remote") else {
        unreachable!()
    };
    assert!(reason.contains("the server crashed"), "{reason}");
    let error = registry
        .call_tool_by_name("echo", json!({}))
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains(r#"MCP server "remote" (remote) failed calling echo"#),
        "{error}"
    );

    registry.reconnect_server("remote").unwrap();
    eventually("the reconnect", || {
        connection(&registry, "remote") == Some(ConnectionState::Connected)
    })
    .await;
    assert_eq!(connections.made.load(Ordering::SeqCst), 2);
    let result = registry
        .call_tool_by_name("echo", json!({"again": true}))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some(r#"{"again":true}"#));
}

#[tokio::test]
async fn unregistering_closes_the_connection() {
    let (registry, _up, connections, _) = mounted().await;
    let client = connections.clients.lock().unwrap()[0].clone();
    assert_eq!(client.lifecycle(), ClientLifecycle::Ready);
    registry.unregister_server("remote");
    eventually("the client to close", || {
        client.lifecycle() != ClientLifecycle::Ready
    })
    .await;
}

#[tokio::test]
async fn a_remote_that_cannot_be_reached_is_a_mount_error() {
    let registry = Registry::new();
    let err = RemoteServer::new("gone", || async {
        Err::<Client, _>(ClientError::Closed("nobody there".into()))
    })
    .mount(&registry)
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot mount MCP server `gone`: the connection closed: nobody there"
    );
    assert!(registry.server_names().is_empty());
}

//! One request pipeline: every kind (tools, prompts, resources, completions) through the
//! same scope, layer stack and guarded runner, in-process and over the wire.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{MODERN, modern_meta};
use mcp_registry::layer::{RequestKind, layer_fn};
use mcp_registry::protocol::LoggingLevel;
use mcp_registry::{
    Approval, GetPromptError, NotificationSink, Prompt, ReadResourceError, Registry, Resource,
    ResourceTemplate, Server, Tool,
};
use serde_json::{Value, json};

fn hi() -> Tool {
    Tool::new("hi", "Say hi", json!({"type": "object"}), |_| async {
        "hi"
    })
    .unwrap()
}

fn greet() -> Prompt {
    Prompt::builder("greet")
        .optional_argument("name", "Who")
        .complete("name", |partial, _ctx| async move {
            mcp_registry::protocol::Completions::matching(["Ada", "Alan"], &partial)
        })
        .handler(|args| async move {
            format!("Hello {}", args.get("name").map_or("you", String::as_str))
        })
        .unwrap()
}

fn motd() -> Resource {
    Resource::builder("text://motd", "motd")
        .handler(|_| async { "Welcome" })
        .unwrap()
}

fn server() -> Server {
    Server::builder("s")
        .tool(hi())
        .prompt(greet())
        .resource(motd())
        .build()
        .unwrap()
}

/// Every request a layer saw, as (kind, name).
type Seen = Arc<Mutex<Vec<(RequestKind, String)>>>;

/// A registry whose layer records every request and refuses those naming "forbidden".
fn watched(server: Server) -> (Registry, Seen) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let registry = Registry::builder()
        .server(server)
        .layer(layer_fn(move |request, next| {
            log.lock()
                .unwrap()
                .push((request.kind(), request.name().to_owned()));
            async move {
                let forbidden = request.arguments()["name"] == "forbidden";
                if forbidden {
                    return request.refuse("not for this caller");
                }
                next.run(request).await
            }
        }))
        .build();
    (registry, seen)
}

fn kinds(seen: &Seen) -> Vec<RequestKind> {
    seen.lock().unwrap().iter().map(|(k, _)| *k).collect()
}

#[tokio::test]
async fn a_layer_sees_every_kind_in_process() {
    let (registry, seen) = watched(server());
    registry.call_tool_by_name("hi", json!({})).await.unwrap();
    registry
        .get_prompt_by_name("greet", [("name", "Ada")])
        .await
        .unwrap();
    registry.read_resource("text://motd").await.unwrap();
    assert_eq!(
        kinds(&seen),
        [
            RequestKind::Tool,
            RequestKind::Prompt,
            RequestKind::Resource
        ]
    );
    let refused = registry
        .get_prompt_by_name("greet", [("name", "forbidden")])
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        GetPromptError::Denied {
            prompt: "greet".into(),
            reason: "not for this caller".into()
        }
    );
}

#[tokio::test]
async fn a_layer_sees_every_kind_over_the_wire_and_its_refusals_reach_the_caller() {
    let (registry, seen) = watched(server());
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hi"}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "greet"}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "text://motd"}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "completion/complete", "params": {
            "ref": {"type": "ref/prompt", "name": "greet"},
            "argument": {"name": "name", "value": "A"}}}),
    ];
    for message in messages {
        let reply = registry.handle_mcp_message("s", message).await.unwrap();
        assert!(reply.get("result").is_some(), "{reply}");
    }
    // The text path too.
    let text = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"hi","arguments":{"name":"forbidden"}}}"#;
    let reply: Value =
        serde_json::from_str(&registry.handle_mcp_text("s", text).await.unwrap()).unwrap();
    assert_eq!(reply["result"]["isError"], true);
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "calling tool \"hi\" was denied: not for this caller"
    );
    let refused = registry
        .handle_mcp_message(
            "s",
            json!({"jsonrpc": "2.0", "id": 6, "method": "prompts/get",
                   "params": {"name": "greet", "arguments": {"name": "forbidden"}}}),
        )
        .await
        .unwrap();
    assert_eq!(refused["error"]["code"], -32600);
    assert_eq!(
        refused["error"]["message"],
        "getting prompt \"greet\" was denied: not for this caller"
    );
    assert_eq!(
        kinds(&seen),
        [
            RequestKind::Tool,
            RequestKind::Prompt,
            RequestKind::Resource,
            RequestKind::Completion,
            RequestKind::Tool,
            RequestKind::Prompt
        ]
    );
}

#[tokio::test]
async fn a_layer_can_change_the_arguments() {
    let echo = Tool::new(
        "echo",
        "Echo",
        json!({"type": "object"}),
        |args: Value| async move { args["text"].as_str().unwrap_or("").to_owned() },
    )
    .unwrap();
    let registry = Registry::builder()
        .server(Server::new("s", None, [echo]).unwrap())
        .layer(layer_fn(|mut request, next| async move {
            request.arguments_mut()["text"] = json!("redacted");
            next.run(request).await
        }))
        .build();
    let result = registry
        .call_tool_by_name("echo", json!({"text": "secret"}))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("redacted"));
}

#[tokio::test]
async fn approval_guards_prompts_and_resources_too() {
    let registry = Registry::builder()
        .server(server())
        .approval(|request| async move {
            match request.kind {
                RequestKind::Resource => Approval::Deny(format!("no reading {}", request.tool)),
                _ => Approval::Allow,
            }
        })
        .build();
    registry
        .get_prompt_by_name("greet", [("name", "Ada")])
        .await
        .unwrap();
    let denied = registry.read_resource("text://motd").await.unwrap_err();
    assert_eq!(
        denied,
        ReadResourceError::Denied {
            uri: "text://motd".into(),
            reason: "no reading text://motd".into()
        }
    );
}

/// A prompt that logs and reports progress, then renders.
fn chatty() -> Prompt {
    Prompt::builder("chatty")
        .handler_with_context(|ctx, _args| async move {
            ctx.log(LoggingLevel::Info, None, "rendering");
            ctx.progress(1.0, Some(1.0), None).unwrap();
            "done"
        })
        .unwrap()
}

#[tokio::test]
async fn a_prompts_logs_and_progress_reach_the_client() {
    let registry = Registry::from_servers([Server::builder("p").prompt(chatty()).build().unwrap()]);
    let sent = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let sent = sent.clone();
        NotificationSink::new(move |n| sent.lock().unwrap().push(n))
    };
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/logLevel"] = json!("info");
    meta["progressToken"] = json!("p1");
    let reply = registry
        .handle_mcp_message(
            "p",
            json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
                   "params": {"name": "chatty", "_meta": meta}}),
        )
        .notifications(sink)
        .await
        .unwrap();
    assert_eq!(reply["result"]["messages"][0]["content"]["text"], "done");
    let methods: Vec<Value> = sent
        .lock()
        .unwrap()
        .iter()
        .map(|n| n["method"].clone())
        .collect();
    assert_eq!(
        methods,
        [
            json!("notifications/message"),
            json!("notifications/progress")
        ],
        "protocol {MODERN}"
    );
}

/// A prompt, a resource and a template that never finish.
fn hanging() -> Server {
    let never = Prompt::builder("never")
        .timeout(Duration::from_secs(2))
        .handler(|_| std::future::pending::<String>())
        .unwrap();
    let stuck = Resource::builder("text://stuck", "stuck")
        .timeout(Duration::from_secs(3))
        .handler(|_| std::future::pending::<String>())
        .unwrap();
    let slow = ResourceTemplate::builder("slow://{id}", "slow")
        .handler(|_| std::future::pending::<String>())
        .unwrap();
    Server::builder("h")
        .prompt(never)
        .resource(stuck)
        .resource_template(slow)
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn prompts_and_resources_keep_their_time_limits() {
    let registry = Registry::builder()
        .server(hanging())
        .default_timeout(Duration::from_secs(5))
        .build();
    let prompt = registry
        .get_prompt_by_name("never", mcp_registry::prompt::PromptArguments::new())
        .await
        .unwrap_err();
    assert_eq!(
        prompt,
        GetPromptError::TimedOut {
            prompt: "never".into(),
            timeout: Duration::from_secs(2)
        }
    );
    let resource = registry.read_resource("text://stuck").await.unwrap_err();
    assert_eq!(
        resource.to_string(),
        "reading resource \"text://stuck\" timed out after 3s"
    );
    // A template without its own limit gets the registry's.
    let reply = registry
        .handle_mcp_message(
            "h",
            json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "slow://1"}}),
        )
        .await
        .unwrap();
    assert_eq!(reply["error"]["code"], -32603);
    assert_eq!(
        reply["error"]["message"],
        "reading resource \"slow://1\" timed out after 5s"
    );
    // The caller's own limit wins over the item's.
    let prompt = registry
        .get_prompt_by_name("never", mcp_registry::prompt::PromptArguments::new())
        .timeout(Duration::from_millis(10))
        .await
        .unwrap_err();
    assert!(
        matches!(prompt, GetPromptError::TimedOut { timeout, .. } if timeout == Duration::from_millis(10))
    );
}

#[tokio::test]
async fn a_panicking_completion_or_prompt_is_caught_the_same_way() {
    let boom = Prompt::builder("boom")
        .handler(|_| async { panic!("kaboom") as String })
        .unwrap();
    let registry = Registry::from_servers([Server::builder("b").prompt(boom).build().unwrap()]);
    let err = registry
        .get_prompt_by_name("boom", mcp_registry::prompt::PromptArguments::new())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        GetPromptError::Panicked {
            prompt: "boom".into(),
            message: "kaboom".into()
        }
    );
}

/// Host state of the tests below.
struct House(&'static str);

impl House {
    fn name(&self) -> &'static str {
        self.0
    }
}

/// A tool taking host state.
#[mcp_registry::mcp_tool]
async fn housed(house: mcp_registry::State<House>) -> String {
    format!("tool in {}", house.name())
}

/// A prompt taking host state.
#[mcp_registry::mcp_prompt]
async fn housed_prompt(house: mcp_registry::State<House>, topic: String) -> String {
    format!("{topic} in {}", house.name())
}

/// A resource template taking host state.
#[mcp_registry::mcp_resource(template = "house://{room}")]
async fn housed_room(house: mcp_registry::State<House>, room: String) -> String {
    format!("{room} of {}", house.name())
}

mcp_registry::server!(
    name = "estate",
    version = "1.0.0",
    tools = [housed],
    prompts = [housed_prompt],
    resources = [housed_room],
    fn = estate,
    collect = false
);

#[tokio::test]
async fn host_state_is_a_typed_parameter_of_tools_prompts_and_resources() {
    let registry = Registry::builder()
        .server(estate())
        .extension(House("Usher"))
        .build();
    let tool = registry
        .call_tool_by_name("housed", json!({}))
        .await
        .unwrap();
    assert_eq!(tool.first_text(), Some("tool in Usher"));
    let prompt = registry
        .get_prompt_by_name("housed_prompt", [("topic", "a fall")])
        .await
        .unwrap();
    assert_eq!(
        prompt.messages[0].content.as_text(),
        Some("a fall in Usher")
    );
    let read = registry.read_resource("house://hall").await.unwrap();
    assert_eq!(read.contents[0].as_text(), Some("hall of Usher"));
    // Per call, ahead of the registry's.
    let tool = registry
        .call_tool_by_name("housed", json!({}))
        .extension(House("Atreus"))
        .await
        .unwrap();
    assert_eq!(tool.first_text(), Some("tool in Atreus"));
}

#[tokio::test]
async fn missing_host_state_is_an_error_naming_its_type() {
    let registry = Registry::from_servers([estate()]);
    let tool = registry
        .call_tool_by_name("housed", json!({}))
        .await
        .unwrap_err();
    // The type's full path: this file is module `pipeline` of the test binary `core`.
    let expected = "no host state of type `core::pipeline::House`: attach one with RegistryBuilder::extension(..) (every call), ServerBuilder::extension(..) (one server's calls) or CallOptions::extension(..) (one call)";
    assert_eq!(
        tool.to_string(),
        format!("tool \"housed\" failed: {expected}")
    );
    let prompt = registry
        .get_prompt_by_name("housed_prompt", [("topic", "x")])
        .await
        .unwrap_err();
    assert!(prompt.to_string().ends_with(expected), "{prompt}");
    let read = registry.read_resource("house://hall").await.unwrap_err();
    assert!(read.to_string().ends_with(expected), "{read}");
}

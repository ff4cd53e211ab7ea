//! 2026-07-28 multi round-trip requests: a tool that asks for input while nothing can answer
//! at once ends its request with `input_required`; the client's retry (`inputResponses`,
//! `requestState`) runs the tool again, its asks answered by key.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_registry::prompt::PromptArguments;
use mcp_registry::protocol::ElicitResult;
use mcp_registry::tool::{Elicitation, InputCallbacks, InputError, SamplingRequest};
use mcp_registry::{CallOptions, Registry, Server, Tool, ToolContext};
use serde_json::{Map, Value, json};

type Args = Map<String, Value>;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

/// `greet` asks one question; `survey` asks two in turn, then samples and lists roots
/// together, counting its runs.
fn registry_with(builder: mcp_registry::RegistryBuilder, runs: Arc<AtomicUsize>) -> Registry {
    let greet = Tool::builder("greet")
        .typed(|ctx: ToolContext, _: Args| async move {
            match ctx.elicit::<Name>("Who are you?").await? {
                Elicitation::Accept(Name { name }) => {
                    Ok::<_, InputError>(format!("Hello, {name}!"))
                }
                _ => Ok("Hello, stranger!".to_owned()),
            }
        })
        .unwrap();
    let survey = Tool::builder("survey")
        .typed(move |ctx: ToolContext, args: Args| {
            let runs = runs.clone();
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                let name = ctx.input_key("name").elicit::<Name>("Name?").await?;
                let name = name.accepted().map_or("?".to_owned(), |n| n.name);
                let (model, roots) = tokio::join!(
                    ctx.sample(SamplingRequest::new(10).user("Pick a colour")),
                    ctx.roots(),
                );
                let colour = model?.content["text"].as_str().unwrap_or("").to_owned();
                Ok::<_, InputError>(format!(
                    "{name} likes {colour} in {} root(s) ({})",
                    roots?.len(),
                    args.get("topic").and_then(Value::as_str).unwrap_or("-")
                ))
            }
        })
        .unwrap();
    let needs_sampling = Tool::builder("needs_sampling")
        .typed(|ctx: ToolContext, _: Args| async move {
            let reply = ctx.sample(SamplingRequest::new(10).user("hi")).await?;
            Ok::<_, InputError>(reply.model)
        })
        .unwrap();
    builder
        .server(Server::new("s", None, [greet, survey, needs_sampling]).unwrap())
        .build()
}

fn registry() -> Registry {
    registry_with(Registry::builder(), Arc::default())
}

const ALL: &str = r#"{"elicitation": {}, "sampling": {}, "roots": {}}"#;

/// A 2026-07-28 `tools/call` of `tool`, with `extra` params (`inputResponses`, ...).
fn call(id: u64, tool: &str, arguments: Value, caps: &str, extra: Value) -> Value {
    let mut params = json!({
        "name": tool,
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": serde_json::from_str::<Value>(caps).unwrap(),
        }
    });
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn sampled(text: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "m", "stopReason": "endTurn"})
}

async fn send(registry: &Registry, message: Value) -> Value {
    registry.handle_mcp_message("s", message).await.unwrap()
}

/// `refused` is -32602 for a `requestState` that fails its integrity check.
fn assert_integrity_refused(refused: &Value) {
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("integrity"),
        "{refused}"
    );
}

#[tokio::test]
async fn an_ask_without_an_answer_ends_the_request_with_input_required_and_the_retry_completes() {
    let registry = registry();
    let first = send(&registry, call(1, "greet", json!({}), ALL, json!({}))).await;
    let result = &first["result"];
    assert_eq!(first["id"], 1);
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "s"
    );
    let requests = result["inputRequests"].as_object().unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests["elicitation-0"],
        json!({"method": "elicitation/create", "params": {
            "message": "Who are you?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        }})
    );
    let state = result["requestState"].as_str().unwrap();

    let retry = json!({
        "inputResponses": {"elicitation-0": accept(json!({"name": "Ada"}))},
        "requestState": state,
    });
    let done = send(&registry, call(2, "greet", json!({}), ALL, retry)).await;
    assert_eq!(done["id"], 2);
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");
}

#[tokio::test]
async fn asks_in_turn_take_a_round_each_and_asks_together_share_one() {
    let runs = Arc::new(AtomicUsize::new(0));
    let registry = registry_with(Registry::builder(), runs.clone());
    let args = json!({"topic": "paint"});
    // Round 1: the first ask.
    let r1 = send(&registry, call(1, "survey", args.clone(), ALL, json!({}))).await;
    let r1 = &r1["result"];
    assert_eq!(r1["resultType"], "input_required");
    let keys: Vec<&String> = r1["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["name"]);
    // Round 2: the two asks awaited together, in one result; the first answer carried in
    // the new state.
    let retry = json!({
        "inputResponses": {"name": accept(json!({"name": "Ada"}))},
        "requestState": r1["requestState"],
    });
    let r2 = send(&registry, call(2, "survey", args.clone(), ALL, retry)).await;
    let r2 = &r2["result"];
    assert_eq!(r2["resultType"], "input_required", "{r2}");
    let requests = r2["inputRequests"].as_object().unwrap();
    assert_eq!(requests["sampling-1"]["method"], "sampling/createMessage");
    assert_eq!(requests["sampling-1"]["params"]["maxTokens"], 10);
    assert_eq!(
        requests["roots-2"],
        json!({"method": "roots/list", "params": {}})
    );
    assert_eq!(requests.len(), 2);
    assert_ne!(r2["requestState"], r1["requestState"]);
    // Round 3: only this round's answers are sent; the state has the first.
    let retry = json!({
        "inputResponses": {
            "sampling-1": sampled("teal"),
            "roots-2": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]},
        },
        "requestState": r2["requestState"],
    });
    let r3 = send(&registry, call(3, "survey", args, ALL, retry)).await;
    assert_eq!(
        r3["result"]["content"][0]["text"],
        "Ada likes teal in 2 root(s) (paint)"
    );
    assert_eq!(
        runs.load(Ordering::SeqCst),
        3,
        "the tool runs once per round"
    );
}

#[tokio::test]
async fn a_missing_answer_is_asked_again_and_unknown_answers_are_ignored() {
    let registry = registry();
    let retry = json!({"inputResponses": {"wrong_key": accept(json!({"name": "Eve"}))}});
    let again = send(&registry, call(1, "greet", json!({}), ALL, retry)).await;
    assert_eq!(again["result"]["resultType"], "input_required");
    assert!(again["result"]["inputRequests"]["elicitation-0"].is_object());
    // An answer under the right key, beside others, without a state: used.
    let retry = json!({"inputResponses": {
        "elicitation-0": accept(json!({"name": "Ada"})),
        "extra": {"action": "accept", "content": {"x": 1}},
    }});
    let done = send(&registry, call(2, "greet", json!({}), ALL, retry)).await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");
}

#[tokio::test]
async fn a_tampered_or_foreign_state_is_refused() {
    let registry = registry();
    let first = send(&registry, call(1, "greet", json!({}), ALL, json!({}))).await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let answer = json!({"elicitation-0": accept(json!({"name": "Ada"}))});
    let retry = |state: String| json!({"inputResponses": answer.clone(), "requestState": state});

    for forged in [format!("{state}-TAMPERED"), "x".to_owned(), String::new()] {
        let refused = send(&registry, call(2, "greet", json!({}), ALL, retry(forged))).await;
        assert_eq!(refused["id"], 2);
        assert_integrity_refused(&refused);
    }
    // State issued for other arguments.
    let refused = send(
        &registry,
        call(
            3,
            "greet",
            json!({"other": true}),
            ALL,
            retry(state.clone()),
        ),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    // Another registry's state, unless the two share a key.
    let other = registry_with(Registry::builder(), Arc::default());
    let refused = send(&other, call(4, "greet", json!({}), ALL, retry(state))).await;
    assert_eq!(refused["error"]["code"], -32602);
    let key = [7u8; 32];
    let a = registry_with(Registry::builder().request_state_key(key), Arc::default());
    let b = registry_with(Registry::builder().request_state_key(key), Arc::default());
    let first = send(&a, call(5, "greet", json!({}), ALL, json!({}))).await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let done = send(&b, call(6, "greet", json!({}), ALL, retry(state))).await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");
}

#[tokio::test]
async fn earlier_answers_come_from_the_state_not_from_the_retry() {
    let registry = registry();
    let r1 = send(&registry, call(1, "survey", json!({}), ALL, json!({}))).await;
    let retry = json!({
        "inputResponses": {"name": accept(json!({"name": "Ada"}))},
        "requestState": r1["result"]["requestState"],
    });
    let r2 = send(&registry, call(2, "survey", json!({}), ALL, retry)).await;
    // The client tries to change its first answer on the last round.
    let retry = json!({
        "inputResponses": {
            "name": accept(json!({"name": "Mallory"})),
            "sampling-1": sampled("red"),
            "roots-2": {"roots": []},
        },
        "requestState": r2["result"]["requestState"],
    });
    let r3 = send(&registry, call(3, "survey", json!({}), ALL, retry)).await;
    assert_eq!(
        r3["result"]["content"][0]["text"],
        "Ada likes red in 0 root(s) (-)"
    );
}

#[tokio::test]
async fn an_answer_that_is_not_a_result_of_its_request_is_refused() {
    let registry = registry();
    let retry = json!({"inputResponses": {"elicitation-0": 12345}});
    let refused = send(&registry, call(1, "greet", json!({}), ALL, retry)).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    for bad in [
        json!({"inputResponses": null}),
        json!({"inputResponses": [1]}),
        json!({"requestState": 5}),
    ] {
        let refused = send(&registry, call(2, "greet", json!({}), ALL, bad)).await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
    }
}

#[tokio::test]
async fn only_declared_capabilities_are_asked_for() {
    let registry = registry();
    // No `sampling`: the ask fails at once; returned with `?`, the request gets -32021.
    let refused = send(
        &registry,
        call(
            1,
            "needs_sampling",
            json!({}),
            r#"{"elicitation": {}}"#,
            json!({}),
        ),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
    // Only `roots` of the two asked together: `inputRequests` holds no sampling request and
    // the tool fails on the sampling error once roots are answered.
    let retry = json!({"inputResponses": {"name": accept(json!({"name": "Ada"}))}});
    let partial = send(
        &registry,
        call(
            2,
            "survey",
            json!({}),
            r#"{"elicitation": {}, "roots": {}}"#,
            retry,
        ),
    )
    .await;
    let keys: Vec<&String> = partial["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, ["roots-2"], "{partial}");
}

#[tokio::test]
async fn an_input_handler_answers_at_once_in_process() {
    let registry = registry();
    let user = InputCallbacks::new().on_elicit(|_| async {
        let mut form = Map::new();
        form.insert("name".into(), "Grace".into());
        Ok(ElicitResult::accept(form))
    });
    let reply = registry
        .handle_mcp_message("s", call(1, "greet", json!({}), ALL, json!({})))
        .options(CallOptions::new().input_handler(user))
        .await
        .unwrap();
    assert_eq!(reply["result"]["resultType"], "complete");
    assert_eq!(reply["result"]["content"][0]["text"], "Hello, Grace!");
}

#[tokio::test]
async fn the_text_path_serves_rounds_too() {
    let registry = registry();
    let first = registry
        .handle_mcp_text(
            "s",
            &call(1, "greet", json!({"k": [1, 2]}), ALL, json!({})).to_string(),
        )
        .await
        .unwrap();
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["result"]["resultType"], "input_required");
    // The first call's arguments stayed text; the retry takes the value path: same digest.
    let retry = json!({
        "inputResponses": {"elicitation-0": accept(json!({"name": "Ada"}))},
        "requestState": first["result"]["requestState"],
    });
    let text = call(2, "greet", json!({"k": [1, 2]}), ALL, retry).to_string();
    let done: Value =
        serde_json::from_str(&registry.handle_mcp_text("s", &text).await.unwrap()).unwrap();
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Ada!",
        "{done}"
    );
}

#[tokio::test]
async fn legacy_requests_keep_no_client_without_a_handler() {
    let registry = registry();
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "greet", "arguments": {}}});
    let reply = send(&registry, message).await;
    assert_eq!(reply["result"]["isError"], true);
    assert!(reply["result"].get("inputRequests").is_none());
}

#[tokio::test]
async fn a_prompt_asks_through_its_context_in_rounds_too() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Topic {
        topic: String,
    }
    let prompt = mcp_registry::Prompt::builder("brainstorm")
        .optional_argument("style", "How")
        .handler_with_context(|ctx: ToolContext, args| async move {
            let topic = ctx
                .elicit::<Topic>("About what?")
                .await
                .map_err(|e| e.to_string())?;
            let topic = topic.accepted().map_or("nothing".to_owned(), |t| t.topic);
            let style = args.get("style").cloned().unwrap_or_default();
            Ok::<_, String>(format!("Brainstorm {style} about {topic}"))
        })
        .unwrap();
    let registry = Registry::builder()
        .server(Server::builder("s").prompts([prompt]).build().unwrap())
        .build();
    let get = |id: u64, extra: Value| {
        let mut params = json!({
            "name": "brainstorm",
            "arguments": {"style": "wildly"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            }
        });
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"jsonrpc": "2.0", "id": id, "method": "prompts/get", "params": params})
    };
    let first = send(&registry, get(1, json!({}))).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert_eq!(
        first["result"]["inputRequests"]["elicitation-0"]["params"]["message"],
        "About what?"
    );
    let state = first["result"]["requestState"].clone();
    let retry = json!({
        "inputResponses": {"elicitation-0": accept(json!({"topic": "kites"}))},
        "requestState": state,
    });
    let done = send(&registry, get(2, retry)).await;
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(
        done["result"]["messages"][0]["content"]["text"],
        "Brainstorm wildly about kites"
    );
    // A tool's state is not a prompt's.
    let tool_state = {
        let r = registry_with(Registry::builder(), Arc::default());
        let first = send(&r, call(1, "greet", json!({}), ALL, json!({}))).await;
        first["result"]["requestState"].clone()
    };
    let refused = send(&registry, get(3, json!({"requestState": tool_state}))).await;
    assert_eq!(refused["error"]["code"], -32602);
    // Rendered in-process without a request, the context has no client to ask.
    let rendered = registry
        .get_prompt_by_name("brainstorm", PromptArguments::new())
        .await;
    assert!(rendered.is_err());
}

/// A tool that reads no context cannot ask, so its first try is answered at once; a retry
/// of it with a state still has the state checked.
#[tokio::test]
async fn a_tool_without_context_is_answered_at_once_and_a_forged_state_is_still_refused() {
    let echo = Tool::builder("echo")
        .typed(|args: Args| async move { args.len().to_string() })
        .unwrap();
    let registry = Registry::from_servers([Server::new("s", None, [echo]).unwrap()]);
    let done = send(&registry, call(1, "echo", json!({"a": 1}), ALL, json!({}))).await;
    assert_eq!(done["result"]["content"][0]["text"], "1", "{done}");
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    let forged = json!({"inputResponses": {}, "requestState": "x"});
    let refused = send(&registry, call(2, "echo", json!({"a": 1}), ALL, forged)).await;
    assert_integrity_refused(&refused);
}

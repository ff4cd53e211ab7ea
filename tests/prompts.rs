//! Prompts: built at run time and by `#[mcp_prompt]`, listed and rendered through
//! `handle_mcp_message` in both eras (each reply validated against the official JSON Schema
//! of its version), and in-process through the registry.

use crate::common;

use std::future::IntoFuture as _;

use common::{LEGACY, MODERN, assert_cached, assert_complete_from, assert_reply, modern_meta};
use mcp_registry::prompt::PromptArguments;
use mcp_registry::protocol::Role;
use mcp_registry::{
    Content, GetPromptError, GetPromptResult, Prompt, PromptMessage, Registry, Server, mcp_prompt,
    mcp_tool, server,
};
use serde_json::{Value, json};

fn simple() -> Prompt {
    Prompt::builder("simple")
        .title("Simple")
        .description("A prompt without arguments")
        .handler(|_| async { "This is a simple prompt." })
        .unwrap()
}

fn with_args() -> Prompt {
    Prompt::builder("with_args")
        .title("With arguments")
        .required_argument("arg1", "First argument")
        .optional_argument("arg2", "Second argument")
        .handler(|args| async move {
            let arg2 = args.get("arg2").map_or("-", String::as_str);
            format!("arg1={}, arg2={arg2}", args["arg1"])
        })
        .unwrap()
}

fn media() -> Prompt {
    Prompt::builder("media")
        .handler(|_| async {
            vec![
                PromptMessage::new(Role::User, Content::image(b"\x89PNG", "image/png")),
                PromptMessage::new(
                    Role::User,
                    Content::embedded_text("test://doc", "text/plain", "Embedded"),
                ),
                PromptMessage::assistant("Seen."),
            ]
        })
        .unwrap()
}

fn failing() -> Prompt {
    Prompt::builder("failing")
        .handler(|_| async { Err::<String, _>("the template is gone") })
        .unwrap()
}

fn panicking() -> Prompt {
    Prompt::builder("panicking")
        .handler(|_| async {
            if true {
                panic!("prompt exploded");
            }
            "unreachable"
        })
        .unwrap()
}

fn server() -> Server {
    Server::builder("words")
        .prompts([with_args(), simple(), media(), failing(), panicking()])
        .build()
        .unwrap()
}

async fn ask(registry: &Registry, message: Value) -> Value {
    registry
        .handle_mcp_message("words", message)
        .await
        .expect("a request gets a reply")
}

fn names(list: &Value) -> Vec<&str> {
    list["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn listed_sorted_and_valid_in_every_version() {
    let r = Registry::from_servers([server()]);
    for version in LEGACY {
        let init = ask(
            &r,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .await;
        assert_reply(version, "InitializeResult", &init);
        assert_eq!(
            init["result"]["capabilities"]["prompts"],
            json!({"listChanged": false})
        );
        let list = ask(
            &r,
            json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list", "params": {"_meta": {}}}),
        )
        .await;
        assert_reply(version, "ListPromptsResult", &list);
        assert_eq!(
            names(&list),
            ["failing", "media", "panicking", "simple", "with_args"]
        );
        let get = ask(
            &r,
            json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "with_args", "arguments": {"arg1": "a"}}}),
        )
        .await;
        assert_reply(version, "GetPromptResult", &get);
        assert_eq!(
            get["result"]["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "arg1=a, arg2=-"}}])
        );
    }
    let list = ask(
        &r,
        json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}),
    )
    .await;
    let with_args = &list["result"]["prompts"][4];
    assert_eq!(
        with_args,
        &json!({"name": "with_args", "title": "With arguments", "arguments": [
            {"name": "arg1", "description": "First argument", "required": true},
            {"name": "arg2", "description": "Second argument", "required": false},
        ]})
    );
    assert!(list["result"]["prompts"][0].get("arguments").is_none());
}

#[tokio::test]
async fn older_revisions_get_no_titles() {
    let r = Registry::from_servers([server()]);
    let (session, _out) = mcp_registry::ServerSession::new(r, "words");
    session
        .handle(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        .await;
    session
        .handle(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let list = session
        .handle(json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}))
        .await
        .unwrap();
    assert_reply("2025-03-26", "ListPromptsResult", &list);
    assert!(list["result"]["prompts"][3].get("title").is_none());
    assert_eq!(list["result"]["prompts"][3]["name"], "simple");
}

#[tokio::test]
async fn modern_results_carry_result_type_meta_and_caching_hints() {
    let r = Registry::builder()
        .server(server())
        .list_ttl(std::time::Duration::from_secs(60))
        .build();
    let discover = ask(
        &r,
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta()}}),
    )
    .await;
    assert_reply(MODERN, "DiscoverResult", &discover);
    assert!(discover["result"]["capabilities"]["prompts"].is_object());
    let list = ask(
        &r,
        json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list", "params": {"_meta": modern_meta()}}),
    )
    .await;
    assert_reply(MODERN, "ListPromptsResult", &list);
    assert_complete_from(&list, "words");
    assert_cached(&list, 60_000, "public");
    let get = ask(
        &r,
        json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "media", "_meta": modern_meta()}}),
    )
    .await;
    assert_reply(MODERN, "GetPromptResult", &get);
    assert_complete_from(&get, "words");
    let messages = &get["result"]["messages"];
    assert_eq!(messages[0]["content"]["type"], "image");
    assert_eq!(messages[0]["content"]["mimeType"], "image/png");
    assert_eq!(messages[1]["content"]["resource"]["uri"], "test://doc");
    assert_eq!(messages[2]["role"], "assistant");
    // The text path writes the same reply.
    let text = r
        .handle_mcp_text(
            "words",
            &json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "media", "_meta": modern_meta()}}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), get);
}

#[tokio::test]
async fn errors_name_the_prompt_or_the_argument() {
    let r = Registry::from_servers([server()]);
    let get = |params: Value| {
        let r = r.clone();
        async move {
            ask(
                &r,
                json!({"jsonrpc": "2.0", "id": 9, "method": "prompts/get", "params": params}),
            )
            .await
        }
    };
    let cases = [
        (json!({"name": "nope"}), -32602, "Unknown prompt: nope"),
        (
            json!({"name": "with_args", "arguments": {"arg2": "x"}}),
            -32602,
            "invalid arguments for prompt \"with_args\": missing required argument `arg1`",
        ),
        (
            json!({"name": "with_args", "arguments": {"arg1": 5}}),
            -32602,
            "invalid prompts/get params: invalid type: integer `5`, expected a string",
        ),
        (
            json!({"arguments": {}}),
            -32602,
            "invalid prompts/get params: missing field `name`",
        ),
        (
            json!({"name": "failing"}),
            -32603,
            "prompt \"failing\" failed: the template is gone",
        ),
        (
            json!({"name": "panicking"}),
            -32603,
            "prompt \"panicking\" panicked: prompt exploded",
        ),
    ];
    for (params, code, message) in cases {
        let reply = get(params.clone()).await;
        assert_reply("2025-11-25", "JSONRPCErrorResponse", &reply);
        assert_eq!(reply["error"]["code"], code, "{params}");
        assert_eq!(reply["error"]["message"], message, "{params}");
    }
    let bad_cursor = ask(
        &r,
        json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": {"cursor": "dG9vbHM6MQ"}}),
    )
    .await;
    assert_eq!(bad_cursor["error"]["code"], -32602);
    // The registry is still fine after a panic.
    let ok = get(json!({"name": "simple"})).await;
    assert_eq!(
        ok["result"]["messages"][0]["content"]["text"],
        "This is a simple prompt."
    );
}

#[tokio::test]
async fn paginated_with_opaque_cursors() {
    let r = Registry::builder().server(server()).page_size(2).build();
    let mut cursor = Value::Null;
    let mut seen = Vec::new();
    loop {
        let page = ask(
            &r,
            json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": {"cursor": cursor}}),
        )
        .await;
        assert_reply("2025-11-25", "ListPromptsResult", &page);
        seen.extend(names(&page).into_iter().map(str::to_owned));
        match page["result"].get("nextCursor") {
            Some(next) => cursor = next.clone(),
            None => break,
        }
    }
    assert_eq!(
        seen,
        ["failing", "media", "panicking", "simple", "with_args"]
    );
}

#[tokio::test]
async fn no_prompts_capability_without_prompts() {
    let r = Registry::from_servers([common::small_server("bare", "t", "ok")]);
    let init = r
        .handle_mcp_message(
            "bare",
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .await
        .unwrap();
    assert!(init["result"]["capabilities"].get("prompts").is_none());
    let list = r
        .handle_mcp_message(
            "bare",
            json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}),
        )
        .await
        .unwrap();
    assert_eq!(list["result"], json!({"prompts": []}));
}

#[tokio::test]
async fn registry_gets_prompts_by_plain_or_qualified_name() {
    let other = Server::builder("other").prompt(simple()).build().unwrap();
    let r = Registry::from_servers([server(), other]);
    let result = r
        .get_prompt_by_name("with_args", [("arg1", "x"), ("arg2", "y")])
        .await
        .unwrap();
    assert_eq!(
        result,
        GetPromptResult::new(vec![PromptMessage::user("arg1=x, arg2=y")])
    );
    let ambiguous = r.get_prompt_by_name("simple", PromptArguments::new()).await;
    assert!(
        matches!(ambiguous, Err(GetPromptError::AmbiguousPrompt { ref servers, .. }) if servers == &["other", "words"])
    );
    r.get_prompt_by_name("mcp__other__simple", PromptArguments::new())
        .await
        .unwrap();
    r.toggle_server("other", false).unwrap();
    r.get_prompt_by_name("simple", PromptArguments::new())
        .await
        .unwrap();
    let disabled = r
        .get_prompt_by_name("mcp__other__simple", PromptArguments::new())
        .await;
    assert!(matches!(
        disabled,
        Err(GetPromptError::ServerDisabled { .. })
    ));
    assert!(matches!(
        r.get_prompt_by_name("nope", PromptArguments::new()).await,
        Err(GetPromptError::UnknownPrompt { .. })
    ));
    assert!(matches!(
        r.get_prompt_by_name("mcp__ghost__x", PromptArguments::new())
            .await,
        Err(GetPromptError::UnknownServer { .. })
    ));

    let definitions = r.all_prompt_definitions();
    let qualified: Vec<&str> = definitions
        .iter()
        .map(|d| d.qualified_name.as_str())
        .collect();
    assert_eq!(
        qualified,
        [
            "mcp__words__failing",
            "mcp__words__media",
            "mcp__words__panicking",
            "mcp__words__simple",
            "mcp__words__with_args"
        ]
    );
    let status = r.server_status();
    assert_eq!((status[0].prompt_count, status[0].enabled), (1, false));
    assert_eq!(status[1].prompt_count, 5);
    assert_eq!(status[1].prompt_names[0], "failing");
}

#[test]
fn build_errors() {
    let bad = Prompt::builder("bad name").handler(|_| async { "" });
    assert_eq!(
        bad.unwrap_err().to_string(),
        "prompt name \"bad name\" contains ' ' at position 3; only A-Z, a-z, 0-9, '_', '-' and '.' are allowed"
    );
    let twice = Prompt::builder("p")
        .required_argument("a", "")
        .optional_argument("a", "")
        .handler(|_| async { "" });
    assert!(
        twice
            .unwrap_err()
            .to_string()
            .contains("two arguments named \"a\"")
    );
    let duplicate = Server::builder("s").prompts([simple(), simple()]).build();
    assert!(
        duplicate
            .unwrap_err()
            .to_string()
            .contains("two prompts named \"simple\"")
    );
}

#[tokio::test]
async fn sessions_announce_prompt_list_changes() {
    let r = Registry::from_servers([server()]);
    let (session, mut out) = mcp_registry::ServerSession::new(r.clone(), "words");
    let init = session
        .handle(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        .await
        .unwrap();
    assert_eq!(
        init["result"]["capabilities"]["prompts"],
        json!({"listChanged": true})
    );
    session
        .handle(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    r.register_server(Server::builder("words").prompt(simple()).build().unwrap());
    let first = out.recv().await.unwrap();
    let second = out.recv().await.unwrap();
    assert_eq!(first["method"], "notifications/tools/list_changed");
    assert_eq!(second["method"], "notifications/prompts/list_changed");
    let list = session
        .handle(json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}))
        .await
        .unwrap();
    assert_eq!(names(&list), ["simple"]);
}

/// Review a change.
///
/// Shown to the user as a slash command.
///
/// # Arguments
/// * `diff` - the change to review
/// * `focus` - what to look at first
#[mcp_prompt(title = "Code review")]
async fn review(diff: String, focus: Option<String>) -> Vec<PromptMessage> {
    let focus = focus.unwrap_or_else(|| "correctness".to_owned());
    vec![
        PromptMessage::user(format!("Review this change for {focus}:\n{diff}")),
        PromptMessage::assistant("Reading it now."),
    ]
}

/// Greet someone, synchronously.
#[mcp_prompt(name = "hello")]
fn greet(#[arg(rename = "who", description = "who to greet")] r#name: String) -> String {
    format!("Say hello to {name}")
}

mod more {
    /// Fails on purpose.
    #[mcp_registry::mcp_prompt]
    pub async fn broken() -> Result<String, std::io::Error> {
        Err(std::io::Error::other("no template"))
    }
}

/// A tool beside the prompts.
#[mcp_tool]
async fn ping() -> &'static str {
    "pong"
}

server!(name = "macro-prompts", tools = [ping], prompts = [review, greet, more::broken], fn = macro_prompts);
server!(name = "prompts-only", prompts = [review], fn = prompts_only, collect = false);

#[tokio::test]
async fn mcp_prompt_functions_stay_functions() {
    assert_eq!(greet("Ada".into()), "Say hello to Ada");
    let messages = review("+x".into(), None).await;
    assert_eq!(messages[1], PromptMessage::assistant("Reading it now."));
}

#[tokio::test]
async fn mcp_prompt_metadata_from_the_signature_and_docs() {
    let prompt = review::prompt();
    let d = prompt.descriptor();
    assert_eq!(d.name, "review");
    assert_eq!(d.title.as_deref(), Some("Code review"));
    assert_eq!(
        d.description.as_deref(),
        Some("Review a change.\n\nShown to the user as a slash command.")
    );
    assert_eq!(
        serde_json::to_value(&d.arguments).unwrap(),
        json!([
            {"name": "diff", "description": "the change to review", "required": true},
            {"name": "focus", "description": "what to look at first", "required": false},
        ])
    );
    let hello = greet::prompt();
    assert_eq!(hello.name(), "hello");
    assert_eq!(
        serde_json::to_value(&hello.descriptor().arguments).unwrap(),
        json!([{"name": "who", "description": "who to greet", "required": true}])
    );
    assert!(more::broken::prompt().descriptor().arguments.is_empty());
}

#[tokio::test]
async fn server_macro_serves_prompts() {
    let server = macro_prompts();
    assert_eq!(
        server.prompt_names().collect::<Vec<_>>(),
        ["broken", "hello", "review"]
    );
    assert_eq!(server.tool_names().collect::<Vec<_>>(), ["ping"]);
    assert!(Registry::collected().server("macro-prompts").is_some());
    assert!(Registry::collected().server("prompts-only").is_none());
    assert_eq!(prompts_only().tools().len(), 0);

    let r = Registry::from_servers([server]);
    let reply = r
        .handle_mcp_message(
            "macro-prompts",
            json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {
                "name": "review", "arguments": {"diff": "+x", "focus": "style"}, "_meta": modern_meta()}}),
        )
        .await
        .unwrap();
    assert_reply(MODERN, "GetPromptResult", &reply);
    assert_eq!(
        reply["result"]["messages"][0]["content"]["text"],
        "Review this change for style:\n+x"
    );
    let hello = r
        .get_prompt_by_name("hello", [("who", "Ada")])
        .await
        .unwrap();
    assert_eq!(hello.messages, [PromptMessage::user("Say hello to Ada")]);
    let missing = r
        .get_prompt_by_name("mcp__macro-prompts__hello", PromptArguments::new())
        .await
        .unwrap_err();
    assert_eq!(
        missing.to_string(),
        "invalid arguments for prompt \"hello\": missing required argument `who`"
    );
    let broken = r
        .handle_mcp_message(
            "macro-prompts",
            json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "broken"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        broken["error"],
        json!({"code": -32603, "message": "prompt \"broken\" failed: no template"})
    );
}

/// The house style.
struct Style(&'static str);

/// Write in the house style.
///
/// # Arguments
/// * `topic` - what to write about
#[mcp_prompt]
async fn styled(ctx: mcp_registry::ToolContext, topic: String) -> String {
    let style = ctx.get::<Style>().map_or("plain", |s| s.0);
    format!(
        "Write about {topic} in a {style} style ({})",
        ctx.tool_name()
    )
}

#[tokio::test]
async fn a_prompt_function_takes_the_requests_context() {
    let prompt = styled::prompt();
    // The context is no argument.
    let arguments = &prompt.descriptor().arguments;
    assert_eq!(arguments.len(), 1);
    assert_eq!(arguments[0].name, "topic");
    let server = Server::builder("styled").prompt(prompt).build().unwrap();
    let registry = Registry::builder()
        .server(server)
        .extension(Style("terse"))
        .build();
    let reply = registry
        .handle_mcp_message(
            "styled",
            json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
                   "params": {"name": "styled", "arguments": {"topic": "rust"}}}),
        )
        .await
        .unwrap();
    assert_eq!(
        reply["result"]["messages"][0]["content"]["text"],
        "Write about rust in a terse style (styled)"
    );
    // By name in-process, the same host state as over the wire (it was `None` here before).
    let result = registry
        .get_prompt_by_name("styled", [("topic", "go")])
        .await
        .unwrap();
    assert_eq!(
        result.messages[0].content.as_text(),
        Some("Write about go in a terse style (styled)")
    );
}

/// D10: in a runtime without a timer, a prompt that waits fails because no timer can keep
/// its limit, and says so; it used to claim it had run for the whole default limit.
#[test]
fn a_prompt_that_waits_without_a_timer_says_why_not_that_it_timed_out() {
    let waits = Prompt::builder("waits")
        .handler(|_| async {
            tokio::task::yield_now().await;
            "done"
        })
        .unwrap();
    let r = Registry::builder()
        .server(Server::builder("s").prompt(waits).build().unwrap())
        .build();
    // No `enable_time`: the default limit cannot be kept.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let error = runtime
        .block_on(
            r.get_prompt_by_name("waits", PromptArguments::new())
                .into_future(),
        )
        .unwrap_err();
    assert!(
        matches!(&error, GetPromptError::NoTimer { prompt, .. } if prompt == "waits"),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(!message.contains("timed out"), "{message}");
    assert!(message.contains("time enabled"), "{message}");
}

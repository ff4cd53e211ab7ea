//! Completion (`completion/complete`): completion functions on prompt arguments and resource
//! template variables, the `completions` capability only where there is something to
//! complete, the 100-value cap, errors; every reply validated against the official JSON
//! Schema of its version.

use crate::common;

use common::{LEGACY, MODERN, assert_complete_from, assert_reply, modern_meta};
use mcp_registry::completion::Completions;
use mcp_registry::{
    Prompt, PromptBuildError, Registry, ResourceBuildError, ResourceTemplate, Server, mcp_prompt,
};
use serde_json::{Value, json};

const LANGUAGES: [&str; 5] = ["python", "pytorch", "pyside", "rust", "ruby"];

fn review() -> Prompt {
    Prompt::builder("review")
        .required_argument("language", "The language")
        .optional_argument("framework", "A framework of that language")
        .optional_argument("notes", "Free text, nothing to complete")
        .complete("language", |partial, _| async move {
            Completions::matching(LANGUAGES, &partial)
        })
        .complete("framework", |partial, ctx| async move {
            let frameworks: &[&str] = match ctx.get("language") {
                Some("python") => &["flask", "fastapi", "django"],
                Some("rust") => &["axum", "actix"],
                _ => &[],
            };
            Completions::matching(frameworks.iter().copied(), &partial)
        })
        .handler(|args| async move { format!("Review {}", args["language"]) })
        .unwrap()
}

fn numbers() -> Prompt {
    Prompt::builder("numbers")
        .required_argument("n", "A number")
        .complete("n", |partial, _| async move {
            (0..250)
                .map(|i| format!("{partial}{i}"))
                .collect::<Vec<_>>()
        })
        .handler(|_| async { "n" })
        .unwrap()
}

fn broken() -> Prompt {
    Prompt::builder("broken")
        .required_argument("failing", "Fails")
        .required_argument("panicking", "Panics")
        .complete("failing", |_, _| async {
            Err::<Vec<String>, _>("the index is down")
        })
        .complete("panicking", |_, _| async {
            if true {
                panic!("completer exploded");
            }
            vec!["never"]
        })
        .handler(|_| async { "b" })
        .unwrap()
}

fn repository() -> ResourceTemplate {
    ResourceTemplate::builder("repo://{owner}/{name}", "repository")
        .complete("owner", |partial, _| async move {
            Completions::matching(["acme", "alpha"], &partial)
        })
        .complete("name", |partial, ctx| async move {
            match ctx.get("owner") {
                Some(owner) => vec![format!("{owner}-{partial}core")],
                None => vec![],
            }
        })
        .handler(|req| async move { req.uri().to_owned() })
        .unwrap()
}

fn registry() -> Registry {
    let with = Server::builder("words")
        .prompts([review(), numbers(), broken()])
        .resource_template(repository())
        .build()
        .unwrap();
    let plain_prompt = Prompt::builder("plain")
        .required_argument("x", "X")
        .handler(|_| async { "x" })
        .unwrap();
    let without = Server::builder("plain")
        .prompt(plain_prompt)
        .build()
        .unwrap();
    Registry::from_servers([with, without])
}

fn complete(reference: Value, name: &str, value: &str, context: Option<Value>) -> Value {
    let mut params = json!({"ref": reference, "argument": {"name": name, "value": value}});
    if let Some(context) = context {
        params["context"] = json!({ "arguments": context });
    }
    json!({"jsonrpc": "2.0", "id": 7, "method": "completion/complete", "params": params})
}

async fn ask(registry: &Registry, server: &str, message: Value) -> Value {
    registry
        .handle_mcp_message(server, message)
        .await
        .expect("a request gets a reply")
}

fn prompt_ref(name: &str) -> Value {
    json!({"type": "ref/prompt", "name": name})
}

#[tokio::test]
async fn prompt_arguments_complete_with_context_in_every_version() {
    let r = registry();
    for version in LEGACY {
        let init = ask(
            &r,
            "words",
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .await;
        assert_reply(version, "InitializeResult", &init);
        assert_eq!(init["result"]["capabilities"]["completions"], json!({}));

        let reply = ask(
            &r,
            "words",
            complete(prompt_ref("review"), "language", "PY", None),
        )
        .await;
        assert_reply(version, "CompleteResult", &reply);
        assert_eq!(
            reply["result"]["completion"],
            json!({"values": ["python", "pytorch", "pyside"], "total": 3, "hasMore": false})
        );
        let reply = ask(
            &r,
            "words",
            complete(
                prompt_ref("review"),
                "framework",
                "f",
                Some(json!({"language": "python"})),
            ),
        )
        .await;
        assert_reply(version, "CompleteResult", &reply);
        assert_eq!(
            reply["result"]["completion"]["values"],
            json!(["flask", "fastapi"])
        );
    }
}

#[tokio::test]
async fn template_variables_complete_by_template_or_uri() {
    let r = registry();
    let by_template = json!({"type": "ref/resource", "uri": "repo://{owner}/{name}"});
    let reply = ask(
        &r,
        "words",
        complete(by_template.clone(), "owner", "ac", None),
    )
    .await;
    assert_reply("2025-11-25", "CompleteResult", &reply);
    assert_eq!(reply["result"]["completion"]["values"], json!(["acme"]));
    let reply = ask(
        &r,
        "words",
        complete(by_template, "name", "x", Some(json!({"owner": "acme"}))),
    )
    .await;
    assert_eq!(
        reply["result"]["completion"]["values"],
        json!(["acme-xcore"])
    );
    // 2026-07-28: the reference may be a URI the template makes.
    let mut modern = complete(
        json!({"type": "ref/resource", "uri": "repo://acme/x"}),
        "owner",
        "al",
        None,
    );
    modern["params"]["_meta"] = modern_meta();
    let reply = ask(&r, "words", modern).await;
    assert_reply(MODERN, "CompleteResult", &reply);
    assert_eq!(reply["result"]["completion"]["values"], json!(["alpha"]));
    assert_complete_from(&reply, "words");
}

#[tokio::test]
async fn at_most_a_hundred_values_and_the_rest_counted() {
    let r = registry();
    let reply = ask(&r, "words", complete(prompt_ref("numbers"), "n", "7", None)).await;
    assert_reply("2025-11-25", "CompleteResult", &reply);
    let completion = &reply["result"]["completion"];
    assert_eq!(completion["values"].as_array().unwrap().len(), 100);
    assert_eq!(completion["values"][0], "70");
    assert_eq!(completion["total"], 250);
    assert_eq!(completion["hasMore"], true);
}

#[tokio::test]
async fn an_argument_without_a_function_gets_no_suggestions() {
    let r = registry();
    let reply = ask(
        &r,
        "words",
        complete(prompt_ref("review"), "notes", "a", None),
    )
    .await;
    assert_reply("2025-11-25", "CompleteResult", &reply);
    assert_eq!(reply["result"]["completion"]["values"], json!([]));
}

#[tokio::test]
async fn unknown_references_and_failures_are_errors() {
    let r = registry();
    for (message, code, says) in [
        (complete(prompt_ref("nope"), "x", "", None), -32602, "nope"),
        (
            complete(prompt_ref("review"), "colour", "", None),
            -32602,
            "colour",
        ),
        (
            complete(
                json!({"type": "ref/resource", "uri": "other://{x}"}),
                "x",
                "",
                None,
            ),
            -32602,
            "other://{x}",
        ),
        (
            complete(
                json!({"type": "ref/resource", "uri": "repo://{owner}/{name}"}),
                "branch",
                "",
                None,
            ),
            -32602,
            "branch",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 7, "method": "completion/complete", "params": {"ref": {"type": "ref/unknown"}}}),
            -32602,
            "completion/complete",
        ),
        (
            complete(prompt_ref("broken"), "failing", "", None),
            -32603,
            "the index is down",
        ),
        (
            complete(prompt_ref("broken"), "panicking", "", None),
            -32603,
            "panicked",
        ),
    ] {
        let reply = ask(&r, "words", message).await;
        assert_reply("2025-11-25", "CompleteResult", &reply);
        assert_eq!(reply["error"]["code"], code, "{reply}");
        assert!(
            reply["error"]["message"].as_str().unwrap().contains(says),
            "{reply}"
        );
    }
    // The registry stays usable after a completer panicked.
    let reply = ask(
        &r,
        "words",
        complete(prompt_ref("review"), "language", "ru", None),
    )
    .await;
    assert_eq!(
        reply["result"]["completion"]["values"],
        json!(["rust", "ruby"])
    );
}

#[tokio::test]
async fn a_server_with_nothing_to_complete_advertises_and_serves_no_completion() {
    let r = registry();
    let init = ask(
        &r,
        "plain",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    assert!(init["result"]["capabilities"].get("completions").is_none());
    let reply = ask(&r, "plain", complete(prompt_ref("plain"), "x", "", None)).await;
    assert_eq!(reply["error"]["code"], -32601);
    let discover = ask(
        &r,
        "words",
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta()}}),
    )
    .await;
    assert_reply(MODERN, "DiscoverResult", &discover);
    assert_eq!(discover["result"]["capabilities"]["completions"], json!({}));
}

#[test]
fn completing_an_undeclared_argument_is_a_build_error() {
    let err = Prompt::builder("p")
        .required_argument("a", "A")
        .complete("b", |_, _| async { vec!["x"] })
        .handler(|_| async { "p" })
        .unwrap_err();
    assert!(matches!(
        err,
        PromptBuildError::UnknownCompletionArgument { .. }
    ));
    assert_eq!(
        err.to_string(),
        r#"prompt "p" has no argument "b" to complete"#
    );
    let err = ResourceTemplate::builder("t://{a}", "t")
        .complete("b", |_, _| async { vec!["x"] })
        .handler(|_| async { "t" })
        .unwrap_err();
    assert!(matches!(
        err,
        ResourceBuildError::UnknownCompletionVariable { .. }
    ));
}

/// Suggests colours starting with what was typed.
async fn colours(
    partial: String,
    context: mcp_registry::completion::CompletionContext,
) -> Vec<String> {
    ["red", "green", "grey"]
        .into_iter()
        .filter(|c| c.starts_with(&partial))
        .map(|c| format!("{c}{}", context.get("suffix").unwrap_or_default()))
        .collect()
}

/// Paint something.
#[mcp_prompt]
async fn paint(#[arg(complete = colours)] colour: String, suffix: Option<String>) -> String {
    format!("paint it {colour}{}", suffix.unwrap_or_default())
}

#[tokio::test]
async fn the_macro_attaches_a_completion_function_to_an_argument() {
    let prompt = paint::prompt();
    assert!(prompt.has_completions());
    let chosen = [("suffix".to_owned(), "!".to_owned())].into();
    let suggested = prompt
        .complete("colour", "gr", chosen)
        .unwrap()
        .await
        .unwrap();
    assert_eq!(suggested.values, ["green!", "grey!"]);
    let none = prompt
        .complete("suffix", "", Default::default())
        .unwrap()
        .await
        .unwrap();
    assert!(none.values.is_empty());
    assert_eq!(
        paint("red".into(), None).await,
        "paint it red",
        "still a plain function"
    );
}

async fn owners(partial: String, _: mcp_registry::completion::CompletionContext) -> Vec<String> {
    ["acme", "alpha", "beta"]
        .into_iter()
        .filter(|o| o.starts_with(&partial))
        .map(str::to_owned)
        .collect()
}

/// A repository's README.
#[mcp_registry::mcp_resource(template = "readme://{owner}/{repo}")]
async fn readme(#[arg(complete = owners)] owner: String, repo: String) -> String {
    format!("{owner}/{repo}")
}

#[tokio::test]
async fn mcp_resource_template_variables_complete() {
    let template = readme::resource_template();
    assert!(template.has_completions());
    let server = Server::builder("docs")
        .resource_template(template)
        .build()
        .unwrap();
    assert!(server.has_completions());
    let r = Registry::from_servers([server]);
    let reply = ask(
        &r,
        "docs",
        complete(
            json!({"type": "ref/resource", "uri": "readme://{owner}/{repo}"}),
            "owner",
            "a",
            None,
        ),
    )
    .await;
    assert_eq!(
        reply["result"]["completion"]["values"],
        json!(["acme", "alpha"])
    );
    // A variable without a completion function completes to nothing.
    let reply = ask(
        &r,
        "docs",
        complete(
            json!({"type": "ref/resource", "uri": "readme://{owner}/{repo}"}),
            "repo",
            "x",
            None,
        ),
    )
    .await;
    assert_eq!(reply["result"]["completion"]["values"], json!([]));
}

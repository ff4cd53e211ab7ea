//! Tool exports for model APIs: qualification round-trips, formats, and tool-use dispatch.

use std::collections::HashSet;

use mcp_registry::Registry;
use mcp_registry::agent::{ModelApi, ToolUseError};
use mcp_registry::catalog::{FilteredRegistry, MAX_TOOL_NAME_LENGTH, ToolCatalog, model_tool_name};
use serde_json::json;

use crate::common;

use common::labelled_server as server;

fn odd_registry() -> Registry {
    let long_server = "s".repeat(120);
    let long_tool = "t".repeat(128);
    let near = "n".repeat(64 - "mcp__x__".len());
    Registry::from_servers([
        server("math", &["add"]),
        server("files.v2", &["read.all", "write-one"]),
        server(&long_server, &[long_tool.as_str(), "a", "b"]),
        server("x", &[near.as_str(), &format!("{near}n")]),
        server("a-b.c_d", &["x.y-z_w"]),
    ])
}

#[tokio::test]
async fn every_exported_name_is_valid_unique_and_dispatches_back_to_its_tool() {
    let view = FilteredRegistry::from(odd_registry());
    let catalog = view.catalog();
    assert!(catalog.duplicates().is_empty());
    assert_eq!(catalog.len(), 9);
    let mut seen = HashSet::new();
    for tool in catalog.tools() {
        assert!(
            tool.name.len() <= MAX_TOOL_NAME_LENGTH,
            "{} is too long",
            tool.name
        );
        assert!(
            tool.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{}",
            tool.name
        );
        assert!(tool.name.starts_with("mcp__"));
        assert!(seen.insert(tool.name.clone()), "{} twice", tool.name);
        assert_eq!(tool.name, model_tool_name(&tool.server, &tool.tool.name));

        // Round trip: the model-facing name reaches exactly this tool, by every API.
        let expected = format!("{}/{}", tool.server, tool.tool.name);
        let result = view.call_tool_by_name(&tool.name, json!({})).await.unwrap();
        assert_eq!(result.first_text(), Some(expected.as_str()));
        let block =
            json!({"type": "function_call", "call_id": "c1", "name": tool.name, "arguments": "{}"});
        let output = view
            .dispatch_tool_use(ModelApi::OpenAiResponses, &block)
            .await
            .unwrap();
        assert_eq!(output["output"], expected);
    }
    // Short names are readable; only over-long ones are hashed.
    assert!(catalog.get("mcp__files_v2__read_all").is_some());
    assert!(catalog.get("mcp__a-b_c_d__x_y-z_w").is_some());
    let near = "n".repeat(64 - "mcp__x__".len());
    assert!(
        catalog.get(&format!("mcp__x__{near}")).is_some(),
        "64 characters fit as they are"
    );
    let hashed = catalog
        .tools()
        .iter()
        .filter(|t| t.name != t.qualified_name().replace('.', "_"))
        .count();
    assert_eq!(
        hashed, 4,
        "the long server's three tools and x's 65-character name"
    );
}

#[test]
fn long_names_that_share_a_prefix_stay_apart() {
    let server = "s".repeat(100);
    let a = model_tool_name(&server, "alpha");
    let b = model_tool_name(&server, "beta");
    assert_eq!(&a[..24], &b[..24]);
    assert_ne!(a, b);
    assert_eq!(a, model_tool_name(&server, "alpha"), "stable run to run");
}

#[test]
fn colliding_names_are_reported_and_the_exact_name_keeps_its_owner() {
    let both =
        Registry::from_servers([server("files.v2", &["read"]), server("files_v2", &["read"])]);
    let catalog = ToolCatalog::new(both.all_tool_definitions());
    assert_eq!(catalog.len(), 1);
    assert_eq!(
        catalog.get("mcp__files_v2__read").unwrap().server,
        "files_v2"
    );
    let duplicate = &catalog.duplicates()[0];
    assert_eq!(duplicate.name, "mcp__files_v2__read");
    assert_eq!(duplicate.kept, "mcp__files_v2__read");
    assert_eq!(duplicate.left_out, "mcp__files.v2__read");
    assert!(duplicate.to_string().contains("mcp__files.v2__read"));

    let export = FilteredRegistry::from(both).export_tools(ModelApi::AnthropicMessages);
    assert_eq!(export.tools.len(), 1);
    assert_eq!(export.duplicates.len(), 1);
}

#[test]
fn definitions_have_each_apis_shape() {
    let view = FilteredRegistry::from(Registry::from_servers([server("math", &["add"])]));
    let schema = json!({"type": "object"});
    assert_eq!(
        view.export_tools(ModelApi::AnthropicMessages).tools,
        [json!({"name": "mcp__math__add", "description": "add of math", "input_schema": schema})]
    );
    assert_eq!(
        view.export_tools(ModelApi::OpenAiChatCompletions).tools,
        [
            json!({"type": "function", "function": {"name": "mcp__math__add", "description": "add of math", "parameters": schema}})
        ]
    );
    assert_eq!(
        view.export_tools(ModelApi::OpenAiResponses).tools,
        [
            json!({"type": "function", "name": "mcp__math__add", "description": "add of math", "parameters": schema, "strict": false})
        ]
    );
}

#[tokio::test]
async fn tool_use_blocks_dispatch_to_tool_results_in_each_shape() {
    let view = FilteredRegistry::from(Registry::from_servers([server("math", &["add"])]));
    let anthropic =
        json!({"type": "tool_use", "id": "toolu_1", "name": "mcp__math__add", "input": {"a": 1}});
    assert_eq!(
        view.dispatch_tool_use(ModelApi::AnthropicMessages, &anthropic)
            .await
            .unwrap(),
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "math/add"}]})
    );
    let chat = json!({"id": "call_1", "type": "function", "function": {"name": "mcp__math__add", "arguments": "{\"a\":1}"}});
    assert_eq!(
        view.dispatch_tool_use(ModelApi::OpenAiChatCompletions, &chat)
            .await
            .unwrap(),
        json!({"role": "tool", "tool_call_id": "call_1", "content": "math/add"})
    );
    let responses = json!({"type": "function_call", "call_id": "fc_1", "name": "mcp__math__add", "arguments": ""});
    assert_eq!(
        view.dispatch_tool_use(ModelApi::OpenAiResponses, &responses)
            .await
            .unwrap(),
        json!({"type": "function_call_output", "call_id": "fc_1", "output": "math/add"})
    );
}

#[tokio::test]
async fn model_mistakes_become_error_results_and_broken_blocks_are_errors() {
    let view = FilteredRegistry::from(Registry::from_servers([server("math", &["add"])]));
    // Unknown tool: an error result the model can read, naming the tool.
    let unknown =
        json!({"type": "tool_use", "id": "toolu_2", "name": "mcp__math__mul", "input": {}});
    let result = view
        .dispatch_tool_use(ModelApi::AnthropicMessages, &unknown)
        .await
        .unwrap();
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("mcp__math__mul")
    );
    // Arguments that are not JSON: an error result under the call's id.
    let bad = json!({"id": "call_2", "type": "function", "function": {"name": "mcp__math__add", "arguments": "{a:"}});
    let result = view
        .dispatch_tool_use(ModelApi::OpenAiChatCompletions, &bad)
        .await
        .unwrap();
    assert_eq!(result["tool_call_id"], "call_2");
    assert!(
        result["content"]
            .as_str()
            .unwrap()
            .contains("not a JSON object")
    );
    // No id to answer: the host's problem, reported as an error.
    let no_id = json!({"type": "tool_use", "name": "mcp__math__add", "input": {}});
    assert!(matches!(
        view.dispatch_tool_use(ModelApi::AnthropicMessages, &no_id)
            .await,
        Err(ToolUseError::MissingField { field: "id", .. })
    ));
    let wrong = json!({"type": "text", "text": "hi"});
    assert!(matches!(
        view.dispatch_tool_use(ModelApi::AnthropicMessages, &wrong)
            .await,
        Err(ToolUseError::WrongType { .. })
    ));
}

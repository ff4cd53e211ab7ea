//! Allow and deny filters: what is hidden is refused too, whatever name it is called by.

use mcp_registry::agent::{ControlRouter, ModelApi};
use mcp_registry::catalog::{FilterDecision, FilteredCallError, FilteredRegistry, ToolFilter};
use mcp_registry::{CallError, Registry};
use serde_json::json;

use crate::common;

use common::{control_mcp_message, labelled_server as server};

fn registry() -> Registry {
    Registry::from_servers([
        server("fs", &["read", "write", "delete"]),
        server("shell", &["run"]),
        server("web.v2", &["fetch"]),
    ])
}

fn listed(view: &FilteredRegistry) -> Vec<String> {
    view.catalog()
        .tools()
        .iter()
        .map(|t| t.name.clone())
        .collect()
}

#[tokio::test]
async fn a_denied_tool_is_refused_by_every_name_not_only_hidden() {
    let filter = ToolFilter::builder()
        .deny("mcp__fs__delete")
        .build()
        .unwrap();
    let view = FilteredRegistry::new(registry(), filter);
    assert!(!listed(&view).contains(&"mcp__fs__delete".to_owned()));
    assert!(
        view.tool_definitions()
            .iter()
            .all(|d| d.tool.name != "delete")
    );

    for name in ["delete", "mcp__fs__delete"] {
        match view.call_tool_by_name(name, json!({})).await {
            Err(FilteredCallError::Refused {
                server,
                tool,
                decision,
                ..
            }) => {
                assert_eq!((server.as_str(), tool.as_str()), ("fs", "delete"));
                assert_eq!(
                    decision,
                    FilterDecision::Denied {
                        pattern: "mcp__fs__delete".into()
                    }
                );
            }
            other => panic!("{name}: expected a refusal, got {other:?}"),
        }
    }
    let message = view
        .call_tool_by_name("delete", json!({}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("\"delete\"")
            && message.contains("\"fs\"")
            && message.contains("mcp__fs__delete"),
        "{message}"
    );

    // Allowed tools are still callable by every name.
    for name in ["read", "mcp__fs__read"] {
        let result = view.call_tool_by_name(name, json!({})).await.unwrap();
        assert_eq!(result.first_text(), Some("fs/read"));
    }
}

#[tokio::test]
async fn an_allow_list_refuses_everything_else_and_deny_wins_over_allow() {
    let filter = ToolFilter::builder()
        .allow("mcp__fs__*")
        .allow("mcp__shell__run")
        .deny("mcp__fs__write")
        .build()
        .unwrap();
    let view = FilteredRegistry::new(registry(), filter);
    assert_eq!(
        listed(&view),
        ["mcp__fs__delete", "mcp__fs__read", "mcp__shell__run"]
    );
    let refused = view
        .call_tool_by_name("mcp__web.v2__fetch", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(
        refused,
        FilteredCallError::Refused {
            decision: FilterDecision::NotAllowed { .. },
            ..
        }
    ));
    assert!(refused.to_string().contains("mcp__fs__*"), "{refused}");
    let refused = view
        .call_tool_by_name("write", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(
        refused,
        FilteredCallError::Refused {
            decision: FilterDecision::Denied { .. },
            ..
        }
    ));
    assert!(view.call_tool_by_name("run", json!({})).await.is_ok());
}

#[tokio::test]
async fn wildcards_and_exact_patterns_also_match_model_facing_names() {
    // The model sees "mcp__web_v2__fetch"; a filter written in that form holds as well.
    let filter = ToolFilter::builder()
        .deny("mcp__web_v2__*")
        .build()
        .unwrap();
    let view = FilteredRegistry::new(registry(), filter);
    assert!(
        view.call_tool_by_name("mcp__web.v2__fetch", json!({}))
            .await
            .is_err()
    );
    assert!(
        view.call_tool_by_name("mcp__web_v2__fetch", json!({}))
            .await
            .is_err()
    );
    let filter = ToolFilter::builder()
        .deny("mcp__web_v2__fetch")
        .build()
        .unwrap();
    let view = FilteredRegistry::new(registry(), filter);
    assert!(matches!(
        view.call_tool_by_name("fetch", json!({})).await,
        Err(FilteredCallError::Refused { .. })
    ));
}

#[tokio::test]
async fn plain_names_resolve_among_allowed_tools_only() {
    let registry = Registry::from_servers([server("a", &["search"]), server("b", &["search"])]);
    // Unfiltered, the plain name is ambiguous.
    let open = FilteredRegistry::from(registry.clone());
    assert!(matches!(
        open.call_tool_by_name("search", json!({})).await,
        Err(FilteredCallError::Call(CallError::AmbiguousTool { .. }))
    ));
    // With b denied, it names a's tool.
    let filter = ToolFilter::builder().deny("mcp__b__*").build().unwrap();
    let view = FilteredRegistry::new(registry, filter);
    assert_eq!(
        view.call_tool_by_name("search", json!({}))
            .await
            .unwrap()
            .first_text(),
        Some("a/search")
    );
}

#[tokio::test]
async fn the_view_follows_registry_changes() {
    let registry = registry();
    let view = FilteredRegistry::new(
        registry.clone(),
        ToolFilter::builder().deny("mcp__shell__*").build().unwrap(),
    );
    assert_eq!(listed(&view).len(), 4);
    registry.toggle_server("fs", false).unwrap();
    assert_eq!(listed(&view), ["mcp__web_v2__fetch"]);
    assert!(matches!(
        view.call_tool_by_name("read", json!({})).await,
        Err(FilteredCallError::Call(CallError::ServerDisabled { .. }))
    ));
    registry.register_server(server("shell2", &["run"]));
    assert!(
        view.call_tool_by_name("run", json!({})).await.is_ok(),
        "shell2's run is allowed"
    );
    registry.unregister_server("web.v2");
    assert!(matches!(
        view.call_tool_by_name("mcp__web.v2__fetch", json!({}))
            .await,
        Err(FilteredCallError::Call(CallError::UnknownServer { .. }))
    ));
}

#[tokio::test]
async fn control_routing_and_tool_use_dispatch_enforce_the_filter() {
    let filter = ToolFilter::builder()
        .deny("mcp__fs__delete")
        .build()
        .unwrap();
    let view = FilteredRegistry::new(registry(), filter);

    // MCP path: hidden from tools/list, refused by tools/call with -32602 naming tool and filter.
    let router = ControlRouter::new(view.clone());
    let list = control_mcp_message(
        "r1",
        "fs",
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    );
    let reply = router.handle_control_request(&list).await.unwrap();
    let tools = &reply["response"]["response"]["mcp_response"]["result"]["tools"];
    let names: Vec<_> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read", "write"]);
    let call = control_mcp_message(
        "r2",
        "fs",
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "delete", "arguments": {}}}),
    );
    let reply = router.handle_control_request(&call).await.unwrap();
    let error = &reply["response"]["response"]["mcp_response"]["error"];
    assert_eq!(error["code"], -32602);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("delete") && message.contains("mcp__fs__delete"),
        "{message}"
    );
    assert_eq!(reply["response"]["response"]["mcp_response"]["id"], 2);
    // A batch is filtered element by element.
    let batch = json!([
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "delete"}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "read"}},
    ]);
    let replies = view.handle_mcp_message("fs", batch).await.unwrap();
    assert_eq!(replies[0]["error"]["code"], -32602);
    assert_eq!(replies[1]["result"]["content"][0]["text"], "fs/read");

    // Model path: a tool-use block naming the denied tool gets an error result, not a call.
    let block =
        json!({"type": "tool_use", "id": "toolu_9", "name": "mcp__fs__delete", "input": {}});
    let result = view
        .dispatch_tool_use(ModelApi::AnthropicMessages, &block)
        .await
        .unwrap();
    assert_eq!(result["is_error"], true);
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("refused by the tool filter")
    );
}

#[test]
fn malformed_patterns_are_refused_with_the_pattern_named() {
    let error = ToolFilter::builder().allow("Bash(ls)").build().unwrap_err();
    assert!(error.to_string().contains("\"Bash(ls)\""), "{error}");
    assert!(ToolFilter::builder().deny("mcp__fs__re*").build().is_err());
    assert!(ToolFilter::builder().deny("mcp__fs").build().is_err());
    assert!(ToolFilter::builder().deny("re*").build().is_err());
    assert!(ToolFilter::builder().deny("").build().is_err());
}

#[tokio::test]
async fn plain_names_match_that_tool_on_every_server() {
    let registry = Registry::from_servers([
        server("fs", &["read", "write"]),
        server("web", &["read", "fetch"]),
    ]);
    let view = FilteredRegistry::new(
        registry.clone(),
        ToolFilter::builder().allow("read").build().unwrap(),
    );
    assert_eq!(listed(&view), ["mcp__fs__read", "mcp__web__read"]);
    let view = FilteredRegistry::new(
        registry,
        ToolFilter::builder().deny("read").build().unwrap(),
    );
    assert_eq!(listed(&view), ["mcp__fs__write", "mcp__web__fetch"]);
    assert!(matches!(
        view.call_tool_by_name("mcp__web__read", json!({})).await,
        Err(FilteredCallError::Refused {
            decision: FilterDecision::Denied { .. },
            ..
        })
    ));
}

#[tokio::test]
async fn a_filter_function_sees_each_tools_description_for_listing_and_calling() {
    let filter = ToolFilter::builder()
        .keep(|server, tool| {
            server != "shell" && tool.description.as_deref() != Some("delete of fs")
        })
        .build()
        .unwrap();
    let view = FilteredRegistry::new(registry(), filter);
    assert_eq!(
        listed(&view),
        ["mcp__fs__read", "mcp__fs__write", "mcp__web_v2__fetch"]
    );
    match view.call_tool_by_name("delete", json!({})).await {
        Err(FilteredCallError::Refused { decision, .. }) => {
            assert_eq!(decision, FilterDecision::Rejected);
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // The MCP view of a server is filtered the same way.
    let router = ControlRouter::new(view);
    let reply = router
        .handle_control_request(&control_mcp_message(
            "r",
            "fs",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ))
        .await
        .unwrap();
    let names: Vec<_> = reply["response"]["response"]["mcp_response"]["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["read", "write"]);
}

/// Regression: the filter was applied to an already-paginated `tools/list` reply, so pages
/// came out short (even empty). Dispatch now filters first and paginates what is left.
#[tokio::test]
async fn filtered_tools_list_pages_are_full() {
    let registry = Registry::builder()
        .page_size(2)
        .server(server("fs", &["a", "b", "c", "d", "e", "f"]))
        .build();
    let filter = ToolFilter::builder()
        .deny("mcp__fs__a")
        .deny("mcp__fs__b")
        .deny("mcp__fs__d")
        .build()
        .unwrap();
    let view = FilteredRegistry::new(registry, filter);
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut params = json!({});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let reply = view
            .handle_mcp_message(
                "fs",
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}),
            )
            .await
            .unwrap();
        let names: Vec<String> = reply["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        pages.push(names);
        cursor = reply["result"]["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(pages, [vec!["c", "e"], vec!["f"]]);
}

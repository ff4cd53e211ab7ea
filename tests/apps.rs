//! MCP Apps (`io.modelcontextprotocol/ui`): a tool's `_meta.ui` from the builder and from
//! `#[mcp_tool(ui = ..)]`, an app resource's MIME type and `_meta.ui` on the wire, the
//! server's declaration, and the tool's app listed only to clients that declare the
//! extension (legacy sessions and 2026-07-28 requests alike).

use crate::common;

use common::modern_meta;
use common::session::legacy_session;
use mcp_registry::apps::{
    self, Csp, EXTENSION_ID, MIME_TYPE, Permissions, Requested, ToolUi, UiResourceMeta, Visibility,
};
use mcp_registry::client::Client;
use mcp_registry::protocol::ClientCapabilities;
use mcp_registry::{
    ALL_SERVERS, Registry, Resource, ResourceBuildError, Server, ServerSession, Tool,
    ToolBuildError, mcp_tool,
};
use serde_json::{Value, json};

const PAGE: &str = "<!DOCTYPE html><html><body><p id=\"t\">...</p></body></html>";

/// The time, which the clock app shows.
#[mcp_tool(read_only, ui = "ui://clock/app.html")]
async fn clock() -> String {
    "12:00".to_owned()
}

fn refresh() -> Tool {
    Tool::builder("refresh")
        .ui(ToolUi::new("ui://clock/app.html").visibility([Visibility::App]))
        .raw(json!({"type": "object"}), |_| async { "refreshed" })
        .expect("a tool")
}

fn page() -> Resource {
    let ui = UiResourceMeta::default()
        .csp(Csp::default().connect("https://api.example.com"))
        .permissions(Permissions {
            clipboard_write: Some(Requested {}),
            ..Permissions::default()
        })
        .prefers_border(true);
    Resource::builder("ui://clock/app.html", "clock")
        .title("Clock")
        .ui(ui)
        .app_html(PAGE)
        .expect("an app resource")
}

fn registry() -> Registry {
    let server = Server::builder("clock")
        .tools([clock::tool(), refresh()])
        .resources([page()])
        .build()
        .expect("a server");
    Registry::from_servers([server])
}

fn ui_capabilities() -> Value {
    json!({"extensions": {EXTENSION_ID: {"mimeTypes": [MIME_TYPE]}}})
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A legacy session whose client declares `capabilities`; the `initialize` result.
async fn session(capabilities: Value) -> (ServerSession, Value) {
    let (session, _out, reply) = legacy_session(registry(), "clock", capabilities).await;
    (session, reply["result"].clone())
}

async fn tools(session: &ServerSession) -> Vec<Value> {
    let reply = session
        .handle(request(1, "tools/list", json!({})))
        .await
        .expect("a tools/list reply");
    reply["result"]["tools"].as_array().expect("tools").clone()
}

fn by_name<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} listed"))
}

#[test]
fn a_tool_names_its_app_in_its_meta() {
    let meta = clock::tool().descriptor().meta.clone().expect("_meta");
    assert_eq!(meta["ui"], json!({"resourceUri": "ui://clock/app.html"}));
    let meta = refresh().descriptor().meta.clone().expect("_meta");
    assert_eq!(
        meta["ui"],
        json!({"resourceUri": "ui://clock/app.html", "visibility": ["app"]})
    );
    let mut other = serde_json::Map::new();
    other.insert("kept".to_owned(), json!(1));
    let both = Tool::builder("both")
        .meta(other)
        .ui("ui://clock/app.html")
        .raw(json!({"type": "object"}), |_| async { "" })
        .expect("a tool");
    let meta = both.descriptor().meta.as_ref().expect("_meta");
    assert_eq!((meta["kept"].clone(), meta.len()), (json!(1), 2));
}

#[test]
fn an_app_must_be_a_ui_uri() {
    let tool = Tool::builder("bad")
        .ui("https://example.com/app.html")
        .raw(json!({"type": "object"}), |_| async { "" });
    let Err(ToolBuildError::InvalidUiUri { tool, uri }) = tool else {
        panic!("a tool naming a non-ui:// app is refused: {tool:?}");
    };
    assert_eq!(
        (tool.as_str(), uri.as_str()),
        ("bad", "https://example.com/app.html")
    );
    let error = Resource::app_html("file:///app.html", "app", PAGE).unwrap_err();
    assert!(matches!(error, ResourceBuildError::NotAnApp { .. }));
    assert!(error.to_string().contains("ui://"), "{error}");
    assert!(Resource::app_html("ui://", "app", PAGE).is_err());
}

#[tokio::test]
async fn the_app_is_served_with_its_mime_type_and_meta() {
    let (session, _) = session(ui_capabilities()).await;
    let listed = session
        .handle(request(2, "resources/list", json!({})))
        .await
        .expect("a reply");
    let resource = &listed["result"]["resources"][0];
    assert_eq!(resource["mimeType"], MIME_TYPE);
    assert_eq!(resource["_meta"]["ui"]["prefersBorder"], true);
    let read = session
        .handle(request(
            3,
            "resources/read",
            json!({"uri": "ui://clock/app.html"}),
        ))
        .await
        .expect("a reply");
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["mimeType"], MIME_TYPE);
    assert_eq!(contents["text"], PAGE);
    assert_eq!(
        contents["_meta"]["ui"],
        json!({"csp": {"connectDomains": ["https://api.example.com"]},
               "permissions": {"clipboardWrite": {}}, "prefersBorder": true})
    );
}

#[tokio::test]
async fn a_server_with_an_app_declares_the_extension() {
    let (_, result) = session(json!({})).await;
    assert_eq!(
        result["capabilities"]["extensions"][EXTENSION_ID],
        json!({})
    );
    let plain = Server::builder("plain")
        .tools([Tool::builder("t")
            .raw(json!({"type": "object"}), |_| async { "" })
            .expect("a tool")])
        .build()
        .expect("a server");
    let (plain, _out) = ServerSession::new(Registry::from_servers([plain]), "plain");
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": ui_capabilities(),
               "clientInfo": {"name": "host", "version": "1"}}),
    );
    let reply = plain.handle(init).await.expect("a reply");
    assert!(reply["result"]["capabilities"].get("extensions").is_none());
}

#[tokio::test]
async fn the_app_is_listed_only_to_a_client_that_declares_the_extension() {
    let (host, _) = session(ui_capabilities()).await;
    let listed = tools(&host).await;
    assert_eq!(
        by_name(&listed, "clock")["_meta"]["ui"]["resourceUri"],
        "ui://clock/app.html"
    );
    assert_eq!(
        by_name(&listed, "refresh")["_meta"]["ui"]["visibility"],
        json!(["app"])
    );
    // Without the extension, or declaring another content type: plain tools, no `_meta`, and
    // no tool only an app calls.
    let other = json!({"extensions": {EXTENSION_ID: {"mimeTypes": ["text/uri-list"]}}});
    for capabilities in [json!({}), other] {
        let (plain, _) = session(capabilities).await;
        let listed = tools(&plain).await;
        assert_eq!(listed.len(), 1, "{listed:?}");
        for tool in &listed {
            assert!(tool.get("_meta").is_none(), "{tool}");
        }
        assert_eq!(
            by_name(&listed, "clock")["annotations"]["readOnlyHint"],
            true
        );
    }
}

#[tokio::test]
async fn a_2026_request_declares_the_extension_in_its_meta() {
    let registry = registry();
    let mut params = json!({"_meta": modern_meta()});
    let ask = |params: Value| {
        let registry = registry.clone();
        async move {
            let reply = registry
                .handle_mcp_message("clock", request(1, "tools/list", params))
                .await
                .expect("a reply");
            reply["result"]["tools"].as_array().expect("tools").clone()
        }
    };
    let plain = ask(params.clone()).await;
    assert!(by_name(&plain, "clock").get("_meta").is_none());
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = ui_capabilities();
    let host = ask(params).await;
    assert_eq!(
        by_name(&host, "clock")["_meta"]["ui"]["resourceUri"],
        "ui://clock/app.html"
    );
}

#[test]
fn client_support_reads_the_declared_mime_types() {
    let declared = |capabilities: Value| {
        let capabilities: ClientCapabilities =
            serde_json::from_value(capabilities).expect("capabilities");
        apps::client_supports(&capabilities)
    };
    assert!(declared(ui_capabilities()));
    assert!(!declared(json!({})));
    assert!(!declared(json!({"extensions": {EXTENSION_ID: {}}})));
    assert!(!declared(
        json!({"extensions": {EXTENSION_ID: {"mimeTypes": "text/html"}}})
    ));
}

#[tokio::test]
async fn the_client_declares_the_extension_with_apps() {
    let host = Client::builder()
        .apps()
        .connect_in_process(registry(), "clock")
        .await
        .expect("connects");
    let tools = host.list_tools().await.expect("tools");
    let clock = tools.iter().find(|t| t.name == "clock").expect("clock");
    let ui = apps::tool_ui(clock.meta.as_ref()).expect("the app listed to a host");
    assert_eq!(ui.resource_uri, "ui://clock/app.html");
    let plain = Client::in_process(registry(), "clock")
        .await
        .expect("connects");
    let tools = plain.list_tools().await.expect("tools");
    assert!(tools.iter().all(|t| t.meta.is_none()));
}

#[tokio::test]
async fn a_whole_registry_serves_its_servers_apps() {
    let registry = registry();
    let mut params = json!({"_meta": modern_meta()});
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = ui_capabilities();
    let ask = |method: &str, params: Value| {
        let registry = registry.clone();
        let message = request(1, method, params);
        async move {
            let reply = registry.handle_mcp_message(ALL_SERVERS, message).await;
            reply.expect("a reply")["result"].clone()
        }
    };
    let discovered = ask("server/discover", params.clone()).await;
    assert_eq!(
        discovered["capabilities"]["extensions"][EXTENSION_ID],
        json!({})
    );
    let listed = ask("tools/list", params.clone()).await;
    let tools = listed["tools"].as_array().expect("tools");
    assert_eq!(
        by_name(tools, "clock")["_meta"]["ui"]["resourceUri"],
        "ui://clock/app.html"
    );
    params["uri"] = json!("ui://clock/app.html");
    let read = ask("resources/read", params).await;
    assert_eq!(read["contents"][0]["mimeType"], MIME_TYPE);
}

#[test]
fn a_model_is_not_offered_the_tools_only_an_app_calls() {
    use mcp_registry::agent::ModelApi;
    use mcp_registry::catalog::FilteredRegistry;
    let export = FilteredRegistry::from(registry()).export_tools(ModelApi::AnthropicMessages);
    let names: Vec<&Value> = export.tools.iter().map(|t| &t["name"]).collect();
    assert_eq!(names, [&json!("mcp__clock__clock")]);
}

/// A board whose tools are methods (`#[mcp_server]`).
#[derive(Default)]
struct Board;

#[mcp_registry::mcp_server(name = "board")]
impl Board {
    /// The board, drawn by its app.
    #[tool(ui = "ui://board/app.html")]
    async fn show(&self) -> String {
        "empty board".to_owned()
    }
}

#[test]
fn a_method_tool_names_its_app_too() {
    let server = Board.into_server();
    let show = server
        .tools()
        .iter()
        .find(|t| t.name() == "show")
        .expect("show");
    let ui = apps::tool_ui(show.descriptor().meta.as_ref()).expect("_meta.ui");
    assert_eq!(ui.resource_uri, "ui://board/app.html");
}

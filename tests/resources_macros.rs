//! `#[mcp_resource]`: functions that stay functions, the metadata and reads they give, and
//! the request's context handed to them.

use crate::common;

use common::resources::{ask, request};
use common::{assert_reply, modern_meta};
use mcp_registry::{
    Json, ReadResourceError, Registry, ResourceError, Server, mcp_resource, server,
};
use serde_json::json;

/// The project's notes.
///
/// Kept in plain text.
#[mcp_resource(
    uri = "notes://all",
    mime_type = "text/plain",
    size = 5,
    title = "Notes"
)]
async fn notes() -> &'static str {
    "notes"
}

#[derive(serde::Serialize)]
struct Profile {
    id: u64,
    tab: String,
}

/// A user's profile tab.
#[mcp_resource(template = "users://{id}/profile/{tab}", name = "profile")]
async fn user_profile(id: u64, #[arg(rename = "tab")] section: String) -> Json<Profile> {
    Json(Profile { id, tab: section })
}

/// Raw bytes, from a plain function.
#[mcp_resource(template = "blobs://{+path}", mime_type = "application/octet-stream")]
fn blob(path: String) -> Result<Vec<u8>, ResourceError> {
    if path == "missing" {
        return Err(ResourceError::not_found("no such blob"));
    }
    Ok(path.into_bytes())
}

server!(name = "macro-resources", resources = [notes, user_profile, blob], fn = macro_resources, collect = false);

#[tokio::test]
async fn mcp_resource_functions_stay_functions() {
    assert_eq!(notes().await, "notes");
    assert_eq!(user_profile(1, "a".into()).await.0.id, 1);
    assert_eq!(blob("x".into()).unwrap(), b"x");
}

#[tokio::test]
async fn mcp_resource_metadata_and_reads() {
    let resource = notes::resource();
    let d = resource.descriptor();
    assert_eq!(d.uri, "notes://all");
    assert_eq!(d.name, "notes");
    assert_eq!(d.title.as_deref(), Some("Notes"));
    assert_eq!(
        d.description.as_deref(),
        Some("The project's notes.\n\nKept in plain text.")
    );
    assert_eq!(d.mime_type.as_deref(), Some("text/plain"));
    assert_eq!(d.size, Some(5));
    let template = user_profile::resource_template();
    assert_eq!(template.name(), "profile");
    assert_eq!(template.template().variables(), ["id", "tab"]);

    let r = Registry::from_servers([macro_resources()]);
    let read = r
        .read_resource("users://42/profile/settings")
        .await
        .unwrap();
    assert_eq!(
        read.contents[0].as_text(),
        Some(r#"{"id":42,"tab":"settings"}"#)
    );
    assert_eq!(read.contents[0].mime_type(), Some("application/json"));
    let bad = r
        .read_resource("users://me/profile/settings")
        .await
        .unwrap_err();
    assert!(matches!(bad, ReadResourceError::NotFound { .. }));
    assert!(bad.to_string().contains("template variable `id`"), "{bad}");
    let bytes = r.read_resource("blobs://a/b").await.unwrap();
    assert_eq!(
        serde_json::to_value(&bytes.contents[0]).unwrap(),
        json!({"uri": "blobs://a/b", "mimeType": "application/octet-stream", "blob": "YS9i"})
    );
    let missing = r.read_resource("blobs://missing").await.unwrap_err();
    assert_eq!(
        missing.to_string(),
        "resource not found: blobs://missing (no such blob)"
    );

    let list = r
        .handle_mcp_message(
            "macro-resources",
            request(1, "resources/templates/list", json!({})),
        )
        .await
        .unwrap();
    assert_reply("2025-11-25", "ListResourceTemplatesResult", &list);
    let templates: Vec<&str> = list["result"]["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(templates, ["blobs://{+path}", "users://{id}/profile/{tab}"]);
}

/// The host's greeting, read from its state.
struct Greeting(&'static str);

/// A greeting from the host's state.
#[mcp_resource(uri = "host://greeting")]
async fn host_greeting(ctx: mcp_registry::ToolContext) -> String {
    let greeting = ctx.get::<Greeting>().map_or("none", |g| g.0);
    format!("{greeting} ({})", ctx.tool_name())
}

/// A greeting for someone.
#[mcp_resource(template = "host://greeting/{name}")]
fn greet_someone(name: String, ctx: mcp_registry::ToolContext) -> String {
    let greeting = ctx.get::<Greeting>().map_or("none", |g| g.0);
    format!("{greeting}, {name}")
}

#[tokio::test]
async fn resource_functions_take_the_requests_context() {
    // The context is no template variable.
    assert_eq!(
        greet_someone::resource_template().descriptor().uri_template,
        "host://greeting/{name}"
    );
    let server = Server::builder("data")
        .resource(host_greeting::resource())
        .resource_template(greet_someone::resource_template())
        .build()
        .unwrap();
    let r = Registry::builder()
        .server(server)
        .extension(Greeting("hello"))
        .build();
    let read = r.read_resource("host://greeting").await.unwrap();
    assert_eq!(read.contents[0].as_text(), Some("hello (host://greeting)"));
    let reply = ask(
        &r,
        request(
            1,
            "resources/read",
            json!({"uri": "host://greeting/ada", "_meta": modern_meta()}),
        ),
    )
    .await;
    assert_eq!(reply["result"]["contents"][0]["text"], "hello, ada");
    // Called directly, a resource function is a plain function.
    let direct = greet_someone("bob".into(), mcp_registry::ToolContext::detached("t", "s"));
    assert_eq!(direct, "none, bob");
}

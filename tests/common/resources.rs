//! Resources and templates for the resource tests, in a server named `data`, and requests to
//! it.

use mcp_registry::protocol::{Annotations, CacheHints, CacheScope, Icon, ResourceContents, Role};
use mcp_registry::{
    ReadResourceResult, Registry, Resource, ResourceError, ResourceTemplate, Server,
};
use serde_json::{Value, json};

/// `test://static-text`: text with a title, description, size, annotations and an icon.
pub fn static_text() -> Resource {
    Resource::builder("test://static-text", "static-text")
        .title("Static Text Resource")
        .description("A static text resource")
        .mime_type("text/plain")
        .size(11)
        .annotations(Annotations {
            audience: Some(vec![Role::User]),
            priority: Some(0.5),
            last_modified: Some("2026-01-01T00:00:00Z".into()),
        })
        .icon(Icon {
            src: "data:image/png;base64,iVA=".into(),
            mime_type: Some("image/png".into()),
            sizes: Some(vec!["48x48".into()]),
            theme: None,
        })
        .handler(|_| async { "hello world" })
        .unwrap()
}

/// `test://static-binary`: four bytes of PNG.
pub fn static_binary() -> Resource {
    Resource::builder("test://static-binary", "static-binary")
        .mime_type("image/png")
        .handler(|_| async { vec![0x89u8, b'P', b'N', b'G'] })
        .unwrap()
}

/// `test://failing`: its handler fails.
pub fn failing() -> Resource {
    Resource::builder("test://failing", "failing")
        .handler(|_| async { Err::<String, _>("the disk is gone") })
        .unwrap()
}

/// `test://panicking`: its handler panics.
pub fn panicking() -> Resource {
    Resource::builder("test://panicking", "panicking")
        .handler(|_| async {
            if true {
                panic!("resource exploded");
            }
            "unreachable"
        })
        .unwrap()
}

/// `test://cached`: its result carries caching hints (5 ms, public).
pub fn cached() -> Resource {
    Resource::builder("test://cached", "cached")
        .handler(|req| async move {
            ReadResourceResult::new(vec![ResourceContents::text(req.uri(), "fresh")]).with_cache(
                CacheHints {
                    ttl_ms: 5,
                    cache_scope: CacheScope::Public,
                },
            )
        })
        .unwrap()
}

/// `test://template/{id}/data`: JSON for a numeric id, not found otherwise.
pub fn data_template() -> ResourceTemplate {
    ResourceTemplate::builder("test://template/{id}/data", "template")
        .title("Resource Template")
        .mime_type("application/json")
        .handler(|req| async move {
            let id: u32 = req
                .variable("id")
                .unwrap_or_default()
                .parse()
                .map_err(|_| ResourceError::not_found("ids are numbers"))?;
            Ok::<_, ResourceError>(format!(r#"{{"id":{id}}}"#))
        })
        .unwrap()
}

/// `file:///{+path}`: the path read back.
pub fn files_template() -> ResourceTemplate {
    ResourceTemplate::builder("file:///{+path}", "files")
        .handler(|req| async move { format!("contents of {}", req.variable("path").unwrap_or("")) })
        .unwrap()
}

/// A server `data` with every resource and template above.
pub fn server() -> Server {
    Server::builder("data")
        .resources([
            static_text(),
            static_binary(),
            failing(),
            panicking(),
            cached(),
        ])
        .resource_templates([data_template(), files_template()])
        .build()
        .unwrap()
}

/// The reply of the server `data` in `registry` to `message`.
pub async fn ask(registry: &Registry, message: Value) -> Value {
    registry
        .handle_mcp_message("data", message)
        .await
        .expect("a request gets a reply")
}

/// A JSON-RPC request.
pub fn request(id: u32, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The URIs of a `resources/list` reply.
pub fn uris(list: &Value) -> Vec<&str> {
    list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect()
}

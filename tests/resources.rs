//! Resources built at run time, listed and read through `handle_mcp_message` in both eras
//! (each reply validated against the official JSON Schema of its version), and read in-process
//! through the registry. Sessions are in `resources_sessions.rs`, `#[mcp_resource]` in
//! `resources_macros.rs`.

use crate::common;

use common::resources::{ask, cached, data_template, request, server, static_text, uris};
use common::{LEGACY, MODERN, assert_cached, assert_complete_from, assert_reply, modern_meta};
use mcp_registry::protocol::{CacheHints, CacheScope};
use mcp_registry::{
    ReadResourceError, Registry, Resource, ResourceTemplate, Server, ServerBuildError,
    ServerSession,
};
use serde_json::{Value, json};

#[tokio::test]
async fn listed_read_and_valid_in_every_version() {
    let r = Registry::from_servers([server()]);
    for version in LEGACY {
        let init = ask(
            &r,
            request(
                1,
                "initialize",
                json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
            ),
        )
        .await;
        assert_reply(version, "InitializeResult", &init);
        // No session here: nothing can be subscribed to, nothing is announced.
        assert_eq!(
            init["result"]["capabilities"]["resources"],
            json!({"subscribe": false, "listChanged": false})
        );
        let list = ask(&r, request(2, "resources/list", json!({}))).await;
        assert_reply(version, "ListResourcesResult", &list);
        assert_eq!(
            uris(&list),
            [
                "test://cached",
                "test://failing",
                "test://panicking",
                "test://static-binary",
                "test://static-text"
            ]
        );
        let templates = ask(&r, request(3, "resources/templates/list", json!({}))).await;
        assert_reply(version, "ListResourceTemplatesResult", &templates);
        let names: Vec<&str> = templates["result"]["resourceTemplates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["files", "template"], "sorted by name");
        for (uri, expected) in [
            (
                "test://static-text",
                json!({"uri": "test://static-text", "mimeType": "text/plain", "text": "hello world"}),
            ),
            (
                "test://static-binary",
                json!({"uri": "test://static-binary", "mimeType": "image/png", "blob": "iVBORw=="}),
            ),
            (
                "test://template/123/data",
                json!({"uri": "test://template/123/data", "mimeType": "application/json", "text": "{\"id\":123}"}),
            ),
            (
                "file:///src/main.rs",
                json!({"uri": "file:///src/main.rs", "text": "contents of src/main.rs"}),
            ),
        ] {
            let read = ask(&r, request(4, "resources/read", json!({"uri": uri}))).await;
            assert_reply(version, "ReadResourceResult", &read);
            assert_eq!(
                read["result"],
                json!({"contents": [expected]}),
                "{version} {uri}"
            );
        }
    }
}

#[tokio::test]
async fn older_revisions_get_only_their_fields() {
    let r = Registry::from_servers([server()]);
    let described = |version: &'static str| {
        let r = r.clone();
        async move {
            let session = ServerSession::new(r.clone(), "data").0;
            session
                .handle(request(
                    1,
                    "initialize",
                    json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
                ))
                .await;
            let list = session
                .handle(request(2, "resources/list", json!({})))
                .await
                .unwrap();
            list["result"]["resources"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["uri"] == "test://static-text")
                .unwrap()
                .clone()
        }
    };
    let newest = described("2025-11-25").await;
    assert_eq!(newest["title"], "Static Text Resource");
    assert_eq!(newest["icons"][0]["sizes"], json!(["48x48"]));
    assert_eq!(
        newest["annotations"]["lastModified"],
        "2026-01-01T00:00:00Z"
    );
    let june = described("2025-06-18").await;
    assert!(june.get("icons").is_none() && june.get("title").is_some());
    let march = described("2025-03-26").await;
    assert!(march.get("title").is_none());
    assert!(march["annotations"].get("lastModified").is_none());
    assert_eq!(march["annotations"]["priority"], 0.5);
    assert_eq!(march["size"], 11);
}

#[tokio::test]
async fn a_servers_caching_hints_override_the_registrys() {
    use std::time::Duration;
    let hinted = Server::builder("data")
        .resources([static_text(), cached()])
        .resource_templates([data_template()])
        .tool(
            mcp_registry::Tool::builder("noop")
                .typed(|_: serde_json::Map<String, Value>| async { "" })
                .unwrap(),
        )
        .prompt(
            mcp_registry::Prompt::builder("hi")
                .handler(|_| async { "hi" })
                .unwrap(),
        )
        .list_cache(Duration::from_secs(300), CacheScope::Public)
        .read_cache(Duration::from_millis(1500), CacheScope::Public)
        .build()
        .unwrap();
    assert_eq!(
        hinted.list_cache(),
        Some(CacheHints {
            ttl_ms: 300_000,
            cache_scope: CacheScope::Public
        })
    );
    let r = Registry::builder()
        .server(hinted)
        .list_ttl(Duration::from_secs(60))
        .build();
    for (method, def) in [
        ("tools/list", "ListToolsResult"),
        ("prompts/list", "ListPromptsResult"),
        ("resources/list", "ListResourcesResult"),
        ("resources/templates/list", "ListResourceTemplatesResult"),
        ("server/discover", "DiscoverResult"),
    ] {
        let list = ask(&r, request(1, method, json!({"_meta": modern_meta()}))).await;
        assert_reply(MODERN, def, &list);
        assert_eq!(list["result"]["ttlMs"], 300_000, "{method}");
        assert_eq!(list["result"]["cacheScope"], "public", "{method}");
    }
    let read = ask(
        &r,
        request(
            2,
            "resources/read",
            json!({"uri": "test://template/7/data", "_meta": modern_meta()}),
        ),
    )
    .await;
    assert_reply(MODERN, "ReadResourceResult", &read);
    assert_cached(&read, 1500, "public");
    // A handler's own hints still win.
    let cached = ask(
        &r,
        request(
            3,
            "resources/read",
            json!({"uri": "test://cached", "_meta": modern_meta()}),
        ),
    )
    .await;
    assert_eq!(cached["result"]["ttlMs"], 5);
}

#[tokio::test]
async fn modern_results_carry_result_type_meta_and_caching_hints() {
    let r = Registry::builder()
        .server(server())
        .list_ttl(std::time::Duration::from_secs(60))
        .build();
    let discover = ask(
        &r,
        request(1, "server/discover", json!({"_meta": modern_meta()})),
    )
    .await;
    assert_reply(MODERN, "DiscoverResult", &discover);
    // 2026-07-28 subscribes (and hears of list changes) through subscriptions/listen.
    assert_eq!(
        discover["result"]["capabilities"]["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    for (method, def) in [
        ("resources/list", "ListResourcesResult"),
        ("resources/templates/list", "ListResourceTemplatesResult"),
    ] {
        let list = ask(&r, request(2, method, json!({"_meta": modern_meta()}))).await;
        assert_reply(MODERN, def, &list);
        assert_complete_from(&list, "data");
        assert_cached(&list, 60_000, "public");
    }
    reads_carry_result_type_meta_and_caching_hints(&r).await;
}

/// A 2026-07-28 read carries `resultType`, the server's `_meta` and the registry's caching
/// hints, or a handler's own; a legacy read carries no hints; the text path writes the same
/// reply.
async fn reads_carry_result_type_meta_and_caching_hints(r: &Registry) {
    let read = ask(
        r,
        request(
            3,
            "resources/read",
            json!({"uri": "test://template/7/data", "_meta": modern_meta()}),
        ),
    )
    .await;
    assert_reply(MODERN, "ReadResourceResult", &read);
    assert_complete_from(&read, "data");
    assert_cached(&read, 60_000, "private");
    // A handler's own hints are kept.
    let cached = ask(
        r,
        request(
            4,
            "resources/read",
            json!({"uri": "test://cached", "_meta": modern_meta()}),
        ),
    )
    .await;
    assert_reply(MODERN, "ReadResourceResult", &cached);
    assert_cached(&cached, 5, "public");
    // ... and dropped for revisions without caching.
    let legacy = ask(
        r,
        request(5, "resources/read", json!({"uri": "test://cached"})),
    )
    .await;
    assert!(legacy["result"].get("ttlMs").is_none());
    // The text path writes the same reply.
    let text = r
        .handle_mcp_text(
            "data",
            &request(
                3,
                "resources/read",
                json!({"uri": "test://template/7/data", "_meta": modern_meta()}),
            )
            .to_string(),
        )
        .await
        .unwrap();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), read);
}

#[tokio::test]
async fn not_found_is_each_revisions_error() {
    let r = Registry::from_servers([server()]);
    let missing = "test://nonexistent";
    let legacy = ask(&r, request(1, "resources/read", json!({"uri": missing}))).await;
    assert_reply("2025-11-25", "ReadResourceResult", &legacy);
    assert_eq!(legacy["error"]["code"], -32002);
    assert_eq!(legacy["error"]["data"], json!({"uri": missing}));
    let modern = ask(
        &r,
        request(
            2,
            "resources/read",
            json!({"uri": missing, "_meta": modern_meta()}),
        ),
    )
    .await;
    assert_reply(MODERN, "ReadResourceResult", &modern);
    assert_eq!(modern["error"]["code"], -32602, "SEP-2164");
    assert_eq!(modern["error"]["data"], json!({"uri": missing}));
    // A template match whose function says "no such id" is not found too, with the reason.
    let bad_id = ask(
        &r,
        request(
            3,
            "resources/read",
            json!({"uri": "test://template/abc/data", "_meta": modern_meta()}),
        ),
    )
    .await;
    assert_eq!(bad_id["error"]["code"], -32602);
    assert!(
        bad_id["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ids are numbers")
    );
    // An empty variable matches nothing.
    let empty = ask(
        &r,
        request(4, "resources/read", json!({"uri": "test://template//data"})),
    )
    .await;
    assert_eq!(empty["error"]["code"], -32002);
}

#[tokio::test]
async fn failures_and_bad_params_are_errors() {
    let r = Registry::from_servers([server()]);
    let failed = ask(
        &r,
        request(1, "resources/read", json!({"uri": "test://failing"})),
    )
    .await;
    assert_eq!(failed["error"]["code"], -32603);
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the disk is gone")
    );
    let panicked = ask(
        &r,
        request(2, "resources/read", json!({"uri": "test://panicking"})),
    )
    .await;
    assert_eq!(panicked["error"]["code"], -32603);
    assert!(
        panicked["error"]["message"]
            .as_str()
            .unwrap()
            .contains("resource exploded")
    );
    // The registry is still usable after the panic.
    let ok = ask(
        &r,
        request(3, "resources/read", json!({"uri": "test://static-text"})),
    )
    .await;
    assert_eq!(ok["result"]["contents"][0]["text"], "hello world");
    for params in [json!({}), json!({"uri": 5})] {
        let bad = ask(&r, request(4, "resources/read", params)).await;
        assert_eq!(bad["error"]["code"], -32602);
    }
    let bad_cursor = ask(&r, request(5, "resources/list", json!({"cursor": "nope"}))).await;
    assert_eq!(bad_cursor["error"]["code"], -32602);
}

#[tokio::test]
async fn paginated_with_opaque_cursors() {
    let r = Registry::builder().server(server()).page_size(2).build();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let page = ask(&r, request(1, "resources/list", params)).await;
        assert_reply("2025-11-25", "ListResourcesResult", &page);
        seen.extend(uris(&page).into_iter().map(str::to_owned));
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 5);
    assert!(seen.windows(2).all(|w| w[0] < w[1]));
    let templates = ask(&r, request(2, "resources/templates/list", json!({}))).await;
    let next = templates["result"]["nextCursor"].as_str();
    assert!(next.is_none(), "two templates fit a page of two");
    // A resources cursor is not a templates cursor.
    let first = ask(&r, request(3, "resources/list", json!({}))).await;
    let cursor = first["result"]["nextCursor"].as_str().unwrap();
    let crossed = ask(
        &r,
        request(4, "resources/templates/list", json!({"cursor": cursor})),
    )
    .await;
    assert_eq!(crossed["error"]["code"], -32602);
}

#[tokio::test]
async fn no_resources_capability_without_resources() {
    let plain = Server::builder("data").build().unwrap();
    let r = Registry::from_servers([plain]);
    let init = ask(
        &r,
        request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        ),
    )
    .await;
    assert!(init["result"]["capabilities"].get("resources").is_none());
    let only_templates = Server::builder("data")
        .resource_template(data_template())
        .build()
        .unwrap();
    let r = Registry::from_servers([only_templates]);
    let discover = ask(
        &r,
        request(1, "server/discover", json!({"_meta": modern_meta()})),
    )
    .await;
    assert!(discover["result"]["capabilities"]["resources"].is_object());
}

#[tokio::test]
async fn registry_reads_resources_in_process() {
    let other = Server::builder("other")
        .resource(
            Resource::builder("test://static-text", "shadow")
                .handler(|_| async { "shadow" })
                .unwrap(),
        )
        .build()
        .unwrap();
    let r = Registry::from_servers([server(), other]);
    let ambiguous = r.read_resource("test://static-text").await.unwrap_err();
    assert!(
        matches!(ambiguous, ReadResourceError::AmbiguousResource { ref servers, .. } if servers == &["data", "other"])
    );
    let from_other = r
        .read_server_resource("other", "test://static-text")
        .await
        .unwrap();
    assert_eq!(from_other.contents[0].as_text(), Some("shadow"));
    r.toggle_server("other", false).unwrap();
    let text = r.read_resource("test://static-text").await.unwrap();
    assert_eq!(text.contents[0].as_text(), Some("hello world"));
    let templated = r.read_resource("test://template/9/data").await.unwrap();
    assert_eq!(templated.contents[0].as_text(), Some(r#"{"id":9}"#));
    let disabled = r
        .read_server_resource("other", "test://static-text")
        .await
        .unwrap_err();
    assert!(matches!(disabled, ReadResourceError::ServerDisabled { .. }));
    r.toggle_server("data", false).unwrap();
    let gone = r.read_resource("test://template/9/data").await.unwrap_err();
    assert!(matches!(gone, ReadResourceError::NotFound { .. }));
    let shadowed = r.read_resource("test://static-text").await.unwrap_err();
    assert!(matches!(shadowed, ReadResourceError::ServerDisabled { .. }));
    let unknown = r
        .read_server_resource("nope", "test://x")
        .await
        .unwrap_err();
    assert!(matches!(unknown, ReadResourceError::UnknownServer { .. }));
    r.toggle_server("data", true).unwrap();
    let defs = r.all_resource_definitions();
    assert_eq!(defs.len(), 5);
    assert!(defs.iter().all(|d| d.server == "data"));
    let templates = r.all_resource_template_definitions();
    assert_eq!(templates[0].template.name, "files");
    let status = r.server_status();
    assert_eq!(status[0].resource_count, 5);
    assert_eq!(status[0].resource_template_count, 2);
}

#[test]
fn build_errors() {
    let twice = Server::builder("s")
        .resources([static_text(), static_text()])
        .build()
        .unwrap_err();
    assert!(
        matches!(twice, ServerBuildError::DuplicateResource { ref uri, .. } if uri == "test://static-text")
    );
    let twice = Server::builder("s")
        .resource_templates([data_template(), data_template()])
        .build()
        .unwrap_err();
    assert!(matches!(
        twice,
        ServerBuildError::DuplicateResourceTemplate { .. }
    ));
    let no_scheme = Resource::builder("just-a-name", "x")
        .handler(|_| async { "" })
        .unwrap_err();
    assert!(no_scheme.to_string().contains("absolute URI"));
    let level3 = ResourceTemplate::builder("search://{?q}", "search")
        .handler(|_| async { "" })
        .unwrap_err();
    assert!(level3.to_string().contains("level 2"), "{level3}");
    let unclosed = ResourceTemplate::builder("users://{id", "u")
        .handler(|_| async { "" })
        .unwrap_err();
    assert!(unclosed.to_string().contains("invalid URI template"));
}

#[tokio::test(start_paused = true)]
async fn a_slow_read_times_out_under_the_registrys_default_timeout() {
    use std::time::Duration;
    let slow = Resource::builder("test://slow", "slow")
        .handler(|_| async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            "late"
        })
        .unwrap();
    let r = Registry::builder()
        .server(Server::builder("data").resource(slow).build().unwrap())
        .default_timeout(Duration::from_millis(50))
        .build();
    let err = r.read_resource("test://slow").await.unwrap_err();
    assert_eq!(
        err,
        ReadResourceError::TimedOut {
            uri: "test://slow".into(),
            timeout: Duration::from_millis(50)
        }
    );
    let reply = ask(
        &r,
        request(
            1,
            "resources/read",
            json!({"uri": "test://slow", "_meta": modern_meta()}),
        ),
    )
    .await;
    assert_eq!(reply["error"]["code"], -32603);
    assert!(
        reply["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("timed out"))
    );
}

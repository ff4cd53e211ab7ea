//! Scalars sent as strings (`"3"`, `"true"`): read as the schema's integer, number or boolean
//! by default, at any depth and under `Option`, for `#[mcp_tool]`, typed and raw tools, over
//! values and over message text; refused with `RegistryBuilder::lenient_scalars(false)`.

use mcp_registry::{CallError, Json, Registry, Server, Tool, mcp_tool};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, PartialEq)]
struct Page {
    size: u64,
    reverse: Option<bool>,
    offsets: Vec<i32>,
}

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema, PartialEq)]
struct Query {
    text: String,
    limit: Option<u32>,
    exact: bool,
    boost: f64,
    page: Option<Page>,
}

/// Every scalar kind, top-level and nested.
#[mcp_tool]
async fn search(
    text: String,
    limit: Option<u32>,
    exact: bool,
    boost: f64,
    page: Option<Page>,
) -> Json<Query> {
    Json(Query {
        text,
        limit,
        exact,
        boost,
        page,
    })
}

fn typed() -> Tool {
    Tool::builder("typed")
        .typed(|q: Query| async move { Json(q) })
        .unwrap()
}

fn raw() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}, "on": {"type": "boolean"}},
        "required": ["n"]
    });
    Tool::builder("raw")
        .raw(schema, |arguments: Value| async move {
            Json(json!({"echo": arguments}))
        })
        .unwrap()
}

fn build(lenient: Option<bool>) -> Registry {
    let server = Server::builder("s")
        .tool(search::tool())
        .tool(typed())
        .tool(raw())
        .build()
        .unwrap();
    let builder = Registry::builder().server(server);
    match lenient {
        Some(on) => builder.lenient_scalars(on).build(),
        None => builder.build(),
    }
}

/// The query with every scalar sent as a string.
fn as_strings() -> Value {
    json!({
        "text": "42",
        "limit": "3",
        "exact": "true",
        "boost": "1.5",
        "page": {"size": "10", "reverse": "false", "offsets": ["-1", 2]}
    })
}

fn read_back() -> Value {
    json!({
        "text": "42",
        "limit": 3,
        "exact": true,
        "boost": 1.5,
        "page": {"size": 10, "reverse": false, "offsets": [-1, 2]}
    })
}

async fn call(registry: &Registry, tool: &str, arguments: Value) -> Result<Value, CallError> {
    let result = registry.call_tool_by_name(tool, arguments).await?;
    Ok(result.structured_content.expect("structured"))
}

#[tokio::test]
async fn strings_are_read_as_the_schema_s_scalars_by_default() {
    let registry = build(None);
    for tool in ["search", "typed"] {
        let read = call(&registry, tool, as_strings()).await.unwrap();
        assert_eq!(read, read_back(), "{tool}");
    }
    let read = call(&registry, "raw", json!({"n": "7", "on": "false"}))
        .await
        .unwrap();
    // (`Json<Value>` is wrapped as `{"result": ..}`: a `Value` has no object schema.)
    assert_eq!(read["result"]["echo"], json!({"n": 7, "on": false}));
}

#[tokio::test]
async fn well_typed_arguments_and_strings_the_schema_wants_are_unchanged() {
    let registry = build(None);
    let read = call(&registry, "search", read_back()).await.unwrap();
    assert_eq!(read, read_back());
    // `text` is a string in the schema: "42" stays "42" (checked above), and a missing
    // optional argument is still `None`.
    let read = call(
        &registry,
        "search",
        json!({"text": "x", "exact": false, "boost": 0}),
    )
    .await
    .unwrap();
    assert_eq!(read["limit"], Value::Null);
}

#[tokio::test]
async fn off_the_call_is_refused_with_the_field_named() {
    let registry = build(Some(false));
    let error = call(&registry, "search", as_strings()).await.unwrap_err();
    assert!(error.to_string().contains("field `limit`"), "{error}");
    let nested =
        json!({"text": "x", "exact": true, "boost": 1, "page": {"size": "10", "offsets": []}});
    let error = call(&registry, "search", nested.clone()).await.unwrap_err();
    assert!(error.to_string().contains("field `page.size`"), "{error}");
    let error = call(&registry, "typed", nested).await.unwrap_err();
    assert!(error.to_string().contains("page.size"), "{error}");
    let error = call(&registry, "raw", json!({"n": "7"})).await.unwrap_err();
    assert!(
        error.to_string().contains("field `n`: expected integer"),
        "{error}"
    );
    // Explicitly on is the default.
    let on = build(Some(true));
    assert!(call(&on, "search", as_strings()).await.is_ok());
}

#[tokio::test]
async fn strings_that_are_no_such_scalar_are_refused_as_they_came() {
    let registry = build(None);
    for (arguments, field) in [
        (json!({"text": "x", "exact": "yes", "boost": 1}), "exact"),
        (
            json!({"text": "x", "exact": true, "boost": 1, "limit": "-1"}),
            "limit",
        ),
        (
            json!({"text": "x", "exact": true, "boost": 1, "limit": "3.0"}),
            "limit",
        ),
        (json!({"text": "x", "exact": true, "boost": "NaN"}), "boost"),
    ] {
        let error = call(&registry, "search", arguments).await.unwrap_err();
        let message = error.to_string();
        assert!(message.contains(&format!("field `{field}`")), "{message}");
        assert!(message.contains("string"), "the value as sent: {message}");
    }
}

#[tokio::test]
async fn arguments_still_text_in_a_message_are_read_leniently_too() {
    let message = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "search", "arguments": as_strings()}
    })
    .to_string();
    let reply = build(None)
        .handle_mcp_text("s", &message)
        .await
        .expect("a reply");
    let reply: Value = serde_json::from_str(&reply).unwrap();
    assert_eq!(reply["result"]["structuredContent"], read_back(), "{reply}");
    let reply = build(Some(false))
        .handle_mcp_text("s", &message)
        .await
        .expect("a reply");
    let reply: Value = serde_json::from_str(&reply).unwrap();
    assert_eq!(reply["result"]["isError"], true, "{reply}");
}

#[tokio::test]
async fn a_call_through_layers_is_read_by_the_same_setting() {
    use mcp_registry::layer::layer_fn;
    let server = || Server::builder("s").tool(search::tool()).build().unwrap();
    let pass = || layer_fn(|request, next| next.run(request));
    let lenient = Registry::builder().server(server()).layer(pass()).build();
    let read = call(&lenient, "search", as_strings()).await.unwrap();
    assert_eq!(read, read_back());
    let strict = Registry::builder()
        .server(server())
        .layer(pass())
        .lenient_scalars(false)
        .build();
    let error = call(&strict, "search", as_strings()).await.unwrap_err();
    assert!(error.to_string().contains("field `limit`"), "{error}");
}

//! `#[mcp_tool]` tools called directly, through a `Registry` and through `handle_mcp_message`:
//! arguments read by name (from a value or from text), the errors that name a field, every
//! kind of return value, and blocking tools.

use crate::macro_tools;

use macro_tools::{
    Greeting, Point, answer, distance, greet, misc, ops, registry, schema_of, search, sum16, whoami,
};
use mcp_registry::{CallError, Json, Registry, Server, ToolContext, mcp_tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[tokio::test]
async fn functions_stay_callable_directly() {
    let Json(d) = distance(Point { x: 0.0, y: 0.0 }, Point { x: 3.0, y: 4.0 }, None).await;
    assert_eq!(d.value, 5.0);
    assert!(ops::div(1.0, 0.0).await.is_err());
    assert_eq!(greet("Ada".into(), None).await, "Hello, Ada!");
    let ctx = ToolContext::detached("whoami", "tests");
    assert_eq!(whoami(ctx.clone(), 2, ctx).await, "whoami@tests x2");
    assert_eq!(search("x".into(), Some(3)), "x 3");
}

#[tokio::test]
async fn calls_through_the_registry_read_arguments_by_name() {
    let registry = registry();
    let result = registry
        .call_tool_by_name(
            "distance",
            json!({"from": {"x": 0, "yPos": 0}, "to": {"x": 3, "yPos": 4}}),
        )
        .await
        .unwrap();
    assert_eq!(
        result.structured_content,
        Some(json!({"value": 5.0, "unit": "meters"}))
    );
    let text: Value = serde_json::from_str(result.first_text().unwrap()).unwrap();
    assert_eq!(
        text,
        json!({"value": 5.0, "unit": "meters"}),
        "a text copy of the structured content"
    );

    let feet = registry
        .call_tool_by_name(
            "distance",
            json!({"from": {"x": 0, "yPos": 0}, "to": {"x": 0.3048, "yPos": 0}, "unit": "feet"}),
        )
        .await
        .unwrap();
    assert_eq!(feet.structured_content.unwrap()["unit"], "feet");

    let result = registry
        .call_tool_by_name("whoami", json!({"times": 3}))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("whoami@macros-geometry x3"));

    let result = registry
        .call_tool_by_name("search", json!({"type": "book", "maxItems": 2}))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("book 2"));
}

#[tokio::test]
async fn a_missing_option_and_an_explicit_null_are_both_none() {
    let registry = registry();
    for args in [
        json!({"name": "Ada"}),
        json!({"name": "Ada", "greeting": null}),
    ] {
        let result = registry.call_tool_by_name("greet", args).await.unwrap();
        assert_eq!(result.first_text(), Some("Hello, Ada!"));
    }
    let result = registry
        .call_tool_by_name("greet", json!({"name": "Ada", "greeting": "Hi"}))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("Hi, Ada!"));
}

#[tokio::test]
async fn bad_arguments_name_the_field() {
    let registry = registry();
    let err = registry
        .call_tool_by_name("greet", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, CallError::InvalidArguments { message, .. } if message.contains("missing required field `name`")),
        "{err}"
    );
    let err = registry
        .call_tool_by_name(
            "distance",
            json!({"from": {"x": "zero", "yPos": 0}, "to": {"x": 3, "yPos": 4}}),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, CallError::InvalidArguments { message, .. } if message.contains("`from.x`")),
        "{err}"
    );
    assert!(err.into_call_tool_result().is_error());
}

#[tokio::test]
async fn an_err_result_is_a_tool_failure() {
    let registry = registry();
    let ok = registry
        .call_tool_by_name("divide", json!({"a": 1, "b": 4}))
        .await
        .unwrap();
    assert_eq!(ok.structured_content, Some(json!({"result": 0.25})));

    let err = registry
        .call_tool_by_name("divide", json!({"a": 1, "b": 0}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        CallError::ToolFailed {
            tool: "divide".into(),
            message: "division by zero".into()
        }
    );
    let result = err.into_call_tool_result();
    assert!(result.is_error());
    assert_eq!(result.first_text(), Some("division by zero"));

    let reply = registry
        .handle_mcp_message(
            "macros-geometry",
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                   "params": {"name": "divide", "arguments": {"a": 1, "b": 0}}}),
        )
        .await
        .expect("a request gets a reply");
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert_eq!(reply["result"]["content"][0]["text"], "division by zero");
}

#[tokio::test]
async fn every_kind_of_return_value_becomes_a_result() {
    let registry = registry();
    let call = |name: &'static str| {
        let registry = registry.clone();
        async move { registry.call_tool_by_name(name, json!({})).await.unwrap() }
    };
    assert!(call("nothing").await.content.is_empty());
    assert_eq!(call("answer").await.first_text(), Some("42"));
    assert_eq!(call("block").await.first_text(), Some("block"));
    let manual = call("manual").await;
    assert!(manual.is_error());
    assert_eq!(manual.first_text(), Some("made by hand"));
    assert_eq!(call("temperature").await.first_text(), Some("21.5 °C"));
    let anything = registry
        .call_tool_by_name("anything", json!({"value": [1, 2]}))
        .await
        .unwrap();
    assert_eq!(anything.first_text(), Some("[1,2]"));
}

#[tokio::test]
async fn user_types_can_be_provided_by_the_call() {
    let err = registry()
        .call_tool_by_name("host_greet", json!({"name": "Ada"}))
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::ToolFailed { .. }), "{err}");
    let registry = Registry::builder()
        .extension(Greeting("Ahoy"))
        .server(misc())
        .build();
    let result = registry
        .call_tool_by_name("host_greet", json!({"name": "Ada"}))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("Ahoy, Ada"));
}
#[tokio::test]
async fn a_tool_takes_up_to_sixteen_parameters_in_order() {
    let tool = sum16::tool();
    let schema = schema_of(&tool);
    let names: Vec<&str> = schema["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names.len(), 15, "the context is no property: {names:?}");
    assert!(!names.contains(&"ctx"));
    assert_eq!(schema["required"].as_array().map(Vec::len), Some(14));

    let registry = registry();
    let args: serde_json::Map<String, Value> = ('a'..='n')
        .enumerate()
        .map(|(i, c)| (c.to_string(), json!(i + 1)))
        .collect();
    let result = registry
        .call_tool_by_name("sum16", Value::Object(args.clone()))
        .await
        .expect("called");
    // 1 + 2 + ... + 14, and `o` defaulted to 100.
    assert_eq!(result.first_text(), Some("205 from sum16"));

    let mut wrong = args;
    wrong.insert("k".into(), json!("eleven"));
    let err = registry
        .call_tool_by_name("sum16", Value::Object(wrong))
        .await
        .expect_err("a string is no i64");
    assert!(err.to_string().contains("`k`"), "{err}");
}

/// A pair.
#[derive(Deserialize, JsonSchema)]
struct Pair {
    a: i64,
    b: u8,
}

/// A shape, tagged.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Shape {
    Square { side: f64 },
    Circle { r: f64 },
}

/// Echo borrowed-looking text and check shapes.
#[mcp_tool]
async fn shapes(
    label: std::borrow::Cow<'_, str>,
    other: std::borrow::Cow<'static, str>,
    pair: Option<Pair>,
    shape: Option<Shape>,
) -> String {
    let area = match shape {
        Some(Shape::Square { side }) => side * side,
        Some(Shape::Circle { r }) => 3.0 * r * r,
        None => 0.0,
    };
    format!(
        "{label} {other} {} {area}",
        pair.map_or(0, |p| p.a + i64::from(p.b))
    )
}

#[tokio::test]
async fn argument_errors_name_the_field_serde_refused() {
    let registry =
        Registry::from_servers([Server::new("shapes", None, vec![shapes::tool()]).unwrap()]);
    let call = |args: Value| {
        let registry = registry.clone();
        async move { registry.call_tool_by_name("shapes", args).await }
    };
    let ok = call(json!({"label": "a", "other": "b", "pair": {"a": 1, "b": 2}, "shape": {"type": "square", "side": 2.0}}))
        .await
        .expect("a valid call");
    assert_eq!(ok.first_text(), Some("a b 3 4"));

    let message = |err: CallError| match err {
        CallError::InvalidArguments { message, .. } => message,
        other => panic!("not an argument error: {other:?}"),
    };
    // The present field that is wrong, not the missing one.
    let err = call(json!({"label": "a", "other": "b", "pair": {"a": "bad"}}))
        .await
        .unwrap_err();
    assert!(message(err).starts_with("field `pair.a`: invalid type"));
    // 1.0 is no i64 for serde.
    let err = call(json!({"label": "a", "other": "b", "pair": {"a": 1.0, "b": 300}}))
        .await
        .unwrap_err();
    assert!(message(err).starts_with("field `pair.a`: invalid type: floating point"));
    // A missing field is named as missing.
    let err = call(json!({"label": "a", "other": "b", "pair": {"a": 1}}))
        .await
        .unwrap_err();
    assert_eq!(message(err), "field `pair.b`: missing field `b`");
    // The variant the tag names.
    let err = call(json!({"label": "a", "other": "b", "shape": {"type": "circle", "r": "x"}}))
        .await
        .unwrap_err();
    assert!(
        message(err).starts_with("field `shape.r`: invalid type"),
        "wrong variant followed"
    );
}

/// Blocks its thread until the test lets it go (a stand-in for blocking I/O).
static GATE: std::sync::Mutex<Option<std::sync::mpsc::Receiver<()>>> = std::sync::Mutex::new(None);

/// Waits, blocking its thread, for the test's signal.
#[mcp_tool(blocking)]
fn wait_for_gate() -> &'static str {
    let gate = GATE.lock().unwrap().take().expect("a gate");
    gate.recv().expect("the test's signal");
    "released"
}

/// Panics on the blocking pool.
#[mcp_tool(blocking)]
fn blocking_panic(message: String) -> String {
    panic!("{message}")
}

/// Regression: a tool that blocks its thread could not be interrupted by the timeout. With
/// `blocking` it runs on the blocking pool: the call times out on time while the work is
/// still blocked, and the runtime (one thread here) stays free for other calls.
#[tokio::test(flavor = "current_thread")]
async fn blocking_tools_time_out_while_their_thread_is_blocked() {
    let (release, gate) = std::sync::mpsc::channel();
    *GATE.lock().unwrap() = Some(gate);
    let server = Server::builder("slow")
        .tools([
            wait_for_gate::tool(),
            blocking_panic::tool(),
            answer::tool(),
        ])
        .build()
        .unwrap();
    let registry = Registry::builder()
        .default_timeout(std::time::Duration::from_millis(50))
        .server(server)
        .build();
    let err = registry
        .call_tool_by_name("wait_for_gate", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Timeout { .. }), "{err}");
    // The single runtime thread is not blocked: another call is served.
    let ok = registry
        .call_tool_by_name("answer", json!({}))
        .await
        .unwrap();
    assert_eq!(ok.first_text(), Some("42"));
    release.send(()).unwrap();

    let patient = mcp_registry::CallOptions::new().timeout(std::time::Duration::from_secs(60));
    let err = registry
        .call_tool_by_name("blocking_panic", json!({"message": "boom"}))
        .options(patient)
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::Panicked { ref message, .. } if message == "boom"),
        "{err}"
    );
}

/// A `#[mcp_tool]` function's parameters are read straight from the arguments' text on the
/// text path and from the parsed map on the value path: both give the same reply, success or
/// error, whatever the arguments hold (wrong types at the top and deep inside, missing and
/// `null` members, a member given twice, escaped names, members nobody reads).
#[tokio::test]
async fn parameters_read_from_text_answer_as_parameters_read_from_a_value() {
    let registry = registry();
    let arguments = [
        r#"{"from": {"x": 0, "yPos": 0}, "to": {"x": 3, "yPos": 4}}"#,
        r#"{"from": {"x": 0, "yPos": 0}, "to": {"x": 3, "yPos": 4}, "unit": "feet"}"#,
        r#"{"from": {"x": 0, "yPos": 0}, "to": {"x": 3, "yPos": 4}, "unit": null}"#,
        r#"{"from": {"x": 0, "yPos": 0}, "to": {"x": "3", "yPos": 4}}"#,
        r#"{"from": [0, 0], "to": {"x": 3, "yPos": 4}}"#,
        r#"{"from": {"x": 0, "yPos": 0}}"#,
        r#"{"from": {"x": 0, "yPos": 0}, "to": {"x": 3, "yPos": 4}, "unit": "miles"}"#,
        r#"{"from": {"x": 9, "yPos": 9}, "to": {"x": 3, "yPos": 4}, "from": {"x": 0, "yPos": 0}}"#,
        r#"{"fr\u006fm": {"x": 0, "yPos": 0}, "to": {"x": 3, "yPos": 4}, "extra": [1, {"a": 2}]}"#,
        r#"{}"#,
    ];
    for args in arguments {
        let text = format!(
            r#"{{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {{"name": "distance", "arguments": {args}}}}}"#
        );
        let message: Value = serde_json::from_str(&text).unwrap();
        let from_value = registry
            .handle_mcp_message("macros-geometry", message)
            .await
            .unwrap();
        let from_text: Value = serde_json::from_str(
            &registry
                .handle_mcp_text("macros-geometry", &text)
                .await
                .unwrap(),
        )
        .unwrap();
        assert_eq!(from_text, from_value, "arguments {args}");
    }
    // A parameter's own error names the field on both paths.
    let bad = registry
        .handle_mcp_text(
            "macros-geometry",
            r#"{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "distance", "arguments": {"from": {"x": 0, "yPos": 0}, "to": {"x": "three", "yPos": 4}}}}"#,
        )
        .await
        .unwrap();
    assert!(bad.contains("to.x"), "{bad}");
}

//! `#[mcp_tool]` and `server!` as a user sees them: the schemas they derive, the metadata
//! they carry, and how the tools behave when called directly, through a `Registry` and
//! through `handle_mcp_message`.

use std::sync::Arc;

use mcp_registry::schema::ObjectSchemaBuilder;
use mcp_registry::tool::param::ToolParam;
use mcp_registry::{
    CallError, CallToolResult, Content, IntoToolResult, Json, Registry, Server, ToolContext,
    ToolError, mcp_tool, server,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A point on the plane.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Point {
    /// Horizontal position.
    x: f64,
    /// Vertical position.
    #[serde(rename = "yPos")]
    y: f64,
}

/// A unit of length.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Meters,
    Feet,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Distance {
    /// The distance.
    value: f64,
    /// The unit of `value`.
    unit: &'static str,
}

/// Measure the distance between two points.
///
/// Straight line, no detours.
///
/// # Arguments
/// * `from` - the start point
/// * `to` - the end point
///
/// # Examples
/// ```
/// # Not a heading: a hidden line of a code example.
/// ```
#[mcp_tool(read_only, idempotent)]
async fn distance(from: Point, to: Point, unit: Option<Unit>) -> Json<Distance> {
    let meters = ((to.x - from.x).powi(2) + (to.y - from.y).powi(2)).sqrt();
    Json(match unit {
        Some(Unit::Feet) => Distance {
            value: meters / 0.3048,
            unit: "feet",
        },
        _ => Distance {
            value: meters,
            unit: "meters",
        },
    })
}

#[derive(Debug)]
struct DivisionByZero;

impl std::fmt::Display for DivisionByZero {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("division by zero")
    }
}

mod ops {
    use super::DivisionByZero;
    use mcp_registry::{Json, mcp_tool};

    /// Divide `a` by `b`.
    #[mcp_tool(name = "divide", title = "Division", destructive = false)]
    pub async fn div(a: f64, b: f64) -> Result<Json<f64>, DivisionByZero> {
        if b == 0.0 {
            Err(DivisionByZero)
        } else {
            Ok(Json(a / b))
        }
    }
}

/// Greet someone.
///
/// # Arguments
/// * `name` - who to greet;
///   a continuation line belongs to the same entry
/// * `greeting` - the word to use (default: Hello)
#[mcp_tool(description = "Say hello.", open_world = false)]
async fn greet(name: String, greeting: Option<String>) -> String {
    format!("{}, {name}!", greeting.as_deref().unwrap_or("Hello"))
}

type Ctx = ToolContext;

/// Report which tool and server ran.
#[mcp_tool]
async fn whoami(ctx: ToolContext, times: u32, _also: Ctx) -> String {
    format!("{}@{} x{times}", ctx.tool_name(), ctx.server_name())
}

/// A labelled tree.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

fn count(tree: &Tree) -> usize {
    1 + tree.children.iter().map(count).sum::<usize>()
}

/// Count the nodes of a tree.
#[mcp_tool]
async fn count_nodes(tree: Tree, extra: Option<Tree>) -> String {
    (count(&tree) + extra.as_ref().map_or(0, count)).to_string()
}

/// Search.
#[mcp_tool]
fn search(
    #[arg(description = "what to look for")] r#type: String,
    #[arg(rename = "maxItems")] max_items: Option<u32>,
) -> String {
    format!("{type} {}", max_items.unwrap_or(10), type = r#type)
}

/// Do nothing.
#[mcp_tool]
async fn nothing() {}

/// A static answer.
#[mcp_tool]
async fn answer() -> &'static str {
    "42"
}

/// A content block.
#[mcp_tool]
async fn block() -> Content {
    Content::text("block")
}

/// A hand-made result.
#[mcp_tool]
async fn manual() -> CallToolResult {
    CallToolResult::error("made by hand")
}

/// A user type made returnable through `IntoToolResult`.
struct Celsius(f64);

impl IntoToolResult for Celsius {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::text(format!("{:.1} °C", self.0)))
    }
}

/// The temperature.
#[mcp_tool]
async fn temperature() -> Celsius {
    Celsius(21.5)
}

/// A user type provided by the call, like `ToolContext`.
#[derive(Clone)]
struct Greeting(&'static str);

impl ToolParam for Greeting {
    fn describe(_: &mut ObjectSchemaBuilder, _: &str, _: Option<&str>) {}

    fn from_call(
        ctx: &ToolContext,
        _: &mut mcp_registry::tool::Arguments<'_>,
        _: &str,
    ) -> Result<Self, ToolError> {
        ctx.get::<Greeting>()
            .cloned()
            .ok_or_else(|| ToolError::failed("no greeting attached"))
    }
}

/// Greet with the host's greeting.
#[mcp_tool]
async fn host_greet(greeting: Greeting, name: String) -> String {
    format!("{}, {name}", greeting.0)
}

/// Accept anything.
#[mcp_tool]
async fn anything(value: Value) -> String {
    value.to_string()
}

/// Sum sixteen numbers (the most parameters a tool takes), the context among them.
#[mcp_tool]
#[allow(clippy::too_many_arguments)]
async fn sum16(
    a: i64,
    b: i64,
    c: i64,
    d: i64,
    e: i64,
    f: i64,
    g: i64,
    ctx: ToolContext,
    h: i64,
    i: i64,
    j: i64,
    k: i64,
    l: i64,
    m: i64,
    n: i64,
    o: Option<i64>,
) -> String {
    let sum = a + b + c + d + e + f + g + h + i + j + k + l + m + n + o.unwrap_or(100);
    format!("{sum} from {}", ctx.tool_name())
}

server!(
    name = "macros-geometry",
    version = "1.2.0",
    title = "Geometry",
    instructions = "Measure things.",
    tools = [distance, ops::div, greet, whoami, count_nodes, search],
    fn = pub geometry,
);

server!(name = "macros-misc", tools = [nothing, answer, block, manual, temperature, host_greet, anything, sum16], fn = misc);

server!(name = "macros-hidden", tools = [answer], fn = hidden, collect = false);

server!(name = "macros-plain", tools = [answer]);

fn registry() -> Registry {
    Registry::from_servers([geometry(), misc()])
}

fn schema_of(tool: &mcp_registry::Tool) -> &Value {
    &tool.descriptor().input_schema
}

fn assert_valid(schema: &Value, instance: &Value) {
    let validator = jsonschema::validator_for(schema).expect("the schema compiles");
    assert!(
        validator.is_valid(instance),
        "{instance} should match {schema}"
    );
}

fn assert_invalid(schema: &Value, instance: &Value) {
    let validator = jsonschema::validator_for(schema).expect("the schema compiles");
    assert!(
        !validator.is_valid(instance),
        "{instance} should not match {schema}"
    );
}

#[test]
fn schema_has_one_property_per_parameter_with_nested_docs_and_serde_renames() {
    let tool = distance::tool();
    let schema = schema_of(&tool);
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["from", "to"]));
    let props = schema["properties"].as_object().unwrap();
    assert_eq!(props.keys().collect::<Vec<_>>(), ["from", "to", "unit"]);
    assert_eq!(props["from"]["description"], "the start point");
    assert_eq!(props["to"]["description"], "the end point");
    assert_eq!(
        props["from"]["properties"]["x"]["description"],
        "Horizontal position."
    );
    assert_eq!(
        props["from"]["properties"]["yPos"]["description"],
        "Vertical position."
    );
    assert_eq!(props["from"]["required"], json!(["x", "yPos"]));
    // The type's own doc comment describes a parameter that `# Arguments` leaves out.
    assert_eq!(props["unit"]["description"], "A unit of length.");
    assert_eq!(props["unit"]["enum"], json!(["meters", "feet", null]));
    let text = schema.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$defs"),
        "inlined: {text}"
    );
    assert!(schema.get("$schema").is_none());

    assert_valid(
        schema,
        &json!({"from": {"x": 0, "yPos": 0}, "to": {"x": 3, "yPos": 4}}),
    );
    assert_valid(
        schema,
        &json!({"from": {"x": 0, "yPos": 0}, "to": {"x": 3, "yPos": 4}, "unit": "feet"}),
    );
    assert_valid(
        schema,
        &json!({"from": {"x": 0, "yPos": 0}, "to": {"x": 3, "yPos": 4}, "unit": null}),
    );
    assert_invalid(
        schema,
        &json!({"from": {"x": 0, "yPos": 0}, "to": {"x": 3, "yPos": 4}, "unit": "yards"}),
    );
    assert_invalid(
        schema,
        &json!({"from": {"x": 0, "y": 0}, "to": {"x": 3, "yPos": 4}}),
    );
    assert_invalid(schema, &json!({"to": {"x": 3, "yPos": 4}}));
}

#[test]
fn description_is_the_doc_text_before_the_first_heading() {
    let tool = distance::tool();
    assert_eq!(
        tool.descriptor().description.as_deref(),
        Some("Measure the distance between two points.\n\nStraight line, no detours.")
    );
    assert_eq!(
        ops::div::tool().descriptor().description.as_deref(),
        Some("Divide `a` by `b`.")
    );
}

#[test]
fn description_attribute_overrides_the_doc_comment_and_arguments_still_describe_parameters() {
    let tool = greet::tool();
    let d = tool.descriptor();
    assert_eq!(d.description.as_deref(), Some("Say hello."));
    let props = &d.input_schema["properties"];
    assert_eq!(
        props["name"]["description"],
        "who to greet; a continuation line belongs to the same entry"
    );
    assert_eq!(
        props["greeting"]["description"],
        "the word to use (default: Hello)"
    );
    assert_eq!(d.input_schema["required"], json!(["name"]));
}

#[test]
fn annotations_name_and_title_come_from_the_attribute() {
    let d = distance::tool().descriptor().clone();
    assert_eq!(d.name, "distance");
    assert_eq!(d.annotations.read_only_hint, Some(true));
    assert_eq!(d.annotations.idempotent_hint, Some(true));
    assert_eq!(d.annotations.destructive_hint, None);
    assert_eq!(d.annotations.open_world_hint, None);
    assert_eq!(d.title, None);

    let d = ops::div::tool().descriptor().clone();
    assert_eq!(d.name, "divide");
    assert_eq!(d.title.as_deref(), Some("Division"));
    assert_eq!(d.annotations.title.as_deref(), Some("Division"));
    assert_eq!(d.annotations.destructive_hint, Some(false));
    assert_eq!(d.annotations.read_only_hint, None);

    assert_eq!(
        greet::tool().descriptor().annotations.open_world_hint,
        Some(false)
    );
    let wire = serde_json::to_value(distance::tool().descriptor()).unwrap();
    assert_eq!(
        wire["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true})
    );
}

#[test]
fn json_results_advertise_an_output_schema_and_text_results_do_not() {
    let out = distance::tool()
        .descriptor()
        .output_schema
        .clone()
        .expect("Json<T> has one");
    assert_eq!(out["type"], "object");
    assert_eq!(out["properties"]["value"]["description"], "The distance.");
    assert_eq!(out["required"], json!(["value", "unit"]));
    // A non-object `T` is wrapped as {"result": ..}, also through `Result<Json<T>, E>`.
    let out = ops::div::tool()
        .descriptor()
        .output_schema
        .clone()
        .expect("Result<Json<T>, E> has one");
    assert_eq!(out["properties"]["result"]["type"], "number");
    assert!(greet::tool().descriptor().output_schema.is_none());
    assert!(nothing::tool().descriptor().output_schema.is_none());
}

#[test]
fn tool_is_built_once_and_shared() {
    let (a, b) = (distance::tool(), distance::tool());
    assert!(Arc::ptr_eq(
        &a.descriptor().input_schema,
        &b.descriptor().input_schema
    ));
    let in_server = geometry();
    let listed = in_server.tool("distance").unwrap();
    assert!(Arc::ptr_eq(
        &a.descriptor().input_schema,
        &listed.descriptor().input_schema
    ));
    assert!(
        geometry().ptr_eq(&in_server),
        "the server is built once too"
    );
}

#[test]
fn context_parameters_never_appear_in_the_schema() {
    let schema = schema_of(&whoami::tool()).clone();
    assert_eq!(
        schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["times"]
    );
    assert_eq!(schema["required"], json!(["times"]));
    let schema = schema_of(&host_greet::tool()).clone();
    assert_eq!(
        schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["name"]
    );
}

#[test]
fn recursive_types_keep_a_ref_into_root_defs() {
    let tool = count_nodes::tool();
    let schema = schema_of(&tool);
    // Inlined once; the recursion points into `$defs` at the root.
    assert_eq!(schema["properties"]["tree"]["type"], "object");
    assert_eq!(
        schema["properties"]["tree"]["properties"]["children"]["items"]["$ref"],
        "#/$defs/Tree"
    );
    assert_eq!(
        schema["$defs"]["Tree"]["properties"]["children"]["items"]["$ref"],
        "#/$defs/Tree"
    );
    assert_eq!(schema["required"], json!(["tree"]));
    let tree = json!({"label": "a", "children": [{"label": "b", "children": []}]});
    assert_valid(schema, &json!({ "tree": tree }));
    assert_valid(schema, &json!({ "tree": tree, "extra": null }));
    assert_invalid(
        schema,
        &json!({"tree": {"label": "a", "children": [{"label": 1, "children": []}]}}),
    );
}

#[test]
fn arg_attribute_describes_and_renames_and_raw_identifiers_lose_their_prefix() {
    let schema = schema_of(&search::tool()).clone();
    assert_eq!(
        schema["properties"]["type"]["description"],
        "what to look for"
    );
    assert_eq!(
        schema["properties"]["maxItems"]["type"],
        json!(["integer", "null"])
    );
    assert_eq!(schema["required"], json!(["type"]));
}

#[test]
fn parameters_accepting_null_are_optional() {
    let schema = schema_of(&anything::tool()).clone();
    assert!(schema.get("required").is_none(), "{schema}");
    assert!(
        schema_of(&nothing::tool())["properties"]
            .as_object()
            .unwrap()
            .is_empty()
    );
}

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
async fn tools_list_shows_the_server_metadata_and_tools() {
    let server: Server = geometry();
    assert_eq!(server.name(), "macros-geometry");
    assert_eq!(server.version(), "1.2.0");
    assert_eq!(server.title(), Some("Geometry"));
    assert_eq!(server.instructions(), Some("Measure things."));
    assert_eq!(
        server.tool_names().collect::<Vec<_>>(),
        [
            "count_nodes",
            "distance",
            "divide",
            "greet",
            "search",
            "whoami"
        ]
    );
    let reply = Registry::from_servers([server])
        .handle_mcp_message(
            "macros-geometry",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await
        .unwrap();
    let tools = reply["result"]["tools"].as_array().expect("a tool list");
    assert_eq!(tools.len(), 6);
    assert_eq!(tools[1]["name"], "distance");
    assert_eq!(tools[1]["inputSchema"]["required"], json!(["from", "to"]));
}

#[test]
fn servers_are_collected_unless_told_otherwise() {
    let registry = Registry::collected();
    let names = registry.server_names();
    for name in ["macros-geometry", "macros-misc", "macros-plain"] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }
    assert!(
        !names.iter().any(|n| n == "macros-hidden"),
        "collect = false: {names:?}"
    );
    assert_eq!(hidden().name(), "macros-hidden");
    // Without `version`, a server takes the version of the crate that defines it.
    let plain = registry.server("macros-plain").unwrap();
    assert_eq!(plain.version(), env!("CARGO_PKG_VERSION"));
    assert_eq!(plain.tool_names().collect::<Vec<_>>(), ["answer"]);
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

#[test]
fn a_tool_is_built_once_and_shared() {
    let (first, second) = (greet::tool(), greet::tool());
    assert!(std::ptr::eq(first.descriptor(), second.descriptor()));
    let from_server = geometry();
    let listed = from_server.tool("greet").expect("greet is in the server");
    assert!(std::ptr::eq(first.descriptor(), listed.descriptor()));
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

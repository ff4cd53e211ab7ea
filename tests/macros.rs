//! `#[mcp_tool]` and `server!` as a user sees them: the schemas they derive and the metadata
//! they carry. Calls are in `macros_calls.rs`.

use crate::macro_tools;

use std::sync::Arc;

use macro_tools::{
    anything, count_nodes, distance, geometry, greet, hidden, host_greet, nothing, ops, schema_of,
    search, whoami,
};
use mcp_registry::{Registry, Server};
use serde_json::{Value, json};

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
    let properties = |schema: &serde_json::Value| -> Vec<String> {
        schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    let schema = schema_of(&whoami::tool()).clone();
    assert_eq!(properties(&schema), ["times"]);
    assert_eq!(schema["required"], json!(["times"]));
    assert_eq!(properties(schema_of(&host_greet::tool())), ["name"]);
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

#[test]
fn a_tool_is_built_once_and_shared() {
    let (first, second) = (greet::tool(), greet::tool());
    assert!(std::ptr::eq(first.descriptor(), second.descriptor()));
    let from_server = geometry();
    let listed = from_server.tool("greet").expect("greet is in the server");
    assert!(std::ptr::eq(first.descriptor(), listed.descriptor()));
}

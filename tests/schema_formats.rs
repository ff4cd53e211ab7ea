//! Schemas every client accepts: no `format` outside what JSON Schema 2020-12 and the
//! TypeScript SDK's validator (Ajv with `ajv-formats`) both know, in any input, output or
//! elicitation schema, whatever number types a tool uses; unsigned integers keep `minimum: 0`.
//! (`.ci/e2e.sh` runs the SDK's own validator over a served listing:
//! `tests/e2e/sdk_schemas.mjs`.)

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::num::{NonZeroI64, NonZeroU8, NonZeroU32, NonZeroUsize};
use std::time::{Duration, SystemTime};

use mcp_registry::{Json, Registry, Tool, mcp_tool, server};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// JSON Schema 2020-12's format vocabulary as far as `ajv-formats` (which the TypeScript SDK
/// adds to its Ajv) knows it: stated here apart from the crate's own list, which must not say
/// more.
const ACCEPTED: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "uri-template",
    "uuid",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Every number type, nested in a struct, a list, a map and an option.
#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Widths {
    a: u8,
    b: u16,
    c: u32,
    d: u64,
    e: u128,
    f: usize,
    g: i8,
    h: i16,
    i: i32,
    j: i64,
    k: i128,
    l: isize,
    m: f32,
    n: f64,
    o: NonZeroU8,
    p: NonZeroU32,
    q: NonZeroUsize,
    r: NonZeroI64,
    s: Option<u64>,
    t: Vec<u32>,
    u: HashMap<String, u16>,
    v: BTreeMap<String, Option<f32>>,
    w: (u8, i64),
    x: Duration,
    y: SystemTime,
    z: [u64; 2],
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
enum Unit {
    Count(u32),
    Span { from: u64, to: u64 },
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Addresses {
    any: IpAddr,
    v4: Ipv4Addr,
    v6: Ipv6Addr,
    unit: Unit,
}

/// Every number type as a parameter.
#[mcp_tool]
#[allow(clippy::too_many_arguments)]
async fn measure(
    count: u32,
    size: usize,
    big: u64,
    offset: i32,
    ratio: f64,
    small: Option<u8>,
    widths: Widths,
    addresses: Addresses,
) -> Json<Widths> {
    let _ = (count, size, big, offset, ratio, small, addresses);
    Json(widths)
}

/// A bare number returned (wrapped as `{"result": ..}`).
#[mcp_tool]
async fn total(ids: Vec<u64>) -> Json<u64> {
    Json(ids.iter().sum())
}

server!(name = "widths", tools = [measure, total], fn = widths_server, collect = false);

/// The `format`s anywhere in `schema`, with where they are.
fn formats(schema: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "format"
                    && let Value::String(format) = value
                {
                    out.push((at.to_owned(), format.clone()));
                }
                formats(value, &format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                formats(item, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn unknown_formats(schema: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    formats(schema, "", &mut found);
    found.retain(|(_, format)| !ACCEPTED.contains(&format.as_str()));
    found
}

/// Every schema a client sees in the server's listing.
fn listed_schemas() -> Vec<(String, Value)> {
    let server = widths_server();
    let mut schemas = Vec::new();
    for name in ["measure", "total"] {
        let tool = server.tool(name).expect("listed");
        let descriptor = tool.descriptor();
        schemas.push((format!("{name} input"), (*descriptor.input_schema).clone()));
        let output = descriptor.output_schema.as_deref().expect("Json has one");
        schemas.push((format!("{name} output"), output.clone()));
    }
    schemas
}

#[test]
fn no_schema_has_a_format_outside_the_json_schema_vocabulary() {
    for (what, schema) in listed_schemas() {
        assert_eq!(unknown_formats(&schema), [], "{what}: {schema:#}");
    }
    for format in mcp_registry::schema::formats::KNOWN {
        assert!(ACCEPTED.contains(format), "the crate keeps {format}");
    }
}

#[test]
fn typed_tools_and_elicitation_forms_have_none_either() {
    let typed = Tool::builder("typed")
        .typed(|w: Widths| async move { Json(w) })
        .unwrap();
    let descriptor = typed.descriptor();
    assert_eq!(unknown_formats(&descriptor.input_schema), []);
    assert_eq!(
        unknown_formats(descriptor.output_schema.as_deref().unwrap()),
        []
    );
    #[derive(Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Form {
        copies: u32,
        scale: Option<f64>,
    }
    let form = mcp_registry::tool::elicitation_form::<Form>().unwrap();
    assert_eq!(
        form["properties"]["copies"],
        json!({"type": "integer", "minimum": 0, "maximum": u32::MAX})
    );
    assert_eq!(unknown_formats(&form), []);
}

#[test]
fn integers_keep_their_ranges() {
    let server = widths_server();
    let tool = server.tool("measure").unwrap();
    let input = &tool.descriptor().input_schema;
    let property = |name: &str| input["properties"][name].clone();
    assert_eq!(property("big"), json!({"type": "integer", "minimum": 0}));
    assert_eq!(property("size"), json!({"type": "integer", "minimum": 0}));
    assert_eq!(
        property("count"),
        json!({"type": "integer", "minimum": 0, "maximum": u32::MAX})
    );
    assert_eq!(
        property("offset"),
        json!({"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX})
    );
    assert_eq!(property("ratio"), json!({"type": "number"}));
    let widths = &input["properties"]["widths"]["properties"];
    assert_eq!(widths["o"]["minimum"], 1, "NonZeroU8 keeps its own minimum");
    assert_eq!(widths["a"]["maximum"], 255);
    let addresses = &input["properties"]["addresses"]["properties"];
    assert_eq!(addresses["v4"]["format"], "ipv4");
    assert!(
        addresses["any"].get("format").is_none(),
        "`ip` is no format"
    );
}

#[test]
fn the_ranges_refuse_what_the_types_cannot_hold() {
    let server = widths_server();
    let tool = server.tool("measure").unwrap();
    let input = &tool.descriptor().input_schema;
    for (name, bad, good) in [
        ("big", json!(-1), json!(0)),
        ("count", json!(u64::from(u32::MAX) + 1), json!(u32::MAX)),
        ("offset", json!(i64::from(i32::MIN) - 1), json!(i32::MIN)),
    ] {
        let property = &input["properties"][name];
        let validator = jsonschema::validator_for(property).unwrap();
        assert!(!validator.is_valid(&bad), "{name}: {bad} accepted");
        assert!(validator.is_valid(&good), "{name}: {good} refused");
    }
}

#[tokio::test]
async fn the_listing_on_the_wire_has_no_unknown_format() {
    let registry = Registry::builder().server(widths_server()).build();
    let reply = registry
        .handle_mcp_message(
            "widths",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await
        .expect("a reply");
    let tools = reply["result"]["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 2);
    assert_eq!(unknown_formats(&reply), []);
}

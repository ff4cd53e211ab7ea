//! The tools and servers the `#[mcp_tool]` and `server!` tests share (`tests/macros.rs`,
//! `tests/macros_calls.rs`): parameters of every kind, every kind of return value, and the
//! servers `macros-geometry`, `macros-misc`, `macros-hidden` (not collected) and
//! `macros-plain`.
// Each test file uses its own share of them.
#![allow(dead_code)]

use mcp_registry::schema::ObjectSchemaBuilder;
use mcp_registry::tool::param::ToolParam;
use mcp_registry::{
    CallToolResult, Content, IntoToolResult, Json, Registry, ToolContext, ToolError, mcp_tool,
    server,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A point on the plane.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Point {
    /// Horizontal position.
    pub x: f64,
    /// Vertical position.
    #[serde(rename = "yPos")]
    pub y: f64,
}

/// A unit of length.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Meters,
    Feet,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Distance {
    /// The distance.
    pub value: f64,
    /// The unit of `value`.
    pub unit: &'static str,
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
pub async fn distance(from: Point, to: Point, unit: Option<Unit>) -> Json<Distance> {
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
pub struct DivisionByZero;

impl std::fmt::Display for DivisionByZero {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("division by zero")
    }
}

pub mod ops {
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
pub async fn greet(name: String, greeting: Option<String>) -> String {
    format!("{}, {name}!", greeting.as_deref().unwrap_or("Hello"))
}

pub type Ctx = ToolContext;

/// Report which tool and server ran.
#[mcp_tool]
pub async fn whoami(ctx: ToolContext, times: u32, _also: Ctx) -> String {
    format!("{}@{} x{times}", ctx.tool_name(), ctx.server_name())
}

/// A labelled tree.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Tree {
    label: String,
    children: Vec<Tree>,
}

pub fn count(tree: &Tree) -> usize {
    1 + tree.children.iter().map(count).sum::<usize>()
}

/// Count the nodes of a tree.
#[mcp_tool]
pub async fn count_nodes(tree: Tree, extra: Option<Tree>) -> String {
    (count(&tree) + extra.as_ref().map_or(0, count)).to_string()
}

/// Search.
#[mcp_tool]
pub fn search(
    #[arg(description = "what to look for")] r#type: String,
    #[arg(rename = "maxItems")] max_items: Option<u32>,
) -> String {
    format!("{type} {}", max_items.unwrap_or(10), type = r#type)
}

/// Do nothing.
#[mcp_tool]
pub async fn nothing() {}

/// A static answer.
#[mcp_tool]
pub async fn answer() -> &'static str {
    "42"
}

/// A content block.
#[mcp_tool]
pub async fn block() -> Content {
    Content::text("block")
}

/// A hand-made result.
#[mcp_tool]
pub async fn manual() -> CallToolResult {
    CallToolResult::error("made by hand")
}

/// A user type made returnable through `IntoToolResult`.
pub struct Celsius(pub f64);

impl IntoToolResult for Celsius {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::text(format!("{:.1} °C", self.0)))
    }
}

/// The temperature.
#[mcp_tool]
pub async fn temperature() -> Celsius {
    Celsius(21.5)
}

/// A user type provided by the call, like `ToolContext`.
#[derive(Clone)]
pub struct Greeting(pub &'static str);

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
pub async fn host_greet(greeting: Greeting, name: String) -> String {
    format!("{}, {name}", greeting.0)
}

/// Accept anything.
#[mcp_tool]
pub async fn anything(value: Value) -> String {
    value.to_string()
}

/// Sum sixteen numbers (the most parameters a tool takes), the context among them.
#[mcp_tool]
#[allow(clippy::too_many_arguments)]
pub async fn sum16(
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

server!(name = "macros-misc", tools = [nothing, answer, block, manual, temperature, host_greet, anything, sum16], fn = pub misc);

server!(name = "macros-hidden", tools = [answer], fn = pub hidden, collect = false);

server!(name = "macros-plain", tools = [answer]);

pub fn registry() -> Registry {
    Registry::from_servers([geometry(), misc()])
}

pub fn schema_of(tool: &mcp_registry::Tool) -> &Value {
    &tool.descriptor().input_schema
}

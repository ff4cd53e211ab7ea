//! The one schema profile every tool uses.
//!
//! schemars 1.x, JSON Schema draft 2020-12, subschemas inlined (no `$ref`/`$defs`, which many
//! MCP clients cannot resolve), root `type: "object"`, no root `title` or `$schema` (MCP
//! defaults input schemas to 2020-12). A recursive type cannot be inlined: it keeps a `$ref`
//! into `$defs` at the root, which is valid 2020-12 and what the 2026-07-28 spec allows.
//! No `format` outside the ones every client's validator knows ([`formats::KNOWN`]):
//! schemars's `uint64`, `int32`, `double`, ... are taken out, an integer keeping its range
//! (`minimum: 0` for an unsigned one).
//!
//! Schemas are generated once per Rust type and cached for the life of the process, so building
//! many tools over the same types, or listing tools, never regenerates a schema.

pub(crate) mod coerce;
pub mod formats;
pub(crate) mod locate;

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, RwLock};

use crate::sync::RwLockExt;
use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value};

/// Why a type cannot serve as a tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the arguments type `{type_name}` does not have an object schema (root type is {found}); tool arguments are always a JSON object, so use a struct or a map"
)]
pub struct SchemaError {
    /// The Rust type.
    pub type_name: &'static str,
    /// What its root schema declares.
    pub found: String,
}

#[derive(Clone)]
struct Cached {
    schema: Arc<Value>,
    output: Arc<OutputSchema>,
}

static CACHE: LazyLock<RwLock<HashMap<TypeId, Cached>>> = LazyLock::new(Default::default);

/// The project's generator settings.
pub fn settings() -> SchemaSettings {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
        })
        .with_transform(formats::transform())
}

/// A fresh generator with the project's settings (for building object schemas property by
/// property, as `#[mcp_tool]` does).
pub fn generator() -> SchemaGenerator {
    settings().into_generator()
}

fn generate<T: JsonSchema + ?Sized>() -> Value {
    let mut value = generator().into_root_schema_for::<T>().to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        map.remove("title");
    }
    value
}

fn cached<T: JsonSchema + ?Sized + 'static>() -> Cached {
    let id = TypeId::of::<T>();
    // A poisoned lock only means another thread panicked mid-insert of a complete value.
    if let Some(c) = CACHE.read_unpoisoned().get(&id) {
        return c.clone();
    }
    let schema = Arc::new(generate::<T>());
    let output = Arc::new(OutputSchema::from_schema(&schema));
    let entry = Cached { schema, output };
    CACHE.write_unpoisoned().entry(id).or_insert(entry).clone()
}

/// The schema of `T` under the project's profile (cached).
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Point { x: f64, y: f64 }
/// let s = mcp_registry::schema::schema_for::<Point>();
/// assert_eq!(s["type"], "object");
/// assert!(s.get("$schema").is_none());
/// ```
pub fn schema_for<T: JsonSchema + ?Sized + 'static>() -> Arc<Value> {
    cached::<T>().schema
}

/// The schema of `T` as a tool input schema: it must be an object schema.
pub fn input_schema_for<T: JsonSchema + ?Sized + 'static>() -> Result<Arc<Value>, SchemaError> {
    let schema = schema_for::<T>();
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(schema),
        other => Err(SchemaError {
            type_name: std::any::type_name::<T>(),
            found: other.map_or_else(|| "unspecified".to_owned(), Value::to_string),
        }),
    }
}

/// How a structured return type appears on the wire.
///
/// MCP requires an object at the root of `outputSchema` and (before 2026-07-28) of
/// `structuredContent`. A type whose schema is an object is sent as is; any other type
/// (a number, a list, an enum) is wrapped as `{"result": value}` and its schema likewise.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSchema {
    /// The advertised `outputSchema`.
    pub schema: Arc<Value>,
    /// Whether values are wrapped as `{"result": value}`.
    pub wrapped: bool,
}

impl OutputSchema {
    fn from_schema(schema: &Arc<Value>) -> Self {
        if schema.get("type").and_then(Value::as_str) == Some("object") {
            return OutputSchema {
                schema: schema.clone(),
                wrapped: false,
            };
        }
        let mut inner = (**schema).clone();
        let defs = inner.as_object_mut().and_then(|m| m.remove("$defs"));
        let mut root = serde_json::json!({
            "type": "object",
            "properties": { "result": inner },
            "required": ["result"],
        });
        if let (Some(defs), Value::Object(m)) = (defs, &mut root) {
            m.insert("$defs".to_owned(), defs);
        }
        OutputSchema {
            schema: Arc::new(root),
            wrapped: true,
        }
    }
}

/// The output schema of `T` (cached).
pub fn output_schema_for<T: JsonSchema + ?Sized + 'static>() -> Arc<OutputSchema> {
    cached::<T>().output
}

/// Builds an object schema one property at a time, sharing one generator so that recursive
/// types referenced by several properties end up in a single root `$defs`.
///
/// ```
/// use mcp_registry::schema::ObjectSchemaBuilder;
/// let mut b = ObjectSchemaBuilder::new();
/// b.property::<i64>("a", Some("left operand"), true);
/// b.property::<Option<i64>>("b", None, false);
/// let s = b.build();
/// assert_eq!(s["properties"]["a"]["description"], "left operand");
/// assert_eq!(s["required"], serde_json::json!(["a"]));
/// ```
pub struct ObjectSchemaBuilder {
    generator: SchemaGenerator,
    properties: Map<String, Value>,
    required: Vec<Value>,
}

impl Default for ObjectSchemaBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ObjectSchemaBuilder {
    /// An empty object schema.
    pub fn new() -> Self {
        ObjectSchemaBuilder {
            generator: generator(),
            properties: Map::new(),
            required: Vec::new(),
        }
    }

    /// Adds property `name` of type `T`.
    pub fn property<T: JsonSchema + ?Sized>(
        &mut self,
        name: &str,
        description: Option<&str>,
        required: bool,
    ) -> &mut Self {
        let schema = self.generator.subschema_for::<T>().to_value();
        self.property_schema(name, description, required, schema)
    }

    /// [`property`](Self::property) once the schema is made: not generic, so compiled once.
    fn property_schema(
        &mut self,
        name: &str,
        description: Option<&str>,
        required: bool,
        mut schema: Value,
    ) -> &mut Self {
        // `subschema_for` leaves the generator's transforms to its caller.
        formats::apply(&mut schema);
        if let (Some(d), Value::Object(m)) = (description, &mut schema) {
            // A `$ref`-only schema keeps its description beside the reference (valid 2020-12).
            m.insert("description".to_owned(), Value::from(d));
        } else if let (Some(d), Value::Bool(true)) = (description, &schema) {
            schema = serde_json::json!({ "description": d });
        }
        self.properties.insert(name.to_owned(), schema);
        if required {
            self.required.push(Value::from(name));
        }
        self
    }

    /// The finished schema.
    pub fn build(mut self) -> Value {
        let mut root = Map::new();
        root.insert("type".to_owned(), Value::from("object"));
        root.insert("properties".to_owned(), Value::Object(self.properties));
        if !self.required.is_empty() {
            root.insert("required".to_owned(), Value::Array(self.required));
        }
        let defs = self.generator.take_definitions(true);
        if !defs.is_empty() {
            root.insert("$defs".to_owned(), Value::Object(defs));
        }
        Value::Object(root)
    }
}

/// A one-property object schema (`value`) of `T`, built the way `#[mcp_tool]` describes a
/// parameter (sharing its generic code), for locating what in an argument does not fit.
pub(crate) fn property_schema<T: JsonSchema + ?Sized>() -> Value {
    let mut builder = ObjectSchemaBuilder::new();
    builder.property::<T>("value", None, false);
    builder.build()
}

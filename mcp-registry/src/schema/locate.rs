//! Where a value departs from a schema: used to name the offending field when arguments fail
//! to deserialize, without a path-tracking deserializer (which would compile every argument
//! type's `Deserialize` impl a second time).
//!
//! This is not a validator: it follows the parts of JSON Schema that this crate's profile
//! produces (`type`, `properties`, `required`, `additionalProperties: false`, `items`,
//! `prefixItems`, `enum`, `const`, `anyOf`/`oneOf`/`allOf`, `minimum`/`maximum`, and `$ref`
//! into the root's `$defs`) far enough to find the first place a value does not fit.

use serde_json::{Map, Value};

/// Nesting beyond which the search gives up (a `$ref` cycle, or a value deeper than any
/// real argument).
const MAX_DEPTH: usize = 128;

/// One step into a value.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// How a value departs from a schema at the place [`mismatch`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Departure {
    /// A required member is missing (the path ends with its name).
    Missing,
    /// A `const` or `enum` does not match: at depth one, an enum's tag.
    Value,
    /// The value is of another JSON type than the schema's.
    Type,
    /// Anything else: a range, an unknown member, no variant of several that fit.
    Other,
}

/// The path within `value` where it first departs from `schema` (resolving `$ref` against
/// `root`), written `a.b[2].c` (`""` when `value` itself does not fit), and how it departs;
/// `None` when no departure is found.
pub(crate) fn mismatch(root: &Value, schema: &Value, value: &Value) -> Option<(String, Departure)> {
    let found = find(root, schema, value, 0)?;
    let mut out = String::new();
    for step in found.steps.iter().rev() {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    Some((out, found.departure))
}

/// A departure: the steps to it, innermost first, and its kind.
struct Found {
    steps: Vec<Step>,
    departure: Departure,
}

impl Found {
    fn here(departure: Departure) -> Option<Found> {
        Some(Found {
            steps: Vec::new(),
            departure,
        })
    }

    fn within(mut self, step: Step) -> Found {
        self.steps.push(step);
        self
    }

    /// Whether the branch of an `anyOf`/`oneOf` that failed this way was meant for the value
    /// at all: not when the value has another type, or an enum's tag names another variant.
    fn applies(&self) -> bool {
        !matches!(
            (self.steps.len(), self.departure),
            (0, Departure::Type) | (1, Departure::Value)
        )
    }
}

/// The first departure of `value` from `schema`, or `None` when it fits. Members are checked
/// before missing ones, in the order serde reads them.
fn find(root: &Value, schema: &Value, value: &Value, depth: usize) -> Option<Found> {
    if depth > MAX_DEPTH {
        return None;
    }
    let schema = match schema {
        Value::Bool(false) => return Found::here(Departure::Other),
        Value::Object(schema) => schema,
        _ => return None,
    };
    if let Some(Value::String(reference)) = schema.get("$ref")
        && let Some(target) = resolve(root, reference)
        && let Some(found) = find(root, target, value, depth + 1)
    {
        return Some(found);
    }
    if let Some(Value::Array(all)) = schema.get("allOf") {
        for branch in all {
            if let Some(found) = find(root, branch, value, depth + 1) {
                return Some(found);
            }
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key)
            && let Some(found) = any_of(root, branches, value, depth)
        {
            return Some(found);
        }
    }
    if !type_fits(schema.get("type"), value) {
        return Found::here(Departure::Type);
    }
    if schema.get("const").is_some_and(|c| c != value)
        || matches!(schema.get("enum"), Some(Value::Array(e)) if !e.contains(value))
    {
        return Found::here(Departure::Value);
    }
    if !range_fits(schema, value) {
        return Found::here(Departure::Other);
    }
    match value {
        Value::Object(members) => object(root, schema, members, depth),
        Value::Array(elements) => array(root, schema, elements, depth),
        _ => None,
    }
}

/// The departure from a choice of schemas: none when a branch fits; the branch's own when
/// exactly one branch was meant for the value; otherwise at the value itself.
fn any_of(root: &Value, branches: &[Value], value: &Value, depth: usize) -> Option<Found> {
    let mut applicable = Vec::new();
    let mut first = None;
    for branch in branches {
        let found = find(root, branch, value, depth + 1)?;
        if found.applies() {
            applicable.push(found);
        } else if first.is_none() {
            first = Some(found);
        }
    }
    match applicable.len() {
        1 => applicable.pop(),
        0 => first.or_else(|| Found::here(Departure::Other)),
        _ => Found::here(Departure::Other),
    }
}

fn object(
    root: &Value,
    schema: &Map<String, Value>,
    members: &Map<String, Value>,
    depth: usize,
) -> Option<Found> {
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, member) in members {
        let member_schema = match properties.and_then(|p| p.get(name)) {
            Some(s) => s,
            None => match schema.get("additionalProperties") {
                Some(additional) => additional,
                None => continue,
            },
        };
        if let Some(found) = find(root, member_schema, member, depth + 1) {
            return Some(found.within(Step::Key(name.clone())));
        }
    }
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !members.contains_key(name) {
                return Some(Found {
                    steps: vec![Step::Key(name.to_owned())],
                    departure: Departure::Missing,
                });
            }
        }
    }
    None
}

fn array(
    root: &Value,
    schema: &Map<String, Value>,
    elements: &[Value],
    depth: usize,
) -> Option<Found> {
    let prefix = schema
        .get("prefixItems")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for (i, element) in elements.iter().enumerate() {
        let element_schema = match prefix.get(i) {
            Some(s) => s,
            None => match schema.get("items") {
                Some(items) => items,
                None => continue,
            },
        };
        if let Some(found) = find(root, element_schema, element, depth + 1) {
            return Some(found.within(Step::Index(i)));
        }
    }
    let too_few = schema
        .get("minItems")
        .and_then(Value::as_u64)
        .is_some_and(|min| (elements.len() as u64) < min);
    let too_many = schema
        .get("maxItems")
        .and_then(Value::as_u64)
        .is_some_and(|max| (elements.len() as u64) > max);
    if too_few || too_many {
        return Found::here(Departure::Other);
    }
    None
}

/// `#/$defs/Name` (or `#/definitions/Name`) within `root`.
pub(crate) fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

fn type_fits(expected: Option<&Value>, value: &Value) -> bool {
    match expected {
        None => true,
        Some(Value::String(t)) => is_type(t, value),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .any(|t| is_type(t, value)),
        Some(_) => true,
    }
}

/// Whether `value` is of the JSON Schema type `expected` (unknown types fit). The one type
/// predicate of the crate, for `#[mcp_tool]` arguments and raw-schema tools alike.
pub(crate) fn is_type(expected: &str, value: &Value) -> bool {
    match expected {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        // As serde reads integers: `1.0` is not one (JSON Schema would say it is).
        "integer" => value.is_i64() || value.is_u64(),
        _ => true,
    }
}

fn range_fits(schema: &Map<String, Value>, value: &Value) -> bool {
    let Some(n) = value.as_f64() else {
        return true;
    };
    let below = |key: &str| {
        schema
            .get(key)
            .and_then(Value::as_f64)
            .is_some_and(|limit| n < limit)
    };
    let above = |key: &str| {
        schema
            .get(key)
            .and_then(Value::as_f64)
            .is_some_and(|limit| n > limit)
    };
    !(below("minimum") || above("maximum"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Departure, mismatch};

    fn at(schema: serde_json::Value, value: serde_json::Value) -> Option<String> {
        mismatch(&schema, &schema, &value).map(|(path, _)| path)
    }

    #[test]
    fn a_fitting_value_has_no_mismatch() {
        let schema =
            json!({"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]});
        assert_eq!(at(schema, json!({"x": 1.5})), None);
    }

    #[test]
    fn the_path_names_the_innermost_member_that_does_not_fit() {
        let schema = json!({
            "type": "object",
            "properties": {
                "from": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            }
        });
        assert_eq!(
            at(schema.clone(), json!({"from": {"x": "one"}})).as_deref(),
            Some("from.x")
        );
        let missing = mismatch(&schema, &schema, &json!({"from": {}}));
        assert_eq!(missing, Some(("from.x".to_owned(), Departure::Missing)));
        assert_eq!(
            at(schema.clone(), json!({"tags": ["a", 2]})).as_deref(),
            Some("tags[1]")
        );
        assert_eq!(at(schema, json!("nope")).as_deref(), Some(""));
    }

    #[test]
    fn present_members_are_checked_before_missing_ones_as_serde_does() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        });
        assert_eq!(at(schema, json!({"a": "bad"})).as_deref(), Some("a"));
    }

    #[test]
    fn integers_are_read_as_serde_reads_them() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert_eq!(at(schema, json!({"n": 1.0})).as_deref(), Some("n"));
    }

    #[test]
    fn options_refs_enums_and_ranges_are_followed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "p": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]},
                "unit": {"type": "string", "enum": ["m", "km"]},
                "small": {"type": "integer", "minimum": 0, "maximum": 255}
            },
            "$defs": {"P": {"type": "object", "properties": {"y": {"type": "integer"}}}}
        });
        assert_eq!(at(schema.clone(), json!({"p": null})), None);
        assert_eq!(
            at(schema.clone(), json!({"p": {"y": 1.5}})).as_deref(),
            Some("p.y")
        );
        assert_eq!(
            at(schema.clone(), json!({"unit": "mile"})).as_deref(),
            Some("unit")
        );
        assert_eq!(at(schema, json!({"small": 256})).as_deref(), Some("small"));
    }

    #[test]
    fn a_tagged_enum_is_followed_into_the_variant_its_tag_names() {
        let schema = json!({"oneOf": [
            {"type": "object", "properties": {"type": {"const": "square"}, "side": {"type": "number"}}, "required": ["type", "side"]},
            {"type": "object", "properties": {"type": {"const": "circle"}, "r": {"type": "number"}}, "required": ["type", "r"]}
        ]});
        assert_eq!(
            at(schema.clone(), json!({"type": "circle", "r": "x"})).as_deref(),
            Some("r")
        );
        assert_eq!(
            at(schema, json!({"type": "triangle"})).as_deref(),
            Some("type")
        );
    }

    #[test]
    fn a_value_several_variants_could_be_is_reported_where_it_stands() {
        let schema = json!({"anyOf": [
            {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
            {"type": "object", "properties": {"y": {"type": "string"}}, "required": ["y"]}
        ]});
        assert_eq!(at(schema, json!({"x": "s"})).as_deref(), Some(""));
    }

    #[test]
    fn recursive_schemas_stop_at_the_depth_limit() {
        let schema = json!({"$ref": "#"});
        assert_eq!(at(schema, json!(1)), None);
    }
}

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

/// The path within `value` where it first departs from `schema` (resolving `$ref` against
/// `root`), written `a.b[2].c`; `Some("")` when `value` itself does not fit, `None` when no
/// departure is found.
pub(crate) fn mismatch(root: &Value, schema: &Value, value: &Value) -> Option<String> {
    let steps = find(root, schema, value, 0)?;
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&k);
            }
            Step::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    Some(out)
}

/// The steps to the first departure (innermost last), or `None` when `value` fits.
fn find(root: &Value, schema: &Value, value: &Value, depth: usize) -> Option<Vec<Step>> {
    if depth > MAX_DEPTH {
        return None;
    }
    let schema = match schema {
        Value::Bool(false) => return Some(Vec::new()),
        Value::Object(schema) => schema,
        _ => return None,
    };
    if let Some(Value::String(reference)) = schema.get("$ref")
        && let Some(target) = resolve(root, reference)
        && let Some(steps) = find(root, target, value, depth + 1)
    {
        return Some(steps);
    }
    if let Some(Value::Array(all)) = schema.get("allOf") {
        for branch in all {
            if let Some(steps) = find(root, branch, value, depth + 1) {
                return Some(steps);
            }
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            // The value fits when a branch does; otherwise the branch it got furthest into
            // says best what is wrong.
            let mut deepest: Option<Vec<Step>> = None;
            for branch in branches {
                match find(root, branch, value, depth + 1) {
                    None => {
                        deepest = None;
                        break;
                    }
                    Some(steps) => {
                        if deepest.as_ref().is_none_or(|d| steps.len() > d.len()) {
                            deepest = Some(steps);
                        }
                    }
                }
            }
            if deepest.is_some() {
                return deepest;
            }
        }
    }
    if !type_fits(schema.get("type"), value)
        || schema.get("const").is_some_and(|c| c != value)
        || matches!(schema.get("enum"), Some(Value::Array(e)) if !e.contains(value))
        || !range_fits(schema, value)
    {
        return Some(Vec::new());
    }
    match value {
        Value::Object(members) => object(root, schema, members, depth),
        Value::Array(elements) => array(root, schema, elements, depth),
        _ => None,
    }
}

fn object(
    root: &Value,
    schema: &Map<String, Value>,
    members: &Map<String, Value>,
    depth: usize,
) -> Option<Vec<Step>> {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(Value::Array(required)) = schema.get("required") {
        for name in required.iter().filter_map(Value::as_str) {
            if !members.contains_key(name) {
                return Some(vec![Step::Key(name.to_owned())]);
            }
        }
    }
    for (name, member) in members {
        let member_schema = match properties.and_then(|p| p.get(name)) {
            Some(s) => s,
            None => match schema.get("additionalProperties") {
                Some(additional) => additional,
                None => continue,
            },
        };
        if let Some(mut steps) = find(root, member_schema, member, depth + 1) {
            steps.insert(0, Step::Key(name.clone()));
            return Some(steps);
        }
    }
    None
}

fn array(
    root: &Value,
    schema: &Map<String, Value>,
    elements: &[Value],
    depth: usize,
) -> Option<Vec<Step>> {
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
        if let Some(mut steps) = find(root, element_schema, element, depth + 1) {
            steps.insert(0, Step::Index(i));
            return Some(steps);
        }
    }
    if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
        && (elements.len() as u64) < min
    {
        return Some(Vec::new());
    }
    if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
        && (elements.len() as u64) > max
    {
        return Some(Vec::new());
    }
    None
}

/// `#/$defs/Name` (or `#/definitions/Name`) within `root`.
fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
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

fn is_type(expected: &str, value: &Value) -> bool {
    match expected {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
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

    use super::mismatch;

    fn at(schema: serde_json::Value, value: serde_json::Value) -> Option<String> {
        mismatch(&schema, &schema, &value)
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
        assert_eq!(
            at(schema.clone(), json!({"from": {}})).as_deref(),
            Some("from.x")
        );
        assert_eq!(
            at(schema.clone(), json!({"tags": ["a", 2]})).as_deref(),
            Some("tags[1]")
        );
        assert_eq!(at(schema, json!("nope")).as_deref(), Some(""));
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
    fn recursive_schemas_stop_at_the_depth_limit() {
        let schema = json!({"$ref": "#"});
        assert_eq!(at(schema, json!(1)), None);
    }
}

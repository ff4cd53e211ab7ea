//! Scalars sent as strings, read as what the schema says: `"3"` where it says `integer` or
//! `number`, `"true"` where it says `boolean`. The Inspector's CLI sends every argument as a
//! string, and models sometimes do; the registry reads them this way unless
//! [`RegistryBuilder::lenient_scalars`](crate::RegistryBuilder::lenient_scalars) is off.
//!
//! Only tried once a value failed to deserialize, so a well-typed call pays nothing. The walk
//! follows the same parts of JSON Schema as [`super::locate`] (`properties`,
//! `additionalProperties`, `items`, `prefixItems`, `anyOf`/`oneOf`/`allOf`, `$ref` into the
//! root): a string is read as a scalar only where the schema has no place for a string.

use serde_json::{Map, Number, Value};

use super::locate::{mismatch, resolve};

/// Nesting beyond which the walk gives up (a `$ref` cycle, or a value deeper than any real
/// argument).
const MAX_DEPTH: usize = 128;

/// Replaces each string in `value` that `schema` (its `$ref`s resolved against `root`) wants
/// as a number, integer or boolean by that scalar, when it reads as one; whether anything
/// changed.
pub(crate) fn scalars(root: &Value, schema: &Value, value: &mut Value) -> bool {
    coerce(root, schema, value, 0)
}

fn coerce(root: &Value, schema: &Value, value: &mut Value, depth: usize) -> bool {
    let Value::Object(schema) = schema else {
        return false;
    };
    if depth > MAX_DEPTH {
        return false;
    }
    let mut changed = false;
    if let Some(Value::String(reference)) = schema.get("$ref")
        && let Some(target) = resolve(root, reference)
    {
        changed |= coerce(root, target, value, depth + 1);
    }
    if let Some(Value::Array(all)) = schema.get("allOf") {
        for branch in all {
            changed |= coerce(root, branch, value, depth + 1);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            changed |= choice(root, branches, value, depth);
        }
    }
    changed
        | match value {
            Value::String(text) => match scalar(schema.get("type"), text) {
                Some(scalar) => {
                    *value = scalar;
                    true
                }
                None => false,
            },
            Value::Object(members) => object(root, schema, members, depth),
            Value::Array(elements) => array(root, schema, elements, depth),
            _ => false,
        }
}

/// A choice of schemas: a value that fits one of them as it is stays as it is; otherwise the
/// first branch that reads something in it wins.
fn choice(root: &Value, branches: &[Value], value: &mut Value, depth: usize) -> bool {
    if branches
        .iter()
        .any(|branch| mismatch(root, branch, value).is_none())
    {
        return false;
    }
    branches
        .iter()
        .any(|branch| coerce(root, branch, value, depth + 1))
}

fn object(
    root: &Value,
    schema: &Map<String, Value>,
    members: &mut Map<String, Value>,
    depth: usize,
) -> bool {
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut changed = false;
    for (name, member) in members.iter_mut() {
        let member_schema = match properties.and_then(|p| p.get(name)) {
            Some(s) => s,
            None => match schema.get("additionalProperties") {
                Some(additional) => additional,
                None => continue,
            },
        };
        changed |= coerce(root, member_schema, member, depth + 1);
    }
    changed
}

fn array(root: &Value, schema: &Map<String, Value>, elements: &mut [Value], depth: usize) -> bool {
    let prefix = schema
        .get("prefixItems")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut changed = false;
    for (i, element) in elements.iter_mut().enumerate() {
        let element_schema = match prefix.get(i) {
            Some(s) => s,
            None => match schema.get("items") {
                Some(items) => items,
                None => continue,
            },
        };
        changed |= coerce(root, element_schema, element, depth + 1);
    }
    changed
}

/// `text` as the scalar the schema's `type` wants, unless it takes strings (or says nothing).
fn scalar(expected: Option<&Value>, text: &str) -> Option<Value> {
    let types: Vec<&str> = match expected? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(types) => types.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    if types.contains(&"string") {
        return None;
    }
    types.iter().find_map(|t| match *t {
        "integer" => integer(text).map(Value::Number),
        "number" => integer(text)
            .or_else(|| text.parse::<f64>().ok().and_then(Number::from_f64))
            .map(Value::Number),
        "boolean" => match text {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        _ => None,
    })
}

/// `text` as a whole number, as JSON writes one (`-3`, `42`; not `3.0`, ` 3` or `0x3`).
fn integer(text: &str) -> Option<Number> {
    match text.parse::<i64>() {
        Ok(n) => Some(n.into()),
        Err(_) => text.parse::<u64>().ok().map(Number::from),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::scalars;

    fn read(schema: Value, mut value: Value) -> (bool, Value) {
        let changed = scalars(&schema, &schema, &mut value);
        (changed, value)
    }

    #[test]
    fn strings_become_the_scalars_the_schema_wants() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "x": {"type": ["number", "null"]},
                "on": {"type": "boolean"},
                "name": {"type": "string"},
                "p": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]},
                "list": {"type": "array", "items": {"type": "integer"}},
                "pair": {"type": "array", "prefixItems": [{"type": "boolean"}, {"type": "string"}]},
                "map": {"type": "object", "additionalProperties": {"type": "number"}}
            },
            "$defs": {"P": {"type": "object", "properties": {"y": {"type": "integer"}}}}
        });
        let (changed, value) = read(
            schema,
            json!({
                "n": "-3", "x": "2.5", "on": "true", "name": "7", "p": {"y": "18446744073709551615"},
                "list": ["1", 2], "pair": ["false", "true"], "map": {"a": "1e3"}
            }),
        );
        assert!(changed);
        assert_eq!(
            value,
            json!({
                "n": -3, "x": 2.5, "on": true, "name": "7", "p": {"y": u64::MAX},
                "list": [1, 2], "pair": [false, "true"], "map": {"a": 1000.0}
            })
        );
    }

    #[test]
    fn what_does_not_read_as_the_scalar_stays_a_string() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "x": {"type": "number"}, "on": {"type": "boolean"}
        }});
        let value = json!({"n": "3.0", "x": "NaN", "on": "yes"});
        assert_eq!(read(schema, value.clone()), (false, value));
    }

    #[test]
    fn a_choice_that_takes_the_string_as_it_is_keeps_it() {
        let schema = json!({"anyOf": [{"type": "integer"}, {"type": "string"}]});
        assert_eq!(read(schema, json!("3")), (false, json!("3")));
        let schema = json!({"anyOf": [{"type": "integer"}, {"type": "null"}]});
        assert_eq!(read(schema, json!("3")), (true, json!(3)));
    }

    #[test]
    fn reference_cycles_end() {
        let schema = json!({"$ref": "#"});
        assert_eq!(read(schema, json!("1")), (false, json!("1")));
    }
}

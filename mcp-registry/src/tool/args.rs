use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::ToolError;

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Deserializes a whole arguments object into `A`; the error names the offending field.
///
/// ```
/// use mcp_registry::tool::deserialize_arguments;
/// #[derive(serde::Deserialize, Debug)]
/// struct Args { a: i64 }
/// let map = serde_json::json!({"a": "one"}).as_object().unwrap().clone();
/// let err = deserialize_arguments::<Args>(map).unwrap_err();
/// assert!(err.to_string().contains("`a`"), "{err}");
/// ```
pub fn deserialize_arguments<A: DeserializeOwned>(
    arguments: Map<String, Value>,
) -> Result<A, ToolError> {
    let value = Value::Object(arguments);
    // The fast path reads the object by reference; only a failure pays for path tracking,
    // to name the offending field.
    A::deserialize(&value).or_else(|_| {
        serde_path_to_error::deserialize(&value).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            if path == "." || path.is_empty() {
                ToolError::InvalidArguments(inner.to_string())
            } else {
                ToolError::InvalidArguments(format!("field `{path}`: {inner}"))
            }
        })
    })
}

/// Takes argument `name` out of the arguments object and deserializes it as `T`, for a
/// [`ToolParam`](crate::tool::param::ToolParam) of your own that reads an argument. A missing
/// argument is read as `null`, so `Option<T>` may be left out while a required one reports
/// that it is missing; a failure names the field, nested path included. (`#[mcp_tool]`
/// parameters, which have a schema, locate the field by their schema instead.)
pub fn take_argument<T: DeserializeOwned>(
    arguments: &mut Map<String, Value>,
    name: &str,
) -> Result<T, ToolError> {
    let value = arguments.remove(name);
    let found = value.as_ref().unwrap_or(&Value::Null);
    // The fast path reads the value by reference; only a failure pays for path tracking, to
    // name the offending field. Everything but the two deserializations is in non-generic
    // code, compiled once rather than once per parameter type.
    match T::deserialize(found) {
        Ok(v) => Ok(v),
        Err(_) => match serde_path_to_error::deserialize(found) {
            Ok(v) => Ok(v),
            Err(e) => {
                let path = e.path().to_string();
                Err(argument_error(name, value.is_none(), &path, e.into_inner()))
            }
        },
    }
}

/// [`take_argument`] for a type with a schema: the offending field inside the argument is
/// found by following the type's schema (see [`crate::schema::locate`]) instead of a
/// path-tracking deserializer, so each argument type's `Deserialize` impl is compiled once.
pub(crate) fn read_argument<T: DeserializeOwned + JsonSchema>(
    arguments: &mut Map<String, Value>,
    name: &str,
) -> Result<T, ToolError> {
    let value = arguments.remove(name);
    let found = value.as_ref().unwrap_or(&Value::Null);
    match T::deserialize(found) {
        Ok(v) => Ok(v),
        Err(e) => Err(located_error(
            name,
            value.is_none(),
            found,
            e,
            &crate::schema::property_schema::<T>(),
        )),
    }
}

/// The error for argument `name`, whose value `found` failed to deserialize with `inner`;
/// `schema` is a one-property object schema of the argument's type (`value`).
fn located_error(
    name: &str,
    missing: bool,
    found: &Value,
    inner: serde_json::Error,
    schema: &Value,
) -> ToolError {
    use crate::schema::locate::{Departure, mismatch};
    let located = schema
        .pointer("/properties/value")
        .and_then(|property| mismatch(schema, property, found));
    // The path is kept only when it tells the same story as serde's message: a missing field
    // where serde missed one (the same one), a wrong value where serde found one.
    let message = inner.to_string();
    let path = match located {
        Some((path, Departure::Missing)) => message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next())
            .filter(|field| path == *field || path.ends_with(&format!(".{field}")))
            .map(|_| path),
        Some((path, _)) if !message.starts_with("missing field") => Some(path),
        _ => None,
    };
    argument_error(name, missing, path.as_deref().unwrap_or_default(), inner)
}

/// The error for argument `name`, which failed to deserialize at `path` within it.
fn argument_error(name: &str, missing: bool, path: &str, inner: serde_json::Error) -> ToolError {
    if missing {
        ToolError::InvalidArguments(format!("missing required field `{name}`"))
    } else if path == "." || path.is_empty() {
        ToolError::InvalidArguments(format!("field `{name}`: {inner}"))
    } else {
        ToolError::InvalidArguments(format!("field `{name}.{path}`: {inner}"))
    }
}

fn type_matches(expected: &str, value: &Value) -> bool {
    match expected {
        "string" => value.is_string(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// The shallow check raw-schema tools get: required properties present, top-level property
/// types as declared.
pub(crate) fn check_against_schema(
    schema: &Value,
    arguments: &Map<String, Value>,
) -> Result<(), ToolError> {
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !arguments.contains_key(name) {
                return Err(ToolError::InvalidArguments(format!(
                    "missing required field `{name}`"
                )));
            }
        }
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (name, value) in arguments {
        let Some(ty) = properties.get(name).and_then(|p| p.get("type")) else {
            continue;
        };
        let ok = match ty {
            Value::String(t) => type_matches(t, value),
            Value::Array(ts) => ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| type_matches(t, value)),
            _ => true,
        };
        if !ok {
            return Err(ToolError::InvalidArguments(format!(
                "field `{name}`: expected {}, got {}",
                ty.as_str().map_or_else(|| ty.to_string(), str::to_owned),
                describe(value)
            )));
        }
    }
    Ok(())
}

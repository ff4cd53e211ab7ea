use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use serde_json::value::RawValue;

use super::ToolError;
use super::arguments::{Arguments, Member};
use crate::schema::locate::is_type;

/// How a value is named in messages ("a string", "an object", ..): the one wording for the
/// kind of a JSON value, in argument errors and (soon) envelope errors alike.
pub(crate) fn describe(value: &Value) -> &'static str {
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
    let arguments = Value::Object(arguments);
    // The fast path reads the object by reference; only a failure pays for path tracking,
    // to name the offending field.
    A::deserialize(&arguments).map_err(|_| path_error::<A>(&arguments))
}

/// [`deserialize_arguments`] for a typed tool whose input schema is `schema`: a missing
/// required property is reported as every kind of tool reports it (looked for only once
/// deserializing failed, so a good call pays nothing for it).
pub(crate) fn deserialize_checked<A: DeserializeOwned>(
    schema: &Value,
    arguments: Map<String, Value>,
) -> Result<A, ToolError> {
    let arguments = Value::Object(arguments);
    A::deserialize(&arguments).map_err(|_| {
        if let Value::Object(members) = &arguments
            && let Err(missing) = check_required(schema, members)
        {
            return missing;
        }
        path_error::<A>(&arguments)
    })
}

/// Deserializes `value` again as `A`, tracking the path, for the error naming the
/// offending field.
#[cold]
pub(crate) fn path_error<A: DeserializeOwned>(arguments: &Value) -> ToolError {
    match serde_path_to_error::deserialize::<_, A>(arguments) {
        Ok(_) => ToolError::InvalidArguments("the arguments could not be read".into()),
        Err(e) => {
            let path = e.path().to_string();
            let inner = e.into_inner();
            if path == "." || path.is_empty() {
                ToolError::InvalidArguments(inner.to_string())
            } else {
                ToolError::InvalidArguments(format!("field `{path}`: {inner}"))
            }
        }
    }
}

/// [`Arguments::take`]: member `name` deserialized as `T`, a missing one read as `null`; a
/// failure names the field, nested path included.
pub(crate) fn take_argument<T: DeserializeOwned>(
    arguments: &mut Arguments<'_>,
    name: &str,
) -> Result<T, ToolError> {
    let (value, missing) = match take::<T>(arguments, name) {
        Ok(v) => return Ok(v),
        Err(found) => found,
    };
    // The fast path reads the value by reference; only a failure pays for path tracking, to
    // name the offending field. Everything but the two deserializations is in non-generic
    // code, compiled once rather than once per parameter type.
    match T::deserialize(&value) {
        Ok(v) => Ok(v),
        Err(_) => match serde_path_to_error::deserialize(&value) {
            Ok(v) => Ok(v),
            Err(e) => {
                let path = e.path().to_string();
                Err(argument_error(name, missing, &path, e.into_inner()))
            }
        },
    }
}

/// [`take_argument`] for a type with a schema: the offending field inside the argument is
/// found by following the type's schema (see [`crate::schema::locate`]) instead of a
/// path-tracking deserializer, so each argument type's `Deserialize` impl is compiled once.
/// A member still text is read straight from it.
pub(crate) fn read_argument<T: DeserializeOwned + JsonSchema>(
    arguments: &mut Arguments<'_>,
    name: &str,
) -> Result<T, ToolError> {
    let (value, missing) = match take::<T>(arguments, name) {
        Ok(v) => return Ok(v),
        Err(found) => found,
    };
    match T::deserialize(&value) {
        Ok(v) => Ok(v),
        Err(e) => Err(located_error(
            name,
            missing,
            &value,
            e,
            &crate::schema::property_schema::<T>(),
        )),
    }
}

/// Member `name` taken out of `arguments` and read as `T` straight from its text, when it is
/// still text; else the value to read it from (`null` when missing) and whether it was
/// missing. A text that fails is parsed into a value and read again from that, for the error
/// the value form gives (`serde_json`'s text errors also name a line and column, of a text the
/// client never wrote).
fn take<T: DeserializeOwned>(
    arguments: &mut Arguments<'_>,
    name: &str,
) -> Result<T, (Value, bool)> {
    match arguments.take_member(name) {
        Member::Missing => Err((Value::Null, true)),
        Member::Value(value) => Err((value, false)),
        Member::Text(raw) => serde_json::from_str(raw.get()).map_err(|_| (parsed(raw), false)),
    }
}

/// The value of a member's text (from a message already parsed, so it parses).
#[cold]
fn parsed(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or_default()
}

/// The error for argument `name`, whose value `found` failed to deserialize with `inner`;
/// `schema` is a one-property object schema of the argument's type (`value`). The offending
/// field is where the value first departs from the schema, under the same type rules as
/// serde's (`1.0` is no integer); serde's message is reported as it is, never parsed.
fn located_error(
    name: &str,
    missing: bool,
    found: &Value,
    inner: serde_json::Error,
    schema: &Value,
) -> ToolError {
    let path = schema
        .pointer("/properties/value")
        .and_then(|property| crate::schema::locate::mismatch(schema, property, found))
        .map(|(path, _)| path);
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

/// The first property `schema` requires that `arguments` lacks, as the error every kind of
/// tool reports for a missing top-level argument (`ToolBuilder::typed` checks it before
/// deserializing, so serde's own wording never reaches the caller for a top-level field).
pub(crate) fn check_required(
    schema: &Value,
    arguments: &Map<String, Value>,
) -> Result<(), ToolError> {
    let required = schema.get("required").and_then(Value::as_array);
    match required
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|name| !arguments.contains_key(*name))
    {
        Some(name) => Err(ToolError::InvalidArguments(format!(
            "missing required field `{name}`"
        ))),
        None => Ok(()),
    }
}

/// The shallow check raw-schema tools get: required properties present, top-level property
/// types as declared, under the type rules `#[mcp_tool]` arguments follow (serde's: `1.0`
/// is a number, not an integer).
pub(crate) fn check_against_schema(
    schema: &Value,
    arguments: &Map<String, Value>,
) -> Result<(), ToolError> {
    check_required(schema, arguments)?;
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (name, value) in arguments {
        let Some(ty) = properties.get(name).and_then(|p| p.get("type")) else {
            continue;
        };
        let ok = match ty {
            Value::String(t) => is_type(t, value),
            Value::Array(ts) => ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| is_type(t, value)),
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn raw_check(arguments: Value) -> Result<(), ToolError> {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let Value::Object(arguments) = arguments else {
            panic!("arguments must be an object");
        };
        check_against_schema(&schema, &arguments)
    }

    /// `1.0` is no integer anywhere, as for serde (`1.0` does not deserialize into `i64`).
    #[test]
    fn one_point_zero_is_no_integer_for_raw_schemas_either() {
        assert!(raw_check(json!({"n": 1})).is_ok());
        let err = raw_check(json!({"n": 1.0})).unwrap_err();
        assert_eq!(
            err,
            ToolError::InvalidArguments("field `n`: expected integer, got a number".into())
        );
        assert!(serde_json::from_value::<i64>(json!(1.0)).is_err());
    }
}

//! The arguments of one call, as the handler receives them, and reading them: whole into a
//! type, or parameter by parameter, with errors that name the offending field.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::ToolError;
use crate::protocol::MAX_DEPTH;
use crate::schema::locate::is_type;

/// The arguments of one call: a JSON object, either parsed or still the text it
/// arrived as in a message (a transport's request, [`Registry::handle_mcp_text`]). A handler
/// reads it whole into a type ([`deserialize`](Self::deserialize), straight from the text
/// when there is text), as a map ([`into_map`](Self::into_map)), or member by member
/// ([`take`](Self::take), as `#[mcp_tool]` parameters are read: each member straight from
/// its text when there is text).
///
/// ```
/// use mcp_registry::tool::Arguments;
/// #[derive(serde::Deserialize)]
/// struct Add { a: i64, b: i64 }
/// let map = serde_json::json!({"a": 1, "b": 2}).as_object().unwrap().clone();
/// let add: Add = Arguments::from(map.clone()).deserialize().unwrap();
/// assert_eq!(add.a + add.b, 3);
/// let mut arguments = Arguments::from(map);
/// assert_eq!(arguments.take::<i64>("b").unwrap(), 2);
/// assert_eq!(arguments.take::<Option<i64>>("c").unwrap(), None);
/// ```
///
/// [`Registry::handle_mcp_text`]: crate::Registry::handle_mcp_text
#[derive(Debug)]
pub struct Arguments<'a>(Repr<'a>);

#[derive(Debug)]
enum Repr<'a> {
    Map(Map<String, Value>),
    /// The text of a JSON object (it starts with `{`), from a message already parsed: it is
    /// valid JSON, but its nesting is checked only when it is read (`serde_json` refuses
    /// more than [`MAX_DEPTH`] levels).
    Text(&'a str),
    /// The members of such a text, each value still text (a later member of the same name
    /// wins, as in a map).
    Members(Vec<(Cow<'a, str>, &'a RawValue)>),
}

/// One member taken out of the arguments.
pub(crate) enum Member<'a> {
    Missing,
    Value(Value),
    Text(&'a RawValue),
}

impl From<Map<String, Value>> for Arguments<'_> {
    fn from(map: Map<String, Value>) -> Self {
        Arguments(Repr::Map(map))
    }
}

impl<'a> Arguments<'a> {
    /// The arguments object whose JSON text is `text`: valid JSON starting with `{`, taken
    /// from a message that parsed.
    pub(crate) fn text(text: &'a str) -> Self {
        Arguments(Repr::Text(text))
    }

    /// The arguments as a map, when they are one (not text).
    pub(crate) fn as_map(&self) -> Option<&Map<String, Value>> {
        match &self.0 {
            Repr::Map(map) => Some(map),
            Repr::Text(_) | Repr::Members(_) => None,
        }
    }

    /// The arguments' text, when they are still text.
    pub(crate) fn as_text(&self) -> Option<&str> {
        match self.0 {
            Repr::Text(text) => Some(text),
            Repr::Map(_) | Repr::Members(_) => None,
        }
    }

    /// Deserializes the whole arguments object into `A`; the error names the offending
    /// field.
    pub fn deserialize<A: DeserializeOwned>(self) -> Result<A, ToolError> {
        match self.0 {
            Repr::Map(map) => super::deserialize_arguments(map),
            Repr::Members(_) => super::deserialize_arguments(self.into_map()?),
            Repr::Text(text) => serde_json::from_str(text).or_else(|_| {
                let map = Self::text(text).into_map()?;
                Err(path_error::<A>(&Value::Object(map)))
            }),
        }
    }

    /// [`deserialize`](Self::deserialize) for a tool whose input schema is `schema`: a
    /// missing required property is reported as every kind of tool reports it; `lenient`,
    /// scalars sent as strings are read as the schema says.
    pub(crate) fn deserialize_checked<A: DeserializeOwned>(
        self,
        schema: &Value,
        lenient: bool,
    ) -> Result<A, ToolError> {
        match self.0 {
            Repr::Map(map) => deserialize_checked(schema, map, lenient),
            Repr::Members(_) => deserialize_checked(schema, self.into_map()?, lenient),
            // Only a failure reads the text a second time, as a map, for the error the
            // map form gives.
            Repr::Text(text) => serde_json::from_str(text)
                .or_else(|_| deserialize_checked(schema, Self::text(text).into_map()?, lenient)),
        }
    }

    /// The arguments as a JSON object.
    pub fn into_map(self) -> Result<Map<String, Value>, ToolError> {
        match self.0 {
            Repr::Map(map) => Ok(map),
            // The text parsed once already, as part of its message: only its depth can fail.
            Repr::Text(text) => serde_json::from_str(text).map_err(|_| too_deep()),
            Repr::Members(members) => members
                .into_iter()
                .map(|(name, raw)| {
                    let value = serde_json::from_str(raw.get()).map_err(|_| too_deep())?;
                    Ok((name.into_owned(), value))
                })
                .collect(),
        }
    }

    /// The arguments ready to be read member by member: text is split into its members,
    /// each value left as text (nothing else is copied).
    pub(crate) fn into_members(self) -> Result<Self, ToolError> {
        match self.0 {
            Repr::Text(text) => split(text),
            _ => Ok(self),
        }
    }

    /// Takes member `name` out of the arguments and deserializes it as `T`, for a
    /// [`ToolParam`](crate::tool::param::ToolParam) of your own that reads an argument. A
    /// missing member is read as `null`, so `Option<T>` may be left out while a required one
    /// reports that it is missing; a failure names the field, nested path included.
    pub fn take<T: DeserializeOwned>(&mut self, name: &str) -> Result<T, ToolError> {
        take_argument(self, name)
    }

    /// Takes member `name` out of the arguments, as it is.
    pub(crate) fn take_member(&mut self, name: &str) -> Member<'a> {
        match &mut self.0 {
            Repr::Map(map) => map.remove(name).map_or(Member::Missing, Member::Value),
            Repr::Members(members) => members
                .iter()
                .rposition(|(n, _)| n == name)
                .map_or(Member::Missing, |i| Member::Text(members.swap_remove(i).1)),
            // Read whole so far: split first. (The text parsed as part of its message, so
            // splitting it cannot fail.)
            Repr::Text(text) => match split(text) {
                Ok(members) => {
                    *self = members;
                    self.take_member(name)
                }
                Err(_) => Member::Missing,
            },
        }
    }
}

/// The arguments' text split into its members, each value still text.
fn split(text: &str) -> Result<Arguments<'_>, ToolError> {
    serde_json::from_str::<MemberList<'_>>(text)
        .map(|MemberList(members)| Arguments(Repr::Members(members)))
        .map_err(|_| too_deep())
}

fn too_deep() -> ToolError {
    ToolError::InvalidArguments(format!(
        "arguments nest arrays and objects deeper than {MAX_DEPTH} levels"
    ))
}

/// An object's members, each value kept as text (names borrowed unless they have escapes).
struct MemberList<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for MemberList<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<MemberList<'a>>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = MemberList<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<MemberList<'a>, M::Error> {
                let mut members = Vec::new();
                while let Some(name) = map.next_key::<crate::protocol::meta::Text<'de>>()? {
                    members.push((name.0, map.next_value::<&'de RawValue>()?));
                }
                Ok(MemberList(members))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
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
/// deserializing failed, so a good call pays nothing for it); `lenient`, a failed read is
/// tried again with scalars sent as strings read as the schema says.
pub(crate) fn deserialize_checked<A: DeserializeOwned>(
    schema: &Value,
    arguments: Map<String, Value>,
    lenient: bool,
) -> Result<A, ToolError> {
    let arguments = Value::Object(arguments);
    if let Ok(read) = A::deserialize(&arguments) {
        return Ok(read);
    }
    if lenient
        && let Some(coerced) = scalars_read(schema, schema, &arguments)
        && let Ok(read) = A::deserialize(&coerced)
    {
        return Ok(read);
    }
    if let Value::Object(members) = &arguments
        && let Err(missing) = check_required(schema, members)
    {
        return Err(missing);
    }
    Err(path_error::<A>(&arguments))
}

/// `value` with the scalars sent as strings read as `schema` (within `root`) says, when any
/// was; the caller reads the result again, and reports a failure on the value as it came.
#[cold]
fn scalars_read(root: &Value, schema: &Value, value: &Value) -> Option<Value> {
    let mut coerced = value.clone();
    crate::schema::coerce::scalars(root, schema, &mut coerced).then_some(coerced)
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
///
/// `lenient`, a value that fails is read again with its scalars sent as strings read as the
/// schema says.
pub(crate) fn read_argument<T: DeserializeOwned + JsonSchema>(
    arguments: &mut Arguments<'_>,
    name: &str,
    lenient: bool,
) -> Result<T, ToolError> {
    let (value, missing) = match take::<T>(arguments, name) {
        Ok(v) => return Ok(v),
        Err(found) => found,
    };
    let error = match T::deserialize(&value) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let schema = crate::schema::property_schema::<T>();
    if lenient
        && let Some(property) = schema.pointer("/properties/value")
        && let Some(coerced) = scalars_read(&schema, property, &value)
        && let Ok(read) = T::deserialize(&coerced)
    {
        return Ok(read);
    }
    Err(located_error(name, missing, &value, error, &schema))
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
///
/// `lenient`, arguments that fail are read again with their scalars sent as strings read as
/// the schema says, and passed on so when that makes them fit.
pub(crate) fn check_raw_arguments(
    schema: &Value,
    arguments: Map<String, Value>,
    lenient: bool,
) -> Result<Map<String, Value>, ToolError> {
    let error = match check_against_schema(schema, &arguments) {
        Ok(()) => return Ok(arguments),
        Err(error) => error,
    };
    let arguments = Value::Object(arguments);
    if lenient
        && let Some(Value::Object(coerced)) = scalars_read(schema, schema, &arguments)
        && check_against_schema(schema, &coerced).is_ok()
    {
        return Ok(coerced);
    }
    Err(error)
}

/// [`check_raw_arguments`] as it is, without reading anything again.
fn check_against_schema(schema: &Value, arguments: &Map<String, Value>) -> Result<(), ToolError> {
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
                crate::protocol::value_kind(value)
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

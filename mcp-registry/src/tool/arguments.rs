//! The arguments of one call, as the handler receives them.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::ToolError;
use super::args::{deserialize_checked, path_error};
use crate::protocol::MAX_DEPTH;

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
    /// missing required property is reported as every kind of tool reports it.
    pub(crate) fn deserialize_checked<A: DeserializeOwned>(
        self,
        schema: &Value,
    ) -> Result<A, ToolError> {
        match self.0 {
            Repr::Map(map) => deserialize_checked(schema, map),
            Repr::Members(_) => deserialize_checked(schema, self.into_map()?),
            // Only a failure reads the text a second time, as a map, for the error the
            // map form gives.
            Repr::Text(text) => serde_json::from_str(text)
                .or_else(|_| deserialize_checked(schema, Self::text(text).into_map()?)),
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
        super::args::take_argument(self, name)
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
                while let Some(name) = map.next_key::<crate::protocol::decode::Text<'de>>()? {
                    members.push((name.0, map.next_value::<&'de RawValue>()?));
                }
                Ok(MemberList(members))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}

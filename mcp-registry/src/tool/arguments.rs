//! The arguments of one tool call, as the handler receives them.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::ToolError;
use super::args::{deserialize_checked, path_error};
use crate::protocol::MAX_DEPTH;

/// The arguments of one tool call: a JSON object, either parsed or still the text it
/// arrived as in a message (a transport's request, [`Registry::handle_mcp_text`]). A handler
/// reads it once: whole into a type ([`deserialize`](Self::deserialize), straight from the
/// text when there is text) or as a map ([`into_map`](Self::into_map)).
///
/// ```
/// use mcp_registry::tool::Arguments;
/// #[derive(serde::Deserialize)]
/// struct Add { a: i64, b: i64 }
/// let map = serde_json::json!({"a": 1, "b": 2}).as_object().unwrap().clone();
/// let add: Add = Arguments::from(map).deserialize().unwrap();
/// assert_eq!(add.a + add.b, 3);
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
            Repr::Text(_) => None,
        }
    }

    /// The arguments' text, when they are still text.
    pub(crate) fn as_text(&self) -> Option<&str> {
        match self.0 {
            Repr::Text(text) => Some(text),
            Repr::Map(_) => None,
        }
    }

    /// Deserializes the whole arguments object into `A`; the error names the offending
    /// field.
    pub fn deserialize<A: DeserializeOwned>(self) -> Result<A, ToolError> {
        match self.0 {
            Repr::Map(map) => super::deserialize_arguments(map),
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
            Repr::Text(text) => serde_json::from_str(text).map_err(|_| {
                ToolError::InvalidArguments(format!(
                    "arguments nest arrays and objects deeper than {MAX_DEPTH} levels"
                ))
            }),
        }
    }
}

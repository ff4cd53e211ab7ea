//! The `format`s a schema keeps: those of JSON Schema 2020-12 that every MCP client's validator
//! knows.
//!
//! schemars names the width of every number type in `format` (`int32`, `uint64`, `uint`,
//! `double`, ...) and `IpAddr` as `ip`: none of these is a JSON Schema format, and the
//! TypeScript SDK's validator (Ajv with `ajv-formats`, what Claude Code and the Inspector run)
//! prints `unknown format "uint64" ignored in schema` for each one it does not know. A format
//! outside [`KNOWN`] is therefore taken out, every subschema through; what it said about an
//! integer stays said by the range it implies (`minimum: 0` for an unsigned integer, both
//! bounds for a 32-bit one: 8- and 16-bit ones carry theirs already).

use schemars::Schema;
use schemars::transform::{RecursiveTransform, Transform};
use serde_json::{Map, Value};

/// The formats kept: JSON Schema 2020-12's format vocabulary, less the four `ajv-formats`
/// does not know (`idn-email`, `idn-hostname`, `iri`, `iri-reference`).
pub const KNOWN: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "uri-template",
    "uuid",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The project's transform: [`known_formats_only`] on every subschema.
pub(crate) fn transform() -> RecursiveTransform<fn(&mut Schema)> {
    RecursiveTransform(known_formats_only)
}

/// Takes every unknown `format` out of `value`, a whole schema (for schemas the generator
/// made without its transforms: `subschema_for`).
pub(crate) fn apply(value: &mut Value) {
    if let Ok(schema) = <&mut Schema>::try_from(value) {
        transform().transform(schema);
    }
}

/// Takes `schema`'s own `format` out unless it is [`KNOWN`], keeping an integer's range.
fn known_formats_only(schema: &mut Schema) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    let Some(Value::String(format)) = map.get("format") else {
        return;
    };
    if KNOWN.contains(&format.as_str()) {
        return;
    }
    let range = integer_range(format);
    map.remove("format");
    if let Some((minimum, maximum)) = range {
        insert_missing(map, "minimum", minimum);
        if let Some(maximum) = maximum {
            insert_missing(map, "maximum", maximum);
        }
    }
}

/// The range an integer format implies and schemars may leave unsaid: the lower bound, and the
/// upper one when it is exact as a JSON number in every client (32 bits at most).
fn integer_range(format: &str) -> Option<(Value, Option<Value>)> {
    match format {
        "int32" => Some((i32::MIN.into(), Some(i32::MAX.into()))),
        "uint32" => Some((0.into(), Some(u32::MAX.into()))),
        "uint8" | "uint16" | "uint64" | "uint128" | "uint" => Some((0.into(), None)),
        _ => None,
    }
}

/// `key: value` unless the schema says something of its own there (a `NonZeroU32`'s
/// `minimum: 1`).
fn insert_missing(map: &mut Map<String, Value>, key: &str, value: Value) {
    map.entry(key).or_insert(value);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::apply;

    #[test]
    fn unknown_formats_go_and_integer_ranges_stay() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "format": "uint64", "minimum": 0},
                "m": {"type": "integer", "format": "int32"},
                "k": {"type": "integer", "format": "uint32", "minimum": 1},
                "x": {"type": ["number", "null"], "format": "double"},
                "when": {"type": "string", "format": "date-time"},
                "format": {"type": "string", "default": {"format": "uint64"}}
            },
            "$defs": {"D": {"type": "integer", "format": "uint"}}
        });
        apply(&mut schema);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "minimum": 0},
                    "m": {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX},
                    "k": {"type": "integer", "minimum": 1, "maximum": u32::MAX},
                    "x": {"type": ["number", "null"]},
                    "when": {"type": "string", "format": "date-time"},
                    "format": {"type": "string", "default": {"format": "uint64"}}
                },
                "$defs": {"D": {"type": "integer", "minimum": 0}}
            })
        );
    }
}

//! Streamable HTTP's mirrored headers (2026-07-28): `x-mcp-header` annotations read from a
//! tool's input schema (and refused when invalid), values encoded for a header (the client)
//! and header values decoded and checked against the body (the server).

use base64::Engine as _;
use serde_json::{Map, Value};

/// One parameter a tool mirrors into a header: the property path and the header's name
/// portion (`Mcp-Param-{name}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    path: Vec<String>,
    name: String,
}

const KEY: &str = "x-mcp-header";

/// The `x-mcp-header` annotations of `schema`, or why they make the tool invalid: an
/// annotation must be a non-empty HTTP token, unique case-insensitively, on a `string`,
/// `integer` or `boolean` property reachable from the root through `properties` alone.
pub(crate) fn tool_param_headers(schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut found)?;
    let mut seen = std::collections::HashSet::new();
    for header in &found {
        if !seen.insert(header.name.to_ascii_lowercase()) {
            return Err(format!("x-mcp-header {:?} is not unique", header.name));
        }
    }
    Ok(found)
}

fn walk(
    node: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    match node {
        Value::Array(items) => {
            for item in items {
                walk(item, path, false, found)?;
            }
            Ok(())
        }
        Value::Object(map) => {
            if let Some(annotation) = map.get(KEY) {
                found.push(annotation_of(map, annotation, path, reachable)?);
            }
            for (key, child) in map {
                if key == "properties"
                    && let Value::Object(properties) = child
                {
                    for (name, property) in properties {
                        path.push(name.clone());
                        walk(property, path, reachable, found)?;
                        path.pop();
                    }
                } else if key != KEY {
                    walk(child, path, false, found)?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn annotation_of(
    schema: &Map<String, Value>,
    annotation: &Value,
    path: &[String],
    reachable: bool,
) -> Result<ParamHeader, String> {
    let Value::String(name) = annotation else {
        return Err("an x-mcp-header must be a string".into());
    };
    if !reachable || path.is_empty() {
        return Err(format!(
            "x-mcp-header {name:?} is not on a property reachable through `properties` alone"
        ));
    }
    if name.is_empty() {
        return Err("an x-mcp-header must not be empty".into());
    }
    if !name.bytes().all(is_tchar) {
        return Err(format!("x-mcp-header {name:?} is not an HTTP token"));
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => {}
        other => {
            return Err(format!(
                "x-mcp-header {name:?} is on a property of type {other:?}, not string, integer or boolean"
            ));
        }
    }
    Ok(ParamHeader {
        path: path.to_vec(),
        name: name.clone(),
    })
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

impl ParamHeader {
    /// The header's name portion (`Mcp-Param-{name}`).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The value `arguments` give this header, as text (a string as it is, an integer in
    /// decimal, a boolean as `true`/`false`); `None` when missing or `null`.
    pub(crate) fn value_in(&self, arguments: &Map<String, Value>) -> Option<String> {
        let (first, rest) = self.path.split_first()?;
        let mut value = arguments.get(first)?;
        for step in rest {
            value = value.get(step)?;
        }
        match value {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }
}

/// The `Mcp-Param-*` headers of a call with `arguments`: a missing or `null` value leaves its
/// header out.
pub(crate) fn param_headers(
    headers: &[ParamHeader],
    arguments: &Map<String, Value>,
) -> Vec<(String, String)> {
    headers
        .iter()
        .filter_map(|h| {
            let text = h.value_in(arguments)?;
            Some((format!("Mcp-Param-{}", h.name), encode_header_value(&text)))
        })
        .collect()
}

/// A header value as sent: `=?base64?{base64}?=` decoded (strict: padded, standard
/// alphabet, UTF-8), anything else as it is; `None` when the Base64 form is invalid.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn decode_header_value(raw: &str) -> Option<String> {
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        None => Some(raw.to_owned()),
    }
}

/// `value` as a header value: as it is when it is plain visible ASCII (inner spaces allowed),
/// else `=?base64?{base64 of its UTF-8}?=` (also when it looks like that sentinel already).
pub(crate) fn encode_header_value(value: &str) -> String {
    let plain = value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value.as_bytes())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn valid_annotations_are_found_and_values_encoded() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "flag": {"type": "boolean", "x-mcp-header": "Flag"},
            "nested": {"type": "object", "properties": {"deep": {"type": "string", "x-mcp-header": "Deep"}}},
            "query": {"type": "string"}
        }});
        let found = tool_param_headers(&schema).unwrap();
        assert_eq!(found.len(), 4);
        let args = json!({"region": "us west", "n": 42, "flag": false, "nested": {"deep": "é"}, "query": "q"});
        let mut headers = param_headers(&found, args.as_object().unwrap());
        headers.sort();
        assert_eq!(
            headers,
            [
                ("Mcp-Param-Deep".into(), "=?base64?w6k=?=".into()),
                ("Mcp-Param-Flag".into(), "false".into()),
                ("Mcp-Param-N".into(), "42".into()),
                ("Mcp-Param-Region".into(), "us west".into()),
            ]
        );
        let null = json!({"region": null});
        assert!(param_headers(&found, null.as_object().unwrap()).is_empty());
    }

    #[test]
    fn invalid_annotations_refuse_the_tool() {
        for bad in [
            json!({"properties": {"v": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"v": {"type": "object", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "array", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "null", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "number", "x-mcp-header": "V"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "My Region"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "A:B"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "Région"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "A\tB"}}}),
            json!({"properties": {"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}),
            json!({"anyOf": [{"properties": {"v": {"type": "string", "x-mcp-header": "V"}}}]}),
            json!({"type": "object", "x-mcp-header": "Root"}),
        ] {
            assert!(tool_param_headers(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn encoding_follows_the_spec_table() {
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(
            encode_header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(
            encode_header_value("line1\nline2"),
            "=?base64?bGluZTEKbGluZTI=?="
        );
        assert_eq!(
            encode_header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(encode_header_value(""), "");
        assert_eq!(encode_header_value("\tindented"), "=?base64?CWluZGVudGVk?=");
    }
}

//! The nesting limit of JSON values: what keeps a hostile message (or a tool's runaway
//! result) from overflowing the stack in recursive code (clone, serialization, drop).

use serde_json::Value;

/// The deepest nesting of arrays and objects a message may have: 127, `serde_json`'s own limit
/// when it parses text (it refuses 128 levels), applied as well to values handed over parsed
/// ([`Registry::handle_mcp_message`](crate::Registry::handle_mcp_message), tool arguments
/// and tool results), so every path refuses the same messages.
pub const MAX_DEPTH: usize = 127;

/// Whether `value` nests arrays and objects more than [`MAX_DEPTH`] levels deep (a scalar is
/// depth 0, `[1]` depth 1). Safe on a value of any depth: the walk stops one level past the
/// limit, so it never recurses more than `MAX_DEPTH + 1` frames deep.
///
/// ```
/// use mcp_registry::protocol::{exceeds_max_depth, MAX_DEPTH};
/// let mut v = serde_json::json!(1);
/// for _ in 0..MAX_DEPTH { v = serde_json::json!([v]); }
/// assert!(!exceeds_max_depth(&v));
/// assert!(exceeds_max_depth(&serde_json::json!([v])));
/// ```
pub fn exceeds_max_depth(value: &Value) -> bool {
    deeper_than(value, MAX_DEPTH)
}

/// Whether `value`, a member of an object (or an element of an array), makes its container
/// exceed [`MAX_DEPTH`]: [`exceeds_max_depth`] of the container is this of any member.
#[inline]
pub(crate) fn member_exceeds_max_depth(value: &Value) -> bool {
    match value {
        Value::Array(_) | Value::Object(_) => deeper_than(value, MAX_DEPTH - 1),
        _ => false,
    }
}

/// Whether `value` nests more than `budget` levels.
fn deeper_than(value: &Value, budget: usize) -> bool {
    // Scalars are looked at in place: only arrays and objects cost a call.
    let nested = |v: &Value| match v {
        Value::Array(_) | Value::Object(_) => budget == 1 || deeper_than(v, budget - 1),
        _ => false,
    };
    match value {
        Value::Array(items) => budget == 0 || items.iter().any(nested),
        Value::Object(members) => budget == 0 || members.values().any(nested),
        _ => false,
    }
}

/// Drops `value` without recursion (the default drop of a `Value` recurses once per level).
pub(crate) fn drop_flat(value: Value) {
    if !matches!(value, Value::Array(_) | Value::Object(_)) {
        return;
    }
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => stack.extend(members.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> Value {
        let mut v = Value::from(1);
        for i in 0..levels {
            v = if i % 2 == 0 {
                Value::Array(vec![v])
            } else {
                Value::Object(serde_json::Map::from_iter([("k".to_owned(), v)]))
            };
        }
        v
    }

    #[test]
    fn the_limit_is_inclusive_and_deep_values_are_safe() {
        assert!(!exceeds_max_depth(&Value::from(1)));
        assert!(!exceeds_max_depth(&nested(MAX_DEPTH)));
        assert!(exceeds_max_depth(&nested(MAX_DEPTH + 1)));
        let deep = nested(200_000);
        assert!(exceeds_max_depth(&deep));
        drop_flat(deep);
    }

    #[test]
    fn the_limit_matches_serde_json_text_parsing() {
        let text = nested(MAX_DEPTH).to_string();
        assert!(serde_json::from_str::<Value>(&text).is_ok());
        let text = nested(MAX_DEPTH + 1).to_string();
        assert!(serde_json::from_str::<Value>(&text).is_err());
    }
}

//! A request's `_meta`, read once: the members the protocol itself reads are kept apart, so
//! that reading one is a field read rather than a lookup among long keys, and reading the
//! text allocates only for what is kept. The whole is put together as a map only for a
//! reader that asks for all of it (a tool's [`ToolContext::meta`](crate::ToolContext::meta)).

use std::borrow::Cow;
use std::sync::OnceLock;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::{META_CLIENT_CAPABILITIES, META_LOG_LEVEL, META_PROTOCOL_VERSION};

/// `progressToken`: the token progress notifications name.
const PROGRESS_TOKEN: &str = "progressToken";

/// The members the protocol reads, in the order [`RequestMeta`] keeps them.
const KNOWN: [&str; 4] = [
    META_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    PROGRESS_TOKEN,
];

/// Where `key` is in [`KNOWN`]: a `match`, so that looking a member up compares lengths
/// before bytes.
#[inline]
fn known_index(key: &str) -> Option<usize> {
    match key {
        META_PROTOCOL_VERSION => Some(0),
        META_CLIENT_CAPABILITIES => Some(1),
        META_LOG_LEVEL => Some(2),
        PROGRESS_TOKEN => Some(3),
        _ => None,
    }
}

/// A request's `_meta` (an object).
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestMeta {
    /// The members named in [`KNOWN`], at their index.
    known: [Option<Value>; 4],
    /// Every other member.
    rest: Map<String, Value>,
    /// All of it, put together on first ask.
    whole: OnceLock<Map<String, Value>>,
}

impl RequestMeta {
    /// The member `key`.
    #[inline]
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match known_index(key) {
            Some(i) => self.known[i].as_ref(),
            None => self.rest.get(key),
        }
    }

    /// Whether it has the member `key`.
    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets the member `key`.
    pub(crate) fn insert(&mut self, key: String, value: Value) {
        self.whole = OnceLock::new();
        self.put(Cow::Owned(key), value);
    }

    /// Sets the member `key`, the whole left as it is (while it is being read).
    fn put(&mut self, key: Cow<'_, str>, value: Value) {
        match known_index(&key) {
            Some(i) => self.known[i] = Some(value),
            None => {
                self.rest.insert(key.into_owned(), value);
            }
        }
    }

    /// All of it, as one map (put together once). Under `serde_json`'s `preserve_order`
    /// feature its members come in this order: the others as they came, then the protocol
    /// version, client capabilities, log level and progress token.
    pub(crate) fn as_map(&self) -> &Map<String, Value> {
        self.whole.get_or_init(|| {
            let mut whole = self.rest.clone();
            for (key, value) in KNOWN.iter().zip(&self.known) {
                if let Some(value) = value {
                    whole.insert((*key).to_owned(), value.clone());
                }
            }
            whole
        })
    }

    /// All of it, as one map, taken apart no further.
    pub(crate) fn into_map(mut self) -> Map<String, Value> {
        if let Some(whole) = self.whole.take() {
            return whole;
        }
        for (key, value) in KNOWN.iter().zip(self.known) {
            if let Some(value) = value {
                self.rest.insert((*key).to_owned(), value);
            }
        }
        self.rest
    }
}

impl From<Map<String, Value>> for RequestMeta {
    fn from(map: Map<String, Value>) -> Self {
        let mut meta = RequestMeta::default();
        for (key, value) in map {
            meta.put(Cow::Owned(key), value);
        }
        meta
    }
}

/// A message's `_meta`, wherever it was read from: a request's, taken apart, or another
/// message's, as it came.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) enum MetaRef<'a> {
    Request(&'a RequestMeta),
    Other(&'a Map<String, Value>),
}

impl<'a> MetaRef<'a> {
    /// The member `key`.
    pub(crate) fn get(self, key: &str) -> Option<&'a Value> {
        match self {
            MetaRef::Request(meta) => meta.get(key),
            MetaRef::Other(map) => map.get(key),
        }
    }
}

/// A `_meta` member as a request carries it: an object, `null`, or (refused by the reader)
/// anything else.
#[derive(Debug)]
pub(crate) enum MetaMember {
    Object(Box<RequestMeta>),
    Null,
    NotAnObject,
}

impl<'de> Deserialize<'de> for MetaMember {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = MetaMember;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetaMember, A::Error> {
                let mut meta = RequestMeta::default();
                while let Some(Text(key)) = map.next_key()? {
                    // How `serde_json` hands over a number under `arbitrary_precision`.
                    if key == "$serde_json::private::Number" {
                        map.next_value::<serde::de::IgnoredAny>()?;
                        return Ok(MetaMember::NotAnObject);
                    }
                    let value = map.next_value()?;
                    meta.put(key, value);
                }
                Ok(MetaMember::Object(Box::new(meta)))
            }
            fn visit_unit<E>(self) -> Result<MetaMember, E> {
                Ok(MetaMember::Null)
            }
            fn visit_none<E>(self) -> Result<MetaMember, E> {
                Ok(MetaMember::Null)
            }
            fn visit_bool<E>(self, _: bool) -> Result<MetaMember, E> {
                Ok(MetaMember::NotAnObject)
            }
            fn visit_i64<E>(self, _: i64) -> Result<MetaMember, E> {
                Ok(MetaMember::NotAnObject)
            }
            fn visit_u64<E>(self, _: u64) -> Result<MetaMember, E> {
                Ok(MetaMember::NotAnObject)
            }
            fn visit_f64<E>(self, _: f64) -> Result<MetaMember, E> {
                Ok(MetaMember::NotAnObject)
            }
            fn visit_str<E>(self, _: &str) -> Result<MetaMember, E> {
                Ok(MetaMember::NotAnObject)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<MetaMember, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(MetaMember::NotAnObject)
            }
        }
        d.deserialize_any(Members)
    }
}

/// A string, borrowed unless it has escapes (`Cow`'s own `Deserialize` always copies).
pub(crate) struct Text<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, s: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(s)))
            }
        }
        d.deserialize_str(Visit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_as_the_map_it_came_from() {
        let text = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7,"x\u0079":[1],"io.modelcontextprotocol/clientCapabilities":{}}"#;
        let MetaMember::Object(meta) = serde_json::from_str(text).unwrap() else {
            panic!("an object");
        };
        let map: Map<String, Value> = serde_json::from_str(text).unwrap();
        assert_eq!(meta.as_map(), &map);
        assert_eq!(RequestMeta::from(map.clone()).as_map(), &map);
        assert_eq!(RequestMeta::from(map.clone()).into_map(), map);
        assert_eq!(meta.get("xy"), Some(&json!([1])));
        assert_eq!(meta.get(PROGRESS_TOKEN), Some(&json!(7)));
        assert!(!meta.contains_key(META_LOG_LEVEL));
    }

    #[test]
    fn null_and_other_values_are_told_apart() {
        for (text, null) in [
            ("null", true),
            ("1", false),
            ("\"s\"", false),
            ("[{}]", false),
        ] {
            match serde_json::from_str::<MetaMember>(text).unwrap() {
                MetaMember::Null => assert!(null, "{text}"),
                MetaMember::NotAnObject => assert!(!null, "{text}"),
                MetaMember::Object(_) => panic!("{text} is no object"),
            }
        }
    }

    #[test]
    fn insert_resets_the_whole() {
        let mut meta = RequestMeta::from(Map::new());
        assert!(meta.as_map().is_empty());
        meta.insert(PROGRESS_TOKEN.to_owned(), json!("t"));
        meta.insert("other".to_owned(), json!(1));
        assert_eq!(
            meta.as_map(),
            json!({"progressToken": "t", "other": 1})
                .as_object()
                .unwrap()
        );
    }
}

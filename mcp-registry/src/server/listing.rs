//! The per-version listing caches of a server: its tool list serialized once per protocol
//! revision, and the prompt, resource and template entries likewise.

use std::borrow::Cow;

use serde_json::Value;

use crate::protocol::{self, ProtocolVersion};
use crate::tool::Tool;

/// A server's tool list in the forms `tools/list` sends, each serialized once: the full
/// descriptors (2025-06-18 onward, and callers that name no version) built with the server,
/// the older revisions' forms on first use.
pub(crate) struct ToolListing {
    full: ListingForm,
    /// 2024-11-05 and 2025-03-26 (see [`protocol::ToolDescriptor::for_version`]).
    older: [std::sync::OnceLock<ListingForm>; 2],
}

impl ToolListing {
    /// The listing of `tools` (in name order): the full form now, the older ones on first use.
    pub(super) fn new(tools: &[Tool]) -> Self {
        ToolListing {
            full: ListingForm::new(tools.iter().map(|t| Cow::Borrowed(t.descriptor()))),
            older: Default::default(),
        }
    }

    /// The tool list as protocol revision `version` describes `tools` (`None`: the full
    /// descriptors, for callers that name no version).
    pub(super) fn get(&self, version: Option<ProtocolVersion>, tools: &[Tool]) -> &ListingForm {
        let older = match version {
            Some(v) if v < ProtocolVersion::V2025_03_26 => 0,
            Some(v) if v < ProtocolVersion::V2025_06_18 => 1,
            _ => return &self.full,
        };
        self.older[older].get_or_init(|| {
            let v = version.unwrap_or(ProtocolVersion::LATEST_LEGACY);
            ListingForm::new(tools.iter().map(|t| t.descriptor().for_version(v)))
        })
    }
}

/// One form of a tool list.
pub(crate) struct ListingForm {
    /// Each tool's descriptor, in name order, as one JSON array value.
    pub(crate) array: Value,
    /// `array` as JSON text.
    pub(crate) text: Box<serde_json::value::RawValue>,
}

/// The entries of a prompt, resource or resource template listing, each descriptor
/// serialized once per protocol revision (on the first list request in it): a page is a
/// slice, written as it is, never a descriptor serialized per request.
#[derive(Default)]
pub(crate) struct EntryListing {
    /// Index 0: callers that name no version (the full descriptors); then one per
    /// [`ProtocolVersion::ALL`].
    forms: [std::sync::OnceLock<Vec<Box<serde_json::value::RawValue>>>;
        1 + ProtocolVersion::ALL.len()],
}

impl EntryListing {
    /// The entries as `version` describes them, built by `describe` on first use.
    pub(super) fn get<'a, D: serde::Serialize + Clone + 'a>(
        &self,
        version: Option<ProtocolVersion>,
        entries: impl Iterator<Item = &'a D>,
        for_version: fn(&'a D, ProtocolVersion) -> Cow<'a, D>,
    ) -> &[Box<serde_json::value::RawValue>] {
        let index = version
            .and_then(|v| ProtocolVersion::ALL.iter().position(|&known| known == v))
            .map_or(0, |i| i + 1);
        self.forms[index].get_or_init(|| {
            entries
                .map(|d| {
                    let described = match version {
                        Some(v) => for_version(d, v),
                        None => Cow::Borrowed(d),
                    };
                    // A descriptor is a map with string keys: it always serializes.
                    serde_json::value::to_raw_value(&*described).expect("a descriptor serializes")
                })
                .collect()
        })
    }
}

impl ListingForm {
    fn new<'a>(descriptors: impl Iterator<Item = Cow<'a, protocol::ToolDescriptor>>) -> Self {
        let array = Value::Array(
            descriptors
                .map(|t| serde_json::to_value(&*t).unwrap_or(Value::Null))
                .collect(),
        );
        // A `Value` always serializes (its keys are strings): this cannot fail.
        let text = serde_json::value::to_raw_value(&array).expect("a JSON value serializes");
        ListingForm { array, text }
    }

    /// Each tool's descriptor, in name order.
    pub(crate) fn entries(&self) -> &[Value] {
        self.array.as_array().map_or(&[], Vec::as_slice)
    }
}

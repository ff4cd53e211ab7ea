//! What changes from one session to the next, replaced by stable placeholders so that a
//! re-recording diffs cleanly and a replay matches: UUIDs, RFC 3339 times and 2026-07-28
//! `requestState` values (opaque, signed with a per-process key), each distinct one mapped to
//! its own placeholder (the same one every time it appears, in requests and
//! replies alike, so an id the server made and the client sends back still matches).

use std::collections::HashMap;

use chrono::{DateTime, Datelike, Duration, NaiveDate};
use serde_json::{Map, Value};

/// The start of a placeholder UUID; the last group counts them.
const UUID_PREFIX: &str = "00000000-0000-4000-8000-";

/// Maps each UUID and time seen to its placeholder. One per session: record and replay both
/// see the values in the same order, so they agree on the numbering.
#[derive(Debug, Default)]
pub(super) struct Normalizer {
    uuids: HashMap<String, String>,
    times: HashMap<String, String>,
    states: HashMap<String, String>,
}

/// The start of a placeholder `requestState`.
const STATE_PREFIX: &str = "request-state-";

impl Normalizer {
    /// `value` with every UUID and time string replaced (placeholders stay as they are).
    pub(super) fn value(&mut self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.string(s)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| match v {
                        Value::String(state) if k == "requestState" => {
                            (k.clone(), Value::String(self.state(state)))
                        }
                        _ => (k.clone(), self.value(v)),
                    })
                    .collect::<Map<_, _>>(),
            ),
            other => other.clone(),
        }
    }

    fn state(&mut self, state: &str) -> String {
        if state.starts_with(STATE_PREFIX) {
            return state.to_owned();
        }
        let next = self.states.len() + 1;
        self.states
            .entry(state.to_owned())
            .or_insert_with(|| format!("{STATE_PREFIX}{next}"))
            .clone()
    }

    fn string(&mut self, s: &str) -> String {
        if is_uuid(s) && !s.starts_with(UUID_PREFIX) {
            let next = self.uuids.len() + 1;
            return self
                .uuids
                .entry(s.to_owned())
                .or_insert_with(|| format!("{UUID_PREFIX}{next:012}"))
                .clone();
        }
        if let Some(time) = rfc3339(s)
            && !is_placeholder_time(&time)
        {
            let next = i64::try_from(self.times.len()).unwrap_or(i64::MAX);
            return self
                .times
                .entry(s.to_owned())
                .or_insert_with(|| placeholder_time(next))
                .clone();
        }
        s.to_owned()
    }
}

/// `8-4-4-4-12` hexadecimal digits.
fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn rfc3339(s: &str) -> Option<DateTime<chrono::FixedOffset>> {
    // Cheap test first: most strings are not times.
    let b = s.as_bytes();
    if b.len() < 20
        || b.get(4) != Some(&b'-')
        || b.get(10).is_none_or(|c| !matches!(c, b'T' | b't'))
    {
        return None;
    }
    DateTime::parse_from_rfc3339(s).ok()
}

/// The placeholder times are on 2000-01-01 (UTC): the `n`th is `n` seconds after midnight.
fn placeholder_time(n: i64) -> String {
    let midnight = NaiveDate::from_ymd_opt(2000, 1, 1)
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .unwrap_or_default();
    let at = midnight + Duration::seconds(n);
    format!("{}Z", at.format("%Y-%m-%dT%H:%M:%S"))
}

fn is_placeholder_time(time: &DateTime<chrono::FixedOffset>) -> bool {
    time.year() == 2000 && time.ordinal() == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn uuids_and_times_get_stable_placeholders() {
        let mut n = Normalizer::default();
        let a = "5f0e6a8c-3b1d-4c2e-9f7a-0123456789ab";
        let got = n.value(&json!({
            "taskId": a,
            "again": [a],
            "createdAt": "2026-11-26T12:00:01.123Z",
            "text": "not a time",
            "requestState": "c2lnbmVk.c3RhdGU",
            "n": 3
        }));
        assert_eq!(
            got,
            json!({
                "taskId": "00000000-0000-4000-8000-000000000001",
                "again": ["00000000-0000-4000-8000-000000000001"],
                "createdAt": "2000-01-01T00:00:00Z",
                "text": "not a time",
                "requestState": "request-state-1",
                "n": 3
            })
        );
        // Placeholders are left alone, so a replayed id sent back matches.
        assert_eq!(n.value(&got), got);
        assert_eq!(
            n.value(&json!("2026-11-27T00:00:00+01:00")),
            json!("2000-01-01T00:00:01Z")
        );
    }
}

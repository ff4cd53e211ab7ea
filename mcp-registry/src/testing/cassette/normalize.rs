//! What changes from one session to the next, replaced by stable placeholders so that a
//! re-recording diffs cleanly and a replay matches: UUIDs, RFC 3339 times and 2026-07-28
//! `requestState` values (opaque, signed with a per-process key), each distinct one mapped to
//! its own placeholder (the same one every time it appears, in requests and
//! replies alike, so an id the server made and the client sends back still matches).

use std::collections::HashMap;

use chrono::{DateTime, Datelike, Duration, NaiveDate, Timelike};
use serde_json::{Map, Value};

/// The start of a placeholder UUID; the last group counts them.
const UUID_PREFIX: &str = "00000000-0000-4000-8000-";

/// Maps each UUID and time seen to its placeholder. One per session: record and replay both
/// see the values in the same order (a replay sees the recorded placeholders where the
/// recording saw the values, and counts past them), so they agree on the numbering even of
/// values the client makes afresh each run.
#[derive(Debug, Default)]
pub(super) struct Normalizer {
    uuids: HashMap<String, String>,
    times: HashMap<String, String>,
    states: HashMap<String, String>,
    /// The highest number handed out or seen, per kind.
    counts: [u64; 3],
}

const UUID: usize = 0;
const TIME: usize = 1;
const STATE: usize = 2;

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

    /// The next number of `kind`.
    fn next(&mut self, kind: usize) -> u64 {
        self.counts[kind] += 1;
        self.counts[kind]
    }

    /// A placeholder numbered `n` was seen: new values are numbered past it.
    fn seen(&mut self, kind: usize, n: Option<u64>) {
        if let Some(n) = n {
            self.counts[kind] = self.counts[kind].max(n);
        }
    }

    fn state(&mut self, state: &str) -> String {
        if let Some(n) = state.strip_prefix(STATE_PREFIX) {
            self.seen(STATE, n.parse().ok());
            return state.to_owned();
        }
        if let Some(known) = self.states.get(state) {
            return known.clone();
        }
        let placeholder = format!("{STATE_PREFIX}{}", self.next(STATE));
        self.states.insert(state.to_owned(), placeholder.clone());
        placeholder
    }

    fn string(&mut self, s: &str) -> String {
        if is_uuid(s) {
            if let Some(n) = s.strip_prefix(UUID_PREFIX) {
                self.seen(UUID, n.parse().ok());
                return s.to_owned();
            }
            if let Some(known) = self.uuids.get(s) {
                return known.clone();
            }
            let placeholder = format!("{UUID_PREFIX}{:012}", self.next(UUID));
            self.uuids.insert(s.to_owned(), placeholder.clone());
            return placeholder;
        }
        if let Some(time) = rfc3339(s) {
            if is_placeholder_time(&time) {
                // The nth placeholder is n - 1 seconds past midnight.
                let seconds = u64::from(time.num_seconds_from_midnight());
                self.seen(TIME, Some(seconds + 1));
                return s.to_owned();
            }
            if let Some(known) = self.times.get(s) {
                return known.clone();
            }
            let n = self.next(TIME) - 1;
            let placeholder = placeholder_time(i64::try_from(n).unwrap_or(i64::MAX));
            self.times.insert(s.to_owned(), placeholder.clone());
            return placeholder;
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

    #[test]
    fn a_replay_numbers_new_values_past_the_placeholders_it_saw() {
        // Recording: the server's id, then one the client made.
        let mut recording = Normalizer::default();
        recording.value(&json!("11111111-1111-4111-8111-111111111111"));
        let made = recording.value(&json!("22222222-2222-4222-8222-222222222222"));
        // Replay: the server's id arrives as its placeholder; the client makes a new one.
        let mut replay = Normalizer::default();
        replay.value(&json!("00000000-0000-4000-8000-000000000001"));
        let again = replay.value(&json!("33333333-3333-4333-8333-333333333333"));
        assert_eq!(made, again);
        assert_eq!(again, json!("00000000-0000-4000-8000-000000000002"));
    }
}

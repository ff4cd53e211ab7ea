//! The events of a legacy session's SSE streams kept in memory, for resumption (see
//! `resume`): bounded per stream and per session, dropped with the session.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use tokio::sync::Notify;

use super::shared::{KeptEvent, KeptEvents};
use crate::sync::MutexExt;

/// How many streams (the most recent) a session keeps in memory.
const MAX_STREAMS: usize = 16;

/// The events of one stream kept in memory.
#[derive(Default)]
struct MemoryStream {
    latest: u64,
    events: VecDeque<KeptEvent>,
}

/// A session's streams kept in memory: at most [`MAX_STREAMS`] (the oldest go first), each
/// its last `cap` events. Dropped with the session.
#[derive(Default)]
pub(super) struct MemoryStreams {
    streams: Mutex<(HashMap<String, MemoryStream>, VecDeque<String>)>,
    pub(super) changed: Notify,
}

impl MemoryStreams {
    pub(super) fn append(&self, stream: &str, data: &str, last: bool, cap: usize) -> u64 {
        let mut guard = self.streams.lock_unpoisoned();
        let (streams, order) = &mut *guard;
        if !streams.contains_key(stream) {
            if order.len() >= MAX_STREAMS
                && let Some(oldest) = order.pop_front()
            {
                streams.remove(&oldest);
            }
            order.push_back(stream.to_owned());
        }
        let kept = streams.entry(stream.to_owned()).or_default();
        kept.latest += 1;
        if kept.events.len() >= cap {
            kept.events.pop_front();
        }
        let seq = kept.latest;
        kept.events
            .push_back(KeptEvent::new(seq, data.to_owned(), last));
        drop(guard);
        self.changed.notify_waiters();
        seq
    }

    pub(super) fn read(&self, stream: &str) -> Option<KeptEvents> {
        let guard = self.streams.lock_unpoisoned();
        let kept = guard.0.get(stream)?;
        Some(KeptEvents::new(
            kept.events.iter().cloned().collect(),
            kept.latest,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_keeps_the_last_events_of_the_last_streams() {
        let memory = MemoryStreams::default();
        for i in 0..5 {
            memory.append("a", &i.to_string(), i == 4, 3);
        }
        let kept = memory.read("a").unwrap();
        assert_eq!(kept.latest, 5);
        let seqs: Vec<u64> = kept.events.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [3, 4, 5]);
        assert!(kept.events[2].last);
        for i in 0..MAX_STREAMS {
            memory.append(&format!("s{i}"), "x", false, 3);
        }
        assert!(memory.read("a").is_none(), "the oldest stream went first");
        assert!(memory.read("s0").is_some());
    }
}

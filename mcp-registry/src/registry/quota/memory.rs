//! The in-memory buckets of a [`QuotaLayer`](super::QuotaLayer): one map behind one mutex,
//! bounded (buckets full again are dropped; past the cap, the longest idle).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use super::{Quota, Take};
use crate::sync::MutexExt;

/// Below this many buckets the map is never swept.
const MIN_SWEEP: usize = 1024;

/// One caller's bucket.
struct Bucket {
    tokens: f64,
    at: Instant,
    /// When it holds its whole burst again: from then on it is the same as no bucket.
    full_at: Instant,
}

struct Map {
    buckets: HashMap<String, Bucket>,
    /// The size at which the next new bucket sweeps the map first.
    sweep_at: usize,
}

/// Token buckets in memory, at most `max` of them.
pub(super) struct MemoryBuckets {
    map: Mutex<Map>,
    max: usize,
}

impl MemoryBuckets {
    pub(super) fn new(max: usize) -> Self {
        let max = max.max(1);
        MemoryBuckets {
            map: Mutex::new(Map {
                buckets: HashMap::new(),
                sweep_at: MIN_SWEEP.min(max),
            }),
            max,
        }
    }

    /// Takes a token from `key`'s bucket at `now`: one hash lookup under the mutex.
    pub(super) fn take(&self, key: &str, quota: Quota, now: Instant) -> Take {
        let mut map = self.map.lock_unpoisoned();
        if let Some(bucket) = map.buckets.get_mut(key) {
            return take(bucket, quota, now);
        }
        if map.buckets.len() >= map.sweep_at {
            map.sweep(now, self.max);
        }
        let mut bucket = Bucket {
            tokens: f64::from(quota.burst),
            at: now,
            full_at: now,
        };
        let taken = take(&mut bucket, quota, now);
        map.buckets.insert(key.to_owned(), bucket);
        taken
    }

    /// How many buckets are kept.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.map.lock_unpoisoned().buckets.len()
    }
}

impl Map {
    /// Drops the buckets full again, then, past `max`, the longest idle down to 3/4 of `max`
    /// (each of those callers starts again with a whole burst).
    fn sweep(&mut self, now: Instant, max: usize) {
        self.buckets.retain(|_, b| b.full_at > now);
        if self.buckets.len() >= max {
            let keep = max - max / 4;
            let mut ats: Vec<Instant> = self.buckets.values().map(|b| b.at).collect();
            let cut = ats.len() - keep;
            let (_, oldest_kept, _) = ats.select_nth_unstable(cut);
            let oldest_kept = *oldest_kept;
            self.buckets.retain(|_, b| b.at >= oldest_kept);
            // Ties at the cut may keep a few more: drop any extra (arbitrary ones).
            let extra = self.buckets.len().saturating_sub(keep);
            if extra > 0 {
                let gone: Vec<String> = self
                    .buckets
                    .iter()
                    .filter(|(_, b)| b.at == oldest_kept)
                    .take(extra)
                    .map(|(k, _)| k.clone())
                    .collect();
                for key in gone {
                    self.buckets.remove(&key);
                }
            }
        }
        self.sweep_at = (self.buckets.len() * 2).clamp(MIN_SWEEP.min(max), max);
    }
}

/// The token bucket itself: refilled for the time since it was last touched, then one
/// token taken, or the wait until there is one.
fn take(bucket: &mut Bucket, quota: Quota, now: Instant) -> Take {
    let rate = quota.rate_per_second();
    let burst = f64::from(quota.burst);
    let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
    bucket.tokens = (bucket.tokens + elapsed * rate).min(burst);
    bucket.at = now;
    let taken = if bucket.tokens >= 1.0 {
        bucket.tokens -= 1.0;
        Take::Granted
    } else {
        Take::Denied {
            retry_after: Duration::from_secs_f64((1.0 - bucket.tokens) / rate),
        }
    };
    bucket.full_at = now + Duration::from_secs_f64((burst - bucket.tokens) / rate);
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_buckets_are_dropped_and_the_map_stays_under_its_cap() {
        let buckets = MemoryBuckets::new(2000);
        let quota = Quota::per_second(1);
        let start = Instant::now();
        for i in 0..1500 {
            buckets.take(&format!("c{i}"), quota, start);
        }
        assert_eq!(buckets.len(), 1500);
        // Later every one of those is full again: once the map reaches its next sweep
        // (the cap here), the sweep drops them all and keeps the busy ones.
        let later = start + Duration::from_secs(2);
        for i in 0..600 {
            buckets.take(&format!("late{i}"), quota, later);
        }
        assert!(buckets.len() <= 600, "{}", buckets.len());
        // Callers that stay busy are never more than the cap.
        let now = start + Duration::from_secs(3);
        for i in 0..10_000 {
            buckets.take(&format!("busy{i}"), quota, now);
            assert!(buckets.len() <= 2000);
        }
    }

    #[test]
    fn a_bucket_refills_at_its_rate_up_to_its_burst() {
        let buckets = MemoryBuckets::new(10);
        let quota = Quota::per_second(2).burst(3);
        let t = Instant::now();
        for _ in 0..3 {
            assert_eq!(buckets.take("a", quota, t), Take::Granted);
        }
        let Take::Denied { retry_after } = buckets.take("a", quota, t) else {
            panic!("a fourth token at once");
        };
        assert_eq!(retry_after, Duration::from_millis(500));
        let later = t + Duration::from_millis(500);
        assert_eq!(buckets.take("a", quota, later), Take::Granted);
        assert!(matches!(
            buckets.take("a", quota, later),
            Take::Denied { .. }
        ));
    }
}

//! [`RedisBuckets`]: the token buckets of a [`QuotaLayer`](crate::registry::quota::QuotaLayer)
//! in Redis, so every replica draws on the same bucket per caller.
//!
//! Keys: `mcp:{prefix}:quota:{bucket}`, a hash (`tokens`, `at` in ms on Redis's clock)
//! expiring once the bucket would be full again (bounded memory: idle buckets vanish).

use redis::Script;
use std::time::Duration;

use super::Redis;
use crate::registry::quota::{BucketStore, BucketStoreError, Quota, Take};
use crate::tool::BoxFuture;

/// Refills and takes one token atomically, on Redis's clock (`TIME`, the same for every
/// replica). KEYS: bucket. ARGV: tokens per ms, burst. Returns 0 (granted) or the wait in ms.
const TAKE: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or burst
local at = tonumber(b[2]) or now
if now > at then tokens = math.min(burst, tokens + (now - at) * rate) end
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = math.max(1, math.ceil((1 - tokens) / rate)) end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate) + 1000)
return wait
"#;

/// A [`BucketStore`] in Redis, shared by every replica using the same [`Redis`] prefix: give
/// it to [`QuotaLayer::store`](crate::registry::quota::QuotaLayer::store) with the
/// [`Outage`](crate::registry::quota::Outage) behaviour wanted while Redis is down.
/// One round trip (one Lua script) per counted request.
#[derive(Debug, Clone)]
pub struct RedisBuckets {
    redis: Redis,
    script: Script,
}

impl RedisBuckets {
    /// Buckets kept through `redis`.
    pub fn new(redis: &Redis) -> Self {
        RedisBuckets {
            redis: redis.clone(),
            script: Script::new(TAKE),
        }
    }
}

impl BucketStore for RedisBuckets {
    fn take<'a>(
        &'a self,
        key: &'a str,
        quota: Quota,
    ) -> BoxFuture<'a, Result<Take, BucketStoreError>> {
        Box::pin(async move {
            let mut conn = self
                .redis
                .connection()
                .await
                .map_err(|e| BucketStoreError::new(e.to_string()))?;
            let wait: i64 = self
                .script
                .key(self.redis.key(&format!("quota:{key}")))
                .arg((quota.rate_per_second() / 1000.0).to_string())
                .arg(quota.burst_size())
                .invoke_async(&mut conn)
                .await
                .map_err(|e| BucketStoreError::new(self.redis.unavailable(&e).to_string()))?;
            Ok(match u64::try_from(wait) {
                Ok(0) => Take::Granted,
                Ok(ms) => Take::Denied {
                    retry_after: Duration::from_millis(ms),
                },
                Err(_) => Take::Granted,
            })
        })
    }
}

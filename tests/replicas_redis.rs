//! The Redis connection replicas share state through (`replicas::Redis`), against a real
//! `redis-server`: it answers, a stopped Redis gives a clear error, a restarted one is used
//! again without a new `Redis`.

use crate::common;

use common::redis::RedisServer;
use mcp_registry::replicas::Redis;

#[tokio::test]
async fn redis_down_is_a_clear_error_and_recovery_is_automatic() {
    let Some(mut server) = RedisServer::start().await else {
        return;
    };
    let redis = Redis::new(&server.url()).expect("a Redis URL").prefix("t");
    redis.ping().await.expect("Redis answers");

    server.stop();
    let error = redis.ping().await.expect_err("Redis is down").to_string();
    assert!(error.contains("did not answer"), "{error}");
    assert!(error.contains("Redis::new"), "{error}");

    server.restart().await;
    let mut answered = false;
    for _ in 0..100 {
        if redis.ping().await.is_ok() {
            answered = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(answered, "the connection came back after Redis restarted");
}

//! Test binary `replicas`: replicas sharing state: Redis, the change bus, request-state keys, and
//! examples/replica behind HAProxy (`#[ignore]`d, run by `.ci/e2e.sh`).
//!
//! Tests are grouped into a few binaries by area (ARCHITECTURE.md, Tests): each test binary links
//! the whole crate, and linking was most of the test build's time. A member is a file of `tests/`,
//! one `#[path]` module per file in alphabetical order; `.ci/run` checks that every `tests/*.rs` is
//! a binary or a member of exactly one.

mod common;

#[path = "change_bus.rs"]
mod change_bus;
#[path = "replicas_lb.rs"]
mod replicas_lb;
#[path = "replicas_redis.rs"]
mod replicas_redis;
#[path = "replicas_sessions.rs"]
mod replicas_sessions;
#[path = "replicas_tasks.rs"]
mod replicas_tasks;
#[path = "request_state_keys.rs"]
mod request_state_keys;

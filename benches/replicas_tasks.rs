//! What sharing tasks through Redis costs (`replicas::RedisTaskStore`) against the
//! in-process default (`MemoryTaskStore`), the same trivial task tool either way:
//!
//! - `start_to_result/{memory,redis}`: a task started in-process (`as_task`) and its result
//!   awaited (`TaskHandle::result`), on the replica that runs it, the store keeping what
//!   the run's earlier iterations left (tasks live 5 s); `memory_empty`: the same on a new
//!   `MemoryTaskStore` each time;
//! - `tasks_get/{memory,redis}`: 2026-07-28 `tasks/get` of a finished task (what every
//!   replica's poll costs).
//!
//! The Redis runs need `redis-server` on `PATH` (started by the bench on a free port,
//! nothing persisted); without it they are skipped with a message.

// The tests' helper, whole: the bench uses only `start` and `url`.
#[allow(dead_code)]
#[path = "../tests/common/redis.rs"]
mod redis_server;

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mcp_registry::protocol::TaskSupport;
use mcp_registry::replicas::{Redis, RedisTaskStore};
use mcp_registry::task::{MemoryTaskStore, TaskSettings, TaskStore};
use mcp_registry::{Registry, Server, Tool};
use serde_json::{Value, json};

fn registry(store: impl TaskStore) -> Registry {
    let echo = Tool::builder("echo")
        .task_support(TaskSupport::Optional)
        .raw(json!({"type": "object"}), |_: Value| async { "done" })
        .expect("valid tool");
    Registry::builder()
        .server(Server::new("s", None, [echo]).expect("valid server"))
        .task_store(store)
        .task_settings(TaskSettings::default().default_ttl(Duration::from_secs(5)))
        .build()
}

fn get_request(id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {
        "taskId": id,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            }
        }
    }})
}

fn bench_store(
    c: &mut Criterion,
    runtime: &tokio::runtime::Runtime,
    name: &str,
    registry: &Registry,
) {
    let mut group = c.benchmark_group("replicas_tasks");
    group.bench_function(format!("start_to_result/{name}"), |b| {
        b.to_async(runtime).iter(|| async {
            let task = registry
                .call_tool_by_name("echo", json!({}))
                .as_task()
                .await
                .expect("a task");
            task.result().await.expect("a result")
        });
    });
    let id = runtime.block_on(async {
        let task = registry
            .call_tool_by_name("echo", json!({}))
            .as_task()
            .ttl(Duration::from_secs(600))
            .await
            .expect("a task");
        task.result().await.expect("a result");
        task.id().to_owned()
    });
    group.bench_function(format!("tasks_get/{name}"), |b| {
        b.to_async(runtime).iter(|| async {
            let reply = registry
                .handle_mcp_message("s", get_request(&id))
                .await
                .expect("a reply");
            assert_eq!(reply["result"]["status"], "completed", "{reply}");
        });
    });
    group.finish();
}

/// `start_to_result` on a new, empty `MemoryTaskStore` each time: the store's own cost,
/// without the records earlier iterations left (`MemoryTaskStore` scans every record it
/// keeps on each start).
fn bench_fresh_memory(c: &mut Criterion, runtime: &tokio::runtime::Runtime) {
    let mut group = c.benchmark_group("replicas_tasks");
    group.bench_function("start_to_result/memory_empty", |b| {
        b.to_async(runtime).iter_batched(
            || registry(MemoryTaskStore::new()),
            |registry| async move {
                let task = registry
                    .call_tool_by_name("echo", json!({}))
                    .as_task()
                    .await
                    .expect("a task");
                task.result().await.expect("a result")
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    bench_fresh_memory(c, &runtime);
    let memory = registry(MemoryTaskStore::new());
    bench_store(c, &runtime, "memory", &memory);

    let Some(server) = runtime.block_on(redis_server::RedisServer::start()) else {
        eprintln!("replicas_tasks/*/redis skipped: redis-server is not installed");
        return;
    };
    let redis = Redis::new(&server.url())
        .expect("a Redis URL")
        .prefix("bench");
    let shared = runtime.block_on(async { registry(RedisTaskStore::new(redis)) });
    bench_store(c, &runtime, "redis", &shared);
    drop(shared);
    drop(server);
}

criterion_group!(benches, bench);
criterion_main!(benches);

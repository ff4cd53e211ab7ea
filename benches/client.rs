//! What the MCP client adds to a tool call: the same trivial tool called
//!
//! - `call_tool_by_name`: in-process, no client (the baseline);
//! - `in_process`: through `Client::in_process` (the client's request, reply routing and
//!   result parsing, the server session's JSON-RPC);
//! - `mounted`: through a registry in which that server is mounted as a remote
//!   (`RemoteServer` over an in-process client): what a host pays per call for a remote;
//! - `stdio`: through `Client::stdio` to `examples/stdio_server` (a child process: pipes and
//!   JSON text both ways; built by `cargo bench` if missing).
//!
//! Each iteration awaits one call on a current-thread runtime.

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_registry::client::{Client, RemoteServer, RequestPolicy};
use mcp_registry::{Registry, Server, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn registry() -> Registry {
    let add = Tool::builder("add")
        .description("Add two integers")
        .typed(|a: AddArgs| async move { (a.a + a.b).to_string() })
        .expect("valid tool");
    Registry::from_servers([Server::new("math", None, [add]).expect("valid server")])
}

fn stdio_server() -> tokio::process::Command {
    let root = env!("CARGO_MANIFEST_DIR");
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| format!("{root}/target"));
    let path = format!("{target}/release/examples/stdio_server");
    if !std::path::Path::new(&path).exists() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "--release", "--example", "stdio_server"])
            .current_dir(root)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building examples/stdio_server failed");
    }
    tokio::process::Command::new(path)
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let args = json!({"a": 2, "b": 3});
    let mut group = c.benchmark_group("client");

    let local = registry();
    group.bench_function("call_tool_by_name", |b| {
        b.to_async(&runtime).iter(|| async {
            local
                .call_tool_by_name("add", args.clone())
                .await
                .expect("ok")
        })
    });

    // No retries: a benchmark should see every failure.
    let no_retries = || Client::builder().policy("tools/call", RequestPolicy::new().retries(0));
    let client = runtime
        .block_on(no_retries().connect_in_process(registry(), "math"))
        .expect("connects");
    group.bench_function("in_process", |b| {
        b.to_async(&runtime)
            .iter(|| async { client.call_tool("add", args.clone()).await.expect("ok") })
    });

    let hub = Registry::new();
    runtime
        .block_on(
            RemoteServer::new("remote", move || {
                no_retries().connect_in_process(registry(), "math")
            })
            .mount(&hub),
        )
        .expect("mounts");
    group.bench_function("mounted", |b| {
        b.to_async(&runtime).iter(|| async {
            hub.call_tool_by_name("add", args.clone())
                .await
                .expect("ok")
        })
    });

    let stdio = runtime
        .block_on(no_retries().connect_stdio(stdio_server()))
        .expect("spawns examples/stdio_server");
    group.bench_function("stdio", |b| {
        b.to_async(&runtime).iter(|| async {
            stdio
                .call_tool("add", json!({"a": 2, "b": 3}))
                .await
                .expect("ok")
        })
    });
    group.finish();
    runtime.block_on(stdio.close());
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! The cost of reading a resource and rendering a prompt in-process, next to calling a tool:
//! a fixed URI and a template match (one variable parsed into a `u64`), through
//! `Registry::read_resource` and through `handle_mcp_text` (a `resources/read` request as
//! JSON text in, reply text out), a `prompts/get` with one argument, beside
//! `call_tool_by_name` / `handle_mcp_text` `tools/call` of a trivial tool; and
//! `resources/list` / `prompts/list` of a server with 10,000 of them (one page, the
//! listing serialized once per revision, so a request copies it).
//!
//! As in `call_path`, each path completes on its first poll, so each iteration polls its
//! future once with a no-op waker inside the runtime's context.

use std::future::IntoFuture;
use std::task::{Context, Poll, Waker};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mcp_registry::{Prompt, Registry, Resource, ResourceTemplate, Server, Tool};
use serde_json::json;

/// Polls a future that completes without waiting, once.
fn now<F: IntoFuture>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut.into_future());
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("the benchmarked path waited"),
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn registry() -> Registry {
    let add = Tool::builder("add")
        .typed(|args: AddArgs| async move { (args.a + args.b).to_string() })
        .expect("valid tool");
    let motd = Resource::builder("text://motd", "motd")
        .mime_type("text/plain")
        .handler(|_| async { "Hello" })
        .expect("valid resource");
    let user = ResourceTemplate::builder("users://{id}/profile", "profile")
        .mime_type("application/json")
        .handler(|req| async move {
            let id: u64 = req.variable("id").unwrap_or("0").parse().unwrap_or(0);
            format!(r#"{{"id":{id}}}"#)
        })
        .expect("valid template");
    let greet = Prompt::builder("greet")
        .required_argument("name", "Who to greet")
        .handler(|args| async move { format!("Greet {}", args["name"]) })
        .expect("valid prompt");
    let many = Server::builder("many")
        .resources((0..10_000).map(|i| {
            Resource::builder(format!("file:///data/{i:05}.txt"), format!("data-{i:05}"))
                .description("One of many data files")
                .mime_type("text/plain")
                .handler(|_| async { "" })
                .expect("valid resource")
        }))
        .prompts((0..10_000).map(|i| {
            Prompt::builder(format!("prompt-{i:05}"))
                .description("One of many prompts")
                .required_argument("topic", "What about")
                .handler(|_| async { "" })
                .expect("valid prompt")
        }))
        .build()
        .expect("valid server");
    Registry::from_servers([
        Server::builder("s")
            .tool(add)
            .prompt(greet)
            .resource(motd)
            .resource_template(user)
            .build()
            .expect("valid server"),
        many,
    ])
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let _context = rt.enter();
    let registry = registry();

    let mut g = c.benchmark_group("in_process");
    g.bench_function("call_tool_by_name", |b| {
        b.iter_batched(
            || json!({"a": 1, "b": 2}),
            |args| now(registry.call_tool_by_name("add", args)).expect("ok"),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("read_resource_static", |b| {
        b.iter(|| now(registry.read_resource("text://motd")).expect("ok"))
    });
    g.bench_function("read_resource_template", |b| {
        b.iter(|| now(registry.read_resource("users://42/profile")).expect("ok"))
    });
    g.finish();

    let mut g = c.benchmark_group("handle_mcp_text");
    for (label, request) in [
        (
            "tools_call",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}),
        ),
        (
            "resources_read_static",
            json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "text://motd"}}),
        ),
        (
            "resources_read_template",
            json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "users://42/profile"}}),
        ),
        (
            "prompts_get",
            json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "greet", "arguments": {"name": "Ada"}}}),
        ),
    ] {
        let text = request.to_string();
        g.bench_function(label, |b| {
            b.iter(|| now(registry.handle_mcp_text("s", &text)).expect("reply"))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("list_10000");
    for (label, method) in [
        ("resources_list", "resources/list"),
        ("prompts_list", "prompts/list"),
    ] {
        let text = json!({"jsonrpc": "2.0", "id": 1, "method": method}).to_string();
        let reply = now(registry.handle_mcp_text("many", &text)).expect("reply");
        assert!(
            reply.len() > 1_000_000,
            "{label}: the whole listing in one page"
        );
        g.bench_function(label, |b| {
            b.iter(|| now(registry.handle_mcp_text("many", &text)).expect("reply"))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

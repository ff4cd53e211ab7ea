//! The cost of calling a trivial tool through the registry, against calling it directly.
//!
//! - `direct`: deserialize the typed arguments from a JSON value, call the function, build the
//!   result: the floor any registry call pays.
//! - `call_tool_by_name`: lookup, timeout, panic isolation, same work.
//! - `handle_mcp_message`: a full `tools/call` JSON-RPC request in, reply `Value` out.
//! - `value_floor` (for information): the least a `Value`-in, `Value`-out `tools/call` can do:
//!   take the request apart, the direct work, build the reply.
//! - `handle_mcp_text`: the same request as JSON text in, reply text out.
//! - `handle_mcp_text_macro`: `handle_mcp_text` of the same call to a `#[mcp_tool]` function.
//! - `text_floor`: the least a text-in, text-out `tools/call` can do: a borrowed typed
//!   envelope, the arguments deserialized from their raw text, the call, the typed reply
//!   serialized.
//! - `lookup/{2,10000}`: `call_tool_by_name` in registries of 2 and 10,000 tools.
//! - `tools_list/10000`: `tools/list` of a 10,000-tool server, as a `Value` and as text.
//!
//! Every path here completes on its first poll, so each iteration polls its future once with
//! a no-op waker inside the runtime's context: what is timed is the path itself, not an
//! executor's `block_on` round trip (which would add the same constant to every path).

use std::future::IntoFuture;
use std::task::{Context, Poll, Waker};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mcp_registry::{IntoToolResult, Registry, Server, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

async fn add(args: AddArgs) -> String {
    (args.a + args.b).to_string()
}

/// Add two integers.
#[mcp_registry::mcp_tool]
async fn add_macro(a: i64, b: i64) -> String {
    (a + b).to_string()
}

fn add_tool(name: &str) -> Tool {
    Tool::builder(name)
        .description("Add two integers")
        .typed(add)
        .expect("valid tool")
}

fn registry_with(n: usize) -> Registry {
    let mut tools = vec![add_tool("add")];
    tools.extend((1..n).map(|i| add_tool(&format!("add_{i}"))));
    Registry::from_servers([Server::new("math", None, tools).expect("valid server")])
}

/// `text_floor`'s request: borrowed where it can be, the arguments raw.
#[derive(Deserialize)]
struct FloorRequest<'a> {
    #[allow(dead_code)]
    jsonrpc: &'a str,
    #[serde(borrow)]
    id: &'a RawValue,
    method: &'a str,
    #[serde(borrow)]
    params: FloorParams<'a>,
}

#[derive(Deserialize)]
struct FloorParams<'a> {
    name: &'a str,
    #[serde(borrow)]
    arguments: &'a RawValue,
}

/// `text_floor`'s reply.
#[derive(serde::Serialize)]
struct FloorReply<'a> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    result: mcp_registry::CallToolResult,
}

/// Polls a future that completes without waiting, once. Never inlined: a profiler counts
/// a path's cost as this function's (`callgrind --toggle-collect='call_path::now*'`).
#[inline(never)]
fn now<F: IntoFuture>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut.into_future());
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("the benchmarked path waited"),
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // Timers and handles resolve against this runtime.
    let _context = rt.enter();
    let args = json!({"a": 1, "b": 2});
    call_paths(c, &args);
    lookups(c, &args);
    tools_list(c);
}

/// The `call` group: one `add` call by every path, and the floors they are judged against.
fn call_paths(c: &mut Criterion, args: &Value) {
    let registry = registry_with(2);
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}});

    let mut g = c.benchmark_group("call");
    g.bench_function("direct", |b| {
        b.iter_batched(
            || args.clone(),
            |args| {
                now(async move {
                    let parsed: AddArgs = serde_json::from_value(args).expect("valid");
                    add(parsed).await.into_tool_result().expect("ok")
                })
            },
            BatchSize::SmallInput,
        )
    });
    g.bench_function("call_tool_by_name", |b| {
        b.iter_batched(
            || args.clone(),
            |args| now(registry.call_tool_by_name("add", args)).expect("ok"),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("handle_mcp_message", |b| {
        b.iter_batched(
            || request.clone(),
            |request| now(registry.handle_mcp_message("math", request)).expect("reply"),
            BatchSize::SmallInput,
        )
    });
    // For information: the least any `Value`-in, `Value`-out tools/call can do: take the
    // request apart (moving the arguments out), the direct work, and build the reply
    // envelope with its result (`serde_json::Map` is a B-tree: one node and one `String`
    // per member name).
    g.bench_function("value_floor", |b| {
        b.iter_batched(
            || request.clone(),
            |request| now(value_floor(request)),
            BatchSize::SmallInput,
        )
    });
    // For information: the text path of the same request (parse and print included).
    let request_text = request.to_string();
    g.bench_function("handle_mcp_text", |b| {
        b.iter(|| now(registry.handle_mcp_text("math", &request_text)).expect("reply"))
    });
    // For information: the same call of a `#[mcp_tool]` function (its parameters are read
    // from a map built from the arguments' text, where a `typed` tool reads the text).
    let macro_registry =
        Registry::from_servers([Server::new("math", None, [add_macro::tool()]).expect("server")]);
    let macro_text = request_text.replace("\"add\"", "\"add_macro\"");
    g.bench_function("handle_mcp_text_macro", |b| {
        b.iter(|| now(macro_registry.handle_mcp_text("math", &macro_text)).expect("reply"))
    });
    // The least a text-in, text-out `tools/call` can do: parse the request into a borrowed
    // typed envelope (the arguments left as raw text until the tool is known), deserialize
    // the two arguments, call, serialize the typed reply. `handle_mcp_text` is judged
    // against this.
    g.bench_function("text_floor", |b| b.iter(|| now(text_floor(&request_text))));
    g.finish();
}

/// The `lookup` group: `call_tool_by_name` in registries of 2 and 10,000 tools.
fn lookups(c: &mut Criterion, args: &Value) {
    let mut g = c.benchmark_group("lookup");
    for n in [2usize, 10_000] {
        let registry = registry_with(n);
        g.bench_function(n.to_string(), |b| {
            b.iter_batched(
                || args.clone(),
                |args| now(registry.call_tool_by_name("add", args)).expect("ok"),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

/// The `tools_list_10000` group: `tools/list` of a 10,000-tool server, as a value and as text.
fn tools_list(c: &mut Criterion) {
    let big = registry_with(10_000);
    let list: Value = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let list_text = list.to_string();
    let mut g = c.benchmark_group("tools_list_10000");
    g.sample_size(20);
    g.bench_function("value", |b| {
        b.iter_batched(
            || list.clone(),
            |m| now(big.handle_mcp_message("math", m)).expect("reply"),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("text", |b| {
        b.iter(|| now(big.handle_mcp_text("math", &list_text)).expect("reply"))
    });
    g.finish();
}

/// For information: the least any `Value`-in, `Value`-out tools/call can do.
async fn value_floor(request: Value) -> Value {
    let Value::Object(mut message) = request else {
        panic!("an object")
    };
    let id = message.remove("id").expect("id");
    let Some(Value::Object(mut params)) = message.remove("params") else {
        panic!("params")
    };
    drop(message);
    let arguments = params.remove("arguments").expect("arguments");
    drop(params);
    let parsed: AddArgs = serde_json::from_value(arguments).expect("valid");
    let result = add(parsed).await.into_tool_result().expect("ok");
    let text = result.content.into_iter().next().expect("content");
    let mcp_registry::protocol::Content::Text(text) = text else {
        panic!("text")
    };
    let mut block = serde_json::Map::new();
    block.insert("type".to_owned(), Value::from("text"));
    block.insert("text".to_owned(), Value::String(text.text));
    let mut result = serde_json::Map::new();
    result.insert(
        "content".to_owned(),
        Value::Array(vec![Value::Object(block)]),
    );
    let mut reply = serde_json::Map::new();
    reply.insert("jsonrpc".to_owned(), Value::from("2.0"));
    reply.insert("id".to_owned(), id);
    reply.insert("result".to_owned(), Value::Object(result));
    Value::Object(reply)
}

/// The least a text-in, text-out `tools/call` can do.
async fn text_floor(request_text: &str) -> String {
    let request: FloorRequest<'_> = serde_json::from_str(request_text).expect("a request");
    assert_eq!(request.method, "tools/call");
    assert_eq!(request.params.name, "add");
    let parsed: AddArgs = serde_json::from_str(request.params.arguments.get()).expect("valid");
    let result = add(parsed).await.into_tool_result().expect("ok");
    serde_json::to_string(&FloorReply {
        jsonrpc: "2.0",
        id: request.id,
        result,
    })
    .expect("a reply")
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! The stdio transport over an in-memory pipe: lifecycle, concurrency, progress before the
//! reply, cancellation, malformed lines, clean exit at end of input.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::stdio::{Pipe, serve_piped};
use common::{assert_reply, assert_valid, math_server};
use mcp_registry::{Prompt, Registry, Server, Tool, ToolContext};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Steps {
    steps: u32,
}

fn registry() -> Registry {
    let job = Tool::builder("job")
        .typed(|ctx: ToolContext, a: Steps| async move {
            for i in 1..=a.steps {
                ctx.progress(f64::from(i), None, None).unwrap();
                tokio::task::yield_now().await;
            }
            "finished"
        })
        .unwrap();
    let math = math_server();
    let tools = math.tools().iter().cloned().chain([job]);
    Registry::from_servers([Server::builder("math")
        .version("1.2.0")
        .tools(tools)
        .build()
        .unwrap()])
}

fn start() -> (Pipe, tokio::task::JoinHandle<std::io::Result<()>>) {
    serve_piped(registry(), "math")
}

#[tokio::test]
async fn a_whole_session_over_stdio() {
    let (mut c, server) = start();
    c.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    assert_eq!(
        c.recv().await["error"]["code"],
        -32600,
        "initialize comes first"
    );
    c.send(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    let init = c.recv().await;
    assert_reply("2025-11-25", "InitializeResult", &init);
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    c.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#)
        .await;
    let list = c.recv().await;
    assert_reply("2025-11-25", "ListToolsResult", &list);
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 6);

    c.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"job","arguments":{"steps":3},"_meta":{"progressToken":"p"}}}"#).await;
    for i in 1..=3 {
        let n = c.recv().await;
        assert_valid("2025-11-25", "ProgressNotification", &n);
        assert_eq!(n["params"]["progress"], json!(f64::from(i)));
    }
    let reply = c.recv().await;
    assert_eq!(reply["id"], 4);
    assert_eq!(reply["result"]["content"][0]["text"], "finished");

    // Garbage is answered, and the stream goes on.
    c.send("{oops").await;
    assert_eq!(c.recv().await["error"]["code"], -32700);

    // A slow call does not hold up a fast one; a cancelled call gets no reply.
    c.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}"#).await;
    c.send(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}"#).await;
    let fast = c.recv().await;
    assert_eq!(fast["id"], 6);
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#)
        .await;
    c.send(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).await;
    let ping = c.recv().await;
    assert_eq!(
        ping,
        json!({"jsonrpc": "2.0", "id": 7, "result": {}}),
        "no reply for the cancelled call 5"
    );

    // The modern era works on the same stream without initialize state.
    c.send(r#"{"jsonrpc":"2.0","id":8,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#).await;
    let discover = c.recv().await;
    assert_valid("2026-07-28", "DiscoverResultResponse", &discover);

    // End of input: a call still running is answered, then the server exits cleanly.
    c.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":50}}}"#).await;
    c.writer.shutdown().await.unwrap();
    let last = c.recv().await;
    assert_eq!(last["id"], 9);
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

/// Closes the client's side of stdin and waits (10 s at most) for the server to exit cleanly.
async fn close_and_join(mut c: Pipe, server: tokio::task::JoinHandle<std::io::Result<()>>) {
    c.writer.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .unwrap()
        .unwrap()
        .expect("a clean exit");
}

/// Closes the client's side of stdin and waits (an hour of paused time at most) for the
/// server to exit cleanly: how long it took.
async fn close_and_time(
    c: &mut Pipe,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
) -> Duration {
    c.writer.shutdown().await.unwrap();
    let started = tokio::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(3600), server)
        .await
        .expect("the server exits")
        .unwrap()
        .unwrap();
    started.elapsed()
}

/// Replies in any order, collected until `n` have arrived, keyed by id (`null` for errors
/// without one).
async fn recv_n(c: &mut Pipe, n: usize) -> Vec<Value> {
    let mut got = Vec::new();
    for _ in 0..n {
        got.push(c.recv().await);
    }
    got
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[tokio::test]
async fn an_invalid_utf8_line_is_a_parse_error_and_the_server_goes_on() {
    let (mut c, server) = start();
    // Nothing is read back before the bad line: the initialize reply is still queued.
    c.send(INIT).await;
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    c.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":50}}}"#).await;
    c.writer
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"\xFF\"}\n")
        .await
        .unwrap();
    c.writer.write_all(b"\xFF\n").await.unwrap();
    c.send(r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#).await;
    let replies = recv_n(&mut c, 5).await;
    let id = |id: Value| replies.iter().filter(move |r| r["id"] == id);
    assert_eq!(id(json!(1)).count(), 1, "initialize answered: {replies:?}");
    assert_eq!(
        id(json!(2)).count(),
        1,
        "the call in flight answered: {replies:?}"
    );
    assert_eq!(id(json!(4)).next().unwrap()["result"], json!({}));
    let parse_errors: Vec<_> = replies.iter().filter(|r| r.get("id").is_none()).collect();
    assert_eq!(parse_errors.len(), 2, "{replies:?}");
    for e in parse_errors {
        assert_eq!(e["error"]["code"], -32700);
        assert_valid("2025-11-25", "JSONRPCErrorResponse", e);
    }
    close_and_join(c, server).await;
}

#[tokio::test]
async fn an_over_long_line_is_skipped_and_the_next_request_answered() {
    let (mut c, server) = start();
    let limit = mcp_registry::transport::stdio::MAX_LINE_BYTES;
    // Written while the server reads: a 16 MiB + 1 line, then a request on the same write.
    let writing = tokio::spawn(async move {
        let chunk = vec![b'x'; 1 << 20];
        c.writer.write_all(b"\"").await.unwrap();
        for _ in 0..limit >> 20 {
            c.writer.write_all(&chunk).await.unwrap();
        }
        c.writer
            .write_all(b"\"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
            .await
            .unwrap();
        c
    });
    let mut c = writing.await.unwrap();
    let too_long = c.recv().await;
    assert_eq!(too_long["error"]["code"], -32700);
    assert!(
        too_long["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than"),
        "{too_long}"
    );
    assert_eq!(
        c.recv().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": {}})
    );
    // A line of exactly the limit is read (and is not JSON here, so -32700 of its own kind).
    c.send(&"y".repeat(limit)).await;
    let exact = c.recv().await;
    assert_eq!(exact["error"]["code"], -32700);
    assert!(
        !exact["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than")
    );
    c.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).await;
    assert_eq!(c.recv().await["id"], 2);
    close_and_join(c, server).await;
}

#[tokio::test]
async fn a_2025_03_26_client_may_send_batches() {
    let (mut c, server) = start();
    c.send(&INIT.replace("2025-11-25", "2025-03-26")).await;
    assert_eq!(c.recv().await["result"]["protocolVersion"], "2025-03-26");
    // Only notifications: applied, and no reply at all (the ping's reply comes next).
    c.send(r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#)
        .await;
    c.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).await;
    assert_eq!(c.recv().await["id"], 2);
    c.send(r#"[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}},{"jsonrpc":"2.0","id":4,"method":"ping"}]"#).await;
    let replies = c.recv().await;
    assert_valid("2025-03-26", "JSONRPCBatchResponse", &replies);
    assert_eq!(replies[0]["result"]["content"][0]["text"], r#"{"value":5}"#);
    assert_eq!(replies[1]["id"], 4);
    c.send("[]").await;
    assert_eq!(c.recv().await["error"]["code"], -32600);
    close_and_join(c, server).await;
}

/// Regression: an open 2026-07-28 `subscriptions/listen` stream kept the server running after
/// its input closed (the example stayed alive once the client had gone).
#[tokio::test(start_paused = true)]
async fn end_of_input_ends_open_listen_streams() {
    let (mut c, server) = start();
    let listen = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {"_meta": common::modern_meta(), "notifications": {"toolsListChanged": true}}});
    c.send(&listen.to_string()).await;
    let ack = c.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert!(
        close_and_time(&mut c, server).await < mcp_registry::transport::stdio::SHUTDOWN_GRACE,
        "a stream needs no grace"
    );
}

/// A call still running [`SHUTDOWN_GRACE`] after the input closed is cancelled, unanswered,
/// and the server exits.
#[tokio::test(start_paused = true)]
async fn calls_running_past_the_grace_are_cancelled() {
    use mcp_registry::transport::stdio::SHUTDOWN_GRACE;
    let (mut c, server) = start();
    c.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":20000},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#).await;
    // Let the call start before the input ends.
    tokio::time::sleep(Duration::from_millis(10)).await;
    let waited = close_and_time(&mut c, server).await;
    assert!(
        waited >= SHUTDOWN_GRACE - Duration::from_millis(20),
        "{waited:?}"
    );
    assert!(waited < Duration::from_secs(20), "{waited:?}");
    let rest = c.lines.next_line().await.unwrap();
    assert_eq!(rest, None, "no reply to the cancelled call");
}

/// One process for every server: `ALL_SERVERS` over stdio lists and calls the tools of each,
/// and follows a server registered while the session is open.
#[tokio::test]
async fn every_server_of_a_registry_over_one_stdio_session() {
    let registry = registry();
    registry.register_server(common::small_server("other", "whoami", "other"));
    let (mut c, server) = serve_piped(registry.clone(), mcp_registry::ALL_SERVERS);
    c.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
        .await;
    let init = c.recv().await;
    assert_reply("2025-11-25", "InitializeResult", &init);
    assert_eq!(init["result"]["serverInfo"]["name"], "registry");
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    c.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}"#)
        .await;
    assert_eq!(c.recv().await["result"]["content"][0]["text"], "other");
    c.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"job","arguments":{"steps":1}}}"#)
        .await;
    assert_eq!(c.recv().await["result"]["content"][0]["text"], "finished");

    registry.register_server(common::small_server("late", "hello", "hi"));
    assert_eq!(c.recv().await["method"], "notifications/tools/list_changed");
    c.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"hello","arguments":{}}}"#)
        .await;
    assert_eq!(c.recv().await["result"]["content"][0]["text"], "hi");
    drop(c);
    server.await.unwrap().unwrap();
}

/// Initializes a 2025-11-25 session on `c`.
async fn initialize(c: &mut Pipe) {
    c.send(INIT).await;
    assert_eq!(c.recv().await["id"], 1);
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
}

/// Ends the input and reads what the server still writes until it exits: asserts that none
/// of it answers request `id`.
async fn assert_never_answered(
    mut c: Pipe,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    id: u64,
) {
    c.writer.shutdown().await.unwrap();
    let rest = tokio::time::timeout(Duration::from_secs(3600), async {
        let mut rest = Vec::new();
        while let Some(line) = c.lines.next_line().await.unwrap() {
            rest.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        rest
    })
    .await
    .expect("the server exits");
    // A batch's replies are looked into too.
    let mut replies = rest.iter().flat_map(|m| match m {
        Value::Array(batch) => batch.iter().collect(),
        m => vec![m],
    });
    assert!(
        replies.all(|m| m["id"] != id),
        "request {id} was cancelled, yet answered: {rest:?}"
    );
    server.await.unwrap().unwrap();
}

/// A line cancelling request `id`.
fn cancel(id: u64) -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}})
        .to_string()
}

/// Regression (D4): a request and its `notifications/cancelled` in one write lost the
/// cancellation on a current-thread runtime (the request entered the in-flight table only
/// once its task ran, after the cancellation was read), and the call answered.
#[tokio::test(start_paused = true)]
async fn a_cancellation_right_behind_its_request_is_not_lost() {
    let (mut c, server) = start();
    initialize(&mut c).await;
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1000}}}"#;
    let ping = r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#;
    let write = format!("{call}\n{}\n{ping}\n", cancel(5));
    c.writer.write_all(write.as_bytes()).await.unwrap();
    assert_eq!(
        c.recv().await,
        json!({"jsonrpc": "2.0", "id": 6, "result": {}})
    );
    assert_never_answered(c, server, 5).await;
}

/// A server with a slow prompt (flagging `started` when it runs) and a two-second tool that
/// may run as a task.
fn slow_registry(started: Arc<tokio::sync::Notify>) -> Registry {
    let prompt = Prompt::builder("slow")
        .handler(move |_| {
            let started = started.clone();
            async move {
                started.notify_one();
                tokio::time::sleep(Duration::from_secs(1)).await;
                "rendered"
            }
        })
        .unwrap();
    let task = common::tasks::slow_tool(Arc::default(), 2, "two seconds of work");
    Registry::from_servers([Server::builder("s")
        .tool(task)
        .prompt(prompt)
        .build()
        .unwrap()])
}

/// Regression (D5): only `tools/call` and `subscriptions/listen` could be cancelled; a
/// prompt cancelled while it renders answered all the same.
#[tokio::test(start_paused = true)]
async fn a_prompt_cancelled_while_it_renders_is_not_answered() {
    let started = Arc::new(tokio::sync::Notify::new());
    let (mut c, server) = serve_piped(slow_registry(started.clone()), "s");
    initialize(&mut c).await;
    c.send(r#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"slow"}}"#)
        .await;
    started.notified().await;
    c.send(&cancel(5)).await;
    c.send(r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#).await;
    assert_eq!(c.recv().await["id"], 6);
    assert_never_answered(c, server, 5).await;
}

/// Regression (D5): a 2025-11-25 `tasks/result` (which waits for the task's end) went on
/// waiting when cancelled, and answered once the task ended.
#[tokio::test(start_paused = true)]
async fn a_tasks_result_wait_cancelled_is_not_answered() {
    let (mut c, server) = serve_piped(slow_registry(Arc::default()), "s");
    initialize(&mut c).await;
    c.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","task":{}}}"#)
        .await;
    let created = c.recv().await;
    let task = created["result"]["task"]["taskId"].clone();
    assert!(task.is_string(), "{created}");
    let result =
        json!({"jsonrpc": "2.0", "id": 6, "method": "tasks/result", "params": {"taskId": task}});
    c.send(&result.to_string()).await;
    // Answered after the wait started (tasks run in the order they were spawned).
    c.send(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).await;
    assert_eq!(c.recv().await["id"], 7);
    c.send(&cancel(6)).await;
    c.send(r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#).await;
    assert_eq!(c.recv().await["id"], 8);
    assert_never_answered(c, server, 6).await;
}

/// Regression: the in-flight table was keyed by id alone, so a request that ended removed
/// the entry of a later request reusing its id, which no cancellation could then stop.
#[tokio::test(start_paused = true)]
async fn a_request_reusing_an_id_stays_cancellable() {
    let (mut c, server) = start();
    initialize(&mut c).await;
    let call = |ms: u64| {
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "sleep", "arguments": {"ms": ms}}})
        .to_string()
    };
    c.send(&call(1000)).await;
    c.send(&call(3000)).await;
    assert_eq!(
        c.recv().await["result"]["content"][0]["text"],
        "sleep slept 1000"
    );
    c.send(&cancel(5)).await;
    c.send(r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#).await;
    assert_eq!(c.recv().await["id"], 6);
    assert_never_answered(c, server, 5).await;
}

/// A request in a 2025-03-26 batch is in the in-flight table once read too: a cancellation
/// right behind the batch stops it.
#[tokio::test(start_paused = true)]
async fn a_cancellation_right_behind_a_batch_is_not_lost() {
    let (mut c, server) = start();
    c.send(&INIT.replace("2025-11-25", "2025-03-26")).await;
    assert_eq!(c.recv().await["id"], 1);
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let batch = r#"[{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1000}}}]"#;
    let ping = r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#;
    let write = format!("{batch}\n{}\n{ping}\n", cancel(5));
    c.writer.write_all(write.as_bytes()).await.unwrap();
    assert_eq!(c.recv().await["id"], 6);
    assert_never_answered(c, server, 5).await;
}

/// Serves `registry` over a 1 KiB pipe; the client's end initialized, then the flood called.
async fn serve_flooded(
    registry: Registry,
) -> (
    common::stdio::Pipe,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let (client_end, server_end) = tokio::io::duplex(1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    let served = tokio::spawn(async move {
        mcp_registry::transport::stdio::serve_io(registry, "s", server_read, server_write).await
    });
    let (read, writer) = tokio::io::split(client_end);
    let mut c = common::stdio::Pipe {
        writer,
        lines: tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(read)),
    };
    c.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    assert_eq!(c.recv().await["id"], 1);
    c.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    c.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flood","arguments":{"steps":0},"_meta":{"progressToken":"p"}}}"#).await;
    (c, served)
}

/// D8: a client that stops reading while a tool reports progress no longer grows the
/// server's writer queue without limit: past the outbox's bound the oldest notifications are
/// dropped, the reply is kept, and it arrives once the client reads again.
#[tokio::test]
async fn a_client_that_does_not_read_holds_the_writer_queue_at_the_outbox_bound() {
    let done = std::sync::Arc::new(tokio::sync::Notify::new());
    let (mut c, server) = serve_flooded(Registry::from_servers([common::flooding_server(
        done.clone(),
    )]))
    .await;
    tokio::time::timeout(Duration::from_secs(30), done.notified())
        .await
        .expect("the tool sent its notifications");
    // The client reads again: what was queued for it, then the reply.
    let mut progress = Vec::new();
    let reply = loop {
        let message = c.recv().await;
        if message.get("id").is_some() {
            break message;
        }
        progress.push(message["params"]["progress"].as_f64().unwrap());
    };
    assert_eq!(reply["id"], 2);
    assert_eq!(reply["result"]["content"][0]["text"], "flooded");
    // The queue's bound, plus what the pipe and the writer's buffer held before it filled.
    let slack = 200;
    assert!(
        progress.len() <= mcp_registry::OUTBOX_CAPACITY + slack,
        "{} notifications were kept for a client that did not read",
        progress.len()
    );
    assert!(progress.len() >= mcp_registry::OUTBOX_CAPACITY);
    assert_eq!(
        progress.last(),
        Some(&f64::from(common::FLOOD)),
        "the newest are kept"
    );
    assert!(progress.is_sorted(), "in order");
    close_and_join(c, server).await;
}

/// D8: a client that never reads is disconnected once a write has been blocked for
/// `WRITE_STALL_LIMIT`: `serve_io` ends with a timeout error instead of holding it for good.
#[tokio::test(start_paused = true)]
async fn a_client_that_never_reads_is_disconnected_in_the_end() {
    let done = std::sync::Arc::new(tokio::sync::Notify::new());
    let (c, server) = serve_flooded(Registry::from_servers([common::flooding_server(done)])).await;
    let limit = mcp_registry::transport::stdio::WRITE_STALL_LIMIT;
    let served = tokio::time::timeout(limit * 2, server)
        .await
        .expect("the server gave up on the client")
        .unwrap();
    let error = served.unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::TimedOut, "{error}");
    drop(c);
}

/// D8: listen streams over stdio are capped like requests are: past `MAX_STREAMS` open, a
/// new one is refused (-32603) and the open ones go on.
#[tokio::test(start_paused = true)]
async fn listen_streams_past_the_cap_are_refused() {
    use mcp_registry::transport::stdio::MAX_STREAMS;
    let (mut c, server) = start();
    for id in 0..=MAX_STREAMS {
        let listen = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": {"_meta": common::modern_meta(), "notifications": {"toolsListChanged": true}}});
        c.send(&listen.to_string()).await;
        let answer = c.recv().await;
        if id < MAX_STREAMS {
            assert_eq!(
                answer["method"], "notifications/subscriptions/acknowledged",
                "{answer}"
            );
        } else {
            assert_eq!(answer["id"], id, "{answer}");
            assert_eq!(answer["error"]["code"], -32603, "{answer}");
            assert!(
                answer["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("subscriptions/listen"),
                "{answer}"
            );
        }
    }
    close_and_join(c, server).await;
}

//! The client against scripted hostile servers: a stdio child (a shell script) and loopback
//! HTTP servers that send over-long, never-ending or non-UTF-8 messages, redirect elsewhere
//! or fail with HTTP errors. Every limit is reported by name, and the connection lives on.

use std::time::Duration;

use mcp_registry::client::transport::TransportError;
use mcp_registry::client::{Client, ClientBuilder, ClientError, RequestPolicy};
use mcp_registry::protocol::ProtocolVersion;
use serde_json::json;

/// A generous bound on every wait: a hung client fails the test instead of hanging it.
const BOUND: Duration = Duration::from_secs(30);

const INIT_REPLY: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}}"#;

fn builder() -> ClientBuilder {
    Client::builder()
        .protocol_version(ProtocolVersion::V2025_06_18)
        .policy("tools/call", RequestPolicy::new().retries(0))
}

fn reply(id: u64, text: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
        .to_string()
}

fn script(body: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(body);
    command
}

async fn bounded<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, future)
        .await
        .expect("the client answered within the bound")
}

/// A client of the scripted server `body`, its messages limited to `limit` bytes, whose first
/// call has failed by that limit (named in the error).
async fn first_call_over_limit(body: &str, limit: usize) -> Client {
    let client = bounded(
        builder()
            .max_message_bytes(limit)
            .connect_stdio(script(body)),
    )
    .await
    .unwrap();
    let error = bounded(client.call_tool("t", json!({}))).await.unwrap_err();
    assert!(
        matches!(
            &error,
            ClientError::Transport(TransportError::TooLarge { limit: l, .. }) if *l == limit
        ),
        "{error}"
    );
    assert!(error.to_string().contains("max_message_bytes"), "{error}");
    client
}

#[tokio::test]
async fn stdio_a_line_of_invalid_utf8_is_skipped_and_the_reply_after_it_arrives() {
    let body = format!(
        "read -r l; printf '%s\\n' '{INIT_REPLY}'; read -r l; read -r l; \
         printf 'garbage \\377\\376 here\\n'; printf '%s\\n' '{}'; read -r l; \
         printf '%s\\n' '{}'; cat >/dev/null",
        reply(2, "first"),
        reply(3, "second"),
    );
    let client = bounded(builder().connect_stdio(script(&body)))
        .await
        .unwrap();
    let first = bounded(client.call_tool("t", json!({}))).await.unwrap();
    assert_eq!(first.first_text(), Some("first"));
    let second = bounded(client.call_tool("t", json!({}))).await.unwrap();
    assert_eq!(second.first_text(), Some("second"));
    client.close().await;
}

#[tokio::test]
async fn stdio_an_over_long_reply_fails_its_call_by_the_limit_and_the_next_call_works() {
    let huge = "printf '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"'; \
         head -c 100000 /dev/zero | tr '\\0' a; printf '\"}]}}\\n'";
    let body = format!(
        "read -r l; printf '%s\\n' '{INIT_REPLY}'; read -r l; read -r l; {huge}; read -r l; \
         printf '%s\\n' '{}'; cat >/dev/null",
        reply(3, "small"),
    );
    let client = first_call_over_limit(&body, 4096).await;
    let next = bounded(client.call_tool("t", json!({}))).await.unwrap();
    assert_eq!(next.first_text(), Some("small"));
    client.close().await;
}

#[tokio::test]
async fn stdio_a_reply_that_never_ends_fails_its_call_by_the_limit() {
    // The line goes on until the client closes the pipe: it is never buffered whole.
    let body = format!(
        "read -r l; printf '%s\\n' '{INIT_REPLY}'; read -r l; read -r l; \
         printf '{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"content\":\"'; \
         while :; do head -c 65536 /dev/zero | tr '\\0' a || exit 0; done"
    );
    let client = first_call_over_limit(&body, 1 << 20).await;
    client.close().await;
}

/// D11: a server that sends 10,000 `elicitation/create` requests at once gets at most the
/// client's cap of handlers running at once; past the ones that wait their turn, requests
/// are refused, and the client goes on (the ping after the flood is answered).
#[tokio::test]
async fn stdio_a_flood_of_server_requests_runs_at_most_the_cap_of_handlers_at_once() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use mcp_registry::protocol::ElicitResult;

    const CAP: usize = 4;
    let flood = r#"awk 'BEGIN { for (i = 1; i <= 10000; i++) printf "{\"jsonrpc\":\"2.0\",\"id\":\"e%d\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"m\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}\n", i }'"#;
    let body = format!(
        "read -r l; printf '%s\\n' '{INIT_REPLY}'; read -r l; read -r l; \
         id=$(printf '%s' \"$l\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/'); \
         ( {flood}; printf '{{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{{}}}}\\n' \"$id\" ) & \
         cat >/dev/null"
    );
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let handler = {
        let (running, most, gate) = (running.clone(), most.clone(), gate.clone());
        move |_| {
            let (running, most, gate) = (running.clone(), most.clone(), gate.clone());
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                let _ = gate.acquire().await;
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(ElicitResult::decline())
            }
        }
    };
    let client = bounded(
        builder()
            .max_concurrent_callbacks(CAP)
            .on_elicitation(handler)
            .connect_stdio(script(&body)),
    )
    .await
    .unwrap();
    // The server answers the ping after its flood: every request has been read by then.
    bounded(client.ping()).await.unwrap();
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert_eq!(running.load(Ordering::SeqCst), CAP, "the cap is used");
    assert!(
        most.load(Ordering::SeqCst) <= CAP,
        "{} handlers ran at once",
        most.load(Ordering::SeqCst)
    );
    gate.add_permits(10_000);
    bounded(client.close()).await;
}

/// A server whose pages loop (it gives the same `nextCursor` again) is not followed forever,
/// the items piling up: the listing fails, naming the loop.
#[tokio::test]
async fn stdio_a_listing_whose_pages_loop_fails_instead_of_growing_for_ever() {
    let body = format!(
        "read -r l; printf '%s\\n' '{INIT_REPLY}'; read -r l; \
         while read -r l; do \
           id=$(printf '%s' \"$l\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/'); \
           printf '{{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{{\"tools\":[{{\"name\":\"t\",\"inputSchema\":{{\"type\":\"object\"}}}}],\"nextCursor\":\"again\"}}}}\\n' \"$id\"; \
         done"
    );
    let client = bounded(builder().connect_stdio(script(&body)))
        .await
        .unwrap();
    let error = bounded(client.list_tools()).await.unwrap_err();
    assert!(
        matches!(&error, ClientError::InvalidResult { method, .. } if method == "tools/list"),
        "{error}"
    );
    assert!(error.to_string().contains("loop"), "{error}");
    client.close().await;
}

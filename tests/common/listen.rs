//! 2026-07-28 `subscriptions/listen` streams opened in-process: the request, the stream's
//! notifications on a channel, and its end by cancellation.

use std::time::Duration;

use mcp_registry::{CallOptions, CancellationToken, NotificationSink, Registry};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::modern_meta;

/// What a stream sends, in order.
pub type Notes = mpsc::UnboundedReceiver<Value>;

/// A `subscriptions/listen` request `id` for the notification types of `filter`.
pub fn listen(id: Value, filter: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
           "params": {"_meta": modern_meta(), "notifications": filter}})
}

/// Starts `message` (a listen) on `server` of `registry` in-process: its task (the reply),
/// its notifications, and the token that cancels it.
pub fn open(
    registry: &Registry,
    server: &str,
    message: Value,
) -> (JoinHandle<Option<Value>>, Notes, CancellationToken) {
    let (tx, rx) = mpsc::unbounded_channel();
    let token = CancellationToken::new();
    let options = CallOptions::new()
        .notifications(NotificationSink::from_channel(tx))
        .cancellation(token.clone());
    let (registry, server) = (registry.clone(), server.to_owned());
    let task = tokio::spawn(async move {
        registry
            .handle_mcp_message(&server, message)
            .options(options)
            .await
    });
    (task, rx, token)
}

/// The stream's next notification (5 s at most).
pub async fn next(rx: &mut Notes) -> Value {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("a notification in time")
        .expect("the stream is open")
}

/// Cancels the stream of `task` with `token`: it ends (5 s at most) without a reply.
pub async fn cancel_unanswered(task: JoinHandle<Option<Value>>, token: CancellationToken) {
    token.cancel();
    let reply = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reply, None, "a cancelled stream gets no reply");
}

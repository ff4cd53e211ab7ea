//! [`CallTool`]: `client.call_tool(name, args)`, awaited as is or given options first
//! (reqwest's request-builder shape).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;

use super::ClientError;
use super::driver::Client;
use super::policy::RequestOptions;
use crate::protocol::CallToolResult;
use crate::tool::BoxFuture;

/// A tool call ([`Client::call_tool`]): await it, or set its options first with
/// [`options`](Self::options) (or [`timeout`](Self::timeout)). It is a [`Future`] itself, so
/// `join_all`, `select!` and the like take it as they took the call before.
///
/// ```
/// # use mcp_registry::{Registry, Server, Tool, client::{Client, RequestOptions}};
/// # use serde_json::json;
/// # use std::time::Duration;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// # let echo = Tool::new("echo", "Echo", json!({"type": "object"}), |a| async move { a.to_string() }).unwrap();
/// # let client = Client::in_process(Registry::from_servers([Server::new("s", None, [echo]).unwrap()]), "s").await.unwrap();
/// let plain = client.call_tool("echo", json!({"x": 1})).await.unwrap();
/// let bounded = client
///     .call_tool("echo", json!({"x": 2}))
///     .options(RequestOptions::new().timeout(Duration::from_secs(5)))
///     .await
///     .unwrap();
/// # assert_eq!(plain.first_text(), Some(r#"{"x":1}"#));
/// # assert_eq!(bounded.first_text(), Some(r#"{"x":2}"#));
/// # }
/// ```
#[must_use = "a tool call does nothing until awaited"]
pub struct CallTool<'a> {
    client: &'a Client,
    name: &'a str,
    call: Call<'a>,
}

enum Call<'a> {
    /// Not polled yet: the options may still change.
    Unsent(Option<(Value, RequestOptions)>),
    Running(BoxFuture<'a, Result<CallToolResult, ClientError>>),
}

impl<'a> CallTool<'a> {
    pub(super) fn new(client: &'a Client, name: &'a str, arguments: Value) -> Self {
        CallTool {
            client,
            name,
            call: Call::Unsent(Some((arguments, RequestOptions::default()))),
        }
    }

    /// The call's timeout, cancellation, progress token or policy.
    pub fn options(mut self, options: RequestOptions) -> Self {
        if let Call::Unsent(Some((_, current))) = &mut self.call {
            *current = options;
        }
        self
    }

    /// The call's timeout (the client's default otherwise).
    pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
        if let Call::Unsent(Some((_, current))) = &mut self.call {
            current.timeout = Some(timeout);
        }
        self
    }
}

impl Future for CallTool<'_> {
    type Output = Result<CallToolResult, ClientError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Call::Unsent(unsent) = &mut this.call
            && let Some((arguments, options)) = unsent.take()
        {
            let (client, name) = (this.client, this.name);
            this.call = Call::Running(Box::pin(async move {
                client.call_tool_with(name, arguments, options).await
            }));
        }
        match &mut this.call {
            Call::Running(future) => future.as_mut().poll(cx),
            // Polled again after its first poll failed to start it: cannot happen.
            Call::Unsent(_) => Poll::Pending,
        }
    }
}

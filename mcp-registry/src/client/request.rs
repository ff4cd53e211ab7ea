//! [`ClientRequest`]: what each of [`Client`]'s request methods returns, to configure and
//! `.await`, in the shape of the registry's [`WithOptions`](crate::WithOptions).

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::ClientError;
use super::driver::Client;
use super::policy::{RequestOptions, RequestPolicy};
use crate::protocol::ReadResourceResult;
use crate::protocol::{CallToolResult, CompleteParams, CompleteResult, GetPromptResult};

/// A request of a [`Client`] to configure and `.await`: what to send (`T`, one of this
/// module's targets) and its [`RequestOptions`]. It is a [`Future`]: nothing is sent until it
/// is first polled, and options set after that have no effect.
///
/// ```no_run
/// # async fn demo(client: mcp_registry::client::Client) -> Result<(), mcp_registry::client::ClientError> {
/// use std::time::Duration;
/// let result = client
///     .call_tool("add", serde_json::json!({"a": 1, "b": 2}))
///     .timeout(Duration::from_secs(5))
///     .progress(7)
///     .await?;
/// # Ok(()) }
/// ```
#[must_use = "a request does nothing until it is awaited"]
pub struct ClientRequest<T: RequestTarget> {
    stage: Stage<T>,
}

/// Where a [`ClientRequest`] is.
enum Stage<T: RequestTarget> {
    /// Not sent yet: what to send, and how.
    Ready(T, RequestOptions),
    /// Sent: its future.
    Running(T::Future),
    /// Between the two, for the moment of the move.
    Moving,
}

/// What a [`ClientRequest`] sends: one of this module's targets. Not for implementing
/// outside the crate.
pub trait RequestTarget: Sized + Unpin + sealed::Target {
    /// What the request's success gives.
    type Output;
    /// The request on its way.
    #[doc(hidden)]
    type Future: Future<Output = Result<Self::Output, ClientError>> + Unpin;
    /// Sends the request under `options`.
    #[doc(hidden)]
    fn start(self, options: RequestOptions) -> Self::Future;
}

pub(super) mod sealed {
    /// Seals [`RequestTarget`](super::RequestTarget).
    pub trait Target {}
}

impl<T: RequestTarget> ClientRequest<T> {
    pub(super) fn new(target: T) -> Self {
        ClientRequest {
            stage: Stage::Ready(target, RequestOptions::default()),
        }
    }

    /// The options, while the request is not sent.
    fn set(mut self, set: impl FnOnce(&mut RequestOptions)) -> Self {
        if let Stage::Ready(_, options) = &mut self.stage {
            set(options);
        }
        self
    }

    /// Gives up after `timeout` (overrides the client's default).
    pub fn timeout(self, timeout: Duration) -> Self {
        self.set(|o| o.timeout = Some(timeout))
    }

    /// Cancels the request (on the wire too) when `token` is cancelled.
    pub fn cancellation(self, token: CancellationToken) -> Self {
        self.set(|o| o.cancellation = Some(token))
    }

    /// Asks for `notifications/progress` under `token`; they arrive on
    /// [`Client::notifications`].
    pub fn progress(self, token: impl Into<Value>) -> Self {
        let token = token.into();
        self.set(|o| o.progress_token = Some(token))
    }

    /// Retries, backoff and approval for this request, instead of the client's
    /// [`RequestPolicy`] for its method.
    pub fn policy(self, policy: RequestPolicy) -> Self {
        self.set(|o| o.policy = Some(policy))
    }

    /// Every option at once, replacing those set before.
    pub fn options(self, options: RequestOptions) -> Self {
        self.set(|o| *o = options)
    }
}

impl<T: RequestTarget> Future for ClientRequest<T> {
    type Output = Result<T::Output, ClientError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Stage::Ready(..) = this.stage {
            let Stage::Ready(target, options) = std::mem::replace(&mut this.stage, Stage::Moving)
            else {
                unreachable!("matched just above")
            };
            this.stage = Stage::Running(target.start(options));
        }
        match &mut this.stage {
            Stage::Running(future) => Pin::new(future).poll(cx),
            Stage::Ready(..) | Stage::Moving => unreachable!("started just above"),
        }
    }
}

impl<T: RequestTarget + fmt::Debug> fmt::Debug for ClientRequest<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.stage {
            Stage::Ready(target, options) => f
                .debug_struct("ClientRequest")
                .field("target", target)
                .field("options", options)
                .finish(),
            Stage::Running(_) | Stage::Moving => f.write_str("ClientRequest(sent)"),
        }
    }
}

/// `tools/call`: what [`Client::call_tool`] sends.
#[derive(Debug)]
pub struct CallTool<'a> {
    pub(super) client: &'a Client,
    pub(super) name: &'a str,
    pub(super) arguments: Value,
}

/// `prompts/get`: what [`Client::get_prompt`] sends.
#[derive(Debug)]
pub struct GetPrompt<'a> {
    pub(super) client: &'a Client,
    pub(super) name: &'a str,
    pub(super) arguments: BTreeMap<String, String>,
}

/// `resources/read`: what [`Client::read_resource`] sends.
#[derive(Debug)]
pub struct ReadResource<'a> {
    pub(super) client: &'a Client,
    pub(super) uri: &'a str,
}

/// `completion/complete`: what [`Client::complete`] sends.
#[derive(Debug)]
pub struct Complete<'a> {
    pub(super) client: &'a Client,
    pub(super) params: CompleteParams,
}

/// Any request by method: what [`Client::request`] sends.
#[derive(Debug)]
pub struct AnyRequest<'a> {
    pub(super) client: &'a Client,
    pub(super) method: &'a str,
    pub(super) params: Option<Map<String, Value>>,
}

/// [`RequestTarget`] for `$target`, run by `$run` with the options.
macro_rules! target {
    ($target:ident => $output:ty, |$t:ident, $o:ident| $run:expr) => {
        impl $crate::client::request::sealed::Target for $target<'_> {}

        impl<'a> $crate::client::request::RequestTarget for $target<'a> {
            type Output = $output;
            type Future = $crate::tool::BoxFuture<'a, Result<$output, $crate::client::ClientError>>;

            fn start(self, $o: $crate::client::RequestOptions) -> Self::Future {
                let $t = self;
                Box::pin(async move { $run.await })
            }
        }
    };
}
/// The targets of other client modules (`tasks`) use it too.
pub(super) use target;

target!(CallTool => CallToolResult, |t, o| t.client.run_call_tool(t.name, t.arguments, &o));
target!(GetPrompt => GetPromptResult, |t, o| t.client.run_get_prompt(t.name, t.arguments, &o));
target!(ReadResource => ReadResourceResult, |t, o| t.client.run_read_resource(t.uri, &o));
target!(Complete => CompleteResult, |t, o| t.client.run_complete(t.params, &o));
target!(AnyRequest => Value, |t, o| t.client.run_request(t.method, t.params, &o));

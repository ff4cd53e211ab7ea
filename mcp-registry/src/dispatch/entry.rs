//! The registry's public entry points for one message: [`Registry::handle_mcp_message`] and
//! [`Registry::handle_mcp_text`], configured as a [`MessageRequest`] and awaited as a
//! hand-written future that starts the message on its first poll.

use std::future::IntoFuture;
use std::task::{Context, Poll};

use serde_json::Value;

use super::reply::{
    empty_batch, error_value, parse_error, refuse_too_deep, reply_text, reply_value,
};
use super::{Answer, Connection, Dispatcher, PendingCall, Step};
use crate::protocol::decode::{TextMessage, decode, decode_text};
use crate::protocol::{RequestId, exceeds_max_depth};
use crate::registry::{CallOptions, CallerView, Registry, WithOptions};
use crate::tool::BoxFuture;

/// A message taken as far as it goes without waiting, its reply written as `R` (a `Value`
/// or text).
enum Started<R> {
    /// The reply, if any.
    Done(Option<R>),
    /// A batch, to serve element by element (under the caller's options).
    Batch(Vec<Value>),
    /// A tool call to await, then to answer under this id.
    Calling(Option<RequestId>, PendingCall),
    /// Other work to await, then to answer under this id.
    Waiting(Option<RequestId>, BoxFuture<'static, Answer>),
}

impl<R> Started<R> {
    fn new(
        started: Option<(Option<RequestId>, Step)>,
        write: fn(Option<RequestId>, Answer) -> Option<R>,
    ) -> Self {
        match started {
            None => Started::Done(None),
            Some((id, Step::Answered(answer) | Step::Changed(answer, _))) => {
                Started::Done(write(id, answer))
            }
            Some((id, Step::Calling(call))) => Started::Calling(id, call),
            Some((id, Step::Waiting(answer))) => Started::Waiting(id, answer),
        }
    }
}

impl Registry {
    /// Answers one MCP JSON-RPC message addressed to the server named `server`.
    ///
    /// Returns `Some(reply)` for a request and `None` for a notification (or a response).
    /// Every failure is a reply, never a panic: see the crate docs for the error mapping. A
    /// JSON-RPC batch (an array) is answered element by element: this entry point has no
    /// negotiated version to refuse it by.
    ///
    /// ```
    /// # use mcp_registry::{Registry, Server, Tool};
    /// # use serde_json::json;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let hi = Tool::new("hi", "Say hi", json!({"type": "object"}), |_| async { "hi" }).unwrap();
    /// let registry = Registry::from_servers([Server::new("greet", None, [hi]).unwrap()]);
    /// let reply = registry
    ///     .handle_mcp_message("greet", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    ///     .await
    ///     .unwrap();
    /// assert_eq!(reply["result"]["tools"][0]["name"], "hi");
    /// let none = registry
    ///     .handle_mcp_message("greet", json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    ///     .await;
    /// assert!(none.is_none());
    /// # }
    /// ```
    pub fn handle_mcp_message<'a>(
        &'a self,
        server: &'a str,
        message: Value,
    ) -> MessageRequest<'a, Value> {
        MessageRequest::viewed(self, server, message, None)
    }

    /// [`handle_mcp_message`](Self::handle_mcp_message) as far as it goes without waiting:
    /// what is awaited after it stays small.
    fn start_value(
        &self,
        server: &str,
        message: Value,
        options: &mut CallOptions,
    ) -> Started<Value> {
        match message {
            Value::Array(_) if exceeds_max_depth(&message) => {
                Started::Done(refuse_too_deep(message))
            }
            Value::Array(batch) => Started::Batch(batch),
            message => Started::new(
                Dispatcher::new(self).start_message(
                    server,
                    decode(message),
                    options,
                    Connection::default(),
                ),
                reply_value,
            ),
        }
    }

    /// The text form for transports: one JSON text in, one JSON text out. Unparseable text is
    /// answered with -32700. `tools/list` replies are written from the list serialized once
    /// per registry change.
    pub fn handle_mcp_text<'a>(
        &'a self,
        server: &'a str,
        text: &'a str,
    ) -> MessageRequest<'a, &'a str> {
        MessageRequest::viewed(self, server, text, None)
    }

    /// [`handle_mcp_text`](Self::handle_mcp_text) as far as it goes without waiting.
    fn start_text(&self, server: &str, text: &str, options: &mut CallOptions) -> Started<String> {
        let message = match decode_text(text) {
            Ok(TextMessage::One(message)) => message,
            Ok(TextMessage::Batch(batch)) => return Started::Batch(batch),
            Err(e) => return Started::Done(Some(parse_error(e).to_string())),
        };
        Started::new(
            Dispatcher::new(self).start_message(server, message, options, Connection::default()),
            reply_text,
        )
    }

    /// Serves a batch element by element. Boxed: a batch is rare, and its future (a
    /// message's, for each element) would otherwise size every single message's.
    fn handle_batch<'a>(
        &'a self,
        server: &'a str,
        batch: Vec<Value>,
        options: CallOptions,
    ) -> BoxFuture<'a, Option<Value>> {
        Box::pin(async move {
            if batch.is_empty() {
                return Some(error_value(None, empty_batch()));
            }
            let dispatcher = Dispatcher::new(self);
            let mut replies = Vec::new();
            for message in batch {
                if let Some((id, answer)) = dispatcher
                    .message(
                        server,
                        decode(message),
                        options.clone(),
                        Connection::default(),
                    )
                    .await
                    && let Some(reply) = reply_value(id, answer)
                {
                    replies.push(reply);
                }
            }
            (!replies.is_empty()).then_some(Value::Array(replies))
        })
    }
}

/// A message to answer, configured and `.await`ed: what [`Registry::handle_mcp_message`]
/// (`I` a `Value`) and [`Registry::handle_mcp_text`] (`I` JSON text) return. Awaited, it
/// gives the reply in the same form, or `None` for a notification, a response or a
/// request cancelled through the options (no reply, as the spec asks).
pub type MessageRequest<'a, I> = WithOptions<Message<'a, I>>;

/// What a [`MessageRequest`] answers: one message to one server of a registry.
pub struct Message<'a, I> {
    registry: &'a Registry,
    server: &'a str,
    input: I,
    /// A filtered view's listing filter and gate, kept whatever options are set.
    view: Option<CallerView>,
}

impl<'a, I> MessageRequest<'a, I> {
    /// `input` to `server` of `registry`, seen through `view`.
    pub(crate) fn viewed(
        registry: &'a Registry,
        server: &'a str,
        input: I,
        view: Option<CallerView>,
    ) -> Self {
        WithOptions::new(Message {
            registry,
            server,
            input,
            view,
        })
    }
}

#[inline(always)]
fn handling<'a, I: Input<'a>>(request: MessageRequest<'a, I>) -> Handling<'a, I> {
    let Message {
        registry,
        server,
        input,
        view,
    } = request.target;
    let mut options = request.options;
    if let Some(view) = view {
        view.apply(&mut options);
    }
    Handling::new(registry, server, input, options)
}

impl<'a> IntoFuture for MessageRequest<'a, Value> {
    type Output = Option<Value>;
    type IntoFuture = MessageFuture<'a>;

    #[inline(always)]
    fn into_future(self) -> MessageFuture<'a> {
        MessageFuture(handling(self))
    }
}

impl<'a> IntoFuture for MessageRequest<'a, &'a str> {
    type Output = Option<String>;
    type IntoFuture = TextFuture<'a>;

    #[inline(always)]
    fn into_future(self) -> TextFuture<'a> {
        TextFuture(handling(self))
    }
}

/// The reply to a [`MessageRequest`] for a `Value`, once awaited.
pub struct MessageFuture<'a>(Handling<'a, Value>);

impl Future for MessageFuture<'_> {
    type Output = Option<Value>;

    #[inline]
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

/// The reply to a [`MessageRequest`] for JSON text, once awaited.
pub struct TextFuture<'a>(Handling<'a, &'a str>);

impl Future for TextFuture<'_> {
    type Output = Option<String>;

    #[inline]
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

/// A message [`Registry::handle_mcp_message`] or [`Registry::handle_mcp_text`] answers: the
/// input a `Value` or JSON text, the reply the same.
trait Input<'a>: Send + Unpin + 'a {
    type Reply: Send;
    /// Takes the message as far as it goes without waiting.
    fn start(
        self,
        registry: &Registry,
        server: &str,
        options: &mut CallOptions,
    ) -> Started<Self::Reply>;
    /// The reply to `id` with `answer`.
    fn write(id: Option<RequestId>, answer: Answer) -> Option<Self::Reply>;
    /// The reply to a batch.
    fn batch(reply: Option<Value>) -> Option<Self::Reply>;
}

impl<'a> Input<'a> for Value {
    type Reply = Value;
    fn start(self, registry: &Registry, server: &str, options: &mut CallOptions) -> Started<Value> {
        registry.start_value(server, self, options)
    }
    fn write(id: Option<RequestId>, answer: Answer) -> Option<Value> {
        reply_value(id, answer)
    }
    fn batch(reply: Option<Value>) -> Option<Value> {
        reply
    }
}

impl<'a> Input<'a> for &'a str {
    type Reply = String;
    fn start(
        self,
        registry: &Registry,
        server: &str,
        options: &mut CallOptions,
    ) -> Started<String> {
        registry.start_text(server, self, options)
    }
    fn write(id: Option<RequestId>, answer: Answer) -> Option<String> {
        reply_text(id, answer)
    }
    fn batch(reply: Option<Value>) -> Option<String> {
        reply.map(|v| v.to_string())
    }
}

/// The future of a [`MessageRequest`]: the message is started on the first poll, then the
/// call it makes (if any) is polled in place until its reply is written. Written by hand
/// rather than as an `async fn`: it is a third of that size, and every caller moves it.
struct Handling<'a, I> {
    registry: &'a Registry,
    server: &'a str,
    state: State<'a, I>,
}

enum State<'a, I> {
    /// Not polled yet.
    Start(Option<(I, CallOptions)>),
    Calling(Option<RequestId>, PendingCall),
    Waiting(Option<RequestId>, BoxFuture<'static, Answer>),
    Batch(BoxFuture<'a, Option<Value>>),
    /// Answered; polled again, it stays pending.
    Done,
}

impl<'a, I: Input<'a>> Handling<'a, I> {
    #[inline(always)]
    fn new(registry: &'a Registry, server: &'a str, input: I, options: CallOptions) -> Self {
        Handling {
            registry,
            server,
            state: State::Start(Some((input, options))),
        }
    }
}

impl<'a, I: Input<'a>> Future for Handling<'a, I> {
    type Output = Option<I::Reply>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        use futures_util::FutureExt as _;
        let this = self.get_mut();
        loop {
            match &mut this.state {
                State::Start(start) => {
                    let Some((input, mut options)) = start.take() else {
                        return Poll::Pending;
                    };
                    this.state = match input.start(this.registry, this.server, &mut options) {
                        Started::Done(reply) => {
                            this.state = State::Done;
                            return Poll::Ready(reply);
                        }
                        Started::Batch(batch) => {
                            State::Batch(this.registry.handle_batch(this.server, batch, options))
                        }
                        Started::Calling(id, call) => State::Calling(id, call),
                        Started::Waiting(id, answer) => State::Waiting(id, answer),
                    };
                }
                State::Calling(id, call) => {
                    let result = std::task::ready!(call.poll(cx));
                    let reply = I::write(id.take(), call.finish(result));
                    this.state = State::Done;
                    return Poll::Ready(reply);
                }
                State::Waiting(id, answer) => {
                    let answer = std::task::ready!(answer.poll_unpin(cx));
                    let reply = I::write(id.take(), answer);
                    this.state = State::Done;
                    return Poll::Ready(reply);
                }
                State::Batch(batch) => {
                    let reply = std::task::ready!(batch.poll_unpin(cx));
                    this.state = State::Done;
                    return Poll::Ready(I::batch(reply));
                }
                State::Done => return Poll::Pending,
            }
        }
    }
}

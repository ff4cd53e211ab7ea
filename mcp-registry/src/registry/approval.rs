//! The host's say before an item runs: [`Approval`] asked with an [`ApprovalRequest`], by a
//! registry ([`RegistryBuilder::approval`](crate::RegistryBuilder::approval), the innermost
//! layer) before any of its tools, prompts, resources or completions runs, and by a client's
//! [`RequestPolicy`](crate::client::RequestPolicy) before a call is sent.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use super::layer::{Layer, Next, Request, RequestKind, Response};
use crate::tool::{BoxFuture, Caller};

/// What an approval callback is asked about: one request, before it runs (or is sent).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The server: its name in the registry, or (for a client) the name the server gave in
    /// its `serverInfo` (empty when it gave none).
    pub server: String,
    /// What the request names: the tool, the prompt, the resource's URI, the completion's
    /// reference, or the skill's `SKILL.md` URI.
    pub tool: String,
    /// The arguments (an object, or `null` for none).
    pub arguments: Value,
    /// What kind of request it is ([`RequestKind::Tool`] for a client's calls).
    pub kind: RequestKind,
    /// Who sent it ([`Caller::Anonymous`] for a client's own calls and in-process calls
    /// that name no one).
    pub caller: Caller,
}

impl ApprovalRequest {
    /// A tool call of `tool` on `server` with `arguments`.
    pub fn tool(server: impl Into<String>, tool: impl Into<String>, arguments: Value) -> Self {
        ApprovalRequest {
            server: server.into(),
            tool: tool.into(),
            arguments,
            kind: RequestKind::Tool,
            caller: Caller::Anonymous,
        }
    }

    /// This request as `caller`'s.
    pub fn with_caller(mut self, caller: Caller) -> Self {
        self.caller = caller;
        self
    }
}

/// An approval callback's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approval {
    /// The call goes ahead.
    Allow,
    /// The call is refused, for this reason: the tool never runs (nothing is sent), and the
    /// caller gets the reason as an error.
    Deny(String),
}

/// An approval callback, shared.
#[derive(Clone)]
pub(crate) struct Approver(
    Arc<dyn Fn(ApprovalRequest) -> BoxFuture<'static, Approval> + Send + Sync>,
);

impl Approver {
    pub(crate) fn new<F, Fut>(approve: F) -> Self
    where
        F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Approval> + Send + 'static,
    {
        Approver(Arc::new(move |request| Box::pin(approve(request))))
    }

    pub(crate) fn ask(&self, request: ApprovalRequest) -> BoxFuture<'static, Approval> {
        (self.0)(request)
    }
}

impl std::fmt::Debug for Approver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Approver(..)")
    }
}

impl Layer for Approver {
    fn call<'a>(&'a self, request: Request, next: Next) -> BoxFuture<'a, Response> {
        Box::pin(async move {
            let asked = ApprovalRequest {
                server: request.server().to_owned(),
                tool: request.name().to_owned(),
                arguments: request.arguments().clone(),
                kind: request.kind(),
                caller: request.context().caller().clone(),
            };
            match self.ask(asked).await {
                Approval::Allow => next.run(request).await,
                Approval::Deny(reason) => request.refuse(reason),
            }
        })
    }
}

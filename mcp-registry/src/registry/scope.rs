//! A request's scope, built once per request for every kind: the context its function sees
//! and the guard it runs under; and the layer stack every kind passes through.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::guard::Guard;
use super::layer::{Endpoint, Layer, Next, Request, Response};
use super::options::TimeoutSetting;
use super::{CallOptions, Registry};
use crate::protocol::meta::RequestMeta;
use crate::protocol::{LoggingLevel, ProtocolVersion, RequestId};
use crate::tool::round::Round;
use crate::tool::{BoxFuture, CallNames, CallScope, InputHandler, ToolContext};

/// What a request brings besides the caller's [`CallOptions`]: set by dispatch for a
/// message, empty for an in-process call.
#[derive(Default)]
pub(crate) struct RequestInfo {
    pub(crate) id: Option<RequestId>,
    pub(crate) protocol_version: Option<ProtocolVersion>,
    /// The request's `_meta` (ahead of the options').
    pub(crate) meta: Option<Box<RequestMeta>>,
    /// The level the message or its session asked for; `None`: the options' level.
    pub(crate) log_level: Option<Option<LoggingLevel>>,
    /// Replaces the options' input handler (2026-07-28: limited to what `_meta` declares).
    pub(crate) input: Option<Arc<dyn InputHandler>>,
    /// 2026-07-28 without an input handler: the run's asks and the answers it was given.
    pub(crate) round: Option<Arc<Round>>,
}

/// A request's scope: the context its function sees, and the guard it runs under.
pub(crate) struct RunScope {
    pub(crate) ctx: ToolContext,
    pub(crate) guard: Guard,
}

impl RunScope {
    /// The scope of `call`, its context built, run under `guard`.
    #[inline(always)]
    pub(crate) fn new(call: CallScope, guard: Guard) -> Self {
        RunScope {
            ctx: ToolContext::from_scope(call),
            guard,
        }
    }
}

/// A layer stack, shared by the requests it serves.
pub(crate) type Layers = Arc<[Arc<dyn Layer>]>;

/// A registry's layers: the host's, then its approval.
#[derive(Debug, Default)]
pub(crate) struct Stack {
    host: Vec<Arc<dyn Layer>>,
    approval: Option<Arc<dyn Layer>>,
    /// Both, built once; `None` when there are none.
    all: Option<Layers>,
}

impl Stack {
    pub(crate) fn new(host: Vec<Arc<dyn Layer>>, approval: Option<Arc<dyn Layer>>) -> Self {
        let all: Vec<_> = host.iter().chain(&approval).cloned().collect();
        Stack {
            all: (!all.is_empty()).then(|| all.into()),
            host,
            approval,
        }
    }

    /// The stack of one request with layers of its own: the host's layers, the caller's,
    /// then approval.
    #[cold]
    fn with(&self, call: Vec<Arc<dyn Layer>>) -> Option<Layers> {
        let layers: Vec<_> = self
            .host
            .iter()
            .cloned()
            .chain(call)
            .chain(self.approval.clone())
            .collect();
        Some(layers.into())
    }
}

impl Registry {
    /// The one place a request's scope is made, whatever its kind: what the caller set in
    /// `options` is taken out of it, and `info` (the message's own facts) wins over it. The
    /// time limit is the caller's, else the item's own (`item_limit`), else the registry's.
    #[inline(always)]
    pub(crate) fn scope(
        &self,
        names: Arc<CallNames>,
        options: &mut CallOptions,
        info: RequestInfo,
        item_limit: Option<Duration>,
    ) -> RunScope {
        let (call, guard) = self.scope_parts(names, options, info, item_limit);
        RunScope::new(call, guard)
    }

    /// [`scope`](Self::scope) with its context not built yet: a function that reads none
    /// (a [`typed`](crate::ToolBuilder::typed) tool's) is started without it when no layer
    /// wants it either.
    #[inline(always)]
    pub(crate) fn scope_parts(
        &self,
        names: Arc<CallNames>,
        options: &mut CallOptions,
        info: RequestInfo,
        item_limit: Option<Duration>,
    ) -> (CallScope, Guard) {
        let limit = match options.timeout {
            TimeoutSetting::RegistryDefault => item_limit.or(self.config().default_timeout),
            TimeoutSetting::Limit(limit) => Some(limit),
            TimeoutSetting::Unlimited => None,
        };
        let cancellation = options.cancellation.take();
        let meta = match info.meta {
            Some(meta) => Some(meta),
            None => options.meta.take(),
        };
        let input = match info.input {
            Some(input) => Some(input),
            None => options.input.take(),
        };
        let call = CallScope {
            names,
            request_id: info.id,
            meta,
            protocol_version: info.protocol_version,
            notifications: options.notifications.take(),
            cancellation: cancellation.clone(),
            registry_extensions: self.config().extensions.clone(),
            call_extensions: std::mem::take(&mut options.extensions),
            caller: std::mem::take(&mut options.caller),
            log_level: info.log_level.unwrap_or(options.log_level),
            input,
            round: info.round.clone(),
            lenient_scalars: self.config().lenient_scalars,
        };
        let guard = Guard {
            limit,
            cancellation,
            round: info.round,
        };
        (call, guard)
    }

    /// Whether a request with `options` passes layers (the registry's or its caller's),
    /// without taking the caller's out of `options`.
    pub(crate) fn has_layers(&self, options: &CallOptions) -> bool {
        self.config().layers.all.is_some() || options.has_layers()
    }

    /// The layer stack of a request with `options`, when there is one (none: the request
    /// goes straight to its function).
    #[inline(always)]
    pub(crate) fn layers(&self, options: &mut CallOptions) -> Option<Layers> {
        let stack = &self.config().layers;
        if options.view.is_none() {
            return stack.all.clone();
        }
        let layers = options.take_layers();
        if layers.is_empty() {
            return stack.all.clone();
        }
        stack.with(layers)
    }
}

/// Runs `request` through `layers` to `endpoint`; `None` when the caller cancels it while a
/// layer holds it (the endpoint's own run keeps the cancellation after that).
pub(crate) fn through_layers(
    layers: &Layers,
    request: Request,
    endpoint: Endpoint,
) -> BoxFuture<'static, Option<Response>> {
    let cancellation: Option<CancellationToken> = request.context.cancellation().cloned();
    let run = Next::new(layers.clone(), endpoint).run(request);
    Box::pin(async move {
        match cancellation {
            None => Some(run.await),
            Some(token) => token.run_until_cancelled(run).await,
        }
    })
}

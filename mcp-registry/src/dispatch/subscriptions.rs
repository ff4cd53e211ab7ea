//! `subscriptions/listen` (2026-07-28): the acknowledgement first, then only the notification
//! types the client asked for, each tagged with the listen request's id, through the request's
//! notification sink (an HTTP response's SSE stream, stdio's output, an in-process sink), until
//! the caller cancels (no reply) or the server goes away (a graceful `complete` result).

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::changes::ServerChanges;
use super::read_params;
use super::{Answer, Body, ResultMeta, Routed, Step, outcome};
use crate::protocol::{
    ErrorCode, ErrorObject, ListenParams, META_SERVER_INFO, META_SUBSCRIPTION_ID, ProtocolVersion,
    RequestId, SubscriptionFilter, method,
};
use crate::registry::{CallOptions, Registry, UpdateHook};
use crate::server::Server;
use crate::tool::{BoxFuture, NotificationSink};

/// The most URIs one stream may watch.
const MAX_RESOURCE_SUBSCRIPTIONS: usize = super::MAX_SUBSCRIPTIONS;

/// A notification of the stream `id`: `params._meta` carries the subscription id.
fn tagged(method: &str, id: &Value, mut params: Map<String, Value>) -> Value {
    params.insert(
        "_meta".to_owned(),
        Value::Object(Map::from_iter([(
            META_SUBSCRIPTION_ID.to_owned(),
            id.clone(),
        )])),
    );
    serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// What the server agrees to send of `asked`: list changes of what `server` has (tools
/// always), updates of the resources it has. The union of a registry's servers agrees to
/// all: a server with prompts or resources may arrive while the stream is open.
fn agreed(server: &Server, asked: SubscriptionFilter) -> SubscriptionFilter {
    let union = server.is_union();
    SubscriptionFilter {
        tools_list_changed: asked.tools_list_changed,
        prompts_list_changed: asked.prompts_list_changed && (union || !server.prompts().is_empty()),
        resources_list_changed: asked.resources_list_changed && (union || server.has_resources()),
        resource_subscriptions: asked
            .resource_subscriptions
            .filter(|_| union || server.has_resources())
            .map(|uris| {
                let mut seen = HashSet::new();
                uris.into_iter()
                    .filter(|uri| seen.insert(uri.clone()))
                    .take(MAX_RESOURCE_SUBSCRIPTIONS)
                    .collect()
            }),
    }
}

/// Starts a listen: refuses it without a notification sink to deliver to, sends the
/// acknowledgement, and returns the stream's lifetime as the request's answer.
/// `subscriptions/listen`: the stream, until the caller cancels it.
pub(crate) fn listen(request: Routed<'_>, options: &mut CallOptions) -> Step {
    let Routed {
        registry,
        server,
        id,
        params,
        ..
    } = request;
    match start(registry, server.clone(), id, params, options) {
        Ok(stream) => Step::Waiting(stream),
        Err(e) => Step::Answered(Answer::Error(e)),
    }
}

fn start(
    registry: &Registry,
    server: Server,
    id: RequestId,
    params: Map<String, Value>,
    options: &CallOptions,
) -> Result<BoxFuture<'static, Answer>, ErrorObject> {
    let ListenParams { notifications } = read_params(method::SUBSCRIPTIONS_LISTEN, params)?;
    let Some(sink) = options.notifications.clone() else {
        return Err(ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            "subscriptions/listen needs a stream to deliver notifications on (a notification sink)",
        ));
    };
    let filter = agreed(&server, notifications);
    let subscription = id.to_value();
    let ack = serde_json::to_value(&filter)
        .ok()
        .and_then(|f| f.as_object().cloned())
        .unwrap_or_default();
    // Watching from here on, before the acknowledgement: a client that acts on it hears of
    // every change after it, even one made before the stream's first poll.
    let changes = ServerChanges::new(registry, server.address(), Some(&server));
    let updates = watch_resources(registry, &filter, &sink, &subscription);
    sink.send(tagged(
        method::SUBSCRIPTIONS_ACKNOWLEDGED,
        &subscription,
        Map::from_iter([("notifications".to_owned(), Value::Object(ack))]),
    ));
    let stream = Stream {
        registry: registry.clone(),
        server,
        subscription,
        filter,
        sink,
        changes,
        _updates: updates,
    };
    let cancellation = options.cancellation.clone();
    Ok(Box::pin(async move {
        match cancellation {
            Some(token) => token
                .run_until_cancelled(stream.run())
                .await
                .unwrap_or(Answer::Suppressed),
            None => stream.run().await,
        }
    }))
}

/// One open listen stream.
struct Stream {
    registry: Registry,
    server: Server,
    subscription: Value,
    filter: SubscriptionFilter,
    sink: NotificationSink,
    /// The registry's changes, followed since before the acknowledgement.
    changes: ServerChanges,
    /// Sends the resource updates subscribed to, while held (the registry holds it weakly).
    _updates: Option<Arc<UpdateHook>>,
}

impl Stream {
    /// Delivers what the filter asks for until the server is unregistered or disabled (or
    /// the registry is gone), then ends gracefully.
    async fn run(mut self) -> Answer {
        let name = self.server.address();
        while self.changes.changed().await {
            let changes = &mut self.changes;
            if !changes.touched() {
                continue;
            }
            let Ok(now) = self.registry.enabled_server(name) else {
                break;
            };
            let lists = changes.lists(Some(&now));
            let mut methods = Vec::new();
            if self.filter.tools_list_changed {
                methods.push(method::TOOLS_LIST_CHANGED);
            }
            if self.filter.prompts_list_changed && lists.prompts {
                methods.push(method::PROMPTS_LIST_CHANGED);
            }
            if self.filter.resources_list_changed && lists.resources {
                methods.push(method::RESOURCES_LIST_CHANGED);
            }
            for method in methods {
                self.sink
                    .send(tagged(method, &self.subscription, Map::new()));
            }
        }
        let mut answer = outcome(&self.server, Some(ProtocolVersion::MODERN), Body::Empty);
        answer.meta = Some(ResultMeta::Own(Map::from_iter([
            (META_SERVER_INFO.to_owned(), self.server.info().clone()),
            (META_SUBSCRIPTION_ID.to_owned(), self.subscription.clone()),
        ])));
        Answer::Result(answer)
    }
}

/// Sends `notifications/resources/updated` for the URIs `filter` subscribes to, tagged with
/// `subscription`, while the returned hook is held (the registry holds it weakly).
fn watch_resources(
    registry: &Registry,
    filter: &SubscriptionFilter,
    sink: &NotificationSink,
    subscription: &Value,
) -> Option<Arc<UpdateHook>> {
    let uris: HashSet<String> = filter
        .resource_subscriptions
        .iter()
        .flatten()
        .cloned()
        .collect();
    if uris.is_empty() {
        return None;
    }
    let sink = sink.clone();
    let subscription = subscription.clone();
    let hook: Arc<UpdateHook> = Arc::new(move |uri: &str| {
        if !uris.contains(uri) {
            return false;
        }
        let params = Map::from_iter([("uri".to_owned(), Value::String(uri.to_owned()))]);
        sink.send(tagged(method::RESOURCES_UPDATED, &subscription, params));
        true
    });
    registry.on_resource_updated(&hook);
    Some(hook)
}

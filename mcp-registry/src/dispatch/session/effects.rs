//! The changes requests and notifications make to a session: its log level, its handshake
//! (version and client capabilities), its resource subscriptions, and readiness.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Lifecycle, MAX_SUBSCRIPTIONS, ServerSession};
use crate::dispatch::{Answer, Effect};
use crate::protocol::{
    ClientCapabilities, ErrorCode, ErrorObject, ProtocolVersion, RequestId, method,
};

impl ServerSession {
    /// Applies the change a request made to the session, beside its `answer` (which a
    /// subscription past [`MAX_SUBSCRIPTIONS`] turns into a refusal).
    pub(super) fn apply(
        &self,
        effect: Effect,
        admitted_in: &Lifecycle,
        client: Option<ClientCapabilities>,
        answer: Answer,
    ) -> Answer {
        match effect {
            Effect::LogLevel(level) => self.state().log_level = Some(level),
            Effect::Initialized(version) => {
                self.on_initialized(admitted_in, version, client.unwrap_or_default());
            }
            Effect::Subscription { uri, subscribe } => {
                if let Err(refusal) = self.on_subscription(uri, subscribe) {
                    return Answer::Error(refusal);
                }
            }
        }
        answer
    }

    /// Handshake bookkeeping: an `initialize` admitted in `admitted_in` (`Uninitialized`,
    /// or `Error` for a re-initialization) and answered with `version` moves the session to
    /// `Initializing` under it, unless the state changed meanwhile.
    fn on_initialized(
        &self,
        admitted_in: &Lifecycle,
        version: ProtocolVersion,
        client: ClientCapabilities,
    ) {
        let mut state = self.state();
        let before_handshake = matches!(
            state.lifecycle,
            Lifecycle::Uninitialized | Lifecycle::Error(_)
        );
        if before_handshake && state.lifecycle == *admitted_in {
            state.lifecycle = Lifecycle::Initializing;
            state.version = Some(version);
            state.client = Some(Arc::new(client));
        }
    }

    /// Subscription bookkeeping: `resources/subscribe` adds its URI (refused past
    /// [`MAX_SUBSCRIPTIONS`]), `resources/unsubscribe` removes it.
    fn on_subscription(&self, uri: String, subscribe: bool) -> Result<(), ErrorObject> {
        let mut subscribed = self.subscribed();
        if !subscribe {
            subscribed.remove(uri.as_str());
        } else if subscribed.len() < MAX_SUBSCRIPTIONS || subscribed.contains(uri.as_str()) {
            subscribed.insert(uri);
        } else {
            return Err(ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!("a session subscribes to at most {MAX_SUBSCRIPTIONS} resources"),
            ));
        }
        Ok(())
    }

    /// Handles a client's notification: whether it made the session ready (the only
    /// change a notification makes to what the session negotiated).
    pub(super) fn on_notification(&self, method: &str, params: &Map<String, Value>) -> bool {
        match method {
            method::INITIALIZED => {
                let mut state = self.state();
                let ready = state.lifecycle == Lifecycle::Initializing;
                if ready {
                    state.lifecycle = Lifecycle::Ready;
                }
                ready
            }
            method::CANCELLED => {
                if let Some(id) = params.get("requestId").and_then(RequestId::from_value) {
                    self.cancel(&id);
                }
                false
            }
            _ => false,
        }
    }
}

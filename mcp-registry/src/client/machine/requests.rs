//! What the machine sends: the handshake, requests (one typed builder per method),
//! notifications, and what it gives up on (timeouts, forgetting).

use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::protocol::{
    CallToolParams, CancelledNotificationParams, CompleteParams, ErrorObject, ErrorResponse,
    GetPromptParams, InitializeParams, JsonRpcRequest, ListenParams, LoggingLevel,
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
    Notification, PaginatedParams, ProgressNotificationParams, ProtocolEra, RequestId,
    ResourceUriParams, ResultResponse, SetLevelParams, method,
};

use super::*;

impl ClientMachine {
    // ----- the handshake ----------------------------------------------------------------

    /// The `initialize` request (legacy handshake): `Uninitialized` → `Initializing`.
    pub fn initialize(&mut self, now: Instant) -> Result<OutgoingRequest, ClientStateError> {
        if self.lifecycle != ClientLifecycle::Uninitialized {
            return Err(self.refuse("send initialize"));
        }
        let params = InitializeParams {
            protocol_version: Some(self.legacy_request.as_str().to_owned()),
            capabilities: to_map(&self.config.capabilities),
            client_info: Some(self.config.info.clone()),
        };
        self.lifecycle = ClientLifecycle::Initializing;
        let settings = self.handshake_settings();
        Ok(self.push(
            method::INITIALIZE,
            Some(to_map(&params)),
            &settings,
            now,
            false,
        ))
    }

    /// The `server/discover` probe (2026-07-28): `Uninitialized` → `Initializing`.
    pub fn discover(&mut self, now: Instant) -> Result<OutgoingRequest, ClientStateError> {
        if self.lifecycle != ClientLifecycle::Uninitialized {
            return Err(self.refuse("send server/discover"));
        }
        self.lifecycle = ClientLifecycle::Initializing;
        let settings = self.handshake_settings();
        Ok(self.push(method::DISCOVER, None, &settings, now, true))
    }

    fn handshake_settings(&self) -> RequestSettings {
        RequestSettings {
            timeout: self.config.handshake_timeout,
            progress_token: None,
        }
    }

    /// `notifications/initialized`, once `initialize` is answered: `Initializing` → `Ready`.
    pub fn initialized(&mut self) -> Result<OutgoingNotification, ClientStateError> {
        if self.lifecycle != ClientLifecycle::Initializing || !self.initialize_answered {
            return Err(self.refuse("send notifications/initialized"));
        }
        self.lifecycle = ClientLifecycle::Ready;
        Ok(Notification::new(method::INITIALIZED, None))
    }

    // ----- requests ---------------------------------------------------------------------

    fn ready(&self, method: &str) -> Result<(), ClientStateError> {
        if self.lifecycle == ClientLifecycle::Ready {
            Ok(())
        } else {
            Err(self.refuse(format!("send {method}")))
        }
    }

    /// Registers and builds a request. `modern_meta` forces the 2026-07-28 `_meta` (the
    /// discover probe, before a version is agreed).
    fn push(
        &mut self,
        method: &str,
        params: Option<Map<String, Value>>,
        options: &RequestSettings,
        now: Instant,
        modern_meta: bool,
    ) -> OutgoingRequest {
        let id = RequestId::from(self.next_id);
        self.next_id += 1;
        let mut params = params;
        let modern = modern_meta || self.era() == Some(ProtocolEra::Modern);
        // The caller's trace (feature `otel`), carried on: `traceparent`, `tracestate`.
        let trace = crate::telemetry::current_trace_context();
        if modern || options.progress_token.is_some() || !trace.is_empty() {
            let params = params.get_or_insert_with(Map::new);
            let mut meta = match params.remove("_meta") {
                Some(Value::Object(meta)) => meta,
                _ => Map::new(),
            };
            meta.extend(trace);
            if let Some(token) = &options.progress_token {
                meta.insert("progressToken".into(), token.clone());
            }
            if modern {
                let version = self.negotiated.unwrap_or(self.modern_request);
                meta.insert(META_PROTOCOL_VERSION.into(), version.as_str().into());
                meta.insert(
                    META_CLIENT_INFO.into(),
                    serde_json::to_value(&self.config.info).unwrap_or_default(),
                );
                let mut capabilities = to_map(&self.config.capabilities);
                // Beside those the capabilities declare (`ClientBuilder::extension`).
                if !self.config.extensions.is_empty()
                    && let Value::Object(declared) = capabilities
                        .entry("extensions")
                        .or_insert_with(|| Value::Object(Map::new()))
                {
                    declared.extend(self.config.extensions.clone());
                }
                meta.insert(META_CLIENT_CAPABILITIES.into(), Value::Object(capabilities));
                if let Some(level) = self.log_level {
                    meta.insert(
                        META_LOG_LEVEL.into(),
                        serde_json::to_value(level).unwrap_or_default(),
                    );
                }
            }
            params.insert("_meta".into(), Value::Object(meta));
        }
        self.pending.insert(
            id.clone(),
            Pending {
                method: method.to_owned(),
                sent_at: now,
                deadline: options.timeout.map(|t| now + t),
            },
        );
        // The one fact HTTP mirrors into a header, read once here where the params are built.
        let key = match method {
            method::TOOLS_CALL | method::PROMPTS_GET => Some("name"),
            method::RESOURCES_READ => Some("uri"),
            method::TASKS_GET | method::TASKS_UPDATE | method::TASKS_CANCEL => Some("taskId"),
            _ => None,
        };
        let name = key
            .and_then(|k| params.as_ref()?.get(k)?.as_str())
            .map(str::to_owned);
        OutgoingRequest {
            id: id.clone(),
            name,
            request: JsonRpcRequest::new(id, method.to_owned(), params),
        }
    }

    /// Any request, by method and params (`ready` required; `ping` also while
    /// initializing).
    pub fn request(
        &mut self,
        method: &str,
        params: Option<Map<String, Value>>,
        options: &RequestSettings,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        let allowed = self.is_ready()
            || (method == crate::protocol::method::PING
                && self.lifecycle == ClientLifecycle::Initializing);
        if !allowed {
            return Err(self.refuse(format!("send {method}")));
        }
        Ok(self.push(method, params, options, now, false))
    }

    fn typed<P: Serialize>(
        &mut self,
        method: &str,
        params: &P,
        options: &RequestSettings,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.ready(method)?;
        let params = to_map(params);
        let params = (!params.is_empty()).then_some(params);
        Ok(self.push(method, params, options, now, false))
    }

    /// A typed request with the default settings.
    fn plain<P: Serialize>(
        &mut self,
        method: &str,
        params: &P,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.typed(method, params, &RequestSettings::default(), now)
    }

    /// A page of a `*/list` method, from `cursor`.
    fn list(
        &mut self,
        method: &str,
        cursor: Option<String>,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.plain(method, &PaginatedParams { cursor }, now)
    }

    /// A request whose params are one resource's URI.
    fn for_uri(
        &mut self,
        method: &str,
        uri: &str,
        options: &RequestSettings,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        let params = ResourceUriParams { uri: uri.into() };
        self.typed(method, &params, options, now)
    }

    /// `ping`.
    pub fn ping(&mut self, now: Instant) -> Result<OutgoingRequest, ClientStateError> {
        self.request(method::PING, None, &RequestSettings::default(), now)
    }

    /// `tools/list`, from `cursor`.
    pub fn list_tools(
        &mut self,
        cursor: Option<String>,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.list(method::TOOLS_LIST, cursor, now)
    }

    /// `tools/call`.
    pub fn call_tool(
        &mut self,
        params: &CallToolParams,
        options: &RequestSettings,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.typed(method::TOOLS_CALL, params, options, now)
    }

    /// `resources/list`, from `cursor`.
    pub fn list_resources(
        &mut self,
        cursor: Option<String>,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.list(method::RESOURCES_LIST, cursor, now)
    }

    /// `resources/templates/list`, from `cursor`.
    pub fn list_resource_templates(
        &mut self,
        cursor: Option<String>,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.list(method::RESOURCES_TEMPLATES_LIST, cursor, now)
    }

    /// `resources/read`.
    pub fn read_resource(
        &mut self,
        uri: &str,
        options: &RequestSettings,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.for_uri(method::RESOURCES_READ, uri, options, now)
    }

    /// `resources/subscribe`.
    pub fn subscribe(
        &mut self,
        uri: &str,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.for_uri(
            method::RESOURCES_SUBSCRIBE,
            uri,
            &RequestSettings::default(),
            now,
        )
    }

    /// `resources/unsubscribe`.
    pub fn unsubscribe(
        &mut self,
        uri: &str,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.for_uri(
            method::RESOURCES_UNSUBSCRIBE,
            uri,
            &RequestSettings::default(),
            now,
        )
    }

    /// `prompts/list`, from `cursor`.
    pub fn list_prompts(
        &mut self,
        cursor: Option<String>,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.list(method::PROMPTS_LIST, cursor, now)
    }

    /// `prompts/get`.
    pub fn get_prompt(
        &mut self,
        params: &GetPromptParams,
        options: &RequestSettings,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.typed(method::PROMPTS_GET, params, options, now)
    }

    /// `completion/complete`.
    pub fn complete(
        &mut self,
        params: &CompleteParams,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.plain(method::COMPLETION_COMPLETE, params, now)
    }

    /// The log level: `logging/setLevel` on a legacy server; on 2026-07-28 the level is kept
    /// and carried in every later request's `_meta` (there is no request: `None`).
    pub fn set_logging_level(
        &mut self,
        level: LoggingLevel,
        now: Instant,
    ) -> Result<Option<OutgoingRequest>, ClientStateError> {
        self.ready(method::LOGGING_SET_LEVEL)?;
        if self.era() == Some(ProtocolEra::Modern) {
            self.log_level = Some(level);
            return Ok(None);
        }
        self.plain(method::LOGGING_SET_LEVEL, &SetLevelParams { level }, now)
            .map(Some)
    }

    /// `subscriptions/listen` (2026-07-28 only).
    pub fn listen(
        &mut self,
        params: &ListenParams,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        if self.era() != Some(ProtocolEra::Modern) {
            return Err(self.refuse("send subscriptions/listen to a legacy server"));
        }
        self.plain(method::SUBSCRIPTIONS_LISTEN, params, now)
    }

    /// The retry of an `input_required` request (2026-07-28): the original `params` with
    /// `inputResponses`, and `requestState` exactly as the server gave it (left out when it
    /// gave none), under a new id.
    pub fn retry_with_input(
        &mut self,
        method: &str,
        mut params: Map<String, Value>,
        input_responses: Map<String, Value>,
        request_state: Option<String>,
        options: &RequestSettings,
        now: Instant,
    ) -> Result<OutgoingRequest, ClientStateError> {
        self.ready(method)?;
        params.remove("_meta");
        params.insert("inputResponses".into(), Value::Object(input_responses));
        match request_state {
            Some(state) => params.insert("requestState".into(), Value::String(state)),
            None => params.remove("requestState"),
        };
        Ok(self.push(method, Some(params), options, now, false))
    }

    // ----- notifications ----------------------------------------------------------------

    /// `notifications/cancelled` for pending request `id`, which is forgotten (a late reply
    /// to it is [`NotOurs::UnknownId`]).
    pub fn cancel(&mut self, id: &RequestId, reason: Option<String>) -> OutgoingNotification {
        self.pending.remove(id);
        let params = CancelledNotificationParams {
            request_id: id.clone(),
            reason,
        };
        Notification::new(method::CANCELLED, Some(to_map(&params)))
    }

    /// `notifications/progress` (for a request the server sent the client).
    pub fn progress(&self, params: &ProgressNotificationParams) -> OutgoingNotification {
        Notification::new(method::PROGRESS, Some(to_map(params)))
    }

    /// `notifications/roots/list_changed`.
    pub fn roots_list_changed(&self) -> OutgoingNotification {
        Notification::new(method::ROOTS_LIST_CHANGED, None)
    }

    /// The result replying to server request `id`.
    pub fn response<T: Serialize>(id: RequestId, result: &T) -> ResultResponse<Value> {
        ResultResponse::new(id, serde_json::to_value(result).unwrap_or_default())
    }

    /// The error replying to server request `id`.
    pub fn error_response(id: RequestId, error: ErrorObject) -> ErrorResponse {
        ErrorResponse::new(Some(id), error)
    }

    // ----- timeouts ---------------------------------------------------------------------

    /// Forgets and returns every pending request whose deadline is at or before `now` (a late
    /// reply to one is [`NotOurs::UnknownId`]).
    pub fn check_timeouts(&mut self, now: Instant) -> Vec<TimedOut> {
        let expired: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| id.clone())
            .collect();
        let mut out: Vec<TimedOut> = expired
            .into_iter()
            .filter_map(|id| {
                self.pending.remove(&id).map(|p| TimedOut {
                    id,
                    method: p.method,
                    sent_at: p.sent_at,
                })
            })
            .collect();
        out.sort_by_key(|t| t.sent_at);
        out
    }

    /// Forgets pending request `id` without telling the server (its transport cancelled it
    /// another way); whether it was pending.
    pub fn forget(&mut self, id: &RequestId) -> bool {
        self.pending.remove(id).is_some()
    }
}

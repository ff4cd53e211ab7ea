//! [`ClientMachine`]: the MCP client as a state machine with no I/O.
//!
//! The caller moves bytes and owns the clock (as with quinn-proto's `Connection`): every
//! request is built here (its id and the typed message to send), every incoming message is
//! handed here and comes back classified, and timeouts are checked against an [`Instant`] the
//! caller gives. The async `Client` is a thin driver over it; a host with
//! its own transport can drive it directly.
//!
//! # Against the seed's client API
//!
//! The Elixir registry this project is modelled on (`BeamAgent.MCP`, seed `004`) has a client
//! dispatch state machine; each of its operations maps to one method here. Its `{msg, state}`
//! pairs become a returned message and `&mut self`; its `:error`-raising sends return
//! [`ClientStateError`].
//!
//! | seed (`BeamAgent.MCP.…`) | [`ClientMachine`] |
//! |---|---|
//! | `new_client(info, caps, opts)` | [`new`](ClientMachine::new)([`ClientConfig`]) |
//! | `client_handle_message/2` | [`handle`](ClientMachine::handle), [`handle_text`](ClientMachine::handle_text) → [`Incoming`] |
//! | `client_lifecycle_state/1` | [`lifecycle`](ClientMachine::lifecycle) |
//! | `client_is_operational/1` | [`is_ready`](ClientMachine::is_ready) |
//! | `client_error_info/1` | the reason in [`ClientLifecycle::Error`] / [`ClientLifecycle::Disconnected`] |
//! | `client_server_capabilities/1` | [`server_capabilities`](ClientMachine::server_capabilities) |
//! | `client_session_capabilities/1` | [`config`](ClientMachine::config)`().capabilities` (what the client offered) |
//! | `client_pending_count/1` | [`pending_count`](ClientMachine::pending_count) |
//! | `client_check_timeouts/2` | [`check_timeouts`](ClientMachine::check_timeouts) (with [`next_deadline`](ClientMachine::next_deadline) to know when) |
//! | `client_mark_disconnected/2` | [`mark_disconnected`](ClientMachine::mark_disconnected) |
//! | `client_mark_error/2` | [`mark_error`](ClientMachine::mark_error) |
//! | `client_mark_shutting_down/1` | [`mark_shutting_down`](ClientMachine::mark_shutting_down) |
//! | `client_reset/1` | [`reset`](ClientMachine::reset) |
//! | `client_send_initialize/1` | [`initialize`](ClientMachine::initialize) (2026-07-28: [`discover`](ClientMachine::discover)) |
//! | `client_send_initialized/1` | [`initialized`](ClientMachine::initialized) |
//! | `client_send_ping/1` | [`ping`](ClientMachine::ping) |
//! | `client_send_request/3` | [`request`](ClientMachine::request) |
//! | `client_send_cancelled/2,3` | [`cancel`](ClientMachine::cancel) (reason optional) |
//! | `client_send_progress/3,4,5` | [`progress`](ClientMachine::progress) |
//! | `client_send_completion_complete/3,4` | [`complete`](ClientMachine::complete) |
//! | `client_send_logging_set_level/2` | [`set_logging_level`](ClientMachine::set_logging_level) |
//! | `client_send_tools_list/1,2` | [`list_tools`](ClientMachine::list_tools) (cursor optional) |
//! | `client_send_tools_call/3` | [`call_tool`](ClientMachine::call_tool) |
//! | `client_send_prompts_list/1,2` | [`list_prompts`](ClientMachine::list_prompts) |
//! | `client_send_prompts_get/2,3` | [`get_prompt`](ClientMachine::get_prompt) |
//! | `client_send_resources_list/1,2` | [`list_resources`](ClientMachine::list_resources) |
//! | `client_send_resources_templates_list/1,2` | [`list_resource_templates`](ClientMachine::list_resource_templates) |
//! | `client_send_resources_read/2` | [`read_resource`](ClientMachine::read_resource) |
//! | `client_send_resources_subscribe/2` | [`subscribe`](ClientMachine::subscribe) |
//! | `client_send_resources_unsubscribe/2` | [`unsubscribe`](ClientMachine::unsubscribe) |
//! | `client_send_roots_list_changed/1` | [`roots_list_changed`](ClientMachine::roots_list_changed) |
//!
//! Beyond the seed: [`forget`](ClientMachine::forget) (a request the transport cancelled),
//! [`session_expired`](ClientMachine::session_expired), [`listen`](ClientMachine::listen) and
//! [`retry_with_input`](ClientMachine::retry_with_input) (2026-07-28), and
//! [`response`](ClientMachine::response) / [`error_response`](ClientMachine::error_response)
//! to answer the server's requests.
//!
//! ```
//! use std::time::Instant;
//! use mcp_registry::client::{ClientConfig, ClientMachine, Handshake, Incoming, ClientLifecycle};
//! use mcp_registry::protocol::{Implementation, ProtocolVersion};
//! use serde_json::json;
//!
//! let mut machine = ClientMachine::new(
//!     ClientConfig::new(Implementation { name: "host".into(), version: "1.0".into(), title: None })
//!         .protocol_version(ProtocolVersion::V2025_06_18),
//! );
//! let init = machine.initialize(Instant::now()).unwrap();
//! assert_eq!(machine.lifecycle(), &ClientLifecycle::Initializing);
//! let reply = json!({"jsonrpc": "2.0", "id": init.id.to_value(), "result": {
//!     "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
//!     "serverInfo": {"name": "s", "version": "1"}}});
//! assert!(matches!(machine.handle(reply), Incoming::Handshake { step: Handshake::Initialized(_), .. }));
//! let _initialized = machine.initialized().unwrap();
//! assert!(machine.is_ready());
//! let list = machine.list_tools(None, Instant::now()).unwrap();
//! assert_eq!(list.request.method, "tools/list");
//! assert_eq!(machine.pending_count(), 1);
//! ```

mod incoming;
mod requests;
mod types;

pub(crate) use incoming::server_request;
pub use types::{
    ClientConfig, ClientLifecycle, ClientStateError, Handshake, Incoming, NotOurs,
    OutgoingNotification, OutgoingRequest, RequestSettings, ServerNotification, ServerRequest,
    ServerRequestKind, TimedOut, VersionPreference,
};

use std::collections::HashMap;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::protocol::{
    Implementation, LoggingLevel, ProtocolEra, ProtocolVersion, RequestId, ServerCapabilities,
};

#[derive(Debug, Clone)]
struct Pending {
    method: String,
    sent_at: Instant,
    deadline: Option<Instant>,
}

/// The MCP client state machine: builds requests, classifies what comes back, keeps pending
/// requests, timeouts and the lifecycle. See the [module docs](self).
#[derive(Debug)]
pub struct ClientMachine {
    config: ClientConfig,
    lifecycle: ClientLifecycle,
    next_id: u64,
    pending: HashMap<RequestId, Pending>,
    /// The version `initialize` asks for next (after a fallback).
    legacy_request: ProtocolVersion,
    /// The version `server/discover` asks for next.
    modern_request: ProtocolVersion,
    negotiated: Option<ProtocolVersion>,
    server_info: Option<Implementation>,
    server_capabilities: Option<ServerCapabilities>,
    instructions: Option<String>,
    initialize_answered: bool,
    log_level: Option<LoggingLevel>,
}

fn to_text<T: Serialize>(message: &T) -> String {
    serde_json::to_string(message).unwrap_or_default()
}

fn to_map<T: Serialize>(params: &T) -> Map<String, Value> {
    match serde_json::to_value(params) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

impl ClientMachine {
    /// A machine for `config`, `Uninitialized`.
    pub fn new(config: ClientConfig) -> Self {
        let legacy_request = match config.version {
            VersionPreference::Exactly(v) if v.era() == ProtocolEra::Legacy => v,
            _ => ProtocolVersion::LATEST_LEGACY,
        };
        ClientMachine {
            config,
            lifecycle: ClientLifecycle::Uninitialized,
            next_id: 1,
            pending: HashMap::new(),
            legacy_request,
            modern_request: ProtocolVersion::MODERN,
            negotiated: None,
            server_info: None,
            server_capabilities: None,
            instructions: None,
            initialize_answered: false,
            log_level: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The lifecycle state.
    pub fn lifecycle(&self) -> &ClientLifecycle {
        &self.lifecycle
    }

    /// Whether requests may be sent.
    pub fn is_ready(&self) -> bool {
        self.lifecycle == ClientLifecycle::Ready
    }

    /// How the client should open: `server/discover` first (2026-07-28 or both eras) or
    /// straight to `initialize` (a pinned legacy version).
    pub fn starts_with_discover(&self) -> bool {
        match self.config.version {
            VersionPreference::Auto => true,
            VersionPreference::Exactly(v) => v.era() == ProtocolEra::Modern,
        }
    }

    /// The version agreed on, once ready.
    pub fn negotiated_version(&self) -> Option<ProtocolVersion> {
        self.negotiated
    }

    /// The era of the version agreed on.
    pub fn era(&self) -> Option<ProtocolEra> {
        self.negotiated.map(ProtocolVersion::era)
    }

    /// Who the server is (from `initialize`, or a 2026-07-28 result's `_meta`).
    pub fn server_info(&self) -> Option<&Implementation> {
        self.server_info.as_ref()
    }

    /// What the server offers.
    pub fn server_capabilities(&self) -> Option<&ServerCapabilities> {
        self.server_capabilities.as_ref()
    }

    /// The server's instructions for the model, if it gave any.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// How many requests await a reply.
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    /// The method of pending request `id`.
    pub fn pending_method(&self, id: &RequestId) -> Option<&str> {
        self.pending.get(id).map(|p| p.method.as_str())
    }

    /// The earliest deadline among pending requests: when to call
    /// [`check_timeouts`](Self::check_timeouts) next.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.pending.values().filter_map(|p| p.deadline).min()
    }

    /// The log level 2026-07-28 requests carry in `_meta` (set by
    /// [`set_logging_level`](Self::set_logging_level)).
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.log_level
    }

    // ----- lifecycle transitions -------------------------------------------------------

    /// Marks the client failed (from any state but `ShuttingDown`): pending requests are
    /// forgotten; nothing can be sent until [`reset`](Self::reset).
    pub fn mark_error(&mut self, reason: impl Into<String>) -> Result<(), ClientStateError> {
        if self.lifecycle == ClientLifecycle::ShuttingDown {
            return Err(self.refuse("mark the client failed"));
        }
        self.lifecycle = ClientLifecycle::Error(reason.into());
        self.pending.clear();
        Ok(())
    }

    /// Marks the transport lost (from `Initializing` or `Ready`): pending requests are
    /// forgotten; nothing can be sent until [`reset`](Self::reset).
    pub fn mark_disconnected(&mut self, reason: impl Into<String>) -> Result<(), ClientStateError> {
        if !matches!(
            self.lifecycle,
            ClientLifecycle::Initializing | ClientLifecycle::Ready
        ) {
            return Err(self.refuse("mark the client disconnected"));
        }
        self.lifecycle = ClientLifecycle::Disconnected(reason.into());
        self.pending.clear();
        Ok(())
    }

    /// Closing (final): pending requests are forgotten and nothing more can be sent.
    pub fn mark_shutting_down(&mut self) {
        self.lifecycle = ClientLifecycle::ShuttingDown;
        self.pending.clear();
    }

    /// From `Error` or `Disconnected` back to `Uninitialized`: the server's version,
    /// capabilities and info are forgotten, for a new handshake.
    pub fn reset(&mut self) -> Result<(), ClientStateError> {
        if !matches!(
            self.lifecycle,
            ClientLifecycle::Error(_) | ClientLifecycle::Disconnected(_)
        ) {
            return Err(self.refuse("reset"));
        }
        self.forget_server();
        Ok(())
    }

    /// A live session the server no longer knows (HTTP 404 on a legacy session): back to
    /// `Uninitialized` from `Ready` or `Initializing`, pending requests kept, for a new
    /// `initialize`.
    pub fn session_expired(&mut self) -> Result<(), ClientStateError> {
        if !matches!(
            self.lifecycle,
            ClientLifecycle::Initializing | ClientLifecycle::Ready
        ) {
            return Err(self.refuse("re-initialize"));
        }
        self.lifecycle = ClientLifecycle::Uninitialized;
        self.initialize_answered = false;
        Ok(())
    }

    fn forget_server(&mut self) {
        self.lifecycle = ClientLifecycle::Uninitialized;
        self.pending.clear();
        self.negotiated = None;
        self.server_info = None;
        self.server_capabilities = None;
        self.instructions = None;
        self.initialize_answered = false;
    }

    fn refuse(&self, operation: impl Into<String>) -> ClientStateError {
        ClientStateError {
            operation: operation.into(),
            state: self.lifecycle.clone(),
        }
    }
}

#[cfg(test)]
mod driving_tests;
#[cfg(test)]
mod tests;

//! The handshakes: `initialize` and `ping` (legacy), `server/discover` (2026-07-28), and the
//! capabilities both advertise.

use serde_json::{Map, Value};

use super::{
    Answer, Body, Connection, Dispatcher, Effect, Routed, Step, apps, outcome, prompts, resources,
    skills,
};
use crate::protocol::{
    CacheHints, CacheScope, DiscoverResult, Implementation, InitializeParams, InitializeResult,
    ProtocolEra, ProtocolVersion, ServerCapabilities, TASKS_EXTENSION, ToolsCapability,
};
use crate::registry::CallOptions;
use crate::server::Server;

/// `initialize`: the server's answer, and the negotiated version for the session.
pub(crate) fn initialize(request: Routed<'_>, options: &mut CallOptions) -> Step {
    let Routed {
        server,
        version,
        params,
        connection,
        ..
    } = request;
    // Tasks are listed only to callers the server can tell apart (2025-11-25 tasks,
    // Security): an anonymous caller would see everyone's.
    let lists_tasks = !options.caller.is_anonymous();
    let result = initialize_result(server, params, connection, lists_tasks);
    let negotiated = result.protocol_version;
    Step::Changed(
        Answer::Result(outcome(server, version, Body::Initialize(Box::new(result)))),
        Box::new(Effect::Initialized(negotiated)),
    )
}

/// `ping`: `{}`.
pub(crate) fn ping(request: Routed<'_>, _: &mut CallOptions) -> Step {
    request.answer(Ok(Body::Empty))
}

/// `server/discover`: versions, capabilities, instructions and caching hints.
pub(crate) fn discover(request: Routed<'_>, _: &mut CallOptions) -> Step {
    let result = request
        .dispatcher()
        .discover(request.server, request.connection);
    request.answer(Ok(Body::Discover(Box::new(result))))
}

impl Dispatcher<'_> {
    /// The caching hints of `server`'s lists and discovery: its own, else the registry's TTL,
    /// `public`.
    pub(crate) fn cache_hints(&self, server: &Server) -> CacheHints {
        server
            .list_cache()
            .unwrap_or_else(|| self.registry_cache_hints())
    }

    pub(crate) fn registry_cache_hints(&self) -> CacheHints {
        CacheHints {
            ttl_ms: u64::try_from(self.registry.config().list_ttl.as_millis()).unwrap_or(u64::MAX),
            cache_scope: CacheScope::Public,
        }
    }

    fn discover(&self, server: &Server, connection: Connection) -> DiscoverResult {
        // 2026-07-28 subscribes through `subscriptions/listen` (list changes, resource
        // updates); its log level travels in each request.
        let mut capabilities = capabilities(
            server,
            Connection {
                list_changed: true,
                subscriptions: true,
                logging: true,
                ..connection
            },
        );
        if server.has_task_tools() {
            super::declare_extension(
                &mut capabilities.other,
                TASKS_EXTENSION,
                Value::Object(Map::new()),
            );
        }
        DiscoverResult {
            supported_versions: ProtocolVersion::ALL.into_iter().rev().collect(),
            capabilities,
            instructions: server.instructions().map(str::to_owned),
            cache: self.cache_hints(server),
        }
    }
}

pub(crate) fn capabilities(server: &Server, connection: Connection) -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ToolsCapability {
            list_changed: Some(connection.list_changed),
        }),
        prompts: prompts::capability(server, connection),
        resources: resources::capability(server, connection),
        other: other_capabilities(server, connection),
    }
}

/// The capabilities without a typed field: `completions` for a server with something to
/// complete, `logging` where a client can ask for log messages.
fn other_capabilities(server: &Server, connection: Connection) -> Map<String, Value> {
    let mut other = Map::new();
    if connection.logging {
        other.insert("logging".to_owned(), Value::Object(Map::new()));
    }
    if server.has_completions() {
        other.insert("completions".to_owned(), Value::Object(Map::new()));
    }
    skills::declare(server, &mut other);
    apps::declare(server, &mut other);
    other
}

/// The legacy handshake: the version asked for when this crate speaks it (as a legacy
/// version), else the newest legacy one.
fn initialize_result(
    server: &Server,
    params: Map<String, Value>,
    connection: Connection,
    lists_tasks: bool,
) -> InitializeResult {
    // Lenient: a client's malformed params still get the server's answer.
    let params: InitializeParams =
        serde_json::from_value(Value::Object(params)).unwrap_or_default();
    let version = params
        .protocol_version
        .as_deref()
        .and_then(ProtocolVersion::parse)
        .filter(|v| v.era() == ProtocolEra::Legacy)
        .unwrap_or(ProtocolVersion::LATEST_LEGACY);
    let mut capabilities = capabilities(server, connection);
    if version >= ProtocolVersion::V2025_11_25 && server.has_task_tools() {
        // 2025-11-25 experimental tasks: task-augmented `tools/call`, cancelled, and listed
        // to a caller the server can tell apart.
        let mut tasks = serde_json::json!({"cancel": {}, "requests": {"tools": {"call": {}}}});
        if lists_tasks {
            tasks["list"] = serde_json::json!({});
        }
        capabilities.other.insert("tasks".to_owned(), tasks);
    }
    InitializeResult {
        protocol_version: version,
        capabilities,
        // `title` only for revisions that have it.
        server_info: Implementation {
            name: server.name().to_owned(),
            version: server.version().to_owned(),
            title: server
                .title()
                .filter(|_| version.has_titles())
                .map(str::to_owned),
        },
        instructions: server.instructions().map(str::to_owned),
    }
}

//! `resources/list`, `resources/templates/list`, `resources/read` and (legacy sessions)
//! `resources/subscribe` / `resources/unsubscribe` for a registry server.
//!
//! One request kind in two layers, named alike: its run through the registry (in-process API and pipeline) in `registry/resources.rs`.

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::page::{Listing, Window};
use super::read_params;
use super::{Answer, Body, Connection, Dispatcher, Effect, Parts, Routed, Step, outcome};
use crate::protocol::{
    CacheHints, CacheScope, ErrorObject, ListResourcesParams, ProtocolVersion, ReadResourceParams,
    ReadResourceResult, ResourcesCapability, SubscribeParams, method,
};
use crate::registry::scope::RequestInfo;
use crate::registry::{CallOptions, ReadResourceError};
use crate::server::Server;

/// The method-specific part of a resources result.
pub(crate) enum ResourcesBody {
    List(ResourcesPage),
    Read(ReadResourceResult),
}

/// A page of a server's resources or templates, in the form its revision describes them.
pub(crate) struct ResourcesPage {
    server: Server,
    listing: Listing,
    version: Option<ProtocolVersion>,
    window: Window,
}

/// `capabilities.resources`: only for a server that has resources or templates.
/// `subscribe` where the connection keeps subscriptions (a legacy session).
/// (The union of a registry's servers always has it: a server with resources may arrive.)
pub(crate) fn capability(server: &Server, connection: Connection) -> Option<ResourcesCapability> {
    (server.has_resources() || server.is_union()).then_some(ResourcesCapability {
        subscribe: Some(connection.subscriptions),
        list_changed: Some(connection.list_changed),
    })
}

/// The error `resources/read` answers `error` with under `version`: the revision's
/// resource-not-found error carries `data.uri`.
fn read_error(error: &ReadResourceError, version: Option<ProtocolVersion>) -> ErrorObject {
    let object = ErrorObject::new(error.code(version), error.to_string());
    match error {
        ReadResourceError::NotFound { uri, .. } => object.with_data(Value::Object(Map::from_iter(
            [("uri".to_owned(), Value::String(uri.clone()))],
        ))),
        _ => object,
    }
}

impl Dispatcher<'_> {
    /// A page of `server`'s resources (sorted by URI) or templates (sorted by name),
    /// paginated like `tools/list`.
    pub(crate) fn list_resources(
        &self,
        server: &Server,
        version: Option<ProtocolVersion>,
        method: &str,
        params: Map<String, Value>,
    ) -> Result<ResourcesBody, ErrorObject> {
        let ListResourcesParams { cursor } = read_params(method, params)?;
        let (listing, total) = if method == method::RESOURCES_TEMPLATES_LIST {
            (Listing::Templates, server.resource_templates().len())
        } else {
            (Listing::Resources, server.resources().len())
        };
        let window = self.window(server, listing, method, cursor.as_deref(), total, version)?;
        Ok(ResourcesBody::List(ResourcesPage {
            server: server.clone(),
            listing,
            version,
            window,
        }))
    }

    /// The caching hints a 2026-07-28 `resources/read` result gets when its handler set
    /// none: the server's, else the registry's TTL, `private` (contents may depend on who
    /// reads them).
    pub(crate) fn read_cache_hints(&self, server: &Server) -> CacheHints {
        server.read_cache().unwrap_or_else(|| CacheHints {
            cache_scope: CacheScope::Private,
            ..self.registry_cache_hints()
        })
    }
}

impl Dispatcher<'_> {
    /// Starts a `resources/read` through the registry's pipeline; the contents carry the
    /// server's caching hints in 2026-07-28 and none before.
    pub(crate) fn start_read(
        &self,
        server: &Server,
        version: Option<ProtocolVersion>,
        params: Map<String, Value>,
        options: &mut CallOptions,
        info: RequestInfo,
    ) -> Result<Step, ErrorObject> {
        let ReadResourceParams { uri } = read_params(method::RESOURCES_READ, params)?;
        let cache = self.read_cache_hints(server);
        let reading = self.registry.invoke_resource(server, &uri, options, info);
        let server = server.clone();
        Ok(Step::Waiting(Box::pin(async move {
            let mut result = match reading.await {
                Ok(result) => result,
                Err(ReadResourceError::Cancelled { .. }) => return Answer::Suppressed,
                Err(ReadResourceError::Rejected { error, .. }) => return Answer::Error(error),
                Err(e) => return Answer::Error(read_error(&e, version)),
            };
            if version == Some(ProtocolVersion::MODERN) {
                result.cache.get_or_insert(cache);
            } else {
                result.cache = None;
            }
            Answer::Result(outcome(
                &server,
                version,
                Body::Resources(ResourcesBody::Read(result)),
            ))
        })))
    }
}

/// `resources/subscribe` and `resources/unsubscribe` (legacy sessions): accepted, the
/// session keeps the URI (an effect); a subscription to a URI the server cannot read is
/// refused as not found.
pub(crate) fn subscription(request: Routed<'_>, _: &mut CallOptions) -> Step {
    if !request.connection.subscriptions {
        return request.not_found();
    }
    let Routed {
        server,
        version,
        method,
        params,
        ..
    } = request;
    let subscribe = method == method::RESOURCES_SUBSCRIBE;
    let SubscribeParams { uri } = match read_params(&method, params) {
        Ok(params) => params,
        Err(e) => return Step::Answered(Answer::Error(e)),
    };
    if subscribe && !crate::registry::resource_exists(server, &uri) {
        let error = read_error(&ReadResourceError::not_found(&uri), version);
        return Step::Answered(Answer::Error(error));
    }
    Step::Changed(
        Answer::Result(outcome(server, version, Body::Empty)),
        Box::new(Effect::Subscription { uri, subscribe }),
    )
}

/// `resources/list` and `resources/templates/list`: a page of either.
pub(crate) fn list(mut request: Routed<'_>, _: &mut CallOptions) -> Step {
    let params = std::mem::take(&mut request.params);
    let page = request.dispatcher().list_resources(
        request.server,
        request.version,
        &request.method,
        params,
    );
    request.answer(page.map(Body::Resources))
}

/// `resources/read`: the read started, to await.
pub(crate) fn read(request: Routed<'_>, options: &mut CallOptions) -> Step {
    let (parts, info) = request.split();
    let Parts {
        registry,
        server,
        params,
        version,
        ..
    } = parts;
    Dispatcher::new(registry)
        .start_read(server, version, params, options, info)
        .unwrap_or_else(|e| Step::Answered(Answer::Error(e)))
}

impl Serialize for ResourcesBody {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let page = match self {
            ResourcesBody::Read(result) => return result.serialize(serializer),
            ResourcesBody::List(page) => page,
        };
        let mut map = serializer.serialize_map(None)?;
        let server = &page.server;
        let version = page.version;
        let (key, entries) = if page.listing == Listing::Templates {
            ("resourceTemplates", server.template_entries(version))
        } else {
            ("resources", server.resource_entries(version))
        };
        map.serialize_entry(
            key,
            entries
                .get(page.window.start..page.window.end)
                .unwrap_or(&[]),
        )?;
        page.window.write_tail(&mut map)?;
        map.end()
    }
}

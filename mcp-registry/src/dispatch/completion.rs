//! `completion/complete` for a registry server: the prompt or resource template named by
//! `ref`, its argument's completion function (run through the registry's pipeline), at most
//! 100 values.
//!
//! One request kind in two layers, named alike: its run through the registry (in-process API and pipeline) in `registry/completion.rs`.

use serde_json::{Map, Value};

use super::{Answer, Body, Parts, Routed, Step, outcome, read_params};
use crate::protocol::{ErrorObject, ProtocolVersion, method};
use crate::registry::scope::RequestInfo;
use crate::registry::{CallOptions, Registry};
use crate::server::Server;

/// `completion/complete`, for a server with something to complete.
pub(crate) fn complete(request: Routed<'_>, options: &mut CallOptions) -> Step {
    if !request.server.has_completions() {
        return request.not_found();
    }
    let (parts, info) = request.split();
    let Parts {
        registry,
        server,
        params,
        version,
        ..
    } = parts;
    start(registry, server, version, params, options, info)
        .unwrap_or_else(|e| Step::Answered(Answer::Error(e)))
}

/// Starts the completion `params` ask for.
fn start(
    registry: &Registry,
    server: &Server,
    version: Option<ProtocolVersion>,
    params: Map<String, Value>,
    options: &mut CallOptions,
    info: RequestInfo,
) -> Result<Step, ErrorObject> {
    let params = read_params(method::COMPLETION_COMPLETE, params)?;
    let completing = registry.invoke_completion(server, params, options, info);
    let server = server.clone();
    Ok(Step::Waiting(Box::pin(async move {
        match completing.await {
            Ok(result) => Answer::Result(outcome(&server, version, Body::Complete(result))),
            Err(e) => Answer::Error(e),
        }
    })))
}

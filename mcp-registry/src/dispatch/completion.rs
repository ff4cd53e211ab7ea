//! `completion/complete` for a registry server: the prompt or resource template named by
//! `ref`, its argument's completion function, at most 100 values.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;
use serde_json::{Map, Value};

use super::invalid_params;
use super::read_params;
use crate::completion::CompletionFuture;
use crate::protocol::{
    CompleteParams, CompleteResult, CompletionReference, ErrorCode, ErrorObject, method,
};
use crate::server::Server;

/// The completion `params` ask for, started: -32602 naming an unknown prompt, template or
/// argument. The future catches a completion function's panic (-32603).
pub(crate) fn start(
    server: &Server,
    params: Map<String, Value>,
) -> Result<crate::tool::BoxFuture<'static, Result<CompleteResult, ErrorObject>>, ErrorObject> {
    let CompleteParams {
        reference,
        argument,
        context,
    } = read_params(method::COMPLETION_COMPLETE, params)?;
    let chosen = context.and_then(|c| c.arguments).unwrap_or_default();
    let started = std::panic::catch_unwind(AssertUnwindSafe(
        || -> Result<CompletionFuture, ErrorObject> {
            match &reference {
                CompletionReference::Prompt { name } => {
                    let prompt = server
                        .prompt(name)
                        .ok_or_else(|| invalid_params(format!("Unknown prompt: {name}")))?;
                    prompt
                        .complete(&argument.name, argument.value, chosen)
                        .ok_or_else(|| {
                            invalid_params(format!(
                                "prompt {name:?} has no argument {:?}",
                                argument.name
                            ))
                        })
                }
                CompletionReference::Resource { uri } => {
                    let templates = server.resource_templates();
                    let template = templates
                        .iter()
                        .find(|t| t.uri_template() == uri)
                        .or_else(|| {
                            templates
                                .iter()
                                .find(|t| t.template().match_uri(uri).is_some())
                        })
                        .ok_or_else(|| {
                            invalid_params(format!("Unknown resource template: {uri}"))
                        })?;
                    template
                        .complete(&argument.name, argument.value, chosen)
                        .ok_or_else(|| {
                            invalid_params(format!(
                                "resource template {uri:?} has no variable {:?}",
                                argument.name
                            ))
                        })
                }
            }
        },
    ));
    let completing = match started {
        Ok(started) => started?,
        Err(_) => return Err(failed("the completion function panicked")),
    };
    Ok(Box::pin(async move {
        match AssertUnwindSafe(completing).catch_unwind().await {
            Ok(Ok(completions)) => Ok(CompleteResult {
                completion: completions.capped(),
            }),
            Ok(Err(e)) => Err(failed(&format!("completion failed: {e}"))),
            Err(_) => Err(failed("the completion function panicked")),
        }
    }))
}

fn failed(message: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
}

//! Completions (`completion/complete`) of a server's prompt arguments and template
//! variables, through the request's scope, the layer stack and the guarded runner.
//!
//! One request kind in two layers, named alike: its MCP methods in `dispatch/completion.rs`.

use serde_json::{Map, Value};

use super::guard::Guarded;
use super::layer::{Endpoint, Request, RequestKind, Response, mismatch};
use super::scope::{RequestInfo, RunScope, through_layers};
use super::{CallOptions, Registry};
use crate::completion::CompletionFuture;
use crate::protocol::{
    CompleteArgument, CompleteContext, CompleteParams, CompleteResult, CompletionReference,
    ErrorCode, ErrorObject,
};
use crate::server::Origin;
use crate::server::Server;
use crate::tool::BoxFuture;

type Completing = BoxFuture<'static, Result<CompleteResult, ErrorObject>>;

impl Registry {
    /// Completes `params` for `server`: -32602 naming an unknown prompt, template or
    /// argument; -32603 for a completion function that fails, panics or times out.
    pub(crate) fn invoke_completion(
        &self,
        server: &Server,
        params: CompleteParams,
        options: &mut CallOptions,
        info: RequestInfo,
    ) -> Completing {
        let CompleteParams {
            reference,
            argument,
            context,
        } = params;
        // The prompt's or template's own server and name, also through the union.
        let names = match &reference {
            CompletionReference::Prompt { name } => match server.prompt(name) {
                Some(prompt) => server.prompt_call_names(prompt),
                None => Origin::of(server).names(name.as_str().into()),
            },
            CompletionReference::Resource { uri } => {
                server.template_origin(uri).names(uri.as_str().into())
            }
        };
        let name = names.tool.clone();
        let scope = self.scope(names, options, info, None);
        let Some(layers) = self.layers(options) else {
            return run(server.clone(), reference, argument, context, scope);
        };
        let mut arguments = Map::new();
        arguments.insert("argument".to_owned(), to_value(&argument));
        if let Some(context) = &context {
            arguments.insert("context".to_owned(), to_value(context));
        }
        let request = Request {
            kind: RequestKind::Completion,
            name,
            arguments: Value::Object(arguments),
            context: scope.ctx,
        };
        let (server, guard) = (server.clone(), scope.guard);
        let endpoint: Endpoint = Box::new(move |request: Request| {
            let Request {
                arguments,
                context: ctx,
                ..
            } = request;
            let mut members = match arguments {
                Value::Object(members) => members,
                _ => Map::new(),
            };
            let mut member = |name: &str| members.remove(name).unwrap_or_default();
            let argument = serde_json::from_value(member("argument"));
            let context = serde_json::from_value(member("context"));
            let completing = match (argument, context) {
                (Ok(argument), Ok(context)) => run(
                    server,
                    reference,
                    argument,
                    context,
                    RunScope { ctx, guard },
                ),
                (Err(e), _) | (_, Err(e)) => Box::pin(std::future::ready(Err(invalid(format!(
                    "a layer left invalid completion arguments: {e}"
                ))))),
            };
            Box::pin(async move { Response::Completion(completing.await) })
        });
        let running = through_layers(&layers, request, endpoint);
        Box::pin(async move {
            match running.await {
                Some(Response::Completion(result)) => result,
                Some(other) => Err(failed(&mismatch(RequestKind::Completion, &other))),
                None => Err(failed("the completion was cancelled")),
            }
        })
    }
}

fn to_value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}

/// The guarded run of the completion function `reference` and `argument` name.
fn run(
    server: Server,
    reference: CompletionReference,
    argument: CompleteArgument,
    context: Option<CompleteContext>,
    scope: RunScope,
) -> Completing {
    // Completion functions take no context: the scope serves the layers and the guard.
    let RunScope { ctx: _, guard } = scope;
    let chosen = context.and_then(|c| c.arguments).unwrap_or_default();
    let completing = match lookup(&server, &reference, argument, chosen) {
        Ok(completing) => completing,
        Err(e) => return Box::pin(std::future::ready(Err(e))),
    };
    let run = Guarded::start(guard, || completing);
    Box::pin(async move {
        match run.await {
            Ok(Ok(completions)) => Ok(CompleteResult {
                completion: completions.capped(),
            }),
            Ok(Err(e)) => Err(failed(&format!("completion failed: {e}"))),
            Err(failure) => Err(failure.into_error("the completion function".to_owned())),
        }
    })
}

/// The completion function of `reference`'s `argument`, started (a panic while starting
/// it is caught: -32603).
fn lookup(
    server: &Server,
    reference: &CompletionReference,
    argument: CompleteArgument,
    chosen: std::collections::BTreeMap<String, String>,
) -> Result<CompletionFuture, ErrorObject> {
    let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match reference {
        CompletionReference::Prompt { name } => {
            let prompt = server
                .prompt(name)
                .ok_or_else(|| invalid(format!("Unknown prompt: {name}")))?;
            prompt
                .complete(&argument.name, argument.value, chosen)
                .ok_or_else(|| {
                    invalid(format!(
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
                .ok_or_else(|| invalid(format!("Unknown resource template: {uri}")))?;
            template
                .complete(&argument.name, argument.value, chosen)
                .ok_or_else(|| {
                    invalid(format!(
                        "resource template {uri:?} has no variable {:?}",
                        argument.name
                    ))
                })
        }
    }));
    started.unwrap_or_else(|_| Err(failed("the completion function panicked")))
}

fn invalid(message: String) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
}

fn failed(message: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
}

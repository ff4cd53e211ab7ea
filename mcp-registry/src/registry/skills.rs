//! `skills/get` through the request pipeline: its scope, the registry's layers (which may
//! refuse a skill, or answer it themselves) and approval, then the guarded lookup. A skill's
//! files are resources, read through the same pipeline as [`RequestKind::Resource`].
//!
//! One request kind in two layers, named alike: its MCP methods in `dispatch/skills.rs`.

use std::sync::Arc;

use serde_json::Value;

use super::guard::{Failure, Guarded};
use super::layer::{Endpoint, Request, RequestKind, Response, mismatch};
use super::scope::{RequestInfo, RunScope, through_layers};
use super::{CallOptions, Registry};
use crate::protocol::{ErrorCode, ErrorObject};
use crate::server::{Origin, Server};
use crate::skill::{Skill, SkillEntry};
use crate::tool::BoxFuture;

/// How a `skills/get` ended: the entry, an error to answer, or cancelled by the caller (no
/// answer).
pub(crate) type SkillOutcome = Option<Result<SkillEntry, ErrorObject>>;

impl Registry {
    /// Gets the entry of `server`'s skill at `uri` through the layers: -32602 for a URI that
    /// names none of its skills.
    pub(crate) fn invoke_skill(
        &self,
        server: &Server,
        uri: &str,
        options: &mut CallOptions,
        info: RequestInfo,
    ) -> BoxFuture<'static, SkillOutcome> {
        let Some(skill) = server.skills().iter().find(|s| s.uri() == uri).cloned() else {
            let error = ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!("unknown skill {uri:?}: skills/list names the skills this server serves"),
            );
            return Box::pin(std::future::ready(Some(Err(error))));
        };
        let uri: Arc<str> = uri.into();
        let names = Origin::of(server).names(uri.clone());
        let scope = self.scope(names, options, info, None);
        let Some(layers) = self.layers(options) else {
            return run(skill, scope);
        };
        let request = Request {
            kind: RequestKind::Skill,
            name: uri,
            arguments: Value::Null,
            context: scope.ctx,
        };
        let guard = scope.guard;
        let endpoint: Endpoint = Box::new(move |request: Request| {
            let scope = RunScope {
                ctx: request.context,
                guard,
            };
            let getting = run(skill, scope);
            Box::pin(async move {
                match getting.await {
                    Some(result) => Response::Skill(result),
                    None => Response::Skill(Err(cancelled())),
                }
            })
        });
        let running = through_layers(&layers, request, endpoint);
        Box::pin(async move {
            match running.await {
                Some(Response::Skill(result)) => Some(result),
                Some(other) => Some(Err(ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    mismatch(RequestKind::Skill, &other),
                ))),
                None => None,
            }
        })
    }
}

fn cancelled() -> ErrorObject {
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, "skills/get was cancelled")
}

/// The guarded lookup of `skill`'s entry.
fn run(skill: Skill, scope: RunScope) -> BoxFuture<'static, SkillOutcome> {
    let getting = Guarded::start(scope.guard, || {
        Box::pin(std::future::ready(skill.entry().clone()))
    });
    Box::pin(async move {
        match getting.await {
            Ok(entry) => Some(Ok(entry)),
            Err(Failure::Cancelled) => None,
            Err(failure) => Some(Err(failure.into_error("skills/get".to_owned()))),
        }
    })
}

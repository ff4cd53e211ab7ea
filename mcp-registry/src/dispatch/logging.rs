//! `logging/setLevel` (legacy sessions): the level a session's tools log at, returned as an
//! effect for the session to keep.

use super::{Answer, Body, Effect, Routed, Step, outcome, read_params};
use crate::protocol::{SetLevelParams, method};
use crate::registry::CallOptions;

pub(crate) fn set_level(request: Routed<'_>, _: &mut CallOptions) -> Step {
    if !request.connection.logging {
        return request.not_found();
    }
    let Routed {
        server,
        version,
        params,
        ..
    } = request;
    match read_params::<SetLevelParams>(method::LOGGING_SET_LEVEL, params) {
        Ok(SetLevelParams { level }) => Step::Changed(
            Answer::Result(outcome(server, version, Body::Empty)),
            Box::new(Effect::LogLevel(level)),
        ),
        Err(e) => Step::Answered(Answer::Error(e)),
    }
}

//! The routing table: each `(method, era)` a server answers, to the one handler of that
//! method, each in its own file. A method in no row is -32601.

use super::{
    Routed, Step, completion, handshake, logging, prompts, resources, skills, subscriptions, tasks,
    tools,
};
use crate::protocol::method;
use crate::registry::CallOptions;
use crate::skill::method as skill;

/// Serves `request` with the handler of its `(method, era)`: one row per method a server
/// answers, each naming the eras it serves (`_` both; `true`: legacy, 2024-11-05 to
/// 2025-11-25, with the `initialize` handshake; `false`: 2026-07-28, stateless). A match,
/// not a slice of function pointers: the hot rows (`tools/call` first) inline into the
/// caller. A method no row has in the request's era is -32601.
#[inline(always)]
pub(crate) fn route(request: Routed<'_>, options: &mut CallOptions) -> Step {
    let legacy = !request.era.is_modern();
    match (&*request.method, legacy) {
        (method::TOOLS_CALL, _) => tools::call(request, options),
        (method::TOOLS_LIST, _) => tools::list(request, options),
        (method::PROMPTS_GET, _) => prompts::get(request, options),
        (method::PROMPTS_LIST, _) => prompts::list(request, options),
        (method::RESOURCES_READ, _) => resources::read(request, options),
        (method::RESOURCES_LIST | method::RESOURCES_TEMPLATES_LIST, _) => {
            resources::list(request, options)
        }
        (method::RESOURCES_SUBSCRIBE | method::RESOURCES_UNSUBSCRIBE, true) => {
            resources::subscription(request, options)
        }
        (skill::SKILLS_LIST | skill::SKILLS_GET | skill::RESOURCES_DIRECTORY_READ, _) => {
            skills::serve(request, options)
        }
        (method::COMPLETION_COMPLETE, _) => completion::complete(request, options),
        (method::SUBSCRIPTIONS_LISTEN, false) => subscriptions::listen(request, options),
        (method::LOGGING_SET_LEVEL, true) => logging::set_level(request, options),
        (method::INITIALIZE, true) => handshake::initialize(request, options),
        (method::PING, true) => handshake::ping(request, options),
        (method::DISCOVER, false) => handshake::discover(request, options),
        (method::TASKS_GET, _) => tasks::get(request, options),
        (method::TASKS_CANCEL, _) => tasks::cancel(request, options),
        (method::TASKS_UPDATE, false) => tasks::update(request, options),
        (method::TASKS_RESULT, true) => tasks::result(request, options),
        (method::TASKS_LIST, true) => tasks::list(request, options),
        _ => request.not_found(),
    }
}

//! The routing table: each `(method, era)` a server answers, to the one handler of that
//! method. A method in no row is -32601.

use super::{
    Routed, Step, completion, handshake, logging, prompts, resources, subscriptions, tools,
};
use crate::protocol::{Era, method};
use crate::registry::CallOptions;

/// A method's handler: the routed request, and the caller's options for the function it
/// runs, if any.
pub(crate) type Handler = fn(Routed<'_>, &mut CallOptions) -> Step;

/// Which protocol eras a row serves.
#[derive(Clone, Copy)]
enum Eras {
    Both,
    /// 2024-11-05 to 2025-11-25: the `initialize` handshake and sessions.
    Legacy,
    /// 2026-07-28: stateless.
    Modern,
}

struct Route {
    method: &'static str,
    eras: Eras,
    handler: Handler,
}

const fn route(method: &'static str, eras: Eras, handler: Handler) -> Route {
    Route {
        method,
        eras,
        handler,
    }
}

/// Every method a server answers. `tools/call` first: it is the hot path.
const ROUTES: &[Route] = &[
    route(method::TOOLS_CALL, Eras::Both, tools::call),
    route(method::TOOLS_LIST, Eras::Both, tools::list),
    route(method::PROMPTS_GET, Eras::Both, prompts::get),
    route(method::PROMPTS_LIST, Eras::Both, prompts::list),
    route(method::RESOURCES_READ, Eras::Both, resources::read),
    route(method::RESOURCES_LIST, Eras::Both, resources::list),
    route(
        method::RESOURCES_TEMPLATES_LIST,
        Eras::Both,
        resources::list,
    ),
    route(
        method::RESOURCES_SUBSCRIBE,
        Eras::Legacy,
        resources::subscription,
    ),
    route(
        method::RESOURCES_UNSUBSCRIBE,
        Eras::Legacy,
        resources::subscription,
    ),
    route(
        method::COMPLETION_COMPLETE,
        Eras::Both,
        completion::complete,
    ),
    route(
        method::SUBSCRIPTIONS_LISTEN,
        Eras::Modern,
        subscriptions::listen,
    ),
    route(method::LOGGING_SET_LEVEL, Eras::Legacy, logging::set_level),
    route(method::INITIALIZE, Eras::Legacy, handshake::initialize),
    route(method::PING, Eras::Legacy, handshake::ping),
    route(method::DISCOVER, Eras::Modern, handshake::discover),
];

/// The handler of `method` in `era`, if the server answers it.
#[inline]
pub(crate) fn handler(method: &str, era: Era) -> Option<Handler> {
    ROUTES
        .iter()
        .find(|r| {
            r.method == method
                && match r.eras {
                    Eras::Both => true,
                    Eras::Legacy => !era.is_modern(),
                    Eras::Modern => era.is_modern(),
                }
        })
        .map(|r| r.handler)
}

//! Test binary `core`: the registry, its macros and every request kind through
//! `handle_mcp_message`, in both protocol eras: tools, prompts, resources, completion, tasks,
//! sessions, trust.
//!
//! Tests are grouped into a few binaries by area (ARCHITECTURE.md, Tests): each test binary links
//! the whole crate, and linking was most of the test build's time. A member is a file of `tests/`,
//! one `#[path]` module per file in alphabetical order; `.ci/run` checks that every `tests/*.rs` is
//! a binary or a member of exactly one.

mod common;
mod macro_tools;

#[path = "approval.rs"]
mod approval;
#[path = "apps.rs"]
mod apps;
#[path = "attach.rs"]
mod attach;
#[path = "completion.rs"]
mod completion;
#[path = "deep_results.rs"]
mod deep_results;
#[path = "dispatch.rs"]
mod dispatch;
#[path = "dispatch_modern.rs"]
mod dispatch_modern;
#[path = "dispatch_paths.rs"]
mod dispatch_paths;
#[path = "extensions_declared.rs"]
mod extensions_declared;
#[path = "fuzz_messages.rs"]
mod fuzz_messages;
#[path = "input_required.rs"]
mod input_required;
#[path = "lenient_arguments.rs"]
mod lenient_arguments;
#[path = "listing_snapshot.rs"]
mod listing_snapshot;
#[path = "logging.rs"]
mod logging;
#[path = "macro_timeouts.rs"]
mod macro_timeouts;
#[path = "macros.rs"]
mod macros;
#[path = "macros_calls.rs"]
mod macros_calls;
#[path = "methods.rs"]
mod methods;
#[path = "old_paths.rs"]
mod old_paths;
#[path = "pipeline.rs"]
mod pipeline;
#[path = "prompts.rs"]
mod prompts;
#[path = "quota.rs"]
mod quota;
#[path = "registry.rs"]
mod registry;
#[path = "resources.rs"]
mod resources;
#[path = "resources_macros.rs"]
mod resources_macros;
#[path = "resources_sessions.rs"]
mod resources_sessions;
#[path = "schema_formats.rs"]
mod schema_formats;
#[path = "session.rs"]
mod session;
#[path = "session_batches.rs"]
mod session_batches;
#[path = "skills.rs"]
mod skills;
#[path = "subscriptions.rs"]
mod subscriptions;
#[path = "task_store.rs"]
mod task_store;
#[path = "tasks.rs"]
mod tasks;
#[path = "tool_input.rs"]
mod tool_input;
#[path = "trust.rs"]
mod trust;
#[path = "url_elicitation.rs"]
mod url_elicitation;

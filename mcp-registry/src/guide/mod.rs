//! Guides: the crate topic by topic, each page a module with no items, its examples compiled
//! and run as doctests.
//!
//! Read them in order, or go straight to a topic:
//!
//! | guide | what it covers | features |
//! |---|---|---|
//! | [`tools`] | tools, prompts and resources from functions (`#[mcp_tool]`, `#[mcp_server]`, `server!`), answering MCP in-process, completion, subscriptions | none |
//! | [`testing`] | unit tests, listing snapshots, typed call stubs, cassettes | `testing` |
//! | [`layers_and_state`] | a request's context, layers, approval, host state (`State<T>`), time limits | none |
//! | [`tasks`] | tools run as tasks: call now, fetch the result later | none |
//! | [`serving`] | stdio and Streamable HTTP, a whole registry as one server, HTTP authorization | `stdio`, `http`, `http-dpop` |
//! | [`replicas`] | several replicas behind a load balancer, state in Redis | `redis`, `http` |
//! | [`client_and_auth`] | the MCP client, request policies, traces, remote servers, tool pinning, OAuth 2.1 | `client-stdio`, `client-http`, `client-auth`, `otel` |
//! | [`agents`] | your own loop against a model API; agent runtimes such as the Claude Code CLI | `agent`, `client-stdio` |
//! | [`extensions`] | Skills (SEP-2640) and MCP Apps (SEP-1865) | none |
//! | [`security`] | the security model: who can see and call what, what is bound to whom, what the server trusts | `http` |
//!
//! A page whose features are off shows only this note in a local `cargo doc`; docs.rs builds
//! every feature. Design notes are in the repository's
//! [ARCHITECTURE.md](https://github.com/mcp-registry/mcp-registry/blob/main/ARCHITECTURE.md).
//!
//! # Performance at a glance
//!
//! Measured on the project's 2-core development machine (criterion medians; the method, every
//! round and the build-cost and binary-size tables are in
//! [benches/README.md](https://github.com/mcp-registry/mcp-registry/blob/main/benches/README.md)):
//!
//! | what | figure |
//! |---|---|
//! | `call_tool_by_name` of a trivial tool, over calling the function directly | about +90 ns (about 180 ns against 90 ns) |
//! | `handle_mcp_message` (JSON-RPC `Value` in, reply out) / `handle_mcp_text` (text in and out) | about 580 ns / 600 ns |
//! | a call through `Client::in_process` / through a mounted `RemoteServer` | 11.6 µs / 15.9 µs |
//! | a call through `Client::stdio` to a child process | 222 µs |
//! | Streamable HTTP `tools/call` on one core, 50 clients (a hyper load generator on the other): legacy session / stateless 2026-07-28 | about 137,000 / 130,000 calls per second, 0.96× / 1.01× a bare axum handler answering the same |
//! | memory per idle legacy HTTP session | about 1.5 KB |
//! | 100 tools under `#[mcp_tool]`, debug build of that crate alone, over plain `async fn`s | 0.71 s against 0.32 s |

/// A guide page: its markdown when `$cfg` holds, else a note naming the features it needs.
macro_rules! page {
    ($(#[$attr:meta])* $name:ident, $file:literal, [$($feature:literal),*]) => {
        $(#[$attr])*
        #[cfg_attr(all($(feature = $feature),*), doc = include_str!($file))]
        #[cfg_attr(
            not(all($(feature = $feature),*)),
            doc = concat!(
                "This guide needs the features ",
                $("`", $feature, "` ",)*
                "(docs.rs builds it with every feature)."
            )
        )]
        pub mod $name {}
    };
}

page!(tools, "tools.md", []);
page!(testing, "testing.md", ["testing"]);
page!(layers_and_state, "layers_and_state.md", []);
page!(tasks, "tasks.md", []);
page!(serving, "serving.md", ["stdio", "http", "http-dpop"]);
page!(replicas, "replicas.md", ["redis", "http"]);
page!(
    client_and_auth,
    "client_and_auth.md",
    ["client-stdio", "client-http", "client-auth", "otel"]
);
page!(agents, "agents.md", ["agent", "client-stdio"]);
page!(extensions, "extensions.md", []);
page!(security, "security.md", ["http"]);

#[cfg(test)]
mod tests;

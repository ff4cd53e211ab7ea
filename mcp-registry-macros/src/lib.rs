//! Procedural macros of [`mcp-tool-registry`](https://docs.rs/mcp-tool-registry) (library
//! `mcp_registry`): `#[mcp_tool]`, `#[mcp_prompt]`, `#[mcp_resource]`, `#[mcp_server]` and
//! `server!`. Depend on `mcp-tool-registry`, which re-exports them; this crate is not used
//! alone.

#![forbid(unsafe_code)]

mod ast;
mod attr;
mod ctxt;
mod expand;
mod fallback;
mod kind;
mod methods;
mod uri;
mod valid;

use proc_macro::TokenStream;

use crate::ctxt::Errors;
use crate::kind::Kind;

/// The one path of the three attributes: parse, check, then expand or fall back.
fn annotate(kind: Kind, args: TokenStream, input: TokenStream) -> TokenStream {
    let item = match syn::parse::Parser::parse(ast::parse_fn, input.clone()) {
        Ok(item) => item,
        Err(e) => {
            let message = format!(
                "{} goes on a function: `async fn name(..) -> ..`",
                kind.attribute()
            );
            let mut out = syn::Error::new(e.span(), message).to_compile_error();
            out.extend(proc_macro2::TokenStream::from(input));
            return out.into();
        }
    };
    let mut errors = Errors::default();
    let mut def = ast::AnnotatedFn::from_syn(kind, args.into(), item, &mut errors);
    if !def.edited {
        // Emitting the tokens as they came is cheaper than printing the parsed function.
        def.original = Some(input.into());
    }
    valid::check(&def, &mut errors);
    if errors.is_empty() {
        expand::annotated(&def).into()
    } else {
        fallback::annotated(&def, &errors).into()
    }
}

/// Turns an async function into an MCP tool, leaving the function itself unchanged.
///
/// ```
/// use mcp_registry::{mcp_tool, Json};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Sum {
///     value: i64,
/// }
///
/// /// Add two numbers.
/// ///
/// /// # Arguments
/// /// * `a` - the left operand
/// /// * `b` - the right operand; 0 when left out
/// #[mcp_tool(read_only, idempotent)]
/// async fn add(a: i64, b: Option<i64>) -> Json<Sum> {
///     Json(Sum { value: a + b.unwrap_or(0) })
/// }
///
/// let tool = add::tool();
/// let schema = &tool.descriptor().input_schema;
/// assert_eq!(tool.descriptor().description.as_deref(), Some("Add two numbers."));
/// assert_eq!(schema["properties"]["a"]["description"], "the left operand");
/// assert_eq!(schema["required"], serde_json::json!(["a"]));
/// ```
///
/// **Input schema.** Each parameter is a property of the tool's object input schema, named
/// like the parameter (without `r#`) or by `#[arg(rename = "...")]`; its schema is the
/// type's `schemars` schema under the project's one profile (draft 2020-12, inlined, root
/// object), doc comments and serde attributes included, built once per tool and cached. A
/// parameter is *required* unless `null` is a valid value of its type (`Option<T>`,
/// `serde_json::Value`), decided at run time through the type itself rather than by the
/// spelling `Option`, so aliases work; a missing optional argument and an explicit `null`
/// are both `None`. Recursive types: a recursive type is inlined once and its recursion
/// refers to `#/$defs/Name`, kept at the root of the tool's input schema (valid 2020-12).
///
/// **Context.** A parameter whose type is [`ToolContext`] (recognised through the
/// `ToolParam` trait, so aliases work) is filled by the call and is not in the schema.
///
/// **Description.** The doc comment's text before its first `#` heading, unless
/// `description = "..."` is given. Parameters are described by the rustdoc `# Arguments`
/// list (`` * `name` - text ``) or by `#[arg(description = "...")]`, which wins.
///
/// **Attributes.** `name = "..."` (default: the function's name; 1 to 128 characters of
/// `A-Z a-z 0-9 _ - .`), `title = "..."`, `description = "..."`, the hints `read_only`,
/// `destructive`, `idempotent`, `open_world` (each also `= false`), `blocking` (see below),
/// `timeout = "5s"` (see below), `server = path` (attach the tool to the server whose
/// `server!(.., fn = ident)` the path names; a misspelled server is a compile error), and
/// `crate = path` when `mcp_registry` is reached under another path.
///
/// **Tasks.** `task = "optional"` lets a client run the tool as a task (2025-11-25: it
/// asks with `task`; 2026-07-28: its request declares the `io.modelcontextprotocol/tasks`
/// extension), `task = "required"` runs it only as one (`ToolBuilder::task_support`); the
/// function stays a plain async fn.
///
/// **Time limit.** `timeout = ".."` is a whole number and a unit, `ms`, `s`, `m` or `h`
/// (`"250ms"`, `"5s"`, `"2m"`, `"1h"`), read at compile time: anything else is a compile
/// error on the literal. It is the tool's own limit per call (`ToolBuilder::timeout`), in
/// place of the registry's default; a caller's own limit still wins. A call past it ends
/// with `CallError::Timeout` naming the limit.
///
/// **Blocking work.** A timeout or a cancellation drops the call's future, which stops an
/// `async fn` at its next `.await`; nothing can stop a thread that is blocked (blocking I/O,
/// long CPU work, `std::thread::sleep`), and a tool blocking an async worker stalls other
/// calls too. Mark such a plain (non-`async`) `fn` `#[mcp_tool(blocking)]`: each call runs
/// it on Tokio's blocking thread pool, so the caller gets its timeout or cancellation at
/// once while the work finishes on its own and its result is discarded. Inside an
/// `async fn`, `mcp_registry::run_blocking(|| ...)` does the same for a part of the body.
///
/// **Returns.** Anything implementing `IntoToolResult`: `String`, `&'static str`, `Json<T>`
/// (structured content, a text copy and an output schema), `CallToolResult`, `Content`,
/// `Vec<Content>`, `()`, and `Result<T, E: Display>` of those (an `Err` is a tool failure).
///
/// **Generated items.** Next to `fn add`, a hidden `struct add {}` (type namespace, same
/// visibility) through which `server!(tools = [add])`, `use ops::add;` and `add::tool()`
/// (the `Tool`, built on first use and then shared) reach the tool. The function must be a
/// free function without `self`, generics, references or destructuring parameters, taking at
/// most 16 parameters. A non-`async` function works too; it runs when the call starts (on the
/// blocking thread pool with `blocking`).
///
/// **Call stub.** `add::call(&caller, a, b)` calls the tool through any
/// `mcp_registry::tool::stub::ToolCaller` (a `Registry` in-process, a connected
/// `client::Client` over stdio or Streamable HTTP) and returns
/// `Result<Sum, ToolCallError<_>>` for `-> Json<Sum>`: the arguments are sent under their
/// property names (each must be `serde::Serialize`; a parameter whose type is written
/// `ToolContext`, `Caller` or `State<..>`, under any path, is left out, the call provides it:
/// the stub's parameters are fixed before types are known, so through a type alias it stays
/// in the stub
/// and calling it is an error saying so), the result read back by the return
/// type's `ToolOutput`. Its only bound is on the caller's type, so a tool whose arguments are
/// not `Serialize` compiles as before and only a call of its stub is an error.
///
/// On a mistake the function is still emitted unchanged, with the error and stand-ins for
/// the generated items, so one mistake gives one message.
///
/// [`ToolContext`]: https://docs.rs/mcp-tool-registry/latest/mcp_registry/struct.ToolContext.html
#[proc_macro_attribute]
pub fn mcp_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    annotate(Kind::Tool, args, input)
}

/// Turns a function into an MCP prompt, leaving the function itself unchanged.
///
/// ```
/// use mcp_registry::{mcp_prompt, PromptMessage};
///
/// /// Review a change.
/// ///
/// /// # Arguments
/// /// * `diff` - the change to review
/// /// * `focus` - what to look at first
/// #[mcp_prompt(title = "Code review")]
/// async fn review(diff: String, focus: Option<String>) -> Vec<PromptMessage> {
///     let focus = focus.unwrap_or_else(|| "correctness".into());
///     vec![PromptMessage::user(format!("Review this change for {focus}:\n{diff}"))]
/// }
///
/// let prompt = review::prompt();
/// let described = prompt.descriptor();
/// assert_eq!(described.description.as_deref(), Some("Review a change."));
/// assert_eq!(described.arguments[0].description.as_deref(), Some("the change to review"));
/// assert_eq!(described.arguments[0].required, Some(true));
/// assert_eq!(described.arguments[1].required, Some(false));
/// ```
///
/// **Arguments.** Each parameter is one prompt argument, named like the parameter (without
/// `r#`) or by `#[arg(rename = "...")]`: `String` for a required argument, `Option<String>`
/// for an optional one (prompt arguments are strings on the wire; parse them in the body).
/// The type is recognised through the `PromptParam` trait, not by its spelling. A missing
/// required argument is refused with -32602 before the function runs. A `ToolContext`
/// parameter is no argument: it is the request's context (logging, progress, cancellation,
/// host state with `ctx.get::<T>()`, asking the client with `ctx.elicit(..)`), as for tools.
///
/// **Description.** The doc comment's text before its first `#` heading, unless
/// `description = "..."` is given; arguments are described by the `# Arguments` list or
/// `#[arg(description = "...")]`, as for `#[mcp_tool]`.
///
/// **Attributes.** `name = "..."` (default: the function's name; the tool name rule),
/// `title = "..."`, `description = "..."`, `timeout = "30s"` (the prompt's own limit per
/// rendering, `PromptBuilder::timeout`; the duration is read as for `#[mcp_tool]`: a whole
/// number with `ms`, `s`, `m` or `h`), `server = path` (attach it to a server declared
/// elsewhere, as for `#[mcp_tool]`), `crate = path`.
///
/// **Returns.** Anything implementing `IntoPromptResult`: `Vec<PromptMessage>`,
/// `PromptMessage`, `GetPromptResult`, `String` or `&'static str` (one user text message),
/// and `Result<T, E: Display>` of those (an `Err` is answered with -32603 and its text).
///
/// **Generated items.** Next to `fn review`, a hidden `struct review {}` through which
/// `server!(prompts = [review])` and `review::prompt()` reach the prompt. The function may
/// be `async` or not; it must be a free function without `self` or generics.
#[proc_macro_attribute]
pub fn mcp_prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    annotate(Kind::Prompt, args, input)
}

/// Turns a function into an MCP resource (`uri = ".."`) or resource template
/// (`template = ".."`), leaving the function itself unchanged.
///
/// ```
/// use mcp_registry::{mcp_resource, Json};
///
/// /// The project's README.
/// #[mcp_resource(uri = "file:///README.md", mime_type = "text/markdown")]
/// async fn readme() -> &'static str {
///     "# Hello"
/// }
///
/// #[derive(serde::Serialize)]
/// struct Profile { id: u64 }
///
/// /// A user's profile.
/// #[mcp_resource(template = "users://{id}/profile", name = "profile")]
/// async fn user_profile(id: u64) -> Json<Profile> {
///     Json(Profile { id })
/// }
///
/// assert_eq!(readme::resource().descriptor().description.as_deref(), Some("The project's README."));
/// let template = user_profile::resource_template();
/// assert_eq!(template.descriptor().uri_template, "users://{id}/profile");
/// assert_eq!(template.name(), "profile");
/// ```
///
/// **URI or template.** `uri = "scheme:..."` makes one resource; its function takes no
/// parameters. `template = "scheme://{var}/.."` (RFC 6570, level 2: `{var}`, `{+var}`,
/// `{#var}`) makes a family: each parameter is the template variable of the same name (or
/// `#[arg(rename = "..")]`), parsed from the URI read with `FromStr` (`String`, integers,
/// your own types); a value that does not parse answers "resource not found". Every
/// variable needs a parameter and every parameter a variable, checked at compile time.
/// A `ToolContext` parameter (either form; recognised through `ResourceParam`, not by its
/// spelling) is no variable: it is the request's context, as for tools (logging, progress,
/// cancellation, host state with `ctx.get::<T>()`).
/// `#[arg(complete = path)]` on a parameter gives its variable a completion function (an
/// `async fn(String, CompletionContext) -> impl IntoCompletions`), as on a prompt's
/// arguments: the server then serves `completion/complete` for `ref/resource`.
///
/// **Metadata.** `name = ".."` (default: the function's name), `title`, `description` (default:
/// the doc comment before its first `#` heading), `mime_type` (contents returned as a `String`
/// or bytes are labelled with it), `size` (bytes), `timeout = "10s"` (the resource's or
/// template's own limit per read, `ResourceBuilder::timeout`; the duration is read as for
/// `#[mcp_tool]`: a whole number with `ms`, `s`, `m` or `h`), `server = path` (attach it to
/// a server declared elsewhere, as for `#[mcp_tool]`), `crate = path`.
///
/// **Returns.** Anything implementing `IntoResourceContents`: `String`, `&'static str`,
/// `Vec<u8>` (a blob), `Json<T>`, `ResourceContents`, `Vec<ResourceContents>`,
/// `ReadResourceResult`, and `Result<T, E: Display>` of those (`Err(ResourceError::NotFound)`
/// is "resource not found", any other `Err` a failure).
///
/// **Generated items.** Next to `fn readme`, a hidden `struct readme {}` through which
/// `server!(resources = [readme])` and `readme::resource()` (or `resource_template()`) reach
/// it. The function may be `async` or not; it must be a free function without `self` or
/// generics.
#[proc_macro_attribute]
pub fn mcp_resource(args: TokenStream, input: TokenStream) -> TokenStream {
    annotate(Kind::Resource, args, input)
}

/// Tools, prompts and resources as methods of a struct, the struct being their host state:
/// `#[mcp_server]` on its impl block, `#[tool]`, `#[prompt]` or `#[resource(uri = "..")]` on
/// the methods that are items.
///
/// ```
/// use std::sync::Mutex;
/// use mcp_registry::{mcp_server, Registry};
/// use serde_json::json;
///
/// #[derive(Default)]
/// struct Notes {
///     notes: Mutex<Vec<String>>,
/// }
///
/// #[mcp_server(name = "notes", version = "1.0.0")]
/// impl Notes {
///     /// Add a note.
///     ///
///     /// # Arguments
///     /// * `text` - what to remember
///     #[tool]
///     async fn add(&self, text: String) -> String {
///         let mut notes = self.notes.lock().unwrap();
///         notes.push(text);
///         format!("{} notes", notes.len())
///     }
///
///     /// Every note, one a line.
///     #[resource(uri = "notes://all", mime_type = "text/plain")]
///     async fn all(&self) -> String {
///         self.notes.lock().unwrap().join("\n")
///     }
///
///     /// Summarize the notes.
///     #[prompt]
///     async fn summary(&self) -> String {
///         format!("Summarize: {}", self.notes.lock().unwrap().join("; "))
///     }
///
///     /// Not an item: an ordinary method.
///     fn count(&self) -> usize {
///         self.notes.lock().unwrap().len()
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let registry = Registry::builder().server(Notes::default().into_server()).build();
/// let added = registry.call_tool_by_name("add", json!({"text": "milk"})).await.unwrap();
/// assert_eq!(added.first_text(), Some("1 notes"));
/// # }
/// ```
///
/// **The server.** `value.into_server()` (or `Arc::new(value).server()`, keeping an `Arc` to
/// reach the value from the host too) builds the `Server` to register: its name is `name = ".."`
/// (default: the type's name in snake case), `version` (default: the crate's), `title`,
/// `instructions` and `crate` as for `server!`. The value is shared (`Arc<Self>`) by every
/// call; put what changes behind a `Mutex` or an atomic. Each value makes its own server, so
/// two values registered under two names are two servers with their own state. The server
/// carries the value (`ServerBuilder::shared_extension`), so it reaches its methods wherever
/// the server is registered, mounted or moved.
///
/// **Methods.** An item method is an `async fn` taking `&self`, then parameters exactly as a
/// `#[mcp_tool]` (`#[mcp_prompt]`, `#[mcp_resource]`) function takes them, with the same
/// attributes (`#[tool(read_only, timeout = "5s")]`, `#[resource(template = "notes://{id}")]`),
/// doc comments and `#[arg(..)]`s, and the same schemas and messages: each becomes a hidden free
/// function with `&self` replaced by a `State<Self>` parameter, run through that attribute's own
/// code. Methods without a marker stay ordinary methods. Mistakes are compile errors on the
/// offending token: a marked method without `&self` or not `async`, two items of one name (or
/// URI), a generic or trait impl.
///
/// **Call stubs.** Each `#[tool]` method `add` gets the typed stub a `#[mcp_tool]` function
/// gets as `add::call`, as an associated function of the struct: `Notes::call_add(&caller,
/// text)` calls the tool through any `mcp_registry::tool::stub::ToolCaller` (a `Registry`, a
/// connected `client::Client`) and reads its result back as the method's return type says.
/// `&self` is left out (the server provides the value), as are the parameters `#[mcp_tool]`'s
/// stub leaves out. The struct must not have a method of that name already.
#[proc_macro_attribute]
pub fn mcp_server(args: TokenStream, input: TokenStream) -> TokenStream {
    methods::mcp_server(args.into(), input.into()).into()
}

/// Groups tools, prompts and resources into a named, versioned MCP server and submits it to the process-wide
/// collection that `Registry::collected()` reads.
///
/// ```
/// use mcp_registry::{mcp_tool, server, Registry};
///
/// /// Say hello.
/// #[mcp_tool(read_only)]
/// async fn hello(name: String) -> String {
///     format!("Hello, {name}!")
/// }
///
/// mod ops {
///     /// Say goodbye.
///     #[mcp_registry::mcp_tool]
///     pub async fn bye() -> &'static str {
///         "Bye!"
///     }
/// }
///
/// server!(name = "greeter", version = "1.2.0", tools = [hello, ops::bye], fn = greeter);
///
/// let server = greeter(); // the `Server` value, to pass explicitly
/// assert_eq!(server.version(), "1.2.0");
/// assert_eq!(server.tool_names().collect::<Vec<_>>(), ["bye", "hello"]);
/// assert!(Registry::collected().server("greeter").is_some());
/// ```
///
/// Keys (comma-separated, in any order):
/// - `name = "..."` (required): the server's name (1 to 128 characters of
///   `A-Z a-z 0-9 _ - .`, no `__`).
/// - `tools = [path, ..]`: functions annotated with `#[mcp_tool]`, by any path that names
///   them (`add`, `ops::divide`, `crate::x::y`). Two tools of the same name are a compile
///   error.
/// - `prompts = [path, ..]`: functions annotated with `#[mcp_prompt]`, likewise.
/// - `resources = [path, ..]`: functions annotated with `#[mcp_resource]` (fixed URIs and
///   templates alike; templates are tried by `resources/read` in the order listed). Two
///   resources with the same URI or template are a compile error. A server needs at least
///   one of `tools`, `prompts` and `resources`.
/// - `version = "..."`: defaults to the version of the crate invoking `server!`
///   (`env!("CARGO_PKG_VERSION")`).
/// - `title = "..."`, `instructions = "..."`.
/// - `fn = [vis] ident`: also defines `vis fn ident() -> Server`, the server value to pass
///   explicitly (built on the first call, then shared). Without it nothing is named, so any
///   number of `server!`s fit in one module. With it, the server also declares a distributed
///   slice (`linkme`) with the function's visibility: items annotated with `server = ident`
///   (or any path to it) elsewhere in the crate attach themselves to the server, and the
///   lists may then be left out.
/// - `collect = false`: do not submit the server to the collection (needs `fn`).
/// - `crate = path`: where `mcp_registry` is, when re-exported.
///
/// Collection goes through `inventory`: a server defined in a crate the program never
/// references is not linked in, and so not collected. Two collected servers with the same
/// name make `Registry::try_collected()` fail with `RegistryError::DuplicateServer` (and
/// `Registry::collected()` panic), naming both definitions.
#[proc_macro]
pub fn server(input: TokenStream) -> TokenStream {
    // Cargo names the crate being compiled: two crates' servers never share a slice name.
    let seed = format!(
        "{}|{input}",
        std::env::var("CARGO_CRATE_NAME").unwrap_or_default()
    );
    let mut server = match syn::parse::<ast::ServerInput>(input) {
        Ok(server) => server,
        Err(e) => return e.to_compile_error().into(),
    };
    server.seed = ast::fnv1a(seed.as_bytes());
    let mut errors = std::mem::take(&mut server.errors);
    valid::check_server(&server, &mut errors);
    if errors.is_empty() {
        expand::server(&server).into()
    } else {
        fallback::server(&server, &errors).into()
    }
}

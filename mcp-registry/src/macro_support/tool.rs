//! What `#[mcp_tool]` and `server!` expand to: reached as `mcp_registry::__private`, not
//! public API (no stability guarantees). It sits above both `tool` and `server`, building
//! tools and servers from what the macros generate, so neither of those imports the other's
//! macro support.

use std::future::Future;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::schema::ObjectSchemaBuilder;
use crate::server::{Server, ServerBuildError, ServerBuilder};
use crate::sync::RwLockExt;
use crate::tool::param::ToolParam;
use crate::tool::{
    Arguments, BoxFuture, HandlerResult, Tool, ToolBuilder, ToolContext, ToolError, ToolHandler,
};

/// What `#[mcp_tool]` generates next to a function, under the function's name in the type
/// namespace; `server!(tools = [path])` reaches the tool through it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an MCP tool",
    label = "`server!` lists functions annotated with `#[mcp_tool]`",
    note = "annotate the function with `#[mcp_tool]`"
)]
pub trait ToolItem {
    /// The tool's name, known at compile time so `server!` can refuse duplicates.
    const NAME: &'static str;

    /// The tool (built on first use, then shared).
    fn tool() -> Tool;
}

/// A tool's metadata as `#[mcp_tool]` writes it: a constant expression, checked by rustc
/// and promoted to a `'static`, read as it is at run time. (The parameters' names and
/// descriptions sit in [`Params`], next to their types, so their count is checked too.)
pub struct ToolMeta {
    /// The tool's name, already checked by the name rule at compile time.
    pub name: &'static str,
    /// `title = ".."`.
    pub title: Option<&'static str>,
    /// `description = ".."` or the doc comment.
    pub description: Option<&'static str>,
    /// The hints `read_only`, `destructive`, `idempotent`, `open_world`, in this order.
    pub hints: [Option<bool>; 4],
    /// `timeout = "5s"`: the tool's own time limit per call.
    pub timeout: Option<std::time::Duration>,
    /// `task = "optional"` or `"required"`: whether the tool runs as a task.
    pub task: Option<crate::protocol::TaskSupport>,
    /// `ui = "ui://.."`: the app rendering the tool's results, checked at compile time.
    pub ui: Option<&'static str>,
}

/// Builds the tool from what `#[mcp_tool]` generated (see [`cached_tool`]).
fn build_tool(
    meta: &'static ToolMeta,
    signature: &'static dyn Signature,
    output_schema: fn() -> Option<Arc<Value>>,
) -> Tool {
    let mut schema = ObjectSchemaBuilder::new();
    signature.describe(&mut schema);
    let mut builder = Tool::builder(meta.name);
    if let Some(title) = meta.title {
        builder = builder.title(title);
    }
    if let Some(description) = meta.description {
        builder = builder.description(description);
    }
    let [read_only, destructive, idempotent, open_world] = meta.hints;
    type SetHint = fn(ToolBuilder, bool) -> ToolBuilder;
    let hints: [(Option<bool>, SetHint); 4] = [
        (read_only, ToolBuilder::read_only),
        (destructive, ToolBuilder::destructive),
        (idempotent, ToolBuilder::idempotent),
        (open_world, ToolBuilder::open_world),
    ];
    for (hint, set) in hints {
        if let Some(yes) = hint {
            builder = set(builder, yes);
        }
    }
    if let Some(limit) = meta.timeout {
        builder = builder.timeout(limit);
    }
    if let Some(task) = meta.task {
        builder = builder.task_support(task);
    }
    if let Some(ui) = meta.ui {
        builder = builder.ui(ui);
    }
    if let Some(output) = output_schema() {
        builder = builder.output_schema(Arc::unwrap_or_clone(output));
    }
    // The name was checked at compile time and `ObjectSchemaBuilder` builds an object
    // schema: nothing is left to check.
    builder.build_checked(Arc::new(schema.build()), MacroHandler(signature))
}

/// The tool `#[mcp_tool]` describes, built on first use and then shared; `key` is the
/// tool's generated type. No `static` per tool: a process-wide cache keyed by type keeps
/// the generated code one plain function call, cheaper to compile than a constant to
/// evaluate.
pub fn cached_tool(
    key: std::any::TypeId,
    meta: &'static ToolMeta,
    signature: &'static dyn Signature,
    output_schema: fn() -> Option<Arc<Value>>,
) -> Tool {
    type Cache = std::sync::RwLock<std::collections::HashMap<std::any::TypeId, Tool>>;
    static TOOLS: std::sync::LazyLock<Cache> = std::sync::LazyLock::new(Default::default);
    if let Some(tool) = TOOLS.read_unpoisoned().get(&key) {
        return tool.clone();
    }
    let built = build_tool(meta, signature, output_schema);
    TOOLS.write_unpoisoned().entry(key).or_insert(built).clone()
}

/// A server built once per process.
pub struct ServerCell(OnceLock<Server>);

impl ServerCell {
    /// An empty cell (for a `static`).
    pub const fn new() -> Self {
        ServerCell(OnceLock::new())
    }

    /// The server, built by `build` on first use.
    pub fn get(&self, build: fn() -> Server) -> Server {
        self.0.get_or_init(build).clone()
    }
}

impl Default for ServerCell {
    fn default() -> Self {
        Self::new()
    }
}

/// A parameter of a tool, as `#[mcp_tool]` describes it: its property name and
/// description.
pub type ParamDoc = (&'static str, Option<&'static str>);

/// A tool function's parameter types, as a tuple `P`, with the function `#[mcp_tool]`
/// generates to start a call once the arguments are read (`fn(A, B, ..) ->
/// HandlerFuture`) and each parameter's [`ParamDoc`]. Its [`Signature`] impl is generic over
/// the parameter types only, so one instantiation serves every tool with the same
/// signature.
pub struct Params<P: ParamTuple> {
    /// Starts a call with the parameters' values.
    pub start: P::Start,
    /// One per parameter, in order (an array of the tuple's length).
    pub docs: P::Docs,
}

/// A tuple of parameter types, the type of the function that starts a call with them,
/// and an array of one [`ParamDoc`] each.
pub trait ParamTuple {
    /// `fn(A, B, ..) -> HandlerFuture`.
    type Start: Copy + Send + Sync + 'static;
    /// `[ParamDoc; N]`.
    type Docs: Send + Sync + 'static;
}

impl ParamTuple for () {
    type Start = fn() -> HandlerFuture;
    type Docs = [ParamDoc; 0];
}

/// What a tool function's parameter types know: how to describe them in the input
/// schema and how to read them from a call's arguments.
pub trait Signature: Sync {
    /// Adds the parameters to the input schema.
    fn describe(&self, schema: &mut ObjectSchemaBuilder);

    /// Reads the parameters from `arguments` and `ctx` and starts the call.
    fn call(&self, ctx: ToolContext, arguments: Arguments<'_>) -> HandlerFuture;
}

impl Signature for Params<()> {
    fn describe(&self, _: &mut ObjectSchemaBuilder) {}

    fn call(&self, _: ToolContext, _: Arguments<'_>) -> HandlerFuture {
        (self.start)()
    }
}

/// The [`Signature`] of a function without parameters.
pub const fn signature0(params: &'static Params<()>) -> &'static dyn Signature {
    params
}

macro_rules! signatures {
    ($($n:literal => $signature:ident($($T:ident $v:ident $i:tt),+);)+) => {$(
        /// The [`Signature`] of a function with this many parameters. A function with
        /// one type parameter per function parameter (not a tuple), so that a type that
        /// is no [`ToolParam`] is reported on that parameter.
        pub const fn $signature<$($T: ToolParam + 'static),+>(
            params: &'static Params<($($T,)+)>,
        ) -> &'static dyn Signature {
            params
        }

        impl<$($T: 'static),+> ParamTuple for ($($T,)+) {
            type Start = fn($($T),+) -> HandlerFuture;
            type Docs = [ParamDoc; $n];
        }

        impl<$($T: ToolParam + 'static),+> Signature for Params<($($T,)+)> {
            fn describe(&self, schema: &mut ObjectSchemaBuilder) {
                $($T::describe(schema, self.docs[$i].0, self.docs[$i].1);)+
            }

            fn call(&self, ctx: ToolContext, mut arguments: Arguments<'_>) -> HandlerFuture {
                let read = (|| -> Result<($($T,)+), ToolError> {
                    Ok(($($T::from_call(&ctx, &mut arguments, self.docs[$i].0)?,)+))
                })();
                match read {
                    Ok(($($v,)+)) => (self.start)($($v),+),
                    Err(error) => call_failed(error),
                }
            }
        }
    )+};
}

signatures! {
    1 => signature1(A a 0);
    2 => signature2(A a 0, B b 1);
    3 => signature3(A a 0, B b 1, C c 2);
    4 => signature4(A a 0, B b 1, C c 2, D d 3);
    5 => signature5(A a 0, B b 1, C c 2, D d 3, E e 4);
    6 => signature6(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5);
    7 => signature7(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6);
    8 => signature8(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7);
    9 => signature9(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8);
    10 => signature10(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9);
    11 => signature11(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10);
    12 => signature12(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11);
    13 => signature13(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12);
    14 => signature14(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12, N n 13);
    15 => signature15(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12, N n 13, O o 14);
    16 => signature16(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12, N n 13, O o 14, P p 15);
}

/// The future of one call of a `#[mcp_tool]` tool.
pub type HandlerFuture = BoxFuture<'static, HandlerResult>;

/// The handler of every `#[mcp_tool]` tool: `ToolBuilder::handler` is instantiated for
/// this one type instead of once per tool, which keeps the compile time of many tools
/// down.
struct MacroHandler(&'static dyn Signature);

impl ToolHandler for MacroHandler {
    fn call(&self, ctx: ToolContext, arguments: Arguments<'_>) -> HandlerFuture {
        // Text is split into its members, each parameter read straight from its own.
        match arguments.into_members() {
            Ok(arguments) => self.0.call(ctx, arguments),
            Err(error) => call_failed(error),
        }
    }
}

/// The result of one call of a plain (non-`async`) function tool.
pub fn call_sync<R>(output: R, convert: fn(R) -> HandlerResult) -> HandlerFuture {
    ready(convert(output))
}

/// The result of one call of a `#[mcp_tool(blocking)]` function: `run` (the function
/// applied to its arguments) on the blocking thread pool, its output converted.
pub fn call_blocking<R: Send + 'static>(
    run: impl FnOnce() -> R + Send + 'static,
    convert: fn(R) -> HandlerResult,
) -> HandlerFuture {
    Box::pin(async move { convert(crate::tool::run_blocking(run).await) })
}

/// A call that ended before it began: the arguments could not be read.
pub fn call_failed(error: ToolError) -> HandlerFuture {
    ready(Err(error))
}

fn ready(result: HandlerResult) -> HandlerFuture {
    Box::pin(std::future::ready(result))
}

pin_project_lite::pin_project! {
    /// One call of an `async fn` tool: the function's future, its output converted to a
    /// result by `convert` (`IntoToolResult::into_tool_result`, named by the macro on
    /// the return type, so a type that cannot be returned is reported there and only
    /// there). The macro boxes it as the call's [`HandlerFuture`] itself, so that a future
    /// that is not `Send` is reported on the function's name.
    ///
    /// A small future of its own rather than an `async` block or `FutureExt::map`: its
    /// `poll` is compiled once per tool, and this one is the shortest (measured with
    /// `benches/compile_time`: `FutureExt::map`'s state enum and `project_replace`
    /// cost about 0.3 s on 100 tools, an `async` block about 0.1 s). The pin projection
    /// is `pin_project_lite`'s, so this crate keeps `#![forbid(unsafe_code)]`.
    pub struct CallAsync<F: Future> {
        #[pin]
        future: F,
        convert: fn(F::Output) -> HandlerResult,
    }
}

impl<F: Future> Future for CallAsync<F> {
    type Output = HandlerResult;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<HandlerResult> {
        let this = self.project();
        match this.future.poll(cx) {
            std::task::Poll::Ready(output) => std::task::Poll::Ready((this.convert)(output)),
            std::task::Poll::Pending => std::task::Poll::Pending,
        }
    }
}

/// The [`CallAsync`] of `future`, its output converted by `convert`.
pub fn call_async<F: Future>(future: F, convert: fn(F::Output) -> HandlerResult) -> CallAsync<F> {
    CallAsync { future, convert }
}

/// The server `server!` describes: `builder` (name, version, ..) with the tools the
/// functions in `tools` make. A table of function pointers rather than an array of
/// tools built inline keeps the generated code the same small size for any number of
/// tools.
pub fn build_server(builder: ServerBuilder, tools: &[fn() -> Tool]) -> Server {
    finish_server(builder.tools(tools.iter().map(|tool| tool())).build())
}

/// Unwraps a server `server!` built. Its name and the uniqueness of its tool names were
/// checked at compile time, so an error here is a bug in the macro.
fn finish_server(server: Result<Server, ServerBuildError>) -> Server {
    match server {
        Ok(server) => server,
        Err(e) => panic!("server! generated an invalid server (a bug in mcp-registry): {e}"),
    }
}

/// What `server!` finds under a listed path that names no type: a function without
/// `#[mcp_tool]` (or `#[mcp_prompt]`, `#[mcp_resource]`), whose name lives in the value
/// namespace only. `server!` imports each path under a hidden name over a fallback to this
/// type, so such a path reaches this one instead of failing with rustc's "expected type,
/// found function"; its key is [`NOT_ANNOTATED`], which `server!` refuses at compile time
/// with a message that says which attribute to add. Never built.
pub struct NotAnnotated;

/// The key of [`NotAnnotated`]: no tool or prompt name, URI or URI template is empty.
pub const NOT_ANNOTATED: &str = "";

/// Whether a listed item's key is [`NOT_ANNOTATED`]: the item is a function without the
/// attribute.
pub const fn is_not_annotated(key: &str) -> bool {
    key.is_empty()
}

impl ToolItem for NotAnnotated {
    const NAME: &'static str = NOT_ANNOTATED;

    fn tool() -> Tool {
        unreachable!("server! refuses a function without #[mcp_tool] at compile time")
    }
}

impl super::prompt::PromptItem for NotAnnotated {
    const NAME: &'static str = NOT_ANNOTATED;

    fn prompt() -> crate::prompt::Prompt {
        unreachable!("server! refuses a function without #[mcp_prompt] at compile time")
    }
}

impl super::resource::ResourceItem for NotAnnotated {
    const KEY: &'static str = NOT_ANNOTATED;

    fn add_to(_: ServerBuilder) -> ServerBuilder {
        unreachable!("server! refuses a function without #[mcp_resource] at compile time")
    }
}

/// The index of the first name equal to an earlier one (for `server!`'s compile-time
/// check that tool names are unique); functions without the attribute
/// ([`NOT_ANNOTATED`]) are reported on their own and never count as duplicates.
///
/// Runs in constant evaluation, where every step is interpreted: names are hashed once
/// and compared as hashes (one step a pair), and only equal hashes compare the strings.
pub const fn first_duplicate<const N: usize>(names: [&str; N]) -> Option<usize> {
    let mut hashes = [0u64; N];
    let mut i = 0;
    while i < N {
        hashes[i] = fnv1a(names[i].as_bytes());
        i += 1;
    }
    let mut i = 1;
    while i < N {
        let mut j = 0;
        while j < i {
            if hashes[i] == hashes[j] && !is_not_annotated(names[i]) && str_eq(names[i], names[j]) {
                return Some(i);
            }
            j += 1;
        }
        i += 1;
    }
    None
}

/// FNV-1a, 64 bits.
const fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    hash
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// An item attached to a server declared elsewhere (`#[mcp_tool(server = math)]`): one
/// element of the distributed slice (`linkme`) that `server!(.., fn = math)` declares. The
/// linker gathers the elements; nothing runs before `main`.
pub struct Attachment {
    /// Tools, prompts, resources: the order attached items are added in.
    kind: u8,
    /// The tool or prompt name, or the resource's URI or URI template: with `kind`, a
    /// deterministic order whatever order the linker chose.
    key: &'static str,
    add: fn(ServerBuilder) -> ServerBuilder,
}

fn add_tool<T: ToolItem>(builder: ServerBuilder) -> ServerBuilder {
    builder.tool(T::tool())
}

fn add_prompt<T: super::prompt::PromptItem>(builder: ServerBuilder) -> ServerBuilder {
    builder.prompt(T::prompt())
}

impl Attachment {
    /// A `#[mcp_tool(server = ..)]`.
    pub const fn tool<T: ToolItem>() -> Attachment {
        Attachment {
            kind: 0,
            key: T::NAME,
            add: add_tool::<T>,
        }
    }

    /// A `#[mcp_prompt(server = ..)]`.
    pub const fn prompt<T: super::prompt::PromptItem>() -> Attachment {
        Attachment {
            kind: 1,
            key: T::NAME,
            add: add_prompt::<T>,
        }
    }

    /// A `#[mcp_resource(server = .., ..)]`.
    pub const fn resource<T: super::resource::ResourceItem>() -> Attachment {
        Attachment {
            kind: 2,
            key: T::KEY,
            add: T::add_to,
        }
    }
}

/// Builds a `server!` that has a distributed slice: its listed tools, then the items attached
/// to it (sorted, so templates are tried in a stable order: after the listed ones, by URI
/// template). An attached item repeating a name, URI or template cannot be caught at compile
/// time; the build panics naming it, when the server is first built.
pub fn build_attached_server(
    builder: ServerBuilder,
    tools: &[fn() -> Tool],
    attached: &[Attachment],
) -> Server {
    let mut attached: Vec<&Attachment> = attached.iter().collect();
    attached.sort_by(|a, b| (a.kind, a.key).cmp(&(b.kind, b.key)));
    let builder = builder.tools(tools.iter().map(|tool| tool()));
    let builder = attached
        .iter()
        .fold(builder, |builder, item| (item.add)(builder));
    match builder.build() {
        Ok(server) => server,
        Err(e) => panic!(
            "{e} (an item attached with `server = ..` repeats one listed in server! or attached elsewhere)"
        ),
    }
}

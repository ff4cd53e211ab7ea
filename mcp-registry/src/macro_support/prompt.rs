//! What `#[mcp_prompt]` and `server!(prompts = [..])` expand to: reached as
//! `mcp_registry::__private`, beside the tools' part (`tool.rs`); not public API.
//!
//! The shape is the tools': per prompt, one small function that starts a rendering from
//! the arguments already read, a constant with the metadata, and a call to a shared cache;
//! reading and describing the parameters is generic code instantiated once per signature
//! (`PromptParams<(A, B, ..)>`), not once per prompt.

use std::future::Future;

use crate::prompt::param::PromptParam;
use crate::prompt::{
    Prompt, PromptArguments, PromptError, PromptFuture, PromptHandler, PromptHandlerResult,
};
use crate::protocol::PromptArgument;
use crate::server::ServerBuilder;
use crate::sync::RwLockExt;
use crate::tool::ToolContext;

/// What `#[mcp_prompt]` generates next to a function, under the function's name in the type
/// namespace; `server!(prompts = [path])` reaches the prompt through it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an MCP prompt",
    label = "`server!(prompts = [..])` lists functions annotated with `#[mcp_prompt]`",
    note = "annotate the function with `#[mcp_prompt]`"
)]
pub trait PromptItem {
    /// The prompt's name, known at compile time so `server!` can refuse duplicates.
    const NAME: &'static str;

    /// The prompt (built on first use, then shared).
    fn prompt() -> Prompt;
}

/// A prompt's metadata as `#[mcp_prompt]` writes it: a constant expression.
pub struct PromptMeta {
    /// The prompt's name, already checked by the name rule at compile time.
    pub name: &'static str,
    /// `title = ".."`.
    pub title: Option<&'static str>,
    /// `description = ".."` or the doc comment.
    pub description: Option<&'static str>,
    /// `timeout = "5s"`: the prompt's own time limit per rendering.
    pub timeout: Option<std::time::Duration>,
}

/// A parameter of a prompt: its argument name and description.
pub type PromptArgDoc = (&'static str, Option<&'static str>);

/// A prompt function's parameter types, as a tuple `P`, with the function that starts a
/// rendering once the arguments are read and each parameter's [`PromptArgDoc`].
pub struct PromptParams<P: PromptParamTuple> {
    /// Starts a rendering with the parameters' values.
    pub start: P::Start,
    /// One per parameter, in order.
    pub docs: P::Docs,
}

/// A tuple of prompt parameter types, the type of the function that starts a rendering with
/// them, and an array of one [`PromptArgDoc`] each.
pub trait PromptParamTuple {
    /// `fn(A, B, ..) -> PromptFuture`.
    type Start: Copy + Send + Sync + 'static;
    /// `[PromptArgDoc; N]`.
    type Docs: Send + Sync + 'static;
}

impl PromptParamTuple for () {
    type Start = fn() -> PromptFuture;
    type Docs = [PromptArgDoc; 0];
}

/// What a prompt function's parameter types know: their argument list, and how to read
/// them from a request's arguments.
pub trait PromptSignature: Sync {
    /// The prompt's arguments, in parameter order.
    fn arguments(&self) -> Vec<PromptArgument>;

    /// Reads the parameters from `arguments` and the request's context `ctx`, and starts
    /// the rendering.
    fn get(&self, ctx: ToolContext, arguments: PromptArguments) -> PromptFuture;
}

impl PromptSignature for PromptParams<()> {
    fn arguments(&self) -> Vec<PromptArgument> {
        Vec::new()
    }

    fn get(&self, _: ToolContext, _: PromptArguments) -> PromptFuture {
        (self.start)()
    }
}

/// The [`PromptSignature`] of a prompt function without parameters.
pub const fn prompt_signature0(params: &'static PromptParams<()>) -> &'static dyn PromptSignature {
    params
}

fn argument<T: PromptParam>((name, description): PromptArgDoc) -> Option<PromptArgument> {
    T::ARGUMENT.then(|| PromptArgument {
        name: name.to_owned(),
        title: None,
        description: description.map(str::to_owned),
        required: Some(T::REQUIRED),
    })
}

macro_rules! prompt_signatures {
    ($($n:literal => $signature:ident($($T:ident $v:ident $i:tt),+);)+) => {$(
        /// The [`PromptSignature`] of a prompt function with this many parameters (one type
        /// parameter each, so a type that is no [`PromptParam`] is reported on it).
        pub const fn $signature<$($T: PromptParam + 'static),+>(
            params: &'static PromptParams<($($T,)+)>,
        ) -> &'static dyn PromptSignature {
            params
        }

        impl<$($T: 'static),+> PromptParamTuple for ($($T,)+) {
            type Start = fn($($T),+) -> PromptFuture;
            type Docs = [PromptArgDoc; $n];
        }

        impl<$($T: PromptParam + 'static),+> PromptSignature for PromptParams<($($T,)+)> {
            fn arguments(&self) -> Vec<PromptArgument> {
                [$(argument::<$T>(self.docs[$i]),)+].into_iter().flatten().collect()
            }

            fn get(&self, ctx: ToolContext, mut arguments: PromptArguments) -> PromptFuture {
                let read = (|| -> Result<($($T,)+), PromptError> {
                    Ok(($($T::from_request(&ctx, &mut arguments, self.docs[$i].0)?,)+))
                })();
                match read {
                    Ok(($($v,)+)) => (self.start)($($v),+),
                    Err(error) => ready(Err(error)),
                }
            }
        }
    )+};
}

prompt_signatures! {
    1 => prompt_signature1(A a 0);
    2 => prompt_signature2(A a 0, B b 1);
    3 => prompt_signature3(A a 0, B b 1, C c 2);
    4 => prompt_signature4(A a 0, B b 1, C c 2, D d 3);
    5 => prompt_signature5(A a 0, B b 1, C c 2, D d 3, E e 4);
    6 => prompt_signature6(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5);
    7 => prompt_signature7(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6);
    8 => prompt_signature8(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7);
    9 => prompt_signature9(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8);
    10 => prompt_signature10(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9);
    11 => prompt_signature11(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10);
    12 => prompt_signature12(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11);
    13 => prompt_signature13(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12);
    14 => prompt_signature14(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12, N n 13);
    15 => prompt_signature15(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12, N n 13, O o 14);
    16 => prompt_signature16(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12, N n 13, O o 14, P p 15);
}

/// The handler of every `#[mcp_prompt]` prompt (one type, not one per prompt).
struct MacroPromptHandler {
    signature: &'static dyn PromptSignature,
    name: &'static str,
}

impl PromptHandler for MacroPromptHandler {
    fn get(&self, arguments: PromptArguments) -> PromptFuture {
        self.get_in(ToolContext::detached(self.name, ""), arguments)
    }

    fn get_in(&self, ctx: ToolContext, arguments: PromptArguments) -> PromptFuture {
        self.signature.get(ctx, arguments)
    }
}

/// The prompt `#[mcp_prompt]` describes, built on first use and then shared; `key` is the
/// prompt's generated type.
pub fn cached_prompt(
    key: std::any::TypeId,
    meta: &'static PromptMeta,
    signature: &'static dyn PromptSignature,
    completers: fn(crate::PromptBuilder) -> crate::PromptBuilder,
) -> Prompt {
    type Cache = std::sync::RwLock<std::collections::HashMap<std::any::TypeId, Prompt>>;
    static PROMPTS: std::sync::LazyLock<Cache> = std::sync::LazyLock::new(Default::default);
    if let Some(prompt) = PROMPTS.read_unpoisoned().get(&key) {
        return prompt.clone();
    }
    let mut builder = Prompt::builder(meta.name);
    if let Some(title) = meta.title {
        builder = builder.title(title);
    }
    if let Some(description) = meta.description {
        builder = builder.description(description);
    }
    if let Some(limit) = meta.timeout {
        builder = builder.timeout(limit);
    }
    for argument in signature.arguments() {
        builder = builder.argument(argument);
    }
    // `#[arg(complete = ..)]`: each on a parameter, so on an argument the prompt has.
    builder = completers(builder);
    // The name was checked at compile time, the argument names are distinct parameters.
    let built = builder.build_checked(MacroPromptHandler {
        signature,
        name: meta.name,
    });
    PROMPTS
        .write_unpoisoned()
        .entry(key)
        .or_insert(built)
        .clone()
}

fn ready(result: PromptHandlerResult) -> PromptFuture {
    Box::pin(std::future::ready(result))
}

/// The rendering of a plain (non-`async`) prompt function: its output, converted.
pub fn prompt_sync<R>(output: R, convert: fn(R) -> PromptHandlerResult) -> PromptFuture {
    ready(convert(output))
}

pin_project_lite::pin_project! {
    /// One rendering of an `async fn` prompt: the function's future, its output converted
    /// by `convert` (`IntoPromptResult::into_prompt_result`, named by the macro on the return
    /// type). The macro boxes it, so a future that is not `Send` is reported on the name.
    pub struct PromptAsync<F: Future> {
        #[pin]
        future: F,
        convert: fn(F::Output) -> PromptHandlerResult,
    }
}

impl<F: Future> Future for PromptAsync<F> {
    type Output = PromptHandlerResult;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<PromptHandlerResult> {
        let this = self.project();
        match this.future.poll(cx) {
            std::task::Poll::Ready(output) => std::task::Poll::Ready((this.convert)(output)),
            std::task::Poll::Pending => std::task::Poll::Pending,
        }
    }
}

/// The [`PromptAsync`] of `future`, its output converted by `convert`.
pub fn prompt_async<F: Future>(
    future: F,
    convert: fn(F::Output) -> PromptHandlerResult,
) -> PromptAsync<F> {
    PromptAsync { future, convert }
}

/// `builder` with the prompts the functions in `prompts` make (for `server!`).
pub fn with_prompts(builder: ServerBuilder, prompts: &[fn() -> Prompt]) -> ServerBuilder {
    builder.prompts(prompts.iter().map(|prompt| prompt()))
}

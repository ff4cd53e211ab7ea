//! Prompts: metadata plus an async handler that renders messages from string arguments,
//! built at run time or by `#[mcp_prompt]`.

pub mod param;
mod result;

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

pub use result::{IntoPromptResult, PromptError};

use crate::completion::{
    Completer, Completers, CompletionContext, CompletionFuture, IntoCompletions,
};
use crate::protocol::{GetPromptResult, PromptArgument, PromptDescriptor};
use crate::tool::{BoxFuture, ToolContext};

/// The arguments of one `prompts/get`: names to string values, as the spec defines them.
pub type PromptArguments = BTreeMap<String, String>;

/// What a prompt handler resolves to.
pub type PromptHandlerResult = Result<GetPromptResult, PromptError>;

/// The future of one rendering of a prompt.
pub type PromptFuture = BoxFuture<'static, PromptHandlerResult>;

/// The type-erased function behind a prompt.
///
/// Implemented for every `Fn(PromptArguments) -> impl Future<Output = PromptHandlerResult>`;
/// most users never name it (use [`PromptBuilder::handler`] or `#[mcp_prompt]`). It runs
/// after the required arguments were checked.
pub trait PromptHandler: Send + Sync + 'static {
    /// Renders the prompt.
    fn get(&self, arguments: PromptArguments) -> PromptFuture;

    /// Renders the prompt for a `prompts/get` request, whose context can ask the client for
    /// input ([`ToolContext::elicit`], ...). By default the context is not used: `get`.
    fn get_in(&self, ctx: ToolContext, arguments: PromptArguments) -> PromptFuture {
        let _ = ctx;
        self.get(arguments)
    }
}

/// A handler that takes the request's context ([`PromptBuilder::handler_with_context`]).
struct ContextHandler<F> {
    name: Arc<str>,
    handler: F,
}

impl<F, Fut> PromptHandler for ContextHandler<F>
where
    F: Fn(ToolContext, PromptArguments) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = PromptHandlerResult> + Send + 'static,
{
    fn get(&self, arguments: PromptArguments) -> PromptFuture {
        self.get_in(ToolContext::detached(&self.name, ""), arguments)
    }

    fn get_in(&self, ctx: ToolContext, arguments: PromptArguments) -> PromptFuture {
        Box::pin((self.handler)(ctx, arguments))
    }
}

impl<F, Fut> PromptHandler for F
where
    F: Fn(PromptArguments) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = PromptHandlerResult> + Send + 'static,
{
    fn get(&self, arguments: PromptArguments) -> PromptFuture {
        Box::pin(self(arguments))
    }
}

/// Why a prompt could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PromptBuildError {
    /// The name breaks the naming rule (the tools' rule: 1–128 characters of
    /// `[A-Za-z0-9_.-]`).
    #[error("{message}")]
    InvalidName {
        /// The refused name.
        name: String,
        /// What is wrong with it.
        message: String,
    },
    /// Two arguments share a name.
    #[error("prompt {prompt:?} has two arguments named {argument:?}")]
    DuplicateArgument {
        /// The prompt.
        prompt: String,
        /// The repeated name.
        argument: String,
    },
    /// A completion function is given for an argument the prompt does not have.
    #[error("prompt {prompt:?} has no argument {argument:?} to complete")]
    UnknownCompletionArgument {
        /// The prompt.
        prompt: String,
        /// The argument named by `complete`.
        argument: String,
    },
}

/// A prompt: its MCP description and its handler. Cheap to clone.
///
/// ```
/// use mcp_registry::{Prompt, PromptMessage};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let review = Prompt::builder("review")
///     .description("Review a change")
///     .required_argument("diff", "The change to review")
///     .optional_argument("focus", "What to look at first")
///     .handler(|args| async move {
///         let focus = args.get("focus").map_or("everything", String::as_str);
///         vec![PromptMessage::user(format!("Review, looking at {focus}:\n{}", args["diff"]))]
///     })
///     .unwrap();
/// assert_eq!(review.descriptor().arguments.len(), 2);
/// let result = review.get([("diff".to_owned(), "+x".to_owned())].into()).await.unwrap();
/// assert_eq!(result.messages[0].content.as_text(), Some("Review, looking at everything:\n+x"));
/// let missing = review.get(Default::default()).await.unwrap_err();
/// assert_eq!(missing.to_string(), "missing required argument `diff`");
/// # }
/// ```
#[derive(Clone)]
pub struct Prompt {
    inner: Arc<PromptInner>,
}

struct PromptInner {
    name: Arc<str>,
    descriptor: PromptDescriptor,
    handler: Arc<dyn PromptHandler>,
    completers: Completers,
    timeout: Option<std::time::Duration>,
}

impl Prompt {
    /// Starts building a prompt named `name`.
    pub fn builder(name: impl Into<String>) -> PromptBuilder {
        PromptBuilder {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            meta: None,
            completers: Completers::default(),
            timeout: None,
        }
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    pub(crate) fn shared_name(&self) -> &Arc<str> {
        &self.inner.name
    }

    /// The prompt as `prompts/list` describes it.
    pub fn descriptor(&self) -> &PromptDescriptor {
        &self.inner.descriptor
    }

    /// The handler.
    pub fn handler(&self) -> &Arc<dyn PromptHandler> {
        &self.inner.handler
    }

    /// The same prompt (handler, arguments, completions) listed as `name`: how a registry's
    /// union of servers lists a prompt whose name two servers share.
    pub(crate) fn renamed(&self, name: &str) -> Prompt {
        let mut descriptor = self.inner.descriptor.clone();
        descriptor.name = name.to_owned();
        Prompt {
            inner: Arc::new(PromptInner {
                name: name.into(),
                descriptor,
                handler: self.inner.handler.clone(),
                completers: self.inner.completers.clone(),
                timeout: self.inner.timeout,
            }),
        }
    }

    /// The prompt's own time limit ([`PromptBuilder::timeout`]), if it has one.
    pub fn timeout(&self) -> Option<std::time::Duration> {
        self.inner.timeout
    }

    /// Suggests values for `argument` (`completion/complete`) from the partial `value` and
    /// the other arguments already chosen: `None` when the prompt has no such argument; no
    /// suggestions when the argument has no completion function.
    ///
    /// ```
    /// use mcp_registry::{Prompt, completion::Completions};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let review = Prompt::builder("review")
    ///     .required_argument("language", "The language")
    ///     .complete("language", |partial, _ctx| async move {
    ///         Completions::matching(["python", "pytorch", "rust"], &partial)
    ///     })
    ///     .handler(|args| async move { format!("Review {}", args["language"]) })
    ///     .unwrap();
    /// let suggested = review.complete("language", "py", Default::default()).unwrap().await.unwrap();
    /// assert_eq!(suggested.values, ["python", "pytorch"]);
    /// assert!(review.complete("nope", "", Default::default()).is_none());
    /// # }
    /// ```
    pub fn complete(
        &self,
        argument: &str,
        value: impl Into<String>,
        arguments: PromptArguments,
    ) -> Option<CompletionFuture> {
        self.inner
            .descriptor
            .arguments
            .iter()
            .any(|a| a.name == argument)
            .then(|| {
                crate::completion::run(
                    self.inner.completers.get(argument),
                    value.into(),
                    CompletionContext::new(argument, arguments),
                )
            })
    }

    /// Whether any argument has a completion function.
    pub fn has_completions(&self) -> bool {
        !self.inner.completers.is_empty()
    }

    /// Renders the prompt with `arguments`: a missing required argument is refused before
    /// the handler runs ([`PromptError::InvalidArguments`] naming it). Arguments the prompt
    /// does not declare are passed on to the handler.
    pub fn get(&self, arguments: PromptArguments) -> PromptFuture {
        match self.check(&arguments) {
            Ok(()) => self.inner.handler.get(arguments),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }

    /// [`get`](Self::get) for a request, in its context.
    pub(crate) fn get_in(&self, ctx: ToolContext, arguments: PromptArguments) -> PromptFuture {
        match self.check(&arguments) {
            Ok(()) => self.inner.handler.get_in(ctx, arguments),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }

    /// The first required argument missing from `arguments`.
    pub(crate) fn check(&self, arguments: &PromptArguments) -> Result<(), PromptError> {
        match self
            .inner
            .descriptor
            .arguments
            .iter()
            .find(|a| a.is_required() && !arguments.contains_key(&a.name))
        {
            Some(missing) => Err(PromptError::InvalidArguments(format!(
                "missing required argument `{}`",
                missing.name
            ))),
            None => Ok(()),
        }
    }
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("descriptor", &self.inner.descriptor)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Prompt`]: metadata and arguments, then [`handler`](Self::handler) to finish.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until a handler finishes it"]
pub struct PromptBuilder {
    name: String,
    title: Option<String>,
    description: Option<String>,
    arguments: Vec<PromptArgument>,
    meta: Option<Map<String, Value>>,
    completers: Completers,
    timeout: Option<std::time::Duration>,
}

impl PromptBuilder {
    /// The time limit of each rendering (counted from its first wait), in place of the
    /// registry's default; a caller's own limit still wins.
    pub fn timeout(mut self, limit: std::time::Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the prompt provides.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Adds an argument (listed in the order added).
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    /// Adds a required argument with a description.
    pub fn required_argument(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        self.argument(PromptArgument::required(name).description(description))
    }

    /// Adds an optional argument with a description.
    pub fn optional_argument(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        self.argument(PromptArgument::optional(name).description(description))
    }

    /// Prompt `_meta`.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Completes `argument` (`completion/complete`) with `completer`, given the partial value
    /// and a [`CompletionContext`] holding the other arguments already chosen; it returns
    /// anything [`IntoCompletions`] (at most 100 values are sent: more are cut, and the
    /// result says so). The argument must be one of the prompt's.
    pub fn complete<F, Fut, R>(mut self, argument: impl Into<String>, completer: F) -> Self
    where
        F: Fn(String, CompletionContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoCompletions + 'static,
    {
        self.completers
            .insert(argument.into(), Arc::new(completer) as Arc<dyn Completer>);
        self
    }

    /// Finishes with a closure over the arguments, returning anything [`IntoPromptResult`]
    /// (messages, a `String`, a [`GetPromptResult`], or a `Result` of those).
    pub fn handler<F, Fut, R>(self, handler: F) -> Result<Prompt, PromptBuildError>
    where
        F: Fn(PromptArguments) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoPromptResult + 'static,
    {
        Ok(self
            .checked()?
            .build_checked(move |arguments: PromptArguments| {
                let rendering = handler(arguments);
                async move { rendering.await.into_prompt_result() }
            }))
    }

    /// Finishes with a closure over the request's context and the arguments: the prompt can
    /// ask the client for input as a tool does ([`ToolContext::elicit`], `sample`, `roots`;
    /// in 2026-07-28, with `input_required` results and the same rule: the body runs again
    /// on each round, asking the same questions in the same order). The context's
    /// [`tool_name`](ToolContext::tool_name) is the prompt's name. Rendered without a request
    /// ([`Prompt::get`]), the context has no client to ask.
    ///
    /// ```
    /// use mcp_registry::{Prompt, ToolContext};
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Topic { topic: String }
    /// let prompt = Prompt::builder("brainstorm")
    ///     .handler_with_context(|ctx: ToolContext, _args| async move {
    ///         match ctx.elicit::<Topic>("Brainstorm about what?").await {
    ///             Ok(answer) => answer.accepted().map_or("Brainstorm.".to_owned(), |t| format!("Brainstorm about {}.", t.topic)),
    ///             Err(e) => format!("Brainstorm ({e})."),
    ///         }
    ///     })
    ///     .unwrap();
    /// ```
    pub fn handler_with_context<F, Fut, R>(self, handler: F) -> Result<Prompt, PromptBuildError>
    where
        F: Fn(ToolContext, PromptArguments) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoPromptResult + 'static,
    {
        let this = self.checked()?;
        let name: Arc<str> = this.name.as_str().into();
        Ok(this.build_checked(ContextHandler {
            name,
            handler: move |ctx: ToolContext, arguments: PromptArguments| {
                let rendering = handler(ctx, arguments);
                async move { rendering.await.into_prompt_result() }
            },
        }))
    }

    /// This builder, when its name, arguments and completions are valid.
    fn checked(self) -> Result<Self, PromptBuildError> {
        if let Some(message) = crate::name::prompt_name_error(&self.name) {
            return Err(PromptBuildError::InvalidName {
                message: message.as_str().to_owned(),
                name: self.name,
            });
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(twice) = self.arguments.iter().find(|a| !seen.insert(&a.name)) {
            return Err(PromptBuildError::DuplicateArgument {
                argument: twice.name.clone(),
                prompt: self.name,
            });
        }
        if let Some(unknown) = self
            .completers
            .names()
            .find(|name| !self.arguments.iter().any(|a| a.name == *name))
        {
            return Err(PromptBuildError::UnknownCompletionArgument {
                argument: unknown.to_owned(),
                prompt: self.name,
            });
        }
        Ok(self)
    }

    /// A prompt from a name and arguments already known to be valid (`#[mcp_prompt]`'s,
    /// checked at compile time) and a low-level handler.
    pub(crate) fn build_checked(self, handler: impl PromptHandler) -> Prompt {
        Prompt {
            inner: Arc::new(PromptInner {
                name: self.name.as_str().into(),
                descriptor: PromptDescriptor {
                    name: self.name,
                    title: self.title,
                    description: self.description,
                    arguments: self.arguments,
                    meta: self.meta,
                },
                handler: Arc::new(handler),
                completers: self.completers,
                timeout: self.timeout,
            }),
        }
    }
}

//! Tools: metadata plus an async handler, built at run time or by `#[mcp_tool]`.

mod arguments;
mod ask;
mod blocking;
mod caller;
mod context;
pub mod input;
mod key_ring;
pub mod param;
pub(crate) mod request_state;
mod result;
pub(crate) mod round;
mod state;
pub mod stub;
mod typed;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

pub use arguments::Arguments;
pub use arguments::deserialize_arguments;
pub use ask::KeyedAsk;
pub use blocking::run_blocking;
pub use caller::{Caller, Principal};
pub(crate) use context::{CallNames, CallScope, Completion};
pub use context::{Extensions, NotificationSink, ProgressError, ToolContext};
pub use input::{
    ClientCapability, Elicitation, InputCallbacks, InputError, InputHandler, SamplingRequest,
    elicitation_form,
};
pub(crate) use key_ring::KeySet;
pub use key_ring::{RequestStateKeys, RequestStateKeysError};
pub use result::{IntoToolResult, Json, ToolError};
pub use state::{MissingState, State};
pub use typed::TypedHandler;

use crate::protocol::headers::ParamHeader;
use crate::protocol::{self, ToolAnnotations, ToolNameError};
use crate::schema::SchemaError;

/// A boxed, `Send` future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a handler resolves to.
pub type HandlerResult = Result<protocol::CallToolResult, ToolError>;

/// The type-erased function behind a tool.
///
/// Implemented for every `Fn(ToolContext, Map<String, Value>) -> impl Future<Output =
/// HandlerResult>` (the arguments read as a map); most users never name it (use
/// [`ToolBuilder::typed`], [`ToolBuilder::raw`] or `#[mcp_tool]`). Implement it yourself to
/// read [`Arguments`] from a message's text without building a map.
pub trait ToolHandler: Send + Sync + 'static {
    /// Starts the tool: reads the arguments (they are not kept: only what the returned
    /// future owns lives on) and returns the call's future.
    fn call(&self, ctx: ToolContext, arguments: Arguments<'_>)
    -> BoxFuture<'static, HandlerResult>;
}

/// A tool's function that reads nothing of its context (a [`ToolBuilder::typed`] tool): its
/// calls build no context for it (unless a layer wants one).
pub(crate) trait PlainHandler: Send + Sync + 'static {
    /// Starts the tool; `lenient_scalars` is what
    /// [`RegistryBuilder::lenient_scalars`](crate::RegistryBuilder::lenient_scalars) says.
    fn call(
        &self,
        arguments: Arguments<'_>,
        lenient_scalars: bool,
    ) -> BoxFuture<'static, HandlerResult>;
}

impl<F, Fut> ToolHandler for F
where
    F: Fn(ToolContext, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult> + Send + 'static,
{
    fn call(
        &self,
        ctx: ToolContext,
        arguments: Arguments<'_>,
    ) -> BoxFuture<'static, HandlerResult> {
        let started = arguments.into_map().map(|map| self(ctx, map));
        Box::pin(async move { started?.await })
    }
}

/// Why a tool could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolBuildError {
    /// The name breaks the naming rules.
    #[error(transparent)]
    InvalidName(#[from] ToolNameError),
    /// The arguments type has no object schema.
    #[error("tool {tool:?}: {source}")]
    Schema {
        /// The tool.
        tool: String,
        /// The schema problem.
        source: SchemaError,
    },
    /// `_meta.ui.resourceUri` is not a `ui://` URI.
    #[error(
        "tool {tool:?}: its app must be a `ui://` resource (e.g. \"ui://clock/app.html\"), got {uri:?}"
    )]
    InvalidUiUri {
        /// The tool.
        tool: String,
        /// The URI given.
        uri: String,
    },
    /// A raw input schema is not an object schema.
    #[error(
        "tool {tool:?}: the input schema must be a JSON object with \"type\": \"object\" at its root, got {found}"
    )]
    InvalidInputSchema {
        /// The tool.
        tool: String,
        /// What was given.
        found: String,
    },
}

/// A tool: its MCP description and its handler. Cheap to clone.
///
/// ```
/// use mcp_registry::{Tool, Json};
/// # #[derive(serde::Deserialize, schemars::JsonSchema)]
/// # struct AddArgs { a: i64, b: i64 }
/// let add = Tool::builder("add")
///     .description("Add two integers")
///     .read_only(true)
///     .typed(|args: AddArgs| async move { (args.a + args.b).to_string() })
///     .unwrap();
/// assert_eq!(add.name(), "add");
/// assert_eq!(add.descriptor().input_schema["required"], serde_json::json!(["a", "b"]));
/// ```
#[derive(Clone)]
pub struct Tool {
    inner: Arc<ToolInner>,
}

struct ToolInner {
    name: Arc<str>,
    descriptor: protocol::ToolDescriptor,
    handler: Arc<dyn ToolHandler>,
    /// The same handler, when it reads no context.
    plain: Option<Arc<dyn PlainHandler>>,
    /// The tool's own time limit, if it has one.
    timeout: Option<std::time::Duration>,
    /// The parameters mirrored into `Mcp-Param-*` headers, read from the schema once.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    param_headers: std::sync::OnceLock<Vec<ParamHeader>>,
}

impl Tool {
    /// Starts building a tool named `name`.
    pub fn builder(name: impl Into<String>) -> ToolBuilder {
        ToolBuilder {
            name: name.into(),
            title: None,
            description: None,
            annotations: ToolAnnotations::default(),
            output_schema: None,
            meta: None,
            timeout: None,
            task_support: None,
        }
    }

    /// A tool from a raw JSON Schema and a closure over the JSON arguments: for hosts that
    /// load tools from configuration.
    ///
    /// ```
    /// use mcp_registry::Tool;
    /// use serde_json::{json, Value};
    /// let echo = Tool::new(
    ///     "echo",
    ///     "Echo the text back",
    ///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    ///     |args: Value| async move { args["text"].as_str().unwrap_or_default().to_owned() },
    /// )
    /// .unwrap();
    /// assert_eq!(echo.descriptor().description.as_deref(), Some("Echo the text back"));
    /// ```
    pub fn new<F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Result<Tool, ToolBuildError>
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult + 'static,
    {
        Tool::builder(name)
            .description(description)
            .raw(input_schema, handler)
    }

    /// A tool described by `descriptor` exactly as another server listed it (its name and
    /// schema are that server's business): what a mounted remote server's tools are.
    pub(crate) fn from_descriptor(
        descriptor: protocol::ToolDescriptor,
        handler: impl ToolHandler,
    ) -> Tool {
        Tool {
            inner: Arc::new(ToolInner {
                name: descriptor.name.as_str().into(),
                descriptor,
                handler: Arc::new(handler),
                plain: None,
                timeout: None,
                param_headers: std::sync::OnceLock::new(),
            }),
        }
    }

    /// The same tool (handler, schema, time limit) listed as `name`: how a registry's
    /// union of servers lists a tool whose name two servers share.
    pub(crate) fn renamed(&self, name: &str) -> Tool {
        let mut descriptor = self.inner.descriptor.clone();
        descriptor.name = name.to_owned();
        Tool {
            inner: Arc::new(ToolInner {
                name: name.into(),
                descriptor,
                handler: self.inner.handler.clone(),
                plain: self.inner.plain.clone(),
                timeout: self.inner.timeout,
                param_headers: std::sync::OnceLock::new(),
            }),
        }
    }

    /// Whether the tool runs as a task ([`ToolBuilder::task_support`]).
    pub fn task_support(&self) -> protocol::TaskSupport {
        self.inner
            .descriptor
            .execution
            .and_then(|e| e.task_support)
            .unwrap_or_default()
    }

    /// The tool's own time limit ([`ToolBuilder::timeout`]), if it has one.
    pub fn timeout(&self) -> Option<std::time::Duration> {
        self.inner.timeout
    }

    /// The parameters its input schema mirrors into `Mcp-Param-*` headers (2026-07-28
    /// `x-mcp-header`), read once; none when the annotations are invalid.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn param_headers(&self) -> &[ParamHeader] {
        self.inner.param_headers.get_or_init(|| {
            protocol::headers::tool_param_headers(&self.inner.descriptor.input_schema)
                .unwrap_or_default()
        })
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    pub(crate) fn shared_name(&self) -> &Arc<str> {
        &self.inner.name
    }

    /// The tool as `tools/list` describes it.
    pub fn descriptor(&self) -> &protocol::ToolDescriptor {
        &self.inner.descriptor
    }

    /// The handler.
    pub fn handler(&self) -> &Arc<dyn ToolHandler> {
        &self.inner.handler
    }

    /// The handler, when it reads no context: a call then builds none.
    pub(crate) fn plain_handler(&self) -> Option<&dyn PlainHandler> {
        self.inner.plain.as_deref()
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("descriptor", &self.inner.descriptor)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Tool`]: metadata setters, then one of [`typed`](Self::typed),
/// [`typed_with_context`](Self::typed_with_context), [`raw`](Self::raw) or
/// [`handler`](Self::handler) to finish.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until a handler finishes it"]
pub struct ToolBuilder {
    name: String,
    title: Option<String>,
    description: Option<String>,
    annotations: ToolAnnotations,
    output_schema: Option<Arc<Value>>,
    meta: Option<Map<String, Value>>,
    timeout: Option<std::time::Duration>,
    task_support: Option<protocol::TaskSupport>,
}

impl ToolBuilder {
    /// Whether the tool runs as a task: [`TaskSupport::Optional`](protocol::TaskSupport)
    /// when the client can follow one (2025-11-25: it asks with `task`; 2026-07-28: its
    /// request declares the tasks extension), [`Required`](protocol::TaskSupport::Required)
    /// only then. The body stays a plain async function: its progress, cancellation and
    /// input go through the task (see [`crate::task`]).
    pub fn task_support(mut self, support: protocol::TaskSupport) -> Self {
        self.task_support = Some(support);
        self
    }

    /// The time limit of each call (counted from its first wait), in place of the
    /// registry's default; a caller's own limit still wins.
    pub fn timeout(mut self, limit: std::time::Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Display title (also sent as `annotations.title` for clients of older versions).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        let title = title.into();
        self.annotations.title = Some(title.clone());
        self.title = Some(title);
        self
    }

    /// What the tool does.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// `readOnlyHint`.
    pub fn read_only(mut self, yes: bool) -> Self {
        self.annotations.read_only_hint = Some(yes);
        self
    }

    /// `destructiveHint`.
    pub fn destructive(mut self, yes: bool) -> Self {
        self.annotations.destructive_hint = Some(yes);
        self
    }

    /// `idempotentHint`.
    pub fn idempotent(mut self, yes: bool) -> Self {
        self.annotations.idempotent_hint = Some(yes);
        self
    }

    /// `openWorldHint`.
    pub fn open_world(mut self, yes: bool) -> Self {
        self.annotations.open_world_hint = Some(yes);
        self
    }

    /// Replaces all annotations.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Sets the output schema explicitly (typed tools returning `Json<T>` get one without this).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(Arc::new(schema));
        self
    }

    /// The app that renders the tool's results (MCP Apps): `_meta.ui`, naming a `ui://`
    /// resource the server serves ([`ResourceBuilder::app_html`](crate::ResourceBuilder::app_html)).
    /// Listed only to clients that declare the extension (see [`apps`](crate::apps)). Set
    /// after [`meta`](Self::meta), which replaces the whole `_meta`.
    pub fn ui(mut self, ui: impl Into<crate::apps::ToolUi>) -> Self {
        self.meta = Some(crate::apps::with_ui(self.meta.take(), &ui.into()));
        self
    }

    /// Tool `_meta`.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Finishes with a closure over typed arguments, `|args: A| async { .. }`, or over the
    /// [`ToolContext`] and the arguments, `|ctx: ToolContext, args: A| async { .. }`. The
    /// input schema is `A`'s (generated once, cached) and the output schema comes from the
    /// result type (e.g. `Json<T>`). A handler without the context builds none at each call.
    ///
    /// A missing required argument is reported as ``missing required field `name` ``, as
    /// `#[mcp_tool]` and [`raw`](Self::raw) tools report it.
    pub fn typed<M>(self, handler: impl TypedHandler<M>) -> Result<Tool, ToolBuildError> {
        handler.finish(self)
    }

    /// Deprecated: [`typed`](Self::typed) takes a closure of the context too.
    #[deprecated(
        since = "0.1.0",
        note = "`typed` takes `|ctx: ToolContext, args: A|` closures too"
    )]
    #[doc(hidden)]
    pub fn typed_with_context<A, F, Fut, R>(self, handler: F) -> Result<Tool, ToolBuildError>
    where
        A: DeserializeOwned + JsonSchema + 'static,
        F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult + 'static,
    {
        self.typed(handler)
    }

    /// Finishes with a raw JSON Schema and a closure over the JSON arguments object.
    ///
    /// Arguments are checked against the schema's `required` list and the `type` of each
    /// top-level property before the closure runs; deeper validation is the closure's job.
    pub fn raw<F, Fut, R>(mut self, input_schema: Value, handler: F) -> Result<Tool, ToolBuildError>
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult + 'static,
    {
        if self.output_schema.is_none() {
            self.output_schema = R::output_schema();
        }
        let input = Arc::new(input_schema);
        let schema = input.clone();
        let handler = move |ctx: ToolContext, arguments: Map<String, Value>| {
            let checked = arguments::check_raw_arguments(&schema, arguments, ctx.lenient_scalars())
                .map(|arguments| handler(Value::Object(arguments)));
            async move { checked?.await.into_tool_result() }
        };
        self.handler(input, handler)
    }

    /// Finishes with a low-level [`ToolHandler`] and its input schema (used by `#[mcp_tool]`).
    pub fn handler(
        self,
        input_schema: Arc<Value>,
        handler: impl ToolHandler,
    ) -> Result<Tool, ToolBuildError> {
        self.validated(input_schema, Arc::new(handler), None)
    }

    /// Checks the name, the app and the input schema, then finishes.
    fn validated(
        self,
        input_schema: Arc<Value>,
        handler: Arc<dyn ToolHandler>,
        plain: Option<Arc<dyn PlainHandler>>,
    ) -> Result<Tool, ToolBuildError> {
        protocol::validate_tool_name(&self.name)?;
        if let Some(ui) = crate::apps::tool_ui(self.meta.as_ref())
            && !crate::apps::is_ui_uri(&ui.resource_uri)
        {
            return Err(ToolBuildError::InvalidUiUri {
                tool: self.name,
                uri: ui.resource_uri,
            });
        }
        if input_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(ToolBuildError::InvalidInputSchema {
                tool: self.name,
                found: input_schema.to_string(),
            });
        }
        Ok(self.build(input_schema, handler, plain))
    }

    /// [`handler`](Self::handler) for a name and an object schema already known to be valid
    /// (`#[mcp_tool]`'s, checked at compile time).
    pub(crate) fn build_checked(self, input_schema: Arc<Value>, handler: impl ToolHandler) -> Tool {
        self.build(input_schema, Arc::new(handler), None)
    }

    fn build(
        self,
        input_schema: Arc<Value>,
        handler: Arc<dyn ToolHandler>,
        plain: Option<Arc<dyn PlainHandler>>,
    ) -> Tool {
        let name: Arc<str> = self.name.as_str().into();
        Tool {
            inner: Arc::new(ToolInner {
                name,
                descriptor: protocol::ToolDescriptor {
                    name: self.name,
                    title: self.title,
                    description: self.description,
                    input_schema,
                    output_schema: self.output_schema,
                    annotations: self.annotations,
                    meta: self.meta,
                    execution: self.task_support.filter(|t| t.allows_tasks()).map(|t| {
                        protocol::ToolExecution {
                            task_support: Some(t),
                        }
                    }),
                },
                handler,
                plain,
                timeout: self.timeout,
                param_headers: std::sync::OnceLock::new(),
            }),
        }
    }
}

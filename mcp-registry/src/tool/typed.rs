//! [`TypedHandler`]: the closures [`ToolBuilder::typed`] takes, with or without the
//! [`ToolContext`], and the handler each becomes.

use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{
    Arguments, BoxFuture, HandlerResult, IntoToolResult, PlainHandler, Tool, ToolBuildError,
    ToolBuilder, ToolContext, ToolHandler,
};
use crate::schema;

/// A closure [`ToolBuilder::typed`] makes a tool of: `Fn(A) -> impl Future` or
/// `Fn(ToolContext, A) -> impl Future`, where `A` is the arguments' type
/// (`DeserializeOwned + JsonSchema`) and the future's output is [`IntoToolResult`]. `M` tells
/// the two shapes apart; it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a typed tool handler",
    label = "not `|args| async {{ .. }}` or `|ctx, args| async {{ .. }}`",
    note = "`typed` takes `|args: A| async {{ .. }}` or `|ctx: ToolContext, args: A| async {{ .. }}`, \
            where `A: DeserializeOwned + JsonSchema` and the future's output is `IntoToolResult`"
)]
pub trait TypedHandler<M>: sealed::Shape<M> {}

impl<M, H: sealed::Shape<M>> TypedHandler<M> for H {}

mod sealed {
    use super::{Tool, ToolBuildError, ToolBuilder};

    /// How a typed closure finishes a builder; not for implementing outside the crate.
    pub trait Shape<M> {
        /// Finishes `builder` with this closure.
        fn finish(self, builder: ToolBuilder) -> Result<Tool, ToolBuildError>;
    }
}

/// The arguments alone.
impl<A, F, Fut, R> sealed::Shape<(A,)> for F
where
    A: DeserializeOwned + JsonSchema + 'static,
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolResult + 'static,
{
    fn finish(self, builder: ToolBuilder) -> Result<Tool, ToolBuildError> {
        let (builder, input, handler) = typed_handler(builder, Typed::new(self))?;
        let handler = Arc::new(handler);
        builder.validated(input, handler.clone(), Some(handler))
    }
}

/// The context and the arguments.
impl<A, F, Fut, R> sealed::Shape<(ToolContext, A)> for F
where
    A: DeserializeOwned + JsonSchema + 'static,
    F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolResult + 'static,
{
    fn finish(self, builder: ToolBuilder) -> Result<Tool, ToolBuildError> {
        let (builder, input, handler) = typed_handler(builder, Typed::new(WithContext(self)))?;
        builder.handler(input, handler)
    }
}

/// A typed handler made ready: the input schema from `A` (returned, and kept by the
/// handler), the output schema from `R`.
#[allow(clippy::type_complexity)]
fn typed_handler<A, F, R>(
    mut builder: ToolBuilder,
    mut handler: Typed<A, F>,
) -> Result<(ToolBuilder, Arc<Value>, Typed<A, F>), ToolBuildError>
where
    A: DeserializeOwned + JsonSchema + 'static,
    R: IntoToolResult + 'static,
    F: TypedFn<A, Output = R>,
{
    let input = schema::input_schema_for::<A>().map_err(|source| ToolBuildError::Schema {
        tool: builder.name.clone(),
        source,
    })?;
    if builder.output_schema.is_none() {
        builder.output_schema = R::output_schema();
    }
    handler.schema = input.clone();
    Ok((builder, input, handler))
}

/// The handler of a [`ToolBuilder::typed`] tool: the
/// arguments deserialized into `A` (from their text, when they came as text), then the
/// function.
struct Typed<A, F> {
    schema: Arc<Value>,
    f: F,
    arguments: std::marker::PhantomData<fn() -> A>,
}

/// A typed tool's function, with or without the context: what its calls resolve to.
trait TypedFn<A>: Send + Sync + 'static {
    /// What the function's future resolves to.
    type Output: IntoToolResult;
}

/// A function of the arguments alone.
impl<A, F, Fut, R> TypedFn<A> for F
where
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolResult,
{
    type Output = R;
}

/// A function of the context and the arguments.
struct WithContext<F>(F);

impl<A, F, Fut, R> TypedFn<A> for WithContext<F>
where
    F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolResult,
{
    type Output = R;
}

impl<A, F> Typed<A, F> {
    /// `f`, its input schema set once the builder has it.
    fn new(f: F) -> Self {
        Typed {
            schema: Arc::default(),
            f,
            arguments: std::marker::PhantomData,
        }
    }

    /// Reads the arguments into `A` and starts the call with `start`.
    #[inline]
    fn start<Fut>(
        &self,
        arguments: Arguments<'_>,
        lenient_scalars: bool,
        start: impl FnOnce(A) -> Fut,
    ) -> BoxFuture<'static, HandlerResult>
    where
        A: DeserializeOwned,
        Fut: Future<Output: IntoToolResult> + Send + 'static,
    {
        match arguments.deserialize_checked::<A>(&self.schema, lenient_scalars) {
            Ok(args) => {
                let fut = start(args);
                Box::pin(async move { fut.await.into_tool_result() })
            }
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
}

/// A function of the arguments alone, given a context: it reads only the lenient-scalars
/// flag of it.
impl<A, F> ToolHandler for Typed<A, F>
where
    Typed<A, F>: PlainHandler,
{
    fn call(
        &self,
        ctx: ToolContext,
        arguments: Arguments<'_>,
    ) -> BoxFuture<'static, HandlerResult> {
        PlainHandler::call(self, arguments, ctx.lenient_scalars())
    }
}

/// A function of the arguments alone: started without a context.
impl<A, F, Fut, R> PlainHandler for Typed<A, F>
where
    A: DeserializeOwned + 'static,
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolResult,
{
    fn call(
        &self,
        arguments: Arguments<'_>,
        lenient_scalars: bool,
    ) -> BoxFuture<'static, HandlerResult> {
        self.start(arguments, lenient_scalars, &self.f)
    }
}

impl<A, F, Fut, R> ToolHandler for Typed<A, WithContext<F>>
where
    A: DeserializeOwned + 'static,
    F: Fn(ToolContext, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoToolResult,
{
    fn call(
        &self,
        ctx: ToolContext,
        arguments: Arguments<'_>,
    ) -> BoxFuture<'static, HandlerResult> {
        let lenient = ctx.lenient_scalars();
        self.start(arguments, lenient, |args| (self.f.0)(ctx, args))
    }
}

//! Argument completion (`completion/complete`): a function per prompt argument or resource
//! template variable, given what the user typed so far and the other arguments already
//! chosen, suggesting values.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

pub use crate::protocol::Completions;
use crate::tool::BoxFuture;

/// What a completion function knows besides the partial value: which argument it completes
/// and the values already chosen for the others (`context.arguments`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompletionContext {
    argument: String,
    arguments: BTreeMap<String, String>,
}

impl CompletionContext {
    /// A context completing `argument`, with `arguments` already chosen.
    pub fn new(argument: impl Into<String>, arguments: BTreeMap<String, String>) -> Self {
        CompletionContext {
            argument: argument.into(),
            arguments,
        }
    }

    /// The argument (or template variable) being completed.
    pub fn argument(&self) -> &str {
        &self.argument
    }

    /// The value already chosen for argument `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.arguments.get(name).map(String::as_str)
    }

    /// Every argument already chosen.
    pub fn arguments(&self) -> &BTreeMap<String, String> {
        &self.arguments
    }
}

/// Why a completion function gave no suggestions: answered with -32603.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CompletionError(pub String);

/// The future of one completion.
pub type CompletionFuture = BoxFuture<'static, Result<Completions, CompletionError>>;

/// The type-erased completion function of one argument.
///
/// Implemented for every `Fn(String, CompletionContext) -> impl Future<Output = R>` where
/// `R: IntoCompletions`; most users never name it (use the builders' `complete`).
pub trait Completer: Send + Sync + 'static {
    /// Suggests values for the partial `value`.
    fn complete(&self, value: String, context: CompletionContext) -> CompletionFuture;
}

impl<F, Fut, R> Completer for F
where
    F: Fn(String, CompletionContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoCompletions + 'static,
{
    fn complete(&self, value: String, context: CompletionContext) -> CompletionFuture {
        let completing = self(value, context);
        Box::pin(async move { completing.await.into_completions() })
    }
}

/// What a completion function may return: [`Completions`], a `Vec` of values (all of them:
/// `total` is their number), or a `Result` of those whose error becomes -32603.
pub trait IntoCompletions {
    /// The suggestions.
    fn into_completions(self) -> Result<Completions, CompletionError>;
}

impl IntoCompletions for Completions {
    fn into_completions(self) -> Result<Completions, CompletionError> {
        Ok(self)
    }
}

impl IntoCompletions for Vec<String> {
    fn into_completions(self) -> Result<Completions, CompletionError> {
        Ok(Completions::new(self))
    }
}

impl IntoCompletions for Vec<&'static str> {
    fn into_completions(self) -> Result<Completions, CompletionError> {
        Ok(Completions::new(self))
    }
}

impl<T: IntoCompletions, E: fmt::Display> IntoCompletions for Result<T, E> {
    fn into_completions(self) -> Result<Completions, CompletionError> {
        self.map_err(|e| CompletionError(e.to_string()))?
            .into_completions()
    }
}

/// The completion functions of one prompt or template, by argument name.
#[derive(Clone, Default)]
pub(crate) struct Completers(BTreeMap<String, Arc<dyn Completer>>);

impl Completers {
    pub(crate) fn insert(&mut self, argument: String, completer: Arc<dyn Completer>) {
        self.0.insert(argument, completer);
    }

    pub(crate) fn get(&self, argument: &str) -> Option<&Arc<dyn Completer>> {
        self.0.get(argument)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

impl fmt::Debug for Completers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.keys()).finish()
    }
}

/// Runs `completer`, or suggests nothing when there is none.
pub(crate) fn run(
    completer: Option<&Arc<dyn Completer>>,
    value: String,
    context: CompletionContext,
) -> CompletionFuture {
    match completer {
        Some(c) => c.complete(value, context),
        None => Box::pin(std::future::ready(Ok(Completions::new(
            Vec::<String>::new(),
        )))),
    }
}

//! Resources: data a client reads by URI. A [`Resource`] has one fixed URI; a
//! [`ResourceTemplate`] makes a family of them from an RFC 6570 URI template, its function
//! given the variables of the URI read. Built at run time or by `#[mcp_resource]`.

mod app;
pub mod param;
mod result;
mod template;

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

pub use result::{IntoResourceContents, ResourceError};
pub use template::{UriTemplate, UriTemplateError};

use crate::completion::{
    Completer, Completers, CompletionContext, CompletionFuture, IntoCompletions,
};
use crate::protocol::{
    Annotations, Icon, ReadResourceResult, ResourceDescriptor, ResourceTemplateDescriptor,
};
use crate::tool::BoxFuture;

/// What a resource handler resolves to.
pub type ResourceHandlerResult = Result<ReadResourceResult, ResourceError>;

/// The future of one read of a resource.
pub type ResourceFuture = BoxFuture<'static, ResourceHandlerResult>;

/// One read: the URI asked for, the template's variables read from it (none for a static
/// resource), and the resource's declared MIME type (which contents made from a `String` or
/// bytes carry).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceRequest {
    uri: String,
    variables: BTreeMap<String, String>,
    mime_type: Option<Arc<str>>,
    context: RequestContext,
}

/// The context of the request a read serves, when there is one. Not part of a request's
/// identity: two reads of the same URI are equal whoever asked.
#[derive(Clone, Default)]
struct RequestContext(Option<crate::tool::ToolContext>);

impl PartialEq for RequestContext {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for RequestContext {}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "Some(..)" } else { "None" })
    }
}

impl ResourceRequest {
    /// A read of `uri`, without variables or MIME type.
    pub fn new(uri: impl Into<String>) -> Self {
        ResourceRequest {
            uri: uri.into(),
            ..Default::default()
        }
    }

    /// Sets the MIME type contents are labelled with.
    pub fn with_mime_type(mut self, mime_type: impl Into<Arc<str>>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Adds a template variable.
    pub fn with_variable(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.variables.insert(name.into(), value.into());
        self
    }

    /// The URI read.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The value of template variable `name` (percent-decoded).
    pub fn variable(&self, name: &str) -> Option<&str> {
        self.variables.get(name).map(String::as_str)
    }

    /// Every template variable.
    pub fn variables(&self) -> &BTreeMap<String, String> {
        &self.variables
    }

    /// The resource's declared MIME type.
    pub fn mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }

    /// The context of the request this read serves (logging, progress, cancellation, host
    /// state with [`get`](crate::ToolContext::get)), as a tool gets it; outside a request, a
    /// detached one named after the URI.
    pub fn context(&self) -> crate::tool::ToolContext {
        match &self.context.0 {
            Some(ctx) => ctx.clone(),
            None => crate::tool::ToolContext::detached(&self.uri, ""),
        }
    }

    /// Sets the context of the request the read serves.
    pub fn with_context(mut self, ctx: crate::tool::ToolContext) -> Self {
        self.context = RequestContext(Some(ctx));
        self
    }
}

/// The type-erased function behind a resource or a template.
///
/// Implemented for every `Fn(ResourceRequest) -> impl Future<Output =
/// ResourceHandlerResult>`; most users never name it (use the builders' `handler` or
/// `#[mcp_resource]`).
pub trait ResourceHandler: Send + Sync + 'static {
    /// Reads the resource.
    fn read(&self, request: ResourceRequest) -> ResourceFuture;
}

impl<F, Fut> ResourceHandler for F
where
    F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ResourceHandlerResult> + Send + 'static,
{
    fn read(&self, request: ResourceRequest) -> ResourceFuture {
        Box::pin(self(request))
    }
}

/// Why a resource or a template could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceBuildError {
    /// The URI is not an absolute URI (`scheme:...`).
    #[error("invalid resource URI {uri:?}: it must be an absolute URI, `scheme:...`")]
    InvalidUri {
        /// The refused URI.
        uri: String,
    },
    /// An app resource's URI is not a `ui://` URI.
    #[error(
        "an app resource's URI must start with `ui://` (e.g. \"ui://clock/app.html\"), got {uri:?}"
    )]
    NotAnApp {
        /// The refused URI.
        uri: String,
    },
    /// The URI template does not parse, or goes beyond level 2.
    #[error(transparent)]
    InvalidTemplate(#[from] UriTemplateError),
    /// The name is empty.
    #[error("the resource at {uri:?} needs a non-empty name")]
    EmptyName {
        /// The resource's URI or URI template.
        uri: String,
    },
    /// A completion function is given for a variable the template does not have.
    #[error("resource template {uri_template:?} has no variable {variable:?} to complete")]
    UnknownCompletionVariable {
        /// The URI template.
        uri_template: String,
        /// The variable named by `complete`.
        variable: String,
    },
}

/// Whether `uri` starts with an RFC 3986 scheme and `:`.
fn has_scheme(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// The setters both builders share: each holds the wire `descriptor` it finishes with,
/// and its own `timeout`.
macro_rules! metadata_setters {
    () => {
        /// The time limit of each read (counted from its first wait), in place of the
        /// registry's default; a caller's own limit still wins.
        pub fn timeout(mut self, limit: std::time::Duration) -> Self {
            self.timeout = Some(limit);
            self
        }

        /// Display title.
        pub fn title(mut self, title: impl Into<String>) -> Self {
            self.descriptor.title = Some(title.into());
            self
        }

        /// What the resource is.
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.descriptor.description = Some(description.into());
            self
        }

        /// The MIME type; contents returned as a `String` or bytes are labelled with it.
        pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
            self.descriptor.mime_type = Some(mime_type.into());
            self
        }

        /// Hints for the client: audience, priority, last modification.
        pub fn annotations(mut self, annotations: Annotations) -> Self {
            self.descriptor.annotations = Some(annotations);
            self
        }

        /// Adds an icon.
        pub fn icon(mut self, icon: Icon) -> Self {
            self.descriptor.icons.push(icon);
            self
        }

        /// `_meta`.
        pub fn meta(mut self, meta: Map<String, Value>) -> Self {
            self.descriptor.meta = Some(meta);
            self
        }
    };
}

/// Runs `handler` and converts what it returns, for the builders' `handler`.
fn convert<F, Fut, R>(handler: F) -> impl ResourceHandler
where
    F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoResourceContents + 'static,
{
    move |request: ResourceRequest| {
        let reading = handler(request.clone());
        async move { reading.await.into_read_result(&request) }
    }
}

/// A resource with a fixed URI: its MCP description and its handler. Cheap to clone.
///
/// ```
/// use mcp_registry::Resource;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let readme = Resource::builder("file:///README.md", "readme")
///     .mime_type("text/markdown")
///     .handler(|_| async { "# Hello" })
///     .unwrap();
/// let result = readme.read().await.unwrap();
/// assert_eq!(result.contents[0].as_text(), Some("# Hello"));
/// assert_eq!(result.contents[0].mime_type(), Some("text/markdown"));
/// # }
/// ```
#[derive(Clone)]
pub struct Resource {
    inner: Arc<ResourceInner>,
}

struct ResourceInner {
    timeout: Option<std::time::Duration>,
    uri: Arc<str>,
    mime_type: Option<Arc<str>>,
    descriptor: ResourceDescriptor,
    handler: Arc<dyn ResourceHandler>,
}

impl Resource {
    /// Starts building the resource at `uri`, named `name`.
    pub fn builder(uri: impl Into<String>, name: impl Into<String>) -> ResourceBuilder {
        ResourceBuilder {
            descriptor: ResourceDescriptor {
                uri: uri.into(),
                name: name.into(),
                title: None,
                description: None,
                mime_type: None,
                size: None,
                annotations: None,
                icons: Vec::new(),
                meta: None,
            },
            timeout: None,
        }
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        &self.inner.uri
    }

    pub(crate) fn shared_uri(&self) -> &Arc<str> {
        &self.inner.uri
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.inner.descriptor.name
    }

    /// The resource as `resources/list` describes it.
    pub fn descriptor(&self) -> &ResourceDescriptor {
        &self.inner.descriptor
    }

    /// The handler.
    pub fn handler(&self) -> &Arc<dyn ResourceHandler> {
        &self.inner.handler
    }

    /// Its own time limit (the builder's `timeout`), if it has one.
    pub fn timeout(&self) -> Option<std::time::Duration> {
        self.inner.timeout
    }

    /// Reads the resource.
    pub fn read(&self) -> ResourceFuture {
        self.read_in(None)
    }

    /// Reads the resource for a request with context `ctx`.
    pub(crate) fn read_in(&self, ctx: Option<crate::tool::ToolContext>) -> ResourceFuture {
        let mut request = ResourceRequest::new(&*self.inner.uri);
        request.mime_type = self.inner.mime_type.clone();
        request.context = RequestContext(ctx);
        self.inner.handler.read(request)
    }
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("descriptor", &self.inner.descriptor)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Resource`]: metadata, then [`handler`](Self::handler) to finish.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until a handler finishes it"]
pub struct ResourceBuilder {
    descriptor: ResourceDescriptor,
    timeout: Option<std::time::Duration>,
}

impl ResourceBuilder {
    /// A builder holding everything `descriptor` says (a remote server's listing).
    pub(crate) fn from_descriptor(descriptor: ResourceDescriptor) -> Self {
        ResourceBuilder {
            descriptor,
            timeout: None,
        }
    }

    metadata_setters!();

    /// The size in bytes, when known.
    pub fn size(mut self, size: u64) -> Self {
        self.descriptor.size = Some(size);
        self
    }

    /// Finishes with a closure given each read's [`ResourceRequest`], returning anything
    /// [`IntoResourceContents`] (a `String`, bytes, `Json<T>`, contents, or a `Result`).
    pub fn handler<F, Fut, R>(self, handler: F) -> Result<Resource, ResourceBuildError>
    where
        F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoResourceContents + 'static,
    {
        let uri = &self.descriptor.uri;
        if !has_scheme(uri) {
            return Err(ResourceBuildError::InvalidUri { uri: uri.clone() });
        }
        if self.descriptor.name.is_empty() {
            return Err(ResourceBuildError::EmptyName { uri: uri.clone() });
        }
        Ok(self.build_checked(convert(handler)))
    }

    /// A resource from metadata already known to be valid and a low-level handler.
    pub(crate) fn build_checked(self, handler: impl ResourceHandler) -> Resource {
        Resource {
            inner: Arc::new(ResourceInner {
                timeout: self.timeout,
                uri: self.descriptor.uri.as_str().into(),
                mime_type: self.descriptor.mime_type.as_deref().map(Arc::from),
                descriptor: self.descriptor,
                handler: Arc::new(handler),
            }),
        }
    }
}

/// A family of resources named by an RFC 6570 URI template: a URI the template matches is
/// read by the template's handler, given the URI's variables. Cheap to clone.
///
/// ```
/// use mcp_registry::ResourceTemplate;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let profile = ResourceTemplate::builder("users://{id}/profile", "profile")
///     .mime_type("application/json")
///     .handler(|req| async move { format!(r#"{{"id": {}}}"#, req.variable("id").unwrap_or("0")) })
///     .unwrap();
/// let result = profile.read("users://7/profile").unwrap().await.unwrap();
/// assert_eq!(result.contents[0].as_text(), Some(r#"{"id": 7}"#));
/// assert!(profile.read("users://7").is_none(), "not a URI of this template");
/// # }
/// ```
#[derive(Clone)]
pub struct ResourceTemplate {
    inner: Arc<TemplateInner>,
}

struct TemplateInner {
    timeout: Option<std::time::Duration>,
    template: UriTemplate,
    mime_type: Option<Arc<str>>,
    descriptor: ResourceTemplateDescriptor,
    handler: Arc<dyn ResourceHandler>,
    completers: Completers,
}

impl ResourceTemplate {
    /// Starts building the template `uri_template`, named `name`.
    pub fn builder(
        uri_template: impl Into<String>,
        name: impl Into<String>,
    ) -> ResourceTemplateBuilder {
        ResourceTemplateBuilder {
            descriptor: ResourceTemplateDescriptor {
                uri_template: uri_template.into(),
                name: name.into(),
                title: None,
                description: None,
                mime_type: None,
                annotations: None,
                icons: Vec::new(),
                meta: None,
            },
            timeout: None,
            completers: Completers::default(),
        }
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.inner.descriptor.name
    }

    /// The URI template as written.
    pub fn uri_template(&self) -> &str {
        self.inner.template.as_str()
    }

    /// The parsed URI template.
    pub fn template(&self) -> &UriTemplate {
        &self.inner.template
    }

    /// The template as `resources/templates/list` describes it.
    pub fn descriptor(&self) -> &ResourceTemplateDescriptor {
        &self.inner.descriptor
    }

    /// The handler.
    pub fn handler(&self) -> &Arc<dyn ResourceHandler> {
        &self.inner.handler
    }

    /// Its own time limit (the builder's `timeout`), if it has one.
    pub fn timeout(&self) -> Option<std::time::Duration> {
        self.inner.timeout
    }

    /// The request reading `uri` through this template, when the template matches it.
    pub fn request_for(&self, uri: &str) -> Option<ResourceRequest> {
        let variables = self.inner.template.match_uri(uri)?;
        Some(ResourceRequest {
            uri: uri.to_owned(),
            variables,
            mime_type: self.inner.mime_type.clone(),
            context: RequestContext::default(),
        })
    }

    /// Suggests values for template variable `variable` (`completion/complete`) from the
    /// partial `value` and the variables already chosen: `None` when the template has no such
    /// variable; no suggestions when the variable has no completion function.
    ///
    /// ```
    /// use mcp_registry::ResourceTemplate;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let file = ResourceTemplate::builder("repo://{owner}/{name}", "repository")
    ///     .complete("name", |partial, ctx| async move {
    ///         let owner = ctx.get("owner").unwrap_or_default().to_owned();
    ///         vec![format!("{owner}-{partial}-core"), format!("{owner}-{partial}-cli")]
    ///     })
    ///     .handler(|req| async move { req.uri().to_owned() })
    ///     .unwrap();
    /// let chosen = [("owner".to_owned(), "acme".to_owned())].into();
    /// let suggested = file.complete("name", "x", chosen).unwrap().await.unwrap();
    /// assert_eq!(suggested.values, ["acme-x-core", "acme-x-cli"]);
    /// # }
    /// ```
    pub fn complete(
        &self,
        variable: &str,
        value: impl Into<String>,
        variables: BTreeMap<String, String>,
    ) -> Option<CompletionFuture> {
        self.inner
            .template
            .variables()
            .iter()
            .any(|v| v == variable)
            .then(|| {
                crate::completion::run(
                    self.inner.completers.get(variable),
                    value.into(),
                    CompletionContext::new(variable, variables),
                )
            })
    }

    /// Whether any variable has a completion function.
    pub fn has_completions(&self) -> bool {
        !self.inner.completers.is_empty()
    }

    /// Reads `uri` through this template; `None` when the template does not match it.
    pub fn read(&self, uri: &str) -> Option<ResourceFuture> {
        self.read_in(uri, &mut None)
    }

    /// Reads `uri` through this template for a request with context `ctx` (taken only when
    /// the template matches).
    pub(crate) fn read_in(
        &self,
        uri: &str,
        ctx: &mut Option<crate::tool::ToolContext>,
    ) -> Option<ResourceFuture> {
        self.request_for(uri)
            .map(|request| self.read_request(request, ctx.take()))
    }

    /// Reads what `request` (made by [`request_for`](Self::request_for)) names, for a
    /// request with context `ctx`.
    pub(crate) fn read_request(
        &self,
        mut request: ResourceRequest,
        ctx: Option<crate::tool::ToolContext>,
    ) -> ResourceFuture {
        request.context = RequestContext(ctx);
        self.inner.handler.read(request)
    }
}

impl fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("descriptor", &self.inner.descriptor)
            .finish_non_exhaustive()
    }
}

/// Builds a [`ResourceTemplate`]: metadata, then [`handler`](Self::handler) to finish.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until a handler finishes it"]
pub struct ResourceTemplateBuilder {
    descriptor: ResourceTemplateDescriptor,
    timeout: Option<std::time::Duration>,
    completers: Completers,
}

impl ResourceTemplateBuilder {
    /// A builder holding everything `descriptor` says (a remote server's listing).
    pub(crate) fn from_descriptor(descriptor: ResourceTemplateDescriptor) -> Self {
        ResourceTemplateBuilder {
            descriptor,
            timeout: None,
            completers: Completers::default(),
        }
    }

    metadata_setters!();

    /// Completes template variable `variable` (`completion/complete`) with `completer`,
    /// given the partial value and a [`CompletionContext`] holding the variables already
    /// chosen; it returns anything [`IntoCompletions`]. The variable must be one of the
    /// template's.
    pub fn complete<F, Fut, R>(mut self, variable: impl Into<String>, completer: F) -> Self
    where
        F: Fn(String, CompletionContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoCompletions + 'static,
    {
        self.completers
            .insert(variable.into(), Arc::new(completer) as Arc<dyn Completer>);
        self
    }

    /// Finishes with a closure given each read's [`ResourceRequest`] (its
    /// [`variable`](ResourceRequest::variable)s read from the URI), returning anything
    /// [`IntoResourceContents`].
    pub fn handler<F, Fut, R>(self, handler: F) -> Result<ResourceTemplate, ResourceBuildError>
    where
        F: Fn(ResourceRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoResourceContents + 'static,
    {
        self.build_with(convert(handler))
    }

    /// The template with a low-level handler; the template is parsed here.
    pub(crate) fn build_with(
        self,
        handler: impl ResourceHandler,
    ) -> Result<ResourceTemplate, ResourceBuildError> {
        let template = UriTemplate::parse(&self.descriptor.uri_template)?;
        if let Some(unknown) = self
            .completers
            .names()
            .find(|name| !template.variables().iter().any(|v| v == name))
        {
            return Err(ResourceBuildError::UnknownCompletionVariable {
                variable: unknown.to_owned(),
                uri_template: self.descriptor.uri_template,
            });
        }
        if self.descriptor.name.is_empty() {
            return Err(ResourceBuildError::EmptyName {
                uri: self.descriptor.uri_template,
            });
        }
        Ok(ResourceTemplate {
            inner: Arc::new(TemplateInner {
                timeout: self.timeout,
                template,
                mime_type: self.descriptor.mime_type.as_deref().map(Arc::from),
                descriptor: self.descriptor,
                handler: Arc::new(handler),
                completers: self.completers,
            }),
        })
    }
}

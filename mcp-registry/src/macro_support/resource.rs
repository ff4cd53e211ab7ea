//! What `#[mcp_resource]` and `server!(resources = [..])` expand to: reached as
//! `mcp_registry::__private`, beside the tools' and prompts' parts; not public API.
//!
//! Per resource: one small function that reads the template variables into the parameters
//! and starts the read, a constant with the metadata, and a call to a shared cache.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{LazyLock, RwLock};

use crate::resource::param::ResourceParam;
use crate::resource::{
    Resource, ResourceError, ResourceFuture, ResourceHandlerResult, ResourceRequest,
    ResourceTemplate,
};
use crate::server::ServerBuilder;
use crate::sync::RwLockExt;

/// What `#[mcp_resource]` generates next to a function, under the function's name in the
/// type namespace; `server!(resources = [path])` reaches the resource through it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an MCP resource",
    label = "`server!(resources = [..])` lists functions annotated with `#[mcp_resource]`",
    note = "annotate the function with `#[mcp_resource(uri = \"..\")]` or `#[mcp_resource(template = \"..\")]`"
)]
pub trait ResourceItem {
    /// The URI or URI template, known at compile time so `server!` can refuse duplicates.
    const KEY: &'static str;

    /// `builder` with this resource (or template) added.
    fn add_to(builder: ServerBuilder) -> ServerBuilder;
}

/// A resource's metadata as `#[mcp_resource]` writes it: a constant expression.
pub struct ResourceMeta {
    /// The URI or the URI template (checked at compile time).
    pub key: &'static str,
    /// `name = ".."` or the function's name.
    pub name: &'static str,
    /// `title = ".."`.
    pub title: Option<&'static str>,
    /// `description = ".."` or the doc comment.
    pub description: Option<&'static str>,
    /// `mime_type = ".."`.
    pub mime_type: Option<&'static str>,
    /// `size = ..`.
    pub size: Option<u64>,
    /// `timeout = "5s"`: the resource's own time limit per read.
    pub timeout: Option<std::time::Duration>,
}

/// The start function of a `#[mcp_resource]`.
pub type ResourceStart = fn(ResourceRequest) -> ResourceFuture;

type Cache = RwLock<HashMap<TypeId, Box<dyn Any + Send + Sync>>>;

/// The value cached under `key`, built by `build` on first use.
fn cached<T: Clone + Send + Sync + 'static>(key: TypeId, build: impl FnOnce() -> T) -> T {
    static CACHE: LazyLock<Cache> = LazyLock::new(Default::default);
    let hit = CACHE
        .read_unpoisoned()
        .get(&key)
        .and_then(|v| v.downcast_ref::<T>().cloned());
    if let Some(hit) = hit {
        return hit;
    }
    let built = build();
    CACHE
        .write_unpoisoned()
        .entry(key)
        .or_insert_with(|| Box::new(built.clone()))
        .downcast_ref::<T>()
        .cloned()
        .unwrap_or(built)
}

/// Sets the optional metadata both builders share.
macro_rules! describe {
    ($builder:expr, $meta:expr) => {{
        let mut builder = $builder;
        if let Some(title) = $meta.title {
            builder = builder.title(title);
        }
        if let Some(description) = $meta.description {
            builder = builder.description(description);
        }
        if let Some(mime_type) = $meta.mime_type {
            builder = builder.mime_type(mime_type);
        }
        if let Some(limit) = $meta.timeout {
            builder = builder.timeout(limit);
        }
        builder
    }};
}

/// The resource `#[mcp_resource(uri = ..)]` describes, built on first use and then shared.
pub fn cached_resource(key: TypeId, meta: &'static ResourceMeta, start: ResourceStart) -> Resource {
    cached(key, || {
        let mut builder = Resource::builder(meta.key, meta.name);
        if let Some(size) = meta.size {
            builder = builder.size(size);
        }
        describe!(builder, meta).build_checked(start)
    })
}

/// The template `#[mcp_resource(template = ..)]` describes, built on first use and then
/// shared.
pub fn cached_resource_template(
    key: TypeId,
    meta: &'static ResourceMeta,
    start: ResourceStart,
    completers: fn(crate::ResourceTemplateBuilder) -> crate::ResourceTemplateBuilder,
) -> ResourceTemplate {
    cached(key, || {
        let builder = ResourceTemplate::builder(meta.key, meta.name);
        // `#[arg(complete = ..)]`: each on a parameter, so on a variable the template has.
        match completers(describe!(builder, meta)).build_with(start) {
            Ok(template) => template,
            // The template's syntax and variables were checked at compile time.
            Err(e) => {
                panic!("#[mcp_resource] generated an invalid template (a bug in mcp-registry): {e}")
            }
        }
    })
}

/// Template variable `name` of `request`, parsed as the parameter's type.
pub fn resource_var<T: ResourceParam>(
    request: &ResourceRequest,
    name: &str,
) -> Result<T, ResourceError> {
    T::from_request(request, name)
}

/// A read that failed before the function ran.
pub fn resource_failed(error: ResourceError) -> ResourceFuture {
    Box::pin(std::future::ready(Err(error)))
}

/// The read of a plain (non-`async`) resource function: its output, converted.
pub fn resource_sync<R>(
    output: R,
    request: ResourceRequest,
    convert: fn(R, &ResourceRequest) -> ResourceHandlerResult,
) -> ResourceFuture {
    Box::pin(std::future::ready(convert(output, &request)))
}

pin_project_lite::pin_project! {
    /// One read of an `async fn` resource: the function's future, its output converted by
    /// `convert` (`IntoResourceContents::into_read_result`) for `request`.
    pub struct ResourceAsync<F: Future> {
        #[pin]
        future: F,
        request: ResourceRequest,
        convert: fn(F::Output, &ResourceRequest) -> ResourceHandlerResult,
    }
}

impl<F: Future> Future for ResourceAsync<F> {
    type Output = ResourceHandlerResult;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<ResourceHandlerResult> {
        let this = self.project();
        match this.future.poll(cx) {
            std::task::Poll::Ready(output) => {
                std::task::Poll::Ready((this.convert)(output, this.request))
            }
            std::task::Poll::Pending => std::task::Poll::Pending,
        }
    }
}

/// The [`ResourceAsync`] of `future`.
pub fn resource_async<F: Future>(
    future: F,
    request: ResourceRequest,
    convert: fn(F::Output, &ResourceRequest) -> ResourceHandlerResult,
) -> ResourceAsync<F> {
    ResourceAsync {
        future,
        request,
        convert,
    }
}

/// `builder` with the resources `server!(resources = [..])` lists, in order.
pub fn with_resources(
    builder: ServerBuilder,
    resources: &[fn(ServerBuilder) -> ServerBuilder],
) -> ServerBuilder {
    resources.iter().fold(builder, |builder, add| add(builder))
}

//! App resources (MCP Apps): a `ui://` resource serving an app's HTML with the extension's
//! MIME type and its `_meta.ui` (see [`crate::apps`]).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Resource, ResourceBuildError, ResourceBuilder, ResourceRequest};
use crate::apps::{self, MIME_TYPE, UiResourceMeta};
use crate::protocol::ResourceContents;

impl Resource {
    /// An app resource at `uri` (a `ui://` URI) serving `html` (see
    /// [`ResourceBuilder::app_html`]); use the builder to add a title, a description or
    /// [`ui`](ResourceBuilder::ui) metadata.
    pub fn app_html(
        uri: impl Into<String>,
        name: impl Into<String>,
        html: impl Into<Arc<str>>,
    ) -> Result<Resource, ResourceBuildError> {
        Resource::builder(uri, name).app_html(html)
    }
}

impl ResourceBuilder {
    /// The app's `_meta.ui` (CSP origins, permissions, border): listed on the resource and
    /// sent with its contents, where hosts read it. Set after [`meta`](Self::meta), which
    /// replaces the whole `_meta`.
    pub fn ui(mut self, ui: UiResourceMeta) -> Self {
        self.descriptor.meta = Some(apps::with_ui(self.descriptor.meta.take(), &ui));
        self
    }

    /// Finishes an app resource: every read answers `html` as text of MIME type
    /// [`MIME_TYPE`], with the `_meta.ui` [`ui`](Self::ui) set. The URI must be a `ui://`
    /// URI; the HTML should be a whole HTML5 document, its scripts and styles inline (the
    /// host's sandbox loads nothing else unless [`ui`](Self::ui) declares the origins).
    pub fn app_html(mut self, html: impl Into<Arc<str>>) -> Result<Resource, ResourceBuildError> {
        if !apps::is_ui_uri(&self.descriptor.uri) {
            return Err(ResourceBuildError::NotAnApp {
                uri: self.descriptor.uri,
            });
        }
        self.descriptor.mime_type = Some(MIME_TYPE.to_owned());
        let ui = self
            .descriptor
            .meta
            .as_ref()
            .and_then(|meta| meta.get(apps::META_KEY))
            .map(|ui| Map::from_iter([(apps::META_KEY.to_owned(), Value::clone(ui))]));
        let html: Arc<str> = html.into();
        self.handler(move |request: ResourceRequest| {
            let contents = ResourceContents::text(request.uri(), &*html).with_mime_type(MIME_TYPE);
            let contents = match &ui {
                Some(ui) => contents.with_meta(ui.clone()),
                None => contents,
            };
            std::future::ready(contents)
        })
    }
}

use std::fmt::Display;

use serde::Serialize;

use super::ResourceRequest;
use crate::protocol::{ReadResourceResult, ResourceContents};
use crate::tool::Json;

/// Why a resource handler produced no contents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// The URI names no resource (a template matched, but nothing has that id). Answered as
    /// the revision's resource-not-found error: -32002 through 2025-11-25, -32602 with
    /// `data.uri` in 2026-07-28.
    #[error("{0}")]
    NotFound(String),
    /// The handler failed; answered with -32603.
    #[error("{0}")]
    Failed(String),
}

impl ResourceError {
    /// A failure with the given message.
    pub fn failed(message: impl Display) -> Self {
        ResourceError::Failed(message.to_string())
    }

    /// "No such resource", with the given reason.
    pub fn not_found(reason: impl Display) -> Self {
        ResourceError::NotFound(reason.to_string())
    }
}

/// Turns a resource function's return value into a `resources/read` result.
///
/// Implemented for `String` and `&'static str` (text contents), `Vec<u8>` and
/// `&'static [u8]` (binary contents, base64 on the wire), [`Json<T>`] (the value as JSON
/// text, `application/json` unless the resource declares a MIME type), [`ResourceContents`],
/// `Vec<ResourceContents>`, [`ReadResourceResult`], and `Result<T, E: Display + 'static>` of
/// those (an `Err` is a failure, answered with -32603; an `Err(ResourceError::NotFound(..))`
/// is the revision's resource-not-found error).
/// Contents made here carry the URI read and the resource's MIME type.
///
/// ```
/// use mcp_registry::IntoResourceContents;
/// use mcp_registry::resource::ResourceRequest;
/// let request = ResourceRequest::new("test://a").with_mime_type("text/plain");
/// let r = "hello".into_read_result(&request).unwrap();
/// assert_eq!(serde_json::to_value(&r.contents[0]).unwrap(),
///            serde_json::json!({"uri": "test://a", "mimeType": "text/plain", "text": "hello"}));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP resource",
    label = "return String, Vec<u8>, Json<T>, ResourceContents, Vec<ResourceContents>, ReadResourceResult, or Result<T, E: Display> of those",
    note = "implement `mcp_registry::IntoResourceContents` for `{Self}` to return it from a resource"
)]
pub trait IntoResourceContents {
    /// The result of reading `request`'s resource, or the failure it stands for.
    fn into_read_result(
        self,
        request: &ResourceRequest,
    ) -> Result<ReadResourceResult, ResourceError>;
}

fn one(contents: ResourceContents, request: &ResourceRequest) -> ReadResourceResult {
    let contents = match request.mime_type() {
        Some(mime) => contents.with_mime_type(mime),
        None => contents,
    };
    ReadResourceResult::new(vec![contents])
}

impl IntoResourceContents for ReadResourceResult {
    fn into_read_result(self, _: &ResourceRequest) -> Result<ReadResourceResult, ResourceError> {
        Ok(self)
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_read_result(self, _: &ResourceRequest) -> Result<ReadResourceResult, ResourceError> {
        Ok(ReadResourceResult::new(self))
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_read_result(self, _: &ResourceRequest) -> Result<ReadResourceResult, ResourceError> {
        Ok(ReadResourceResult::new(vec![self]))
    }
}

impl IntoResourceContents for String {
    fn into_read_result(
        self,
        request: &ResourceRequest,
    ) -> Result<ReadResourceResult, ResourceError> {
        Ok(one(ResourceContents::text(request.uri(), self), request))
    }
}

impl IntoResourceContents for &'static str {
    fn into_read_result(
        self,
        request: &ResourceRequest,
    ) -> Result<ReadResourceResult, ResourceError> {
        self.to_owned().into_read_result(request)
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_read_result(
        self,
        request: &ResourceRequest,
    ) -> Result<ReadResourceResult, ResourceError> {
        Ok(one(ResourceContents::blob(request.uri(), self), request))
    }
}

impl IntoResourceContents for &'static [u8] {
    fn into_read_result(
        self,
        request: &ResourceRequest,
    ) -> Result<ReadResourceResult, ResourceError> {
        Ok(one(ResourceContents::blob(request.uri(), self), request))
    }
}

impl<T: Serialize> IntoResourceContents for Json<T> {
    fn into_read_result(
        self,
        request: &ResourceRequest,
    ) -> Result<ReadResourceResult, ResourceError> {
        let text = serde_json::to_string(&self.0).map_err(ResourceError::failed)?;
        let contents = ResourceContents::text(request.uri(), text)
            .with_mime_type(request.mime_type().unwrap_or("application/json"));
        Ok(ReadResourceResult::new(vec![contents]))
    }
}

impl IntoResourceContents for ResourceError {
    fn into_read_result(self, _: &ResourceRequest) -> Result<ReadResourceResult, ResourceError> {
        Err(self)
    }
}

impl<T: IntoResourceContents, E: Display + 'static> IntoResourceContents for Result<T, E> {
    fn into_read_result(
        self,
        request: &ResourceRequest,
    ) -> Result<ReadResourceResult, ResourceError> {
        match self {
            Ok(v) => v.into_read_result(request),
            // A `ResourceError` keeps its kind (`NotFound` stays "not found").
            Err(e) => Err(
                match (&e as &dyn std::any::Any).downcast_ref::<ResourceError>() {
                    Some(kind) => kind.clone(),
                    None => ResourceError::Failed(e.to_string()),
                },
            ),
        }
    }
}

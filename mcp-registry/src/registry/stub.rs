//! The registry as a [`ToolCaller`]: typed call stubs answered in-process.

use serde_json::{Map, Value};

use super::{CallError, Registry};
use crate::protocol::CallToolResult;
use crate::tool::BoxFuture;
use crate::tool::stub::{ToolCallError, ToolCaller};

/// Calls by plain name (unique among enabled servers) or qualified name, as
/// [`Registry::call_tool_by_name`] does, under the registry's defaults (layers, time limits).
/// The tool's own failure ([`CallError::ToolFailed`]) is [`ToolCallError::Tool`].
impl ToolCaller for Registry {
    type Error = CallError;

    fn call_tool_object<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
    ) -> BoxFuture<'a, Result<CallToolResult, ToolCallError<CallError>>> {
        Box::pin(async move {
            self.call_tool_by_name(name, Value::Object(arguments))
                .await
                .map_err(|error| match error {
                    CallError::ToolFailed { tool, message } => {
                        ToolCallError::Tool { tool, message }
                    }
                    source => ToolCallError::Call {
                        tool: name.to_owned(),
                        source,
                    },
                })
        })
    }
}

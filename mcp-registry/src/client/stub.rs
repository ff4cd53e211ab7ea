//! The client as a [`ToolCaller`]: typed call stubs answered by a connected server.

use serde_json::{Map, Value};

use super::{Client, ClientError};
use crate::protocol::CallToolResult;
use crate::tool::BoxFuture;
use crate::tool::stub::{ToolCallError, ToolCaller};

/// Calls through [`Client::call_tool`] (its request policy, timeout and task handling); a
/// result with `isError: true` is the tool's failure.
impl ToolCaller for Client {
    type Error = ClientError;

    fn call_tool_object<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
    ) -> BoxFuture<'a, Result<CallToolResult, ToolCallError<ClientError>>> {
        Box::pin(async move {
            self.call_tool(name, Value::Object(arguments))
                .await
                .map_err(|source| ToolCallError::Call {
                    tool: name.to_owned(),
                    source,
                })
        })
    }
}

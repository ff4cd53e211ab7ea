//! Tool definitions for model APIs, and the way back from a model's tool use to a tool result.

use serde_json::{Map, Value, json};

use crate::catalog::{DuplicateToolName, FilteredRegistry};
use crate::protocol::{self, CallToolResult, Content};
use crate::registry::{CallOptions, WithOptions};
use crate::tool::BoxFuture;

/// A model API's function-calling format.
///
/// | API | definition | tool use | tool result |
/// |---|---|---|---|
/// | [`AnthropicMessages`](Self::AnthropicMessages) | `{"name","description","input_schema"}` | `{"type":"tool_use","id","name","input"}` | `{"type":"tool_result","tool_use_id","content":[..],"is_error"?}` |
/// | [`OpenAiChatCompletions`](Self::OpenAiChatCompletions) | `{"type":"function","function":{"name","description","parameters"}}` | `{"id","type":"function","function":{"name","arguments":"<JSON text>"}}` | `{"role":"tool","tool_call_id","content":"<text>"}` |
/// | [`OpenAiResponses`](Self::OpenAiResponses) | `{"type":"function","name","description","parameters","strict":false}` | `{"type":"function_call","call_id","name","arguments":"<JSON text>"}` | `{"type":"function_call_output","call_id","output":"<text>"}` |
///
/// `strict` is `false` on the Responses API because its default (`true`) demands schemas with
/// every property required and `additionalProperties: false`, which MCP tools rarely have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ModelApi {
    /// Anthropic Messages API.
    AnthropicMessages,
    /// OpenAI Chat Completions API.
    OpenAiChatCompletions,
    /// OpenAI Responses API.
    OpenAiResponses,
}

/// A model's request to call a tool, read from the API's tool-use block.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    /// The id the result must echo (`tool_use_id` / `tool_call_id` / `call_id`).
    pub id: String,
    /// The tool's model-facing name.
    pub name: String,
    /// The arguments object.
    pub arguments: Value,
}

/// Why a tool-use block could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolUseError {
    /// The block lacks a field of the API's shape (or has it with the wrong type).
    #[error("{api:?} tool-use block needs a string `{field}`: {block}")]
    MissingField {
        /// The API whose shape was expected.
        api: ModelApi,
        /// The missing field, as a JSON pointer-ish path.
        field: &'static str,
        /// The block, as JSON text.
        block: String,
    },
    /// The block has the wrong `type`.
    #[error("{api:?} tool-use block must have type {expected:?}: {block}")]
    WrongType {
        /// The API whose shape was expected.
        api: ModelApi,
        /// The `type` expected.
        expected: &'static str,
        /// The block, as JSON text.
        block: String,
    },
    /// The arguments are not a JSON object (OpenAI sends them as JSON text, which a model can
    /// get wrong). [`FilteredRegistry::dispatch_tool_use`] answers this with an error result
    /// the model can read.
    #[error("arguments of tool {name:?} are not a JSON object: {message}")]
    InvalidArguments {
        /// The id of the tool use.
        id: String,
        /// The tool's model-facing name.
        name: String,
        /// What is wrong.
        message: String,
    },
}

/// The tools exported for one model API.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolExport {
    /// Tool definitions in the API's shape, in (server, tool) order.
    pub tools: Vec<Value>,
    /// Tools left out because another tool has the same model-facing name.
    pub duplicates: Vec<DuplicateToolName>,
}

fn field<'a>(
    api: ModelApi,
    block: &'a Value,
    pointer: &'static str,
) -> Result<&'a str, ToolUseError> {
    block
        .pointer(pointer)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolUseError::MissingField {
            api,
            field: pointer.trim_start_matches('/'),
            block: block.to_string(),
        })
}

/// A content block as text, for APIs whose tool results are text.
fn content_text(content: &Content) -> String {
    match content {
        Content::Text(t) => t.text.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn result_text(result: &CallToolResult) -> String {
    if result.content.is_empty() {
        return result
            .structured_content
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default();
    }
    result
        .content
        .iter()
        .map(content_text)
        .collect::<Vec<_>>()
        .join("\n")
}

fn anthropic_block(content: &Content) -> Value {
    match content {
        Content::Text(t) => json!({ "type": "text", "text": t.text }),
        Content::Image(i) => json!({
            "type": "image",
            "source": { "type": "base64", "media_type": i.mime_type, "data": i.data },
        }),
        other => json!({ "type": "text", "text": content_text(other) }),
    }
}

impl ModelApi {
    /// One tool's definition in this API's shape, under the model-facing `name`.
    ///
    /// ```
    /// use mcp_registry::agent::ModelApi;
    /// use mcp_registry::Tool;
    /// use serde_json::json;
    /// let tool = Tool::new("add", "Add", json!({"type": "object"}), |_| async { "" }).unwrap();
    /// assert_eq!(
    ///     ModelApi::OpenAiChatCompletions.tool_definition("mcp__math__add", tool.descriptor()),
    ///     json!({"type": "function", "function": {
    ///         "name": "mcp__math__add", "description": "Add", "parameters": {"type": "object"}}})
    /// );
    /// ```
    pub fn tool_definition(self, name: &str, tool: &protocol::ToolDescriptor) -> Value {
        let schema = (*tool.input_schema).clone();
        let mut def = Map::new();
        def.insert("name".to_owned(), json!(name));
        if let Some(description) = tool.description.as_ref().or(tool.title.as_ref()) {
            def.insert("description".to_owned(), json!(description));
        }
        match self {
            ModelApi::AnthropicMessages => {
                def.insert("input_schema".to_owned(), schema);
                Value::Object(def)
            }
            ModelApi::OpenAiChatCompletions => {
                def.insert("parameters".to_owned(), schema);
                json!({ "type": "function", "function": def })
            }
            ModelApi::OpenAiResponses => {
                let mut out = Map::new();
                out.insert("type".to_owned(), json!("function"));
                out.extend(def);
                out.insert("parameters".to_owned(), schema);
                out.insert("strict".to_owned(), json!(false));
                Value::Object(out)
            }
        }
    }

    /// Reads a tool-use block of this API.
    ///
    /// ```
    /// use mcp_registry::agent::ModelApi;
    /// use serde_json::json;
    /// let call = json!({"id": "call_1", "type": "function",
    ///                   "function": {"name": "mcp__math__add", "arguments": "{\"a\":1}"}});
    /// let tool_use = ModelApi::OpenAiChatCompletions.parse_tool_use(&call).unwrap();
    /// assert_eq!(tool_use.arguments, json!({"a": 1}));
    /// ```
    pub fn parse_tool_use(self, block: &Value) -> Result<ToolUse, ToolUseError> {
        let wrong_type = |expected| ToolUseError::WrongType {
            api: self,
            expected,
            block: block.to_string(),
        };
        let (id, name, arguments) = match self {
            ModelApi::AnthropicMessages => {
                if block.get("type").is_some_and(|t| t != "tool_use") {
                    return Err(wrong_type("tool_use"));
                }
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                (
                    field(self, block, "/id")?,
                    field(self, block, "/name")?,
                    Ok(input),
                )
            }
            ModelApi::OpenAiChatCompletions => {
                if block.get("type").is_some_and(|t| t != "function") {
                    return Err(wrong_type("function"));
                }
                let arguments = block.pointer("/function/arguments");
                (
                    field(self, block, "/id")?,
                    field(self, block, "/function/name")?,
                    json_arguments(arguments),
                )
            }
            ModelApi::OpenAiResponses => {
                if block.get("type").is_some_and(|t| t != "function_call") {
                    return Err(wrong_type("function_call"));
                }
                (
                    field(self, block, "/call_id")?,
                    field(self, block, "/name")?,
                    json_arguments(block.get("arguments")),
                )
            }
        };
        let arguments = arguments.and_then(|a| match a {
            Value::Object(_) => Ok(a),
            Value::Null => Ok(json!({})),
            other => Err(format!("expected an object, got {other}")),
        });
        match arguments {
            Ok(arguments) => Ok(ToolUse {
                id: id.to_owned(),
                name: name.to_owned(),
                arguments,
            }),
            Err(message) => Err(ToolUseError::InvalidArguments {
                id: id.to_owned(),
                name: name.to_owned(),
                message,
            }),
        }
    }

    /// A tool result in this API's shape, answering the tool use `id`.
    ///
    /// ```
    /// use mcp_registry::agent::ModelApi;
    /// use mcp_registry::CallToolResult;
    /// use serde_json::json;
    /// let failed = CallToolResult::error("division by zero");
    /// assert_eq!(
    ///     ModelApi::AnthropicMessages.tool_result("toolu_1", &failed),
    ///     json!({"type": "tool_result", "tool_use_id": "toolu_1",
    ///            "content": [{"type": "text", "text": "division by zero"}], "is_error": true})
    /// );
    /// ```
    pub fn tool_result(self, id: &str, result: &CallToolResult) -> Value {
        match self {
            ModelApi::AnthropicMessages => {
                let mut content: Vec<Value> = result.content.iter().map(anthropic_block).collect();
                if content.is_empty()
                    && let Some(structured) = &result.structured_content
                {
                    content.push(json!({ "type": "text", "text": structured.to_string() }));
                }
                let mut out =
                    json!({ "type": "tool_result", "tool_use_id": id, "content": content });
                if result.is_error() {
                    out["is_error"] = json!(true);
                }
                out
            }
            ModelApi::OpenAiChatCompletions => {
                json!({ "role": "tool", "tool_call_id": id, "content": result_text(result) })
            }
            ModelApi::OpenAiResponses => {
                json!({ "type": "function_call_output", "call_id": id, "output": result_text(result) })
            }
        }
    }
}

/// OpenAI sends arguments as JSON text; an object is accepted too.
fn json_arguments(arguments: Option<&Value>) -> Result<Value, String> {
    match arguments {
        None | Some(Value::Null) => Ok(Value::Null),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(Value::Null),
        Some(Value::String(text)) => {
            serde_json::from_str(text).map_err(|e| format!("invalid JSON ({e}): {text}"))
        }
        Some(other) => Ok(other.clone()),
    }
}

impl FilteredRegistry {
    /// The enabled, allowed tools as `api` definitions, named `mcp__<server>__<tool>` (see
    /// [`model_tool_name`](crate::catalog::model_tool_name)); name collisions are reported in
    /// [`ToolExport::duplicates`]. A tool only an MCP App calls (its `_meta.ui.visibility`
    /// without `"model"`) is left out, as a host leaves it out of the model's tools.
    ///
    /// ```
    /// use mcp_registry::agent::ModelApi;
    /// use mcp_registry::catalog::{FilteredRegistry, ToolFilter};
    /// use mcp_registry::{Registry, Server, Tool};
    /// use serde_json::json;
    /// let tool = |name: &str| Tool::new(name, "", json!({"type": "object"}), |_| async { "" }).unwrap();
    /// let registry = Registry::from_servers([Server::new("fs", None, [tool("read"), tool("rm")]).unwrap()]);
    /// let view = FilteredRegistry::new(registry, ToolFilter::builder().deny("mcp__fs__rm").build().unwrap());
    /// let export = view.export_tools(ModelApi::AnthropicMessages);
    /// assert_eq!(export.tools, [json!({"name": "mcp__fs__read", "description": "", "input_schema": {"type": "object"}})]);
    /// ```
    pub fn export_tools(&self, api: ModelApi) -> ToolExport {
        let catalog = self.catalog();
        ToolExport {
            tools: catalog
                .tools()
                .iter()
                .filter(|t| crate::apps::visible_to_model(t.tool.meta.as_ref()))
                .map(|t| api.tool_definition(&t.name, &t.tool))
                .collect(),
            duplicates: catalog.duplicates().to_vec(),
        }
    }

    /// Calls the tool a model asked for and returns the tool result in `api`'s shape. Every
    /// failure the model can act on (unknown or filtered-out tool, bad arguments, tool error,
    /// timeout) is an error result naming the problem; `Err` only when the block itself is
    /// unreadable (no id to answer).
    ///
    /// ```
    /// use mcp_registry::agent::ModelApi;
    /// use mcp_registry::catalog::FilteredRegistry;
    /// use mcp_registry::{Registry, Server, Tool};
    /// use serde_json::json;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let hi = Tool::new("hi", "Say hi", json!({"type": "object"}), |_| async { "hello" }).unwrap();
    /// let view = FilteredRegistry::from(Registry::from_servers([Server::new("greet", None, [hi]).unwrap()]));
    /// let block = json!({"type": "tool_use", "id": "toolu_1", "name": "mcp__greet__hi", "input": {}});
    /// let result = view.dispatch_tool_use(ModelApi::AnthropicMessages, &block).await.unwrap();
    /// assert_eq!(result["content"][0]["text"], "hello");
    /// # }
    /// ```
    pub fn dispatch_tool_use<'a>(&'a self, api: ModelApi, block: &'a Value) -> ToolUseRequest<'a> {
        WithOptions::new(ToolUseCall {
            view: self,
            api,
            block,
        })
    }

    /// The rest of [`dispatch_tool_use`](Self::dispatch_tool_use), under `options`.
    async fn answer_tool_use(
        &self,
        api: ModelApi,
        block: &Value,
        options: CallOptions,
    ) -> Result<Value, ToolUseError> {
        let tool_use = match api.parse_tool_use(block) {
            Ok(tool_use) => tool_use,
            Err(ToolUseError::InvalidArguments { id, name, message }) => {
                let text = ToolUseError::InvalidArguments {
                    id: id.clone(),
                    name,
                    message,
                }
                .to_string();
                return Ok(api.tool_result(&id, &CallToolResult::error(text)));
            }
            Err(error) => return Err(error),
        };
        let result = self
            .call_tool_by_name(&tool_use.name, tool_use.arguments)
            .options(options)
            .await
            .unwrap_or_else(|e| e.into_call_tool_result());
        Ok(api.tool_result(&tool_use.id, &result))
    }
}

/// A model's tool use to answer, configured (per-call options, see [`WithOptions`]) and
/// `.await`ed: what [`FilteredRegistry::dispatch_tool_use`] returns.
pub type ToolUseRequest<'a> = WithOptions<ToolUseCall<'a>>;

/// What a [`ToolUseRequest`] answers: one tool-use block in one model API's shape.
pub struct ToolUseCall<'a> {
    view: &'a FilteredRegistry,
    api: ModelApi,
    block: &'a Value,
}

impl<'a> std::future::IntoFuture for ToolUseRequest<'a> {
    type Output = Result<Value, ToolUseError>;
    type IntoFuture = BoxFuture<'a, Self::Output>;

    fn into_future(self) -> Self::IntoFuture {
        let ToolUseCall { view, api, block } = self.target;
        Box::pin(view.answer_tool_use(api, block, self.options))
    }
}

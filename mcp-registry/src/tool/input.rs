//! Asking the client for input during a call: elicitation (a form for the user), sampling
//! (a model completion) and roots (the client's workspace).
//!
//! A call carries an [`InputHandler`] when something can answer: a legacy session (a real
//! server→client JSON-RPC request), or a host passing one in-process
//! ([`CallOptions::input_handler`](crate::CallOptions::input_handler), e.g. an
//! [`InputCallbacks`] set scripted in a test). A tool asks through
//! [`ToolContext::elicit`](crate::ToolContext::elicit),
//! [`sample`](crate::ToolContext::sample) and [`roots`](crate::ToolContext::roots).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::BoxFuture;
use crate::protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult,
    ErrorObject, ListRootsResult, RootsCapability, method,
};

/// Why a tool's request for input got no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The call has no client to ask: it was made in-process without an
    /// [`InputHandler`], or over a protocol era that cannot ask this way.
    #[error(
        "no client to ask: this call has no input handler. In-process, give it one with CallOptions::input_handler (an agent session: ControlRouter::with_input_handler); over MCP, the client must declare the capability the request needs"
    )]
    NoClient,
    /// The client did not declare the capability the request needs; nothing was sent.
    #[error("the client did not declare the `{capability}` capability; {method} was not sent")]
    NotSupported {
        /// The capability: `elicitation`, `sampling` or `roots`.
        capability: &'static str,
        /// The request that would have been sent.
        method: &'static str,
    },
    /// The client answered with a JSON-RPC error.
    #[error("the client refused {method}: {} (code {})", .error.message, .error.code.0)]
    Client {
        /// The request refused.
        method: &'static str,
        /// The client's error.
        error: ErrorObject,
    },
    /// The client's answer does not have the shape the request asks for.
    #[error("the client's answer to {method} is invalid: {message}")]
    InvalidAnswer {
        /// The request answered.
        method: &'static str,
        /// What is wrong with the answer.
        message: String,
    },
    /// The form type cannot be an elicitation form (a flat object of primitive fields).
    #[error("not an elicitation form: {0}")]
    InvalidForm(String),
    /// The connection to the client closed before it answered.
    #[error("the connection closed before the client answered")]
    Disconnected,
    /// The host's handler panicked while answering.
    #[error("the input handler panicked: {0}")]
    HandlerPanicked(String),
}

impl From<InputError> for super::ToolError {
    fn from(e: InputError) -> Self {
        match e {
            InputError::NotSupported { capability, .. } => {
                super::ToolError::MissingClientCapability {
                    capability,
                    message: e.to_string(),
                }
            }
            e => super::ToolError::Failed(e.to_string()),
        }
    }
}

/// A capability a client declares so a server can ask it for input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClientCapability {
    /// `elicitation`: forms shown to the user.
    Elicitation,
    /// `sampling`: completions from the client's model.
    Sampling,
    /// `roots`: the client's workspace roots.
    Roots,
}

impl ClientCapability {
    /// The name `ClientCapabilities` gives it.
    pub fn name(self) -> &'static str {
        match self {
            ClientCapability::Elicitation => "elicitation",
            ClientCapability::Sampling => "sampling",
            ClientCapability::Roots => "roots",
        }
    }

    /// The request that needs it.
    pub fn method(self) -> &'static str {
        match self {
            ClientCapability::Elicitation => "elicitation/create",
            ClientCapability::Sampling => "sampling/createMessage",
            ClientCapability::Roots => "roots/list",
        }
    }

    /// Whether `capabilities` declares it.
    pub fn declared_in(self, capabilities: &ClientCapabilities) -> bool {
        match self {
            ClientCapability::Elicitation => capabilities.elicitation.is_some(),
            ClientCapability::Sampling => capabilities.sampling.is_some(),
            ClientCapability::Roots => capabilities.roots.is_some(),
        }
    }
}

/// Answers a tool's requests for input: what a client does for a server. A legacy session
/// implements it with server→client requests; a host implements it to show a form to its
/// user or to run its model, and tests script it ([`InputCallbacks`]).
///
/// Only requests whose capability [`capabilities`](Self::capabilities) declares are made;
/// the default methods refuse (they are never called for an undeclared capability).
pub trait InputHandler: Send + Sync + 'static {
    /// What this client answers: `elicitation`, `sampling`, `roots`.
    fn capabilities(&self) -> ClientCapabilities;

    /// Answers `elicitation/create`.
    fn elicit(&self, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, InputError>> {
        let _ = params;
        Box::pin(std::future::ready(Err(InputError::NotSupported {
            capability: "elicitation",
            method: "elicitation/create",
        })))
    }

    /// Answers `sampling/createMessage`.
    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, InputError>> {
        let _ = params;
        Box::pin(std::future::ready(Err(InputError::NotSupported {
            capability: "sampling",
            method: "sampling/createMessage",
        })))
    }

    /// Answers `roots/list`.
    fn list_roots(&self) -> BoxFuture<'static, Result<ListRootsResult, InputError>> {
        Box::pin(std::future::ready(Err(InputError::NotSupported {
            capability: "roots",
            method: "roots/list",
        })))
    }
}

impl fmt::Debug for dyn InputHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("InputHandler")
    }
}

/// A shared handler: what a host passes to several requests.
impl InputHandler for Arc<dyn InputHandler> {
    fn capabilities(&self) -> ClientCapabilities {
        (**self).capabilities()
    }

    fn elicit(&self, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, InputError>> {
        (**self).elicit(params)
    }

    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, InputError>> {
        (**self).create_message(params)
    }

    fn list_roots(&self) -> BoxFuture<'static, Result<ListRootsResult, InputError>> {
        (**self).list_roots()
    }
}

type Callback<P, R> = Arc<dyn Fn(P) -> BoxFuture<'static, Result<R, InputError>> + Send + Sync>;

/// An [`InputHandler`] made of closures, one per kind of request: the capabilities it
/// declares are the closures it has. The way to script a client in a test.
///
/// ```
/// use mcp_registry::tool::InputCallbacks;
/// use mcp_registry::protocol::ElicitResult;
/// let decline_all = InputCallbacks::new().on_elicit(|_params| async { Ok(ElicitResult::decline()) });
/// ```
#[derive(Clone, Default)]
pub struct InputCallbacks {
    elicit: Option<Callback<ElicitParams, ElicitResult>>,
    sample: Option<Callback<CreateMessageParams, CreateMessageResult>>,
    roots: Option<Callback<(), ListRootsResult>>,
}

impl InputCallbacks {
    /// No callbacks: every capability undeclared.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers `elicitation/create` with `f` (declares `elicitation`). An `Err` is the
    /// client's refusal, as a client answers one
    /// ([`ClientBuilder::on_elicitation`](crate::client::ClientBuilder::on_elicitation)'s
    /// type): the tool gets [`InputError::Client`].
    pub fn on_elicit<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(ElicitParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.elicit = Some(callback(method::ELICITATION_CREATE, f));
        self
    }

    /// Answers `sampling/createMessage` with `f` (declares `sampling`); an `Err` is the
    /// client's refusal.
    pub fn on_sample<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.sample = Some(callback(method::SAMPLING_CREATE_MESSAGE, f));
        self
    }

    /// Answers `roots/list` with `f` (declares `roots`); an `Err` is the client's refusal.
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ListRootsResult, ErrorObject>> + Send + 'static,
    {
        self.roots = Some(callback(method::ROOTS_LIST, move |()| f()));
        self
    }
}

/// A callback whose refusal reaches the tool as the client's error to `method`.
fn callback<P, R, F, Fut>(method: &'static str, f: F) -> Callback<P, R>
where
    F: Fn(P) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
    R: 'static,
{
    Arc::new(move |p| {
        let answer = f(p);
        Box::pin(async move {
            answer
                .await
                .map_err(|error| InputError::Client { method, error })
        })
    })
}

impl fmt::Debug for InputCallbacks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputCallbacks")
            .field("elicit", &self.elicit.is_some())
            .field("sample", &self.sample.is_some())
            .field("roots", &self.roots.is_some())
            .finish()
    }
}

impl InputHandler for InputCallbacks {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities {
            roots: self.roots.as_ref().map(|_| RootsCapability::default()),
            sampling: self.sample.as_ref().map(|_| Map::new()),
            elicitation: self.elicit.as_ref().map(|_| Map::new()),
            other: Map::new(),
        }
    }

    fn elicit(&self, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, InputError>> {
        match &self.elicit {
            Some(f) => f(params),
            None => Box::pin(std::future::ready(Err(InputError::NotSupported {
                capability: "elicitation",
                method: "elicitation/create",
            }))),
        }
    }

    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, InputError>> {
        match &self.sample {
            Some(f) => f(params),
            None => Box::pin(std::future::ready(Err(InputError::NotSupported {
                capability: "sampling",
                method: "sampling/createMessage",
            }))),
        }
    }

    fn list_roots(&self) -> BoxFuture<'static, Result<ListRootsResult, InputError>> {
        match &self.roots {
            Some(f) => f(()),
            None => Box::pin(std::future::ready(Err(InputError::NotSupported {
                capability: "roots",
                method: "roots/list",
            }))),
        }
    }
}

/// A handler seen through the capabilities a 2026-07-28 request declared in its `_meta`:
/// only what both the handler answers and the request declares is asked.
pub(crate) struct Declared {
    pub(crate) handler: Arc<dyn InputHandler>,
    pub(crate) capabilities: ClientCapabilities,
}

impl InputHandler for Declared {
    fn capabilities(&self) -> ClientCapabilities {
        let own = self.handler.capabilities();
        ClientCapabilities {
            roots: own.roots.and(self.capabilities.roots),
            sampling: own.sampling.and(self.capabilities.sampling.clone()),
            elicitation: own.elicitation.and(self.capabilities.elicitation.clone()),
            other: Map::new(),
        }
    }

    fn elicit(&self, params: ElicitParams) -> BoxFuture<'static, Result<ElicitResult, InputError>> {
        self.handler.elicit(params)
    }

    fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, InputError>> {
        self.handler.create_message(params)
    }

    fn list_roots(&self) -> BoxFuture<'static, Result<ListRootsResult, InputError>> {
        self.handler.list_roots()
    }
}

/// What the user did with a typed elicitation form ([`ToolContext::elicit`](crate::ToolContext::elicit)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// Submitted the form, with these values.
    Accept(T),
    /// Explicitly declined.
    Decline,
    /// Dismissed it without choosing.
    Cancel,
}

impl<T> Elicitation<T> {
    /// The submitted values, if the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Elicitation::Accept(t) => Some(t),
            _ => None,
        }
    }
}

/// A `sampling/createMessage` request, built up: messages, model preferences, a system
/// prompt and the most tokens to sample.
///
/// ```
/// use mcp_registry::tool::SamplingRequest;
/// let request = SamplingRequest::new(200)
///     .user("Summarize: ...")
///     .system_prompt("You are terse.")
///     .model_preferences(serde_json::json!({"hints": [{"name": "claude"}], "speedPriority": 0.8}));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    params: CreateMessageParams,
}

impl SamplingRequest {
    /// No messages yet; at most `max_tokens` tokens sampled.
    pub fn new(max_tokens: u64) -> Self {
        SamplingRequest {
            params: CreateMessageParams {
                messages: Vec::new(),
                max_tokens,
                system_prompt: None,
                other: Map::new(),
            },
        }
    }

    /// Appends a text message from the user.
    pub fn user(self, text: impl Into<String>) -> Self {
        self.text_message("user", text.into())
    }

    /// Appends a text message from the assistant.
    pub fn assistant(self, text: impl Into<String>) -> Self {
        self.text_message("assistant", text.into())
    }

    fn text_message(self, role: &str, text: String) -> Self {
        self.message(serde_json::json!({"role": role, "content": {"type": "text", "text": text}}))
    }

    /// Appends a message as its JSON (`{"role": .., "content": ..}`), for other content.
    pub fn message(mut self, message: Value) -> Self {
        self.params.messages.push(message);
        self
    }

    /// The system prompt the server asks for.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.params.system_prompt = Some(prompt.into());
        self
    }

    /// `modelPreferences`: `hints`, `costPriority`, `speedPriority`, `intelligencePriority`.
    pub fn model_preferences(mut self, preferences: Value) -> Self {
        self.params
            .other
            .insert("modelPreferences".to_owned(), preferences);
        self
    }

    /// The sampling temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.params
            .other
            .insert("temperature".to_owned(), Value::from(temperature));
        self
    }
}

impl From<SamplingRequest> for CreateMessageParams {
    fn from(request: SamplingRequest) -> Self {
        request.params
    }
}

/// `T`'s elicitation form, as [`ToolContext::elicit`](crate::ToolContext::elicit) sends it, or
/// why `T` cannot be one ([`InputError::InvalidForm`]). `elicit` checks this when it runs;
/// call it in a unit test to learn of a bad form type before any user sees one:
///
/// ```
/// use mcp_registry::tool::elicitation_form;
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Confirm { confirm: bool, reason: Option<String> }
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Nested { inner: Confirm }
/// let form = elicitation_form::<Confirm>().unwrap();
/// assert_eq!(form["required"], serde_json::json!(["confirm"]));
/// assert!(elicitation_form::<Nested>().is_err(), "forms are flat");
/// ```
pub fn elicitation_form<T: schemars::JsonSchema + 'static>() -> Result<Value, InputError> {
    form_schema(&crate::schema::schema_for::<T>())
}

/// The elicitation form for a type's schema: a flat object whose properties are primitive
/// (string, number, integer, boolean, or an array of enum values). An optional field
/// (`["string", "null"]`) reads as its primitive type, left out of `required`.
pub(crate) fn form_schema(schema: &Value) -> Result<Value, InputError> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(InputError::InvalidForm(
            "the form's schema must be an object".into(),
        ));
    }
    let mut properties = Map::new();
    let empty = Map::new();
    let declared = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, property) in declared {
        let Some(property) = property.as_object() else {
            return Err(InputError::InvalidForm(format!(
                "field `{name}` has no schema"
            )));
        };
        let mut property = property.clone();
        let primitive = match property.get("type") {
            Some(Value::String(t)) => Some(t.clone()),
            Some(Value::Array(types)) => {
                let mut non_null = types.iter().filter(|t| t.as_str() != Some("null"));
                match (non_null.next(), non_null.next()) {
                    (Some(Value::String(t)), None) => Some(t.clone()),
                    _ => None,
                }
            }
            _ => None,
        };
        match primitive.as_deref() {
            Some("string" | "number" | "integer" | "boolean" | "array") => {}
            _ => {
                return Err(InputError::InvalidForm(format!(
                    "field `{name}` must be a string, number, integer, boolean or a list of choices"
                )));
            }
        }
        if let Some(t) = primitive {
            property.insert("type".to_owned(), Value::String(t));
        }
        // Optional fields: a `null` choice or default has no place in a form.
        if let Some(Value::Array(choices)) = property.get_mut("enum") {
            choices.retain(|c| !c.is_null());
        }
        if property.get("default").is_some_and(Value::is_null) {
            property.remove("default");
        }
        properties.insert(name.clone(), Value::Object(property));
    }
    let mut form = Map::new();
    form.insert("type".to_owned(), Value::from("object"));
    form.insert("properties".to_owned(), Value::Object(properties));
    if let Some(required) = schema.get("required") {
        form.insert("required".to_owned(), required.clone());
    }
    Ok(Value::Object(form))
}

/// The panic message of a caught panic.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}

//! A tool's requests for input: elicitation (a form, or a URL), sampling and roots, answered
//! by the call's input handler, or (2026-07-28, with none) ending the run with
//! `input_required`; and [`KeyedAsk`], the same asks under a key the tool chooses.

use std::sync::Arc;

use futures_util::FutureExt as _;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::BoxFuture;
use super::context::ToolContext;
use super::input::{
    ClientCapability, Elicitation, InputError, InputHandler, form_schema, panic_text,
};
use super::round::Round;
use crate::protocol::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams,
    ElicitResult, ListRootsResult, Root,
};

impl ToolContext {
    /// Asks the user to fill in the form `T` (elicitation), with `message` saying why.
    ///
    /// `T`'s schema must be a flat object of primitive fields (strings, numbers, integers,
    /// booleans, enums, lists of choices): the spec's restricted form schema. The answer is
    /// the user's choice: [`Elicitation::Accept`] with the values read into `T`, or
    /// [`Decline`](Elicitation::Decline) / [`Cancel`](Elicitation::Cancel).
    ///
    /// In a legacy session (2025-06-18, 2025-11-25) this sends `elicitation/create` to the
    /// client and waits for its reply; in-process, the call's
    /// [`InputHandler`] answers. A client that did not declare `elicitation` is not asked:
    /// the tool gets [`InputError::NotSupported`]. The call's time limit and cancellation
    /// cover the wait.
    ///
    /// # 2026-07-28: multi round-trip requests
    ///
    /// 2026-07-28 has no server→client requests. When nothing answers at once (no
    /// [`InputHandler`] for the call), a tool that asks is stopped where it waits, and the
    /// request ends with an `input_required` result: the unanswered asks as `inputRequests`,
    /// by key, and a signed `requestState` holding the answers given so far. The client
    /// retries with `inputResponses`; the tool then **runs again from the top**, and each ask
    /// is answered by its key, from the state (earlier rounds) or the responses. Hence the
    /// rule for a tool body:
    ///
    /// - **It asks the same questions in the same order on each run.** Keys are given in
    ///   order of asking (`elicitation-0`, `sampling-1`, `roots-2`, …) unless the tool names
    ///   one with [`input_key`](Self::input_key).
    /// - **What it does before its last ask runs once per round**: keep side effects after
    ///   the asks (or make them idempotent).
    /// - Asks awaited one after another take one round each; asks awaited together
    ///   (`tokio::join!`) go to the client in the same round.
    ///
    /// Only the capabilities the request's `_meta` declares are asked for; an ask for
    /// another fails at once with [`InputError::NotSupported`] (returned with `?`, the
    /// request is refused with -32021). A retry whose `requestState` was altered, issued for
    /// another request or has expired is refused with -32602, as is an answer that is not a
    /// result of its request; an ask left unanswered is asked again.
    ///
    /// ```
    /// use mcp_registry::{Registry, Server, Tool, ToolContext};
    /// use mcp_registry::tool::{Elicitation, InputCallbacks};
    /// use mcp_registry::protocol::ElicitResult;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Confirm { confirm: bool }
    /// type Args = serde_json::Map<String, serde_json::Value>;
    /// let wipe = Tool::builder("wipe").typed(|ctx: ToolContext, _: Args| async move {
    ///     match ctx.elicit::<Confirm>("Really wipe the table?").await {
    ///         Ok(Elicitation::Accept(Confirm { confirm: true })) => "wiped".to_owned(),
    ///         Ok(_) => "kept".to_owned(),
    ///         Err(e) => e.to_string(),
    ///     }
    /// }).unwrap();
    /// let registry = Registry::from_servers([Server::new("db", None, [wipe]).unwrap()]);
    /// let user = InputCallbacks::new().on_elicit(|params| async move {
    ///     assert_eq!(params.message, "Really wipe the table?");
    ///     let mut form = serde_json::Map::new();
    ///     form.insert("confirm".into(), true.into());
    ///     Ok(ElicitResult::accept(form))
    /// });
    /// let result = registry.call_tool_by_name("wipe", serde_json::json!({})).input_handler(user).await.unwrap();
    /// assert_eq!(result.first_text(), Some("wiped"));
    /// # }
    /// ```
    pub async fn elicit<T: JsonSchema + DeserializeOwned + 'static>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, InputError> {
        let schema = form_schema(&crate::schema::schema_for::<T>())?;
        let result = self
            .elicit_raw(ElicitParams {
                message: message.into(),
                mode: None,
                requested_schema: Some(schema),
                url: None,
                elicitation_id: None,
            })
            .await?;
        match result.action {
            ElicitAction::Accept => {
                let content = Value::Object(result.content.unwrap_or_default());
                serde_json::from_value(content)
                    .map(Elicitation::Accept)
                    .map_err(|e| InputError::InvalidAnswer {
                        method: "elicitation/create",
                        message: format!("the submitted form does not match it: {e}"),
                    })
            }
            ElicitAction::Decline => Ok(Elicitation::Decline),
            ElicitAction::Cancel => Ok(Elicitation::Cancel),
        }
    }

    /// Sends `elicitation/create` with `params` as they are (a hand-written form schema, or
    /// URL mode) and returns the client's answer untyped. See [`elicit`](Self::elicit).
    pub async fn elicit_raw(&self, params: ElicitParams) -> Result<ElicitResult, InputError> {
        if let Some(round) = self.round_for_asks() {
            let params = crate::protocol::params_of(&params);
            let key = self.input_key.as_deref();
            return round.ask(key, ClientCapability::Elicitation, params).await;
        }
        let handler = self.input_for("elicitation", "elicitation/create", |c| {
            c.elicitation.is_some()
        })?;
        self.ask(move || handler.elicit(params)).await
    }

    /// Deprecated: renamed [`elicit_raw`](Self::elicit_raw).
    #[deprecated(since = "0.1.0", note = "renamed `elicit_raw`")]
    #[doc(hidden)]
    pub async fn elicit_with(&self, params: ElicitParams) -> Result<ElicitResult, InputError> {
        self.elicit_raw(params).await
    }

    /// Sends the user to `url` (URL-mode elicitation, 2025-11-25 onward): for what must not
    /// pass through the client (a third-party sign-in, a payment, an API key). The client
    /// shows the URL and asks the user's consent; [`ElicitAction::Accept`] means the user
    /// agreed to go, not that they finished: the interaction happens out of band, and the
    /// tool learns of its end its own way (its web handler, its store), usually by the
    /// `elicitation_id` it put in the URL. In 2026-07-28 a tool runs again for each round
    /// (see [`elicit`](Self::elicit)): it must ask with the same id each time, so derive the
    /// id from what the tool stores, not from a fresh random value.
    ///
    /// Needs a client that declared URL mode (`elicitation: {"url": {}}`); otherwise
    /// [`InputError::NotSupported`] and nothing is sent. To refuse the call until the user
    /// has been there instead, return [`ToolError::url_elicitation_required`]
    /// (-32042 on the wire).
    ///
    /// [`ToolError::url_elicitation_required`]: crate::ToolError::url_elicitation_required
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Result<ElicitAction, InputError> {
        if let Some(capabilities) = self.client_capabilities()
            && capabilities.elicitation.is_some()
            && !supports_url_elicitation(&capabilities)
        {
            return Err(InputError::NotSupported {
                capability: "elicitation.url",
                method: "elicitation/create",
            });
        }
        let params = ElicitParams::url(message, url, elicitation_id);
        let result = if let Some(round) = self.round_for_asks() {
            let params = crate::protocol::params_of(&params);
            let key = self.input_key.as_deref();
            round
                .ask(key, ClientCapability::Elicitation, params)
                .await?
        } else {
            let handler = self.input_for("elicitation", "elicitation/create", |c| {
                supports_url_elicitation(c)
            })?;
            self.ask(move || handler.elicit(params)).await?
        };
        Ok(result.action)
    }

    /// Asks the client's model for a completion (sampling): `request` is a
    /// [`SamplingRequest`](crate::tool::SamplingRequest) (messages, model preferences,
    /// system prompt, max tokens) or raw [`CreateMessageParams`]. Returns the model's
    /// message. Sent and checked like [`elicit`](Self::elicit), for the `sampling`
    /// capability.
    pub async fn sample(
        &self,
        request: impl Into<CreateMessageParams>,
    ) -> Result<CreateMessageResult, InputError> {
        let params = request.into();
        if let Some(round) = self.round_for_asks() {
            let params = crate::protocol::params_of(&params);
            let key = self.input_key.as_deref();
            return round.ask(key, ClientCapability::Sampling, params).await;
        }
        let handler = self.input_for("sampling", "sampling/createMessage", |c| {
            c.sampling.is_some()
        })?;
        self.ask(move || handler.create_message(params)).await
    }

    /// The client's roots (`roots/list`): the directories and files it exposes. Sent and
    /// checked like [`elicit`](Self::elicit), for the `roots` capability.
    pub async fn roots(&self) -> Result<Vec<Root>, InputError> {
        if let Some(round) = self.round_for_asks() {
            let key = self.input_key.as_deref();
            let answer: ListRootsResult =
                round.ask(key, ClientCapability::Roots, Map::new()).await?;
            return Ok(answer.roots);
        }
        let handler = self.input_for("roots", "roots/list", |c| c.roots.is_some())?;
        Ok(self.ask(move || handler.list_roots()).await?.roots)
    }

    /// An ask keyed `key` in a 2026-07-28 `input_required` result (`inputRequests` and
    /// `inputResponses`), instead of the key its order gives (`elicitation-0`, …): for a
    /// client or a test that expects a name. A second ask under the same key in one run gets
    /// its position appended. Elsewhere the key is unused and the ask is as without it.
    ///
    /// ```
    /// # use mcp_registry::ToolContext;
    /// # use mcp_registry::tool::SamplingRequest;
    /// # async fn f(ctx: ToolContext) -> Result<(), mcp_registry::tool::InputError> {
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Name { name: String }
    /// let name = ctx.input_key("user_name").elicit::<Name>("What is your name?").await?;
    /// // Asked together: one round.
    /// let (roots, greeting) = tokio::join!(
    ///     ctx.input_key("roots").roots(),
    ///     ctx.input_key("greeting").sample(SamplingRequest::new(50).user("Greet me")),
    /// );
    /// # Ok(()) }
    /// ```
    pub fn input_key(&self, key: impl Into<String>) -> KeyedAsk {
        let mut ctx = self.clone();
        ctx.input_key = Some(Arc::from(key.into()));
        KeyedAsk(ctx)
    }

    /// The run's round, when asks end it with `input_required` (2026-07-28, no handler).
    fn round_for_asks(&self) -> Option<&Round> {
        match (&self.input, &self.round) {
            (None, Some(round)) => Some(round),
            _ => None,
        }
    }

    /// The call's input handler, when the client declared `capability`.
    fn input_for(
        &self,
        capability: &'static str,
        method: &'static str,
        declared: impl FnOnce(&ClientCapabilities) -> bool,
    ) -> Result<Arc<dyn InputHandler>, InputError> {
        let handler = self.input.as_ref().ok_or(InputError::NoClient)?;
        if !declared(&handler.capabilities()) {
            return Err(InputError::NotSupported { capability, method });
        }
        Ok(handler.clone())
    }

    /// Waits for a handler's answer: a panic in the handler is an error for the tool. (A
    /// cancelled or timed-out call drops the tool's future, and this wait with it.)
    async fn ask<R>(
        &self,
        request: impl FnOnce() -> BoxFuture<'static, Result<R, InputError>>,
    ) -> Result<R, InputError> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(request)) {
            Ok(fut) => std::panic::AssertUnwindSafe(fut)
                .catch_unwind()
                .await
                .unwrap_or_else(|p| Err(InputError::HandlerPanicked(panic_text(&*p)))),
            Err(p) => Err(InputError::HandlerPanicked(panic_text(&*p))),
        }
    }
}

/// An ask under a key of the tool's choosing ([`ToolContext::input_key`]): the context's
/// asks, each taking the ask by value (so it can be made in place, in `tokio::join!`).
#[derive(Debug, Clone)]
pub struct KeyedAsk(ToolContext);

impl KeyedAsk {
    /// [`ToolContext::elicit`] under this key.
    pub async fn elicit<T: JsonSchema + DeserializeOwned + 'static>(
        self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, InputError> {
        self.0.elicit(message).await
    }

    /// [`ToolContext::elicit_raw`] under this key.
    pub async fn elicit_raw(self, params: ElicitParams) -> Result<ElicitResult, InputError> {
        self.0.elicit_raw(params).await
    }

    /// Deprecated: renamed [`elicit_raw`](Self::elicit_raw).
    #[deprecated(since = "0.1.0", note = "renamed `elicit_raw`")]
    #[doc(hidden)]
    pub async fn elicit_with(self, params: ElicitParams) -> Result<ElicitResult, InputError> {
        self.elicit_raw(params).await
    }

    /// [`ToolContext::sample`] under this key.
    pub async fn sample(
        self,
        request: impl Into<CreateMessageParams>,
    ) -> Result<CreateMessageResult, InputError> {
        self.0.sample(request).await
    }

    /// [`ToolContext::roots`] under this key.
    pub async fn roots(self) -> Result<Vec<Root>, InputError> {
        self.0.roots().await
    }
}

/// Whether `capabilities` declare URL-mode elicitation (`elicitation: {"url": {}}`).
fn supports_url_elicitation(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .elicitation
        .as_ref()
        .is_some_and(|modes| modes.contains_key("url"))
}

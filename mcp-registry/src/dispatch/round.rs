//! What a 2026-07-28 request brings to a round of a multi round-trip request (SEP-2322):
//! the answers of a retry, its `requestState`, and the capabilities its client declares.

use std::sync::Arc;

use serde::Deserialize as _;
use serde_json::{Map, Value};

use super::invalid_params;
use crate::protocol::meta::RequestMeta;
use crate::protocol::{ClientCapabilities, Era, ErrorObject, META_CLIENT_CAPABILITIES, value_kind};
use crate::registry::scope::RequestInfo;
use crate::registry::{CallOptions, Registry};
use crate::tool::InputHandler;
use crate::tool::input::Declared;
use crate::tool::round::{Round, RoundSeal};

/// What a 2026-07-28 request brings to a round of a multi round-trip request: the answers
/// of a retry, its state, and the capabilities its client declares.
pub(crate) struct Retry {
    responses: Option<Map<String, Value>>,
    state: Option<String>,
}

impl Retry {
    /// How a request that may ask the client for input (`tools/call`, `prompts/get`) gets its
    /// answers. 2026-07-28: a host's input handler answers only what the request's `_meta`
    /// declares; with none, asks end the request with `input_required` and this is the
    /// round the client's retry brings. Legacy: `None`, the session's handler answers.
    /// The limited input handler (2026-07-28) goes into `info`, whose `_meta` declares what
    /// the client can answer.
    #[inline(always)]
    pub(crate) fn prepare(
        era: Era,
        options: &CallOptions,
        params: &mut Map<String, Value>,
        info: &mut RequestInfo,
    ) -> Result<Option<Self>, ErrorObject> {
        if !era.is_modern() {
            return Ok(None);
        }
        if let Some(handler) = &options.input {
            info.input = Some(declared_input(handler.clone(), info.meta.as_deref()));
            return Ok(None);
        }
        Self::take(params).map(Some)
    }

    /// Takes `inputResponses` and `requestState` out of `params` (-32602 when they are not
    /// an object and a string).
    pub(crate) fn take(params: &mut Map<String, Value>) -> Result<Self, ErrorObject> {
        let responses = match params.remove("inputResponses") {
            None => None,
            Some(Value::Object(responses)) => Some(responses),
            Some(other) => {
                return Err(invalid_params(format!(
                    "`inputResponses` must be an object of answers by input key, got {}",
                    value_kind(&other)
                )));
            }
        };
        let state = match params.remove("requestState") {
            None => None,
            Some(Value::String(state)) => Some(state),
            Some(other) => {
                return Err(invalid_params(format!(
                    "`requestState` must be the string the server returned, got {}",
                    value_kind(&other)
                )));
            }
        };
        Ok(Retry { responses, state })
    }

    /// Whether the request is a first try: no answers, no state.
    pub(crate) fn is_first(&self) -> bool {
        self.responses.is_none() && self.state.is_none()
    }

    /// The round: the state's answers (refused when the state fails verification), then the
    /// responses for other keys; the client can answer what the request's `meta` declares.
    pub(crate) fn round(
        self,
        seal: RoundSeal,
        registry: &Registry,
        meta: Option<&RequestMeta>,
    ) -> Result<Round, ErrorObject> {
        let mut answers = match &self.state {
            Some(state) => seal.open(state, registry.config().request_state_ttl)?,
            None => Map::new(),
        };
        for (key, answer) in self.responses.into_iter().flatten() {
            answers.entry(key).or_insert(answer);
        }
        Ok(Round::new(seal, declared_capabilities(meta), answers))
    }
}

/// The capabilities a 2026-07-28 request's `_meta` declares (none when it declares none).
fn declared_capabilities(meta: Option<&RequestMeta>) -> ClientCapabilities {
    meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES))
        .and_then(|c| ClientCapabilities::deserialize(c).ok())
        .unwrap_or_default()
}

/// A 2026-07-28 call's input handler, limited to the capabilities its request's `_meta`
/// declares (none when it declares none).
#[cold]
fn declared_input(
    handler: Arc<dyn InputHandler>,
    meta: Option<&RequestMeta>,
) -> Arc<dyn InputHandler> {
    Arc::new(Declared {
        handler,
        capabilities: declared_capabilities(meta),
    })
}

//! Typed messages a client sends and answers: its capabilities, resources, completion,
//! logging, the requests a server makes of a client (sampling, elicitation, roots), the
//! 2026-07-28 multi round-trip (`input_required`) results, and `subscriptions/listen`.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::{CacheHints, CacheScope, ProtocolVersion, Role};

/// What a client offers a server (`capabilities` of `initialize`, or
/// `_meta.io.modelcontextprotocol/clientCapabilities` of a 2026-07-28 request).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientCapabilities {
    /// Present when the client answers `roots/list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Present when the client answers `sampling/createMessage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Map<String, Value>>,
    /// Present when the client answers `elicitation/create`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<Map<String, Value>>,
    /// Others (`experimental`, `extensions`, ...).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `capabilities.roots` of a client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// Whether the client sends `notifications/roots/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The result of `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// A page of tools.
    pub tools: Vec<super::ToolDescriptor>,
    /// Where the next page starts, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The params of `tools/call` as a client sends them, 2026-07-28 retries included.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolParams {
    /// The tool to call.
    pub name: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Answers to the server's `inputRequests` (a 2026-07-28 retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<Map<String, Value>>,
    /// The `requestState` of the `input_required` result, echoed exactly (a 2026-07-28 retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// 2025-11-25: run the call as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<super::TaskRequest>,
}

/// The params of `resources/read`, `resources/subscribe` and `resources/unsubscribe`, and of
/// `notifications/resources/updated`: the resource's URI (the resource types themselves are
/// in `protocol::resource`, shared with the server).
pub type ResourceUriParams = super::resource::ReadResourceParams;

/// The params of `sampling/createMessage`. The message contents and preferences are kept as
/// JSON: the host hands them to its model as they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    /// The conversation to continue.
    pub messages: Vec<Value>,
    /// The most tokens to sample.
    #[serde(default)]
    pub max_tokens: u64,
    /// A system prompt the server asks for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Every other member (`modelPreferences`, `temperature`, `stopSequences`, ...).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// The result of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who wrote the message (the model: `assistant`).
    pub role: Role,
    /// The sampled content (one block, or several).
    pub content: Value,
    /// The model that wrote it.
    pub model: String,
    /// Why sampling stopped (`endTurn`, `stopSequence`, `maxTokens`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

/// The params of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitParams {
    /// What to ask the user.
    pub message: String,
    /// `form` (the default) or `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The form: a flat object schema of primitive properties (form mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Value>,
    /// Where to send the user (URL mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The elicitation's id (URL mode), named again by `notifications/elicitation/complete`
    /// and by a -32042 error's elicitations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
}

impl ElicitParams {
    /// A URL-mode elicitation (2025-11-25 onward): send the user to `url`, out of band of
    /// the client (a sign-in, a payment, a secret the client must not see).
    pub fn url(
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Self {
        ElicitParams {
            message: message.into(),
            mode: Some("url".into()),
            requested_schema: None,
            url: Some(url.into()),
            elicitation_id: Some(elicitation_id.into()),
        }
    }

    /// Whether this is a URL-mode elicitation.
    pub fn is_url(&self) -> bool {
        self.mode.as_deref() == Some("url")
    }
}

/// The `data` of a -32042 (URLElicitationRequired) error: the URL-mode elicitations to
/// complete before the request is retried.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrlElicitationRequiredData {
    /// The elicitations, each in URL mode with its `elicitationId`.
    pub elicitations: Vec<ElicitParams>,
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form.
    Accept,
    /// Explicitly declined.
    Decline,
    /// Dismissed it without choosing.
    Cancel,
}

/// The result of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (accepted forms only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

impl ElicitResult {
    /// The user accepted with `content`.
    pub fn accept(content: Map<String, Value>) -> Self {
        ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
        }
    }

    /// The user declined.
    pub fn decline() -> Self {
        ElicitResult {
            action: ElicitAction::Decline,
            content: None,
        }
    }

    /// The user dismissed the request.
    pub fn cancel() -> Self {
        ElicitResult {
            action: ElicitAction::Cancel,
            content: None,
        }
    }
}

/// A root the client exposes to the server (a directory or file URI).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The result of `roots/list`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
}

/// One request a 2026-07-28 server embeds in an `input_required` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// `sampling/createMessage`, `elicitation/create` or `roots/list`.
    pub method: String,
    /// Its params.
    #[serde(default)]
    pub params: Map<String, Value>,
}

/// A 2026-07-28 `input_required` result: the client answers `inputRequests` and retries the
/// original request with `inputResponses`, echoing `requestState` exactly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// What the server needs, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<BTreeMap<String, InputRequest>>,
    /// Opaque server state, to echo unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

/// The `data` of a -32022 error: what the server speaks and what was asked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnsupportedVersionData {
    /// The versions the server supports.
    #[serde(default)]
    pub supported: Vec<String>,
    /// The version the client asked for.
    #[serde(default)]
    pub requested: Option<String>,
}

/// Reads a list of versions, leaving out those this crate does not speak (a peer may list
/// newer ones).
pub(crate) fn known_versions<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Vec<ProtocolVersion>, D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    Ok(names
        .iter()
        .filter_map(|n| ProtocolVersion::parse(n))
        .collect())
}

/// Reads caching hints, defaulting what a lenient server leaves out (`ttlMs` 0, `private`).
pub(crate) fn lenient_cache<'de, D: Deserializer<'de>>(d: D) -> Result<CacheHints, D::Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Hints {
        ttl_ms: Option<u64>,
        cache_scope: Option<CacheScope>,
    }
    let hints = Hints::deserialize(d)?;
    Ok(CacheHints {
        ttl_ms: hints.ttl_ms.unwrap_or(0),
        cache_scope: hints.cache_scope.unwrap_or(CacheScope::Private),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{CompleteArgument, CompleteParams, CompletionReference, LoggingLevel};
    use serde_json::json;

    #[test]
    fn wire_forms() {
        let complete = CompleteParams {
            reference: CompletionReference::Prompt {
                name: "review".into(),
            },
            argument: CompleteArgument {
                name: "lang".into(),
                value: "ru".into(),
            },
            context: None,
        };
        assert_eq!(
            serde_json::to_value(&complete).unwrap(),
            json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "lang", "value": "ru"}})
        );
        let input: InputRequiredResult = serde_json::from_value(json!({
            "resultType": "input_required",
            "inputRequests": {"k": {"method": "elicitation/create", "params": {"message": "m"}}},
            "requestState": "s"
        }))
        .unwrap();
        assert_eq!(input.request_state.as_deref(), Some("s"));
        assert_eq!(
            input.input_requests.unwrap()["k"].method,
            "elicitation/create"
        );
        let call = CallToolParams {
            name: "t".into(),
            ..Default::default()
        };
        assert_eq!(serde_json::to_value(&call).unwrap(), json!({"name": "t"}));
        assert_eq!(
            serde_json::to_value(LoggingLevel::Warning).unwrap(),
            json!("warning")
        );
    }
}

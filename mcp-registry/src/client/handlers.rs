//! The client's answers to the server's requests: elicitation, sampling, roots, ping.

//! [`Client`]: the async MCP client, one type over every [`Transport`].

use std::sync::Arc;

use serde_json::{Map, Value};

use super::machine::ServerRequestKind;
use crate::protocol::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, ErrorCode,
    ErrorObject, ListRootsResult, Root,
};
use crate::tool::BoxFuture;
/// Answers `elicitation/create`: the form (or URL) the server asks the user to fill in.
pub type ElicitationHandler = Arc<
    dyn Fn(ElicitParams) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> + Send + Sync,
>;
/// Answers `sampling/createMessage` with the host's model.
pub type SamplingHandler = Arc<
    dyn Fn(CreateMessageParams) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>>
        + Send
        + Sync,
>;

/// How the client answers the server's requests.
#[derive(Clone, Default)]
pub(super) struct Handlers {
    pub(super) elicitation: Option<ElicitationHandler>,
    pub(super) sampling: Option<SamplingHandler>,
    pub(super) roots: Option<Vec<Root>>,
}

/// Fills the defaults the form's schema gives into an accepted form's missing fields
/// (SEP-1034).
fn apply_elicitation_defaults(params: &ElicitParams, result: &mut ElicitResult) {
    if result.action != ElicitAction::Accept {
        return;
    }
    let Some(properties) = params
        .requested_schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return;
    };
    let content = result.content.get_or_insert_with(Map::new);
    for (name, schema) in properties {
        if let Some(default) = schema.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
}

/// The client's answer to what the server asks (`ping`, roots, elicitation, sampling).
pub(super) async fn answer_kind(
    handlers: &Handlers,
    kind: ServerRequestKind,
) -> Result<Value, ErrorObject> {
    let to_value = |v: Result<Value, serde_json::Error>| {
        v.map_err(|e| ErrorObject::new(ErrorCode::INTERNAL_ERROR, e.to_string()))
    };
    match kind {
        ServerRequestKind::Ping => Ok(Value::Object(Map::new())),
        ServerRequestKind::ListRoots => match &handlers.roots {
            Some(roots) => to_value(serde_json::to_value(ListRootsResult {
                roots: roots.clone(),
            })),
            None => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                "the client offers no roots",
            )),
        },
        ServerRequestKind::Elicit(params) => match &handlers.elicitation {
            Some(handler) => {
                let mut result = handler((*params).clone()).await?;
                apply_elicitation_defaults(&params, &mut result);
                to_value(serde_json::to_value(result))
            }
            None => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                "the client does not answer elicitation",
            )),
        },
        ServerRequestKind::CreateMessage(params) => match &handlers.sampling {
            Some(handler) => to_value(serde_json::to_value(handler(*params).await?)),
            None => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                "the client does not answer sampling",
            )),
        },
        ServerRequestKind::Invalid { error, .. } => Err(error),
        ServerRequestKind::Other { method, .. } => Err(ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("the client does not answer {method}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn elicitation_defaults_fill_missing_fields_only() {
        let params = ElicitParams {
            message: "m".into(),
            mode: None,
            requested_schema: Some(json!({"type": "object", "properties": {
                "name": {"type": "string", "default": "John"},
                "age": {"type": "integer", "default": 30},
                "free": {"type": "string"}
            }})),
            url: None,
            elicitation_id: None,
        };
        let mut accepted = ElicitResult::accept(json!({"age": 5}).as_object().unwrap().clone());
        apply_elicitation_defaults(&params, &mut accepted);
        assert_eq!(
            Value::Object(accepted.content.unwrap()),
            json!({"name": "John", "age": 5})
        );
        let mut declined = ElicitResult::decline();
        apply_elicitation_defaults(&params, &mut declined);
        assert!(declined.content.is_none());
    }
}

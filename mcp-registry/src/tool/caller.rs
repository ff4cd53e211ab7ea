//! [`Caller`]: who sent a request, resolved once where the request enters.

use std::fmt;
use std::sync::Arc;

use super::param::ToolParam;
use super::{Arguments, ToolContext, ToolError};
use crate::schema::ObjectSchemaBuilder;

/// Who sent a request, resolved once where it enters and carried in its scope: the
/// authenticated principal when there is one, otherwise the legacy session, otherwise
/// anonymous.
///
/// - The HTTP transport makes a [`Caller::Principal`] of a valid access token's claims, and
///   a [`Caller::Session`] of the `Mcp-Session-Id` of a session without a token.
/// - stdio serves one client: its requests come from the connection's
///   [`Caller::Session`], and so do those of an in-process
///   [`ServerSession`](crate::dispatch::ServerSession).
/// - An in-process call ([`Registry::call_tool_by_name`](crate::Registry::call_tool_by_name),
///   [`Registry::handle_mcp_message`](crate::Registry::handle_mcp_message)) is
///   [`Caller::Anonymous`] unless the host names one with
///   [`CallOptions::caller`](crate::CallOptions::caller).
///
/// What a caller owns is keyed by [`owner`](Self::owner): a task is shown, read, changed and
/// cancelled only by the caller that created it; an anonymous caller's tasks are reachable
/// only by their unguessable ids and never listed.
///
/// A tool, prompt or resource function reads it as a parameter (no argument of the item, as
/// [`State`](super::State) is), and a layer reads it from the request's context
/// ([`ToolContext::caller`]).
///
/// ```
/// use mcp_registry::{mcp_tool, server, CallOptions, Caller, Principal, Registry};
/// use serde_json::json;
///
/// /// Say who is asking.
/// #[mcp_tool]
/// async fn whoami(caller: Caller) -> String {
///     match caller.principal() {
///         Some(principal) => principal.subject.clone(),
///         None => "anonymous".to_owned(),
///     }
/// }
///
/// server!(name = "id", version = "1.0.0", tools = [whoami], fn = id, collect = false);
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let registry = Registry::from_servers([id()]);
/// let anonymous = registry.call_tool_by_name("whoami", json!({})).await.unwrap();
/// assert_eq!(anonymous.first_text(), Some("anonymous"));
///
/// let ada = Caller::principal_of(Principal::new("ada").with_scopes(["files:read"]));
/// let named = registry
///     .call_tool_by_name("whoami", json!({}))
///     .options(CallOptions::new().caller(ada))
///     .await
///     .unwrap();
/// assert_eq!(named.first_text(), Some("ada"));
/// # }
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Caller {
    /// An authenticated principal: an access token's subject, client, scopes and audience.
    Principal(Arc<Principal>),
    /// A legacy (2025-xx) session without a principal, by its id.
    Session(Arc<str>),
    /// Nobody the server can tell apart from anybody else.
    #[default]
    Anonymous,
}

/// An authenticated principal: who an access token was issued to, and what it grants.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Principal {
    /// The resource owner (`sub`), or the client for a client-credentials token.
    pub subject: String,
    /// The client the token was issued to (`client_id`), when known.
    pub client_id: Option<String>,
    /// The granted scopes.
    pub scopes: Vec<String>,
    /// The resources the token was issued for (`aud`).
    pub audience: Vec<String>,
}

impl Principal {
    /// The principal `subject`, with no client, scopes or audience yet.
    pub fn new(subject: impl Into<String>) -> Self {
        Principal {
            subject: subject.into(),
            ..Principal::default()
        }
    }

    /// The client the token was issued to.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The granted scopes.
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The resources the token was issued for.
    pub fn with_audience<S: Into<String>>(mut self, audience: impl IntoIterator<Item = S>) -> Self {
        self.audience = audience.into_iter().map(Into::into).collect();
        self
    }

    /// Whether `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

/// The prefixes of [`owner`](Caller::owner) keys: no principal's subject can name a
/// session's tasks, nor a session id a principal's.
const PRINCIPAL_OWNER: &str = "sub:";
const SESSION_OWNER: &str = "session:";

impl Caller {
    /// The caller `principal`.
    pub fn principal_of(principal: Principal) -> Self {
        Caller::Principal(Arc::new(principal))
    }

    /// The legacy session `id`.
    pub fn session_of(id: impl Into<Arc<str>>) -> Self {
        Caller::Session(id.into())
    }

    /// The authenticated principal, when there is one.
    pub fn principal(&self) -> Option<&Principal> {
        match self {
            Caller::Principal(principal) => Some(principal),
            _ => None,
        }
    }

    /// The legacy session's id, when the caller is a session without a principal.
    pub fn session(&self) -> Option<&str> {
        match self {
            Caller::Session(id) => Some(id),
            _ => None,
        }
    }

    /// Whether the server cannot tell this caller apart from any other.
    pub fn is_anonymous(&self) -> bool {
        matches!(self, Caller::Anonymous)
    }

    /// Whether the caller holds `scope`: only a principal holds scopes.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.principal().is_some_and(|p| p.has_scope(scope))
    }

    /// The key of what this caller owns (its tasks): `sub:<subject>` for a principal,
    /// `session:<id>` for a session; `None` for an anonymous caller, whose tasks are
    /// reachable only by id.
    pub fn owner(&self) -> Option<String> {
        match self {
            Caller::Principal(principal) => Some(format!("{PRINCIPAL_OWNER}{}", principal.subject)),
            Caller::Session(id) => Some(format!("{SESSION_OWNER}{id}")),
            Caller::Anonymous => None,
        }
    }
}

impl fmt::Debug for Caller {
    /// A session's id is a bearer credential: it is never printed whole.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Caller::Principal(principal) => f.debug_tuple("Principal").field(principal).finish(),
            Caller::Session(id) => {
                let shown: String = id.chars().take(4).collect();
                write!(f, "Session({shown}..)")
            }
            Caller::Anonymous => f.write_str("Anonymous"),
        }
    }
}

impl ToolParam for Caller {
    fn describe(_: &mut ObjectSchemaBuilder, _: &str, _: Option<&str>) {}

    fn from_call(ctx: &ToolContext, _: &mut Arguments<'_>, _: &str) -> Result<Self, ToolError> {
        Ok(ctx.caller().clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_of_principals_and_sessions_never_meet() {
        let session = Caller::session_of("abc");
        for subject in ["abc", "session:abc", "sub:abc"] {
            let principal = Caller::principal_of(Principal::new(subject));
            assert_ne!(principal.owner(), session.owner(), "{subject}");
        }
        assert_eq!(session.owner().as_deref(), Some("session:abc"));
        assert_eq!(Caller::Anonymous.owner(), None);
    }

    #[test]
    fn a_session_id_is_not_printed_whole() {
        let shown = format!("{:?}", Caller::session_of("0123456789abcdef"));
        assert_eq!(shown, "Session(0123..)");
    }
}

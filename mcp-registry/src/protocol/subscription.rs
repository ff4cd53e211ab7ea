//! Typed 2026-07-28 subscription messages: `subscriptions/listen`, its filter, the
//! acknowledgement and the graceful end.

use serde::{Deserialize, Serialize};

/// `_meta` key tagging every message of a `subscriptions/listen` stream with the listen
/// request's id.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The notification types a client opts in to on a `subscriptions/listen` stream (and, in
/// the acknowledgement, those the server agreed to send). Each is opt-in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
}

/// The params of `subscriptions/listen` (besides `_meta`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListenParams {
    /// What the client wants to receive.
    #[serde(default)]
    pub notifications: SubscriptionFilter,
}

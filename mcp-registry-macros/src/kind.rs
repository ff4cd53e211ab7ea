//! Which attribute a function is under.

/// Which attribute a function is under: the one thing that differs between the phases'
/// per-kind functions.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
}

impl Kind {
    /// The attribute as a user writes it, for messages: `#[mcp_tool]`.
    pub(crate) fn attribute(self) -> &'static str {
        match self {
            Kind::Tool => "#[mcp_tool]",
            Kind::Prompt => "#[mcp_prompt]",
            Kind::Resource => "#[mcp_resource]",
        }
    }

    /// What the function becomes: `tool`, `prompt`, `resource`.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        }
    }
}

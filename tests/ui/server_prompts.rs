use mcp_registry::{mcp_prompt, mcp_tool, server};

/// A tool.
#[mcp_tool]
async fn ping() -> &'static str {
    "pong"
}

/// Review.
#[mcp_prompt]
async fn review(diff: String) -> String {
    diff
}

mod v2 {
    /// Review, again.
    #[mcp_registry::mcp_prompt(name = "review")]
    pub async fn review_v2(diff: String) -> String {
        diff
    }
}

server!(name = "not-a-prompt", prompts = [ping]);

server!(name = "same-name", prompts = [review, v2::review_v2]);

server!(name = "twice", prompts = [review, review]);

server!(name = "nothing");

fn main() {}

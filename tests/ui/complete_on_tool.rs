use mcp_registry::completion::{CompletionContext, Completions};
use mcp_registry::mcp_tool;

async fn names(partial: String, _: CompletionContext) -> Completions {
    Completions::matching(["a"], &partial)
}

/// Tool arguments are not completed.
#[mcp_tool]
async fn pick(#[arg(complete = names)] name: String) -> String {
    name
}

fn main() {}

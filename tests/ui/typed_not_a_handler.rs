// `ToolBuilder::typed` takes `|args: A|` or `|ctx: ToolContext, args: A|`; a closure of two
// arguments whose first is not the context is neither.
use mcp_registry::Tool;

fn main() {
    let _ = Tool::builder("add").typed(|a: i64, b: i64| async move { a + b });
}

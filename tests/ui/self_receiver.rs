use mcp_registry::mcp_tool;

struct Calculator;

impl Calculator {
    /// Add.
    #[mcp_tool]
    async fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {
    // The method is still emitted: calling it adds no error.
    let _ = Calculator.add(1, 2);
}

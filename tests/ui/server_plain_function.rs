use mcp_registry::{mcp_tool, server};

/// Add.
#[mcp_tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

mod ops {
    /// Forgot the attribute.
    pub async fn negate(a: i64) -> String {
        (-a).to_string()
    }
}

/// Also forgot it.
async fn helper() -> String {
    String::new()
}

server!(name = "math", tools = [add, ops::negate, helper]);

fn main() {
    // Reported in the same compile as an unrelated mistake, not only once it is fixed.
    let _: u32 = "not a number";
}

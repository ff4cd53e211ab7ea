use mcp_registry::mcp_prompt;

/// Not a tool.
#[mcp_prompt(read_only, title = "T", title = "U")]
async fn hints() -> String {
    String::new()
}

/// Bad characters.
#[mcp_prompt(name = "code review")]
async fn review() -> String {
    String::new()
}

/// Documents a parameter it lacks.
///
/// # Arguments
/// * `diff` - the change
async fn undocumented_stays_plain() {}

/// Documents a parameter it lacks.
///
/// # Arguments
/// * `diff` - the change
#[mcp_prompt]
async fn no_diff(text: String) -> String {
    text
}

/// Generic.
#[mcp_prompt]
async fn generic<T>(text: String) -> String {
    text
}

fn main() {}

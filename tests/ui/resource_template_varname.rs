use mcp_registry::mcp_resource;

// Dots only between the characters of a name, as the runtime's URI template reader has it.
#[mcp_resource(template = "range://{a..b}")]
async fn range(a: String) -> String {
    a
}

#[mcp_resource(template = "dotted://{.a}")]
async fn leading_dot(a: String) -> String {
    a
}

// Accepted: a dot between characters.
#[mcp_resource(template = "dotted://{v.1}")]
async fn inner_dot(#[arg(rename = "v.1")] v: String) -> String {
    v
}

fn main() {}

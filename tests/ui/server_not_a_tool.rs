use mcp_registry::server;

struct Helper;

server!(name = "math", tools = [Helper]);

fn main() {}

use mcp_registry::mcp_tool;

/// Sum seventeen numbers.
#[mcp_tool]
#[allow(clippy::too_many_arguments)]
async fn sum17(
    a: i64, b: i64, c: i64, d: i64, e: i64, f: i64, g: i64, h: i64,
    i: i64, j: i64, k: i64, l: i64, m: i64, n: i64, o: i64, p: i64,
    q: i64,
) -> String {
    (a + b + c + d + e + f + g + h + i + j + k + l + m + n + o + p + q).to_string()
}

fn main() {}

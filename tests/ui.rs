//! Compile-time errors of `#[mcp_tool]`, `#[mcp_prompt]`, `#[mcp_resource]`, `#[mcp_server]`, `server!` and `ToolBuilder::typed`: each case in
//! `tests/ui/` must fail with exactly the message (and the span) in its `.stderr` file. After
//! a deliberate change of wording, regenerate them with `TRYBUILD=overwrite cargo test --all-features --test ui`.

#[test]
fn macro_errors_point_at_the_offending_token() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}

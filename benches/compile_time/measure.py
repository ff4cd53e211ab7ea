#!/usr/bin/env python3
"""Compile-time cost of #[mcp_tool]: N annotated functions against the same N plain ones.

Generates three throw-away crates under target/compile_time/ (never committed), each a
standalone package depending on this workspace's mcp-registry by path and sharing one
target directory, so dependencies are built once and only the generated crate is timed:

  plain   N async functions, no macro
  tools   the same N functions, each under #[mcp_tool] (doc comment, # Arguments)
  server  `tools` plus one server! listing all N
  byhand  the plain N functions made into the same N tools without the macro, the way a user
          would by hand: an argument struct per tool (derive Deserialize + JsonSchema) and
          `Tool::builder(..).typed(..)` calling the function (a reference for what the macro
          replaces, not part of the ratio the issue names)

Each round touches every crate's lib.rs and times `cargo build` (dev profile) of each, in
alternating order; the report gives every run, the medians and the ratios to `plain`. Two
modes: `full` (CARGO_INCREMENTAL=0: the whole crate is compiled, as on CI or a first build)
and `incremental` (cargo's default for dev builds: a rebuild after touching the file).

    python3 benches/compile_time/measure.py [--tools 100] [--rounds 5] [--mode full|incremental|both]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "target" / "compile_time"

PRELUDE = """\
#![allow(dead_code)]

use schemars::JsonSchema;
use serde::Deserialize;
{uses}

/// A point on the plane.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub struct Point {{
    /// Horizontal position.
    pub x: f64,
    /// Vertical position.
    pub y: f64,
}}
"""

FUNCTION = """
/// Tool number {i}: combine a point, a count and an optional label.
///
/// # Arguments
/// * `point` - where to start
/// * `count` - how many steps
/// * `label` - an optional label
{attr}pub async fn tool_{i}(point: Point, count: i64, label: Option<String>) -> String {{
    format!("{{}} {{}} {{}} {{}}", {i}, point.x + point.y, count, label.unwrap_or_default())
}}
"""

BYHAND = """
/// Arguments of tool {i}.
#[derive(Deserialize, JsonSchema)]
pub struct Tool{i}Args {{
    /// where to start
    pub point: Point,
    /// how many steps
    pub count: i64,
    /// an optional label
    pub label: Option<String>,
}}

/// Tool number {i} as an MCP tool.
pub fn tool_{i}_tool() -> Tool {{
    Tool::builder("tool_{i}")
        .description("Tool number {i}: combine a point, a count and an optional label.")
        .read_only(true)
        .typed(|a: Tool{i}Args| async move {{ tool_{i}(a.point, a.count, a.label).await }})
        .expect("a valid tool")
}}
"""


def generate(variant: str, n: int) -> Path:
    crate = OUT / variant
    (crate / "src").mkdir(parents=True, exist_ok=True)
    (crate / "Cargo.toml").write_text(
        f"""[package]
name = "compile-time-{variant}"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
mcp-registry = {{ path = "{ROOT / 'mcp-registry'}" }}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1"

[workspace]
"""
    )
    # The workspace's lock file pins the same dependency versions for every variant.
    shutil.copy(ROOT / "Cargo.lock", crate / "Cargo.lock")
    annotated = variant in ("tools", "server")
    uses = "use mcp_registry::mcp_tool;" if annotated else ""
    if variant == "server":
        uses += "\nuse mcp_registry::server;"
    body = PRELUDE.format(uses=uses)
    attr = "#[mcp_tool(read_only)]\n" if annotated else ""
    body += "".join(FUNCTION.format(i=i, attr=attr) for i in range(n))
    if variant == "server":
        names = ", ".join(f"tool_{i}" for i in range(n))
        body += f'\nserver!(name = "bench", tools = [{names}], fn = pub bench_server);\n'
    if variant == "byhand":
        body += "\nuse mcp_registry::Tool;\n"
        for i in range(n):
            body += BYHAND.format(i=i)
        builders = ", ".join(f"tool_{i}_tool()" for i in range(n))
        body += f"\n/// Every tool.\npub fn tools() -> Vec<Tool> {{\n    vec![{builders}]\n}}\n"
    (crate / "src" / "lib.rs").write_text(body)
    return crate


def cargo_build(crate: Path, target: Path, incremental: bool) -> float:
    env = dict(os.environ, CARGO_TARGET_DIR=str(target), CARGO_INCREMENTAL="1" if incremental else "0")
    start = time.monotonic()
    subprocess.run(["cargo", "build", "--quiet"], cwd=crate, env=env, check=True)
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, default=100, help="functions per crate (default 100)")
    parser.add_argument("--rounds", type=int, default=5, help="timed builds per crate and mode (default 5)")
    parser.add_argument("--mode", choices=["full", "incremental", "both"], default="both")
    args = parser.parse_args()

    variants = ["plain", "tools", "server", "byhand"]
    crates = {v: generate(v, args.tools) for v in variants}
    modes = ["full", "incremental"] if args.mode == "both" else [args.mode]
    report = []
    for mode in modes:
        incremental = mode == "incremental"
        # One target directory per mode: switching CARGO_INCREMENTAL rebuilds dependencies.
        target = OUT / f"target-{mode}"
        print(f"[{mode}] warming up: building dependencies once (target dir {target})", flush=True)
        for crate in crates.values():
            cargo_build(crate, target, incremental)
        times = {v: [] for v in variants}
        for r in range(args.rounds):
            order = variants if r % 2 == 0 else list(reversed(variants))
            for v in order:
                (crates[v] / "src" / "lib.rs").touch()
                times[v].append(cargo_build(crates[v], target, incremental))
            print(f"[{mode}] round {r + 1}: " + ", ".join(f"{v} {times[v][-1]:.2f}s" for v in variants), flush=True)
        base = statistics.median(times["plain"])
        report.append(f"\n[{mode}] {args.tools} functions, `cargo build` (dev) of the generated crate only, {args.rounds} rounds")
        for v in variants:
            med = statistics.median(times[v])
            runs = " ".join(f"{t:.2f}" for t in times[v])
            report.append(f"  {v:<7} median {med:6.2f}s  ratio {med / base:4.2f}x   runs: {runs}")
    print("\n".join(report))


if __name__ == "__main__":
    main()

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

Each round touches every crate's lib.rs and times `cargo build` of each, in alternating
order; the report gives every run, the medians and the ratios to `plain`. Modes:

  full         CARGO_INCREMENTAL=0: the whole generated crate is compiled (dependencies
               already built), as on CI or a first build
  incremental  cargo's default for dev builds: a rebuild after touching the file
  scratch      everything from an empty target directory (dependencies included): what a
               user's first `cargo build` costs; minutes per build, and needs about 1 GiB free

`--profile release` builds with the release profile as a user has it (no overrides);
`--variants` picks the crates; `--registry PATH` measures another checkout of the library
(e.g. `git archive` of an older commit), for before/after comparisons. On a shared machine
the medians matter, not single runs: use --rounds 5 or more.

    python3 benches/compile_time/measure.py [--tools 100] [--rounds 5]
        [--mode full|incremental|scratch|both] [--profile dev|release]
        [--variants plain tools server byhand] [--registry PATH]
"""

import argparse
import os
import resource
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

VARIANTS = ["plain", "tools", "server", "byhand"]

# CPU time (user + system) of every timed build, in order: less sensitive than wall time to
# other work on the machine (it still grows somewhat under contention).
CPU_SECONDS: list = []

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


def generate(variant: str, n: int, registry: Path) -> Path:
    crate = OUT / variant
    (crate / "src").mkdir(parents=True, exist_ok=True)
    (crate / "Cargo.toml").write_text(
        f"""[package]
name = "compile-time-{variant}"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
mcp-registry = {{ package = "mcp-tool-registry", path = "{registry / 'mcp-registry'}" }}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1"

[workspace]
"""
    )
    # The workspace's lock file pins the same dependency versions for every variant.
    shutil.copy(registry / "Cargo.lock", crate / "Cargo.lock")
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


def cargo_build(crate: Path, target: Path, incremental: bool, profile: str) -> float:
    # A user's defaults: no profile overrides from the environment.
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARGO_PROFILE_")}
    env.update(CARGO_TARGET_DIR=str(target), CARGO_INCREMENTAL="1" if incremental else "0")
    command = ["cargo", "build", "--quiet"] + (["--release"] if profile == "release" else [])
    start = time.monotonic()
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, cwd=crate, env=env, check=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_SECONDS.append(after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime)
    return wall


def measure(mode: str, crates: dict, args: argparse.Namespace) -> dict:
    """Every variant's build times, `args.rounds` of each, in alternating order."""
    incremental = mode == "incremental"
    # One target directory per mode and profile: switching CARGO_INCREMENTAL rebuilds dependencies.
    target = OUT / f"target-{mode}-{args.profile}"
    if mode != "scratch":
        print(f"[{mode}] warming up: building dependencies once (target dir {target})", flush=True)
        for crate in crates.values():
            cargo_build(crate, target, incremental, args.profile)
    times = {v: [] for v in crates}
    cpu = {v: [] for v in crates}
    for r in range(args.rounds):
        order = list(crates) if r % 2 == 0 else list(reversed(crates))
        for v in order:
            if mode == "scratch":
                shutil.rmtree(target, ignore_errors=True)
            (crates[v] / "src" / "lib.rs").touch()
            times[v].append(cargo_build(crates[v], target, incremental, args.profile))
            cpu[v].append(CPU_SECONDS[-1])
        print(f"[{mode}] round {r + 1}: " + ", ".join(f"{v} {times[v][-1]:.2f}s" for v in crates), flush=True)
    if mode == "scratch":
        shutil.rmtree(target, ignore_errors=True)
    return times, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, default=100, help="functions per crate (default 100)")
    parser.add_argument("--rounds", type=int, default=5, help="timed builds per crate and mode (default 5)")
    parser.add_argument("--mode", choices=["full", "incremental", "scratch", "both"], default="both")
    parser.add_argument("--profile", choices=["dev", "release"], default="dev")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=VARIANTS)
    parser.add_argument("--registry", type=Path, default=ROOT, help="the checkout of the library to build")
    args = parser.parse_args()

    variants = [v for v in VARIANTS if v in args.variants]
    crates = {v: generate(v, args.tools, args.registry.resolve()) for v in variants}
    modes = ["full", "incremental"] if args.mode == "both" else [args.mode]
    rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True, check=True).stdout.strip()
    report = [f"\n{rustc}, library at {args.registry}"]
    for mode in modes:
        times, cpu = measure(mode, crates, args)
        what = "everything from scratch" if mode == "scratch" else "the generated crate only"
        report.append(
            f"[{mode}] {args.tools} functions, `cargo build` ({args.profile}) of {what}, {args.rounds} rounds"
        )
        base = statistics.median(times[variants[0]])
        for v in variants:
            med = statistics.median(times[v])
            runs = " ".join(f"{t:.2f}" for t in times[v])
            cpu_med = statistics.median(cpu[v])
            report.append(
                f"  {v:<7} median {med:6.2f}s  ratio {med / base:4.2f}x  CPU {cpu_med:6.1f}s   runs: {runs}"
            )
    print("\n".join(report))


if __name__ == "__main__":
    main()

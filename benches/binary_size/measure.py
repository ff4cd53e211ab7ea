#!/usr/bin/env python3
"""Release size of an MCP server binary built on mcp-registry, and what takes the space.

Generates throw-away binary crates under target/binary_size/ (never committed), each a
standalone package depending on this workspace's mcp-registry by path, sharing one target
directory, and builds them with `cargo build --release` and the release profile a user gets
by default (opt-level 3, no LTO, 16 codegen units, debug info stripped, symbols kept):

  tiny-stdio   one `add` tool and `server!`, served with transport::stdio (feature stdio)
  demo-stdio   examples/stdio_server.rs as it is (six tools, a prompt, resources; feature stdio)
  demo-all     the same program with every feature of the crate enabled

For each binary the report gives its size as built, its size after `strip` (what
`strip = true` in a profile gives), and, with --bloat and `cargo bloat` installed
(`cargo install cargo-bloat`), the crates that take the most of its code (`.text`).

    python3 benches/binary_size/measure.py [--bloat] [--only VARIANT ...]

Dependencies are built once per feature set (the first run takes minutes; later runs only
relink). Sizes do not depend on the machine's load: one run is enough.
"""

import argparse
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "target" / "binary_size"
TARGET = OUT / "target"

ALL_FEATURES = [
    "stdio", "http", "agent", "client-stdio", "client-http", "client-auth", "http-dpop", "otel", "testing",
    "redis",
]

TINY = """\
use mcp_registry::{Registry, mcp_tool, server};

/// Add two integers.
///
/// # Arguments
/// * `a` - the left operand
/// * `b` - the right operand
#[mcp_tool(read_only)]
async fn add(a: i64, b: i64) -> String {
    a.saturating_add(b).to_string()
}

server!(name = "tiny", tools = [add]);

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    mcp_registry::transport::stdio::serve(Registry::collected(), "tiny").await
}
"""

VARIANTS = {
    "tiny-stdio": ("tiny", ["stdio"]),
    "demo-stdio": ("demo", ["stdio"]),
    "demo-all": ("demo", ALL_FEATURES),
}


def generate(variant: str) -> Path:
    program, features = VARIANTS[variant]
    crate = OUT / variant
    (crate / "src").mkdir(parents=True, exist_ok=True)
    feature_list = ", ".join(f'"{f}"' for f in features)
    (crate / "Cargo.toml").write_text(
        f"""[package]
name = "binary-size-{variant}"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
mcp-registry = {{ package = "mcp-tool-registry", path = "{ROOT / 'mcp-registry'}", default-features = false, features = [{feature_list}] }}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1"
tokio = {{ version = "1", default-features = false, features = ["macros", "rt", "rt-multi-thread", "time"] }}

[workspace]
"""
    )
    # The workspace's lock file pins the same dependency versions for every variant.
    shutil.copy(ROOT / "Cargo.lock", crate / "Cargo.lock")
    if program == "tiny":
        (crate / "src" / "main.rs").write_text(TINY)
    else:
        shutil.copy(ROOT / "examples" / "stdio_server.rs", crate / "src" / "main.rs")
        (crate / "src" / "demo").mkdir(exist_ok=True)
        shutil.copy(ROOT / "examples" / "demo" / "mod.rs", crate / "src" / "demo" / "mod.rs")
    return crate


def env() -> dict:
    # A user's defaults: no profile overrides from the environment.
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CARGO_PROFILE_")}
    return dict(clean, CARGO_TARGET_DIR=str(TARGET))


def build(crate: Path, variant: str) -> Path:
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=crate, env=env(), check=True)
    return TARGET / "release" / f"binary-size-{variant}"


def stripped_size(binary: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "stripped"
        subprocess.run(["strip", "-o", str(out), str(binary)], check=True)
        return out.stat().st_size


def bloat(crate: Path) -> str:
    if shutil.which("cargo-bloat") is None:
        return "    (cargo bloat not installed: cargo install cargo-bloat)"
    result = subprocess.run(
        ["cargo", "bloat", "--release", "--crates", "-n", "15"],
        cwd=crate, env=env(), check=True, capture_output=True, text=True,
    )
    return "\n".join("    " + line for line in result.stdout.splitlines())


def mib(size: int) -> str:
    return f"{size / (1024 * 1024):5.2f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bloat", action="store_true", help="list the crates taking the most space (cargo bloat)")
    parser.add_argument("--only", nargs="+", choices=list(VARIANTS), help="measure only these variants")
    args = parser.parse_args()

    rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True, check=True).stdout.strip()
    report = [f"release profile (user defaults), {rustc}"]
    for variant in args.only or list(VARIANTS):
        crate = generate(variant)
        print(f"building {variant} (target dir {TARGET})", flush=True)
        binary = build(crate, variant)
        size = binary.stat().st_size
        report.append(f"  {variant:<11} {mib(size)}  stripped {mib(stripped_size(binary))}  ({size} bytes)")
        if args.bloat:
            report.append(bloat(crate))
    print("\n".join(report))


if __name__ == "__main__":
    main()

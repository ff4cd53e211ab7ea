//! The examples the tests run as child processes, built on demand with the same cargo.
//!
//! Included on its own (`#[path = "common/examples.rs"] mod examples;`) by tests that need
//! nothing else of `common`.

use std::path::PathBuf;
use std::process::Command;

/// Builds `examples/{name}` (a no-op when it is up to date) and returns its path. With every
/// feature, as the tests themselves are built (`--all-features`), so nothing is rebuilt.
///
/// What `cargo test` adds to a test's environment is left out of the nested build: ring's
/// build script reruns when `CARGO_PKG_*` change, so passing them on would rebuild half the
/// tree twice per run.
pub fn example(name: &str) -> PathBuf {
    let root = env!("CARGO_MANIFEST_DIR");
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| format!("{root}/target"));
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .args(["build", "--quiet", "--all-features", "--example", name])
        .current_dir(root);
    for (var, _) in std::env::vars_os() {
        let var = var.to_string_lossy();
        if var.starts_with("CARGO_PKG_")
            || var.starts_with("CARGO_MANIFEST_")
            || var.starts_with("CARGO_CRATE_")
            || var == "LD_LIBRARY_PATH"
        {
            cargo.env_remove(&*var);
        }
    }
    let status = cargo.status().expect("cargo runs");
    assert!(status.success(), "cargo build --example {name}");
    PathBuf::from(target).join("debug/examples").join(name)
}

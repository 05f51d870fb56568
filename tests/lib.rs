//! `kip-e2e`: the workspace's end-to-end tests, kept at the top level
//! because they exercise the whole stack rather than one crate.
//!
//! - `cli.rs`, `capsules.rs`, `nexus_cli.rs` — the `kip` binary: exit codes,
//!   stdin, JSON output, `exec` / `import` / `schema` / `watch` / `export`.
//! - `concurrency.rs` — several `kip` processes writing one nexus at once.
//! - `serve.rs` — `kip serve` on an ephemeral port (the KIP endpoints, the
//!   API operations, server-sent events, read-only, tokens, and what a web
//!   page must not be able to do).
//! - `mcp.rs` — `kip mcp` driven by rmcp's own client over stdio.
//! - `nesting.rs` — inputs nested 100,000 and 1,000,000 deep through
//!   `kip exec`, `kip import` and `kip serve`: a positioned error, never a
//!   signal.
//! - `tidy.rs` — the architecture's rules, checked: crate layering from
//!   `cargo metadata`, forbidden imports from a source scan.
//!
//! This library holds what they share: where the workspace is, and the `kip`
//! binary, built by cargo on first use (a package cannot name another
//! package's binary with `CARGO_BIN_EXE_*`, so the tests ask cargo for it).

use std::io::{BufRead as _, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value as Json;

/// The workspace's root folder.
pub fn workspace() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(".."))
    })
}

/// The `kip` binary of this checkout, built (once per test process, and a
/// no-op when it is up to date) with the profile the tests run under.
///
/// Panics with cargo's own output when the build fails: every test that
/// runs `kip` needs it.
pub fn kip_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(build_kip)
}

fn build_kip() -> PathBuf {
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .current_dir(workspace())
        .args(["build", "--package", "kip-cli", "--bin", "kip"])
        .arg("--message-format=json-render-diagnostics");
    if let Some(profile) = profile() {
        cargo.args(["--profile", &profile]);
    }
    let out = cargo.output().expect("cargo runs");
    assert!(
        out.status.success(),
        "building kip failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Json>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "kip")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("cargo names the kip executable it built")
}

/// The cargo profile of the running test binary, read off its path
/// (`target/<profile dir>/deps/<test>`); `None` for the default (`dev`,
/// whose folder is `debug`).
fn profile() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.parent()?.file_name()?.to_str()?.to_owned();
    match dir.as_str() {
        "debug" => None,
        "release" => Some("release".into()),
        other => Some(other.to_owned()),
    }
}

/// `cargo metadata --no-deps` of the workspace: its packages with their
/// declared dependencies.
pub fn metadata() -> Json {
    let out = Command::new(env!("CARGO"))
        .current_dir(workspace())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// Passes a child's log (its standard error) on to the test's own output,
/// line by line, labelled with `who`. The thread inherits the test's output
/// capture, so the log shows only when the test fails: the `WARN` lines a
/// passing test provokes on purpose (a refused token, a broken capsule) do
/// not read like failures in a green run.
pub fn forward_log(stream: impl Read + Send + 'static, who: &'static str) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            eprintln!("[{who}] {line}");
        }
    });
}

//! Replays the fuzz corpus (`fuzz/corpus/parse_roundtrip/`) and any crash
//! artifacts (`fuzz/artifacts/parse_roundtrip/`) through the exact checks of
//! the `parse_roundtrip` fuzz target, so that CI exercises them on stable
//! Rust without libFuzzer.

use std::path::{Path, PathBuf};

#[path = "../../../fuzz/src/check.rs"]
mod check;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir` (none if it does not exist), sorted for stable output.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs the target's checks on every file, collecting failures so that one
/// run reports all of them.
fn replay(files: &[PathBuf]) -> Vec<String> {
    let mut failures = Vec::new();
    for path in files {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // The target ignores input that is not UTF-8, and so does the replay.
        let Ok(source) = std::str::from_utf8(&bytes) else {
            continue;
        };
        let source = source.to_owned();
        if let Err(panic) = std::panic::catch_unwind(|| check::parse_roundtrip(&source)) {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            failures.push(format!("{}:\n{message}", path.display()));
        }
    }
    failures
}

#[test]
fn the_seed_corpus_passes_the_fuzz_checks() {
    let files = files(&fuzz_dir().join("corpus/parse_roundtrip"));
    assert!(
        files.len() >= 60,
        "the seed corpus is missing or small: {} files",
        files.len()
    );
    let failures = replay(&files);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_crash_artifacts_pass_the_fuzz_checks() {
    // Crashes found by the fuzzer are kept under artifacts/ until fixed;
    // each one must pass once its bug is fixed.
    let files = files(&fuzz_dir().join("artifacts/parse_roundtrip"));
    let failures = replay(&files);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

//! Replays the corpora of the fuzz targets `execute_request` (whole
//! `execute_kip` requests) and `capsule_import` (`.kip` capsules), and any
//! crash artifacts, through the exact checks of the targets
//! (`fuzz/src/request.rs`), so that CI exercises them on stable Rust
//! without libFuzzer; then the store must pass its integrity check.
//!
//! Seeds that still crash (nesting deeper than the grammar's coming limit)
//! wait in `fuzz/corpus-pending-nesting-limit/`, outside the replayed set.
//! `KIP_FUZZ_REPLAY=<target>:<file>` replays one file of any folder.

use std::path::{Path, PathBuf};

#[path = "../../../fuzz/src/request.rs"]
mod request;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

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

type Target = fn(&kip_api::Api, &[u8]);

fn target(name: &str) -> Target {
    match name {
        "execute_request" => request::execute_request,
        "capsule_import" => request::capsule_import,
        other => panic!("no target {other}"),
    }
}

/// Replays `target`'s corpus and artifacts on one fixture, collecting
/// failures so that one run reports all of them; returns how many files ran.
fn replay(name: &str) -> usize {
    let fixture = request::Fixture::new();
    let run = target(name);
    let mut paths = files(&fuzz_dir().join("corpus").join(name));
    paths.extend(files(&fuzz_dir().join("artifacts").join(name)));
    let mut failures = Vec::new();
    for path in &paths {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if let Err(panic) = std::panic::catch_unwind(|| run(&fixture.api, &bytes)) {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            failures.push(format!("{}:\n{message}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let check = fixture.api.check_store().expect("check_store");
    assert!(check.ok, "{check:#?}");
    paths.len()
}

#[test]
fn the_execute_request_corpus_passes_the_fuzz_checks() {
    let n = replay("execute_request");
    assert!(n >= 20, "the corpus is missing or small: {n} files");
}

#[test]
fn the_capsule_import_corpus_passes_the_fuzz_checks() {
    let n = replay("capsule_import");
    assert!(n >= 20, "the corpus is missing or small: {n} files");
}

/// `KIP_FUZZ_REPLAY=<target>:<file>`: one file, wherever it is (to sort new
/// seeds, or to reproduce a crash under a debugger).
#[test]
fn one_file_named_in_the_environment_replays() {
    let Ok(spec) = std::env::var("KIP_FUZZ_REPLAY") else {
        return;
    };
    let (name, file) = spec.split_once(':').expect("<target>:<file>");
    let fixture = request::Fixture::new();
    let bytes = std::fs::read(file).expect("read");
    target(name)(&fixture.api, &bytes);
}

//! Replays the corpora of the fuzz targets `execute_request` (whole
//! `execute_kip` requests) and `capsule_import` (`.kip` capsules), and any
//! crash artifacts, through the exact checks of the targets
//! (`fuzz/src/request.rs`), so that CI exercises them on stable Rust
//! without libFuzzer; then the store must pass its integrity check.
//!
//! Seeds that still crash (nesting deeper than the grammar's coming limit)
//! wait in `fuzz/corpus-pending-nesting-limit/`, outside the replayed set.
//! `KIP_FUZZ_REPLAY=<target>:<file>` replays one file of any folder, and
//! `KIP_FUZZ_SECONDS=N` runs a random mutation loop over every target's
//! corpus for N seconds per target (the stand-in for cargo-fuzz where a
//! nightly toolchain or the disk for its build is missing; never in CI).

use std::path::{Path, PathBuf};

#[path = "../../../fuzz/src/request.rs"]
mod request;

#[path = "../../../fuzz/src/check.rs"]
mod check;

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

/// Any of the checks, closures included.
type Run<'a> = dyn Fn(&kip_api::Api, &[u8]) + 'a;

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
        if let Err(panic) =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&fixture.api, &bytes)))
        {
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

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Fragments that open or close nesting, break JSON or KIP, or are
/// otherwise known to be interesting to the readers.
const SNIPPETS: [&str; 30] = [
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "NOT { ",
    "OPTIONAL { ",
    "UNION { ",
    "FILTER(",
    "\"",
    ",",
    ":",
    "?x",
    ":p",
    "\\u0000",
    "\u{0}",
    "阿司匹林",
    "\r\n",
    "//",
    "/*",
    "LIMIT 0",
    "CURSOR \"x\"",
    "1e999",
    "-0",
    "null",
    "true",
    "\"dry_run\": false,",
    "\"explain\": true,",
    "\"commands\": [",
];

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut bytes = input.to_vec();
    for _ in 0..1 + rng.below(6) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(7) {
            0 => {
                let end = (at + rng.below(32)).min(bytes.len());
                bytes.drain(at..end);
            }
            1 | 2 => {
                let s = SNIPPETS[rng.below(SNIPPETS.len())];
                bytes.splice(at..at, s.bytes());
            }
            3 => {
                // A run of one nesting snippet: depth is what breaks readers.
                let s = SNIPPETS[rng.below(8)].repeat(1 + rng.below(3000));
                bytes.splice(at..at, s.bytes());
            }
            4 => {
                let end = (at + rng.below(128)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                let to = rng.below(bytes.len() + 1);
                bytes.splice(to..to, copy);
            }
            5 => {
                if let Some(b) = bytes.get_mut(at) {
                    *b ^= 1 << rng.below(8);
                }
            }
            _ => bytes.truncate(at),
        }
    }
    bytes
}

/// `KIP_FUZZ_SECONDS=N`: mutates each target's corpus for N seconds, the
/// same checks as the targets; failing inputs are written to the build's
/// `fuzz-findings/` folder and listed when the test fails at the end.
#[test]
fn a_mutation_loop_runs_when_asked() {
    let Some(seconds) = std::env::var("KIP_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    else {
        return;
    };
    let fixture = request::Fixture::new();
    let yaml = |api: &kip_api::Api, data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let r = api
            .import(&kip_api::ImportRequest {
                file_name: "fuzz.yaml".to_owned(),
                text: text.to_owned(),
                dry_run: Some(true),
            })
            .expect("a dry run is allowed");
        assert_eq!(r.is_imported(), r.errors.is_empty());
    };
    let parse = |_: &kip_api::Api, data: &[u8]| {
        if let Ok(text) = std::str::from_utf8(data) {
            check::parse_roundtrip(text);
        }
    };
    let targets: [(&str, &Run<'_>); 4] = [
        ("execute_request", &request::execute_request),
        ("capsule_import", &request::capsule_import),
        ("parse_roundtrip", &parse),
        ("yaml_import", &yaml),
    ];
    let mut rng = Rng(std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x2545_F491, |d| d.as_nanos() as u64)
        | 1);
    // Failing inputs go beside the build, not into the replayed corpus.
    let findings = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-findings");
    let _ = std::fs::create_dir_all(&findings);
    let mut failures: Vec<String> = Vec::new();
    for (name, run) in targets {
        let corpus: Vec<Vec<u8>> = files(&fuzz_dir().join("corpus").join(name))
            .iter()
            .filter_map(|p| std::fs::read(p).ok())
            .collect();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
        let (mut runs, mut failed) = (0u64, 0u64);
        while std::time::Instant::now() < deadline {
            let pick = rng.below(corpus.len());
            let input = mutate(&mut rng, &corpus[pick]);
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run(&fixture.api, &input)
            }));
            if let Err(panic) = outcome {
                failed += 1;
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                let file = findings.join(format!("{name}-{failed}"));
                let _ = std::fs::write(&file, &input);
                let short: String = message
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .chars()
                    .take(200)
                    .collect();
                failures.push(format!("{}: {short}", file.display()));
            }
            runs += 1;
        }
        eprintln!("{name}: {runs} mutated inputs in {seconds} s, {failed} failing");
    }
    let check = fixture.api.check_store().expect("check_store");
    assert!(check.ok, "{check:#?}");
    failures.truncate(20);
    assert!(
        failures.is_empty(),
        "failing inputs:\n{}",
        failures.join("\n")
    );
}

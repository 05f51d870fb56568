//! The importer never panics and never writes on malformed input: a
//! deterministic mutation run over the example bundles and capsules and the
//! broken corpus, inputs crafted against YAML readers, and a replay of the
//! corpus of the cargo-fuzz target `yaml_import` (/fuzz), which explores
//! the same entry point without bounds.

use crate::common;

use common::*;
use kip_capsule::{ImportOptions, ImportReport, Status, import_text_with};
use kip_nexus::Nexus;

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

const SNIPPETS: [&str; 32] = [
    "- ",
    ": ",
    "{",
    "}",
    "[",
    "]",
    ",",
    "&a ",
    "*a",
    "!!int ",
    "!!str ",
    "!custom ",
    "---\n",
    "...\n",
    "\t",
    "\"",
    "'",
    "#",
    "|\n",
    ">-\n",
    "? ",
    "\u{0}",
    "阿司匹林",
    "\r",
    "\n  ",
    "type: ",
    "source: ",
    "{id: C:1}",
    "action: delete",
    "_x: 1",
    "~",
    "1e999",
];

fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(5) {
            0 => {
                let end = (at + rng.below(16)).min(bytes.len());
                bytes.drain(at..end);
            }
            1 | 2 => {
                let s = SNIPPETS[rng.below(SNIPPETS.len())];
                bytes.splice(at..at, s.bytes());
            }
            3 => {
                let end = (at + rng.below(64)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                let to = rng.below(bytes.len() + 1);
                bytes.splice(to..to, copy);
            }
            _ => bytes.truncate(at),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn dry(nexus: &Nexus, name: &str, text: &str) -> ImportReport {
    let options = ImportOptions {
        dry_run: true,
        progress: None,
        originator: None,
        owner: false,
    };
    import_text_with(nexus, name, text, &origin(), &options)
}

#[track_caller]
fn check(report: &ImportReport, text: &str) {
    let lines = text.split(['\n', '\r']).count() + 1;
    match report.status {
        Status::Imported => assert!(report.errors.is_empty()),
        Status::Failed => {
            assert!(!report.errors.is_empty());
            for e in &report.errors {
                assert!(!e.message.is_empty() && !e.hint.is_empty(), "{e:?}");
                if let Some(l) = e.line {
                    assert!(l >= 1 && l <= lines, "line {l} of {lines}: {e:?}\n{text}");
                }
            }
        }
    }
}

fn corpus(ext: &str) -> Vec<String> {
    let mut out = Vec::new();
    for dir in [examples_dir(), data_dir().join("err")] {
        for f in kip_capsule::capsule_files(&dir).expect("corpus") {
            if f.extension().is_some_and(|e| e == ext) {
                out.push(std::fs::read_to_string(&f).expect("read"));
            }
        }
    }
    out
}

#[test]
fn mutated_bundles_never_panic_nor_write() {
    let (_d, nexus) = medical();
    let before = graph(&nexus);
    let corpus = corpus("yaml");
    assert!(corpus.len() > 10);
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for i in 0..1200 {
        let text = mutate(&mut rng, &corpus[i % corpus.len()]);
        let r = dry(&nexus, "m.yaml", &text);
        check(&r, &text);
    }
    assert_eq!(graph(&nexus), before);
}

/// A bundle large enough to be applied while it is read (1 MiB and more),
/// mutated in its last tenth, where the writer has applied most of it
/// already: a mutation that breaks it must leave nothing behind, and the
/// report must be the whole-file import's kind (positioned, hinted).
#[test]
fn large_bundles_mutated_near_their_end_never_panic_nor_write() {
    let mut text = String::from(
        "- {type: $ConceptType, name: Plant, description: A plant., \
         instance_schema: {height: {type: number, is_required: false}}}\n",
    );
    for i in 0..15_000 {
        text.push_str(&format!(
            "- type: Plant\n  name: plant {i}\n  description: plant number {i}\n  height: {i}\n"
        ));
    }
    assert!(text.len() >= 1 << 20);
    let mut rng = Rng(0x51ED_2701_A55E_77E5);
    let mut failed = 0;
    for _ in 0..8 {
        let tail = text.len() - text.len() / 10;
        let (head, end) = text.split_at(tail);
        let mutated = format!("{head}{}", mutate(&mut rng, end));
        let (_d, nexus) = fresh();
        let before = graph(&nexus);
        let options = ImportOptions::default();
        let r = import_text_with(&nexus, "big.yaml", &mutated, &origin(), &options);
        check(&r, &mutated);
        if r.status == Status::Failed {
            failed += 1;
            assert_eq!(graph(&nexus), before);
        }
        let checked = nexus.check_store().expect("check runs");
        assert!(checked.violations.is_empty(), "{:?}", checked.violations);
    }
    // Both outcomes are exercised (the seed is fixed).
    assert!((1..8).contains(&failed), "{failed} of 8 failed");
}

/// The cargo-fuzz corpus and any crash it found, replayed on stable.
#[test]
fn the_fuzz_corpus_and_artifacts_replay_cleanly() {
    let (_d, nexus) = medical();
    let before = graph(&nexus);
    let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut replayed = 0;
    for dir in [
        fuzz.join("corpus/yaml_import"),
        fuzz.join("artifacts/yaml_import"),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let bytes = std::fs::read(entry.path()).expect("read");
            if let Ok(text) = std::str::from_utf8(&bytes) {
                let r = dry(&nexus, "fuzz.yaml", text);
                check(&r, text);
                replayed += 1;
            }
        }
    }
    assert!(replayed >= 20, "the corpus is missing: {}", fuzz.display());
    assert_eq!(graph(&nexus), before);
}

#[test]
fn mutated_capsules_never_panic_nor_write() {
    let (_d, nexus) = medical();
    let before = graph(&nexus);
    let corpus = corpus("kip");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for i in 0..300 {
        let text = mutate(&mut rng, &corpus[i % corpus.len()]);
        let r = dry(&nexus, "m.kip", &text);
        check(&r, &text);
    }
    assert_eq!(graph(&nexus), before);
}

/// The same mutated capsules read part by part (tiny parts, so every
/// command and block end is a cut): never a panic or a write, errors
/// inside the file, and a capsule the whole import accepts is accepted
/// with the same counts (the reverse need not hold: a streamed file's
/// checks compare blocks within a part only).
#[test]
fn mutated_capsules_streamed_in_tiny_parts_never_panic_nor_write() {
    let (_d, nexus) = medical();
    let before = graph(&nexus);
    let dir = tempfile::tempdir().expect("dir");
    let corpus = corpus("kip");
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let mut accepted = 0;
    for i in 0..300 {
        let text = mutate(&mut rng, &corpus[i % corpus.len()]);
        let path = dir.path().join("m.kip");
        std::fs::write(&path, &text).expect("write");
        let options = ImportOptions {
            dry_run: true,
            progress: None,
            originator: None,
            owner: false,
        };
        let part_bytes = 1 + rng.below(400);
        let r = kip_capsule::import_streamed(
            &nexus,
            &path,
            &origin(),
            &options,
            part_bytes,
            std::time::Instant::now(),
        );
        check(&r, &text);
        let whole = dry(&nexus, "m.kip", &text);
        if whole.status == Status::Imported {
            assert_eq!(
                r.status,
                Status::Imported,
                "parts of {part_bytes}: {:?}\n{text}",
                r.errors
            );
            assert_eq!(r.stats, whole.stats, "parts of {part_bytes}\n{text}");
            accepted += 1;
        }
    }
    assert!(accepted > 20, "only {accepted} mutated capsules were valid");
    assert_eq!(graph(&nexus), before);
}

#[test]
fn inputs_crafted_against_yaml_readers_are_refused_cleanly() {
    let (_d, nexus) = medical();
    let mut laughs = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        laughs.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let deep = format!(
        "- {{type: Drug, name: D, description: {}x{}}}\n",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let failed = Status::Failed;
    let imported = Status::Imported;
    let cases = [
        (laughs, failed),
        (deep, failed),
        ("- !!binary aGVsbG8=\n".to_owned(), failed),
        ("- {type: Drug, name: !!int x}\n".to_owned(), failed),
        ("- {type: Drug, name: D, description: d, risk_level: .nan}\n".to_owned(), failed),
        // Past u64, integers read as (inexact) floats, as JSON readers do.
        ("- {type: Drug, name: D, description: d, risk_level: 123456789012345678901234567890}\n".to_owned(), imported),
        ("- {? [a, b] : c}\n".to_owned(), failed),
        ("- &x {type: Drug, name: D, description: d, self: *x}\n".to_owned(), failed),
        ("%YAML 1.2\n---\n- {type: Drug, name: D, description: d}\n...\n---\n- x\n".to_owned(), failed),
        ("\u{feff}- {type: Drug, name: D, description: d}\n".to_owned(), imported),
        ("- {type: Drug, name: \"\", description: d}\n".to_owned(), failed),
        (format!("- {{type: Drug, name: \"{}\", description: d}}\n", "n".repeat(100_000)), imported),
        ("items: [{type: stated, source: {type: User, name: 张三}, target: {type: stated, source: {type: stated, source: {id: P:1}, target: {id: P:2}}, target: {id: C:1}}}]\n".to_owned(), failed),
        ("- type: Drug\n  name: D\n  description: d\n  metadata: {source: s}\n  metadata: {source: t}\n".to_owned(), failed),
    ];
    for (text, expected) in &cases {
        let r = dry(&nexus, "crafted.yaml", text);
        check(&r, text);
        assert_eq!(
            r.status,
            *expected,
            "{}\n{:#?}",
            &text[..text.len().min(200)],
            r.errors
        );
    }
    // A single mapping key repeated thousands of times stays linear enough to finish.
    let mut wide = String::from("- {type: Drug, name: W, description: w");
    for i in 0..3000 {
        wide.push_str(&format!(", k{i}: {i}"));
    }
    wide.push_str("}\n");
    assert!(dry(&nexus, "wide.yaml", &wide).is_imported());
}

//! Capsules too large to hold whole are imported part by part in one
//! transaction: the same graph as a whole import (handles and `WITH
//! METADATA` carried across the cuts), errors placed in the file, nothing
//! applied when any part fails. The tests cut small files into tiny parts.

use crate::common;

use std::path::Path;
use std::time::Instant;

use common::*;
use kip_capsule::{ImportOptions, ImportReport, Status, import_streamed};
use kip_lang::ErrorCode;
use kip_nexus::Nexus;

fn streamed(nexus: &Nexus, path: &Path, part_bytes: usize) -> ImportReport {
    import_streamed(
        nexus,
        path,
        &origin(),
        &ImportOptions::default(),
        part_bytes,
        Instant::now(),
    )
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

/// An open UPSERT of `n` symptoms named `{prefix} {i}`, one block a line
/// from line 2.
fn symptoms(prefix: &str, n: usize) -> String {
    let mut text = String::from("UPSERT {\n");
    for i in 0..n {
        text.push_str(&format!(
            "  CONCEPT {{ {{type: \"Symptom\", name: \"{prefix} {i}\"}} }}\n"
        ));
    }
    text
}

fn count(nexus: &Nexus, query: &str) -> u64 {
    let out = nexus.execute(
        &kip_nexus::ExecuteKip::command(query),
        &kip_nexus::Context::default(),
    );
    out["result"].as_u64().unwrap_or_else(|| panic!("{out}"))
}

const EXAMPLES: [&str; 4] = [
    "10_medical_schema.kip",
    "11_medical_data.kip",
    "12_cognizine.kip",
    "12_medical_logic.kip",
];

#[test]
fn the_examples_cut_into_tiny_parts_give_the_graph_of_a_whole_import() {
    let (_w, whole) = fresh();
    for name in EXAMPLES {
        imported(&whole, &examples_dir().join(name));
    }
    // Parts of a few blocks, of one block (every block end is a cut), and
    // larger than some files.
    for part_bytes in [1, 300, 2_000, 100_000] {
        let (_s, parts) = fresh();
        for name in EXAMPLES {
            let whole_report =
                kip_capsule::import_path(&fresh().1, &examples_dir().join(name), &origin());
            let r = streamed(&parts, &examples_dir().join(name), part_bytes);
            assert_eq!(
                r.status,
                Status::Imported,
                "{name} in parts of {part_bytes}: {:?}",
                r.errors
            );
            assert_eq!(r.hash, whole_report.hash, "{name}");
            if name.starts_with("10_") {
                assert_eq!(
                    r.items, whole_report.items,
                    "{name} in parts of {part_bytes}"
                );
            }
        }
        assert_eq!(graph(&whole), graph(&parts), "parts of {part_bytes} bytes");
    }
}

#[test]
fn a_cut_upsert_keeps_its_metadata_and_its_handles_in_every_part() {
    let dir = tempfile::tempdir().expect("dir");
    let (_d, nexus) = medical();
    // Strings and comments that look like commands and braces must not cut.
    let mut text = String::from(
        "// UPSERT { not a command } FIND\nUPSERT {\n  CONCEPT ?first {\n    {type: \"Symptom\", name: \"S 0 UPSERT {\"}\n  }\n",
    );
    for i in 1..200 {
        text.push_str(&format!(
            "  CONCEPT ?s{i} {{ {{type: \"Symptom\", name: \"S {i} }}\"}} SET PROPOSITIONS {{ (\"belongs_to_domain\", {{type: \"Domain\", name: \"Medical\"}}) }} }} // }} FIND\n"
        ));
    }
    text.push_str("  CONCEPT ?last { {type: \"Drug\", name: \"Last drug\"} SET PROPOSITIONS { (\"treats\", ?first) (\"treats\", ?s150) } }\n");
    text.push_str("}\nWITH METADATA { source: \"streamed\", confidence: 0.5 }\n");
    let path = write(dir.path(), "cut.kip", &text);
    let r = streamed(&nexus, &path, 500);
    assert_eq!(r.status, Status::Imported, "{:?}", r.errors);
    assert_eq!(r.items, 1);
    assert_eq!(r.stats.concepts_created, 201);
    assert_eq!(
        count(
            &nexus,
            r#"FIND(COUNT(?s)) WHERE { ?s {type: "Symptom"} FILTER(?s.metadata.source == "streamed") }"#
        ),
        200
    );
    assert_eq!(
        count(
            &nexus,
            r#"FIND(COUNT(?s)) WHERE { ?d {type: "Drug", name: "Last drug"} (?d, "treats", ?s) }"#
        ),
        2
    );
    // The same file whole gives the same graph.
    let (_e, whole) = medical();
    let w = kip_capsule::import_path(&whole, &path, &origin());
    assert_eq!(w.status, Status::Imported, "{:?}", w.errors);
    assert_eq!(graph(&whole), graph(&nexus));
}

#[test]
fn an_error_in_a_late_part_is_placed_in_the_file_and_nothing_is_applied() {
    let dir = tempfile::tempdir().expect("dir");
    let (_d, nexus) = medical();
    let before = graph(&nexus);
    let mut text = symptoms("T", 100);
    // Line 102: an unknown type, 9 characters in.
    text.push_str("  CONCEPT { {type: \"Symptomm\", name: \"bad\"} }\n}\n");
    let path = write(dir.path(), "late.kip", &text);
    let whole = kip_capsule::import_path(&medical().1, &path, &origin());
    let r = streamed(&nexus, &path, 400);
    assert_eq!(r.status, Status::Failed);
    assert_eq!(error_lines(&r), error_lines(&whole));
    assert_eq!(r.errors[0].line, Some(102), "{:?}", r.errors);
    assert_eq!(
        graph(&nexus),
        before,
        "a failed streamed import applies nothing"
    );

    // A syntax error after a cut, on a line of its own.
    let mut text = symptoms("U", 50);
    text.push_str("  CONCEPT { {type: \"Symptom\" name: \"no comma\"} }\n}\n");
    let path = write(dir.path(), "syntax.kip", &text);
    let whole = kip_capsule::import_path(&medical().1, &path, &origin());
    let r = streamed(&nexus, &path, 300);
    assert_eq!(r.status, Status::Failed);
    assert_eq!(r.errors[0].code, ErrorCode::InvalidSyntax);
    assert_first_error_placed_alike(&r, &whole);
    assert_eq!(graph(&nexus), before);
}

#[test]
fn bytes_that_are_not_utf8_are_placed() {
    let dir = tempfile::tempdir().expect("dir");
    let (_d, nexus) = medical();
    let before = graph(&nexus);
    let mut bytes = b"UPSERT {\n".to_vec();
    for i in 0..40 {
        bytes.extend(format!("  CONCEPT {{ {{type: \"Symptom\", name: \"V {i}\"}} }}\n").bytes());
    }
    bytes.extend(b"  CONCEPT { {type: \"Symptom\", name: \"\xff\"} }\n}\n");
    let path = dir.path().join("bytes.kip");
    std::fs::write(&path, &bytes).expect("write");
    let r = streamed(&nexus, &path, 200);
    assert_eq!(r.status, Status::Failed);
    let whole = kip_capsule::import_path(&medical().1, &path, &origin());
    assert_eq!(whole.errors[0].line, Some(42));
    assert_first_error_placed_alike(&r, &whole);
    assert_eq!(graph(&nexus), before);
}

/// The streamed import's first error is at the line and column where the
/// whole import puts it.
#[track_caller]
fn assert_first_error_placed_alike(got: &ImportReport, whole: &ImportReport) {
    assert_eq!(
        (got.errors[0].line, got.errors[0].column),
        (whole.errors[0].line, whole.errors[0].column),
        "{:?} vs {:?}",
        got.errors,
        whole.errors
    );
}

#[test]
fn a_dry_run_streams_everything_and_writes_nothing() {
    let (_d, nexus) = fresh();
    let before = graph(&nexus);
    let r = import_streamed(
        &nexus,
        &examples_dir().join("10_medical_schema.kip"),
        &origin(),
        &ImportOptions {
            dry_run: true,
            ..ImportOptions::default()
        },
        500,
        Instant::now(),
    );
    assert_eq!(r.status, Status::Imported, "{:?}", r.errors);
    assert!(r.dry_run);
    assert!(r.stats.changed());
    assert_eq!(graph(&nexus), before);
}

/// The owner's authority reaches a capsule imported part by part (one
/// above the whole-file limit): the official RC11 `$self` persona, whose
/// `id` and `core_directives` are protected, is refused to an ordinary
/// import and applied with the owner's.
#[test]
fn a_streamed_capsule_is_applied_with_the_owners_authority_only_when_asked() {
    let persona = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/kip-rc11-official/persons/self.kip");
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus");
    let refused = streamed(&nexus, &persona, 300);
    assert_eq!(refused.status, Status::Failed, "{refused:?}");
    assert_eq!(refused.errors[0].code, ErrorCode::ImmutableTarget);
    let owner = ImportOptions {
        owner: true,
        ..ImportOptions::default()
    };
    let applied = import_streamed(&nexus, &persona, &origin(), &owner, 300, Instant::now());
    assert_eq!(applied.status, Status::Imported, "{applied:?}");
    let id = nexus.execute(
        &kip_nexus::ExecuteKip::command(
            r#"FIND(?s.attributes.id) WHERE { ?s {type: "Person", name: "$self"} }"#,
        ),
        &kip_nexus::Context::default(),
    );
    assert_eq!(id["result"], serde_json::json!(["uuc56-gyb"]));
}

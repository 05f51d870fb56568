//! What agents read and the recall simulator on the command line (issue 31
//! §7, §8): `kip trace list --reads` shows the ids a read returned, `kip
//! trace heat` counts them, `kip recall` ranks with score parts and pins or
//! demotes as a traced write that `kip trace revert` undoes.

use crate::common::kip_run;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value as Json;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../capsules/examples")
}

#[track_caller]
fn ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(text: &str) -> Json {
    serde_json::from_str(text).expect("JSON")
}

fn lines(text: &str) -> Vec<Json> {
    text.lines().map(json).collect()
}

fn nexus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let examples = examples();
    ok(&kip_run(
        dir.path(),
        &["import", examples.to_str().expect("utf-8")],
    ));
    dir
}

const DRUGS: &str = r#"FIND(?d) WHERE { ?d {type: "Drug"} }"#;

fn drug_ids(db: &Path) -> Vec<String> {
    let r = json(&ok(&kip_run(db, &["--originator", "agent", "exec", DRUGS])));
    let mut ids: Vec<String> = (r["result"].as_array().expect("rows").iter())
        .map(|d| d["id"].as_str().expect("id").to_owned())
        .collect();
    ids.sort();
    ids
}

#[test]
fn trace_list_shows_what_a_read_returned_and_heat_counts_it() {
    let dir = nexus();
    let db = dir.path();
    let drugs = drug_ids(db);
    drug_ids(db);
    let reads = lines(&ok(&kip_run(
        db,
        &["trace", "list", "--reads", "--originator", "agent"],
    )));
    assert_eq!(reads.len(), 2, "one folded entry per process");
    for r in &reads {
        let mut ids: Vec<String> = r["data"]["returned"]
            .as_object()
            .expect("returned ids")
            .keys()
            .cloned()
            .collect();
        ids.sort();
        assert_eq!(ids, drugs);
    }
    let writes = lines(&ok(&kip_run(db, &["trace", "list", "--type", "TRACE"])));
    assert!(writes.iter().any(|e| e["data"].get("returned").is_none()));

    let heat = lines(&ok(&kip_run(
        db,
        &["trace", "heat", "--originator", "agent"],
    )));
    let (totals, elements) = heat.split_last().expect("a totals line");
    assert_eq!(totals["totals"]["reads"], 2);
    assert_eq!(elements.len(), drugs.len());
    for e in elements {
        assert_eq!(e["reads"], 2);
        assert_eq!(e["by"][0]["originator"], "agent");
    }
}

#[test]
fn recall_ranks_with_score_parts_and_pin_is_traced_and_revertible() {
    let dir = nexus();
    let db = dir.path();
    let r = json(&ok(&kip_run(
        db,
        &["recall", "Headache", "--mode", "keyword", "--limit", "3"],
    )));
    assert_eq!(r["mode"], "keyword");
    let hit = &r["results"][0];
    assert_eq!(hit["name"], "Headache");
    assert_eq!(hit["parts"]["keyword"], hit["score"]);
    assert!(hit["context"].as_array().is_some_and(|c| !c.is_empty()));
    let id = hit["id"].as_str().expect("id").to_owned();

    let preview = json(&ok(&kip_run(db, &["recall", "--demote", &id, "--dry-run"])));
    assert_eq!(preview["dry_run"], true);
    assert!(preview.get("entry").is_none());
    let pinned = json(&ok(&kip_run(
        db,
        &["--originator", "curator", "recall", "--pin", &id],
    )));
    let entry = pinned["entry"].as_str().expect("a trace entry").to_owned();
    let again = json(&ok(&kip_run(db, &["recall", "Headache", "--limit", "1"])));
    assert_eq!(again["results"][0]["pinned"], true);
    assert!(
        again["results"][0].get("memory_strength").is_none(),
        "the preview wrote nothing"
    );
    ok(&kip_run(db, &["trace", "revert", &entry]));
    let after = json(&ok(&kip_run(db, &["recall", "Headache", "--limit", "1"])));
    assert_eq!(after["results"][0]["pinned"], false);
}

#[test]
fn recall_refuses_bad_input_with_a_hint() {
    let dir = nexus();
    for args in [
        &["recall", "  "][..],
        &["recall", "--pin", "P:1"][..],
        &["recall", "--demote", "C:1", "--factor", "2"][..],
    ] {
        let out = kip_run(dir.path(), args);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        assert!(!out.stderr.is_empty() || !out.stdout.is_empty(), "{args:?}");
    }
}

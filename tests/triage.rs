//! `kip triage` (issue 31 §5): the decay-triage lists as JSON and the bulk
//! actions, previewed with --dry-run and applied as one trace entry that
//! `kip trace revert` undoes.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value as Json, json};

fn kip(db: &Path, args: &[&str]) -> Output {
    Command::new(kip_e2e::kip_bin())
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("kip runs")
}

#[track_caller]
fn ok(db: &Path, args: &[&str]) -> Json {
    let out = kip(db, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

const MEMORY: &str = r#"UPSERT {
    CONCEPT ?d { {type: "Domain", name: "Health"} SET ATTRIBUTES { description: "Health notes." } }
    CONCEPT ?a { {type: "Event", name: "Old visit"} SET PROPOSITIONS { ("belongs_to_domain", ?d) } }
        WITH METADATA { expires_at: "2001-01-01T00:00:00Z" }
    CONCEPT ?b { {type: "Event", name: "Faint memory"} } WITH METADATA { memory_strength: 0.1 }
}"#;

#[test]
fn kip_triage_lists_previews_applies_and_the_trace_reverts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path();
    ok(db, &["exec", MEMORY]);
    let expired = ok(db, &["triage", "expired"]);
    assert_eq!(expired["total"], json!(1), "{expired:#}");
    let item = &expired["items"][0];
    assert_eq!(item["name"], "Old visit");
    assert_eq!(item["expires_at"], "2001-01-01T00:00:00Z");
    let id = item["id"].as_str().expect("an id").to_owned();
    let fading = ok(db, &["triage", "fading", "--below", "0.5", "--limit", "10"]);
    assert_eq!(fading["items"][0]["name"], "Faint memory");
    assert_eq!(fading["below"], json!(0.5));
    assert_eq!(
        ok(db, &["triage", "untouched", "--days", "30"])["total"],
        json!(0)
    );

    let domain = |db: &Path| {
        ok(
            db,
            &[
                "exec",
                r#"FIND(?d.name) WHERE { ?x {type: "Event", name: "Old visit"} (?x, "belongs_to_domain", ?d) }"#,
            ],
        )["result"]
            .clone()
    };
    let preview = ok(db, &["triage", "archive", &id, "--dry-run"]);
    assert_eq!(preview["dry_run"], json!(true));
    assert_eq!(preview["counts"]["propositions_created"], json!(1));
    assert_eq!(preview["counts"]["propositions_deleted"], json!(1));
    assert!(preview.get("trace_entry").is_none());
    assert_eq!(domain(db), json!(["Health"]), "a dry run changes nothing");

    let done = ok(
        db,
        &[
            "triage",
            "archive",
            &id,
            "--message",
            "Old visits go to the archive.",
        ],
    );
    assert_eq!(domain(db), json!(["Archived"]));
    assert_eq!(ok(db, &["triage", "expired"])["total"], json!(0));
    let entry = done["trace_entry"].as_str().expect("a trace entry");
    ok(db, &["trace", "revert", entry]);
    assert_eq!(domain(db), json!(["Health"]));

    // --all-of: every memory of a list; pinned ones leave the lists.
    let pinned = ok(
        db,
        &["triage", "pin", "--all-of", "fading", "--below", "0.5"],
    );
    assert_eq!(pinned["targets"], json!(1));
    assert_eq!(
        ok(db, &["triage", "fading", "--below", "0.5"])["total"],
        json!(0)
    );

    // Bad input: a clear error, nothing changed.
    let out = kip(db, &["triage", "delete", "Old visit"]);
    assert_eq!(out.status.code(), Some(1));
    let err: Json = serde_json::from_slice(&out.stdout)
        .or_else(|_| serde_json::from_slice(&out.stderr))
        .expect("the error as JSON");
    assert_eq!(err["error"]["code"], "KIP_1001", "{err:#}");
    assert_eq!(domain(db), json!(["Health"]));
    let out = kip(db, &["triage", "shred", "C:1"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("neither a list"));
    let check = ok(db, &["check-store"]);
    assert_eq!(check["ok"], json!(true), "{check:#}");
}

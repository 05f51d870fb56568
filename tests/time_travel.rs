//! Time travel on the command line (issue 31 §6): `kip exec --as-of` reads
//! the nexus as it was and refuses writes; `kip diff` lists what changed
//! between two times as JSON.

use crate::common;

use std::path::Path;

use common::kip_run;
use serde_json::{Value as Json, json};

fn json_of(out: &std::process::Output) -> Json {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn exec(db: &Path, text: &str) -> Json {
    let out = kip_run(db, &["exec", text]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    json_of(&out)
}

/// The id of the newest trace entry.
fn newest(db: &Path) -> String {
    let out = kip_run(db, &["trace", "export"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let last = text.lines().last().expect("an entry");
    let entry: Json = serde_json::from_str(last).expect("entry");
    entry["id"].as_str().expect("id").to_owned()
}

const FIND: &str = r#"FIND(?d.attributes.risk_level) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#;

#[test]
fn exec_as_of_reads_the_past_refuses_writes_and_diff_lists_the_change() {
    let work = tempfile::tempdir().expect("tempdir");
    let db = work.path().join("nexus");
    let schema =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../capsules/examples/10_medical_schema.kip");
    let out = kip_run(&db, &["import", schema.to_str().expect("path")]);
    assert_eq!(out.status.code(), Some(0));
    exec(
        &db,
        r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 2 } } }"#,
    );
    let then = newest(&db);
    exec(
        &db,
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: 5 } WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    exec(
        &db,
        r#"UPSERT { CONCEPT ?s { {type: "Symptom", name: "Fever"} } }"#,
    );

    let out = kip_run(&db, &["exec", "--as-of", &then, FIND]);
    assert_eq!(out.status.code(), Some(0));
    let past = json_of(&out);
    assert_eq!(past["result"], json!([2]), "{past:#}");
    assert_eq!(past["as_of"]["entry"], json!(then));
    assert_eq!(exec(&db, FIND)["result"], json!([5]));

    // Writes are refused as of a past time, and nothing changes.
    let out = kip_run(
        &db,
        &[
            "exec",
            "--as-of",
            &then,
            r#"UPSERT { CONCEPT ?s { {type: "Symptom", name: "Cough"} } }"#,
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let refused = json_of(&out);
    assert_eq!(refused["error"]["code"], json!("KIP_3004"), "{refused:#}");
    let cough = exec(
        &db,
        r#"FIND(?s) WHERE { ?s {type: "Symptom", name: "Cough"} }"#,
    );
    assert_eq!(cough["result"], json!([]));

    let out = kip_run(&db, &["diff", "--since", &then]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let diff = json_of(&out);
    let changed = diff["changed"].as_array().expect("changed");
    assert_eq!(changed.len(), 1, "{diff:#}");
    assert_eq!(changed[0]["name"], json!("Aspirin"));
    assert_eq!(changed[0]["type"], json!("Drug"));
    assert_eq!(changed[0]["before"]["attributes"]["risk_level"], json!(2));
    assert_eq!(changed[0]["after"]["attributes"]["risk_level"], json!(5));
    let added = diff["added"].as_array().expect("added");
    assert!(added.iter().any(|e| e["name"] == "Fever"), "{diff:#}");
    assert_eq!(diff["removed"], json!([]));

    // A time in the future is a clear error.
    let out = kip_run(&db, &["diff", "--since", "2999-01-01"]);
    assert_eq!(out.status.code(), Some(1));
    let err = json_of(&out);
    let message = err["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("future"), "{err:#}");
    let out = kip_run(&db, &["exec", "--as-of", "last tuesday", FIND]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json_of(&out)["error"]["code"], json!("KIP_1001"));
}

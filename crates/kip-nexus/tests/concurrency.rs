//! Transactions under concurrency: readers see a consistent snapshot while a
//! writer commits, concurrent writers lose nothing, and a reopened nexus
//! keeps everything.

use std::sync::{Arc, Barrier, mpsc};

use kip_nexus::{Access, Context, ExecuteKip, Nexus};
use serde_json::json;

const SCHEMA: &str = r#"UPSERT {
    CONCEPT { {type: "$ConceptType", name: "Note"} SET ATTRIBUTES { description: "A note" } }
    CONCEPT { {type: "$PropositionType", name: "follows"} SET ATTRIBUTES { description: "Order of notes", subject_types: ["Note"], object_types: ["Note"] } }
}"#;

fn count(nexus: &Nexus) -> serde_json::Value {
    nexus.execute(
        &ExecuteKip::command(r#"FIND(COUNT(?n)) WHERE { ?n {type: "Note"} }"#),
        &Context::default(),
    )["result"]
        .clone()
}

#[test]
fn a_reader_keeps_its_snapshot_while_a_writer_commits() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Arc::new(Nexus::open(dir.path()).expect("opens"));
    assert!(
        nexus
            .execute(&ExecuteKip::command(SCHEMA), &Context::default())
            .get("error")
            .is_none()
    );
    let (reading_tx, reading_rx) = mpsc::channel();
    let (written_tx, written_rx) = mpsc::channel::<()>();
    let writer = {
        let nexus = Arc::clone(&nexus);
        std::thread::spawn(move || {
            reading_rx.recv().expect("the reader started");
            let r = nexus.execute(
                &ExecuteKip::command(r#"UPSERT { CONCEPT { {type: "Note", name: "n1"} } }"#),
                &Context::default(),
            );
            assert!(r.get("error").is_none(), "{r}");
            written_tx.send(()).expect("signal");
        })
    };
    let seen_inside = nexus
        .read(|g| {
            let note = g.type_id("Note")?;
            reading_tx.send(()).expect("signal");
            // The writer commits while this snapshot is open; it must not block.
            written_rx.recv().expect("the writer committed");
            Ok(match note {
                Some(t) => g.count_type(t)?,
                None => 0,
            })
        })
        .expect("read");
    writer.join().expect("writer thread");
    assert_eq!(
        seen_inside, 0,
        "the open snapshot does not see the later commit"
    );
    assert_eq!(count(&nexus), json!(1));
}

#[test]
fn concurrent_writers_lose_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Arc::new(Nexus::open(dir.path()).expect("opens"));
    assert!(
        nexus
            .execute(&ExecuteKip::command(SCHEMA), &Context::default())
            .get("error")
            .is_none()
    );
    let barrier = Arc::new(Barrier::new(4));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let nexus = Arc::clone(&nexus);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                for i in 0..25 {
                    let text = format!(
                        r#"UPSERT {{ CONCEPT ?a {{ {{type: "Note", name: "t{t}-{i}"}} }} CONCEPT {{ {{type: "Note", name: "shared"}} SET PROPOSITIONS {{ ("follows", ?a) }} }} }}"#
                    );
                    let r = nexus.execute(&ExecuteKip::command(text), &Context::new(format!("thread {t}")));
                    assert!(r.get("error").is_none(), "{r}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("writer thread");
    }
    assert_eq!(count(&nexus), json!(101));
    let links = nexus.execute(
        &ExecuteKip::command(
            r#"FIND(COUNT(?l)) WHERE { ?l ({type: "Note", name: "shared"}, "follows", ?n) }"#,
        ),
        &Context::default(),
    );
    assert_eq!(links["result"], json!(100));
}

#[test]
fn two_handles_on_one_folder_see_each_others_writes_and_reopen_keeps_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = Nexus::open(dir.path()).expect("opens");
    let b = Nexus::open(dir.path()).expect("opens again");
    assert!(
        a.execute(&ExecuteKip::command(SCHEMA), &Context::default())
            .get("error")
            .is_none()
    );
    assert!(
        b.execute(
            &ExecuteKip::command(r#"UPSERT { CONCEPT { {type: "Note", name: "from b"} } }"#),
            &Context::default()
        )
        .get("error")
        .is_none()
    );
    assert_eq!(count(&a), json!(1));
    drop(a);
    drop(b);
    let c = Nexus::open(dir.path()).expect("reopens");
    assert_eq!(count(&c), json!(1));
}

#[test]
fn read_only_access_refuses_kml_and_runs_queries() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("opens");
    let read_only = Context::default().with_access(Access::ReadOnly);
    let refused = nexus.execute(&ExecuteKip::command(SCHEMA), &read_only);
    assert_eq!(refused["error"]["code"], "KIP_3004");
    assert_eq!(refused["error"]["data"]["line"], 1);
    let batch: ExecuteKip = serde_json::from_value(json!({"commands": ["DESCRIBE PRIMER", "DELETE CONCEPT ?x DETACH WHERE { ?x {type: \"Event\"} }"]})).expect("request");
    assert_eq!(
        nexus.execute(&batch, &read_only)["error"]["code"],
        "KIP_3004"
    );
    let primer = nexus.execute(&ExecuteKip::command("DESCRIBE PRIMER"), &read_only);
    assert_eq!(primer["result"]["identity"]["name"], "$self");
    assert_eq!(
        nexus.execute(
            &ExecuteKip::command(
                r#"FIND(COUNT(?t)) WHERE { ?t {type: "$ConceptType", name: "Note"} }"#
            ),
            &Context::default()
        )["result"],
        json!(0)
    );
}

#[test]
fn every_committed_write_is_in_the_change_log_with_its_origin() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("opens");
    let before = nexus.last_change_seq().expect("seq");
    let r = nexus.execute(&ExecuteKip::command(SCHEMA), &Context::new("tester"));
    assert!(r.get("error").is_none());
    // A no-op repeat and a query write nothing to the log.
    nexus.execute(&ExecuteKip::command(SCHEMA), &Context::default());
    nexus.execute(&ExecuteKip::command("DESCRIBE PRIMER"), &Context::default());
    let changes = nexus.changes_since(before).expect("changes").entries;
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].1["origin"], "tester");
    assert_eq!(changes[0].1["stats"]["concepts_created"], 2);
}

//! The cognitive trace across processes, proven against the `kip` binary
//! (BRIEF §7): two writer processes and a reader of the trace at the same
//! time (every write has exactly one entry; `seq` counts up per originator
//! with no gap, in every snapshot the reader sees), and `kill -9` during a
//! traced import (the write and its entries land together or not at all).

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{kip, kip_run};
use serde_json::{Value as Json, json};

/// Writes per writer process.
const WRITES: usize = 60;
/// Rounds of `kill -9`.
const KILLS: u64 = 6;
/// Concepts in the killed import's capsule.
const LARGE: u64 = 3000;

/// Every entry, oldest first.
fn entries(db: &Path) -> Vec<Json> {
    let out = kip_run(db, &["trace", "export"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn seq(e: &Json) -> u64 {
    e["seq"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("seq is a decimal string")
}

/// The entries' seqs per originator, in the order given, must be 1, 2, 3…
/// (oldest first) with no gap and no repeat.
#[track_caller]
fn assert_contiguous(entries: &[Json], what: &str) {
    let mut by: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for e in entries {
        by.entry(e["originator"].as_str().unwrap_or("").to_owned())
            .or_default()
            .push(seq(e));
    }
    for (originator, seqs) in by {
        let first = seqs[0];
        let expected: Vec<u64> = (first..first + seqs.len() as u64).collect();
        assert_eq!(seqs, expected, "{what}: seq of {originator} has a gap");
    }
}

/// A writer: one `kip exec` process sending `WRITES` UPSERTs as a batch
/// (each its own transaction) under `--originator name`.
fn writer(db: &Path, name: &str) -> Child {
    let commands: Vec<String> = (0..WRITES)
        .map(|i| {
            format!(
                "UPSERT {{ CONCEPT ?p {{ {{type: \"Person\", name: \"{name}-{i:03}\"}} SET ATTRIBUTES {{ person_class: \"Human\" }} }} }}"
            )
        })
        .collect();
    let request = json!({ "commands": commands }).to_string();
    let file = db.with_extension(format!("{name}.json"));
    std::fs::write(&file, request).expect("write the request");
    kip()
        .arg("--db")
        .arg(db)
        .arg("--originator")
        .arg(name)
        .arg("exec")
        .arg("--request")
        .arg(&file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kip exec starts")
}

#[test]
fn two_writer_processes_and_a_reader_see_one_entry_per_write_and_no_gap() {
    let work = tempfile::tempdir().expect("tempdir");
    let db = work.path().join("nexus");
    // Created and bootstrapped before the writers race.
    entries(&db);

    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let db = db.clone();
        let done = done.clone();
        std::thread::spawn(move || {
            let mut snapshots = 0;
            while !done.load(Ordering::SeqCst) || snapshots == 0 {
                let out = kip_run(&db, &["trace", "list", "--limit", "1000"]);
                assert_eq!(out.status.code(), Some(0));
                let mut page: Vec<Json> = String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .map(|l| serde_json::from_str(l).expect("a JSON line"))
                    .collect();
                page.reverse();
                assert_contiguous(&page, &format!("snapshot {snapshots}"));
                snapshots += 1;
            }
            snapshots
        })
    };
    let a = writer(&db, "writer-a");
    let b = writer(&db, "writer-b");
    for (name, child) in [("writer-a", a), ("writer-b", b)] {
        let out = child.wait_with_output().expect("the writer ends");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    done.store(true, Ordering::SeqCst);
    let snapshots = reader.join().expect("the reader ends");

    let all = entries(&db);
    assert_contiguous(&all, "the whole trace");
    for name in ["writer-a", "writer-b"] {
        let writes: Vec<&Json> = all
            .iter()
            .filter(|e| e["originator"] == name && e["type"] == "TRACE")
            .collect();
        assert_eq!(writes.len(), WRITES, "{name}: one entry per write");
        // Each write's entry names its own command and its one new concept.
        for (i, e) in writes.iter().enumerate() {
            let command = e["data"]["command"].as_str().unwrap_or("");
            assert!(
                command.contains(&format!("\"{name}-{i:03}\"")),
                "{name} write {i} has entry {e}"
            );
            assert_eq!(e["data"]["elements"].as_array().map(Vec::len), Some(1));
        }
        let seqs: Vec<u64> = all
            .iter()
            .filter(|e| e["originator"] == name)
            .map(seq)
            .collect();
        assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    }
    // Every change-log entry is one traced write.
    let out = kip_run(&db, &["check-store"]);
    let report: Json = serde_json::from_slice(&out.stdout).expect("a report");
    let traced_writes = all
        .iter()
        .filter(|e| e["type"] == "TRACE" && e["data"]["change_seq"].is_array())
        .count() as u64;
    assert_eq!(report["counts"]["changes"].as_u64(), Some(traced_writes));
    eprintln!("the reader took {snapshots} consistent snapshots");
}

/// One UPSERT of `n` Persons, each with a 200-byte note.
fn large_capsule(n: u64) -> String {
    let mut text = String::from("UPSERT {\n");
    for i in 0..n {
        text.push_str(&format!(
            "  CONCEPT ?p{i} {{ {{type: \"Person\", name: \"crash-{i:05}\"}} SET ATTRIBUTES {{ person_class: \"Human\", note: \"{}\" }} }}\n",
            "x".repeat(200)
        ));
    }
    text.push_str("}\n");
    text
}

fn persons(db: &Path) -> u64 {
    let out = kip_run(
        db,
        &["exec", "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} }"],
    );
    let v: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    v["result"].as_u64().expect("a count")
}

/// The import's entries: its TRACE entry (a write of Persons) and its
/// SPACE `SystemEvent` entry naming the file.
fn import_entries(db: &Path) -> (usize, usize) {
    let all = entries(db);
    let writes = all
        .iter()
        .filter(|e| {
            e["type"] == "TRACE"
                && e["data"]["command"]
                    .as_str()
                    .is_some_and(|c| c.contains("crash-00000"))
        })
        .count();
    let imports = all
        .iter()
        .filter(|e| e["type"] == "SPACE" && e["tag"] == json!(["SystemEvent"]))
        .count();
    (writes, imports)
}

fn kill_after(mut child: Child, delay: Duration) -> bool {
    let deadline = Instant::now() + delay;
    loop {
        if child.try_wait().expect("wait").is_some() {
            return false;
        }
        if Instant::now() >= deadline {
            // Only the child this test started, by its handle.
            let _ = child.kill();
            let _ = child.wait();
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn kill_9_during_a_traced_import_leaves_write_and_entry_both_or_neither() {
    let work = tempfile::tempdir().expect("tempdir");
    let file = work.path().join("large.kip");
    std::fs::write(&file, large_capsule(LARGE)).expect("write the capsule");
    let path = file.to_str().expect("path");

    let measure = work.path().join("measure");
    let base = persons(&measure);
    let started = Instant::now();
    assert_eq!(kip_run(&measure, &["import", path]).status.code(), Some(0));
    let span = started.elapsed();
    assert_eq!(persons(&measure), base + LARGE);
    assert_eq!(import_entries(&measure), (1, 1));

    let (mut whole, mut absent) = (0, 0);
    for round in 0..KILLS {
        let db = work.path().join(format!("round{round}"));
        persons(&db);
        let at = span.mul_f64((round as f64 + 0.5) / KILLS as f64 * 2.0);
        let child = kip()
            .arg("--db")
            .arg(&db)
            .arg("import")
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("kip import starts");
        let killed = kill_after(child, at);
        let n = persons(&db);
        let (writes, imports) = import_entries(&db);
        assert!(
            (n == base + LARGE && (writes, imports) == (1, 1))
                || (n == base && (writes, imports) == (0, 0)),
            "round {round} (killed: {killed}, at {at:?}): {n} Persons, {writes} write entries, {imports} import entries"
        );
        if n == base {
            absent += 1;
        } else {
            whole += 1;
        }
        assert_contiguous(&entries(&db), &format!("round {round}"));
    }
    eprintln!("kill -9 during a traced import: {whole} whole, {absent} absent (import ≈ {span:?})");
}

/// The originators of the entries that name `file` (the import's SPACE
/// entry) and of the write it points to (its TRACE entry).
fn import_originators(db: &Path, file: &str) -> Vec<(String, String)> {
    let all = entries(db);
    let space: Vec<&Json> = all
        .iter()
        .filter(|e| {
            e["data"]["file"]
                .as_str()
                .is_some_and(|f| f.ends_with(file))
        })
        .collect();
    let mut out = Vec::new();
    for s in space {
        out.push((
            s["type"].as_str().unwrap_or("").to_owned(),
            s["originator"].as_str().unwrap_or("").to_owned(),
        ));
        if let Some(write) = all.iter().find(|e| e["id"] == s["data"]["entry"]) {
            out.push((
                write["type"].as_str().unwrap_or("").to_owned(),
                write["originator"].as_str().unwrap_or("").to_owned(),
            ));
        }
    }
    out
}

fn traced_as(who: &str) -> Vec<(String, String)> {
    vec![
        ("SPACE".to_owned(), who.to_owned()),
        ("TRACE".to_owned(), who.to_owned()),
    ]
}

/// A capsule dropped into `dir`.
fn drop_capsule(dir: &Path, name: &str, person: &str) {
    std::fs::write(
        dir.join(name),
        format!("UPSERT {{ CONCEPT ?p {{ {{type: \"Person\", name: \"{person}\"}} SET ATTRIBUTES {{ person_class: \"Human\" }} }} }}\n"),
    )
    .expect("write the capsule");
}

/// BRIEF §7: the watched folder's imports are the `watcher`'s, in `kip
/// watch` and in `kip serve --capsules`; an explicit `--originator` wins.
#[test]
fn the_watched_folder_is_traced_as_watcher_unless_an_originator_is_given() {
    let work = tempfile::tempdir().expect("tempdir");
    for (name, originator) in [("plain", None), ("named", Some("alice"))] {
        let db = work.path().join(format!("{name}-db"));
        let folder = work.path().join(format!("{name}-capsules"));
        std::fs::create_dir_all(&folder).expect("folder");
        drop_capsule(&folder, "one.kip", "Watched One");
        let mut command = kip();
        command.arg("--db").arg(&db);
        if let Some(o) = originator {
            command.args(["--originator", o]);
        }
        let out = command
            .args(["watch", "--once"])
            .arg(&folder)
            .stdin(Stdio::null())
            .output()
            .expect("kip watch");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            import_originators(&db, "one.kip"),
            traced_as(originator.unwrap_or("watcher")),
            "kip watch, {name}"
        );
    }

    for (name, originator) in [("serve-plain", None), ("serve-named", Some("bob"))] {
        let db = work.path().join(format!("{name}-db"));
        let folder = work.path().join(format!("{name}-capsules"));
        std::fs::create_dir_all(&folder).expect("folder");
        drop_capsule(&folder, "two.kip", "Served Two");
        let dir = folder.to_str().expect("UTF-8 path");
        let mut args = vec!["--addr", "127.0.0.1:0", "--capsules", dir];
        if let Some(o) = originator {
            args.extend(["--originator", o]);
        }
        let server = common::Server::start(&db, &args);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let found = import_originators(&db, "two.kip");
            if found.len() == 2 {
                assert_eq!(
                    found,
                    traced_as(originator.unwrap_or("watcher")),
                    "kip serve --capsules, {name}"
                );
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{name}: two.kip was not imported within a minute: {found:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        drop(server);
    }
}

/// Issue 13 §7 on the command line: each bad request exits 1 with a coded
/// KIP error and leaves the trace as it was; a JSONL file with one bad line
/// names the line and imports nothing.
#[test]
fn bad_trace_input_on_the_command_line_is_a_coded_error_that_changes_nothing() {
    let work = tempfile::tempdir().expect("tempdir");
    let db = work.path().join("nexus");
    persons(&db);
    let out = kip_run(
        &db,
        &[
            "--originator",
            "a",
            "exec",
            "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"P\"} SET ATTRIBUTES { person_class: \"Human\" } } }",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let read = {
        kip_run(&db, &["exec", "DESCRIBE PRIMER"]);
        entries(&db)
            .into_iter()
            .rfind(|e| e["type"] == "TRACE" && e["originator"] == "cli")
            .expect("the read's entry")
    };
    let before = entries(&db);
    let good = serde_json::to_string(&before[0]).expect("json");
    let bad_file = work.path().join("bad.jsonl");
    std::fs::write(
        &bad_file,
        format!("{good}\n{good}\n{{\"originator\": \"x\"}}\n"),
    )
    .expect("write");
    let long = "x".repeat(64 * 1024 + 1);
    let read_id = read["id"].as_str().expect("id");
    let bad_file = bad_file.to_str().expect("path");
    let cases: [&[&str]; 9] = [
        &["trace", "add", "--type", "PONDER", "hmm"],
        &["trace", "add", "--type", "THINK", "  "],
        &["trace", "add", "--type", "THINK", &long],
        &[
            "trace",
            "add",
            "--type",
            "THINK",
            "--tag",
            "two words",
            "ok",
        ],
        &["trace", "add", "--type", "THINK", "--flag", "", "ok"],
        &["trace", "show", "T:999999"],
        &["trace", "flag", "T:999999", "--set", "Reviewed"],
        &["trace", "revert", read_id],
        &["trace", "import", bad_file],
    ];
    for args in cases {
        let out = kip_run(&db, args);
        let what = format!("{:?}", &args[..args.len().min(4)]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let answer: Json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{what}: not JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        let code = answer["error"]["code"].as_str().unwrap_or_default();
        assert!(code.starts_with("KIP_"), "{what}: {answer:#}");
        if args[1] == "import" {
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(message.starts_with("line 3"), "{what}: {message}");
        }
    }
    assert_eq!(entries(&db), before);
}

/// BRIEF §5's contract word for word: `kip trace add --type T --message M
/// [--tag G]… [--flag F]…`, `kip trace flag ID FLAG…` and `kip trace
/// export [--out FILE]` (JSON Lines
/// to the file, nothing on stdout); the message given without `--message`
/// still works, and both at once, or neither, is a usage error.
#[test]
fn trace_add_with_message_and_export_with_out_work_as_the_brief_writes_them() {
    let work = tempfile::tempdir().expect("tempdir");
    let db = work.path().join("nexus");
    persons(&db);
    let out = kip_run(
        &db,
        &[
            "--originator",
            "curator",
            "trace",
            "add",
            "--type",
            "SAY",
            "--message",
            "Checked the import",
            "--tag",
            "Annotation",
            "--tag",
            "DecisionRationale",
            "--flag",
            "Reviewed",
            "--flag",
            "Uncertain",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said: Json = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(said["type"], "SAY");
    assert_eq!(said["originator"], "curator");
    assert_eq!(said["message"], "Checked the import");
    assert_eq!(said["tag"], json!(["Annotation", "DecisionRationale"]));
    assert_eq!(said["flags"], json!(["Reviewed", "Uncertain"]));
    let older = kip_run(&db, &["trace", "add", "--type", "THINK", "the older form"]);
    assert_eq!(older.status.code(), Some(0));
    let thought: Json = serde_json::from_slice(&older.stdout).expect("JSON");
    assert_eq!(thought["message"], "the older form");
    let before = entries(&db);
    for args in [
        &["trace", "add", "--type", "THINK", "--message", "a", "b"][..],
        &["trace", "add", "--type", "THINK"][..],
    ] {
        let out = kip_run(&db, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    assert_eq!(entries(&db), before, "a usage error adds nothing");

    let file = work.path().join("trace.jsonl");
    let out = kip_run(
        &db,
        &["trace", "export", "--out", file.to_str().expect("path")],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "the entries went to the file");
    let written: Vec<Json> = std::fs::read_to_string(&file)
        .expect("the file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(written, entries(&db));
    assert_eq!(
        written.last().map(|e| &e["message"]),
        Some(&json!("the older form"))
    );
    // Filters apply to the file too; a folder that does not exist is an I/O error.
    let says = work.path().join("says.jsonl");
    let out = kip_run(
        &db,
        &[
            "trace",
            "export",
            "--type",
            "SAY",
            "--out",
            says.to_str().expect("path"),
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let text = std::fs::read_to_string(&says).expect("the file");
    assert_eq!(text.lines().count(), 1, "{text}");
    let nowhere = work.path().join("no/such/dir/t.jsonl");
    let out = kip_run(
        &db,
        &["trace", "export", "--out", nowhere.to_str().expect("path")],
    );
    assert_eq!(out.status.code(), Some(2));

    // `kip trace flag ID FLAG…`, as BRIEF §5 writes it.
    let id = said["id"].as_str().expect("an id");
    let out = kip_run(
        &db,
        &["trace", "flag", id, "Rejected", "--clear", "Uncertain"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let flagged: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(flagged["flags"], json!(["Reviewed", "Rejected"]));
}

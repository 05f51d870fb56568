//! One nexus, many processes: concurrent `kip exec` writers lose nothing
//! and corrupt nothing, and every write is logged once with its process.

use crate::common;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::Stdio;

use common::{kip, kip_run};
use serde_json::{Value as Json, json};

const WRITERS: usize = 4;
const PER_WRITER: usize = 100;

fn exec_json(db: &std::path::Path, command: &str) -> Json {
    let out = kip_run(db, &["exec", command]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn concurrent_writer_processes_lose_nothing_and_corrupt_nothing() {
    let db = tempfile::tempdir().expect("temp dir");
    exec_json(
        db.path(),
        r#"UPSERT { CONCEPT ?d { {type: "Domain", name: "Load"} SET ATTRIBUTES { description: "Written by concurrent processes." } } }"#,
    );
    let start = exec_json(db.path(), "DESCRIBE PRIMER"); // opens cleanly after setup
    assert!(start.get("result").is_some());
    let before = {
        let out = kip_run(
            db.path(),
            &["exec", "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} }"],
        );
        serde_json::from_slice::<Json>(&out.stdout).expect("JSON")["result"]
            .as_u64()
            .expect("count")
    };

    // Each writer runs a batch of single-concept UPSERTs: one write
    // transaction per command, so the writers' transactions interleave.
    let mut children = Vec::new();
    for w in 0..WRITERS {
        let commands: Vec<Json> = (0..PER_WRITER)
            .map(|i| {
                json!({
                    "command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: :name} SET ATTRIBUTES { person_class: \"Human\", writer: :w } SET PROPOSITIONS { (\"belongs_to_domain\", {type: \"Domain\", name: \"Load\"}) } } }",
                    "parameters": {"name": format!("w{w}-p{i:03}"), "w": w}
                })
            })
            .collect();
        let request = json!({ "commands": commands }).to_string();
        let mut child = kip()
            .arg("--db")
            .arg(db.path())
            .args(["exec", "--request", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kip exec starts");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(request.as_bytes())
            .expect("send the request");
        children.push(child);
    }
    let mut pids = Vec::new();
    for child in children {
        pids.push(child.id());
        let out = child.wait_with_output().expect("kip exec finishes");
        common::assert_exited_ok(&out);
        let response: Json = serde_json::from_slice(&out.stdout).expect("JSON");
        let results = response["result"].as_array().expect("a batch result");
        assert_eq!(results.len(), PER_WRITER);
        assert!(results.iter().all(|r| r.get("error").is_none()));
    }

    // Nothing lost: every concept and every link is there, through both
    // the type index and the proposition indexes.
    let total = WRITERS * PER_WRITER;
    let count = exec_json(db.path(), "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} }");
    assert_eq!(count["result"].as_u64(), Some(before + total as u64));
    let linked = exec_json(
        db.path(),
        "FIND(COUNT(?p)) WHERE { (?p, \"belongs_to_domain\", {type: \"Domain\", name: \"Load\"}) }",
    );
    assert_eq!(linked["result"].as_u64(), Some(total as u64));
    let per_writer = exec_json(
        db.path(),
        "FIND(?p.attributes.writer, COUNT(?p)) WHERE { (?p, \"belongs_to_domain\", {type: \"Domain\", name: \"Load\"}) } ORDER BY ?p.attributes.writer",
    );
    assert_eq!(
        per_writer["result"],
        json!([
            [0, 1, 2, 3],
            [PER_WRITER, PER_WRITER, PER_WRITER, PER_WRITER]
        ])
    );
    let names = exec_json(
        db.path(),
        "FIND(?p.name) WHERE { (?p, \"belongs_to_domain\", {type: \"Domain\", name: \"Load\"}) } LIMIT 1000",
    );
    let mut names: Vec<String> = names["result"]
        .as_array()
        .expect("names")
        .iter()
        .filter_map(|n| n.as_str().map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), total, "every name exactly once");

    // Every write logged exactly once, with a gapless sequence, marked with
    // the process that made it.
    let log = {
        let server = common::Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
        let (status, body) = server.post("/api/changes", &json!({"since": 0}));
        assert_eq!(status, 200);
        body
    };
    let changes = log["changes"].as_array().expect("changes");
    let writes: Vec<&Json> = changes
        .iter()
        .filter(|c| pids.contains(&(c["pid"].as_u64().unwrap_or(0) as u32)))
        .collect();
    assert_eq!(writes.len(), total);
    let mut by_pid: BTreeMap<u64, usize> = BTreeMap::new();
    for c in &writes {
        *by_pid.entry(c["pid"].as_u64().unwrap_or(0)).or_default() += 1;
        assert_eq!(c["origin"], "kip-cli");
        assert_eq!(c["stats"]["concepts_created"], 1);
        assert_eq!(c["stats"]["propositions_created"], 1);
    }
    assert_eq!(by_pid.len(), WRITERS);
    assert!(by_pid.values().all(|&n| n == PER_WRITER));
    let seqs: Vec<u64> = changes.iter().filter_map(|c| c["seq"].as_u64()).collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "a gapless log: {seqs:?}"
    );
    assert_eq!(log["last_seq"].as_u64(), seqs.last().copied());
}

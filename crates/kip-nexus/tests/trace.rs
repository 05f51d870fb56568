//! The cognitive trace (issue 13): every command's entry written with it,
//! before-images and revert, review flags, folded reads, retention, bad
//! input, export and import.

use std::path::PathBuf;

use kip_nexus::{
    Context, ExecuteKip, NewTraceEntry, Nexus, TraceEntry, TraceEntryType, TraceFilter,
    TraceSettings,
};
use proptest::prelude::*;
use serde_json::{Value as Json, json};

fn schema(nexus: &Nexus) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../capsules/examples");
    let text = std::fs::read_to_string(dir.join("10_medical_schema.kip")).expect("schema");
    let r = nexus.execute(&ExecuteKip::command(text), &Context::new("setup"));
    assert!(r.get("error").is_none(), "{r:#}");
}

fn fresh() -> (tempfile::TempDir, Nexus) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus opens");
    schema(&nexus);
    (dir, nexus)
}

#[track_caller]
fn run(nexus: &Nexus, who: &str, command: &str) -> Json {
    let ctx = Context::new("test").with_originator(who);
    let r = nexus.execute(&ExecuteKip::command(command), &ctx);
    assert!(r.get("error").is_none(), "{command}\n{r:#}");
    r["result"].clone()
}

fn list(nexus: &Nexus, filter: TraceFilter) -> Vec<TraceEntry> {
    nexus.trace_list(&filter).expect("list").entries
}

fn newest(nexus: &Nexus, who: &str) -> TraceEntry {
    let filter = TraceFilter {
        originator: Some(who.into()),
        kind: Some("TRACE".into()),
        limit: Some(1),
        ..TraceFilter::default()
    };
    list(nexus, filter).remove(0)
}

/// Every element of the graph, exactly (ids, attributes, metadata).
fn snapshot(nexus: &Nexus) -> Vec<Json> {
    nexus
        .read(|g| {
            let mut out = Vec::new();
            for c in g.all_concepts()? {
                out.push(g.element_json(kip_nexus::ElementId::Concept(c?.0))?);
            }
            for p in g.all_propositions()? {
                out.push(g.element_json(kip_nexus::ElementId::Proposition(p?.0))?);
            }
            Ok(out)
        })
        .expect("snapshot")
}

/// A snapshot without the engine's moving keys (`_version`,
/// `_updated_at`): a revert is a new mutation, so those move on (BRIEF §3)
/// while everything else returns exactly.
fn content(snapshot: &[Json]) -> Vec<Json> {
    let mut out = snapshot.to_vec();
    for e in &mut out {
        if let Some(m) = e["metadata"].as_object_mut() {
            m.remove("_version");
            m.remove("_updated_at");
        }
    }
    out
}

/// No element of `earlier` has a lower `_version` in `later`, and every
/// element whose content differs has a higher one.
#[track_caller]
fn versions_moved_forward(earlier: &[Json], later: &[Json]) {
    for e in earlier {
        let Some(l) = later.iter().find(|l| l["id"] == e["id"]) else {
            continue;
        };
        let (v0, v1) = (&e["metadata"]["_version"], &l["metadata"]["_version"]);
        assert!(
            v1.as_u64() >= v0.as_u64(),
            "{}: _version {v0} → {v1}",
            e["id"]
        );
        if content(std::slice::from_ref(e)) != content(std::slice::from_ref(l)) {
            assert!(
                v1.as_u64() > v0.as_u64(),
                "{}: changed at _version {v0}",
                e["id"]
            );
        }
    }
}

const ASPIRIN: &str = r#"UPSERT { CONCEPT ?h { {type: "Symptom", name: "Headache"} } CONCEPT ?d { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 2 } SET PROPOSITIONS { ("treats", ?h) } } }"#;

#[test]
fn a_write_has_one_entry_with_its_before_image_written_with_it() {
    let (_dir, nexus) = fresh();
    let before = nexus.last_change_seq().expect("ok");
    run(&nexus, "agent-a", ASPIRIN);
    let e = newest(&nexus, "agent-a");
    assert_eq!(e.kind, TraceEntryType::Trace);
    assert_eq!(e.seq, "1");
    assert!(
        e.message.starts_with("UPSERT: created 2 concepts, 1 link"),
        "{}",
        e.message
    );
    assert_eq!(e.tag, ["ToolOutput"]);
    let data = e.data.expect("data");
    assert_eq!(data["change_seq"], json!([before + 1]));
    assert_eq!(data["outcome"]["concepts_created"], json!(2));
    assert_eq!(data["changes"].as_array().map(Vec::len), Some(3));
    assert_eq!(data["elements"].as_array().map(Vec::len), Some(3));
    assert!(data["command"].as_str().expect("ok").contains("Aspirin"));
    // The second entry of the same originator is seq 2.
    run(
        &nexus,
        "agent-a",
        r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 3 } } }"#,
    );
    let e = newest(&nexus, "agent-a");
    assert_eq!(e.seq, "2");
    let change = &e.data.expect("ok")["changes"][0];
    assert_eq!(change["before"]["attributes"]["risk_level"], json!(2));
    assert_eq!(change["after"]["attributes"]["risk_level"], json!(3));
}

#[test]
fn a_failed_write_is_traced_as_an_error_and_changes_nothing() {
    let (_dir, nexus) = fresh();
    let r = nexus.execute(
        &ExecuteKip::command(r#"UPSERT { CONCEPT ?x { {type: "Nope", name: "x"} } }"#),
        &Context::new("t").with_originator("bob"),
    );
    assert!(r.get("error").is_some());
    let e = newest(&nexus, "bob");
    assert_eq!(e.tag, ["TraceError"]);
    assert_eq!(e.data.expect("ok")["outcome"]["error"], json!("KIP_2001"));
}

#[test]
fn reads_are_folded_into_one_entry_with_a_count() {
    let (_dir, nexus) = fresh();
    for _ in 0..5 {
        run(&nexus, "reader", r#"FIND(?d) WHERE { ?d {type: "Drug"} }"#);
    }
    run(
        &nexus,
        "reader",
        r#"FIND(?s) WHERE { ?s {type: "Symptom"} }"#,
    );
    // Nothing is written by reads themselves.
    let filter = TraceFilter {
        originator: Some("reader".into()),
        ..TraceFilter::default()
    };
    assert!(list(&nexus, filter.clone()).is_empty());
    nexus.flush_trace();
    let entries = list(&nexus, filter);
    assert_eq!(entries.len(), 2);
    let counts: Vec<Json> = entries
        .iter()
        .map(|e| e.data.clone().expect("ok")["count"].clone())
        .collect();
    assert!(
        counts.contains(&json!(5)) && counts.contains(&json!(1)),
        "{counts:?}"
    );
    assert!(entries.iter().any(|e| e.message == "FIND: read 5 times"));
}

#[test]
fn folded_reads_ride_along_with_the_next_write() {
    let (_dir, nexus) = fresh();
    run(&nexus, "reader", "DESCRIBE PRIMER");
    run(&nexus, "writer", ASPIRIN);
    let filter = TraceFilter {
        originator: Some("reader".into()),
        ..TraceFilter::default()
    };
    assert_eq!(list(&nexus, filter).len(), 1);
}

#[test]
fn revert_restores_exactly_and_a_revert_of_the_revert_reapplies() {
    let (_dir, nexus) = fresh();
    let initial = snapshot(&nexus);
    run(&nexus, "a", ASPIRIN);
    let created = newest(&nexus, "a");
    let after_create = snapshot(&nexus);
    // DETACH removes the link too; reverting it brings both back.
    run(
        &nexus,
        "a",
        r#"FIND(?d) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    run(
        &nexus,
        "a",
        r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    let deleted = newest(&nexus, "a");
    assert_eq!(
        deleted.data.as_ref().expect("ok")["outcome"]["propositions_deleted"],
        json!(1)
    );
    let before_revert = snapshot(&nexus);
    let r = nexus.revert(&deleted.id, "curator", false).expect("revert");
    assert_eq!(r.entry.originator, "curator");
    assert!(r.entry.tag.contains(&"SelfCorrection".to_owned()));
    assert_eq!(
        r.entry.data.as_ref().expect("ok")["reverts"],
        json!(deleted.id)
    );
    assert_eq!(content(&snapshot(&nexus)), content(&after_create));
    versions_moved_forward(&after_create, &snapshot(&nexus));
    versions_moved_forward(&before_revert, &snapshot(&nexus));
    // Revert the revert: deleted again.
    nexus
        .revert(&r.entry.id, "curator", false)
        .expect("re-apply");
    assert_ne!(snapshot(&nexus), after_create);
    // The creation is now followed by later writes: refused, naming one.
    let refused = nexus
        .revert(&created.id, "curator", false)
        .expect_err("refused");
    assert_eq!(refused.code.as_str(), "KIP_3005");
    assert!(refused.message.contains("T:"), "{}", refused.message);
    // Forced, it puts the graph back as it was before the creation.
    nexus.revert(&created.id, "curator", true).expect("forced");
    assert_eq!(snapshot(&nexus), initial);
}

/// Two Drugs sharing a Symptom: merging A into B repoints `A treats S1`
/// and folds `A treats S2` (a duplicate of `B treats S2`) into B's link; a
/// link about the repointed link keeps its id. The trace entry's
/// before-image names the old ends, so the revert puts every link back
/// where it was.
#[test]
fn reverting_a_merge_puts_back_the_source_and_the_old_ends_of_its_links() {
    let (_dir, nexus) = fresh();
    run(
        &nexus,
        "a",
        r#"UPSERT {
            CONCEPT ?s1 { {type: "Symptom", name: "S1"} }
            CONCEPT ?s2 { {type: "Symptom", name: "S2"} }
            CONCEPT ?a { {type: "Drug", name: "A"} SET ATTRIBUTES { risk_level: 1 } SET PROPOSITIONS { ("treats", ?s1) ("treats", ?s2) } }
            CONCEPT ?b { {type: "Drug", name: "B"} SET PROPOSITIONS { ("treats", ?s2) } }
        }"#,
    );
    let before = snapshot(&nexus);
    let merged = run(
        &nexus,
        "a",
        r#"MERGE CONCEPT ?a INTO ?b WHERE { ?a {type: "Drug", name: "A"} ?b {type: "Drug", name: "B"} }"#,
    );
    assert_eq!(merged["links_repointed"], json!(1), "{merged:#}");
    assert_eq!(merged["links_deduplicated"], json!(1), "{merged:#}");
    let entry = newest(&nexus, "a");
    let changes = &entry.data.as_ref().expect("data")["changes"];
    let moved = changes
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| {
            c["op"] == "updated" && c["kind"] == "proposition" && c["before"]["subject"].is_object()
        })
        .unwrap_or_else(|| panic!("no moved link in {changes:#}"));
    assert_eq!(moved["before"]["subject"]["name"], "A", "{moved:#}");
    assert_eq!(moved["after"]["subject"]["name"], "B", "{moved:#}");
    let after_merge = snapshot(&nexus);
    nexus.revert(&entry.id, "curator", false).expect("revert");
    assert_eq!(content(&snapshot(&nexus)), content(&before));
    versions_moved_forward(&after_merge, &snapshot(&nexus));
    assert!(nexus.check_store().expect("check").ok);
    // Reverting the revert merges again.
    let reverted = newest(&nexus, "curator");
    nexus
        .revert(&reverted.id, "curator", false)
        .expect("re-apply");
    let reverted_state = snapshot(&nexus);
    let again = content(&snapshot(&nexus));
    versions_moved_forward(&reverted_state, &snapshot(&nexus));
    let after_merge = content(&after_merge);
    let differ: Vec<(&Json, &Json)> = again
        .iter()
        .zip(&after_merge)
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(again.len(), after_merge.len(), "{:#?}", differ);
    assert!(differ.is_empty(), "{differ:#?}");
    assert!(nexus.check_store().expect("check").ok);
}

#[test]
fn revert_refuses_a_read_an_unknown_entry_and_a_bad_id() {
    let (_dir, nexus) = fresh();
    run(&nexus, "r", "DESCRIBE PRIMER");
    nexus.flush_trace();
    let read = newest(&nexus, "r");
    assert!(nexus.revert(&read.id, "curator", false).is_err());
    assert!(nexus.revert("T:999999", "curator", false).is_err());
    assert!(nexus.revert("C:1", "curator", false).is_err());
}

#[test]
fn flags_are_the_review_state_and_changing_them_is_traced() {
    let (_dir, nexus) = fresh();
    let ctx = Context::new("mcp").with_originator("claude").as_agent(true);
    let r = nexus.execute(&ExecuteKip::command(ASPIRIN), &ctx);
    assert!(r.get("error").is_none());
    let e = newest(&nexus, "claude");
    assert_eq!(e.flags, ["Unverified"]);
    let reasons = &e.data.as_ref().expect("data")["flag_reasons"];
    assert!(
        reasons["Unverified"]
            .as_str()
            .is_some_and(|r| r.contains("An agent wrote this")),
        "{reasons}"
    );
    let flagged = nexus
        .trace_flag(
            &e.id,
            &["Reviewed".into()],
            &["Unverified".into()],
            "curator",
        )
        .expect("flag");
    assert_eq!(flagged.flags, ["Reviewed"]);
    assert_eq!(nexus.trace_entry(&e.id).expect("ok").flags, ["Reviewed"]);
    let say = list(
        &nexus,
        TraceFilter {
            originator: Some("curator".into()),
            ..TraceFilter::default()
        },
    );
    assert_eq!(say[0].kind, TraceEntryType::Say);
    assert!(
        nexus
            .trace_flag(&e.id, &["not a word".into()], &[], "curator")
            .is_err()
    );
}

#[test]
fn low_confidence_is_uncertain_and_a_reason_is_a_linked_think_entry() {
    let (_dir, nexus) = fresh();
    let mut req = ExecuteKip::command(
        r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Maybe"} } } WITH METADATA { confidence: 0.3 }"#,
    );
    req.reason = Some("I think the user mentioned a drug called Maybe.".into());
    let r = nexus.execute(&req, &Context::new("mcp").with_originator("claude"));
    assert!(r.get("error").is_none(), "{r:#}");
    let e = newest(&nexus, "claude");
    assert_eq!(e.flags, ["Uncertain"]);
    // The flag says why: which element, at which confidence.
    let reason = &e.data.as_ref().expect("data")["flag_reasons"]["Uncertain"];
    let id = &e.data.as_ref().expect("data")["elements"][0];
    assert_eq!(
        reason.as_str(),
        Some(
            format!(
                "Written with confidence below 0.5: Drug Maybe ({}) at 0.3.",
                id.as_str().expect("id")
            )
            .as_str()
        ),
    );
    let think = list(
        &nexus,
        TraceFilter {
            kind: Some("THINK".into()),
            ..TraceFilter::default()
        },
    );
    assert_eq!(think[0].tag, ["DecisionRationale"]);
    assert_eq!(think[0].data.as_ref().expect("ok")["entry"], json!(e.id));
}

#[test]
fn bad_entries_get_a_coded_error_and_change_nothing() {
    let (_dir, nexus) = fresh();
    let last = nexus.last_trace_id().expect("ok");
    let good = NewTraceEntry {
        originator: Some("claude".into()),
        kind: "THINK".into(),
        message: "I plan to add Aspirin.".into(),
        tag: vec!["ActionPlan".into()],
        ..NewTraceEntry::default()
    };
    let bads = [
        NewTraceEntry {
            kind: "PONDER".into(),
            ..good.clone()
        },
        NewTraceEntry {
            kind: "TRACE".into(),
            ..good.clone()
        },
        NewTraceEntry {
            message: "  ".into(),
            ..good.clone()
        },
        NewTraceEntry {
            message: "x".repeat(64 * 1024 + 1),
            ..good.clone()
        },
        NewTraceEntry {
            tag: vec!["two words".into()],
            ..good.clone()
        },
        NewTraceEntry {
            flags: vec!["".into()],
            ..good.clone()
        },
        NewTraceEntry {
            originator: Some("".into()),
            ..good.clone()
        },
        NewTraceEntry {
            originator: None,
            ..good.clone()
        },
    ];
    for bad in &bads {
        let e = nexus.trace_add(bad).expect_err("refused");
        assert!(e.code.as_str().starts_with("KIP_"), "{e:?}");
    }
    assert_eq!(nexus.last_trace_id().expect("ok"), last);
    let added = nexus.trace_add(&good).expect("a good entry");
    assert_eq!(added.kind, TraceEntryType::Think);
    assert!(nexus.trace_entry("T:0").is_err());
    assert!(nexus.trace_entry("nonsense").is_err());
}

/// Issue 13 §7 beyond `trace_add`: unknown entry ids (show, flag,
/// revert), a revert of a read-only entry, malformed review flags, and
/// JSONL import lines that are not entries — each a coded error that
/// leaves the trace and the graph exactly as they were.
#[test]
fn bad_review_revert_and_import_requests_get_a_coded_error_and_change_nothing() {
    let (_dir, nexus) = fresh();
    run(&nexus, "a", ASPIRIN);
    let write = newest(&nexus, "a");
    run(&nexus, "r", "DESCRIBE PRIMER");
    nexus.flush_trace();
    let read = newest(&nexus, "r");
    let graph = snapshot(&nexus);
    let last = nexus.last_trace_id().expect("ok");
    let seq = nexus.last_change_seq().expect("ok");
    #[track_caller]
    fn coded(e: kip_lang::KipError, what: &str) -> kip_lang::KipError {
        assert!(e.code.as_str().starts_with("KIP_"), "{what}: {e:?}");
        assert!(!e.message.is_empty(), "{what}: {e:?}");
        e
    }
    coded(
        nexus
            .revert(&read.id, "curator", false)
            .expect_err("a read"),
        "revert of a read",
    );
    for unknown in ["T:999999", "T:0", "C:1", "nonsense", ""] {
        coded(nexus.trace_entry(unknown).expect_err("unknown"), unknown);
        coded(
            nexus.revert(unknown, "curator", true).expect_err("unknown"),
            unknown,
        );
        coded(
            nexus
                .trace_flag(unknown, &["Reviewed".into()], &[], "curator")
                .expect_err("unknown"),
            unknown,
        );
    }
    for flag in ["not a word", "", "Re:viewed", &"F".repeat(1000)] {
        coded(
            nexus
                .trace_flag(&write.id, &[flag.to_owned()], &[], "curator")
                .expect_err("a malformed flag"),
            flag,
        );
        coded(
            nexus
                .trace_flag(&write.id, &[], &[flag.to_owned()], "curator")
                .expect_err("a malformed flag to clear"),
            flag,
        );
    }
    let good = serde_json::to_string(&write).expect("json");
    for (bad, line) in [
        (format!("{good}\nnot JSON at all\n"), 2),
        (format!("[1, 2]\n{good}\n"), 1),
        (
            format!(
                "{good}\n\n{}\n",
                good.replace("\"type\":\"TRACE\"", "\"type\":\"PONDER\"")
            ),
            3,
        ),
        (
            format!(
                "{}\n",
                good.replace("\"originator\":\"a\"", "\"originator\":\"\"")
            ),
            1,
        ),
    ] {
        let e = coded(nexus.trace_import(&bad).expect_err("refused"), &bad);
        assert!(
            e.message.starts_with(&format!("line {line}")),
            "{bad}: {}",
            e.message
        );
    }
    assert_eq!(nexus.last_trace_id().expect("ok"), last);
    assert_eq!(nexus.last_change_seq().expect("ok"), seq);
    assert_eq!(nexus.trace_entry(&write.id).expect("ok").flags, write.flags);
    assert_eq!(snapshot(&nexus), graph);
}

#[test]
fn an_export_imports_back_whole_or_not_at_all() {
    let (_dir, nexus) = fresh();
    run(&nexus, "a", ASPIRIN);
    let all = list(
        &nexus,
        TraceFilter {
            limit: Some(1000),
            ..TraceFilter::default()
        },
    );
    let jsonl: String = all
        .iter()
        .map(|e| serde_json::to_string(e).expect("ok") + "\n")
        .collect();
    for line in jsonl.lines() {
        let v: Json = serde_json::from_str(line).expect("ok");
        for key in [
            "originator",
            "type",
            "seq",
            "message",
            "tag",
            "flags",
            "id",
            "at",
        ] {
            assert!(v.get(key).is_some(), "{key} missing in {line}");
        }
    }
    let other = tempfile::tempdir().expect("ok");
    let target = Nexus::open(other.path()).expect("ok");
    let before = target.last_trace_id().expect("ok");
    let broken = format!("{jsonl}{{\"originator\": \"x\"}}\n");
    let e = target.trace_import(&broken).expect_err("refused");
    assert!(
        e.message.starts_with(&format!("line {}", all.len() + 1)),
        "{}",
        e.message
    );
    assert_eq!(target.last_trace_id().expect("ok"), before);
    assert_eq!(target.trace_import(&jsonl).expect("ok"), all.len() as u64);
}

#[test]
fn retention_drops_the_oldest_and_says_how_many() {
    let (_dir, nexus) = fresh();
    nexus.set_trace_settings(TraceSettings {
        max_entries: 5,
        ..TraceSettings::default()
    });
    for i in 0..8 {
        run(
            &nexus,
            "a",
            &format!(r#"UPSERT {{ CONCEPT ?d {{ {{type: "Drug", name: "D{i}"}} }} }}"#),
        );
    }
    let all = list(&nexus, TraceFilter::default());
    assert!(all.len() <= 5, "{}", all.len());
    assert!(
        all.iter()
            .any(|e| e.kind == TraceEntryType::Space && e.message.starts_with("Retention dropped"))
    );
}

#[test]
fn genesis_and_schema_changes_are_space_entries() {
    let (_dir, nexus) = fresh();
    let space = list(
        &nexus,
        TraceFilter {
            kind: Some("SPACE".into()),
            ..TraceFilter::default()
        },
    );
    assert!(space.iter().any(|e| e.tag == ["Declare"]));
    assert!(space.iter().any(|e| e.tag == ["MetaDataChange"]));
}

#[test]
fn an_elements_history_lists_every_entry_that_touched_it() {
    let (_dir, nexus) = fresh();
    run(&nexus, "a", ASPIRIN);
    run(
        &nexus,
        "b",
        r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 4 } } }"#,
    );
    let id = run(
        &nexus,
        "a",
        r#"FIND(?d) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    )[0]["id"]
        .as_str()
        .expect("ok")
        .to_owned();
    let history = list(
        &nexus,
        TraceFilter {
            element: Some(id),
            ..TraceFilter::default()
        },
    );
    let who: Vec<&str> = history.iter().map(|e| e.originator.as_str()).collect();
    assert_eq!(who, ["b", "a"]);
}

#[test]
fn tracing_off_writes_no_entries() {
    let (_dir, nexus) = fresh();
    nexus.set_trace_settings(TraceSettings {
        enabled: false,
        ..TraceSettings::default()
    });
    let last = nexus.last_trace_id().expect("ok");
    run(&nexus, "a", ASPIRIN);
    assert_eq!(nexus.last_trace_id().expect("ok"), last);
}

#[derive(Clone, Debug)]
enum Op {
    Upsert(u8, u8),
    Link(u8, u8),
    Delete(u8),
    /// MERGE Drug D<a> INTO Drug D<b> (fails when either is missing).
    Merge(u8, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..4u8, 0..3u8).prop_map(|(d, r)| Op::Upsert(d, r)),
        (0..4u8, 0..3u8).prop_map(|(d, s)| Op::Link(d, s)),
        (0..4u8).prop_map(Op::Delete),
        (0..4u8, 0..4u8).prop_map(|(a, b)| Op::Merge(a, b)),
    ]
}

fn text(op: &Op) -> String {
    match op {
        Op::Upsert(d, r) => format!(
            r#"UPSERT {{ CONCEPT ?d {{ {{type: "Drug", name: "D{d}"}} SET ATTRIBUTES {{ risk_level: {r} }} }} }}"#
        ),
        Op::Link(d, s) => format!(
            r#"UPSERT {{ CONCEPT ?s {{ {{type: "Symptom", name: "S{s}"}} }} CONCEPT ?d {{ {{type: "Drug", name: "D{d}"}} SET PROPOSITIONS {{ ("treats", ?s) }} }} }}"#
        ),
        Op::Delete(d) => {
            format!(r#"DELETE CONCEPT ?d DETACH WHERE {{ ?d {{type: "Drug", name: "D{d}"}} }}"#)
        }
        Op::Merge(a, b) => format!(
            r#"MERGE CONCEPT ?a INTO ?b WHERE {{ ?a {{type: "Drug", name: "D{a}"}} ?b {{type: "Drug", name: "D{b}"}} }}"#
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A random sequence of UPSERT / DELETE / MERGE commands, then
    /// reverting their entries newest first, returns the graph to its
    /// initial state.
    #[test]
    fn reverting_every_write_newest_first_restores_the_graph(ops in prop::collection::vec(op(), 1..10)) {
        let (_dir, nexus) = fresh();
        let initial = snapshot(&nexus);
        let mut entries = Vec::new();
        for o in &ops {
            if let Op::Merge(..) = o {
                // A merge of a missing Drug fails and writes nothing.
                let ctx = Context::new("test").with_originator("prop");
                let r = nexus.execute(&ExecuteKip::command(text(o)), &ctx);
                if r.get("error").is_some() {
                    continue;
                }
            } else {
                run(&nexus, "prop", &text(o));
            }
            entries.push(newest(&nexus, "prop").id);
        }
        for id in entries.iter().rev() {
            let e = nexus.trace_entry(id).expect("ok");
            let changed = e.data.as_ref().and_then(|d| d["changes"].as_array()).is_some_and(|c| !c.is_empty());
            if changed {
                nexus.revert(id, "curator", false).unwrap_or_else(|e| panic!("{id}: {e:?}"));
            }
        }
        prop_assert_eq!(snapshot(&nexus), initial);
        prop_assert!(nexus.check_store().expect("check").ok);
    }
}

/// A bulk write (more than `BULK_CREATIONS` new elements in one command)
/// keeps its creations as id ranges: one entry, no per-element change,
/// and still findable by element, revertible and consistent.
#[test]
fn a_bulk_writes_creations_are_kept_as_ranges_and_revert_whole() {
    let (_dir, nexus) = fresh();
    let initial = snapshot(&nexus);
    let mut text = String::from("UPSERT {\n");
    for i in 0..1_500 {
        text.push_str(&format!(
            "CONCEPT ?d{i} {{ {{type: \"Drug\", name: \"Bulk {i}\"}} }}\n"
        ));
    }
    text.push_str(r#"CONCEPT ?s { {type: "Symptom", name: "Bulk ache"} SET ATTRIBUTES { description: "x" } }"#);
    for i in 0..1_200 {
        text.push_str(&format!("CONCEPT ?l{i} {{ {{type: \"Drug\", name: \"Bulk {i}\"}} SET PROPOSITIONS {{ (\"treats\", ?s) }} }}\n"));
    }
    // Created, then updated and deleted within the same command.
    text.push_str(
        r#"CONCEPT ?u { {type: "Drug", name: "Bulk 7"} SET ATTRIBUTES { risk_level: 1 } }"#,
    );
    text.push('}');
    run(&nexus, "importer", &text);
    nexus.execute(
        &ExecuteKip::command(
            r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug", name: "Bulk 9"} }"#,
        ),
        &Context::new("test").with_originator("other"),
    );
    let e = newest(&nexus, "importer");
    let data = e.data.clone().expect("data");
    assert!(
        e.message
            .starts_with("UPSERT: created 1501 concepts, 1200 links"),
        "{}",
        e.message
    );
    let created = data["created"].as_array().expect("ranges");
    assert_eq!(created.len(), 2, "{created:?}");
    assert!(
        data["changes"].as_array().is_some_and(Vec::is_empty),
        "{:?}",
        data["changes"]
    );
    // The middle of a range finds the entry that created it.
    let first: kip_nexus::ElementId = created[1][0].as_str().expect("id").parse().expect("id");
    let kip_nexus::ElementId::Proposition(p) = first else {
        panic!("{created:?}")
    };
    let middle = kip_nexus::ElementId::Proposition(kip_nexus::PropositionId(p.0 + 600));
    let touching = list(
        &nexus,
        TraceFilter {
            element: Some(middle.to_string()),
            ..TraceFilter::default()
        },
    );
    assert_eq!(touching.iter().map(|t| &t.id).collect::<Vec<_>>(), [&e.id]);
    assert!(nexus.check_store().expect("check").ok);
    // A later write touched Bulk 9: refused, then forced.
    assert!(nexus.revert(&e.id, "curator", false).is_err());
    let deleted = newest(&nexus, "other");
    nexus
        .revert(&deleted.id, "curator", false)
        .expect("revert the delete");
    nexus
        .revert(&e.id, "curator", false)
        .expect("revert the import");
    assert_eq!(snapshot(&nexus), initial);
    assert!(nexus.check_store().expect("check").ok);
}

//! Group writes (`Nexus::run_group`, what the pipelined capsule import uses
//! for runs of additive files): several texts in one transaction, their
//! links written in one batch, each text still with its own change-log
//! entry, its own TRACE entry and its own before-image.

mod common;

use std::collections::BTreeMap;

use common::fixture;
use kip_nexus::{GroupText, Nexus, Origin, RunOptions, TraceFilter};
use serde_json::{Value as Json, json};

/// Links among the medical example's concepts, a new concept, and one link
/// of the first text repeated with new metadata by the second.
const TEXTS: [&str; 3] = [
    r#"UPSERT {
  CONCEPT { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Brain Fog"}) ("has_side_effect", {type: "Symptom", name: "Headache"}) } }
  CONCEPT { {type: "Symptom", name: "Dizziness"} SET ATTRIBUTES { description: "A spinning feeling." } }
  CONCEPT { {type: "Drug", name: "Ibuprofen"} SET PROPOSITIONS { ("has_side_effect", {type: "Symptom", name: "Dizziness"}) } }
}"#,
    r#"UPSERT {
  CONCEPT { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Brain Fog"}) } }
  CONCEPT { {type: "Drug", name: "Cognizine"} SET PROPOSITIONS { ("has_side_effect", {type: "Symptom", name: "Dizziness"}) } }
} WITH METADATA { source: "second file" }"#,
    r#"UPSERT { CONCEPT { {type: "Drug", name: "Ibuprofen"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Brain Fog"}) } } }
UPSERT { CONCEPT { {type: "Drug", name: "Cognizine"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headache"}) } } }"#,
];

fn bound(text: &str) -> Vec<kip_lang::ast::Command> {
    let commands = kip_lang::parse(text).expect("parses");
    kip_lang::bind(text, commands, &serde_json::Map::new()).expect("binds")
}

fn options(i: usize) -> RunOptions {
    let mut options = RunOptions::new(Origin::new("test"));
    options.trace.import = Some(format!("file-{i}.kip"));
    options
}

fn separately(nexus: &Nexus, texts: &[&str]) {
    for (i, text) in texts.iter().enumerate() {
        nexus.run(text, &bound(text), &options(i)).expect("runs");
    }
}

fn grouped(nexus: &Nexus, texts: &[&str]) -> kip_nexus::Result<Vec<kip_nexus::Stats>> {
    let mut asked = Vec::new();
    let out = nexus.run_group(&mut |n, pending| {
        asked.push((n, pending));
        texts.get(n).map(|text| GroupText {
            text: (*text).to_owned(),
            commands: bound(text),
            options: options(n),
        })
    });
    // Texts are asked for in order, with the links not written yet.
    let numbers: Vec<usize> = asked.iter().map(|a| a.0).collect();
    assert_eq!(
        numbers,
        (0..=texts.len().min(numbers.len() - 1)).collect::<Vec<_>>()
    );
    out
}

/// Every link by id: its ends, predicate and metadata, timestamps left out
/// (the two writes may straddle a second), `_version` kept.
fn links(nexus: &Nexus) -> BTreeMap<String, String> {
    nexus
        .read(|g| {
            let mut out = BTreeMap::new();
            for entry in g.all_propositions()? {
                let (id, rec) = entry?;
                let meta: serde_json::Map<String, Json> = rec
                    .metadata
                    .iter()
                    .filter(|(k, _)| !k.ends_with("_at"))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                out.insert(
                    id.to_string(),
                    format!(
                        "{:?} {} {:?} {}",
                        rec.subject,
                        rec.predicate,
                        rec.object,
                        Json::Object(meta)
                    ),
                );
            }
            Ok(out)
        })
        .expect("read")
}

/// The imports' TRACE entries: file, outcome, created ranges, changes.
fn traced(nexus: &Nexus) -> Vec<Json> {
    let filter = TraceFilter {
        originator: Some("test".into()),
        ..TraceFilter::default()
    };
    let mut entries = nexus.trace_list(&filter).expect("list").entries;
    entries.sort_by_key(|e| e.seq.parse::<u64>().unwrap_or(0));
    entries
        .iter()
        .map(|e| {
            let data = e.data.clone().unwrap_or_default();
            json!({
                "message": e.message,
                "tag": e.tag,
                "outcome": data["outcome"],
                "created": data["created"],
                "changes": data["changes"].as_array().map_or(0, Vec::len),
            })
        })
        .collect()
}

#[test]
fn a_group_write_leaves_what_separate_writes_leave() {
    let (_a, alone) = fixture();
    let (_b, group) = fixture();
    let seq = group.last_change_seq().expect("seq");
    separately(&alone, &TEXTS);
    let stats = grouped(&group, &TEXTS).expect("the group commits");
    assert_eq!(stats.len(), 3);
    assert_eq!(stats[0].propositions_created, 3);
    // The repeated link is updated by the second text, as it would be
    // had the first been committed on its own.
    assert_eq!(stats[1].propositions_updated, 1);
    assert_eq!(links(&group), links(&alone));
    assert!(
        links(&group)
            .values()
            .any(|l| l.contains(r#""_version":2"#) && l.contains("second file")),
        "{:#?}",
        links(&group)
    );
    let trace = traced(&group);
    // Each text's TRACE entry and its "Imported" event.
    assert_eq!(trace.len(), 6, "{trace:#?}");
    assert_eq!(trace, traced(&alone));
    // One change-log entry per text, with its counts.
    let log = group.changes_since(seq).expect("changes");
    assert_eq!(log.entries.len(), 3);
    for ((_, entry), s) in log.entries.iter().zip(&stats) {
        assert_eq!(entry["stats"], json!(s));
    }
}

#[test]
fn a_grouped_text_is_reverted_on_its_own() {
    let (_a, first_only) = fixture();
    let (_b, group) = fixture();
    separately(&first_only, &TEXTS[..1]);
    grouped(&group, &[TEXTS[0], TEXTS[2]]).expect("the group commits");
    let filter = TraceFilter {
        originator: Some("test".into()),
        ..TraceFilter::default()
    };
    let mut entries = group.trace_list(&filter).expect("list").entries;
    entries.sort_by_key(|e| e.seq.parse::<u64>().unwrap_or(0));
    let last = entries
        .iter()
        .rev()
        .find(|e| e.data.as_ref().is_some_and(|d| !d["outcome"].is_null()))
        .expect("the second text's entry");
    group.revert(&last.id, "test", false).expect("reverts");
    let names = |l: &BTreeMap<String, String>| {
        l.values()
            .map(|v| v.split(" {").next().unwrap_or("").to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&links(&group)), names(&links(&first_only)));
}

#[test]
fn a_group_with_anything_but_upserts_writes_nothing() {
    let (_dir, nexus) = fixture();
    let seq = nexus.last_change_seq().expect("seq");
    let before = links(&nexus);
    let delete =
        r#"DELETE PROPOSITIONS ?l WHERE { ?l ({type: "Drug", name: "Aspirin"}, "treats", ?s) }"#;
    grouped(&nexus, &[TEXTS[0], delete]).expect_err("refused");
    assert_eq!(nexus.last_change_seq().expect("seq"), seq);
    assert_eq!(links(&nexus), before);
}

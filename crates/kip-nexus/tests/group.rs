//! Group writes (`Bulk::group`, what the pipelined capsule import uses
//! for runs of additive files): several texts in one transaction, their
//! links written in one batch, each text still with its own change-log
//! entry, its own TRACE entry and its own before-image.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::fixture;
use kip_nexus::bulk::{GroupStep, GroupText, KnownConcepts};
use kip_nexus::{ElementId, Nexus, Origin, RunOptions, TraceFilter};
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
    grouped_pausing(nexus, texts, false)
}

/// [`grouped`]; `pausing`: before each text after the first, the next text
/// is not ready yet, twice (a pipelined import whose reader is still
/// checking), so the group writes the links it has decided so far, then
/// their search documents.
fn grouped_pausing(
    nexus: &Nexus,
    texts: &[&str],
    pausing: bool,
) -> kip_nexus::Result<Vec<kip_nexus::Stats>> {
    let mut asked = Vec::new();
    let mut paused = (0, 0);
    let out = nexus.bulk().group(&mut |n, pending| {
        if pausing && paused < (n, 2) && n > 0 {
            // The group had decided links, and writes them now, then
            // their documents.
            assert!(pending > 0);
            paused = (n, if paused.0 == n { 2 } else { 1 });
            return Some(GroupStep::NotReady);
        }
        asked.push((n, pending));
        texts.get(n).map(|text| {
            GroupStep::Text(Box::new(GroupText {
                text: (*text).to_owned(),
                commands: bound(text),
                options: options(n),
                retire: None,
            }))
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
    for pausing in [false, true] {
        a_group_leaves_what_separate_writes_leave(pausing);
    }
}

/// `pausing`: see [`grouped_pausing`].
fn a_group_leaves_what_separate_writes_leave(pausing: bool) {
    let (_a, alone) = fixture();
    let (_b, group) = fixture();
    let seq = group.last_change_seq().expect("seq");
    separately(&alone, &TEXTS);
    let stats = grouped_pausing(&group, &TEXTS, pausing).expect("the group commits");
    // Every link and concept indexed for SEARCH, as after separate writes.
    let violations = group.check_store().expect("check").violations;
    assert!(violations.is_empty(), "{violations:#?}");
    let search = |n: &Nexus| {
        let text = r#"SEARCH PROPOSITION "dizziness" LIMIT 10"#;
        let out = n
            .run(text, &bound(text), &RunOptions::new(Origin::new("test")))
            .expect("searches");
        // Without the engine's timestamps (`_created_at`, `_updated_at`):
        // the two nexuses are written moments apart, maybe in different
        // seconds, as `links` leaves them out too.
        let mut hits: Vec<String> = (out.result.as_array().into_iter().flatten())
            .map(|h| {
                let mut h = h.clone();
                if let Some(meta) = h.get_mut("metadata").and_then(Json::as_object_mut) {
                    meta.retain(|k, _| !k.ends_with("_at"));
                }
                h.to_string()
            })
            .collect();
        hits.sort();
        hits
    };
    assert!(!search(&group).is_empty());
    assert_eq!(search(&group), search(&alone));
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

/// A link of the fixture's drugs written before the group, repeated by the
/// group's first text, and a new link the first text creates and the
/// second repeats (so the group writes it before its end).
const BEFORE: &str = r#"UPSERT { CONCEPT { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Brain Fog"}) } } }"#;
const CHECKED: [&str; 2] = [
    r#"UPSERT {
  CONCEPT { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Brain Fog"}) ("has_side_effect", {type: "Symptom", name: "Headache"}) } }
} WITH METADATA { source: "first file" }"#,
    r#"UPSERT {
  CONCEPT { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("has_side_effect", {type: "Symptom", name: "Headache"}) } }
} WITH METADATA { source: "second file" }"#,
];

/// The key of `(drug, predicate, symptom)`.
fn link_key(nexus: &Nexus, drug: &str, predicate: &str, symptom: &str) -> kip_nexus::bulk::LinkKey {
    nexus
        .read(|g| {
            let s = g.find_concept_by_names("Drug", drug)?.expect("drug");
            let o = g
                .find_concept_by_names("Symptom", symptom)?
                .expect("symptom");
            let p = g.predicate_id(predicate)?.expect("predicate");
            Ok((ElementId::Concept(s), p, ElementId::Concept(o)))
        })
        .expect("read")
}

/// [`grouped`], each text with links checked ahead: text `n` claims that
/// of its links only `stored[n]` were stored at change `checked_at`.
fn grouped_checked(
    nexus: &Nexus,
    texts: &[&str],
    checked_at: u64,
    stored: &[Vec<kip_nexus::bulk::LinkKey>],
) -> kip_nexus::Result<Vec<kip_nexus::Stats>> {
    grouped_checked_pausing(nexus, texts, checked_at, stored, false)
}

/// [`grouped_checked`]; `pausing`: see [`grouped_pausing`].
fn grouped_checked_pausing(
    nexus: &Nexus,
    texts: &[&str],
    checked_at: u64,
    stored: &[Vec<kip_nexus::bulk::LinkKey>],
    pausing: bool,
) -> kip_nexus::Result<Vec<kip_nexus::Stats>> {
    let seq = nexus.last_change_seq().expect("seq");
    let mut paused = (0, 0);
    nexus.bulk().group(&mut |n, _| {
        if pausing && paused < (n, 2) && n > 0 {
            paused = (n, if paused.0 == n { 2 } else { 1 });
            return Some(GroupStep::NotReady);
        }
        let text = texts.get(n)?;
        let mut known = KnownConcepts::default();
        known.set_links(checked_at, stored[n].iter().copied());
        Some(GroupStep::Text(Box::new(GroupText {
            text: (*text).to_owned(),
            commands: bound(text),
            options: options(n).with_known(Arc::new(known), seq),
            retire: None,
        })))
    })
}

/// Links checked ahead spare the group its look-ups, and change nothing
/// it writes: a stored link is still updated, one the group wrote before
/// its end (a repeat, or while the next text was not ready) is still
/// found.
#[test]
fn links_checked_ahead_leave_what_separate_writes_leave() {
    for pausing in [false, true] {
        links_checked_ahead_leave_what_alone_leaves(pausing);
    }
}

/// `pausing`: see [`grouped_pausing`].
fn links_checked_ahead_leave_what_alone_leaves(pausing: bool) {
    let (_a, alone) = fixture();
    let (_b, group) = fixture();
    separately(&alone, &[BEFORE]);
    separately(&group, &[BEFORE]);
    separately(&alone, &CHECKED);
    let at = group.last_change_seq().expect("seq");
    let stored = link_key(&group, "Aspirin", "treats", "Brain Fog");
    let stats = grouped_checked_pausing(&group, &CHECKED, at, &[vec![stored], vec![]], pausing)
        .expect("the group commits");
    assert_eq!(stats[0].propositions_created, 1);
    assert_eq!(stats[0].propositions_updated, 1);
    assert_eq!(stats[1].propositions_updated, 1);
    assert_eq!(links(&group), links(&alone));
}

/// A claim that a stored link was absent cannot store it twice: the group
/// write fails and leaves the nexus as it was.
#[test]
fn a_wrong_claim_of_absence_fails_the_group_and_writes_nothing() {
    let (_dir, nexus) = fixture();
    separately(&nexus, &[BEFORE]);
    let at = nexus.last_change_seq().expect("seq");
    let before = links(&nexus);
    let err = grouped_checked(&nexus, &CHECKED, at, &[vec![], vec![]])
        .expect_err("the stored link is not created again");
    assert!(err.message.contains("exists"), "{err:?}");
    assert_eq!(nexus.last_change_seq().expect("seq"), at);
    assert_eq!(links(&nexus), before);
}

/// Links checked in an older state are looked up again: a claim made
/// before the link was written does not hold.
#[test]
fn links_checked_before_another_write_are_looked_up_again() {
    let (_a, alone) = fixture();
    let (_b, group) = fixture();
    let at = group.last_change_seq().expect("seq");
    separately(&alone, &[BEFORE]);
    separately(&group, &[BEFORE]);
    separately(&alone, &CHECKED);
    // Checked before `BEFORE` was written, when nothing was stored.
    grouped_checked(&group, &CHECKED, at, &[vec![], vec![]]).expect("the group commits");
    assert_eq!(links(&group), links(&alone));
}

/// A check made before the last group writes still spares the look-ups of
/// the links it found absent, and a link one of those groups created is
/// still found (and updated, not created again).
#[test]
fn links_checked_before_the_last_group_are_found_if_that_group_wrote_them() {
    let (_a, alone) = fixture();
    let (_b, group) = fixture();
    let at = group.last_change_seq().expect("seq");
    separately(&alone, &CHECKED);
    // Both texts checked before either was written, one group each.
    let first = grouped_checked(&group, &CHECKED[..1], at, &[vec![]]).expect("first group");
    assert_eq!(first[0].propositions_created, 2);
    let second = grouped_checked(&group, &CHECKED[1..], at, &[vec![]]).expect("second group");
    assert_eq!(second[0].propositions_updated, 1);
    assert_eq!(links(&group), links(&alone));
}

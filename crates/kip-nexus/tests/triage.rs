//! Decay triage (issue 31 §5): the lists find what they should, each bulk
//! action (pin, renew, archive, delete) is one traced write whose dry run
//! changes nothing, and reverting its trace entry brings the memory back
//! exactly — checked one by one and by a property test over random
//! memories and random actions reverted in random order.

use crate::common::elements as snapshot;
use std::collections::BTreeMap;

use kip_nexus::triage::{TriageList, TriageQuery};
use kip_nexus::triage_apply::{TriageAction, TriageApply, TriageOutcome};
use kip_nexus::{Context, ExecuteKip, Nexus};
use proptest::prelude::*;
use serde_json::{Value as Json, json};

const SCHEMA: &str = r#"
UPSERT {
    CONCEPT ?n { {type: "$ConceptType", name: "Note"} SET ATTRIBUTES { description: "A note." } }
    CONCEPT ?r { {type: "$PropositionType", name: "refers_to"} SET ATTRIBUTES { description: "Refers to.", subject_types: ["*"], object_types: ["*"] } }
    CONCEPT ?w { {type: "Domain", name: "Work"} SET ATTRIBUTES { description: "Work notes." } }
}
"#;

const MEMORY: &str = r#"
UPSERT {
    CONCEPT ?a { {type: "Note", name: "Expired"} SET ATTRIBUTES { text: "a" } SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Work"}) } }
        WITH METADATA { expires_at: "2000-01-01T00:00:00Z", memory_tier: "short-term" }
    CONCEPT ?b { {type: "Note", name: "Fading"} SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Work"}) } }
        WITH METADATA { memory_strength: 0.1 }
    CONCEPT ?c { {type: "Note", name: "Fresh"} SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "Work"}), ("refers_to", ?a) } }
        WITH METADATA { memory_strength: 0.9, expires_at: "2999-01-01T00:00:00Z" }
    CONCEPT ?d { {type: "Note", name: "Pinned"} }
        WITH METADATA { memory_strength: 0.05, pinned: true }
}
"#;

fn exec(nexus: &Nexus, text: &str) -> Json {
    let r = nexus.execute(&ExecuteKip::command(text), &Context::new("test"));
    assert!(r.get("error").is_none(), "{text}\n{r:#}");
    r["result"].clone()
}

fn memory() -> (tempfile::TempDir, Nexus) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus");
    exec(&nexus, SCHEMA);
    exec(&nexus, MEMORY);
    (dir, nexus)
}

fn id_of(nexus: &Nexus, name: &str) -> String {
    let r = exec(
        nexus,
        &format!("FIND(?x.id) WHERE {{ ?x {{type: \"Note\", name: \"{name}\"}} }}"),
    );
    r[0].as_str().expect("an id").to_owned()
}

fn list(nexus: &Nexus, list: TriageList) -> Vec<String> {
    let q = TriageQuery {
        list,
        limit: Some(100),
        ..TriageQuery::default()
    };
    let page = nexus.triage(&q).expect("list");
    assert_eq!(page.total as usize, page.items.len());
    page.items.into_iter().map(|i| i.name).collect()
}

fn apply(nexus: &Nexus, action: TriageAction, ids: &[String], dry_run: bool) -> TriageOutcome {
    let r = TriageApply {
        action,
        ids: ids.to_vec(),
        all_of: None,
        strength: None,
        expires_in_days: None,
        dry_run: Some(dry_run),
        message: None,
    };
    nexus
        .triage_apply(&r, &Context::new("test").with_originator("curator"))
        .expect("apply")
}

/// The graph as a revert must restore it: metadata without the engine's
/// reserved `_` keys.
fn lasting(snap: &BTreeMap<String, Json>) -> BTreeMap<String, Json> {
    snap.iter()
        .map(|(id, e)| {
            let mut e = e.clone();
            if let Some(m) = e["metadata"].as_object_mut() {
                m.retain(|k, _| !k.starts_with('_'));
            }
            (id.clone(), e)
        })
        .collect()
}

#[test]
fn the_lists_find_expired_fading_and_untouched_memories_but_not_pinned_ones() {
    let (_d, nexus) = memory();
    // The Note's expiry cascades to its `belongs_to_domain` link, which the
    // lists leave out; its own link does not carry it.
    assert_eq!(list(&nexus, TriageList::Expired), ["Expired"]);
    assert_eq!(list(&nexus, TriageList::Fading), ["Fading"]);
    let q = TriageQuery {
        list: TriageList::Fading,
        below: Some(0.95),
        include_pinned: Some(true),
        ..TriageQuery::default()
    };
    let names: Vec<String> = (nexus.triage(&q).expect("list").items)
        .into_iter()
        .map(|i| i.name)
        .collect();
    // A concept block's metadata is its links' default (RC11 §2.10): Fresh's
    // own link carries its strength.
    assert_eq!(
        names,
        ["Fading", "Fresh", "Pinned", "Fresh —refers_to→ Expired"]
    );
    // Written just now: nothing is untouched for 90 days; with 0 days,
    // everything written before this second is.
    assert!(list(&nexus, TriageList::Untouched).is_empty());
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let q = TriageQuery {
        list: TriageList::Untouched,
        days: Some(0),
        limit: Some(2),
        offset: Some(1),
        ..TriageQuery::default()
    };
    let page = nexus.triage(&q).expect("list");
    assert_eq!(page.items.len(), 2, "a page of two");
    assert!(page.total >= 4, "{page:#?}");
    let link = (nexus
        .triage(&TriageQuery {
            limit: Some(1000),
            ..q
        })
        .expect("list")
        .items)
        .into_iter()
        .find(|i| i.kind == "proposition")
        .expect("the refers_to link is untouched too");
    assert_eq!(link.type_name, "refers_to");
    assert_eq!(link.name, "Fresh —refers_to→ Expired");
    let bad = TriageQuery {
        list: TriageList::Fading,
        below: Some(2.0),
        ..TriageQuery::default()
    };
    assert_eq!(
        nexus.triage(&bad).expect_err("refused").code.as_str(),
        "KIP_1001"
    );
}

#[test]
fn a_dry_run_counts_and_shows_the_change_and_changes_nothing() {
    let (_d, nexus) = memory();
    let ids = [id_of(&nexus, "Expired"), id_of(&nexus, "Fading")];
    let before = snapshot(&nexus);
    let last = nexus.last_trace_id().expect("trace");
    let preview = apply(&nexus, TriageAction::Archive, &ids, true);
    assert!(preview.dry_run && preview.trace_entry.is_none());
    assert_eq!(preview.targets, 2);
    // Each: its Work link deleted, an Archived link created, itself updated.
    assert_eq!(preview.counts.concepts_updated, 2);
    assert_eq!(preview.counts.propositions_deleted, 2);
    assert_eq!(preview.counts.propositions_created, 2);
    assert_eq!(preview.changes_total, 6);
    let archived = preview
        .changes
        .iter()
        .find(|c| c.id == ids[0])
        .and_then(|c| c.after.as_ref())
        .expect("the concept's after-image");
    assert_eq!(archived.metadata["archived_by"], json!("curator"));
    assert!(preview.kip.contains("\"Archived\""), "{}", preview.kip);
    assert_eq!(snapshot(&nexus), before, "a dry run changes nothing");
    assert_eq!(nexus.last_trace_id().expect("trace"), last, "nor traces");
}

#[test]
fn each_action_does_what_it_says_as_one_trace_entry_that_reverts_exactly() {
    let (_d, nexus) = memory();
    let expired = id_of(&nexus, "Expired");
    let fading = id_of(&nexus, "Fading");
    let fresh = id_of(&nexus, "Fresh");
    let cases: [(TriageAction, Vec<String>); 4] = [
        (TriageAction::Pin, vec![fading.clone()]),
        (TriageAction::Renew, vec![expired.clone(), fading.clone()]),
        (TriageAction::Archive, vec![expired.clone()]),
        (TriageAction::Delete, vec![expired.clone(), fresh.clone()]),
    ];
    for (action, ids) in cases {
        let before = snapshot(&nexus);
        let last = nexus.last_trace_id().expect("trace");
        let done = apply(&nexus, action, &ids, false);
        let entry = done.trace_entry.clone().expect("a trace entry");
        let after = snapshot(&nexus);
        let meta = |id: &str| after[id]["metadata"].clone();
        match action {
            TriageAction::Pin => assert_eq!(meta(&fading)["pinned"], json!(true)),
            TriageAction::Renew => {
                assert_eq!(meta(&fading)["memory_strength"], json!(1.0));
                assert!(meta(&expired).get("expires_at").is_none(), "removed");
                assert!(list(&nexus, TriageList::Expired).is_empty());
            }
            TriageAction::Archive => {
                let domain = exec(
                    &nexus,
                    &format!(
                        "FIND(?d.name) WHERE {{ ?x {{id: \"{expired}\"}} (?x, \"belongs_to_domain\", ?d) }}"
                    ),
                );
                assert_eq!(domain, json!(["Archived"]));
                assert!(meta(&expired)["archived_at"].is_string());
                assert!(!list(&nexus, TriageList::Expired).contains(&"Expired".into()));
            }
            TriageAction::Delete => {
                assert!(!after.contains_key(&expired) && !after.contains_key(&fresh));
                // DETACH took their links: the domain links and refers_to.
                assert_eq!(done.counts.concepts_deleted, 2);
                assert_eq!(done.counts.propositions_deleted, 3);
            }
        }
        // One command entry (and the rationale's THINK) for the action.
        let page = nexus
            .trace_list(&kip_nexus::TraceFilter {
                after: Some(format!("T:{last}")),
                kind: Some("TRACE".into()),
                ..kip_nexus::TraceFilter::default()
            })
            .expect("trace");
        let writes: Vec<_> = (page.entries.iter())
            .filter(|e| {
                e.data
                    .as_ref()
                    .is_some_and(|d| d["changes"].as_array().is_some_and(|c| !c.is_empty()))
            })
            .collect();
        assert_eq!(writes.len(), 1, "{action:?}: {writes:#?}");
        assert_eq!(writes[0].id, entry);
        nexus.revert(&entry, "curator", false).expect("revert");
        assert_eq!(lasting(&snapshot(&nexus)), lasting(&before), "{action:?}");
        assert!(nexus.check_store().expect("check").ok);
    }
}

#[test]
fn what_an_action_cannot_take_is_skipped_with_a_reason_and_bad_ids_are_refused() {
    let (_d, nexus) = memory();
    let link = exec(
        &nexus,
        r#"FIND(?l.id) WHERE { ?l ({type: "Note", name: "Fresh"}, "refers_to", ?o) }"#,
    )[0]
    .as_str()
    .expect("a link")
    .to_owned();
    let out = apply(
        &nexus,
        TriageAction::Archive,
        &[link, "C:99999".into(), "C:1".into()],
        true,
    );
    assert_eq!(out.targets, 0);
    let reasons: Vec<&str> = out.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert!(reasons[0].contains("link") && reasons[1].contains("not in the nexus"));
    let r = TriageApply {
        action: TriageAction::Pin,
        ids: vec!["Fading".into()],
        all_of: None,
        strength: None,
        expires_in_days: None,
        dry_run: None,
        message: None,
    };
    let e = nexus
        .triage_apply(&r, &Context::new("test"))
        .expect_err("refused");
    assert_eq!(e.code.as_str(), "KIP_1001");
    assert!(e.hint.contains("C:12"), "{}", e.hint);
}

#[test]
fn all_of_a_list_takes_every_memory_on_it() {
    let (_d, nexus) = memory();
    let r = TriageApply {
        action: TriageAction::Renew,
        ids: Vec::new(),
        all_of: Some(TriageQuery {
            list: TriageList::Fading,
            ..TriageQuery::default()
        }),
        strength: Some(0.8),
        expires_in_days: Some(30.0),
        dry_run: Some(false),
        message: Some("Keep what fades.".into()),
    };
    let out = nexus
        .triage_apply(&r, &Context::new("test"))
        .expect("applied");
    assert_eq!(out.targets, 1);
    assert!(list(&nexus, TriageList::Fading).is_empty());
    let renewed = &snapshot(&nexus)[&id_of(&nexus, "Fading")]["metadata"];
    assert_eq!(renewed["memory_strength"], json!(0.8));
    assert!(renewed["expires_at"].as_str().expect("set") > "2026");
}

/// A random small memory: notes with random lifecycle metadata, some
/// linked to each other and to links.
fn random_memory(notes: &[(u8, u8, bool)], links: &[(u8, u8)]) -> String {
    let mut text = String::from("UPSERT {\n");
    for (i, (strength, expiry, pinned)) in notes.iter().enumerate() {
        let expires = match expiry {
            0 => String::new(),
            1 => ", expires_at: \"2001-01-01T00:00:00Z\"".to_owned(),
            _ => ", expires_at: \"2999-01-01T00:00:00Z\"".to_owned(),
        };
        text.push_str(&format!(
            "CONCEPT ?n{i} {{ {{type: \"Note\", name: \"N{i}\"}} SET ATTRIBUTES {{ text: \"t{i}\" }} SET PROPOSITIONS {{ (\"belongs_to_domain\", {{type: \"Domain\", name: \"Work\"}}) }} }} WITH METADATA {{ memory_strength: 0.{strength}{expires}, pinned: {pinned} }}\n"
        ));
    }
    for (k, (a, b)) in links.iter().enumerate() {
        let (a, b) = (*a as usize % notes.len(), *b as usize % notes.len());
        text.push_str(&format!(
            "PROPOSITION ?l{k} {{ (?n{a}, \"refers_to\", ?n{b}) }} WITH METADATA {{ memory_strength: 0.1 }}\n"
        ));
    }
    text.push('}');
    text
}

/// After `entry`'s revert: each element it changed is as its before-image
/// says (gone if it created it), every other element untouched.
#[track_caller]
fn check_restored(
    entry: &kip_nexus::TraceEntry,
    pre: &BTreeMap<String, Json>,
    post: &BTreeMap<String, Json>,
) {
    let changes = entry.data.as_ref().expect("data")["changes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let strip = |m: &Json| {
        let mut m = m.clone();
        if let Some(o) = m.as_object_mut() {
            o.retain(|k, _| !k.starts_with('_'));
        }
        m
    };
    let mut listed = std::collections::HashSet::new();
    for c in &changes {
        let id = c["id"].as_str().expect("id");
        // An element two commands touched is listed twice: the first
        // before-image is the state to go back to.
        if !listed.insert(id.to_owned()) {
            continue;
        }
        if c["op"] == "created" {
            assert!(!post.contains_key(id), "{id} is still there");
            continue;
        }
        let now = post
            .get(id)
            .unwrap_or_else(|| panic!("{id} did not come back"));
        assert_eq!(now["attributes"], c["before"]["attributes"], "{id}");
        assert_eq!(
            strip(&now["metadata"]),
            strip(&c["before"]["metadata"]),
            "{id}"
        );
    }
    for (id, e) in pre.iter().filter(|(id, _)| !listed.contains(*id)) {
        assert_eq!(post.get(id), Some(e), "{id} is not {}'s", entry.id);
    }
}

fn action() -> impl Strategy<Value = TriageAction> {
    prop_oneof![
        Just(TriageAction::Pin),
        Just(TriageAction::Renew),
        Just(TriageAction::Archive),
        Just(TriageAction::Delete),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Random memories, random actions over random picks of their elements
    /// (concepts and links), some reverted at once and compared whole with
    /// the memory before, the rest reverted at the end in random order:
    /// each revert restores exactly or is refused with a KIP_3005 naming
    /// the later entry and changing nothing; the store stays consistent.
    #[test]
    fn triage_actions_revert_exactly_or_are_refused_with_a_reason(
        notes in prop::collection::vec((0..10u8, 0..3u8, any::<bool>()), 1..5),
        links in prop::collection::vec((0..5u8, 0..5u8), 0..4),
        steps in prop::collection::vec(
            (action(), prop::collection::vec(any::<prop::sample::Index>(), 1..4), any::<bool>()),
            1..6,
        ),
        order in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let dir = tempfile::tempdir().expect("temp dir");
        let nexus = Nexus::open(dir.path()).expect("nexus");
        exec(&nexus, SCHEMA);
        exec(&nexus, &random_memory(&notes, &links));
        let mut pool = Vec::new();
        for (act, picks, at_once) in &steps {
            let before = snapshot(&nexus);
            let mut ids: Vec<String> = before
                .iter()
                .filter(|(_, e)| e["type"] == "Note" || e["predicate"] == "refers_to")
                .map(|(id, _)| id.clone())
                .collect();
            ids.sort();
            prop_assume!(!ids.is_empty());
            let chosen: Vec<String> = picks.iter().map(|p| ids[p.index(ids.len())].clone()).collect();
            let done = apply(&nexus, *act, &chosen, false);
            let Some(entry) = done.trace_entry else {
                prop_assert_eq!(&snapshot(&nexus), &before, "no entry, no change");
                continue;
            };
            if *at_once {
                nexus.revert(&entry, "curator", false).expect("the newest entry reverts");
                prop_assert_eq!(lasting(&snapshot(&nexus)), lasting(&before), "{:?} {:?}", act, chosen);
            } else {
                pool.push(entry);
            }
            let report = nexus.check_store().expect("check");
            prop_assert!(report.ok, "{:#?}", report.violations);
        }
        for pick in &order {
            if pool.is_empty() {
                break;
            }
            let entry = pool.remove(pick.index(pool.len()));
            let pre = snapshot(&nexus);
            let listed = nexus.trace_entry(&entry).expect("entry");
            match nexus.revert(&entry, "curator", false) {
                Ok(_) => check_restored(&listed, &pre, &snapshot(&nexus)),
                Err(e) => {
                    prop_assert_eq!(e.code.as_str(), "KIP_3005", "{}: {:?}", entry, e);
                    let later = e.data["later"].as_str().unwrap_or_default();
                    prop_assert!(later.starts_with("T:") && e.message.contains(later), "{:?}", e);
                    prop_assert_eq!(&snapshot(&nexus), &pre, "refused but changed");
                }
            }
            let report = nexus.check_store().expect("check");
            prop_assert!(report.ok, "{:#?}", report.violations);
        }
    }
}

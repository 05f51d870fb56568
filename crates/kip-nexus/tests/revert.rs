//! Reverting a traced write (issue 31 §1, "a right trace"): elements come
//! back in dependency order (a DETACH cascade's links about links after the
//! links they are about), a revert is a new mutation (`_version` climbs,
//! `_updated_at` is now), and whether a revert is refused is decided by the
//! later writes to the same elements, never by comparing states. A property
//! test runs random writes, then reverts them in random order.

use crate::common::elements as snapshot;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use kip_nexus::{Context, ExecuteKip, Nexus, TraceEntry, TraceFilter};
use proptest::prelude::*;
use serde_json::{Value as Json, json};

fn fresh() -> (tempfile::TempDir, Nexus) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus opens");
    let schema = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../capsules/examples/10_medical_schema.kip");
    let text = std::fs::read_to_string(schema).expect("schema");
    let r = nexus.execute(&ExecuteKip::command(text), &Context::new("setup"));
    assert!(r.get("error").is_none(), "{r:#}");
    (dir, nexus)
}

/// Runs `command` as `who`; its response.
fn exec(nexus: &Nexus, who: &str, command: &str) -> Json {
    let ctx = Context::new("test").with_originator(who);
    nexus.execute(&ExecuteKip::command(command), &ctx)
}

#[track_caller]
fn run(nexus: &Nexus, command: &str) -> (Json, TraceEntry) {
    let r = exec(nexus, "agent", command);
    assert!(r.get("error").is_none(), "{command}\n{r:#}");
    (r["result"].clone(), newest(nexus, "agent"))
}

fn newest(nexus: &Nexus, who: &str) -> TraceEntry {
    let filter = TraceFilter {
        originator: Some(who.into()),
        kind: Some("TRACE".into()),
        limit: Some(1),
        ..TraceFilter::default()
    };
    nexus.trace_list(&filter).expect("list").entries.remove(0)
}

fn version(e: &Json) -> u64 {
    e["metadata"]["_version"].as_u64().unwrap_or(0)
}

/// Metadata without the keys every write moves on.
fn lasting(meta: &Json) -> Json {
    let mut m = meta.clone();
    if let Some(o) = m.as_object_mut() {
        o.remove("_version");
        o.remove("_updated_at");
    }
    m
}

const FACT: &str = r#"UPSERT {
    CONCEPT ?a { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 2 } }
    CONCEPT ?h { {type: "Symptom", name: "Headache"} }
    PROPOSITION ?fact { (?a, "treats", ?h) SET ATTRIBUTES { onset_minutes: 30 } }
    CONCEPT ?u { {type: "User", name: "Zhang"} }
    PROPOSITION ?said { (?u, "stated", ?fact) } WITH METADATA { confidence: 0.8 }
    CONCEPT ?v { {type: "User", name: "Li"} SET PROPOSITIONS { ("stated", ?said) } }
}"#;

/// The user's report: `DELETE CONCEPT … DETACH` removed a link and a link
/// about it (`Zhang stated (Aspirin treats Headache)`), and a second-order
/// one (`Li stated` that statement); the revert brought the outer links back
/// before the inner one and failed with `P:… does not exist`.
#[test]
fn reverting_a_detach_that_removed_higher_order_links_restores_inner_links_first() {
    let (_dir, nexus) = fresh();
    run(&nexus, FACT);
    let before = snapshot(&nexus);
    let (result, deleted) = run(
        &nexus,
        r#"DELETE CONCEPT ?h DETACH WHERE { ?h {type: "Symptom", name: "Headache"} }"#,
    );
    // The treats link, the statement about it and the statement about that.
    assert_eq!(result["deleted_propositions"], json!(3), "{result:#}");
    let gone: Vec<String> = deleted.data.as_ref().expect("data")["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| c["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(gone.len(), 4, "{gone:?}");
    let r = nexus.revert(&deleted.id, "curator", false).expect("revert");
    assert!(r.entry.tag.contains(&"SelfCorrection".to_owned()));
    let after = snapshot(&nexus);
    assert_eq!(after.len(), before.len());
    for (id, was) in &before {
        let now = &after[id];
        assert_eq!(now["attributes"], was["attributes"], "{id}");
        assert_eq!(now["subject"], was["subject"], "{id}");
        assert_eq!(now["object"], was["object"], "{id}");
        assert_eq!(lasting(&now["metadata"]), lasting(&was["metadata"]), "{id}");
        if gone.contains(id) {
            assert_eq!(
                version(now),
                version(was) + 1,
                "{id}: back as a new mutation"
            );
        } else {
            assert_eq!(now, was, "{id}: untouched");
        }
    }
    assert!(nexus.check_store().expect("check").ok);
}

/// Found by the property test: `U stated (U stated F)` — deleting `U`
/// reaches the outer statement both from `U` and through the inner one,
/// and the DETACH cascade removed the inner first (`P:… cannot be deleted:
/// P:… still refers to it`). A link goes after every link about it.
#[test]
fn detach_deletes_a_link_about_a_link_reached_two_ways_first() {
    let (_dir, nexus) = fresh();
    run(
        &nexus,
        r#"UPSERT {
            CONCEPT ?a { {type: "Drug", name: "Aspirin"} }
            CONCEPT ?h { {type: "Symptom", name: "Headache"} }
            PROPOSITION ?fact { (?a, "treats", ?h) }
            CONCEPT ?u { {type: "User", name: "Zhang"} }
            PROPOSITION ?said { (?u, "stated", ?fact) }
            CONCEPT ?again { {type: "User", name: "Zhang"} SET PROPOSITIONS { ("stated", ?said) } }
        }"#,
    );
    let before = snapshot(&nexus);
    let (result, deleted) = run(
        &nexus,
        r#"DELETE CONCEPT ?u DETACH WHERE { ?u {type: "User", name: "Zhang"} }"#,
    );
    assert_eq!(result["deleted_propositions"], json!(2), "{result:#}");
    nexus.revert(&deleted.id, "curator", false).expect("revert");
    let after = snapshot(&nexus);
    assert_eq!(after.len(), before.len());
    assert!(nexus.check_store().expect("check").ok);
}

/// Found by decay triage's renew (an UPDATE then a DELETE METADATA of the
/// same element in one text): the revert restored the second command's
/// before-image, the state between the two, instead of the first's.
#[test]
fn reverting_a_text_that_touched_an_element_twice_restores_its_first_before_image() {
    let (_dir, nexus) = fresh();
    run(&nexus, FACT);
    let before = aspirin(&nexus);
    let (_, twice) = run(
        &nexus,
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: 9 } SET METADATA { memory_strength: 1.0 } WHERE { ?d {type: "Drug", name: "Aspirin"} }
           DELETE ATTRIBUTES {"risk_level"} FROM ?d WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    nexus.revert(&twice.id, "curator", false).expect("revert");
    let back = aspirin(&nexus);
    assert_eq!(back["attributes"], before["attributes"]);
    assert_eq!(lasting(&back["metadata"]), lasting(&before["metadata"]));
}

fn aspirin(nexus: &Nexus) -> Json {
    let (found, _) = run(
        nexus,
        r#"FIND(?d) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    found[0].clone()
}

/// RC10's `_version` is a mutation counter and `_updated_at` never goes
/// back: the revert of an UPDATE is a new write, at version 3, now.
#[test]
fn a_revert_is_a_new_write_whose_version_climbs_and_whose_time_is_now() {
    let (_dir, nexus) = fresh();
    run(&nexus, FACT);
    let (_, updated) = run(
        &nexus,
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: 4 } WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    let changed = aspirin(&nexus);
    assert_eq!(version(&changed), 2);
    // `_updated_at` has a resolution of one second.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let r = nexus.revert(&updated.id, "curator", false).expect("revert");
    let back = aspirin(&nexus);
    assert_eq!(back["attributes"]["risk_level"], json!(2));
    assert_eq!(version(&back), 3, "{back:#}");
    let (was, now) = (
        changed["metadata"]["_updated_at"].as_str().expect("time"),
        back["metadata"]["_updated_at"].as_str().expect("time"),
    );
    assert!(now > was, "{was} → {now}");
    assert!(
        now <= r.entry.at.as_str(),
        "{now} after its entry {}",
        r.entry.at
    );
    assert_eq!(
        back["metadata"]["_created_at"],
        changed["metadata"]["_created_at"]
    );
    // EXPECT VERSION sees the revert as the mutation it is.
    let stale = exec(
        &nexus,
        "agent",
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: 1 } WHERE { ?d {type: "Drug", name: "Aspirin"} } EXPECT VERSION 2"#,
    );
    assert!(stale.get("error").is_some(), "{stale:#}");
    // Reverting the revert climbs again.
    nexus
        .revert(&r.entry.id, "curator", false)
        .expect("re-apply");
    let again = aspirin(&nexus);
    assert_eq!(again["attributes"]["risk_level"], json!(4));
    assert_eq!(version(&again), 4);
}

/// A later write that put Aspirin back as the reverted write left it is
/// still a later write: the revert is refused naming both later entries,
/// although the state equals the entry's after-image; forced, it goes.
#[test]
fn a_revert_is_refused_by_later_writes_even_when_the_state_equals_the_after_image() {
    let (_dir, nexus) = fresh();
    run(&nexus, FACT);
    let set = |r: u8| {
        format!(
            r#"UPSERT {{ CONCEPT ?d {{ {{type: "Drug", name: "Aspirin"}} SET ATTRIBUTES {{ risk_level: {r} }} }} }}"#
        )
    };
    let (_, first) = run(&nexus, &set(3));
    let after_first = aspirin(&nexus);
    let (_, second) = run(&nexus, &set(5));
    let (_, third) = run(&nexus, &set(3));
    assert_eq!(aspirin(&nexus)["attributes"], after_first["attributes"]);
    let before = snapshot(&nexus);
    let err = nexus
        .revert(&first.id, "curator", false)
        .expect_err("refused");
    assert_eq!(err.code.as_str(), "KIP_3005", "{err:?}");
    for later in [&second.id, &third.id] {
        assert!(err.message.contains(later.as_str()), "{}", err.message);
    }
    assert_eq!(err.data["later"], json!(second.id));
    assert_eq!(err.data["later_entries"], json!([second.id, third.id]));
    assert_eq!(snapshot(&nexus), before, "a refusal changes nothing");
    nexus.revert(&first.id, "curator", true).expect("forced");
    let back = aspirin(&nexus);
    assert_eq!(back["attributes"]["risk_level"], json!(2));
    assert_eq!(
        version(&back),
        version(&before[back["id"].as_str().expect("id")]) + 1
    );
}

/// Undoing a creation deletes with the DETACH cascade: a link a later
/// write made to the created concept would go with it, so the revert is
/// refused naming that write.
#[test]
fn a_revert_is_refused_when_a_later_write_linked_to_what_it_would_delete() {
    let (_dir, nexus) = fresh();
    let (_, created) = run(
        &nexus,
        r#"UPSERT { CONCEPT ?s { {type: "Symptom", name: "Fever"} } }"#,
    );
    let (_, linked) = run(
        &nexus,
        r#"UPSERT { CONCEPT ?s { {type: "Symptom", name: "Fever"} } CONCEPT ?d { {type: "Drug", name: "Ibuprofen"} SET PROPOSITIONS { ("treats", ?s) } } }"#,
    );
    let before = snapshot(&nexus);
    let err = nexus
        .revert(&created.id, "curator", false)
        .expect_err("refused");
    assert_eq!(err.code.as_str(), "KIP_3005", "{err:?}");
    assert!(err.message.contains(&linked.id), "{}", err.message);
    assert_eq!(snapshot(&nexus), before);
    // Once the later write is reverted, the creation can be.
    nexus
        .revert(&linked.id, "curator", false)
        .expect("later first");
    nexus
        .revert(&created.id, "curator", false)
        .expect("then this");
    assert!(nexus.check_store().expect("check").ok);
}

/// One random write of the property test.
#[derive(Clone, Debug)]
enum Op {
    /// Drug D<d> with `risk_level` and a metadata note.
    Upsert(u8, u8),
    /// D<d> treats S<s>.
    Link(u8, u8),
    /// User U<u> stated (D<d> treats S<s>): a link about a link.
    Stated(u8, u8, u8),
    /// U<v> stated (U<u> stated (D<d> treats S<s>)): about a link about a link.
    StatedAbout(u8, u8, u8, u8),
    /// UPDATE of D<d>'s `risk_level`.
    Update(u8, u8),
    DeleteDrug(u8),
    DeleteSymptom(u8),
    /// MERGE D<a> INTO D<b> (fails when either is missing, or a = b).
    Merge(u8, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..3u8, 0..3u8).prop_map(|(d, r)| Op::Upsert(d, r)),
        (0..3u8, 0..2u8).prop_map(|(d, s)| Op::Link(d, s)),
        (0..2u8, 0..3u8, 0..2u8).prop_map(|(u, d, s)| Op::Stated(u, d, s)),
        (0..2u8, 0..2u8, 0..3u8, 0..2u8).prop_map(|(v, u, d, s)| Op::StatedAbout(v, u, d, s)),
        (0..3u8, 0..3u8).prop_map(|(d, r)| Op::Update(d, r)),
        (0..3u8).prop_map(Op::DeleteDrug),
        (0..2u8).prop_map(Op::DeleteSymptom),
        (0..3u8, 0..3u8).prop_map(|(a, b)| Op::Merge(a, b)),
    ]
}

fn text(op: &Op) -> String {
    let fact = |d: u8, s: u8| {
        format!(
            r#"CONCEPT ?d {{ {{type: "Drug", name: "D{d}"}} }}
               CONCEPT ?s {{ {{type: "Symptom", name: "S{s}"}} }}
               PROPOSITION ?f {{ (?d, "treats", ?s) }}"#
        )
    };
    match op {
        Op::Upsert(d, r) => format!(
            r#"UPSERT {{ CONCEPT ?d {{ {{type: "Drug", name: "D{d}"}} SET ATTRIBUTES {{ risk_level: {r} }} }} WITH METADATA {{ note: "n{r}" }} }}"#
        ),
        Op::Link(d, s) => format!("UPSERT {{ {} }}", fact(*d, *s)),
        Op::Stated(u, d, s) => format!(
            r#"UPSERT {{ {} CONCEPT ?u {{ {{type: "User", name: "U{u}"}} SET PROPOSITIONS {{ ("stated", ?f) }} }} }}"#,
            fact(*d, *s)
        ),
        Op::StatedAbout(v, u, d, s) => format!(
            r#"UPSERT {{ {} CONCEPT ?u {{ {{type: "User", name: "U{u}"}} }}
               PROPOSITION ?st {{ (?u, "stated", ?f) }} WITH METADATA {{ confidence: 0.{v}5 }}
               CONCEPT ?v {{ {{type: "User", name: "U{v}"}} SET PROPOSITIONS {{ ("stated", ?st) }} }} }}"#,
            fact(*d, *s)
        ),
        Op::Update(d, r) => format!(
            r#"UPDATE ?d SET ATTRIBUTES {{ risk_level: {r}, updated: true }} WHERE {{ ?d {{type: "Drug", name: "D{d}"}} }}"#
        ),
        Op::DeleteDrug(d) => {
            format!(r#"DELETE CONCEPT ?d DETACH WHERE {{ ?d {{type: "Drug", name: "D{d}"}} }}"#)
        }
        Op::DeleteSymptom(s) => {
            format!(r#"DELETE CONCEPT ?s DETACH WHERE {{ ?s {{type: "Symptom", name: "S{s}"}} }}"#)
        }
        Op::Merge(a, b) => format!(
            r#"MERGE CONCEPT ?a INTO ?b WHERE {{ ?a {{type: "Drug", name: "D{a}"}} ?b {{type: "Drug", name: "D{b}"}} }}"#
        ),
    }
}

fn changed(entry: &TraceEntry) -> bool {
    entry
        .data
        .as_ref()
        .and_then(|d| d["changes"].as_array())
        .is_some_and(|c| !c.is_empty())
}

/// Every element's `_version` is at least the highest seen so far (ids
/// are never reused, so an element deleted and brought back is the same).
fn check_versions(seen: &mut HashMap<String, u64>, now: &BTreeMap<String, Json>) {
    for (id, e) in now {
        let v = version(e);
        let top = seen.entry(id.clone()).or_insert(v);
        assert!(v >= *top, "{id}: _version went back from {top} to {v}");
        *top = v;
    }
}

/// After entry `entry`'s revert went through: each of its elements is as
/// its before-image says (gone if it created it), every other element is
/// untouched, and the ones that changed moved to a higher `_version`.
fn check_restored(entry: &TraceEntry, pre: &BTreeMap<String, Json>, post: &BTreeMap<String, Json>) {
    let changes = entry.data.as_ref().expect("data")["changes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut listed = std::collections::HashSet::new();
    for c in &changes {
        let id = c["id"].as_str().expect("id");
        listed.insert(id.to_owned());
        if c["op"] == "created" {
            assert!(
                !post.contains_key(id),
                "{id} created by {} is still there",
                entry.id
            );
            continue;
        }
        let now = post
            .get(id)
            .unwrap_or_else(|| panic!("{id} of {} did not come back", entry.id));
        let before = &c["before"];
        assert_eq!(now["attributes"], before["attributes"], "{id}");
        assert_eq!(
            lasting(&now["metadata"]),
            lasting(&before["metadata"]),
            "{id}"
        );
        if c["kind"] == "proposition" {
            for end in ["subject", "object"] {
                let was = before[end]["id"].as_str().or(c[end]["id"].as_str());
                assert_eq!(now[end].as_str(), was, "{id}'s {end}");
            }
        }
        if let Some(p) = pre.get(id)
            && p != now
        {
            assert!(
                version(now) > version(p),
                "{id}: changed at _version {}",
                version(p)
            );
        }
    }
    for (id, e) in pre.iter().filter(|(id, _)| !listed.contains(*id)) {
        assert_eq!(
            post.get(id),
            Some(e),
            "{id} is not {}'s, yet the revert changed it",
            entry.id
        );
    }
    for id in post.keys().filter(|id| !listed.contains(*id)) {
        assert!(
            pre.contains_key(id),
            "{id} appeared in the revert of {}",
            entry.id
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random writes (UPSERTs of concepts, links and links about links,
    /// UPDATE, MERGE, DELETE … DETACH), then reverts picked at random
    /// among the writes and the reverts so far that changed something (some
    /// forced, which only must keep versions and the store right): each
    /// either is refused with a KIP_3005 naming the later entry in its way,
    /// changing nothing, or puts back
    /// exactly what its entry changed and nothing else; no `_version` ever
    /// goes back, and the store stays consistent.
    #[test]
    fn random_reverts_refuse_with_a_reason_or_restore_exactly(
        ops in prop::collection::vec(op(), 1..10),
        picks in prop::collection::vec((0..4u8, any::<prop::sample::Index>()), 1..10),
    ) {
        let (_dir, nexus) = fresh();
        let mut seen = HashMap::new();
        let mut pool = Vec::new();
        for o in &ops {
            let r = exec(&nexus, "prop", &text(o));
            // Only a merge may fail (a missing Drug, or one into itself).
            prop_assert!(matches!(o, Op::Merge(..)) || r.get("error").is_none(), "{o:?}: {r:#}");
            let entry = newest(&nexus, "prop");
            if r.get("error").is_none() && changed(&entry) {
                pool.push(entry.id);
            }
            check_versions(&mut seen, &snapshot(&nexus));
        }
        prop_assume!(!pool.is_empty());
        for (mode, pick) in &picks {
            // The newest entry half the time (always revertible but for
            // the reverts already done), any other the rest; mode 3 forces.
            let at = if *mode < 2 { pool.len() - 1 } else { pick.index(pool.len()) };
            let id = pool[at].clone();
            let entry = nexus.trace_entry(&id).expect("entry");
            let pre = snapshot(&nexus);
            if *mode == 3 {
                // Forced: later writes may be undone too, but no _version
                // goes back, a refusal is still a clear conflict, and the
                // store stays consistent.
                match nexus.revert(&id, "curator", true) {
                    // Forcing what is already in place changes nothing.
                    Ok(done) if changed(&done.entry) => pool.push(done.entry.id),
                    Ok(_) => {}
                    Err(e) => prop_assert_eq!(e.code.as_str(), "KIP_3005", "{}: {:?}", id, e),
                }
                check_versions(&mut seen, &snapshot(&nexus));
                let report = nexus.check_store().expect("check");
                prop_assert!(report.ok, "{:#?}", report.violations);
                continue;
            }
            match nexus.revert(&id, "curator", false) {
                Ok(done) => {
                    let post = snapshot(&nexus);
                    check_restored(&entry, &pre, &post);
                    check_versions(&mut seen, &post);
                    if changed(&done.entry) {
                        pool.push(done.entry.id);
                    }
                }
                Err(e) => {
                    let code = e.code.as_str();
                    prop_assert_eq!(code, "KIP_3005", "{}: {:?}", id, e);
                    // The reason names the later entry in the way.
                    let later = e.data["later"].as_str().unwrap_or_default();
                    prop_assert!(later.starts_with("T:") && e.message.contains(later), "{}: {:?}", id, e);
                    prop_assert_eq!(&snapshot(&nexus), &pre, "{} refused but changed the graph", id);
                }
            }
            let report = nexus.check_store().expect("check");
            prop_assert!(report.ok, "{:#?}", report.violations);
        }
    }
}

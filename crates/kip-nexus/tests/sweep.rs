//! The spec's sleep-cycle decay sweep (RC11 §4.3 UPDATE, "Iterating large
//! sweeps"): the unconstrained `?link (?s, ?p, ?o)` statement with its
//! marker guard, re-run with one `:cycle_start` until a cycle updates
//! fewer than LIMIT, decays every eligible link exactly once — links about
//! links included, `belongs_to_domain`, superseded and pinned links spared —
//! however the cycles fall (a restarted process, another writer between
//! cycles).

use std::collections::BTreeMap;

use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::{Value as Json, json};

use crate::common;
use common::fixture;

const LIMIT: u64 = 3;
const CYCLE_START: &str = "2026-06-01T00:00:00.000Z";

fn sweep_text() -> String {
    kip_nexus::profile::decay_sweep(LIMIT)
}

#[track_caller]
fn run(nexus: &Nexus, text: &str, params: Json) -> Json {
    let mut request = ExecuteKip::command(text);
    request.parameters = params.as_object().cloned();
    let r = nexus.execute(&request, &Context::default());
    assert!(r.get("error").is_none(), "{text}\n{r:#}");
    r["result"].clone()
}

/// One cycle of the sweep: `(matched, updated)`.
fn cycle(nexus: &Nexus, n: usize) -> (u64, u64) {
    let r = run(
        nexus,
        &sweep_text(),
        json!({
            "decay_factor": 0.5,
            // A later timestamp each cycle, as a real sweep's clock gives.
            "timestamp": format!("2026-06-01T00:{:02}:00.000Z", n % 60),
            "cycle_start": CYCLE_START,
            "stale_cutoff": "2026-05-18T00:00:00.000Z",
        }),
    );
    let count = |k: &str| r[k].as_u64().expect("a count");
    (count("matched"), count("updated"))
}

/// Every link by id.
fn links(nexus: &Nexus) -> BTreeMap<String, Json> {
    let all = run(nexus, "FIND(?l) WHERE { ?l (?s, ?p, ?o) }", json!({}));
    all.as_array()
        .expect("links")
        .iter()
        .map(|l| (l["id"].as_str().expect("an id").to_owned(), l.clone()))
        .collect()
}

/// The fixture with a superseded link and a link from a link to a link
/// (the medical example already holds one whose object is a link).
fn graph() -> (tempfile::TempDir, Nexus) {
    let (dir, nexus) = fixture();
    run(
        &nexus,
        r#"UPDATE ?l SET METADATA { superseded: true }
           WHERE { ?l ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Headache"}) }"#,
        json!({}),
    );
    // A pinned link (decay triage's pin): exempt from decay, so
    // `assert_decayed_once` finds it unchanged.
    let pinned = run(
        &nexus,
        r#"UPDATE ?l SET METADATA { pinned: true }
           WHERE { ?l ({type: "Drug", name: "Ibuprofen"}, "treats", {type: "Symptom", name: "Headache"}) }"#,
        json!({}),
    );
    assert_eq!(pinned["updated"], json!(1), "{pinned:#}");
    run(
        &nexus,
        r#"UPSERT {
            CONCEPT ?supports {
                {type: "$PropositionType", name: "supports"}
                SET ATTRIBUTES { description: "A link that backs another.", subject_types: ["*"], object_types: ["*"] }
            }
            PROPOSITION ?t { ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Headache"}) }
            PROPOSITION ?s { ({type: "User", name: "张三"}, "stated", ?t) }
            PROPOSITION ?x { (?s, "supports", ?t) }
        }"#,
        json!({}),
    );
    (dir, nexus)
}

/// The links the sweep must decay: neither structural, superseded nor
/// pinned.
fn eligible(before: &BTreeMap<String, Json>) -> Vec<String> {
    before
        .iter()
        .filter(|(_, l)| l["predicate"] != "belongs_to_domain")
        .filter(|(_, l)| l["metadata"]["superseded"] != true)
        .filter(|(_, l)| l["metadata"]["pinned"] != true)
        .map(|(id, _)| id.clone())
        .collect()
}

/// Each eligible link decayed once (strength 0.7 × 0.5, one more version,
/// this sweep's marker), every other link untouched.
#[track_caller]
fn assert_decayed_once(before: &BTreeMap<String, Json>, after: &BTreeMap<String, Json>) {
    let eligible = eligible(before);
    assert_eq!(before.len(), after.len());
    for (id, old) in before {
        let new = &after[id];
        if eligible.contains(id) {
            assert_eq!(
                new["metadata"]["memory_strength"],
                json!(0.35),
                "{id}: {new:#}"
            );
            let marker = new["metadata"]["strength_decay_applied_at"]
                .as_str()
                .expect("a marker");
            assert!(marker >= CYCLE_START, "{id}: {marker}");
            let version = |l: &Json| l["metadata"]["_version"].as_u64().expect("a version");
            assert_eq!(version(new), version(old) + 1, "{id}: decayed once");
        } else {
            assert_eq!(new, old, "{id} is spared");
        }
    }
}

#[test]
fn the_iterated_sweep_decays_every_eligible_link_exactly_once() {
    let (_d, nexus) = graph();
    let before = links(&nexus);
    let eligible = eligible(&before);
    let higher_order: Vec<&String> = eligible
        .iter()
        .filter(|id| {
            let l = &before[*id];
            [&l["subject"], &l["object"]]
                .iter()
                .any(|e| e.as_str().is_some_and(|e| e.starts_with("P:")))
        })
        .collect();
    assert!(
        higher_order.len() >= 2,
        "links about links: {higher_order:?}"
    );
    assert!(before.len() > eligible.len() + 1, "spared links exist");
    let mut total = 0;
    let mut cycles = 0;
    loop {
        cycles += 1;
        assert!(cycles <= eligible.len() + 1, "the sweep does not converge");
        let (matched, updated) = cycle(&nexus, cycles);
        assert_eq!(matched, updated);
        total += updated;
        if updated < LIMIT {
            break;
        }
    }
    assert_eq!(total, eligible.len() as u64);
    assert_eq!(cycles, eligible.len() / LIMIT as usize + 1);
    assert_decayed_once(&before, &links(&nexus));
    // Run again with the same cycle start: nothing is left to decay.
    assert_eq!(cycle(&nexus, 0), (0, 0));
}

/// A cycle in a new process (no memory of where the last one stopped),
/// and another writer between cycles, change how long a cycle looks, not
/// what the sweep does.
#[test]
fn the_sweep_survives_a_restart_and_other_writers() {
    let (dir, nexus) = graph();
    let before = links(&nexus);
    let eligible = eligible(&before);
    assert_eq!(cycle(&nexus, 1), (LIMIT, LIMIT));
    drop(nexus);
    let nexus = Nexus::open(dir.path()).expect("reopens");
    assert_eq!(cycle(&nexus, 2), (LIMIT, LIMIT));
    // Another writer touches a concept (not a link: the links must come out
    // as the sweep alone leaves them).
    run(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 9 } } }"#,
        json!({}),
    );
    let mut total = 2 * LIMIT;
    for n in 3.. {
        let (_, updated) = cycle(&nexus, n);
        total += updated;
        if updated < LIMIT {
            break;
        }
    }
    assert_eq!(total, eligible.len() as u64);
    assert_decayed_once(&before, &links(&nexus));
}

/// A link made eligible again behind where the scan resumes (its marker
/// removed by another writer between cycles, after a later cycle) is
/// decayed again before the sweep reports that it is done: a cycle that
/// updates fewer than LIMIT has looked at every link.
#[test]
fn a_link_made_eligible_again_behind_the_scan_is_not_missed() {
    let (_d, nexus) = graph();
    let before = links(&nexus);
    let eligible = eligible(&before);
    assert_eq!(cycle(&nexus, 1), (LIMIT, LIMIT));
    let marked = run(
        &nexus,
        r#"FIND(?l) WHERE { ?l (?s, ?p, ?o) FILTER(!IS_NULL(?l.metadata.strength_decay_applied_at)) }"#,
        json!({}),
    );
    let first = marked[0]["id"].as_str().expect("a decayed link").to_owned();
    // A cycle more, so that the link is not among the last cycle's.
    assert_eq!(cycle(&nexus, 2), (LIMIT, LIMIT));
    run(
        &nexus,
        &format!(
            r#"DELETE METADATA {{"strength_decay_applied_at"}} FROM ?l WHERE {{ ?l (?s, ?p, ?o) FILTER(?l.id == "{first}") }}"#
        ),
        json!({}),
    );
    let mut total = 2 * LIMIT;
    for n in 3.. {
        let (_, updated) = cycle(&nexus, n);
        total += updated;
        if updated < LIMIT {
            break;
        }
    }
    assert_eq!(total, eligible.len() as u64 + 1, "{first} decayed again");
    let after = links(&nexus);
    assert_eq!(after[&first]["metadata"]["memory_strength"], json!(0.175));
}

/// A cycle run as a dry run (nothing written) and a cycle in the same
/// request as a write to a link behind the scan leave the sweep exact: a
/// cycle that did not commit, or that committed more than its own
/// updates, is not taken as proof that the links before it are done.
#[test]
fn dry_runs_and_batched_writes_leave_the_sweep_exact() {
    let (_d, nexus) = graph();
    let before = links(&nexus);
    let eligible = eligible(&before);
    assert_eq!(cycle(&nexus, 1), (LIMIT, LIMIT));
    let params = json!({
        "decay_factor": 0.5,
        "timestamp": "2026-06-01T00:02:00.000Z",
        "cycle_start": CYCLE_START,
        "stale_cutoff": "2026-05-18T00:00:00.000Z",
    });
    let mut request = ExecuteKip::command(sweep_text()).dry_run();
    request.parameters = params.as_object().cloned();
    let r = nexus.execute(&request, &Context::default());
    assert_eq!(r["result"]["updated"], LIMIT, "{r:#}");
    // The sweep's next cycle, then a write that takes a decayed link's
    // marker away, in one request.
    let decayed = run(
        &nexus,
        r#"FIND(?l) WHERE { ?l (?s, ?p, ?o) FILTER(!IS_NULL(?l.metadata.strength_decay_applied_at)) }"#,
        json!({}),
    );
    let first = decayed[0]["id"]
        .as_str()
        .expect("a decayed link")
        .to_owned();
    let request = ExecuteKip {
        commands: Some(vec![
            kip_nexus::BatchItem::Text(sweep_text()),
            kip_nexus::BatchItem::Text(format!(
                r#"DELETE METADATA {{"strength_decay_applied_at"}} FROM ?l WHERE {{ ?l (?s, ?p, ?o) FILTER(?l.id == "{first}") }}"#
            )),
        ]),
        parameters: params.as_object().cloned(),
        ..ExecuteKip::default()
    };
    let r = nexus.execute(&request, &Context::default());
    assert_eq!(r["result"][0]["result"]["updated"], LIMIT, "{r:#}");
    let mut total = 2 * LIMIT;
    for n in 3.. {
        let (_, updated) = cycle(&nexus, n);
        total += updated;
        if updated < LIMIT {
            break;
        }
    }
    assert_eq!(total, eligible.len() as u64 + 1, "{first} decayed again");
}

/// A sweep whose FILTER reads a link's subject: a concept changed behind
/// the scan (no link changed) makes links there eligible, and the sweep
/// still finds them before it reports that it is done.
#[test]
fn a_sweep_that_reads_the_ends_sees_an_end_change_behind_the_scan() {
    let (_d, nexus) = graph();
    let text = r#"UPDATE ?link SET METADATA { strength_decay_applied_at: :timestamp }
        WHERE {
          ?link (?s, "treats", ?o)
          FILTER(?s.attributes.flagged == true)
          FILTER(IS_NULL(?link.metadata.strength_decay_applied_at) || ?link.metadata.strength_decay_applied_at < :cycle_start)
        } LIMIT 1"#;
    let treats = run(
        &nexus,
        r#"FIND(?l) WHERE { ?l (?s, "treats", ?o) }"#,
        json!({}),
    );
    let mut treats: Vec<(u64, String)> = treats
        .as_array()
        .expect("links")
        .iter()
        .map(|l| {
            let id = l["id"].as_str().expect("an id");
            let n = id[2..].parse().expect("a number");
            (n, l["subject"].as_str().expect("a subject").to_owned())
        })
        .collect();
    treats.sort();
    // Every subject flagged but the first link's.
    let first_subject = treats[0].1.clone();
    assert!(
        treats.iter().any(|(_, s)| *s != first_subject),
        "{treats:?}"
    );
    let flag = |subject: &str, on: bool| {
        run(
            &nexus,
            &format!(
                r#"UPDATE ?d SET ATTRIBUTES {{ flagged: {on} }} WHERE {{ ?d {{type: "Drug"}} FILTER(?d.id == "{subject}") }}"#
            ),
            json!({}),
        );
    };
    for (_, s) in &treats {
        flag(s, *s != first_subject);
    }
    let params = |n: usize| json!({"timestamp": format!("2026-06-01T00:{n:02}:00.000Z"), "cycle_start": CYCLE_START});
    assert_eq!(run(&nexus, text, params(1))["updated"], 1);
    flag(&first_subject, true);
    for n in 2.. {
        if run(&nexus, text, params(n))["updated"] == 0 {
            break;
        }
    }
    let unmarked = run(
        &nexus,
        r#"FIND(COUNT(?l)) WHERE { ?l (?s, "treats", ?o) FILTER(IS_NULL(?l.metadata.strength_decay_applied_at)) }"#,
        json!({}),
    );
    assert_eq!(unmarked, json!(0));
}

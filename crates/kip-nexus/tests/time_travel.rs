//! Time travel (issue 31 §6): the nexus as of a past point, rebuilt from
//! the trace's before-images, equals the state recorded right after the
//! last write at or before it; `diff` lists exactly the elements that
//! differ between two points; writes, the future and points beyond the
//! trace's retention are refused. A property test runs random writes
//! (UPSERTs of concepts, links and links about links, UPDATE, MERGE,
//! DELETE … DETACH, metadata changes, reverts).

use crate::common::elements as state;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use kip_nexus::{Context, ExecuteKip, Nexus, TraceSettings};
use proptest::prelude::*;
use serde_json::{Value as Json, json};

type State = BTreeMap<String, Json>;

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

fn exec(nexus: &Nexus, command: &str) -> Json {
    let ctx = Context::new("test").with_originator("prop");
    nexus.execute(&ExecuteKip::command(command), &ctx)
}

/// An element without the engine's reserved `_` metadata.
fn lasting(e: &Json) -> Json {
    let mut e = e.clone();
    if let Some(m) = e["metadata"].as_object_mut() {
        m.retain(|k, _| !k.starts_with('_'));
    }
    e
}

fn as_of_state(nexus: &Nexus, at: &str) -> State {
    let view = nexus.as_of(at).expect("as of");
    state(view.nexus())
}

#[derive(Clone, Debug)]
enum Op {
    Upsert(u8, u8),
    Link(u8, u8),
    Stated(u8, u8, u8),
    Update(u8, u8),
    DeleteMeta(u8),
    DeleteDrug(u8),
    DeleteSymptom(u8),
    Merge(u8, u8),
    /// Revert one of the writes so far (picked by the index).
    Revert(prop::sample::Index),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..3u8, 0..3u8).prop_map(|(d, r)| Op::Upsert(d, r)),
        (0..3u8, 0..2u8).prop_map(|(d, s)| Op::Link(d, s)),
        (0..2u8, 0..3u8, 0..2u8).prop_map(|(u, d, s)| Op::Stated(u, d, s)),
        (0..3u8, 0..3u8).prop_map(|(d, r)| Op::Update(d, r)),
        (0..3u8).prop_map(Op::DeleteMeta),
        (0..3u8).prop_map(Op::DeleteDrug),
        (0..2u8).prop_map(Op::DeleteSymptom),
        (0..3u8, 0..3u8).prop_map(|(a, b)| Op::Merge(a, b)),
        any::<prop::sample::Index>().prop_map(Op::Revert),
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
        Op::Update(d, r) => format!(
            r#"UPDATE ?d SET ATTRIBUTES {{ risk_level: {r}, updated: true }} WHERE {{ ?d {{type: "Drug", name: "D{d}"}} }}"#
        ),
        Op::DeleteMeta(d) => format!(
            r#"DELETE METADATA {{"note"}} FROM ?d WHERE {{ ?d {{type: "Drug", name: "D{d}"}} }}"#
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
        Op::Revert(_) => String::new(),
    }
}

/// The ids whose elements differ (reserved metadata aside) between two
/// states, by what happened to them.
fn differ(a: &State, b: &State) -> [BTreeSet<String>; 3] {
    let mut out: [BTreeSet<String>; 3] = Default::default();
    for (id, e) in b {
        match a.get(id) {
            None => out[0].insert(id.clone()),
            Some(was) if lasting(was) != lasting(e) => out[1].insert(id.clone()),
            Some(_) => false,
        };
    }
    for id in a.keys().filter(|id| !b.contains_key(*id)) {
        out[2].insert(id.clone());
    }
    out
}

fn ids(list: &[kip_nexus::DiffElement]) -> BTreeSet<String> {
    list.iter().map(|e| e.id.clone()).collect()
}

/// One recorded point: the newest entry id after a write, its time, and
/// the state right after it.
struct Recorded {
    entry: u64,
    at: String,
    state: State,
}

fn record(nexus: &Nexus) -> Recorded {
    let entry = nexus.last_trace_id().expect("last id");
    let at = nexus.trace_entry(&format!("T:{entry}")).expect("entry").at;
    Recorded {
        entry,
        at,
        state: state(nexus),
    }
}

/// Runs `ops` (a revert picks among the writes so far), recording the
/// state after each; the first record is before them.
fn play(nexus: &Nexus, ops: &[Op]) -> Vec<Recorded> {
    let mut points = vec![record(nexus)];
    let mut writes: Vec<String> = Vec::new();
    for o in ops {
        if let Op::Revert(pick) = o {
            if writes.is_empty() {
                continue;
            }
            let id = writes[pick.index(writes.len())].clone();
            // A revert may be refused (a later write in its way): no point then.
            if let Ok(done) = nexus.revert(&id, "curator", false) {
                writes.push(done.entry.id);
                points.push(record(nexus));
            }
            continue;
        }
        let r = exec(nexus, &text(o));
        if r.get("error").is_none() {
            writes.push(format!("T:{}", nexus.last_trace_id().expect("id")));
        }
        points.push(record(nexus));
    }
    points
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// For random points (entry ids, in random order so the cached view is
    /// reused, rewound further and copied afresh): the nexus as of the
    /// point is exactly the state recorded right after it, reserved
    /// metadata included; as of an entry's time it is the state after the
    /// last write stamped at or before it; and `diff` between two points
    /// lists exactly the elements that differ, each under what happened.
    #[test]
    fn the_nexus_as_of_a_point_is_the_state_recorded_there_and_diff_lists_what_differs(
        ops in prop::collection::vec(op(), 1..12),
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>()), 1..6),
    ) {
        let (_dir, nexus) = fresh();
        let points = play(&nexus, &ops);
        for (a, b) in &picks {
            let (i, j) = (a.index(points.len()), b.index(points.len()));
            let p = &points[i];
            let seen = as_of_state(&nexus, &format!("T:{}", p.entry));
            prop_assert_eq!(&seen, &p.state, "as of T:{}", p.entry);

            // By time: the last point stamped at or before p's time.
            let last = points.iter().rev().find(|q| q.at <= p.at).expect("p itself");
            let by_time = as_of_state(&nexus, &p.at);
            prop_assert_eq!(&by_time, &last.state, "as of {}", p.at);

            let (from, to) = (&points[i.min(j)], &points[i.max(j)]);
            let diff = nexus
                .diff(&format!("T:{}", from.entry), Some(&format!("T:{}", to.entry)), None)
                .expect("diff");
            let [added, changed, removed] = differ(&from.state, &to.state);
            prop_assert_eq!(ids(&diff.added), added);
            prop_assert_eq!(ids(&diff.changed), changed);
            prop_assert_eq!(ids(&diff.removed), removed);
            for e in diff.added.iter().chain(&diff.changed) {
                let after = e.after.as_ref().expect("after");
                prop_assert_eq!(&json!(after.attributes), &to.state[&e.id]["attributes"]);
            }
            for e in diff.removed.iter().chain(&diff.changed) {
                let before = e.before.as_ref().expect("before");
                prop_assert_eq!(&json!(before.attributes), &from.state[&e.id]["attributes"]);
            }
        }
        // The view is a copy: the nexus itself is as the last write left it.
        prop_assert_eq!(&state(&nexus), &points[points.len() - 1].state);
        prop_assert!(nexus.check_store().expect("check").ok);
    }
}

const ASPIRIN: &str =
    r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 2 } } }"#;

#[test]
fn a_query_as_of_a_past_point_reads_the_past_and_says_where_it_stands() {
    let (_dir, nexus) = fresh();
    assert!(exec(&nexus, ASPIRIN).get("error").is_none());
    let first = nexus.last_trace_id().expect("id");
    let r = exec(
        &nexus,
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: 5 } WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    assert!(r.get("error").is_none(), "{r:#}");
    let find = r#"FIND(?d.attributes.risk_level) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#;
    let past = ExecuteKip {
        as_of: Some(format!("T:{first}")),
        ..ExecuteKip::command(find)
    };
    let r = nexus.execute(&past, &Context::new("test"));
    assert_eq!(r["result"], json!([2]), "{r:#}");
    assert_eq!(r["as_of"]["entry"], json!(format!("T:{first}")));
    assert_eq!(r["as_of"]["now"], json!(false));
    // Now is the nexus itself.
    let now = nexus.execute(&ExecuteKip::command(find), &Context::new("test"));
    assert_eq!(now["result"], json!([5]));
    // A date long before the first entry, with nothing dropped: before
    // every traced write even the schema that defines Drug was not there.
    let before = ExecuteKip {
        as_of: Some("2001-01-01".into()),
        ..ExecuteKip::command(find)
    };
    let r = nexus.execute(&before, &Context::new("test"));
    assert_eq!(r["error"]["code"], json!("KIP_2001"), "{r:#}");
    assert_eq!(r["as_of"]["entry"], json!("T:0"));
}

#[test]
fn writes_the_future_and_bad_times_are_refused_as_of_a_past_time() {
    let (_dir, nexus) = fresh();
    assert!(exec(&nexus, ASPIRIN).get("error").is_none());
    let write = ExecuteKip {
        as_of: Some("2001-01-01".into()),
        ..ExecuteKip::command(ASPIRIN)
    };
    let r = nexus.execute(&write, &Context::new("test"));
    assert_eq!(r["error"]["code"], json!("KIP_3004"), "{r:#}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("past time")
    );
    let err = nexus.as_of("2999-01-01T00:00:00Z").expect_err("the future");
    assert_eq!(err.code.as_str(), "KIP_1001");
    assert!(err.message.contains("future"), "{}", err.message);
    let err = nexus.as_of("last tuesday").expect_err("not a time");
    assert_eq!(err.code.as_str(), "KIP_1001");
    assert!(err.hint.contains("ISO 8601"));
    let err = nexus.as_of("T:999999").expect_err("no such entry");
    assert_eq!(err.code.as_str(), "KIP_3002");
    let err = nexus
        .diff("2999-01-01", None, None)
        .expect_err("since in the future");
    assert_eq!(err.code.as_str(), "KIP_1001");
}

#[test]
fn a_time_beyond_the_trace_retention_is_refused_naming_the_oldest_time_kept() {
    let (_dir, nexus) = fresh();
    nexus.set_trace_settings(TraceSettings {
        max_entries: 3,
        ..TraceSettings::default()
    });
    for r in 0..6 {
        let t = format!(
            r#"UPSERT {{ CONCEPT ?d {{ {{type: "Drug", name: "Aspirin"}} SET ATTRIBUTES {{ risk_level: {r} }} }} }}"#
        );
        assert!(exec(&nexus, &t).get("error").is_none());
    }
    let err = nexus.as_of("2001-01-01").expect_err("beyond retention");
    assert_eq!(err.code.as_str(), "KIP_3002", "{err:?}");
    let oldest = err.data["oldest_at"]
        .as_str()
        .expect("oldest_at")
        .to_owned();
    assert!(err.message.contains(&oldest), "{}", err.message);
    let err = nexus.as_of("T:1").expect_err("an entry retention dropped");
    assert_eq!(err.code.as_str(), "KIP_3002");
    // At the oldest time kept the view is there and says how far it reaches.
    let view = nexus.as_of(&oldest).expect("within reach");
    assert!(view.point.dropped);
    assert_eq!(view.point.oldest_at.as_deref(), Some(oldest.as_str()));
}

#[test]
fn writes_made_with_the_trace_off_are_counted_as_not_undone() {
    let (_dir, nexus) = fresh();
    assert!(exec(&nexus, ASPIRIN).get("error").is_none());
    let then = format!("T:{}", nexus.last_trace_id().expect("id"));
    assert_eq!(nexus.as_of(&then).expect("as of").point.untraced, 0);
    nexus.set_trace_settings(TraceSettings {
        enabled: false,
        ..TraceSettings::default()
    });
    let r = exec(
        &nexus,
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: 7 } WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    assert!(r.get("error").is_none(), "{r:#}");
    nexus.set_trace_settings(TraceSettings::default());
    assert!(
        exec(
            &nexus,
            r#"UPSERT { CONCEPT ?s { {type: "Symptom", name: "Fever"} } }"#
        )
        .get("error")
        .is_none()
    );
    let view = nexus.as_of(&then).expect("as of");
    assert_eq!(view.point.untraced, 1, "{:?}", view.point);
    let diff = nexus.diff(&then, None, None).expect("diff");
    assert_eq!(diff.since.untraced, 1);
}

/// A killed host leaves its view's copy behind; the next view made by any
/// process removes it.
#[cfg(target_os = "linux")]
#[test]
fn a_view_left_behind_by_an_ended_process_is_removed() {
    let left = std::env::temp_dir().join("kip-as-of-4294967294-left");
    std::fs::create_dir_all(&left).expect("dir");
    std::fs::write(left.join("data.mdb"), b"old").expect("file");
    let (_dir, nexus) = fresh();
    assert!(exec(&nexus, ASPIRIN).get("error").is_none());
    let then = format!("T:{}", nexus.last_trace_id().expect("id"));
    assert!(
        exec(
            &nexus,
            r#"UPSERT { CONCEPT ?s { {type: "Symptom", name: "Fever"} } }"#
        )
        .get("error")
        .is_none()
    );
    let view = nexus.as_of(&then).expect("as of");
    assert!(!view.point.now);
    assert!(!left.exists(), "the left-behind view is gone");
}

//! Contradictions of the second kind (issue 31 §4): an attribute value one
//! source wrote over another's on the same element is listed with both
//! sides' provenance; a source changing its own value, a curator's edit, a
//! value changed since and a deleted element are not. Resolving keeps one
//! side, records the other in `superseded_values` in one traced write the
//! trace reverts; bad or stale sides are refused and change nothing.

use kip_nexus::contradictions::{Contradiction, ContradictionQuery, Resolve};
use kip_nexus::{Context, ExecuteKip, Nexus, TraceFilter};
use serde_json::{Value as Json, json};

fn exec(nexus: &Nexus, command: &str) -> Json {
    let r = nexus.execute(&ExecuteKip::command(command), &Context::default());
    assert!(r.get("error").is_none(), "{command}\n{r:#}");
    r["result"].clone()
}

fn set(nexus: &Nexus, name: &str, attrs: &str, meta: &str) {
    exec(
        nexus,
        &format!(
            r#"UPSERT {{ CONCEPT ?p {{ {{type: "Person", name: "{name}"}} SET ATTRIBUTES {{ {attrs} }} }} }} WITH METADATA {{ {meta} }}"#
        ),
    );
}

const CHAT: &str = r#"source: "chat:1", author: "$self", confidence: 0.9"#;
const DOC: &str = r#"source: "doc:7", author: "agent-b", confidence: 0.6"#;

fn fresh() -> (tempfile::TempDir, Nexus) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus");
    set(&nexus, "Ann", r#"birthplace: "Oslo", age: 40"#, CHAT);
    set(&nexus, "Ann", r#"birthplace: "Bergen", age: 40"#, DOC);
    (dir, nexus)
}

fn attribute_ones(nexus: &Nexus) -> Vec<Contradiction> {
    let found = nexus
        .contradictions(&ContradictionQuery::default())
        .expect("contradictions");
    assert_eq!(found.total as usize, found.contradictions.len());
    found
        .contradictions
        .into_iter()
        .filter(|c| c.kind == "attribute")
        .collect()
}

fn ann(nexus: &Nexus) -> Json {
    exec(
        nexus,
        r#"FIND(?p) WHERE { ?p {type: "Person", name: "Ann"} }"#,
    )[0]
    .clone()
}

fn resolve(
    nexus: &Nexus,
    keep: &str,
    retire: &str,
    dry_run: bool,
) -> Result<Json, kip_lang::KipError> {
    nexus
        .resolve_contradiction(
            &Resolve {
                keep: keep.to_owned(),
                retire: vec![retire.to_owned()],
                reason: Some("The birth certificate says so.".into()),
                dry_run,
            },
            &Context::default(),
        )
        .map(|r| r.result)
}

#[test]
fn a_value_another_source_wrote_over_is_listed_with_both_sides_provenance() {
    let (_dir, nexus) = fresh();
    let found = attribute_ones(&nexus);
    assert_eq!(found.len(), 1, "{found:#?}");
    let c = &found[0];
    let id = ann(&nexus)["id"].as_str().expect("id").to_owned();
    assert_eq!(c.id, format!("attribute:{id}/birthplace"));
    assert_eq!(c.attribute.as_deref(), Some("birthplace"));
    assert_eq!(
        (c.subject.type_name.as_str(), c.subject.name.as_str()),
        ("Person", "Ann")
    );
    let [earlier, current] = c.sides.as_slice() else {
        panic!("two sides: {c:#?}");
    };
    assert_eq!(earlier.id, format!("{}#earlier", c.id));
    assert_eq!(earlier.value, Some(json!("Oslo")));
    assert_eq!(earlier.source, json!("chat:1"));
    assert_eq!(earlier.author.as_deref(), Some("$self"));
    assert_eq!(earlier.confidence, Some(0.9));
    assert_eq!(current.value, Some(json!("Bergen")));
    assert_eq!(current.source, json!("doc:7"));
    assert_eq!(current.confidence, Some(0.6));
    let entry = current
        .written_by
        .as_deref()
        .expect("the overwriting entry");
    let trace = nexus.trace_entry(entry).expect("entry");
    assert_eq!(
        trace.data.expect("data")["changes"][0]["after"]["attributes"]["birthplace"],
        "Bergen"
    );
    // The unchanged `age` is no side of anything.
    assert!(found.iter().all(|c| c.attribute.as_deref() != Some("age")));
}

#[test]
fn evolutions_decisions_later_changes_and_deletions_are_no_contradiction() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus");
    // One source changing its own value.
    set(&nexus, "Bo", r#"city: "Oslo""#, CHAT);
    set(&nexus, "Bo", r#"city: "Rome""#, CHAT);
    // A curator's edit over an agent's value.
    set(&nexus, "Cy", r#"city: "Oslo""#, CHAT);
    set(
        &nexus,
        "Cy",
        r#"city: "Rome""#,
        r#"source: "curator", author: "ann""#,
    );
    // Overwritten, then changed again by the overwriting source.
    set(&nexus, "Di", r#"city: "Oslo""#, CHAT);
    set(&nexus, "Di", r#"city: "Rome""#, DOC);
    set(&nexus, "Di", r#"city: "Lima""#, DOC);
    // Overwritten, then deleted.
    set(&nexus, "Ed", r#"city: "Oslo""#, CHAT);
    set(&nexus, "Ed", r#"city: "Rome""#, DOC);
    exec(
        &nexus,
        r#"DELETE CONCEPT ?p DETACH WHERE { ?p {type: "Person", name: "Ed"} }"#,
    );
    // No provenance on one side: nothing says two sources disagree.
    set(&nexus, "Fe", r#"city: "Oslo""#, r#"confidence: 0.5"#);
    set(&nexus, "Fe", r#"city: "Rome""#, DOC);
    assert_eq!(attribute_ones(&nexus), Vec::new());
    // Overwritten by another source: listed, and only Gu.
    set(&nexus, "Gu", r#"city: "Oslo""#, CHAT);
    set(&nexus, "Gu", r#"city: "Rome""#, DOC);
    let found = attribute_ones(&nexus);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].subject.name, "Gu");
    // A type filter keeps it only for its type.
    let other = nexus
        .contradictions(&ContradictionQuery {
            types: vec!["Event".into()],
            limit: 0,
        })
        .expect("contradictions");
    assert_eq!(other.total, 0);
}

#[test]
fn keeping_the_current_value_records_the_earlier_one_as_history_and_reverts() {
    let (_dir, nexus) = fresh();
    let c = attribute_ones(&nexus).remove(0);
    let before = ann(&nexus);
    let keep = format!("{}#current", c.id);
    let retire = format!("{}#earlier", c.id);
    let preview = resolve(&nexus, &keep, &retire, true).expect("preview");
    assert_eq!(preview["updated"], 1, "{preview:#}");
    assert_eq!(ann(&nexus), before, "a preview writes nothing");
    resolve(&nexus, &keep, &retire, false).expect("resolve");
    let after = ann(&nexus);
    assert_eq!(after["attributes"]["birthplace"], "Bergen");
    assert_eq!(after["metadata"]["source"], "doc:7");
    let history = &after["metadata"]["superseded_values"];
    assert_eq!(history[0]["attribute"], "birthplace");
    assert_eq!(history[0]["value"], "Oslo");
    assert_eq!(history[0]["source"], "chat:1");
    assert_eq!(
        history[0]["superseded_reason"],
        "The birth certificate says so."
    );
    assert_eq!(attribute_ones(&nexus), Vec::new());
    // Resolving it again: it does not stand any more.
    let again = resolve(&nexus, &keep, &retire, false).expect_err("resolved already");
    assert!(
        again.message.contains("does not stand"),
        "{}",
        again.message
    );
    // The trace reverts the resolution, and the contradiction is back.
    let last = nexus
        .trace_list(&TraceFilter {
            limit: Some(1),
            kind: Some("TRACE".into()),
            ..TraceFilter::default()
        })
        .expect("trace")
        .entries
        .remove(0);
    nexus.revert(&last.id, "curator", false).expect("revert");
    assert_eq!(attribute_ones(&nexus), vec![c]);
}

#[test]
fn keeping_the_earlier_value_writes_it_back_with_its_provenance_until_overwritten_again() {
    let (_dir, nexus) = fresh();
    let c = attribute_ones(&nexus).remove(0);
    resolve(
        &nexus,
        &format!("{}#earlier", c.id),
        &format!("{}#current", c.id),
        false,
    )
    .expect("resolve");
    let after = ann(&nexus);
    assert_eq!(after["attributes"]["birthplace"], "Oslo");
    assert_eq!(after["metadata"]["source"], "chat:1");
    assert_eq!(after["metadata"]["author"], "$self");
    assert_eq!(after["metadata"]["confidence"], 0.9);
    assert_eq!(after["metadata"]["superseded_values"][0]["value"], "Bergen");
    assert_eq!(after["metadata"]["superseded_values"][0]["source"], "doc:7");
    assert_eq!(attribute_ones(&nexus), Vec::new());
    // The other source writing its value again is a new contradiction.
    set(&nexus, "Ann", r#"birthplace: "Bergen""#, DOC);
    let again = attribute_ones(&nexus);
    assert_eq!(again.len(), 1, "{again:#?}");
    assert_eq!(again[0].sides[1].value, Some(json!("Bergen")));
}

#[test]
fn bad_or_stale_sides_are_refused_and_change_nothing() {
    let (_dir, nexus) = fresh();
    let c = attribute_ones(&nexus).remove(0);
    let before = ann(&nexus);
    let (earlier, current) = (format!("{}#earlier", c.id), format!("{}#current", c.id));
    for (keep, retire, words) in [
        (current.as_str(), current.as_str(), "not the other side"),
        (
            current.as_str(),
            "attribute:C:1/name#earlier",
            "not the other side",
        ),
        (
            "attribute:C:x/birthplace#current",
            earlier.as_str(),
            "is not a side",
        ),
        (
            current.as_str(),
            "attribute:C:1/birthplace#middle",
            "is not a side",
        ),
    ] {
        let e = resolve(&nexus, keep, retire, false).expect_err(keep);
        assert!(e.message.contains(words), "{keep} {retire}: {}", e.message);
        assert!(!e.hint.is_empty());
    }
    // Changed since it was listed: refused, not written over.
    set(&nexus, "Ann", r#"birthplace: "Lima""#, DOC);
    let stale = resolve(&nexus, &earlier, &current, false).expect_err("stale");
    assert!(
        stale.message.contains("does not stand"),
        "{}",
        stale.message
    );
    assert_eq!(ann(&nexus)["attributes"]["birthplace"], "Lima");
    assert_ne!(ann(&nexus), before);
}

mod model {
    //! Random writes by three sources (one the curator), resolutions of
    //! what is listed (either side kept, some reverted at once), checked
    //! after every step against a reference kept by the test: the listed
    //! attribute contradictions are exactly the reference's, and the store
    //! stays consistent.

    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    const PEOPLE: [&str; 3] = ["Ann", "Bo", "Cy"];
    const KEYS: [&str; 2] = ["city", "job"];
    const VALUES: [&str; 3] = ["Oslo", "Rome", "Lima"];
    const SOURCES: [&str; 3] = ["chat:1", "doc:7", "curator"];

    #[derive(Clone, Debug)]
    enum Step {
        /// Person, key, value, source: one UPSERT with its metadata.
        Write(usize, usize, usize, usize),
        /// A listed contradiction (by index), the side kept (earlier?), and
        /// whether the resolution is reverted at once.
        Resolve(prop::sample::Index, bool, bool),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => (0..3usize, 0..2usize, 0..3usize, 0..3usize).prop_map(|(p, k, v, s)| Step::Write(p, k, v, s)),
            1 => (any::<prop::sample::Index>(), any::<bool>(), any::<bool>()).prop_map(|(i, e, r)| Step::Resolve(i, e, r)),
        ]
    }

    /// What the test expects: each person's values and source, and the
    /// standing overwrites as (person, key) → (earlier, current).
    #[derive(Default, Clone)]
    struct Reference {
        values: BTreeMap<(usize, usize), &'static str>,
        source: BTreeMap<usize, &'static str>,
        standing: BTreeMap<(usize, usize), (&'static str, &'static str)>,
    }

    fn listed(nexus: &Nexus) -> BTreeMap<(String, String), (Json, Json)> {
        attribute_ones(nexus)
            .into_iter()
            .map(|c| {
                let pair = (
                    c.sides[0].value.clone().unwrap_or_default(),
                    c.sides[1].value.clone().unwrap_or_default(),
                );
                ((c.subject.name, c.attribute.unwrap_or_default()), pair)
            })
            .collect()
    }

    fn expected(r: &Reference) -> BTreeMap<(String, String), (Json, Json)> {
        r.standing
            .iter()
            .map(|(&(p, k), &(e, c))| {
                (
                    (PEOPLE[p].to_owned(), KEYS[k].to_owned()),
                    (json!(e), json!(c)),
                )
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn listed_attribute_contradictions_follow_writes_resolutions_and_reverts(
            steps in prop::collection::vec(step(), 1..14),
        ) {
            let dir = tempfile::tempdir().expect("temp dir");
            let nexus = Nexus::open(dir.path()).expect("nexus");
            let mut r = Reference::default();
            for s in &steps {
                match *s {
                    Step::Write(p, k, v, src) => {
                        let (value, source) = (VALUES[v], SOURCES[src]);
                        set(&nexus, PEOPLE[p], &format!("{}: {value:?}", KEYS[k]), &format!("source: {source:?}"));
                        let before = r.source.get(&p).copied();
                        if let Some(old) = r.values.get(&(p, k)).copied().filter(|old| *old != value) {
                            if before.is_some_and(|b| b != source) && source != "curator" {
                                r.standing.insert((p, k), (old, value));
                            } else {
                                r.standing.remove(&(p, k));
                            }
                        }
                        r.values.insert((p, k), value);
                        r.source.insert(p, source);
                    }
                    Step::Resolve(pick, keep_earlier, revert) => {
                        let list = attribute_ones(&nexus);
                        if list.is_empty() {
                            continue;
                        }
                        let c = &list[pick.index(list.len())];
                        let (keep, retire) = if keep_earlier { (0, 1) } else { (1, 0) };
                        let p = PEOPLE.iter().position(|n| *n == c.subject.name).expect("person");
                        let k = KEYS.iter().position(|n| Some(*n) == c.attribute.as_deref()).expect("key");
                        resolve(&nexus, &c.sides[keep].id, &c.sides[retire].id, false).expect("resolve a listed one");
                        if revert {
                            let last = nexus
                                .trace_list(&TraceFilter { limit: Some(1), kind: Some("TRACE".into()), ..TraceFilter::default() })
                                .expect("trace")
                                .entries
                                .remove(0);
                            nexus.revert(&last.id, "curator", false).expect("the newest entry reverts");
                        } else {
                            r.standing.remove(&(p, k));
                            if keep_earlier {
                                let earlier = c.sides[0].value.clone();
                                let earlier = VALUES.iter().copied().find(|v| Some(json!(v)) == earlier).expect("value");
                                r.values.insert((p, k), earlier);
                                // The kept value's provenance comes back with it.
                                let src = c.sides[0].source.as_str().expect("source");
                                let src = SOURCES.iter().copied().find(|s| *s == src).expect("source");
                                r.source.insert(p, src);
                            }
                        }
                    }
                }
                prop_assert_eq!(listed(&nexus), expected(&r), "after {:?}", s);
                let report = nexus.check_store().expect("check");
                prop_assert!(report.ok, "{:#?}", report.violations);
            }
        }
    }
}

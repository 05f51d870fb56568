//! Contradictions (issue 31 §4): two live objects of a functional
//! predicate for one subject are found, with their provenance; a
//! non-functional predicate and superseded links are not; resolving keeps
//! one side and marks the others superseded in one traced write that the
//! trace reverts exactly; bad ids change nothing.

use std::collections::HashMap;

use kip_nexus::contradictions::{ContradictionQuery, Resolve};
use kip_nexus::{Context, ElementId, ExecuteKip, Nexus, TraceFilter};
use serde_json::{Value as Json, json};

fn exec(nexus: &Nexus, command: &str) -> Json {
    let r = nexus.execute(&ExecuteKip::command(command), &Context::default());
    assert!(r.get("error").is_none(), "{command}\n{r:#}");
    r["result"].clone()
}

const MEMORY: &str = r#"
UPSERT {
    CONCEPT ?place { {type: "$ConceptType", name: "Place"} SET ATTRIBUTES { description: "A place." } }
    CONCEPT ?born { {type: "$PropositionType", name: "born_in"} SET ATTRIBUTES { description: "Where a person was born: one place.", subject_types: ["Person"], object_types: ["Place"], functional: true } }
    CONCEPT ?visited { {type: "$PropositionType", name: "visited"} SET ATTRIBUTES { description: "A place a person went to.", subject_types: ["Person"], object_types: ["Place"] } }
    CONCEPT ?paris { {type: "Place", name: "Paris"} }
    CONCEPT ?lyon { {type: "Place", name: "Lyon"} }
    CONCEPT ?rome { {type: "Place", name: "Rome"} }
    CONCEPT ?ada { {type: "Person", name: "Ada"}
        SET PROPOSITIONS { ("visited", ?paris), ("visited", ?lyon) } }
    CONCEPT ?bob { {type: "Person", name: "Bob"} SET PROPOSITIONS { ("born_in", ?rome) } }
}
UPSERT {
    CONCEPT ?ada { {type: "Person", name: "Ada"} SET PROPOSITIONS { ("born_in", {type: "Place", name: "Paris"}) } }
} WITH METADATA { source: "letter-1843", author: "archivist", confidence: 0.9 }
UPSERT {
    CONCEPT ?ada { {type: "Person", name: "Ada"} SET PROPOSITIONS { ("born_in", {type: "Place", name: "Lyon"}) } }
} WITH METADATA { source: ["chat-7"], author: "$self", confidence: 0.4 }
"#;

fn fresh() -> (tempfile::TempDir, Nexus) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus");
    exec(&nexus, MEMORY);
    (dir, nexus)
}

fn all(nexus: &Nexus) -> kip_nexus::contradictions::Contradictions {
    nexus
        .contradictions(&ContradictionQuery::default())
        .expect("contradictions")
}

/// Every element by id, without the engine's mutation counters.
fn snapshot(nexus: &Nexus) -> HashMap<String, Json> {
    nexus
        .read(|g| {
            let mut out = HashMap::new();
            let ids: Vec<ElementId> = g
                .all_concepts()?
                .map(|c| c.map(|c| ElementId::Concept(c.0)))
                .chain(
                    g.all_propositions()?
                        .map(|p| p.map(|p| ElementId::Proposition(p.0))),
                )
                .collect::<Result<_, _>>()?;
            for e in ids {
                let mut v = g.element_json(e)?;
                for k in ["_version", "_updated_at"] {
                    v["metadata"].as_object_mut().map(|m| m.remove(k));
                }
                out.insert(e.to_string(), v);
            }
            Ok(out)
        })
        .expect("snapshot")
}

#[test]
fn two_live_objects_of_a_functional_predicate_are_a_contradiction_with_their_provenance() {
    let (_dir, nexus) = fresh();
    let found = all(&nexus);
    assert_eq!(found.functional, ["born_in"]);
    assert_eq!(found.total, 1, "{found:#?}");
    let c = &found.contradictions[0];
    assert_eq!(
        (c.kind.as_str(), c.predicate.as_str()),
        ("functional", "born_in")
    );
    assert_eq!(
        (c.subject.type_name.as_str(), c.subject.name.as_str()),
        ("Person", "Ada")
    );
    assert_eq!(c.id, format!("functional:{}/born_in", c.subject.id));
    let objects: Vec<&str> = c
        .sides
        .iter()
        .map(|s| s.object.as_ref().expect("a link side").name.as_str())
        .collect();
    // Visited Paris and Lyon (not functional) is no contradiction; Bob's
    // one birthplace is none either.
    assert_eq!(objects, ["Paris", "Lyon"]);
    let (paris, lyon) = (&c.sides[0], &c.sides[1]);
    assert_eq!(paris.source, json!("letter-1843"));
    assert_eq!(paris.author.as_deref(), Some("archivist"));
    assert_eq!(paris.confidence, Some(0.9));
    assert_eq!(lyon.source, json!(["chat-7"]));
    assert_eq!(lyon.author.as_deref(), Some("$self"));
    assert!(paris.created_at.is_some() && paris.updated_at.is_some());
    // Only subjects of the types asked for.
    let place_only = ContradictionQuery {
        types: vec!["Place".into()],
        ..ContradictionQuery::default()
    };
    assert_eq!(nexus.contradictions(&place_only).expect("query").total, 0);
    // The health report counts it, its subject as the sample.
    let health = nexus.health().expect("health");
    assert_eq!(health.contradictions.count, 1);
    assert_eq!(
        health.contradictions.sample,
        std::slice::from_ref(&c.subject.id)
    );
}

#[test]
fn a_superseded_link_is_history_and_no_side() {
    let (_dir, nexus) = fresh();
    exec(
        &nexus,
        r#"UPDATE ?l SET METADATA { superseded: true } WHERE { ?l ({type: "Person", name: "Ada"}, "born_in", {type: "Place", name: "Lyon"}) }"#,
    );
    assert_eq!(all(&nexus).total, 0);
}

#[test]
fn resolving_previews_then_retires_the_other_side_in_one_write_the_trace_reverts() {
    let (_dir, nexus) = fresh();
    let c = all(&nexus).contradictions.remove(0);
    let (keep, retire) = (c.sides[0].id.clone(), c.sides[1].id.clone());
    let before = snapshot(&nexus);
    let ctx = Context::new("test").with_originator("curator");
    let mut r = Resolve {
        keep: keep.clone(),
        retire: vec![retire.clone()],
        reason: Some("The 1843 letter is the better source.".into()),
        dry_run: true,
    };
    // The dry run shows the change and writes nothing.
    let preview = nexus.resolve_contradiction(&r, &ctx).expect("preview");
    assert!(preview.dry_run);
    assert!(
        preview.command.contains("superseded: true"),
        "{}",
        preview.command
    );
    assert!(
        preview.result.to_string().contains(&retire),
        "{:#}",
        preview.result
    );
    assert_eq!(snapshot(&nexus), before);
    assert_eq!(all(&nexus).total, 1);

    r.dry_run = false;
    nexus.resolve_contradiction(&r, &ctx).expect("resolve");
    assert_eq!(all(&nexus).total, 0, "the retired side is history");
    let old = nexus
        .read(|g| g.element_json(retire.parse().expect("id")))
        .expect("read");
    let meta = &old["metadata"];
    assert_eq!(meta["superseded"], json!(true));
    assert_eq!(meta["superseded_by"], json!(keep));
    assert_eq!(
        meta["superseded_reason"],
        json!("The 1843 letter is the better source.")
    );
    assert!(
        meta["superseded_at"]
            .as_str()
            .is_some_and(|t| t.len() >= 20)
    );
    let kept = nexus
        .read(|g| g.element_json(keep.parse().expect("id")))
        .expect("read");
    assert_eq!(kept["metadata"]["supersedes"], json!(retire));

    // One trace entry, by the curator; reverting it restores the graph.
    let filter = TraceFilter {
        originator: Some("curator".into()),
        kind: Some("TRACE".into()),
        ..TraceFilter::default()
    };
    let entries = nexus.trace_list(&filter).expect("trace").entries;
    assert_eq!(entries.len(), 1, "{entries:#?}");
    nexus
        .revert(&entries[0].id, "curator", false)
        .expect("revert");
    assert_eq!(snapshot(&nexus), before);
    assert_eq!(all(&nexus).total, 1);
}

#[test]
fn bad_ids_are_refused_with_a_reason_and_change_nothing() {
    let (_dir, nexus) = fresh();
    let c = all(&nexus).contradictions.remove(0);
    let keep = c.sides[0].id.clone();
    let bob_link = nexus
        .read(|g| {
            let p = g.predicate_id("born_in")?.expect("born_in");
            let bob = g.find_concept_by_names("Person", "Bob")?.expect("Bob");
            Ok(g.propositions(Some(ElementId::Concept(bob)), Some(p), None)?[0].0)
        })
        .expect("Bob's link");
    let before = snapshot(&nexus);
    let ctx = Context::new("test").with_originator("curator");
    let cases = [
        ("C:1", vec![c.sides[1].id.clone()], "not a link id"),
        ("P:999999", vec![c.sides[1].id.clone()], "not in the nexus"),
        (keep.as_str(), vec![], "nothing to retire"),
        (keep.as_str(), vec![keep.clone()], "both kept and retired"),
        (
            keep.as_str(),
            vec![ElementId::Proposition(bob_link).to_string()],
            "by `born_in`, not C:",
        ),
    ];
    for (k, retire, expected) in cases {
        let r = Resolve {
            keep: k.to_owned(),
            retire,
            reason: None,
            dry_run: false,
        };
        let e = nexus.resolve_contradiction(&r, &ctx).expect_err(expected);
        assert!(e.message.contains(expected), "{e:?}");
        assert!(!e.hint.is_empty(), "{e:?}");
    }
    assert_eq!(snapshot(&nexus), before);
}

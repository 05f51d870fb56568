//! Our capsules against the official KIP v1.0-RC11 ones (vendored in
//! `tests/data/kip-rc11-official/`): Genesis (`capsules/genesis/`) and the
//! cognitive memory profile (`capsules/profiles/memory/`, embedded as
//! `kip_nexus::profile::MEMORY`) define the same types and predicates, with
//! the same schemas, as the official capsules; the profile, ours or the
//! official one, imports as an ordinary client and leaves Genesis untouched.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use kip_lang::ast::{Arg, Command, ConceptMatcher, UpsertItem};
use kip_nexus::{Context, ExecuteKip, Nexus, profile};
use serde_json::{Map, Value as Json, json};

/// The official memory-profile capsules, in the order ours run in
/// (`profile::MEMORY`): file `i` here is the official twin of ours `i`.
const OFFICIAL_MEMORY: [&str; 15] = [
    "Preference.kip",
    "Insight.kip",
    "Commitment.kip",
    "SleepTask.kip",
    "Experience.kip",
    "ExperienceStep.kip",
    "Skill.kip",
    "has_step.kip",
    "caused_by.kip",
    "derived_insight.kip",
    "compiled_to.kip",
    "involves.kip",
    "mentions.kip",
    "consolidated_to.kip",
    "derived_from.kip",
];

/// The official capsules our Genesis stands for (the personas aside: they
/// define no type or predicate).
const OFFICIAL_GENESIS: [&str; 3] = ["Genesis.kip", "Person.kip", "Event.kip"];

/// What an instance_schema entry says beyond its prose.
const SCHEMA_KEYS: [&str; 5] = ["type", "item_type", "enum", "default_value", "is_required"];

/// The instance_schema keys our Genesis adds to the official ones, each an
/// extension of KIP Explorer its description names (`functional`: at most
/// one object per subject, for the contradictions queue).
const EXTENSION_KEYS: [&str; 1] = ["functional"];

/// What a predicate definition says beyond its prose.
const PREDICATE_KEYS: [&str; 2] = ["is_symmetric", "is_transitive"];

const MEMORY_TYPES: [&str; 7] = [
    "Commitment",
    "Experience",
    "ExperienceStep",
    "Insight",
    "Preference",
    "Skill",
    "SleepTask",
];

const MEMORY_PREDICATES: [&str; 13] = [
    "assigned_to",
    "caused_by",
    "committed_to",
    "compiled_to",
    "consolidated_to",
    "derived_from",
    "derived_insight",
    "has_step",
    "involves",
    "learned",
    "mentions",
    "owed_to",
    "prefers",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn official(name: &str) -> String {
    let path = root().join("tests/data/kip-rc11-official").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Our Genesis capsules, in the order they run (their file names' order).
fn our_genesis() -> Vec<(String, String)> {
    let dir = root().join("capsules/genesis");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("capsules/genesis")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".kip"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(dir.join(&n)).expect("readable");
            (n, text)
        })
        .collect()
}

/// The concepts a set of capsules writes, `(type, name)` → the attributes
/// its blocks set (merged in order), read from the parsed AST.
type Written = BTreeMap<(String, String), Map<String, Json>>;

fn written<'a>(capsules: impl IntoIterator<Item = (&'a str, &'a str)>) -> Written {
    let mut out = Written::new();
    for (name, text) in capsules {
        let commands =
            kip_lang::parse(text).unwrap_or_else(|e| panic!("{name} does not parse: {e:?}"));
        for command in commands {
            let Command::Upsert(upsert) = command else {
                panic!("{name}: a capsule holds only UPSERTs");
            };
            for item in upsert.items {
                let UpsertItem::Concept(block) = item else {
                    continue;
                };
                let ConceptMatcher::TypeName {
                    ty: Arg::Lit(ty, _),
                    name: Arg::Lit(concept, _),
                } = block.matcher
                else {
                    panic!("{name}: a concept block without a literal {{type, name}}");
                };
                let attributes = out.entry((ty, concept)).or_default();
                if let Some(set) = block.attributes {
                    attributes.extend(set.to_json().expect("no placeholder in a capsule"));
                }
            }
        }
    }
    out
}

/// The definitions among what was written: `(meta-type, name)` → attributes.
fn definitions(w: &Written) -> BTreeMap<(String, String), Map<String, Json>> {
    w.iter()
        .filter(|((ty, _), _)| ty == "$ConceptType" || ty == "$PropositionType")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn sorted_types(v: Option<&Json>) -> BTreeSet<String> {
    v.and_then(Json::as_array)
        .expect("a list of type names")
        .iter()
        .map(|t| t.as_str().expect("a type name").to_owned())
        .collect()
}

/// Everything that makes two definitions the same schema: for a concept
/// type, its instance_schema's keys and each key's type, item_type, enum,
/// default_value and is_required; for a predicate, its subject and object
/// types and whether it is symmetric or transitive. Prose is left out.
fn schema(meta: &str, attributes: &Map<String, Json>) -> Json {
    if meta == "$PropositionType" {
        let mut out = json!({
            "subject_types": sorted_types(attributes.get("subject_types")),
            "object_types": sorted_types(attributes.get("object_types")),
        });
        for key in PREDICATE_KEYS {
            out[key] = attributes.get(key).cloned().unwrap_or(Json::Null);
        }
        return out;
    }
    let Some(instance_schema) = attributes.get("instance_schema") else {
        return json!({});
    };
    let entries = instance_schema.as_object().expect("an object");
    let mut out = Map::new();
    for (key, entry) in entries
        .iter()
        .filter(|(k, _)| !EXTENSION_KEYS.contains(&k.as_str()))
    {
        let entry = entry.as_object().expect("a schema entry is an object");
        let mut kept = Map::new();
        for field in SCHEMA_KEYS {
            if let Some(v) = entry.get(field) {
                kept.insert(field.to_owned(), v.clone());
            }
        }
        out.insert(key.clone(), Json::Object(kept));
    }
    Json::Object(out)
}

/// Every type and predicate the official capsules define, ours define with
/// the same schema, and ours define nothing else.
#[track_caller]
fn assert_same_definitions(official: &Written, ours: &Written) {
    let (official, ours) = (definitions(official), definitions(ours));
    assert_eq!(
        official.keys().collect::<Vec<_>>(),
        ours.keys().collect::<Vec<_>>(),
        "the same types and predicates"
    );
    for ((meta, name), attributes) in &official {
        let mine = &ours[&(meta.clone(), name.clone())];
        assert_eq!(
            schema(meta, mine),
            schema(meta, attributes),
            "{meta} {name}: our schema differs from the official one"
        );
    }
}

#[test]
fn our_genesis_defines_the_official_types_and_predicates_with_their_schemas() {
    let texts: Vec<(String, String)> = OFFICIAL_GENESIS
        .iter()
        .map(|n| ((*n).to_owned(), official(n)))
        .collect();
    let official = written(texts.iter().map(|(n, t)| (n.as_str(), t.as_str())));
    let genesis = our_genesis();
    let ours = written(genesis.iter().map(|(n, t)| (n.as_str(), t.as_str())));
    assert_same_definitions(&official, &ours);

    // The same domains, and nothing but meta-definitions and domains in
    // Genesis proper (the personas are ours, `$self` and `$system`).
    let domains = |w: &Written| -> Vec<String> {
        w.keys()
            .filter(|(ty, _)| ty == "Domain")
            .map(|(_, n)| n.clone())
            .collect()
    };
    assert_eq!(
        domains(&ours),
        ["Archived", "CoreSchema", "System", "Unsorted"]
    );
    assert_eq!(domains(&ours), domains(&official));
    let persons: Vec<&String> = ours
        .keys()
        .filter(|(ty, _)| ty == "Person")
        .map(|(_, n)| n)
        .collect();
    assert_eq!(persons, ["$self", "$system"]);

    // key_instances name only what exists once our Genesis has run (it does
    // not install the memory profile), and nothing the official ones leave
    // out.
    for (ty, name) in [
        ("$ConceptType", "$ConceptType"),
        ("$ConceptType", "$PropositionType"),
        ("$ConceptType", "Domain"),
    ] {
        let key = (ty.to_owned(), name.to_owned());
        let listed = |w: &Written| sorted_types(w[&key].get("key_instances"));
        let (mine, theirs) = (listed(&ours), listed(&official));
        assert!(!mine.is_empty(), "{name} lists its key instances");
        assert!(mine.is_subset(&theirs), "{name}: {mine:?} ⊄ {theirs:?}");
        let instance_type = match name {
            "$ConceptType" => "$ConceptType",
            "$PropositionType" => "$PropositionType",
            _ => "Domain",
        };
        for instance in &mine {
            assert!(
                ours.contains_key(&(instance_type.to_owned(), instance.clone())),
                "{name}'s key instance {instance} is not written by our Genesis"
            );
        }
    }
    // Everything the official lists that our Genesis defines is listed.
    let defined: BTreeSet<String> = ours.keys().map(|(_, n)| n.clone()).collect();
    for (ty, name) in [
        ("$ConceptType", "$ConceptType"),
        ("$ConceptType", "$PropositionType"),
        ("$ConceptType", "Domain"),
    ] {
        let key = (ty.to_owned(), name.to_owned());
        let mine = sorted_types(ours[&key].get("key_instances"));
        for instance in sorted_types(official[&key].get("key_instances")) {
            assert_eq!(
                mine.contains(&instance),
                defined.contains(&instance),
                "{name}'s key instance {instance}"
            );
        }
    }
}

#[test]
fn our_memory_profile_defines_the_official_types_and_predicates_with_their_schemas() {
    assert_eq!(profile::MEMORY.len(), OFFICIAL_MEMORY.len());
    // One file of ours per official capsule, defining the same names.
    for ((ours_name, ours_text), official_name) in profile::MEMORY.iter().zip(OFFICIAL_MEMORY) {
        let theirs = official(official_name);
        let (mine, theirs) = (
            written([(*ours_name, *ours_text)]),
            written([(official_name, theirs.as_str())]),
        );
        assert_eq!(
            definitions(&mine).keys().collect::<Vec<_>>(),
            definitions(&theirs).keys().collect::<Vec<_>>(),
            "{ours_name} and {official_name} define the same names"
        );
        // Each is a capsule of its own: it writes definitions and nothing
        // else (its domain membership aside, which is a proposition).
        assert_eq!(mine.len(), definitions(&mine).len(), "{ours_name}");
    }
    let texts: Vec<(&str, String)> = OFFICIAL_MEMORY.iter().map(|n| (*n, official(n))).collect();
    let official = written(texts.iter().map(|(n, t)| (*n, t.as_str())));
    let ours = written(profile::MEMORY);
    assert_same_definitions(&official, &ours);
    let defined: BTreeSet<String> = definitions(&ours).into_keys().map(|(_, n)| n).collect();
    let expected: BTreeSet<String> = MEMORY_TYPES
        .iter()
        .chain(&MEMORY_PREDICATES)
        .map(|n| (*n).to_owned())
        .collect();
    assert_eq!(defined, expected);
}

/// Every capsule's metadata is the official bootstrap's.
#[test]
fn every_profile_capsule_is_written_with_the_bootstrap_metadata() {
    for (name, text) in profile::MEMORY {
        for command in kip_lang::parse(text).expect("parses") {
            let Command::Upsert(upsert) = command else {
                panic!("{name}: only UPSERTs");
            };
            let metadata = upsert.metadata.expect("WITH METADATA").to_json();
            assert_eq!(
                metadata.map(Json::Object),
                Some(json!({
                    "source": "SystemBootstrap",
                    "author": "$system",
                    "confidence": 1.0,
                    "status": "active"
                })),
                "{name}"
            );
        }
    }
}

// ------------------------------------------------------------- importing

fn fresh() -> (tempfile::TempDir, Nexus) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus opens");
    (dir, nexus)
}

/// Runs a capsule as an ordinary client (no owner's authority).
#[track_caller]
fn import(nexus: &Nexus, name: &str, text: &str) -> Json {
    let r = nexus.execute(&ExecuteKip::command(text), &Context::new("test"));
    assert!(r.get("error").is_none(), "{name}: {r:#}");
    r
}

#[track_caller]
fn ok(nexus: &Nexus, command: &str) -> Json {
    let r = nexus.execute(&ExecuteKip::command(command), &Context::default());
    assert!(r.get("error").is_none(), "{command}\n{r:#}");
    r["result"].clone()
}

fn import_our_profile(nexus: &Nexus) {
    for (name, text) in profile::MEMORY {
        import(nexus, name, text);
    }
}

fn import_official_profile(nexus: &Nexus) {
    for name in OFFICIAL_MEMORY {
        import(nexus, name, &official(name));
    }
}

/// Every concept our Genesis writes, as stored (attributes, metadata with
/// `_version` and `_updated_at`), and every proposition among them: what a
/// profile must leave exactly as it is.
fn genesis_state(nexus: &Nexus) -> BTreeMap<String, Json> {
    let genesis = our_genesis();
    let concepts = written(genesis.iter().map(|(n, t)| (n.as_str(), t.as_str())));
    let mut out = BTreeMap::new();
    for (ty, name) in concepts.keys() {
        let found = ok(
            nexus,
            &format!(
                "FIND(?c) WHERE {{ ?c {{type: {}, name: {}}} }}",
                Json::from(ty.as_str()),
                Json::from(name.as_str())
            ),
        );
        out.insert(format!("{ty} {name}"), found);
        let links = ok(
            nexus,
            &format!(
                "FIND(?l) WHERE {{ ?c {{type: {}, name: {}}} ?l (?c, ?p, ?o) }}",
                Json::from(ty.as_str()),
                Json::from(name.as_str())
            ),
        );
        out.insert(format!("the links of {ty} {name}"), links);
    }
    out
}

/// Names the first Genesis element that changed, rather than printing all.
#[track_caller]
fn assert_unchanged(before: &BTreeMap<String, Json>, after: &BTreeMap<String, Json>) {
    assert_eq!(before.len(), after.len());
    for (what, was) in before {
        assert!(
            !was.as_array().expect("a column").is_empty() || what.starts_with("the links"),
            "{what} was found"
        );
        assert_eq!(&after[what], was, "the profile changed {what}");
    }
}

#[test]
fn our_genesis_leaves_a_fresh_nexus_with_the_official_domains() {
    let (_dir, nexus) = fresh();
    let names = |r: Json| -> Vec<Json> {
        let mut v = r.as_array().expect("a column").clone();
        v.sort_by_key(Json::to_string);
        v
    };
    assert_eq!(
        names(ok(&nexus, r#"FIND(?d.name) WHERE { ?d {type: "Domain"} }"#)),
        [
            json!("Archived"),
            json!("CoreSchema"),
            json!("System"),
            json!("Unsorted")
        ]
    );
    assert_eq!(
        names(ok(
            &nexus,
            r#"FIND(?d.name) WHERE { ?d {type: "Domain"} (?d, "belongs_to_domain", {type: "Domain", name: "CoreSchema"}) }"#
        )),
        [json!("Archived"), json!("System"), json!("Unsorted")]
    );
    let person = ok(&nexus, r#"DESCRIBE CONCEPT TYPE "Person""#);
    assert_eq!(
        person["attributes"]["instance_schema"]["cognitive_state"]["enum"],
        json!(["waking", "sleeping"])
    );
    assert_eq!(
        person["attributes"]["instance_schema"]["id"]["is_required"],
        json!(false)
    );
    let event = ok(&nexus, r#"DESCRIBE CONCEPT TYPE "Event""#);
    assert_eq!(
        event["attributes"]["instance_schema"]["consolidation_status"]["default_value"],
        json!("pending")
    );
    let states = ok(
        &nexus,
        r#"FIND(?p.name, ?p.attributes.cognitive_state) WHERE { ?p {type: "Person"} } ORDER BY ?p.name ASC"#,
    );
    assert_eq!(
        states,
        json!([["$self", "$system"], ["waking", "sleeping"]])
    );
}

#[test]
fn our_memory_profile_imports_as_an_ordinary_client_and_leaves_genesis_untouched() {
    let (_dir, nexus) = fresh();
    let before = genesis_state(&nexus);
    import_our_profile(&nexus);

    let primer = ok(&nexus, "DESCRIBE PRIMER");
    let core = primer["domain_map"]
        .as_array()
        .expect("a domain map")
        .iter()
        .find(|d| d["domain"] == "CoreSchema")
        .expect("CoreSchema in the primer")
        .clone();
    for t in MEMORY_TYPES {
        assert!(
            core["key_concept_types"]
                .as_array()
                .expect("a list")
                .contains(&json!(t)),
            "{t} in {core:#}"
        );
    }
    for p in MEMORY_PREDICATES {
        assert!(
            core["key_proposition_types"]
                .as_array()
                .expect("a list")
                .contains(&json!(p)),
            "{p} in {core:#}"
        );
    }
    let skill = ok(&nexus, r#"DESCRIBE CONCEPT TYPE "Skill""#);
    assert_eq!(
        skill["attributes"]["instance_schema"]["maturity"]["enum"],
        json!(["candidate", "validated", "needs_review", "deprecated"])
    );
    let involves = ok(&nexus, r#"DESCRIBE PROPOSITION TYPE "involves""#);
    assert_eq!(
        involves["attributes"]["subject_types"],
        json!(["Event", "Experience"])
    );

    // The predicates are usable: their signatures hold on write.
    import(
        &nexus,
        "a memory",
        r#"UPSERT {
            CONCEPT ?e { {type: "Experience", name: "Fixing the build"}
                SET ATTRIBUTES { experience_class: "problem_solving", goal: "a green build", initial_state: {}, status: "completed", started_at: "2026-01-01T00:00:00Z" }
                SET PROPOSITIONS { ("involves", {type: "Person", name: "$self"}) } }
            CONCEPT ?s { {type: "ExperienceStep", name: "Fixing the build:0"}
                SET ATTRIBUTES { index: 0, kind: "action", summary: "ran cargo fmt" } }
            PROPOSITION { (?e, "has_step", ?s) }
        }"#,
    );
    let refused = nexus.execute(
        &ExecuteKip::command(
            r#"UPSERT { CONCEPT { {type: "Person", name: "$self"} SET PROPOSITIONS { ("has_step", {type: "ExperienceStep", name: "Fixing the build:0"}) } } }"#,
        ),
        &Context::new("test"),
    );
    assert_eq!(refused["error"]["code"], "KIP_2001", "{refused:#}");

    assert_unchanged(&before, &genesis_state(&nexus));
}

#[test]
fn our_memory_profile_is_a_no_op_the_second_time() {
    let (_dir, nexus) = fresh();
    import_our_profile(&nexus);
    let seq = nexus.last_change_seq().expect("seq");
    import_our_profile(&nexus);
    assert_eq!(nexus.last_change_seq().expect("seq"), seq);
}

#[test]
fn the_official_memory_profile_imports_as_an_ordinary_client_over_our_genesis() {
    let (_dir, nexus) = fresh();
    let before = genesis_state(&nexus);
    import_official_profile(&nexus);
    for t in MEMORY_TYPES {
        ok(&nexus, &format!("DESCRIBE CONCEPT TYPE {}", Json::from(t)));
    }
    for p in MEMORY_PREDICATES {
        ok(
            &nexus,
            &format!("DESCRIBE PROPOSITION TYPE {}", Json::from(p)),
        );
    }
    assert_unchanged(&before, &genesis_state(&nexus));
}

#[test]
fn the_official_memory_profile_imports_over_ours_and_again() {
    let (_dir, nexus) = fresh();
    let before = genesis_state(&nexus);
    import_our_profile(&nexus);
    import_official_profile(&nexus);
    let seq = nexus.last_change_seq().expect("seq");
    import_official_profile(&nexus);
    assert_eq!(
        nexus.last_change_seq().expect("seq"),
        seq,
        "a second import changes nothing"
    );
    assert_unchanged(&before, &genesis_state(&nexus));
}

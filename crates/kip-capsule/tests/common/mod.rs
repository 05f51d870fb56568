//! Helpers shared by the capsule tests: nexuses, the example capsules, and
//! a canonical dump of a whole graph for comparing two nexuses.

#![allow(dead_code)] // each test file uses a different subset

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use kip_capsule::ImportReport;
use kip_nexus::ElementId;
use kip_nexus::{Nexus, Origin};
use serde_json::Value as Json;

pub fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../capsules/examples")
}

pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

pub fn origin() -> Origin {
    Origin {
        name: "test".into(),
    }
}

pub fn fresh() -> (tempfile::TempDir, Nexus) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus opens");
    (dir, nexus)
}

#[track_caller]
pub fn imported(nexus: &Nexus, path: &Path) -> ImportReport {
    let r = kip_capsule::import_path(nexus, path, &origin());
    assert!(
        r.is_imported(),
        "{}",
        serde_json::to_string_pretty(&r).unwrap_or_default()
    );
    r
}

#[track_caller]
pub fn imported_text(nexus: &Nexus, name: &str, text: &str) -> ImportReport {
    let r = kip_capsule::import_text(nexus, name, text, &origin());
    assert!(
        r.is_imported(),
        "{}",
        serde_json::to_string_pretty(&r).unwrap_or_default()
    );
    r
}

/// A nexus holding the medical example (the three .kip capsules).
pub fn medical() -> (tempfile::TempDir, Nexus) {
    let (dir, nexus) = fresh();
    for f in [
        "10_medical_schema.kip",
        "11_medical_data.kip",
        "12_cognizine.kip",
    ] {
        imported(&nexus, &examples_dir().join(f));
    }
    (dir, nexus)
}

/// A JSON value with every object's keys sorted, as text.
fn canon(v: &Json) -> String {
    fn sorted(v: &Json) -> Json {
        match v {
            Json::Object(m) => {
                let b: BTreeMap<&String, Json> = m.iter().map(|(k, v)| (k, sorted(v))).collect();
                Json::Object(b.into_iter().map(|(k, v)| (k.clone(), v)).collect())
            }
            Json::Array(a) => Json::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}

/// Every element of the graph by identity, with its attributes and its
/// metadata less the engine's `_` keys: two nexuses hold the same
/// knowledge exactly when their graphs are equal.
pub fn graph(nexus: &Nexus) -> BTreeSet<String> {
    nexus
        .read(|g| {
            let mut out = BTreeSet::new();
            let mut keys: HashMap<ElementId, String> = HashMap::new();
            let meta = |m: &serde_json::Map<String, Json>| {
                let user: serde_json::Map<String, Json> = m
                    .iter()
                    .filter(|(k, _)| !k.starts_with('_'))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                canon(&Json::Object(user))
            };
            for entry in g.all_concepts()? {
                let (id, rec) = entry?;
                let key = format!("{}:{:?}", g.type_name(rec.type_id)?, rec.name);
                out.insert(format!(
                    "{key} {} {}",
                    canon(&Json::Object(rec.attributes.clone())),
                    meta(&rec.metadata)
                ));
                keys.insert(ElementId::Concept(id), key);
            }
            for entry in g.all_propositions()? {
                let (id, rec) = entry?;
                let key = format!(
                    "({} {} {})",
                    keys[&rec.subject],
                    g.predicate_name(rec.predicate)?,
                    keys[&rec.object]
                );
                out.insert(format!(
                    "{key} {} {}",
                    canon(&Json::Object(rec.attributes.clone())),
                    meta(&rec.metadata)
                ));
                keys.insert(ElementId::Proposition(id), key);
            }
            Ok(out)
        })
        .expect("graph reads")
}

/// What a report's errors say, one line each: `code path line:column message`.
pub fn error_lines(r: &ImportReport) -> Vec<String> {
    r.errors
        .iter()
        .map(|e| {
            format!(
                "{} {} {}:{} {}",
                e.code,
                e.path.as_deref().unwrap_or("-"),
                e.line.unwrap_or(0),
                e.column.unwrap_or(0),
                e.message
            )
        })
        .collect()
}

/// Phases never go back, items and bytes grow within a phase, the
/// size is the file's, items stay within their total (0: not known yet),
/// and within a phase two reports are at least
/// [`kip_capsule::PROGRESS_EVERY`] apart unless the later one ends it.
#[track_caller]
pub fn assert_progress_is_ordered_and_paced(seen: &[kip_capsule::Progress], size: u64) {
    let rank = |p: kip_capsule::Phase| match p {
        kip_capsule::Phase::Parsing => 0,
        kip_capsule::Phase::Validating => 1,
        kip_capsule::Phase::Applying => 2,
    };
    let every = kip_capsule::PROGRESS_EVERY.as_millis() as u64;
    for p in seen {
        assert_eq!(p.total_bytes, size);
        assert!(
            p.bytes <= size && (p.total == 0 || p.done <= p.total),
            "{p:?}"
        );
    }
    for w in seen.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert!(rank(a.phase) <= rank(b.phase), "{a:?} then {b:?}");
        assert!(b.elapsed_ms >= a.elapsed_ms, "{a:?} then {b:?}");
        if a.phase == b.phase {
            assert!(b.done > a.done && b.bytes >= a.bytes, "{a:?} then {b:?}");
            if b.total == 0 || b.done < b.total {
                assert!(b.elapsed_ms - a.elapsed_ms + 1 >= every, "{a:?} then {b:?}");
            }
        }
    }
}

//! What the engine's test files share: the example capsules and a nexus
//! holding the medical example.

#![allow(dead_code)] // each test file uses a different subset

use std::collections::BTreeMap;
use std::path::PathBuf;

use kip_nexus::{Context, ElementId, ExecuteKip, Nexus};
use serde_json::Value as Json;

pub fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../capsules/examples")
}

/// A fresh nexus holding the medical example (schema, data, Cognizine).
pub fn fixture() -> (tempfile::TempDir, Nexus) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus opens");
    for name in [
        "10_medical_schema.kip",
        "11_medical_data.kip",
        "12_cognizine.kip",
    ] {
        let text = std::fs::read_to_string(examples_dir().join(name)).expect("example capsule");
        let r = nexus.execute(&ExecuteKip::command(text), &Context::default());
        assert!(r.get("error").is_none(), "{name}: {r:#}");
    }
    (dir, nexus)
}

/// Every element of the graph by id, as `element_json` shows it
/// (attributes, metadata, ends): what a revert, a time travel or a triage
/// action is checked against.
pub fn elements(nexus: &Nexus) -> BTreeMap<String, Json> {
    nexus
        .read(|g| {
            let mut out = BTreeMap::new();
            for c in g.all_concepts()? {
                let v = g.element_json(ElementId::Concept(c?.0))?;
                out.insert(v["id"].as_str().unwrap_or_default().to_owned(), v);
            }
            for p in g.all_propositions()? {
                let v = g.element_json(ElementId::Proposition(p?.0))?;
                out.insert(v["id"].as_str().unwrap_or_default().to_owned(), v);
            }
            Ok(out)
        })
        .expect("elements")
}

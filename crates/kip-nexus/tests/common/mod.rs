//! What the engine's test files share: the example capsules and a nexus
//! holding the medical example.

#![allow(dead_code)] // each test file uses a different subset

use std::path::PathBuf;

use kip_nexus::{Context, ExecuteKip, Nexus};

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

//! Genesis: the capsules of seed 001's appendices 2 and 3, embedded in the
//! binary and applied once, in one transaction, when a nexus is created;
//! a nexus made with an earlier Genesis is upgraded when it is opened
//! (`upgrade`).

use kip_lang::Errors;
use kip_store::Store;
use rand::Rng as _;

use crate::graph::{OrInternal as _, Result, TxnError};
use crate::kml::Writer;

/// The bootstrap capsules, in the order they must run.
pub const CAPSULES: [(&str, &str); 5] = [
    (
        "01_genesis.kip",
        include_str!("../../../capsules/genesis/01_genesis.kip"),
    ),
    (
        "02_person.kip",
        include_str!("../../../capsules/genesis/02_person.kip"),
    ),
    (
        "03_event.kip",
        include_str!("../../../capsules/genesis/03_event.kip"),
    ),
    (
        "04_self.kip",
        include_str!("../../../capsules/genesis/04_self.kip"),
    ),
    (
        "05_system.kip",
        include_str!("../../../capsules/genesis/05_system.kip"),
    ),
];

const SECRET_KEY: &str = "nexus/cursor_secret";

/// Bootstraps a fresh store (never an existing one) and returns the nexus's
/// cursor secret.
pub fn ensure(store: &Store) -> Result<u64> {
    bootstrap(store, &CAPSULES, Some(VERSION))
}

/// Bootstraps a fresh store with `capsules`, recording `version` (none:
/// as version 1 did, which recorded nothing), unless another process
/// already did; returns the cursor secret.
pub(crate) fn bootstrap(
    store: &Store,
    capsules: &[(&str, &str)],
    version: Option<u64>,
) -> Result<u64> {
    let existing = store.read(|txn| store.get_state(txn, SECRET_KEY)).kip()?;
    if let Some(secret) = existing.as_ref().and_then(serde_json::Value::as_u64) {
        return Ok(secret);
    }
    let secret: u64 = rand::rng().random();
    store
        .write(|txn| -> std::result::Result<u64, TxnError> {
            // Another process may have bootstrapped meanwhile: check again inside
            // the write transaction, which excludes other writers.
            if let Some(s) = store
                .get_state(txn, SECRET_KEY)
                .kip()?
                .as_ref()
                .and_then(serde_json::Value::as_u64)
            {
                return Ok(s);
            }
            let now = crate::clock::now();
            for (name, text) in capsules {
                let commands = kip_lang::parse(text).map_err(|e: Errors| {
                    let mut e = e.into_response_error();
                    e.message = format!("genesis capsule {name}: {}", e.message);
                    e
                })?;
                for command in &commands {
                    if let kip_lang::ast::Command::Upsert(u) = command {
                        let mut w = Writer::new(store, txn, text, now.clone());
                        w.bootstrap = true;
                        w.upsert(u)?;
                    }
                }
            }
            store.put_state(txn, SECRET_KEY, &serde_json::json!(secret))?;
            if let Some(version) = version {
                store.put_state(txn, VERSION_KEY, &serde_json::json!(version))?;
            }
            crate::trace::declare_genesis(store, txn, now)?;
            Ok(secret)
        })
        .map_err(|e| e.0)
}

/// The version of the bundled Genesis: 1 was seed 001's appendices as
/// first written, 2 is their KIP v1.0-RC11 content model (operational
/// domains, `key_instances`, the schema meta-keys), 3 documents a
/// predicate's `functional` key (the contradictions queue). A nexus records
/// the version it was bootstrapped or last upgraded with.
pub const VERSION: u64 = 3;

/// Where a nexus records its Genesis version (absent: version 1).
pub(crate) const VERSION_KEY: &str = "nexus/genesis_version";

/// The Genesis version `store` records.
pub(crate) fn recorded_version(store: &Store, txn: &kip_store::RoTxn<'_>) -> Result<u64> {
    Ok(store
        .get_state(txn, VERSION_KEY)
        .kip()?
        .as_ref()
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(1))
}

/// A nexus in `dir` bootstrapped with `capsules` as [`bootstrap`] does
/// (for tests that make one as an earlier version did).
#[cfg(test)]
pub(crate) fn bootstrap_folder(
    dir: &std::path::Path,
    capsules: &[(&str, &str)],
    version: Option<u64>,
) {
    let store = Store::open(dir).expect("the store opens");
    bootstrap(&store, capsules, version).expect("the nexus is bootstrapped");
}

#[cfg(test)]
mod tests {
    use super::CAPSULES;

    /// The capsules are embedded from `capsules/genesis/`, outside this
    /// crate: every file there is embedded, in name order, byte for byte, so
    /// a capsule added or edited there cannot be missed by the engine.
    #[test]
    fn every_genesis_capsule_of_the_folder_is_embedded_as_it_is() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../capsules/genesis");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .expect("capsules/genesis exists")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".kip"))
            .collect();
        files.sort();
        let embedded: Vec<&str> = CAPSULES.iter().map(|(name, _)| *name).collect();
        assert_eq!(files, embedded);
        for (name, text) in CAPSULES {
            let on_disk = std::fs::read_to_string(dir.join(name)).expect("readable");
            assert_eq!(on_disk, text, "{name} differs from the embedded copy");
        }
    }
}

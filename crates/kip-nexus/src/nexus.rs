//! The [`Nexus`] handle: a nexus folder opened (created and bootstrapped
//! with the Genesis capsules when new), reads over one snapshot, the
//! change log, and the small key-value state hosts keep beside the
//! knowledge. What a nexus folder is (its data file) is said here too.
//!
//! The handle's other methods live with their jobs: running commands in
//! `run` and `execute`, bulk writes in `bulk`, copies in `backup`, the
//! cognitive trace in `trace`.

use std::path::Path;

use kip_lang::{ErrorCode, KipError};
use kip_store::{CheckReport, Store, StoreSizes};
use serde_json::Value as Json;

use crate::graph::{Graph, OrInternal as _, Result, TxnError};
use crate::{embedding, genesis, kml, trace};

/// A Cognitive Nexus on disk.
pub struct Nexus {
    // The fields are the crate's: the other modules add their jobs to the
    // handle in `impl Nexus` blocks of their own, which reach them.
    pub(crate) store: Store,
    /// Keys the cursors this nexus issues (see `cursor`).
    pub(crate) secret: u64,
    /// The cognitive trace's settings and folded reads (see `trace`).
    pub(crate) tracer: trace::Tracer,
    /// The links the last group writes created (see [`kml::RecentGroups`]).
    pub(crate) recent_groups: std::sync::Mutex<kml::RecentGroups>,
    /// Where each sweep's next UPDATE cycle starts (see `kql::sweep`).
    pub(crate) sweep_starts: crate::kql::SweepStarts,
    pub(crate) semantic: embedding::Semantic,
    /// The cached view of a past time (see `trace::as_of`).
    pub(crate) time_travel: trace::TimeTravel,
}

impl Drop for Nexus {
    fn drop(&mut self) {
        // Folded reads live in memory until a write takes them along.
        if self.tracer.has_folds() {
            self.flush_trace_folds(true);
        }
    }
}

impl std::fmt::Debug for Nexus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nexus")
            .field("path", &self.store.path())
            .finish_non_exhaustive()
    }
}

/// The change log after a sequence number (see [`Nexus::changes_since`]).
#[derive(Clone, Debug, Default)]
pub struct ChangeLog {
    /// The sequence number of the last committed change.
    pub last_seq: u64,
    /// `(seq, {origin, pid, at, stats})` in sequence order.
    pub entries: Vec<(u64, Json)>,
}

impl Nexus {
    /// Opens the nexus in `dir`, creating and bootstrapping it if needed,
    /// upgrading its Genesis if an earlier version made it.
    pub fn open(dir: &Path) -> Result<Nexus> {
        let store = Store::open(dir).kip()?;
        let secret = genesis::ensure(&store)?;
        let mut nexus = Nexus {
            store,
            secret,
            tracer: trace::Tracer::default(),
            recent_groups: std::sync::Mutex::default(),
            sweep_starts: crate::kql::SweepStarts::default(),
            semantic: embedding::Semantic::default(),
            time_travel: trace::TimeTravel::default(),
        };
        // A nexus an earlier version made gets this version's Genesis.
        nexus.upgrade_genesis()?;
        // SEARCH by meaning where a model is installed (its vectors are
        // queued for embedding when the store has none of this model's).
        nexus.set_embedder(embedding::shared_model())?;
        Ok(nexus)
    }

    /// Opens the nexus in `dir` only if one is there: a folder without a
    /// store (`data.mdb`) is refused, naming it, instead of being created.
    pub fn open_existing(dir: &Path) -> Result<Nexus> {
        if !dir.join(DATA_FILE).is_file() {
            return Err(not_a_nexus(dir));
        }
        Nexus::open(dir)
    }

    /// Verifies every invariant the store keeps between its databases (in
    /// one snapshot; writers keep going) and reports each violation.
    pub fn check_store(&self) -> Result<CheckReport> {
        self.store.check().kip()
    }

    /// Where the store's bytes go, per database (entries, key and value
    /// bytes, pages), in one snapshot; reads every entry, writes nothing.
    pub fn store_sizes(&self) -> Result<StoreSizes> {
        self.store.sizes().kip()
    }

    /// Makes room for a write of about `extra` bytes (see
    /// [`kip_store::Store::reserve`]).
    pub fn reserve(&self, extra: u64) {
        self.store.reserve(extra);
    }
}

/// The name of the store's data file in a nexus folder.
pub(crate) const DATA_FILE: &str = "data.mdb";

pub(crate) fn not_a_nexus(dir: &Path) -> KipError {
    KipError::new(
        ErrorCode::NotFound,
        format!("{} is not a nexus: it holds no {DATA_FILE}", dir.display()),
    )
    .with_hint("Name the folder of an existing nexus (the one `kip` or the app created).")
}

impl Nexus {
    /// The nexus folder.
    pub fn path(&self) -> &Path {
        self.store.path()
    }

    /// Runs `f` on a read view of one consistent snapshot.
    pub fn read<T>(&self, f: impl FnOnce(&Graph<'_>) -> Result<T>) -> Result<T> {
        self.store
            .read(|txn| {
                let g = Graph::new(&self.store, txn).with_embedder(self.semantic.model.clone());
                f(&g).map_err(TxnError)
            })
            .map_err(|e| e.0)
    }

    /// The sequence number of the last committed change: one tiny read, cheap
    /// enough to poll for other processes' writes.
    pub fn last_change_seq(&self) -> Result<u64> {
        self.store.current_change_seq().kip()
    }

    /// The change-log entries after `since` (the log keeps the last 10,000),
    /// with the last sequence number, read in one snapshot.
    pub fn changes_since(&self, since: u64) -> Result<ChangeLog> {
        self.store
            .read(|txn| {
                Ok::<_, TxnError>(ChangeLog {
                    last_seq: self.store.last_change_seq(txn)?,
                    entries: self.store.changes_since(txn, since)?,
                })
            })
            .map_err(|e| e.0)
    }

    /// A host's remembered value under `key` (e.g. the watcher's memory of a
    /// file). Host state is not knowledge: it is neither queried nor logged.
    pub fn state(&self, key: &str) -> Result<Option<Json>> {
        self.store.read(|txn| self.store.get_state(txn, key)).kip()
    }

    /// Every remembered `(key, value)` whose key starts with `prefix`.
    pub fn states_with_prefix(&self, prefix: &str) -> Result<Vec<(String, Json)>> {
        self.store
            .read(|txn| self.store.states_with_prefix(txn, prefix))
            .kip()
    }

    /// Remembers `value` under `key`, in a write transaction of its own.
    pub fn set_state(&self, key: &str, value: &Json) -> Result<()> {
        self.store
            .write(|txn| self.store.put_state(txn, key, value))
            .kip()
    }

    /// Remembers `value` under `key` unless something is there already, in
    /// one write transaction: of two processes claiming the same key, one
    /// wins. Answers what was there (`None`: the claim is this caller's).
    pub fn claim_state(&self, key: &str, value: &Json) -> Result<Option<Json>> {
        self.store
            .write(|txn| {
                if let Some(held) = self.store.get_state(txn, key)? {
                    return Ok(Some(held));
                }
                self.store.put_state(txn, key, value)?;
                Ok(None)
            })
            .kip()
    }

    /// Forgets `key`; `true` if it was there.
    pub fn remove_state(&self, key: &str) -> Result<bool> {
        self.store
            .write(|txn| self.store.delete_state(txn, key))
            .kip()
    }
}

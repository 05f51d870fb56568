//! `kip-nexus`: the Cognitive Nexus — the KIP engine behind `execute_kip`.
//!
//! The whole public surface is here, at the crate root:
//!
//! - [`Nexus::open`] opens (or creates and bootstraps with the Genesis
//!   capsules) a nexus folder.
//! - [`Nexus::execute`] takes the arguments of the spec's `execute_kip`
//!   function (one command or a batch, parameters, dry run, explain) with a
//!   [`Context`] (who asks, and whether they may write) and returns the KIP
//!   response object.
//! - [`Nexus::run`] runs commands a caller has already parsed and bound
//!   (the capsule pipeline), with [`RunOptions`].
//! - [`Nexus::read`] hands a [`Graph`] over one consistent snapshot to
//!   readers that need more than KIP (export, the bundle schema, the
//!   neighbourhood of a concept).
//! - The change log ([`Nexus::last_change_seq`], [`Nexus::changes_since`])
//!   and a small key-value state table for hosts ([`Nexus::state`] and
//!   friends).
//! - The cognitive trace (BRIEF §7): every command's entry, written with
//!   it; [`Nexus::trace_list`], [`Nexus::trace_add`], [`Nexus::trace_flag`],
//!   [`Nexus::revert`] and friends.
//!
//! Every command runs in one LMDB transaction: readers see a consistent
//! snapshot, a KML command is atomic (any error aborts everything it did),
//! and a dry run executes exactly and then aborts.
//!
//! Modules (all private; what other crates need is re-exported below):
//! `kql` plans and runs queries, `kml` writes, `meta` answers DESCRIBE and
//! SEARCH, `search` keeps the text index, `schema` knows the in-graph schema
//! and the protected elements, `graph` is the read view of the store,
//! `execute` handles `execute_kip` requests and `run` owns the
//! transactions. This crate knows nothing of files, windows or sockets, and
//! nothing above it sees `kip-store`.

mod cursor;
mod execute;
mod explain;
mod export;
mod filter;
mod genesis;
mod graph;
mod kml;
mod kql;
mod meta;
mod pattern;
mod request;
mod run;
mod schema;
mod search;
mod stats;
mod tokenize;
mod trace;
mod value;

use std::path::Path;

use kip_store::Store;
use serde_json::Value as Json;

use graph::{OrInternal, TxnError};

pub use execute::{Access, Context};
pub use explain::{Cause, Explain, Fix, Range, Step};
pub use graph::{BELONGS_TO_DOMAIN, CONCEPT_TYPE, DOMAIN, Graph, PROPOSITION_TYPE, Result};
pub use kip_store::{ConceptId, ConceptRecord, ElementId, PropositionId, PropositionRecord};
pub use kml::{ChangeEnd, ChangeKind, ChangeOp, ChangeState, ElementChange};
pub use pattern::{Block, Edge, Filter, Node, Pattern, outline};
pub use request::{BatchItem, ExecuteKip};
pub use run::{Mode, Origin, Outcome, RunOptions, response};
pub use schema::{has_immutable_id, is_protected, type_list};
pub use stats::Stats;
pub use trace::{
    DEFAULT_TRACE_PAGE, Entry as TraceEntry, EntryType as TraceEntryType, MAX_TRACE_PAGE,
    NewEntry as NewTraceEntry, Reverted, TraceFilter, TraceNote, TracePage, TraceSettings,
};

/// A Cognitive Nexus on disk.
pub struct Nexus {
    store: Store,
    /// Keys the cursors this nexus issues (see `cursor`).
    secret: u64,
    /// The cognitive trace's settings and folded reads (see `trace`).
    tracer: trace::Tracer,
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
    /// Opens the nexus in `dir`, creating and bootstrapping it if needed.
    pub fn open(dir: &Path) -> Result<Nexus> {
        let store = Store::open(dir).kip()?;
        let secret = genesis::ensure(&store)?;
        Ok(Nexus {
            store,
            secret,
            tracer: trace::Tracer::default(),
        })
    }

    /// The nexus folder.
    pub fn path(&self) -> &Path {
        self.store.path()
    }

    /// Runs `f` on a read view of one consistent snapshot.
    pub fn read<T>(&self, f: impl FnOnce(&Graph<'_>) -> Result<T>) -> Result<T> {
        self.store
            .read(|txn| {
                let g = Graph::new(&self.store, txn);
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

    /// Forgets `key`; `true` if it was there.
    pub fn remove_state(&self, key: &str) -> Result<bool> {
        self.store
            .write(|txn| self.store.delete_state(txn, key))
            .kip()
    }
}

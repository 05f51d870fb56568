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
//!   neighbourhood of a concept); [`Nexus::read_queries`] hands a
//!   [`Snapshot`] that also runs parsed FINDs, all in that one snapshot
//!   (the logic-property resolver's batches).
//! - [`logic_properties`] reads (and checks) the logic properties a
//!   `$ConceptType` definition declares (BRIEF §8); the KML writer refuses
//!   a bad declaration with `KIP_2003`.
//! - Maintenance: [`Nexus::check_store`] verifies the store's invariants,
//!   [`Nexus::backup`] writes a consistent, compacted copy while others keep
//!   writing, [`restore`] puts a backup in place of a nexus no process has
//!   open, and [`Nexus::open_existing`] refuses a folder that holds none.
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

pub mod bulk;
mod clock;
mod cursor;
mod execute;
mod explain;
mod export;
mod filter;
mod genesis;
mod graph;
mod kml;
mod known;
mod kql;
mod logic;
mod meta;
mod pattern;
mod request;
mod run;
mod schema;
mod search;
mod snapshot;
mod stats;
mod tokenize;
mod trace;
mod value;
mod write;

use std::path::Path;

use kip_lang::{ErrorCode, KipError};
use kip_store::Store;
use serde_json::Value as Json;

use graph::{OrInternal, TxnError};

pub use execute::{Access, Context};
pub use explain::{Cause, Explain, Fix, Range, Step};
pub use graph::{BELONGS_TO_DOMAIN, CONCEPT_TYPE, DOMAIN, Graph, PROPOSITION_TYPE, Result};
pub use kip_store::{
    CheckCounts, CheckReport, ConceptId, ConceptRecord, ElementId, PropositionId,
    PropositionRecord, Violation,
};
pub use kip_store::{DatabaseSize, StoreSizes};
pub use kml::{ChangeEnd, ChangeKind, ChangeOp, ChangeState, ElementChange};
pub use logic::{
    DataSource, LOGIC_PROPERTIES, LogicKind, LogicProperty, ParamType, Parameter, STEPS, ValueFrom,
    check_url as check_logic_url, declared as logic_properties,
};
pub use pattern::{Block, Edge, Filter, Node, Pattern, outline};
pub use request::{BatchItem, ExecuteKip};
pub use run::{Mode, Origin, Outcome, RunOptions, response};
pub use schema::{has_immutable_id, is_protected, type_list};
pub use snapshot::Snapshot;
pub use stats::Stats;
pub use trace::{
    DEFAULT_TRACE_PAGE, Entry as TraceEntry, EntryType as TraceEntryType, MAX_TRACE_PAGE,
    NewEntry as NewTraceEntry, Reverted, RevertedTo, TraceFilter, TraceNote, TracePage,
    TraceSettings,
};

/// A Cognitive Nexus on disk.
pub struct Nexus {
    store: Store,
    /// Keys the cursors this nexus issues (see `cursor`).
    secret: u64,
    /// The cognitive trace's settings and folded reads (see `trace`).
    tracer: trace::Tracer,
    /// The links the last group writes created (see [`kml::RecentGroups`]).
    recent_groups: std::sync::Mutex<kml::RecentGroups>,
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
            recent_groups: std::sync::Mutex::default(),
        })
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

    /// Writes a consistent, compacted copy of the nexus into the folder
    /// `dest` (created if needed), as `dest/data.mdb`, while other threads
    /// and processes keep reading and writing: the copy is one snapshot.
    /// The copy is written beside and renamed into place, so an interrupted
    /// backup leaves no half file; an existing `dest/data.mdb` is refused.
    /// Writes a packed copy of the nexus (one snapshot, every database in key
    /// order, full pages, no free pages) as a new store in the folder `dest`;
    /// returns its size in bytes. What `kip compact` puts in place.
    pub fn packed_copy(&self, dest: &Path) -> Result<u64> {
        self.store.copy_packed(dest).kip()
    }

    /// Makes room for a write of about `extra` bytes (see
    /// [`kip_store::Store::reserve`]).
    pub fn reserve(&self, extra: u64) {
        self.store.reserve(extra);
    }

    pub fn backup(&self, dest: &Path) -> Result<Backup> {
        let io = |what: &str, e: std::io::Error| {
            KipError::new(
                ErrorCode::InternalError,
                format!("cannot {what} {}: {e}", dest.display()),
            )
        };
        std::fs::create_dir_all(dest).map_err(|e| io("create the backup folder", e))?;
        let target = dest.join(DATA_FILE);
        if target.exists() {
            return Err(KipError::new(
                ErrorCode::DuplicateExists,
                format!("{} already holds a backup", target.display()),
            )
            .with_hint("Back up into a new or empty folder."));
        }
        let partial = dest.join(format!("{DATA_FILE}.partial"));
        let _ = std::fs::remove_file(&partial);
        self.store.copy_compacted(&partial).kip()?;
        std::fs::rename(&partial, &target).map_err(|e| io("complete the backup in", e))?;
        let bytes = std::fs::metadata(&target)
            .map_err(|e| io("read the backup in", e))?
            .len();
        Ok(Backup {
            path: target,
            bytes,
            last_change_seq: self.last_change_seq()?,
        })
    }
}

/// The name of the store's data file in a nexus folder.
const DATA_FILE: &str = "data.mdb";

fn not_a_nexus(dir: &Path) -> KipError {
    KipError::new(
        ErrorCode::NotFound,
        format!("{} is not a nexus: it holds no {DATA_FILE}", dir.display()),
    )
    .with_hint("Name the folder of an existing nexus (the one `kip` or the app created).")
}

/// What [`Nexus::backup`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backup {
    /// The copy (`dest/data.mdb`).
    pub path: std::path::PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// The last change the copy may include (changes committed while the
    /// copy ran may be in it or not; none is half in it).
    pub last_change_seq: u64,
}

/// The process id of another process that has the nexus in `dir` open
/// (a server, a watcher, the app), if any.
pub fn opened_elsewhere(dir: &Path) -> Result<Option<u32>> {
    kip_store::opened_elsewhere(dir).kip()
}

/// Puts the backup in `src` (a folder holding `data.mdb`, or that file) in
/// place of the nexus in `dest`. The backup is checked first (it must open
/// and pass [`Nexus::check_store`]); a `dest` that holds a nexus is only
/// replaced with `force`, and never while another process has it open. The
/// replaced data file is kept as `data.mdb.before-restore`. Returns the
/// restored nexus's check report.
pub fn restore(src: &Path, dest: &Path, force: bool) -> Result<CheckReport> {
    let src_file = if src.is_dir() {
        src.join(DATA_FILE)
    } else {
        src.to_path_buf()
    };
    if !src_file.is_file() {
        return Err(not_a_nexus(src));
    }
    let io = |what: &str, path: &Path, e: std::io::Error| {
        KipError::new(
            ErrorCode::InternalError,
            format!("cannot {what} {}: {e}", path.display()),
        )
    };
    if let Some(pid) = opened_elsewhere(dest)? {
        return Err(KipError::new(
            ErrorCode::ImmutableTarget,
            format!("the nexus at {} is in use by process {pid}", dest.display()),
        )
        .with_hint("Stop every process that has it open (kip serve, kip mcp, kip watch, the app), then restore."));
    }
    let target = dest.join(DATA_FILE);
    if target.exists() && !force {
        return Err(KipError::new(
            ErrorCode::DuplicateExists,
            format!("{} already holds a nexus", dest.display()),
        )
        .with_hint(
            "Pass --force to replace it (its data file is kept as data.mdb.before-restore).",
        ));
    }
    // Check the backup in a staging folder beside the target, so the final
    // step is a rename on one file system.
    std::fs::create_dir_all(dest).map_err(|e| io("create", dest, e))?;
    let staging = dest.join(".restoring");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|e| io("create", &staging, e))?;
    std::fs::copy(&src_file, staging.join(DATA_FILE)).map_err(|e| io("copy", &src_file, e))?;
    install_staged(&staging, dest, &src_file)
}

/// The end of a restore: checks the store in `staging` (a folder beside
/// `dest`'s data file, on the same file system), and if it passes, sets
/// `dest`'s data file aside as `data.mdb.before-restore` and renames the
/// staged one into its place (owner-only), then removes `staging`.
/// `kip compact` stages its packed copy there directly, so the file is
/// written once. `source` names the store in errors. The caller has made
/// sure no other process has `dest` open.
pub fn install_staged(staging: &Path, dest: &Path, source: &Path) -> Result<CheckReport> {
    let io = |what: &str, path: &Path, e: std::io::Error| {
        KipError::new(
            ErrorCode::InternalError,
            format!("cannot {what} {}: {e}", path.display()),
        )
    };
    let target = dest.join(DATA_FILE);
    let report = {
        let staged = Nexus::open_existing(staging).map_err(|e| {
            KipError::new(
                e.code,
                format!(
                    "the backup {} cannot be opened: {}",
                    source.display(),
                    e.message
                ),
            )
        })?;
        staged.check_store()?
    };
    if !report.ok {
        let _ = std::fs::remove_dir_all(staging);
        return Err(KipError::new(
            ErrorCode::InternalError,
            format!(
                "the backup {} fails the integrity check ({} violations)",
                source.display(),
                report.violations.len() as u64 + report.unlisted
            ),
        )
        .with_data("check", serde_json::to_value(&report).unwrap_or_default()));
    }
    if target.exists() {
        std::fs::rename(&target, dest.join(format!("{DATA_FILE}.before-restore")))
            .map_err(|e| io("set aside", &target, e))?;
    }
    // Only the owner reads a nexus, as LMDB creates it (a copy would take
    // the umask's wider mode).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let staged = staging.join(DATA_FILE);
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| io("restrict", &staged, e))?;
    }
    // LMDB rebuilds its lock file; a stale one could describe the old map.
    let _ = std::fs::remove_file(dest.join("lock.mdb"));
    std::fs::rename(staging.join(DATA_FILE), &target)
        .map_err(|e| io("move the backup to", &target, e))?;
    let _ = std::fs::remove_dir_all(staging);
    Ok(report)
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

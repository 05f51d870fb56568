//! [`Store`]: the typed databases, opening, the format check, and the
//! read / write transaction runners.
//!
//! The methods that read and change the graph live next to their data
//! (`names.rs`, `concepts.rs`, `propositions.rs`, `text.rs`, `counters.rs`,
//! `state.rs`, `changes.rs`), each an `impl Store` block. This module owns
//! the transaction discipline: one LMDB write transaction per
//! [`Store::write`] call, committed on `Ok`, aborted on `Err`, and run again
//! from the start after the map grew if it ran out of room.

use std::path::Path;
use std::sync::Arc;

use heed::types::{Bytes, Str, Unit};
use heed::{
    BytesDecode, CommitOrAbort, CommitToken, Database, DatabaseOpener, OnCommit, RoTxn, RwTxn,
};

use crate::codec::concept::ConceptCodec;
use crate::codec::concept_keys::{NameMemberKey, TypeMemberKey, TypeNameKey};
use crate::codec::document::DocumentCodec;
use crate::codec::element::ElementIdCodec;
use crate::codec::integer::{
    CompactPropositionId, ConceptIdCodec, I64Be, PropositionIdCodec, U32Be, U64Be,
};
use crate::codec::intern::{IdToNameKey, NameToIdKey};
use crate::codec::proposition::PropositionCodec;
use crate::codec::stat_key::StatKeyCodec;
use crate::codec::state::{RawKey, StateCodec};
use crate::codec::triple::{Osp, Pos, Spo, TripleKey};
use crate::codec::value::ValueCodec;
use crate::db_name;
use crate::env::{self, EnvHandle, StoreOptions};
use crate::error::{Lmdb as _, StoreError, lmdb, take_map_full};

/// The store's databases, one typed handle each. The crate documentation
/// describes every key and value.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Databases<'t> {
    pub meta: Database<'t, Str, Bytes>,
    pub names: Database<'t, NameToIdKey, U32Be>,
    pub name_ids: Database<'t, IdToNameKey, Str>,
    pub concepts: Database<'t, ConceptIdCodec, ConceptCodec>,
    pub concept_keys: Database<'t, TypeNameKey, ConceptIdCodec>,
    pub concepts_by_type: Database<'t, TypeMemberKey, Unit>,
    pub concepts_by_name: Database<'t, NameMemberKey, Unit>,
    pub propositions: Database<'t, PropositionIdCodec, PropositionCodec>,
    pub spo: Database<'t, TripleKey<Spo>, CompactPropositionId>,
    pub pos: Database<'t, TripleKey<Pos>, CompactPropositionId>,
    pub osp: Database<'t, TripleKey<Osp>, CompactPropositionId>,
    pub stats: Database<'t, StatKeyCodec, U64Be>,
    pub counters: Database<'t, RawKey, I64Be>,
    pub terms: Database<'t, Str, U32Be>,
    pub term_ids: Database<'t, U32Be, Bytes>,
    pub postings: Database<'t, Bytes, Bytes>,
    pub documents: Database<'t, ElementIdCodec, DocumentCodec>,
    pub state: Database<'t, RawKey, StateCodec>,
    pub changes: Database<'t, U64Be, ValueCodec>,
    pub trace: Database<'t, U64Be, Bytes>,
    pub trace_seqs: Database<'t, Str, Bytes>,
    pub trace_elements: Database<'t, Bytes, Unit>,
    pub trace_touches: Database<'t, U64Be, Bytes>,
    pub attr_index: Database<'t, Bytes, Unit>,
    pub vectors: Database<'t, ConceptIdCodec, Bytes>,
    pub vector_backlog: Database<'t, ConceptIdCodec, Bytes>,
    pub vector_codes: Database<'t, U64Be, Bytes>,
}

impl<'t> Databases<'t> {
    fn create(
        opener: &DatabaseOpener<'t, heed::WithoutTls>,
        txn: &mut RwTxn<'t>,
    ) -> heed::Result<Databases<'t>> {
        use db_name as n;
        Ok(Databases {
            meta: opener.create_database(txn, Some(n::META))?,
            names: opener.create_database(txn, Some(n::NAMES))?,
            name_ids: opener.create_database(txn, Some(n::NAME_IDS))?,
            concepts: opener.create_database(txn, Some(n::CONCEPTS))?,
            concept_keys: opener.create_database(txn, Some(n::CONCEPT_KEYS))?,
            concepts_by_type: opener.create_database(txn, Some(n::CONCEPTS_BY_TYPE))?,
            concepts_by_name: opener.create_database(txn, Some(n::CONCEPTS_BY_NAME))?,
            propositions: opener.create_database(txn, Some(n::PROPOSITIONS))?,
            spo: opener.create_database(txn, Some(n::SPO))?,
            pos: opener.create_database(txn, Some(n::POS))?,
            osp: opener.create_database(txn, Some(n::OSP))?,
            stats: opener.create_database(txn, Some(n::STATS))?,
            counters: opener.create_database(txn, Some(n::COUNTERS))?,
            terms: opener.create_database(txn, Some(n::TERMS))?,
            term_ids: opener.create_database(txn, Some(n::TERM_IDS))?,
            postings: opener.create_database(txn, Some(n::POSTINGS))?,
            documents: opener.create_database(txn, Some(n::DOCUMENTS))?,
            state: opener.create_database(txn, Some(n::STATE))?,
            changes: opener.create_database(txn, Some(n::CHANGES))?,
            trace: opener.create_database(txn, Some(n::TRACE))?,
            trace_seqs: opener.create_database(txn, Some(n::TRACE_SEQS))?,
            trace_elements: opener.create_database(txn, Some(n::TRACE_ELEMENTS))?,
            trace_touches: opener.create_database(txn, Some(n::TRACE_TOUCHES))?,
            attr_index: opener.create_database(txn, Some(n::ATTR_INDEX))?,
            vectors: opener.create_database(txn, Some(n::VECTORS))?,
            vector_backlog: opener.create_database(txn, Some(n::VECTOR_BACKLOG))?,
            vector_codes: opener.create_database(txn, Some(n::VECTOR_CODES))?,
        })
    }
}

impl Databases<'static> {
    /// Every database with its name, as bytes, in [`db_name::ALL`] order.
    pub(crate) fn raw_all(&self) -> [(&'static str, Database<'static, Bytes, Bytes>); 27] {
        fn raw<K, V>(db: Database<'static, K, V>) -> Database<'static, Bytes, Bytes> {
            db.remap_types()
        }
        use db_name as n;
        let d = self;
        [
            (n::META, raw(d.meta)),
            (n::NAMES, raw(d.names)),
            (n::NAME_IDS, raw(d.name_ids)),
            (n::CONCEPTS, raw(d.concepts)),
            (n::CONCEPT_KEYS, raw(d.concept_keys)),
            (n::CONCEPTS_BY_TYPE, raw(d.concepts_by_type)),
            (n::CONCEPTS_BY_NAME, raw(d.concepts_by_name)),
            (n::PROPOSITIONS, raw(d.propositions)),
            (n::SPO, raw(d.spo)),
            (n::POS, raw(d.pos)),
            (n::OSP, raw(d.osp)),
            (n::STATS, raw(d.stats)),
            (n::COUNTERS, raw(d.counters)),
            (n::TERMS, raw(d.terms)),
            (n::POSTINGS, raw(d.postings)),
            (n::DOCUMENTS, raw(d.documents)),
            (n::STATE, raw(d.state)),
            (n::CHANGES, raw(d.changes)),
            (n::TRACE, raw(d.trace)),
            (n::TRACE_SEQS, raw(d.trace_seqs)),
            (n::TRACE_ELEMENTS, raw(d.trace_elements)),
            (n::TRACE_TOUCHES, raw(d.trace_touches)),
            (n::ATTR_INDEX, raw(d.attr_index)),
            (n::TERM_IDS, raw(d.term_ids)),
            (n::VECTORS, raw(d.vectors)),
            (n::VECTOR_BACKLOG, raw(d.vector_backlog)),
            (n::VECTOR_CODES, raw(d.vector_codes)),
        ]
    }
}

impl OnCommit for Databases<'_> {
    type Committed = Databases<'static>;

    fn on_commit(self, token: &CommitToken) -> Databases<'static> {
        Databases {
            meta: self.meta.on_commit(token),
            names: self.names.on_commit(token),
            name_ids: self.name_ids.on_commit(token),
            concepts: self.concepts.on_commit(token),
            concept_keys: self.concept_keys.on_commit(token),
            concepts_by_type: self.concepts_by_type.on_commit(token),
            concepts_by_name: self.concepts_by_name.on_commit(token),
            propositions: self.propositions.on_commit(token),
            spo: self.spo.on_commit(token),
            pos: self.pos.on_commit(token),
            osp: self.osp.on_commit(token),
            stats: self.stats.on_commit(token),
            counters: self.counters.on_commit(token),
            terms: self.terms.on_commit(token),
            term_ids: self.term_ids.on_commit(token),
            postings: self.postings.on_commit(token),
            documents: self.documents.on_commit(token),
            state: self.state.on_commit(token),
            changes: self.changes.on_commit(token),
            trace: self.trace.on_commit(token),
            trace_seqs: self.trace_seqs.on_commit(token),
            trace_elements: self.trace_elements.on_commit(token),
            trace_touches: self.trace_touches.on_commit(token),
            attr_index: self.attr_index.on_commit(token),
            vectors: self.vectors.on_commit(token),
            vector_backlog: self.vector_backlog.on_commit(token),
            vector_codes: self.vector_codes.on_commit(token),
        }
    }
}

/// The Cognitive Nexus's storage: an LMDB environment in one folder and its
/// typed databases.
///
/// A `Store` is cheap to clone and can be shared between threads; every
/// `Store` of the same folder in one process shares one environment. Other
/// processes may open the same folder at the same time: LMDB serializes
/// writers across processes, and readers never wait for writers.
///
/// Every method that reads takes a [`RoTxn`]; every method that changes
/// something takes a [`RwTxn`] (which also works wherever a `RoTxn` is
/// expected). Get them from [`Store::read`] and [`Store::write`].
#[derive(Clone)]
pub struct Store {
    env: Arc<EnvHandle>,
    fresh: bool,
    pub(crate) db: Databases<'static>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.env.env().path())
            .field("fresh", &self.fresh)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// LMDB's facts about the environment (its last used page, the map).
    pub(crate) fn env_info(&self) -> heed::EnvInfo {
        self.env.env().info()
    }

    /// Opens the store in `dir`, creating the folder and the store if they
    /// do not exist, with the default [`StoreOptions`].
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        Store::open_with(dir, &StoreOptions::default())
    }

    /// Opens the store in `dir` with `options`. If this process already has
    /// the folder open, the existing environment is shared and its options
    /// stay in force.
    ///
    /// Fails with [`StoreError::UnsupportedFormat`] (before writing
    /// anything) if a newer program wrote the store, and migrates a store of
    /// an older format.
    pub fn open_with(dir: &Path, options: &StoreOptions) -> Result<Store, StoreError> {
        let env = env::open(dir, options)?;
        let found = crate::format::check_not_newer(&env)?;
        if found.is_some_and(|v| v < crate::format::FORMAT_VERSION) {
            // A migration rewrites much of the store in one transaction,
            // which copies the pages it changes: give the map room for
            // that up front, instead of re-running the migration after
            // each doubling.
            let file = std::fs::metadata(dir.join("data.mdb")).map_or(0, |m| m.len());
            // Best effort: at the map's limit the migration runs anyway.
            grow_map_to(&env, file.saturating_mul(2));
        }
        let db = loop {
            let writing = env.write()?;
            let observed = env.map_size();
            take_map_full();
            let (txn, slot) = writing.into_parts();
            let created = env
                .env()
                .create_databases_and_commit(txn, |opener, txn| {
                    Databases::create(opener, txn).map(CommitOrAbort::<_, ()>::Commit)
                })
                .lmdb();
            drop(slot);
            match created {
                Ok(CommitOrAbort::Commit(db)) => break db,
                Ok(CommitOrAbort::Abort(())) => {
                    return Err(StoreError::Lmdb {
                        detail: "creating the databases was aborted".to_owned(),
                    });
                }
                Err(_) if take_map_full() => env.grow(observed)?,
                Err(e) => return Err(e),
            }
        };
        let mut store = Store {
            env,
            fresh: false,
            db,
        };
        store.fresh = store.write(|txn| store.check_format(txn))?;
        Ok(store)
    }

    /// Whether this call of [`Store::open`] created the store (found no
    /// format version and wrote one). Exactly one opener sees `true`, even
    /// when several processes create the same folder at once.
    ///
    /// Bootstrapping that must happen once should still record its own
    /// completion (in [`Store::put_state`]) inside its write: a crash between
    /// creating the store and bootstrapping it would otherwise never be
    /// repaired.
    pub fn is_fresh(&self) -> bool {
        self.fresh
    }

    /// The folder of the store.
    pub fn path(&self) -> &Path {
        self.env.env().path()
    }

    /// The current size of the memory map, in bytes (not the file size: the
    /// file only holds the pages in use).
    pub fn map_size(&self) -> Result<u64, StoreError> {
        // LMDB's size field must not be read during a remap: hold a slot.
        let _reading = self.env.read()?;
        Ok(self.env.map_size() as u64)
    }

    /// Runs `f` in a read transaction: a consistent snapshot of the last
    /// commit, unaffected by writes that commit while it runs (in this
    /// process or another). Readers never block writers, but keep `f` short:
    /// an open snapshot keeps the pages it sees from being reused, and a
    /// map resize waits for it.
    pub fn read<T, E: From<StoreError>>(
        &self,
        f: impl FnOnce(&RoTxn<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let reading = self.env.read()?;
        f(&reading.txn)
    }

    /// Runs `f` in one write transaction and commits it if `f` returns `Ok`;
    /// on `Err` nothing is written.
    ///
    /// If the map runs out of room at any point (inside `f` or at commit),
    /// the transaction is aborted, the map doubled and `f` run again from
    /// the start, which is why `f` is `FnMut`: it must not keep side effects
    /// of a previous run. A write cannot grow the map while the same thread
    /// holds another transaction of this store; it then fails with
    /// [`StoreError::Busy`].
    ///
    /// Writers wait for each other (across processes too); a write inside
    /// another write on the same thread fails with [`StoreError::Busy`]
    /// instead of deadlocking.
    pub fn write<T, E: From<StoreError>>(
        &self,
        f: impl FnMut(&mut RwTxn<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.write_with(true, f)
    }

    /// Runs `f` exactly as [`Store::write`] does, then aborts: a dry run
    /// sees its own changes (counters, ids, indexes) while it runs, and
    /// nothing of it is ever visible to anyone else.
    pub fn write_uncommitted<T, E: From<StoreError>>(
        &self,
        f: impl FnMut(&mut RwTxn<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.write_with(false, f)
    }

    /// [`Store::write`] if `commit`, else [`Store::write_uncommitted`].
    pub fn write_with<T, E: From<StoreError>>(
        &self,
        commit: bool,
        mut f: impl FnMut(&mut RwTxn<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        // Lets a short page write be told apart from a full disk.
        let _scope = crate::error::WriteScope::enter(self.env.dir());
        loop {
            let mut writing = self.env.write()?;
            let observed = self.env.map_size();
            take_map_full();
            let result = f(&mut writing.txn);
            if take_map_full() {
                // Whatever `f` made of the error, the transaction is dead.
                writing.abort();
                self.env.grow(observed)?;
                continue;
            }
            let value = match result {
                Ok(value) => value,
                Err(e) => {
                    writing.abort();
                    return Err(e);
                }
            };
            if !commit {
                writing.abort();
                return Ok(value);
            }
            match writing.commit() {
                Ok(()) => return Ok(value),
                Err(_) if take_map_full() => self.env.grow(observed)?,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Grows the map (best effort, up to its limit) so that `extra` more
    /// bytes fit beyond the data file's current size: a write known to be
    /// large (a streamed import) then runs once, instead of again after
    /// each doubling of a map it filled.
    pub fn reserve(&self, extra: u64) {
        let file = std::fs::metadata(self.env.dir().join("data.mdb")).map_or(0, |m| m.len());
        grow_map_to(&self.env, file.saturating_add(extra));
    }

    /// Writes a compacted copy of the whole store to the file `path` (an
    /// LMDB `data.mdb`), for backups and test fixtures. Runs alongside
    /// readers and writers.
    pub fn copy_compacted(&self, path: &Path) -> Result<(), StoreError> {
        self.env.copy_compacted(path)
    }

    /// Writes a new store in the folder `dir` (which must not hold one)
    /// with exactly this store's contents as of one snapshot, every database
    /// written in key order with `MDB_APPEND`, so its pages are full and no
    /// page is free — unlike [`Store::copy_compacted`], which copies pages
    /// as they are (a B-tree filled at random places is ~70% full). What
    /// `kip compact` writes. Returns the new file's size in bytes.
    pub fn copy_packed(&self, dir: &Path) -> Result<u64, StoreError> {
        let size = std::fs::metadata(self.path().join("data.mdb")).map_or(0, |m| m.len());
        let options = StoreOptions {
            initial_map_size: usize::try_from(size)
                .unwrap_or(usize::MAX)
                .max(StoreOptions::default().initial_map_size),
            ..StoreOptions::default()
        };
        let dest = Store::open_with(dir, &options)?;
        if !dest.is_fresh() {
            return Err(StoreError::invalid(format!(
                "{} already holds a store",
                dir.display()
            )));
        }
        let from = self.db.raw_all();
        let to = dest.db.raw_all();
        self.read(|src| {
            dest.write(|txn| {
                for ((name, from), (_, to)) in from.iter().zip(&to) {
                    for entry in from.iter(src).lmdb()? {
                        let (key, value) = entry.lmdb()?;
                        if *name == db_name::META {
                            // The new store wrote its format version.
                            to.put(txn, key, value).lmdb()?;
                        } else {
                            to.put_with_flags(txn, heed::PutFlags::APPEND, key, value)
                                .lmdb()?;
                        }
                    }
                }
                Ok::<_, StoreError>(())
            })
        })?;
        drop(dest);
        Ok(std::fs::metadata(dir.join("data.mdb")).map_or(0, |m| m.len()))
    }
}

/// Entries a rewrite reads per step (see [`rewrite_in_chunks`]).
const REWRITE_CHUNK: usize = 20_000;

/// Rewrites `db` in key order, a chunk of entries at a time, for a format
/// upgrade: `read` turns each entry into what `write` then applies to the
/// chunk (a cursor cannot read a database while the same transaction
/// writes it). Entries `write` puts under their own keys are not visited
/// again. Returns the entries visited.
pub(crate) fn rewrite_in_chunks<T>(
    txn: &mut RwTxn<'_>,
    db: Database<'static, Bytes, Bytes>,
    mut read: impl FnMut(&[u8], &[u8]) -> Result<T, StoreError>,
    mut write: impl FnMut(&mut RwTxn<'_>, Vec<T>) -> Result<(), StoreError>,
) -> Result<u64, StoreError> {
    let mut visited = 0u64;
    let mut after: Option<Vec<u8>> = None;
    loop {
        let mut chunk = Vec::new();
        let mut last = None;
        {
            let lower = match &after {
                None => std::ops::Bound::Unbounded,
                Some(k) => std::ops::Bound::Excluded(&k[..]),
            };
            let range = db.range(txn, &(lower, std::ops::Bound::Unbounded)).lmdb()?;
            for entry in range.take(REWRITE_CHUNK) {
                let (key, value) = entry.lmdb()?;
                chunk.push(read(key, value)?);
                last = Some(key);
            }
            after = last.map(<[u8]>::to_vec);
        }
        if chunk.is_empty() {
            return Ok(visited);
        }
        visited += chunk.len() as u64;
        write(txn, chunk)?;
    }
}

/// Calls `f` on every entry of `db` whose key starts with `prefix`, in key
/// order. LMDB cannot position a cursor on an empty key, so an empty prefix
/// is a full scan.
pub(crate) fn for_each_with_prefix<'t, KC, DC>(
    db: Database<'static, KC, DC>,
    txn: &'t RoTxn<'_>,
    prefix: &[u8],
    mut f: impl FnMut(KC::DItem, DC::DItem) -> Result<(), StoreError>,
) -> Result<(), StoreError>
where
    KC: BytesDecode<'t>,
    DC: BytesDecode<'t>,
{
    let db = db.remap_key_type::<Bytes>();
    let mut visit = |key: &'t [u8], value| {
        let key = KC::bytes_decode(key).map_err(|e| lmdb(heed::Error::Decoding(e)))?;
        f(key, value)
    };
    if prefix.is_empty() {
        for entry in db.iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            visit(key, value)?;
        }
    } else {
        for entry in db.prefix_iter(txn, prefix).lmdb()? {
            let (key, value) = entry.lmdb()?;
            visit(key, value)?;
        }
    }
    Ok(())
}

/// Doubles the map until it holds `room` bytes or cannot grow.
fn grow_map_to(env: &crate::env::EnvHandle, room: u64) {
    let room = usize::try_from(room).unwrap_or(usize::MAX);
    while env.map_size() < room {
        let before = env.map_size();
        if env.grow(before).is_err() || env.map_size() <= before {
            break;
        }
    }
}

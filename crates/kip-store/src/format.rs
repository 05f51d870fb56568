//! The on-disk format version and migrations.
//!
//! The `meta` database holds `format_version` (4 bytes BE). Opening a store
//! checks it: a version newer than [`FORMAT_VERSION`] is refused before
//! anything is written; an older one is upgraded by [`Store::migrate`], one
//! version at a time, inside the same write transaction that records the new
//! version, so a migration either completes or leaves the old format intact.
//!
//! When the format changes: bump [`FORMAT_VERSION`], add an arm to
//! `migrate` for the version being left behind, and commit a small store of
//! the old format under `tests/data/` with a test that opens it (see
//! `tests/format.rs`).

use heed::types::{Bytes, Str};
use heed::{CommitOrAbort, RwTxn};

use crate::Store;
use crate::db_name;
use crate::env::EnvHandle;
use crate::error::{Lmdb as _, StoreError};

/// The format this version of the crate writes.
pub const FORMAT_VERSION: u32 = 7;

/// `meta` keys.
pub(crate) mod meta_key {
    pub const FORMAT_VERSION: &str = "format_version";
    pub const NEXT_CONCEPT_ID: &str = "next_concept_id";
    pub const NEXT_PROPOSITION_ID: &str = "next_proposition_id";
    pub const LAST_CHANGE_SEQ: &str = "last_change_seq";
    pub const LAST_TRACE_ID: &str = "last_trace_id";
    pub const NEXT_TERM_ID: &str = "next_term_id";
}

fn decode_version(bytes: &[u8]) -> Result<u32, StoreError> {
    <[u8; 4]>::try_from(bytes)
        .map(u32::from_be_bytes)
        .map_err(|_| StoreError::corrupt(format!("format version of {} bytes", bytes.len())))
}

/// Refuses a store written by a newer format, without writing to it;
/// returns the format found (`None`: a new store).
pub(crate) fn check_not_newer(env: &EnvHandle) -> Result<Option<u32>, StoreError> {
    let (txn, slot) = env.read()?.into_parts();
    let found = env
        .env()
        .open_databases_and_commit(txn, |opener, txn| {
            let Some(meta) = opener.open_database::<Str, Bytes>(txn, Some(db_name::META))? else {
                return Ok::<_, heed::Error>(CommitOrAbort::<(), _>::Abort(None));
            };
            // Abort: this transaction only reads, and the handle is not kept.
            Ok(CommitOrAbort::Abort(
                meta.get(txn, meta_key::FORMAT_VERSION)?.map(<[u8]>::to_vec),
            ))
        })
        .lmdb();
    drop(slot);
    match found? {
        CommitOrAbort::Abort(Some(bytes)) => {
            let found = decode_version(&bytes)?;
            if found > FORMAT_VERSION {
                return Err(StoreError::UnsupportedFormat {
                    found,
                    supported: FORMAT_VERSION,
                });
            }
            Ok(Some(found))
        }
        CommitOrAbort::Abort(None) | CommitOrAbort::Commit(()) => Ok(None),
    }
}

impl Store {
    /// Checks and records the format version; returns whether the store was
    /// just created.
    pub(crate) fn check_format(&self, txn: &mut RwTxn<'_>) -> Result<bool, StoreError> {
        let meta = self.db.meta;
        let found = match meta.get(txn, meta_key::FORMAT_VERSION).lmdb()? {
            Some(bytes) => Some(decode_version(bytes)?),
            None => None,
        };
        match found {
            None => {
                // A store with data but no version was not written by us.
                if !self.db.concepts.is_empty(txn).lmdb()?
                    || !self.db.propositions.is_empty(txn).lmdb()?
                {
                    return Err(StoreError::corrupt(
                        "the store holds data but no format version",
                    ));
                }
                meta.put(txn, meta_key::FORMAT_VERSION, &FORMAT_VERSION.to_be_bytes())
                    .lmdb()?;
                Ok(true)
            }
            Some(v) if v > FORMAT_VERSION => Err(StoreError::UnsupportedFormat {
                found: v,
                supported: FORMAT_VERSION,
            }),
            Some(v) if v == FORMAT_VERSION => Ok(false),
            Some(mut v) => {
                while v < FORMAT_VERSION {
                    self.migrate(txn, v)?;
                    v += 1;
                }
                meta.put(txn, meta_key::FORMAT_VERSION, &FORMAT_VERSION.to_be_bytes())
                    .lmdb()?;
                Ok(false)
            }
        }
    }

    /// Upgrades a store of format `from` to `from + 1`, in `txn`.
    ///
    /// One arm per released format older than [`FORMAT_VERSION`].
    pub(crate) fn migrate(&self, txn: &mut RwTxn<'_>, from: u32) -> Result<(), StoreError> {
        match from {
            0 => Err(StoreError::corrupt("format version 0 was never released")),
            // Format 2 added the cognitive trace's databases (`trace`,
            // `trace_seqs`, `trace_elements`, `trace_touches`). Opening
            // creates them empty, so a format-1 store has nothing to convert;
            // the bump keeps a format-1 program, which would write without
            // tracing, from opening a traced store.
            1 => Ok(()),
            // Format 3 added the attribute index (`attr_index`), built here
            // from every concept record, once, in the transaction that
            // records the new version.
            2 => {
                let started = std::time::Instant::now();
                let entries = self.build_attr_index(txn)?;
                eprintln!(
                    "kip-store: upgraded {} to format 3: built the attribute index ({entries} entries in {:.1} s)",
                    self.path().display(),
                    started.elapsed().as_secs_f64()
                );
                Ok(())
            }
            // Format 4 keeps each trace entry behind a byte that says how
            // its JSON is stored, and compresses the long ones (an import's
            // entry holds its whole command); rewritten here, entry by entry.
            3 => {
                let started = std::time::Instant::now();
                let (entries, before, after) = self.compress_trace(txn)?;
                eprintln!(
                    "kip-store: upgraded {} to format 4: {entries} trace entries from {before} to {after} bytes in {:.1} s",
                    self.path().display(),
                    started.elapsed().as_secs_f64()
                );
                Ok(())
            }
            // Format 5 keeps the text index by term id (postings in blocks,
            // documents listing term ids), triples in compact parts (the
            // records and the `spo` / `pos` / `osp` keys and values) and
            // canonical timestamps as integers. Rebuilt here from the old
            // documents and records.
            4 => {
                let started = std::time::Instant::now();
                let (documents, postings) = self.upgrade_text_index(txn)?;
                let propositions = self.upgrade_propositions(txn)?;
                let concepts = self.upgrade_concepts(txn)?;
                eprintln!(
                    "kip-store: upgraded {} to format 5: rebuilt the text index ({documents} documents, {postings} postings) and rewrote {propositions} propositions and {concepts} concepts in {:.1} s",
                    self.path().display(),
                    started.elapsed().as_secs_f64()
                );
                Ok(())
            }
            // Format 6 gives an array or an object value its attribute-index
            // key (without the value), so that the index read whole is the
            // key's column (`column.rs`). Added here from every record.
            5 => {
                let started = std::time::Instant::now();
                let keys = self.index_compound_values(txn)?;
                eprintln!(
                    "kip-store: upgraded {} to format 6: indexed {keys} array and object values in {:.1} s",
                    self.path().display(),
                    started.elapsed().as_secs_f64()
                );
                Ok(())
            }
            // Format 7 keeps a binary code beside every vector
            // (`vector_codes`), the prefilter of SEARCH by meaning; computed
            // here from the stored vectors, against no centre until the
            // engine records its groups' centres (which recomputes them).
            6 => {
                let started = std::time::Instant::now();
                let codes = self.rebuild_codes(txn)?;
                eprintln!(
                    "kip-store: upgraded {} to format 7: computed {codes} vector codes in {:.1} s",
                    self.path().display(),
                    started.elapsed().as_secs_f64()
                );
                Ok(())
            }
            FORMAT_VERSION.. => Ok(()),
        }
    }
}

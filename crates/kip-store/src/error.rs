//! [`StoreError`], and the one place where LMDB's errors are classified.
//!
//! Every `heed::Error` goes through [`lmdb`] before it leaves a function of
//! this crate, so nothing above the store sees heed or LMDB error codes: a
//! full map becomes [`StoreError::Full`], a damaged or foreign file
//! [`StoreError::Corrupt`], and so on.
//!
//! [`lmdb`] also remembers, per thread, that a write ran out of map space.
//! The engine's closure may turn a [`StoreError::Full`] into its own error
//! type (or even swallow it), so `Store::write` cannot rely on seeing the
//! error come back; it asks [`take_map_full`] instead, grows the map and runs
//! the closure again.

use std::cell::Cell;
use std::io;

use crate::ids::{ConceptId, ElementId, PropositionId};

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The map could not grow any further (the size cap was reached, or the
    /// operating system refused a larger mapping).
    #[error(
        "the store is full: its memory map of {map_size} bytes cannot grow any further; free disk or address space, or split the write into smaller ones"
    )]
    Full { map_size: u64 },

    /// One write transaction touched more pages than LMDB can track.
    #[error(
        "the write is too large for one transaction (LMDB's dirty-page limit); split it into smaller writes"
    )]
    TransactionTooLarge,

    /// The store needs to remap its file (to grow, or to follow another
    /// process that grew it) while this thread still holds one of its
    /// transactions, which would then point into an unmapped region.
    #[error(
        "the store cannot {action} while this thread holds another of its transactions; finish the outer read or write first"
    )]
    Busy { action: &'static str },

    /// The files are damaged, are not an LMDB environment, or hold bytes this
    /// version cannot decode.
    #[error("the store is corrupt: {detail}; restore it from a backup or re-import its capsules")]
    Corrupt { detail: String },

    /// An I/O error from the operating system.
    #[error("I/O error in the store: {0}")]
    Io(#[from] io::Error),

    /// The store was written by a newer version of this program.
    #[error(
        "the store has format version {found}, but this program reads versions up to {supported}; open it with a newer KIP Explorer"
    )]
    UnsupportedFormat { found: u32, supported: u32 },

    /// A concept with this `(type, name)` already exists.
    #[error("a concept of type #{type_id} named {name:?} already exists ({existing})")]
    DuplicateConcept {
        type_id: u32,
        name: String,
        existing: ConceptId,
    },

    /// A proposition with this `(subject, predicate, object)` already exists.
    #[error("this (subject, predicate, object) already exists as {existing}")]
    DuplicateProposition { existing: PropositionId },

    /// The element does not exist (or no longer does).
    #[error("{element} does not exist")]
    NotFound { element: ElementId },

    /// The element cannot be deleted while a proposition still points at it.
    #[error(
        "{element} cannot be deleted: {by} still refers to it; delete the referring propositions first"
    )]
    StillReferenced {
        element: ElementId,
        by: PropositionId,
    },

    /// The caller asked for something the store cannot represent.
    #[error("invalid input to the store: {detail}")]
    Invalid { detail: String },

    /// Two different long keys hashed to the same stored key.
    #[error("key conflict in the store: {detail}")]
    Conflict { detail: String },

    /// Any other LMDB failure (reader table full, too many databases, …).
    #[error("LMDB error: {detail}")]
    Lmdb { detail: String },
}

impl StoreError {
    pub(crate) fn corrupt(detail: impl Into<String>) -> StoreError {
        StoreError::Corrupt {
            detail: detail.into(),
        }
    }

    pub(crate) fn invalid(detail: impl Into<String>) -> StoreError {
        StoreError::Invalid {
            detail: detail.into(),
        }
    }
}

thread_local! {
    /// Set when a heed call on this thread failed with `MDB_MAP_FULL`.
    /// LMDB allows one write transaction per environment at a time and a
    /// write runs on the thread that called `Store::write`, so a per-thread
    /// flag cannot be set by someone else's write.
    static MAP_FULL: Cell<bool> = const { Cell::new(false) };
}

/// Clears the map-full flag of this thread and returns what it was.
pub(crate) fn take_map_full() -> bool {
    MAP_FULL.with(|flag| flag.replace(false))
}

/// Classifies a heed error. The only conversion from `heed::Error` in the
/// crate: call it on every heed result (see [`Lmdb::lmdb`]).
pub(crate) fn lmdb(error: heed::Error) -> StoreError {
    use heed::MdbError as M;
    match error {
        heed::Error::Io(e) => StoreError::Io(e),
        heed::Error::Mdb(e) => match e {
            M::MapFull => {
                MAP_FULL.with(|flag| flag.set(true));
                // The real size is reported by whoever gives up growing; this
                // error is normally retried and never seen.
                StoreError::Full { map_size: 0 }
            }
            M::TxnFull => StoreError::TransactionTooLarge,
            M::Corrupted | M::PageNotFound | M::Invalid | M::VersionMismatch | M::Panic => {
                StoreError::corrupt(e.to_string())
            }
            M::BadValSize => StoreError::invalid(format!("a key or value LMDB cannot store ({e})")),
            other => StoreError::Lmdb {
                detail: other.to_string(),
            },
        },
        heed::Error::Decoding(e) => StoreError::corrupt(format!("undecodable record: {e}")),
        heed::Error::Encoding(e) => StoreError::invalid(e.to_string()),
        heed::Error::EnvAlreadyOpened => StoreError::Lmdb {
            detail: "the environment is already open in this process".to_owned(),
        },
    }
}

/// `.lmdb()` on heed results: the short form of `.map_err(lmdb)`.
pub(crate) trait Lmdb<T> {
    fn lmdb(self) -> Result<T, StoreError>;
}

impl<T> Lmdb<T> for heed::Result<T> {
    fn lmdb(self) -> Result<T, StoreError> {
        self.map_err(lmdb)
    }
}

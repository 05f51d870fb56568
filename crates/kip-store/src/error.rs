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

use std::cell::{Cell, RefCell};
use std::io;
use std::path::{Path, PathBuf};

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

    /// The file system refused to let the data file grow: the disk is full,
    /// a quota is exceeded, or the process's file size limit is reached.
    /// LMDB writes a transaction's pages before it commits, so the write
    /// failed before its commit and the store is as it was.
    #[error(
        "the disk is full: {detail}; nothing of this write was stored — free disk space (or raise the quota or file size limit) and try again"
    )]
    DiskFull { detail: String },

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

thread_local! {
    /// The folder of the store this thread is writing to, while it writes
    /// (see [`WriteScope`]): where [`lmdb`] asks the file system why a
    /// page write fell short.
    static WRITING_IN: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
}

/// Marks this thread as writing to the store in a folder until dropped.
#[must_use]
pub(crate) struct WriteScope(Option<PathBuf>);

impl WriteScope {
    pub(crate) fn enter(dir: &Path) -> WriteScope {
        WriteScope(WRITING_IN.with(|w| w.replace(Some(dir.to_path_buf()))))
    }
}

impl Drop for WriteScope {
    fn drop(&mut self) {
        let outer = self.0.take();
        WRITING_IN.with(|w| *w.borrow_mut() = outer);
    }
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
        heed::Error::Io(e) => match disk_full(&e).or_else(|| short_write(&e)) {
            Some(detail) => StoreError::DiskFull { detail },
            None => StoreError::Io(e),
        },
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

/// What a failed write of the data file says when the file could not grow
/// (LMDB passes the system's error number through, which heed turns into
/// an `io::Error`); `None` for any other I/O error.
fn disk_full(e: &io::Error) -> Option<String> {
    let what = match e.kind() {
        io::ErrorKind::StorageFull => "no space is left on the device",
        io::ErrorKind::QuotaExceeded => "the disk quota is exceeded",
        io::ErrorKind::FileTooLarge => "the data file reached its file size limit",
        _ => return None,
    };
    Some(match e.raw_os_error() {
        Some(n) => format!("{what} (os error {n})"),
        None => what.to_owned(),
    })
}

/// LMDB reports a page write that wrote less than asked as `EIO` (its
/// `mdb_page_flush`), and that is how a full disk or a file size limit
/// usually first shows: the write stops at the last byte that fit. When a
/// write of this thread fails so, ask the file system itself: write 64 KiB
/// into a scratch file of the store's folder, at the data file's current
/// length; if that fails for lack of room, the disk is full (else the
/// `EIO` stays what it says). Only on this failure path, never on a
/// successful write.
#[cfg(unix)]
fn short_write(e: &io::Error) -> Option<String> {
    use std::os::unix::fs::FileExt as _;
    if e.raw_os_error() != Some(libc::EIO) {
        return None;
    }
    let dir = WRITING_IN.with(|w| w.borrow().clone())?;
    let offset = std::fs::metadata(dir.join("data.mdb")).ok()?.len();
    let probe = dir.join(".kip-space-probe");
    let result = std::fs::File::create(&probe).and_then(|f| {
        f.write_all_at(&[0; 64 << 10], offset)
            .and_then(|()| f.sync_data())
    });
    let _ = std::fs::remove_file(&probe);
    disk_full(&result.err()?)
}

#[cfg(not(unix))]
fn short_write(_: &io::Error) -> Option<String> {
    None
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

#[cfg(test)]
mod tests {
    use super::*;

    /// LMDB reports a failed page write with the system's error number.
    fn os(n: i32) -> StoreError {
        lmdb(heed::Error::Io(io::Error::from_raw_os_error(n)))
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_disk_a_quota_and_the_file_size_limit_are_disk_full() {
        // ENOSPC, EDQUOT, EFBIG.
        for (n, said) in [(28, "no space"), (122, "quota"), (27, "file size limit")] {
            let e = os(n);
            assert!(matches!(e, StoreError::DiskFull { .. }), "{n}: {e:?}");
            let message = e.to_string();
            assert!(message.starts_with("the disk is full: "), "{message}");
            assert!(message.contains(said), "{message}");
            assert!(message.contains(&format!("(os error {n})")), "{message}");
        }
        // EIO stays an I/O error.
        assert!(matches!(os(5), StoreError::Io(_)));
    }
}

//! The change log: one entry per committed write that changed something,
//! numbered by a monotonic sequence, so that other views of the same store
//! (another window, `kip watch`, a process serving agents) can tell that
//! something changed and what.
//!
//! The engine appends the entry inside the write it describes, so an entry
//! exists exactly when its change was committed. The log keeps the last
//! [`MAX_CHANGES`] entries; a reader that fell further behind sees a gap in
//! the sequence numbers and should reload.

use heed::{RoTxn, RwTxn};
use serde_json::Value;

use crate::Store;
use crate::error::{Lmdb as _, StoreError};
use crate::format::meta_key;

/// How many entries the log keeps.
pub const MAX_CHANGES: u64 = 10_000;

impl Store {
    /// Appends `entry` to the change log and returns its sequence number
    /// (the first is 1).
    pub fn append_change(&self, txn: &mut RwTxn<'_>, entry: &Value) -> Result<u64, StoreError> {
        let seq = self.last_change_seq(txn)? + 1;
        self.db.changes.put(txn, &seq, entry).lmdb()?;
        self.db
            .meta
            .put(txn, meta_key::LAST_CHANGE_SEQ, &seq.to_be_bytes())
            .lmdb()?;
        // Normally exactly one entry falls off the end.
        let len = self.db.changes.len(txn).lmdb()?;
        if len > MAX_CHANGES {
            let cut = seq - MAX_CHANGES;
            self.db.changes.delete_range(txn, &(..=cut)).lmdb()?;
        }
        Ok(seq)
    }

    /// Replaces the entry `seq` (appended earlier in the same write: the
    /// engine names the write's trace entry once it has one).
    pub fn amend_change(
        &self,
        txn: &mut RwTxn<'_>,
        seq: u64,
        entry: &Value,
    ) -> Result<(), StoreError> {
        self.db.changes.put(txn, &seq, entry).lmdb()
    }

    /// The entries after `seq`, oldest first (at most [`MAX_CHANGES`]).
    pub fn changes_since(
        &self,
        txn: &RoTxn<'_>,
        seq: u64,
    ) -> Result<Vec<(u64, Value)>, StoreError> {
        let mut out = Vec::new();
        for entry in self
            .db
            .changes
            .range(txn, &(seq.saturating_add(1)..))
            .lmdb()?
        {
            out.push(entry.lmdb()?);
        }
        Ok(out)
    }

    /// The sequence number of the last entry (0 if none was ever written).
    pub fn last_change_seq(&self, txn: &RoTxn<'_>) -> Result<u64, StoreError> {
        match self.db.meta.get(txn, meta_key::LAST_CHANGE_SEQ).lmdb()? {
            Some(bytes) => <[u8; 8]>::try_from(bytes)
                .map(u64::from_be_bytes)
                .map_err(|_| StoreError::corrupt("meta `last_change_seq` is not 8 bytes")),
            None => Ok(0),
        }
    }

    /// [`Store::last_change_seq`] in a fresh read transaction: the cheap
    /// poll for "did anyone (any process) commit a change since I last
    /// looked?".
    pub fn current_change_seq(&self) -> Result<u64, StoreError> {
        self.read(|txn| self.last_change_seq(txn))
    }
}

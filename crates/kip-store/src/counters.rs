//! Counts: the store's own statistics (concepts per type, propositions per
//! predicate, totals, text-index sizes) and the engine's named counters.
//!
//! Every count is one key, updated in the same transaction as the change it
//! counts, so reading it is a single lookup and it is never out of step with
//! the data, even after a crash or an aborted dry run.

use heed::{RoTxn, RwTxn};

use crate::Store;
use crate::codec::stat_key::{StatKey, TAG_CONCEPTS_OF_TYPE, TAG_PROPOSITIONS_OF_PREDICATE};
use crate::codec::state::MAX_COUNTER_KEY;
use crate::error::{Lmdb as _, StoreError};
use crate::store::for_each_with_prefix;

impl Store {
    /// The number of concepts.
    pub fn concept_count(&self, txn: &RoTxn<'_>) -> Result<u64, StoreError> {
        self.stat(txn, StatKey::Concepts)
    }

    /// The number of propositions.
    pub fn proposition_count(&self, txn: &RoTxn<'_>) -> Result<u64, StoreError> {
        self.stat(txn, StatKey::Propositions)
    }

    /// The number of concepts of type `type_id`.
    pub fn concept_count_by_type(&self, txn: &RoTxn<'_>, type_id: u32) -> Result<u64, StoreError> {
        self.stat(txn, StatKey::ConceptsOfType(type_id))
    }

    /// The number of propositions with predicate `predicate`.
    pub fn proposition_count_by_predicate(
        &self,
        txn: &RoTxn<'_>,
        predicate: u32,
    ) -> Result<u64, StoreError> {
        self.stat(txn, StatKey::PropositionsOfPredicate(predicate))
    }

    /// Every concept type that has concepts, with its count, by type id.
    pub fn concept_counts_by_type(&self, txn: &RoTxn<'_>) -> Result<Vec<(u32, u64)>, StoreError> {
        self.stats_with_tag(txn, TAG_CONCEPTS_OF_TYPE)
    }

    /// Every predicate that has propositions, with its count, by id.
    pub fn proposition_counts_by_predicate(
        &self,
        txn: &RoTxn<'_>,
    ) -> Result<Vec<(u32, u64)>, StoreError> {
        self.stats_with_tag(txn, TAG_PROPOSITIONS_OF_PREDICATE)
    }

    /// Adds `delta` to the named counter `key` and returns its new value.
    /// Keys are the engine's (e.g. per-domain counts): any bytes, not
    /// empty, at most 440 bytes. A counter at zero is not stored.
    pub fn add_counter(
        &self,
        txn: &mut RwTxn<'_>,
        key: &[u8],
        delta: i64,
    ) -> Result<i64, StoreError> {
        check_counter_key(key)?;
        let value = self
            .db
            .counters
            .get(txn, key)
            .lmdb()?
            .unwrap_or(0)
            .checked_add(delta)
            .ok_or_else(|| StoreError::invalid("counter overflow"))?;
        if value == 0 {
            self.db.counters.delete(txn, key).lmdb()?;
        } else {
            self.db.counters.put(txn, key, &value).lmdb()?;
        }
        Ok(value)
    }

    /// The named counter `key` (0 if never set).
    pub fn counter(&self, txn: &RoTxn<'_>, key: &[u8]) -> Result<i64, StoreError> {
        check_counter_key(key)?;
        Ok(self.db.counters.get(txn, key).lmdb()?.unwrap_or(0))
    }

    /// Every non-zero named counter whose key starts with `prefix`, in key
    /// order.
    pub fn counters_with_prefix(
        &self,
        txn: &RoTxn<'_>,
        prefix: &[u8],
    ) -> Result<Vec<(Vec<u8>, i64)>, StoreError> {
        let mut out = Vec::new();
        for_each_with_prefix(self.db.counters, txn, prefix, |key, value| {
            out.push((key.to_vec(), value));
            Ok(())
        })?;
        Ok(out)
    }

    pub(crate) fn stat(&self, txn: &RoTxn<'_>, key: StatKey) -> Result<u64, StoreError> {
        Ok(self.db.stats.get(txn, &key.encode()).lmdb()?.unwrap_or(0))
    }

    /// Adds `delta` to a statistic. Statistics count things that exist, so
    /// going below zero means the store's bookkeeping is broken.
    pub(crate) fn add_stat(
        &self,
        txn: &mut RwTxn<'_>,
        key: StatKey,
        delta: i64,
    ) -> Result<(), StoreError> {
        let encoded = key.encode();
        let current = self.db.stats.get(txn, &encoded).lmdb()?.unwrap_or(0);
        let value = current.checked_add_signed(delta).ok_or_else(|| {
            StoreError::corrupt(format!(
                "statistic {key:?} would leave 0..=u64::MAX ({current} {delta:+})"
            ))
        })?;
        if value == 0 {
            self.db.stats.delete(txn, &encoded).lmdb()?;
        } else {
            self.db.stats.put(txn, &encoded, &value).lmdb()?;
        }
        Ok(())
    }

    fn stats_with_tag(&self, txn: &RoTxn<'_>, tag: u8) -> Result<Vec<(u32, u64)>, StoreError> {
        let mut out = Vec::new();
        for entry in self.db.stats.prefix_iter(txn, &[tag]).lmdb()? {
            match entry.lmdb()? {
                (StatKey::ConceptsOfType(id) | StatKey::PropositionsOfPredicate(id), n) => {
                    out.push((id, n));
                }
                (other, _) => {
                    return Err(StoreError::corrupt(format!(
                        "statistic {other:?} under tag {tag:#04x}"
                    )));
                }
            }
        }
        Ok(out)
    }
}

fn check_counter_key(key: &[u8]) -> Result<(), StoreError> {
    if key.is_empty() || key.len() > MAX_COUNTER_KEY {
        return Err(StoreError::invalid(format!(
            "a counter key must be 1 to {MAX_COUNTER_KEY} bytes, found {}",
            key.len()
        )));
    }
    Ok(())
}

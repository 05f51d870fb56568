//! The counters and the log: statistics equal their counts
//! (`counter-equals-count`), the change log is gapless
//! (`change-log-order`), and the meta keys hold the next ids and the format
//! version (`next-id`, `format-version`).

use std::collections::BTreeMap;

use heed::RoTxn;

use super::records::Elements;
use super::{Findings, hex, raw};
use crate::Store;
use crate::changes::MAX_CHANGES;
use crate::codec::stat_key::StatKey;
use crate::codec::value;
use crate::db_name;
use crate::error::{Lmdb as _, StoreError};
use crate::format::{FORMAT_VERSION, meta_key};

impl Store {
    /// Checks every statistic against the count the records gave.
    pub(super) fn check_stats(
        &self,
        txn: &RoTxn<'_>,
        f: &mut Findings,
        mut stats: BTreeMap<StatKey, u64>,
    ) -> Result<(), StoreError> {
        for entry in raw(self.db.stats).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            let (Ok(stat), Ok(found)) = (
                StatKey::decode(key),
                <[u8; 8]>::try_from(value).map(u64::from_be_bytes),
            ) else {
                f.add(
                    "record-decodes",
                    db_name::STATS,
                    format!("the entry {} = {} does not decode", hex(key), hex(value)),
                );
                continue;
            };
            let want = stats.remove(&stat).unwrap_or(0);
            if found != want || found == 0 {
                f.add(
                    "counter-equals-count",
                    db_name::STATS,
                    format!("{stat:?} is {found}, but counts {want}"),
                );
            }
        }
        for (stat, want) in stats {
            f.add(
                "counter-equals-count",
                db_name::STATS,
                format!("{stat:?} is missing (0), but counts {want}"),
            );
        }
        Ok(())
    }

    /// Checks that the change log decodes and is one gapless run ending at
    /// `last_change_seq`, no longer than [`MAX_CHANGES`].
    pub(super) fn check_change_log(
        &self,
        txn: &RoTxn<'_>,
        f: &mut Findings,
    ) -> Result<(), StoreError> {
        let last = self.last_change_seq(txn)?;
        f.report.counts.last_change_seq = last;
        let mut previous: Option<u64> = None;
        for entry in raw(self.db.changes).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            f.report.counts.changes += 1;
            let Ok(seq) = <[u8; 8]>::try_from(key).map(u64::from_be_bytes) else {
                f.add(
                    "record-decodes",
                    db_name::CHANGES,
                    format!("the key {} is not a sequence number", hex(key)),
                );
                continue;
            };
            if let Err(e) = value::decode_all(value) {
                f.add(
                    "record-decodes",
                    db_name::CHANGES,
                    format!("change {seq}: {e}"),
                );
            }
            if let Some(p) = previous
                && seq != p + 1
            {
                f.add(
                    "change-log-order",
                    db_name::CHANGES,
                    format!("change {seq} follows change {p}: the log has a gap"),
                );
            }
            previous = Some(seq);
        }
        if previous.unwrap_or(0) != last {
            f.add(
                "change-log-order",
                db_name::CHANGES,
                format!(
                    "the log ends at {}, but last_change_seq is {last}",
                    previous.map_or_else(|| "nothing".to_owned(), |p| p.to_string())
                ),
            );
        }
        if f.report.counts.changes > MAX_CHANGES {
            f.add(
                "change-log-order",
                db_name::CHANGES,
                format!(
                    "the log keeps {} entries, more than {MAX_CHANGES}",
                    f.report.counts.changes
                ),
            );
        }
        Ok(())
    }

    /// Checks that the next ids are above every id in use and that the
    /// format version is this build's.
    pub(super) fn check_meta(
        &self,
        txn: &RoTxn<'_>,
        f: &mut Findings,
        elements: &Elements,
    ) -> Result<(), StoreError> {
        for (key, max, what) in [
            (meta_key::NEXT_CONCEPT_ID, elements.max_concept, "concept"),
            (
                meta_key::NEXT_PROPOSITION_ID,
                elements.max_proposition,
                "proposition",
            ),
        ] {
            let next = self.peek_id(txn, key)?;
            if next <= max {
                f.add(
                    "next-id",
                    db_name::META,
                    format!("`{key}` is {next}, but {what} {max} exists"),
                );
            }
        }
        match self.db.meta.get(txn, meta_key::FORMAT_VERSION).lmdb()? {
            Some(v) if v == FORMAT_VERSION.to_be_bytes() => {}
            other => f.add(
                "format-version",
                db_name::META,
                format!(
                    "the format version is {}, expected {FORMAT_VERSION}",
                    other.map_or_else(|| "missing".to_owned(), hex)
                ),
            ),
        }
        Ok(())
    }
}

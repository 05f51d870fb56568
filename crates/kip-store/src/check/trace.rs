//! The cognitive trace's databases (`trace-order`, `trace-entry`,
//! `trace-index`, `trace-seq`).

use std::collections::HashSet;

use heed::RoTxn;

use super::{Findings, hex, raw};
use crate::Store;
use crate::codec::element;
use crate::db_name;
use crate::error::{Lmdb as _, StoreError};

impl Store {
    /// The cognitive trace's databases agree: every entry decodes, no entry
    /// id is above `last_trace_id`, every entry's touched elements are
    /// indexed by element and every element index entry points at an entry
    /// that lists it, and every per-originator sequence is 8 bytes.
    pub(super) fn check_trace(&self, txn: &RoTxn<'_>, f: &mut Findings) -> Result<(), StoreError> {
        let last = self.last_trace_id(txn)?;
        for item in self.db.trace.iter(txn).lmdb()? {
            let (id, body) = item.lmdb()?;
            if id > last {
                f.add(
                    "trace-order",
                    db_name::TRACE,
                    format!("entry {id} is above last_trace_id {last}"),
                );
            }
            if crate::trace::decode_entry(body).is_err() {
                f.add(
                    "trace-entry",
                    db_name::TRACE,
                    format!("entry {id} is not a JSON document"),
                );
            }
        }
        let listed = self.check_trace_touches(txn, f)?;
        for item in raw(self.db.trace_elements).iter(txn).lmdb()? {
            let (key, _) = item.lmdb()?;
            let Some((e, id)) = key.split_at_checked(element::LEN) else {
                f.add(
                    "trace-index",
                    db_name::TRACE_ELEMENTS,
                    format!("a key of {} bytes", key.len()),
                );
                continue;
            };
            let id = <[u8; 8]>::try_from(id).map(u64::from_be_bytes);
            match id {
                Ok(id) if listed.contains(&(e.to_vec(), id)) => {}
                Ok(id) => f.add(
                    "trace-index",
                    db_name::TRACE_ELEMENTS,
                    format!("{} → entry {id}, which does not list it", hex(e)),
                ),
                Err(_) => f.add(
                    "trace-index",
                    db_name::TRACE_ELEMENTS,
                    format!("a key of {} bytes", key.len()),
                ),
            }
        }
        for item in raw(self.db.trace_seqs).iter(txn).lmdb()? {
            let (originator, seq) = item.lmdb()?;
            if seq.len() != 8 {
                f.add(
                    "trace-seq",
                    db_name::TRACE_SEQS,
                    format!(
                        "the sequence of {} is {} bytes",
                        String::from_utf8_lossy(originator),
                        seq.len()
                    ),
                );
            }
        }
        Ok(())
    }

    /// Checks that every entry's touched elements are indexed by element,
    /// and returns them as `(element key, entry id)`.
    fn check_trace_touches(
        &self,
        txn: &RoTxn<'_>,
        f: &mut Findings,
    ) -> Result<HashSet<(Vec<u8>, u64)>, StoreError> {
        let mut listed: HashSet<(Vec<u8>, u64)> = HashSet::new();
        for item in self.db.trace_touches.iter(txn).lmdb()? {
            let (id, touched) = item.lmdb()?;
            if self.db.trace.get(txn, &id).lmdb()?.is_none() {
                f.add(
                    "trace-index",
                    db_name::TRACE_TOUCHES,
                    format!("entry {id} touches elements but does not exist"),
                );
            }
            if touched.len() % element::LEN != 0 {
                f.add(
                    "trace-index",
                    db_name::TRACE_TOUCHES,
                    format!("entry {id}'s element list is {} bytes", touched.len()),
                );
                continue;
            }
            // A range of created elements is two chunks flagged
            // `RANGE_FLAG`, indexed under the second (see `trace.rs`).
            let mut chunks = touched.chunks(element::LEN);
            while let Some(first) = chunks.next() {
                let e = if first[0] & crate::trace::RANGE_FLAG == 0 {
                    first
                } else {
                    match chunks.next() {
                        Some(last) if last[0] == first[0] && last[1..] >= first[1..] => last,
                        _ => {
                            f.add(
                                "trace-index",
                                db_name::TRACE_TOUCHES,
                                format!(
                                    "entry {id} has a range {} without a valid end",
                                    hex(first)
                                ),
                            );
                            continue;
                        }
                    }
                };
                listed.insert((e.to_vec(), id));
                let mut key = e.to_vec();
                key.extend_from_slice(&id.to_be_bytes());
                if raw(self.db.trace_elements).get(txn, &key).lmdb()?.is_none() {
                    f.add(
                        "trace-index",
                        db_name::TRACE_ELEMENTS,
                        format!(
                            "entry {id} touched {} but the element index lacks it",
                            hex(e)
                        ),
                    );
                }
            }
        }
        Ok(listed)
    }
}

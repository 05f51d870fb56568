//! The cognitive trace's databases (BRIEF §7): entries numbered by one
//! monotonic sequence, a per-originator sequence, and an index from each
//! element to the entries that touched it.
//!
//! The store keeps entries as JSON and never looks inside them (since
//! format 4 behind a byte that says whether the text is compressed with
//! DEFLATE, as entries of 512 bytes and more are): what an
//! entry says is the engine's business (`kip-nexus` writes a command's
//! entry in the same write transaction as the command, so an entry exists
//! exactly when its change was committed). The store owns the numbering,
//! the element index and retention ([`Store::trim_trace`]).
//!
//! Unlike the change log, the trace is not part of the graph: no counts, no
//! text index, never seen by KQL.
//!
//! A write's newly created elements are fresh ids, contiguous per kind, so
//! an entry can name them as ranges (`first..=last`) instead of one by one
//! ([`Store::put_trace_with_ranges`]): a bulk import of 40,000 elements
//! then costs one index key per range, not per element. In
//! `trace_touches` a range is two 9-byte chunks whose tags have
//! [`RANGE_FLAG`] set (its first id, then its last); its key in
//! `trace_elements` is the second chunk followed by the entry id. Ranges
//! never overlap (ids of new elements are never reused), so the entry whose
//! range holds an element is found by one seek to the first range ending at
//! or after it.

use heed::{RoTxn, RwTxn};
use serde_json::Value;

use crate::Store;
use crate::codec::element;
use crate::error::{Lmdb as _, StoreError};
use crate::format::meta_key;
use crate::ids::ElementId;

/// The longest originator name, in bytes (it is a key of `trace_seqs`).
pub const MAX_ORIGINATOR_LEN: usize = 256;

/// The numbers an entry gets when it is appended: its id (`T:{id}`) and its
/// sequence number within its originator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceSlot {
    pub id: u64,
    pub seq: u64,
}

/// Set on the tag of the two chunks that name a range of created elements
/// (see the module doc).
pub const RANGE_FLAG: u8 = 0x80;

/// An element's encoding with the range flag on its tag.
fn range_chunk(e: ElementId) -> [u8; element::LEN] {
    let mut chunk = element::encode(e);
    chunk[0] |= RANGE_FLAG;
    chunk
}

fn chunk_key(chunk: &[u8; element::LEN], entry: u64) -> [u8; element::LEN + 8] {
    let mut key = [0; element::LEN + 8];
    key[..element::LEN].copy_from_slice(chunk);
    key[element::LEN..].copy_from_slice(&entry.to_be_bytes());
    key
}

/// The elements and ranges an entry's `trace_touches` list names.
fn decode_touched(bytes: &[u8]) -> Result<Touched, StoreError> {
    let corrupt = |e: crate::codec::DecodeError| StoreError::corrupt(e.to_string());
    let mut out = Touched::default();
    let mut chunks = bytes.chunks(element::LEN);
    while let Some(chunk) = chunks.next() {
        if chunk.first().is_some_and(|t| t & RANGE_FLAG != 0) {
            let last = chunks.next().ok_or_else(|| {
                StoreError::corrupt("a trace range has a first element but no last")
            })?;
            let unflag = |c: &[u8]| {
                let mut c = c.to_vec();
                c[0] &= !RANGE_FLAG;
                element::decode(&c).map_err(corrupt)
            };
            out.ranges.push((unflag(chunk)?, unflag(last)?));
        } else {
            out.elements.push(element::decode(chunk).map_err(corrupt)?);
        }
    }
    Ok(out)
}

#[derive(Debug, Default)]
struct Touched {
    elements: Vec<ElementId>,
    ranges: Vec<(ElementId, ElementId)>,
}

fn element_key(e: ElementId, entry: u64) -> [u8; element::LEN + 8] {
    let mut key = [0; element::LEN + 8];
    key[..element::LEN].copy_from_slice(&element::encode(e));
    key[element::LEN..].copy_from_slice(&entry.to_be_bytes());
    key
}

fn decode_u64(bytes: &[u8], what: &str) -> Result<u64, StoreError> {
    <[u8; 8]>::try_from(bytes)
        .map(u64::from_be_bytes)
        .map_err(|_| StoreError::corrupt(format!("{what} is not 8 bytes")))
}

/// The first byte of a stored entry (since format 4): how the JSON text
/// after it is kept.
mod body_tag {
    /// The JSON text as is (short entries, where compressing saves little).
    pub const PLAIN: u8 = 0;
    /// The JSON text compressed with raw DEFLATE.
    pub const DEFLATE: u8 = 1;
}

/// Entries shorter than this stay plain: a read's folded entry is ~350
/// bytes and compresses by about a third, while an import's entry carries
/// its whole command (tens of kilobytes of KIP that compress ~8×).
const COMPRESS_FROM: usize = 512;

/// The JSON text of an entry as [`Store::visit_trace_stored`] gives it.
pub fn stored_trace_json(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, StoreError> {
    match bytes.split_first() {
        Some((&body_tag::PLAIN, json)) => Ok(std::borrow::Cow::Borrowed(json)),
        Some((&body_tag::DEFLATE, packed)) => Ok(std::borrow::Cow::Owned(inflate(packed)?)),
        Some((tag, _)) => Err(StoreError::corrupt(format!(
            "a trace entry has the unknown encoding {tag}"
        ))),
        None => Err(StoreError::corrupt("a trace entry is empty")),
    }
}

/// Decodes a stored entry (format 4: a [`body_tag`] byte and the JSON).
pub(crate) fn decode_entry(bytes: &[u8]) -> Result<Value, StoreError> {
    let not_json =
        |e: serde_json::Error| StoreError::corrupt(format!("a trace entry is not JSON: {e}"));
    match bytes.split_first() {
        Some((&body_tag::PLAIN, json)) => serde_json::from_slice(json).map_err(not_json),
        Some((&body_tag::DEFLATE, packed)) => {
            let json = inflate(packed)?;
            serde_json::from_slice(&json).map_err(not_json)
        }
        Some((tag, _)) => Err(StoreError::corrupt(format!(
            "a trace entry has the unknown encoding {tag}"
        ))),
        None => Err(StoreError::corrupt("a trace entry is empty")),
    }
}

fn inflate(packed: &[u8]) -> Result<Vec<u8>, StoreError> {
    use std::io::Read as _;
    let mut json = Vec::with_capacity(packed.len() * 8);
    flate2::read::DeflateDecoder::new(packed)
        .read_to_end(&mut json)
        .map_err(|e| {
            StoreError::corrupt(format!("a compressed trace entry does not inflate: {e}"))
        })?;
    Ok(json)
}

fn encode_entry(body: &Value) -> Result<Vec<u8>, StoreError> {
    let json =
        serde_json::to_vec(body).map_err(|e| StoreError::invalid(format!("a trace entry: {e}")))?;
    Ok(encode_json(&json))
}

/// The stored form of an entry's JSON text.
pub(crate) fn encode_json(json: &[u8]) -> Vec<u8> {
    use std::io::Write as _;
    if json.len() >= COMPRESS_FROM {
        // The fastest level: an import writes its whole command here, inside
        // its transaction, and level 1 already takes KIP text to ~1/8.
        let mut out = Vec::with_capacity(json.len() / 6 + 16);
        out.push(body_tag::DEFLATE);
        let mut encoder = flate2::write::DeflateEncoder::new(out, flate2::Compression::fast());
        // Writing to a Vec cannot fail.
        if encoder.write_all(json).is_ok()
            && let Ok(out) = encoder.finish()
            && out.len() < json.len()
        {
            return out;
        }
    }
    let mut out = Vec::with_capacity(json.len() + 1);
    out.push(body_tag::PLAIN);
    out.extend_from_slice(json);
    out
}

fn check_originator(originator: &str) -> Result<(), StoreError> {
    if originator.is_empty() || originator.len() > MAX_ORIGINATOR_LEN {
        return Err(StoreError::invalid(format!(
            "an originator must hold 1 to {MAX_ORIGINATOR_LEN} bytes"
        )));
    }
    Ok(())
}

impl Store {
    /// The migration to format 4: every entry, stored as bare JSON text
    /// until then, gets its encoding byte and the long ones are compressed.
    /// Returns the entries and their bytes before and after.
    pub(crate) fn compress_trace(
        &self,
        txn: &mut RwTxn<'_>,
    ) -> Result<(u64, u64, u64), StoreError> {
        let mut ids = Vec::new();
        for item in self.db.trace.iter(txn).lmdb()? {
            ids.push(item.lmdb()?.0);
        }
        let (mut before, mut after) = (0, 0);
        for &id in &ids {
            let Some(json) = self.db.trace.get(txn, &id).lmdb()? else {
                continue;
            };
            before += json.len() as u64;
            if serde_json::from_slice::<serde::de::IgnoredAny>(json).is_err() {
                return Err(StoreError::corrupt(format!(
                    "trace entry {id} is not JSON; it cannot be upgraded to format 4"
                )));
            }
            let stored = encode_json(json);
            after += stored.len() as u64;
            self.db.trace.put(txn, &id, &stored).lmdb()?;
        }
        Ok((ids.len() as u64, before, after))
    }

    /// Claims the next entry id and `originator`'s next sequence number
    /// (both start at 1 and are never reused, even after retention dropped
    /// the entries that had them).
    pub fn next_trace_slot(
        &self,
        txn: &mut RwTxn<'_>,
        originator: &str,
    ) -> Result<TraceSlot, StoreError> {
        check_originator(originator)?;
        let id = self.last_trace_id(txn)? + 1;
        self.db
            .meta
            .put(txn, meta_key::LAST_TRACE_ID, &id.to_be_bytes())
            .lmdb()?;
        let seq = match self.db.trace_seqs.get(txn, originator).lmdb()? {
            Some(bytes) => decode_u64(bytes, "a trace sequence")? + 1,
            None => 1,
        };
        self.db
            .trace_seqs
            .put(txn, originator, &seq.to_be_bytes())
            .lmdb()?;
        Ok(TraceSlot { id, seq })
    }

    /// Writes entry `id` (from [`Store::next_trace_slot`]) with the elements
    /// it touched, which [`Store::trace_touching`] then finds.
    pub fn put_trace(
        &self,
        txn: &mut RwTxn<'_>,
        id: u64,
        body: &Value,
        elements: &[ElementId],
    ) -> Result<(), StoreError> {
        self.put_trace_with_ranges(txn, id, body, elements, &[])
    }

    /// [`Store::put_trace`] with `created`: ranges `(first, last)` of
    /// elements the entry's write created (both ends of one kind, `first <=
    /// last`, ids no other entry's range holds), indexed by one key each.
    pub fn put_trace_with_ranges(
        &self,
        txn: &mut RwTxn<'_>,
        id: u64,
        body: &Value,
        elements: &[ElementId],
        created: &[(ElementId, ElementId)],
    ) -> Result<(), StoreError> {
        self.db.trace.put(txn, &id, &encode_entry(body)?).lmdb()?;
        if elements.is_empty() && created.is_empty() {
            return Ok(());
        }
        let mut touched = Vec::with_capacity((elements.len() + 2 * created.len()) * element::LEN);
        for &e in elements {
            touched.extend_from_slice(&element::encode(e));
            self.db
                .trace_elements
                .put(txn, &element_key(e, id), &())
                .lmdb()?;
        }
        for &(first, last) in created {
            let same_kind = matches!(
                (first, last),
                (ElementId::Concept(_), ElementId::Concept(_))
                    | (ElementId::Proposition(_), ElementId::Proposition(_))
            );
            if !same_kind || first > last {
                return Err(StoreError::invalid(format!(
                    "{first}..{last} is not a range of elements of one kind"
                )));
            }
            let end = range_chunk(last);
            touched.extend_from_slice(&range_chunk(first));
            touched.extend_from_slice(&end);
            self.db
                .trace_elements
                .put(txn, &chunk_key(&end, id), &())
                .lmdb()?;
        }
        self.db.trace_touches.put(txn, &id, &touched).lmdb()
    }

    /// Replaces the body of an existing entry (its flags changed, or a
    /// folded read counted once more); `false` if there is no entry `id`.
    pub fn set_trace_body(
        &self,
        txn: &mut RwTxn<'_>,
        id: u64,
        body: &Value,
    ) -> Result<bool, StoreError> {
        if self.db.trace.get(txn, &id).lmdb()?.is_none() {
            return Ok(false);
        }
        self.db.trace.put(txn, &id, &encode_entry(body)?).lmdb()?;
        Ok(true)
    }

    /// Entry `id`'s body.
    pub fn trace_entry(&self, txn: &RoTxn<'_>, id: u64) -> Result<Option<Value>, StoreError> {
        match self.db.trace.get(txn, &id).lmdb()? {
            Some(bytes) => decode_entry(bytes).map(Some),
            None => Ok(None),
        }
    }

    /// The elements entry `id` touched one by one, in the order they were
    /// given (its ranges: [`Store::trace_created`]).
    pub fn trace_elements(&self, txn: &RoTxn<'_>, id: u64) -> Result<Vec<ElementId>, StoreError> {
        Ok(self.touched(txn, id)?.elements)
    }

    /// The ranges `(first, last)` of elements entry `id` created.
    pub fn trace_created(
        &self,
        txn: &RoTxn<'_>,
        id: u64,
    ) -> Result<Vec<(ElementId, ElementId)>, StoreError> {
        Ok(self.touched(txn, id)?.ranges)
    }

    fn touched(&self, txn: &RoTxn<'_>, id: u64) -> Result<Touched, StoreError> {
        match self.db.trace_touches.get(txn, &id).lmdb()? {
            Some(bytes) => decode_touched(bytes),
            None => Ok(Touched::default()),
        }
    }

    /// The entries that touched `element`, oldest first: those that name
    /// it and the one whose range of created elements holds it.
    pub fn trace_touching(&self, txn: &RoTxn<'_>, e: ElementId) -> Result<Vec<u64>, StoreError> {
        let prefix = element::encode(e);
        let mut out = Vec::new();
        for item in self.db.trace_elements.prefix_iter(txn, &prefix).lmdb()? {
            let (key, ()) = item.lmdb()?;
            out.push(decode_u64(&key[element::LEN..], "a trace element key")?);
        }
        if let Some(creator) = self.trace_creator(txn, e)?
            && let Err(at) = out.binary_search(&creator)
        {
            out.insert(at, creator);
        }
        Ok(out)
    }

    /// The entry whose range of created elements holds `e`, if any: the
    /// first range ending at or after `e` (ranges never overlap).
    fn trace_creator(&self, txn: &RoTxn<'_>, e: ElementId) -> Result<Option<u64>, StoreError> {
        let from = chunk_key(&range_chunk(e), 0);
        let range = (
            std::ops::Bound::Included(&from[..]),
            std::ops::Bound::Unbounded,
        );
        let Some(item) = self.db.trace_elements.range(txn, &range).lmdb()?.next() else {
            return Ok(None);
        };
        let (key, ()) = item.lmdb()?;
        if key.len() != element::LEN + 8 || key[0] != from[0] {
            return Ok(None); // no range of this kind ends at or after `e`
        }
        let entry = decode_u64(&key[element::LEN..], "a trace element key")?;
        let last = {
            let mut c = key[..element::LEN].to_vec();
            c[0] &= !RANGE_FLAG;
            element::decode(&c).map_err(|err| StoreError::corrupt(err.to_string()))?
        };
        let holds = self
            .trace_created(txn, entry)?
            .iter()
            .any(|&(first, l)| l == last && first <= e);
        Ok(holds.then_some(entry))
    }

    /// Visits entries in id order (`newest_first` reverses it), within
    /// `after < id < before`, until `visit` returns `false`.
    pub fn visit_trace(
        &self,
        txn: &RoTxn<'_>,
        after: Option<u64>,
        before: Option<u64>,
        newest_first: bool,
        mut visit: impl FnMut(u64, Value) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        self.visit_trace_stored(txn, after, before, newest_first, |id, bytes| {
            visit(id, decode_entry(bytes)?)
        })
    }

    /// [`Store::visit_trace`] without decoding: each entry as stored, so a
    /// scan can pass over an entry by its size before paying for inflating
    /// and parsing it ([`stored_trace_json`] decodes one).
    pub fn visit_trace_stored(
        &self,
        txn: &RoTxn<'_>,
        after: Option<u64>,
        before: Option<u64>,
        newest_first: bool,
        mut visit: impl FnMut(u64, &[u8]) -> Result<bool, StoreError>,
    ) -> Result<(), StoreError> {
        let low = after.map_or(0, |a| a.saturating_add(1));
        let high = before.unwrap_or(u64::MAX);
        if low >= high {
            return Ok(());
        }
        let range = low..high;
        if newest_first {
            for item in self.db.trace.rev_range(txn, &range).lmdb()? {
                let (id, bytes) = item.lmdb()?;
                if !visit(id, bytes)? {
                    break;
                }
            }
        } else {
            for item in self.db.trace.range(txn, &range).lmdb()? {
                let (id, bytes) = item.lmdb()?;
                if !visit(id, bytes)? {
                    break;
                }
            }
        }
        Ok(())
    }

    /// The id of the last entry ever appended (0 if none): one tiny read,
    /// for polling.
    pub fn last_trace_id(&self, txn: &RoTxn<'_>) -> Result<u64, StoreError> {
        match self.db.meta.get(txn, meta_key::LAST_TRACE_ID).lmdb()? {
            Some(bytes) => decode_u64(bytes, "meta `last_trace_id`"),
            None => Ok(0),
        }
    }

    /// How many entries the trace holds now.
    pub fn trace_len(&self, txn: &RoTxn<'_>) -> Result<u64, StoreError> {
        self.db.trace.len(txn).lmdb()
    }

    /// Retention: drops the oldest entries until at most `keep` remain, and
    /// any oldest entries `expired` says are too old; returns how many were
    /// dropped. Entries are visited oldest first and the age check stops at
    /// the first entry that is not expired (entries are appended in time
    /// order).
    pub fn trim_trace(
        &self,
        txn: &mut RwTxn<'_>,
        keep: u64,
        expired: Option<&dyn Fn(&Value) -> bool>,
    ) -> Result<u64, StoreError> {
        let len = self.trace_len(txn)?;
        let mut excess = len.saturating_sub(keep);
        let mut doomed = Vec::new();
        for item in self.db.trace.iter(txn).lmdb()? {
            let (id, bytes) = item.lmdb()?;
            if excess > 0 {
                excess -= 1;
                doomed.push(id);
                continue;
            }
            if let Some(expired) = expired
                && expired(&decode_entry(bytes)?)
            {
                doomed.push(id);
                continue;
            }
            break;
        }
        for &id in &doomed {
            let touched = self.touched(txn, id)?;
            for e in touched.elements {
                self.db
                    .trace_elements
                    .delete(txn, &element_key(e, id))
                    .lmdb()?;
            }
            for (_, last) in touched.ranges {
                self.db
                    .trace_elements
                    .delete(txn, &chunk_key(&range_chunk(last), id))
                    .lmdb()?;
            }
            self.db.trace_touches.delete(txn, &id).lmdb()?;
            self.db.trace.delete(txn, &id).lmdb()?;
        }
        Ok(doomed.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{Store, StoreError};

    /// Format 3 kept bare JSON text; the upgrade gives every entry its
    /// encoding byte, and each reads back as it was written.
    #[test]
    fn the_upgrade_to_format_4_keeps_every_entry() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let long = json!({"command": "FIND(?x) WHERE { ?x {type: \"Drug\"} }\n".repeat(100)});
        let short = json!({"seq": "1", "tag": []});
        store
            .write(|txn| {
                for (id, body) in [(1u64, &long), (2, &short)] {
                    let json = serde_json::to_vec(body).expect("json");
                    store.db.trace.put(txn, &id, &json).expect("put");
                }
                store.migrate(txn, 3)
            })
            .expect("upgrade");
        let read = |id| {
            store
                .read(|txn| store.trace_entry(txn, id))
                .expect("read")
                .expect("there")
        };
        assert_eq!(read(1), long);
        assert_eq!(read(2), short);
        let dir = tempfile::tempdir().expect("tempdir");
        let other = Store::open(dir.path()).expect("open");
        let bad = other.write(|txn| {
            other.db.trace.put(txn, &1, b"not json").expect("put");
            other.migrate(txn, 3)
        });
        assert!(matches!(bad, Err(StoreError::Corrupt { .. })), "{bad:?}");
    }
}

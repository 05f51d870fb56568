//! Embedding vectors of concepts, for SEARCH by meaning, and the backlog
//! that keeps them current.
//!
//! The store does not embed: the engine does, after commit. Every write that
//! changes a concept's text-index document (its grounding text) marks the
//! concept in `vector_backlog` in the same transaction, with a sequence
//! number; the engine later reads a slice of the backlog, embeds the texts
//! outside any transaction and settles each concept with
//! [`Store::settle_vector`], which stores the vector only if the concept was
//! not marked again meanwhile (a newer write wins). Deleting a concept drops
//! its vector and backlog entry in the deleting transaction, so a search can
//! never find a deleted concept by its vector.
//!
//! Each vector belongs to a group the engine chooses (its language group),
//! and `meta` keeps, per group, the count and sum of its vectors
//! (`vector_sum_<group>`: `u64` BE count · one `f64` LE per dimension),
//! changed with every vector stored or dropped: the engine centres each
//! group on its mean ([`Store::vector_centroids`]), which removes most of a
//! multilingual model's bias toward texts of the query's own language.
//!
//! Beside each vector the store keeps its binary code, the prefilter of
//! the search (`vector_codes.rs`), stored and dropped with the vector.
//!
//! The model whose vectors are stored is recorded in `meta`
//! (`vector_model`); [`Store::reset_vectors`] starts over for another one.

use heed::types::Bytes;
use heed::{RoTxn, RwTxn};

use crate::codec::vector;
use crate::error::{Lmdb as _, StoreError};
use crate::ids::ConceptId;
use crate::vector_codes::CentredQuery;
use crate::{ElementId, Store};

const NEXT_SEQ: &str = "next_vector_seq";
const MODEL: &str = "vector_model";
const SUM_PREFIX: &str = "vector_sum_";

fn decode_sum(raw: &[u8]) -> Option<(u64, Vec<f64>)> {
    let (count, rest) = raw.split_first_chunk::<8>()?;
    let sum = rest
        .chunks_exact(8)
        .map(|c| <[u8; 8]>::try_from(c).map(f64::from_le_bytes))
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
    Some((u64::from_be_bytes(*count), sum))
}

impl Store {
    /// Marks the concepts among `elements` as needing a new vector.
    pub(crate) fn mark_vectors_stale(
        &self,
        txn: &mut RwTxn<'_>,
        elements: impl IntoIterator<Item = ElementId>,
    ) -> Result<(), StoreError> {
        let mut seq = None;
        for element in elements {
            let ElementId::Concept(id) = element else {
                continue;
            };
            let s = match seq {
                Some(s) => s,
                None => {
                    let s = self.peek_id(txn, NEXT_SEQ)?;
                    self.take_id(txn, NEXT_SEQ, s)?;
                    *seq.insert(s)
                }
            };
            self.db
                .vector_backlog
                .put(txn, &id, &s.to_be_bytes())
                .lmdb()?;
        }
        Ok(())
    }

    /// Drops the vector and backlog entry of a concept being deleted.
    pub(crate) fn forget_vector(
        &self,
        txn: &mut RwTxn<'_>,
        id: ConceptId,
    ) -> Result<(), StoreError> {
        self.drop_vector(txn, id)?;
        self.db.vector_backlog.delete(txn, &id).lmdb()?;
        Ok(())
    }

    /// Drops `id`'s vector, taking it out of its group's sum.
    fn drop_vector(&self, txn: &mut RwTxn<'_>, id: ConceptId) -> Result<(), StoreError> {
        let old = self
            .db
            .vectors
            .get(txn, &id)
            .lmdb()?
            .and_then(vector::decode);
        if let Some((group, v)) = old {
            self.add_to_sum(txn, group, &v, -1.0)?;
            self.db.vectors.delete(txn, &id).lmdb()?;
            self.drop_code(txn, id)?;
        }
        Ok(())
    }

    /// Adds `sign × v` to group `group`'s count and sum.
    fn add_to_sum(
        &self,
        txn: &mut RwTxn<'_>,
        group: u8,
        v: &[f32],
        sign: f64,
    ) -> Result<(), StoreError> {
        let key = format!("{SUM_PREFIX}{group}");
        let found = self.db.meta.get(txn, &key).lmdb()?;
        let (mut count, mut sum) = match found.map(decode_sum) {
            Some(Some(cs)) => cs,
            Some(None) => return Err(StoreError::corrupt(format!("meta `{key}`"))),
            None => (0, vec![0.0; v.len()]),
        };
        if sum.len() != v.len() {
            sum = vec![0.0; v.len()];
            count = 0;
        }
        count = if sign > 0.0 {
            count + 1
        } else {
            count.saturating_sub(1)
        };
        sum.iter_mut()
            .zip(v)
            .for_each(|(s, x)| *s += sign * f64::from(*x));
        if count == 0 {
            return self.db.meta.delete(txn, &key).lmdb().map(drop);
        }
        let mut raw = count.to_be_bytes().to_vec();
        sum.iter()
            .for_each(|s| raw.extend_from_slice(&s.to_le_bytes()));
        self.db.meta.put(txn, &key, &raw).lmdb()
    }

    /// Every group that has vectors: its number, how many, and their mean.
    pub fn vector_centroids(
        &self,
        txn: &RoTxn<'_>,
    ) -> Result<Vec<(u8, u64, Vec<f32>)>, StoreError> {
        let mut out = Vec::new();
        for entry in self.db.meta.prefix_iter(txn, SUM_PREFIX).lmdb()? {
            let (key, raw) = entry.lmdb()?;
            let group = key[SUM_PREFIX.len()..].parse::<u8>();
            let (Ok(group), Some((count, sum))) = (group, decode_sum(raw)) else {
                return Err(StoreError::corrupt(format!("meta `{key}`")));
            };
            let mean = sum
                .iter()
                .map(|s| (s / count.max(1) as f64) as f32)
                .collect();
            out.push((group, count, mean));
        }
        Ok(out)
    }

    /// Up to `limit` concepts waiting for a vector, in id order, each with
    /// the sequence number [`Store::settle_vector`] takes.
    pub fn vector_backlog(
        &self,
        txn: &RoTxn<'_>,
        limit: usize,
    ) -> Result<Vec<(ConceptId, u64)>, StoreError> {
        let mut out = Vec::new();
        for entry in self.db.vector_backlog.iter(txn).lmdb()?.take(limit) {
            let (id, seq) = entry.lmdb()?;
            let seq = <[u8; 8]>::try_from(seq)
                .map(u64::from_be_bytes)
                .map_err(|_| StoreError::corrupt(format!("vector backlog entry of {id}")))?;
            out.push((id, seq));
        }
        Ok(out)
    }

    /// How many concepts wait for a vector.
    pub fn vector_backlog_len(&self, txn: &RoTxn<'_>) -> Result<u64, StoreError> {
        self.db.vector_backlog.len(txn).lmdb()
    }

    /// How many concepts have a vector.
    pub fn vector_count(&self, txn: &RoTxn<'_>) -> Result<u64, StoreError> {
        self.db.vectors.len(txn).lmdb()
    }

    /// Stores `vector` (of group `group`) for `id` if its backlog entry still has sequence
    /// `seq` (no write marked it again since it was read) and removes the
    /// entry; returns whether it did. A concept that no longer exists only
    /// loses its entry.
    pub fn settle_vector(
        &self,
        txn: &mut RwTxn<'_>,
        id: ConceptId,
        seq: u64,
        group: u8,
        vector: &[f32],
    ) -> Result<bool, StoreError> {
        let current = self.db.vector_backlog.get(txn, &id).lmdb()?;
        if current != Some(&seq.to_be_bytes()[..]) {
            return Ok(false);
        }
        self.db.vector_backlog.delete(txn, &id).lmdb()?;
        self.drop_vector(txn, id)?;
        if !self.contains(txn, ElementId::Concept(id))? {
            return Ok(false);
        }
        let stored = vector::encode(group, vector);
        self.db.vectors.put(txn, &id, &stored).lmdb()?;
        self.put_code(txn, id, &stored)?;
        self.add_to_sum(txn, group, vector, 1.0)?;
        Ok(true)
    }

    /// The model the stored vectors come from, as [`Store::reset_vectors`]
    /// recorded it.
    pub fn vector_model(&self, txn: &RoTxn<'_>) -> Result<Option<String>, StoreError> {
        let raw = self.db.meta.get(txn, MODEL).lmdb()?;
        Ok(raw.map(|b| String::from_utf8_lossy(b).into_owned()))
    }

    /// Drops every vector (with its code, and the code centres), records
    /// `model` as the one vectors now come from and marks every concept for
    /// embedding; returns how many were marked.
    pub fn reset_vectors(&self, txn: &mut RwTxn<'_>, model: &str) -> Result<u64, StoreError> {
        self.db.vectors.clear(txn).lmdb()?;
        self.db.vector_codes.clear(txn).lmdb()?;
        self.clear_code_centres(txn)?;
        self.db.vector_backlog.clear(txn).lmdb()?;
        for group in 0..=u8::MAX {
            self.db
                .meta
                .delete(txn, &format!("{SUM_PREFIX}{group}"))
                .lmdb()?;
        }
        self.db.meta.put(txn, MODEL, model.as_bytes()).lmdb()?;
        let ids = {
            let keys = self.db.concepts.remap_data_type::<Bytes>();
            let mut ids = Vec::new();
            for entry in keys.iter(txn).lmdb()? {
                ids.push(ElementId::Concept(entry.lmdb()?.0));
            }
            ids
        };
        let n = ids.len() as u64;
        self.mark_vectors_stale(txn, ids)?;
        Ok(n)
    }

    /// Calls `hit` with every concept that has a vector and its cosine with
    /// `query` after centring: each stored vector `d` of group `g` is taken
    /// as `d − centres[g]` (no centre: as it is), `query` is already centred
    /// and of unit length. Two integer dot products per vector.
    pub fn scan_vectors_centred(
        &self,
        txn: &RoTxn<'_>,
        query: &[f32],
        centres: &[(u8, Vec<f32>)],
        mut hit: impl FnMut(ConceptId, f32),
    ) -> Result<(), StoreError> {
        let scorer = CentredQuery::new(query, centres);
        for entry in self.db.vectors.iter(txn).lmdb()? {
            let (id, stored) = entry.lmdb()?;
            if let Some(score) = scorer.score(stored) {
                hit(id, score);
            }
        }
        Ok(())
    }

    /// Calls `hit` with every concept that has a vector and its dot product
    /// with `query` (a unit vector of the stored dimension: the cosine).
    /// An exact scan in integer arithmetic over the quantised vectors.
    pub fn scan_vectors(
        &self,
        txn: &RoTxn<'_>,
        query: &[f32],
        mut hit: impl FnMut(ConceptId, f32),
    ) -> Result<(), StoreError> {
        let (scale, q) = vector::quantize(query);
        for entry in self.db.vectors.iter(txn).lmdb()? {
            let (id, stored) = entry.lmdb()?;
            if let Some(score) = vector::dot(scale, &q, stored) {
                hit(id, score);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{ConceptRecord, ElementId, Namespace, Store, StoreError};

    fn unit(i: usize) -> Vec<f32> {
        let mut v = vec![0.0f32; 8];
        v[i % 8] = 1.0;
        v
    }

    /// The backlog, the settle rule (a newer write wins), the group sums,
    /// deletion, and the store's check of all of them.
    #[test]
    fn vectors_follow_their_concepts_and_the_newest_write() -> Result<(), StoreError> {
        let dir = tempfile::tempdir().map_err(|e| StoreError::invalid(e.to_string()))?;
        let store = Store::open(dir.path())?;
        let (a, b) = store.write(|txn| {
            let ty = store.intern(txn, Namespace::ConceptType, "Memory")?;
            let mut ids = Vec::new();
            for name in ["a", "b"] {
                let rec = ConceptRecord {
                    type_id: ty,
                    name: name.into(),
                    ..Default::default()
                };
                let id = store.create_concept(txn, &rec)?;
                store.index_document(txn, ElementId::Concept(id), &[(name.into(), 1)], 1)?;
                ids.push(id);
            }
            Ok::<_, StoreError>((ids[0], ids[1]))
        })?;
        let waiting = store.read(|txn| store.vector_backlog(txn, 10))?;
        assert_eq!(waiting.iter().map(|w| w.0).collect::<Vec<_>>(), [a, b]);
        // `a` is written again before its vector is settled: the old
        // sequence no longer settles it.
        store.write(|txn| {
            store.index_document(txn, ElementId::Concept(a), &[("a2".into(), 1)], 1)
        })?;
        store.write(|txn| {
            assert!(!store.settle_vector(txn, waiting[0].0, waiting[0].1, 0, &unit(0))?);
            assert!(store.settle_vector(txn, waiting[1].0, waiting[1].1, 1, &unit(1))?);
            Ok::<_, StoreError>(())
        })?;
        let again = store.read(|txn| store.vector_backlog(txn, 10))?;
        assert_eq!(again.len(), 1);
        store.write(|txn| store.settle_vector(txn, again[0].0, again[0].1, 0, &unit(2)))?;
        let centroids = store.read(|txn| store.vector_centroids(txn))?;
        assert_eq!(
            centroids.iter().map(|c| (c.0, c.1)).collect::<Vec<_>>(),
            [(0, 1), (1, 1)]
        );
        assert!(store.check()?.ok);
        // Deleting a concept drops its vector and its group's share.
        store.write(|txn| store.delete_concept(txn, b).map(drop))?;
        let mut seen = Vec::new();
        store.read(|txn| store.scan_vectors(txn, &unit(2), |id, s| seen.push((id, s))))?;
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].0, a);
        let centroids = store.read(|txn| store.vector_centroids(txn))?;
        assert_eq!(
            centroids.iter().map(|c| (c.0, c.1)).collect::<Vec<_>>(),
            [(0, 1)]
        );
        let report = store.check()?;
        assert!(report.ok, "{report:?}");
        Ok(())
    }
}

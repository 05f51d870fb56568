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
//! The model whose vectors are stored is recorded in `meta`
//! (`vector_model`); [`Store::reset_vectors`] starts over for another one.

use heed::types::Bytes;
use heed::{RoTxn, RwTxn};

use crate::codec::vector;
use crate::error::{Lmdb as _, StoreError};
use crate::ids::ConceptId;
use crate::{ElementId, Store};

const NEXT_SEQ: &str = "next_vector_seq";
const MODEL: &str = "vector_model";

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
        self.db.vectors.delete(txn, &id).lmdb()?;
        self.db.vector_backlog.delete(txn, &id).lmdb()?;
        Ok(())
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

    /// Stores `vector` for `id` if its backlog entry still has sequence
    /// `seq` (no write marked it again since it was read) and removes the
    /// entry; returns whether it did. A concept that no longer exists only
    /// loses its entry.
    pub fn settle_vector(
        &self,
        txn: &mut RwTxn<'_>,
        id: ConceptId,
        seq: u64,
        vector: &[f32],
    ) -> Result<bool, StoreError> {
        let current = self.db.vector_backlog.get(txn, &id).lmdb()?;
        if current != Some(&seq.to_be_bytes()[..]) {
            return Ok(false);
        }
        self.db.vector_backlog.delete(txn, &id).lmdb()?;
        if !self.contains(txn, ElementId::Concept(id))? {
            self.db.vectors.delete(txn, &id).lmdb()?;
            return Ok(false);
        }
        self.db
            .vectors
            .put(txn, &id, &vector::encode(vector))
            .lmdb()?;
        Ok(true)
    }

    /// The model the stored vectors come from, as [`Store::reset_vectors`]
    /// recorded it.
    pub fn vector_model(&self, txn: &RoTxn<'_>) -> Result<Option<String>, StoreError> {
        let raw = self.db.meta.get(txn, MODEL).lmdb()?;
        Ok(raw.map(|b| String::from_utf8_lossy(b).into_owned()))
    }

    /// Drops every vector, records `model` as the one vectors now come from
    /// and marks every concept for embedding; returns how many were marked.
    pub fn reset_vectors(&self, txn: &mut RwTxn<'_>, model: &str) -> Result<u64, StoreError> {
        self.db.vectors.clear(txn).lmdb()?;
        self.db.vector_backlog.clear(txn).lmdb()?;
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

//! Proposition records and the `spo` / `pos` / `osp` permutation indexes,
//! kept in step with the per-predicate and total counts.
//!
//! `(subject, predicate, object)` is unique, both ends must exist when a
//! proposition is written, and a proposition that a higher-order proposition
//! still refers to cannot be deleted, so the indexes never point at nothing.
//! Pattern lookups ([`Store::propositions_matching`]) read index keys only:
//! they never decode a record's maps.

use heed::{PutFlags, RoIter, RoPrefix, RoTxn, RwTxn};
use serde_json::{Map, Value};

use crate::Store;
use crate::codec::integer::CompactPropositionId;
use crate::codec::proposition::PropositionBytes;
use crate::codec::stat_key::StatKey;
use crate::codec::triple::{KeyBytes, Osp, Part, Permutation, Pos, Spo, Triple, TripleKey, prefix};
use crate::codec::value;
use crate::concepts::insert_new;
use crate::env::put_in_order;
use crate::error::{Lmdb as _, StoreError};
use crate::format::meta_key;
use crate::ids::{ElementId, PropositionId};
use crate::names::InternedKeys;

/// A proposition link as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct PropositionRecord {
    pub subject: ElementId,
    /// The interned predicate ([`crate::Namespace::Predicate`]).
    pub predicate: u32,
    pub object: ElementId,
    pub attributes: Map<String, Value>,
    pub metadata: Map<String, Value>,
}

impl PropositionRecord {
    pub fn triple(&self) -> Triple {
        Triple {
            subject: self.subject,
            predicate: self.predicate,
            object: self.object,
        }
    }
}

impl PropositionRecord {
    /// The record as [`Store::create_propositions`] takes it.
    pub fn as_new(&self) -> NewProposition<'_> {
        NewProposition {
            triple: self.triple(),
            attributes: &self.attributes,
            metadata: &self.metadata,
        }
    }
}

/// A proposition to create, its fields borrowed: many links of one write
/// share one metadata object (their command's), so a bulk write holds it
/// once instead of once per link.
#[derive(Clone, Copy, Debug)]
pub struct NewProposition<'r> {
    pub triple: Triple,
    pub attributes: &'r Map<String, Value>,
    pub metadata: &'r Map<String, Value>,
}

/// One match of a pattern: `(id, subject, predicate, object)`.
pub type PropositionMatch = (PropositionId, ElementId, u32, ElementId);

impl Store {
    /// Creates a proposition and returns its new id. Fails with
    /// [`StoreError::DuplicateProposition`] if the triple exists and with
    /// [`StoreError::NotFound`] if an end does not.
    pub fn create_proposition(
        &self,
        txn: &mut RwTxn<'_>,
        record: &PropositionRecord,
    ) -> Result<PropositionId, StoreError> {
        let triple = record.triple();
        self.ensure_ends_exist(txn, &triple)?;
        let id = PropositionId(self.peek_id(txn, meta_key::NEXT_PROPOSITION_ID)?);
        // Inserting into `spo` is the uniqueness check: one descent of the
        // B-tree instead of a lookup and then an insert.
        let spo_key = Spo::encode(&triple);
        if !insert_new(self.db.spo, txn, &spo_key, &id)? {
            let existing =
                self.db.spo.get(txn, &spo_key).lmdb()?.ok_or_else(|| {
                    StoreError::corrupt("a taken triple vanished in its transaction")
                })?;
            return Err(StoreError::DuplicateProposition { existing });
        }
        self.take_id(txn, meta_key::NEXT_PROPOSITION_ID, id.0)?;
        self.put_proposition(txn, id, record)?;
        self.index_proposition_rest(txn, id, &triple)?;
        Ok(id)
    }

    /// Re-creates a deleted proposition under the id it had (see
    /// [`Store::restore_concept`]), under the checks of
    /// [`Store::create_proposition`].
    pub fn restore_proposition(
        &self,
        txn: &mut RwTxn<'_>,
        id: PropositionId,
        record: &PropositionRecord,
    ) -> Result<(), StoreError> {
        if id.0 == 0 || id.0 >= self.peek_id(txn, meta_key::NEXT_PROPOSITION_ID)? {
            return Err(StoreError::invalid(format!("{id} was never issued")));
        }
        if self.db.propositions.get(txn, &id).lmdb()?.is_some() {
            return Err(StoreError::invalid(format!("{id} exists")));
        }
        let triple = record.triple();
        self.ensure_ends_exist(txn, &triple)?;
        let spo_key = Spo::encode(&triple);
        if !insert_new(self.db.spo, txn, &spo_key, &id)? {
            let existing =
                self.db.spo.get(txn, &spo_key).lmdb()?.ok_or_else(|| {
                    StoreError::corrupt("a taken triple vanished in its transaction")
                })?;
            return Err(StoreError::DuplicateProposition { existing });
        }
        self.put_proposition(txn, id, record)?;
        self.index_proposition_rest(txn, id, &triple)
    }

    /// Creates many propositions at once and returns their ids, in the
    /// order of `records`: the same result and the same checks as calling
    /// [`Store::create_proposition`] on each in turn, several times faster
    /// for large batches. On error the caller's write must be abandoned
    /// (as after any failed step); when several records are at fault, which
    /// one is reported may differ from one-by-one creation.
    ///
    /// The speed comes from order: one-by-one creation touches the B-trees
    /// of `spo`, `pos` and `osp` at random places, while here each index is
    /// filled in its own key order, so consecutive inserts land on pages
    /// that are already in cache and already copied into the transaction,
    /// and records are appended at the end of `propositions`.
    pub fn create_propositions(
        &self,
        txn: &mut RwTxn<'_>,
        records: &[NewProposition<'_>],
    ) -> Result<Vec<PropositionId>, StoreError> {
        if records.is_empty() {
            return Ok(Vec::new());
        }
        let first = self.peek_id(txn, meta_key::NEXT_PROPOSITION_ID)?;
        let n = records.len() as u64;
        let ids: Vec<PropositionId> = (0..n).map(|i| PropositionId(first + i)).collect();
        let triples: Vec<Triple> = records.iter().map(|r| r.triple).collect();

        let mut ends: Vec<ElementId> = triples.iter().flat_map(|t| [t.subject, t.object]).collect();
        ends.sort_unstable();
        ends.dedup();
        self.require_all(txn, &ends)?;

        let mut order: Vec<usize> = (0..records.len()).collect();
        let mut keys: Vec<KeyBytes> = triples.iter().map(Spo::encode).collect();
        order.sort_unstable_by(|&a, &b| keys[a].cmp(&keys[b]));
        // In key order, through one cursor (see `env::put_in_order`).
        let in_order = order.iter().map(|&i| (&*keys[i], &ids[i]));
        let taken = put_in_order(txn, self.db.spo, PutFlags::NO_OVERWRITE, in_order)?;
        if let Some(at) = taken {
            let key = &keys[order[at]];
            let existing =
                self.db.spo.get(txn, key).lmdb()?.ok_or_else(|| {
                    StoreError::corrupt("a taken triple vanished in its transaction")
                })?;
            return Err(StoreError::DuplicateProposition { existing });
        }
        self.take_id(txn, meta_key::NEXT_PROPOSITION_ID, first + n - 1)?;

        let mut interned = InternedKeys::default();
        let mut intern = |txn: &mut RwTxn<'_>, key: &str| interned.id(self, txn, key);
        // Records that share their fields' objects share their encoding.
        let mut last: Option<NewProposition<'_>> = None;
        let (mut attributes, mut metadata) = (Vec::new(), Vec::new());
        for (record, id) in records.iter().zip(&ids) {
            let same = last.is_some_and(|l| {
                std::ptr::eq(l.attributes, record.attributes)
                    && std::ptr::eq(l.metadata, record.metadata)
            });
            if !same {
                attributes.clear();
                value::encode_fields(&mut attributes, record.attributes, |k| intern(txn, k))?;
                metadata.clear();
                value::encode_fields(&mut metadata, record.metadata, |k| intern(txn, k))?;
                last = Some(*record);
            }
            let raw = PropositionBytes {
                triple: record.triple,
                attributes: &attributes,
                metadata: &metadata,
            };
            // Ids only grow, so every record goes after the last one.
            self.db
                .propositions
                .put_with_flags(txn, PutFlags::APPEND, id, &raw)
                .lmdb()?;
        }

        for (i, t) in triples.iter().enumerate() {
            keys[i] = Pos::encode(t);
        }
        order.sort_unstable_by(|&a, &b| keys[a].cmp(&keys[b]));
        let in_order = order.iter().map(|&i| (&*keys[i], &ids[i]));
        put_in_order(txn, self.db.pos, PutFlags::empty(), in_order)?;
        for (i, t) in triples.iter().enumerate() {
            keys[i] = Osp::encode(t);
        }
        order.sort_unstable_by(|&a, &b| keys[a].cmp(&keys[b]));
        let in_order = order.iter().map(|&i| (&*keys[i], &ids[i]));
        put_in_order(txn, self.db.osp, PutFlags::empty(), in_order)?;

        let mut per_predicate: Vec<u32> = triples.iter().map(|t| t.predicate).collect();
        per_predicate.sort_unstable();
        for run in per_predicate.chunk_by(|a, b| a == b) {
            self.add_stat(
                txn,
                StatKey::PropositionsOfPredicate(run[0]),
                run.len() as i64,
            )?;
        }
        self.add_stat(txn, StatKey::Propositions, n as i64)?;
        Ok(ids)
    }

    /// The proposition `id`, decoded.
    pub fn get_proposition(
        &self,
        txn: &RoTxn<'_>,
        id: PropositionId,
    ) -> Result<Option<PropositionRecord>, StoreError> {
        let Some(raw) = self.db.propositions.get(txn, &id).lmdb()? else {
            return Ok(None);
        };
        Ok(Some(PropositionRecord {
            subject: raw.triple.subject,
            predicate: raw.triple.predicate,
            object: raw.triple.object,
            attributes: self.decode_fields(txn, raw.attributes)?,
            metadata: self.decode_fields(txn, raw.metadata)?,
        }))
    }

    /// The triple of proposition `id`, without decoding its maps.
    pub fn proposition_triple(
        &self,
        txn: &RoTxn<'_>,
        id: PropositionId,
    ) -> Result<Option<Triple>, StoreError> {
        Ok(self
            .db
            .propositions
            .get(txn, &id)
            .lmdb()?
            .map(|raw| raw.triple))
    }

    /// The proposition `(subject, predicate, object)`.
    pub fn find_proposition(
        &self,
        txn: &RoTxn<'_>,
        subject: ElementId,
        predicate: u32,
        object: ElementId,
    ) -> Result<Option<PropositionId>, StoreError> {
        let key = Spo::encode(&Triple {
            subject,
            predicate,
            object,
        });
        self.db.spo.get(txn, &key).lmdb()
    }

    /// Replaces proposition `id`'s record. A changed triple moves it in the
    /// indexes, under the same checks as [`Store::create_proposition`].
    pub fn update_proposition(
        &self,
        txn: &mut RwTxn<'_>,
        id: PropositionId,
        record: &PropositionRecord,
    ) -> Result<(), StoreError> {
        let Some(old) = self.proposition_triple(txn, id)? else {
            return Err(StoreError::NotFound {
                element: ElementId::Proposition(id),
            });
        };
        let new = record.triple();
        if old != new {
            if let Some(existing) =
                self.find_proposition(txn, new.subject, new.predicate, new.object)?
            {
                return Err(StoreError::DuplicateProposition { existing });
            }
            let me = ElementId::Proposition(id);
            if new.subject == me || new.object == me {
                return Err(StoreError::invalid(format!("{me} cannot refer to itself")));
            }
            self.ensure_ends_exist(txn, &new)?;
            self.unindex_proposition(txn, &old)?;
            self.index_proposition(txn, id, &new)?;
        }
        self.put_proposition(txn, id, record)
    }

    /// Deletes proposition `id` and its text-index document; returns the
    /// record it had, or `None` if it did not exist. Fails with
    /// [`StoreError::StillReferenced`] while a higher-order proposition
    /// refers to it.
    pub fn delete_proposition(
        &self,
        txn: &mut RwTxn<'_>,
        id: PropositionId,
    ) -> Result<Option<PropositionRecord>, StoreError> {
        let Some(record) = self.get_proposition(txn, id)? else {
            return Ok(None);
        };
        let element = ElementId::Proposition(id);
        if let Some(by) = self.first_mention(txn, element)? {
            return Err(StoreError::StillReferenced { element, by });
        }
        self.remove_document(txn, element)?;
        self.unindex_proposition(txn, &record.triple())?;
        self.db.propositions.delete(txn, &id).lmdb()?;
        Ok(Some(record))
    }

    /// The propositions matching a pattern, each position bound (`Some`) or
    /// free (`None`), as `(id, subject, predicate, object)` in index order.
    pub fn propositions_matching(
        &self,
        txn: &RoTxn<'_>,
        subject: Option<ElementId>,
        predicate: Option<u32>,
        object: Option<ElementId>,
    ) -> Result<Vec<PropositionMatch>, StoreError> {
        self.iter_propositions_matching(txn, subject, predicate, object)?
            .collect()
    }

    /// [`Store::propositions_matching`] as a lazy iterator.
    ///
    /// The index is chosen by which positions are bound, so every pattern
    /// is one point lookup or one contiguous prefix scan.
    pub fn iter_propositions_matching<'t>(
        &self,
        txn: &'t RoTxn<'_>,
        subject: Option<ElementId>,
        predicate: Option<u32>,
        object: Option<ElementId>,
    ) -> Result<PropositionMatches<'t>, StoreError> {
        use Part::{Element as E, Predicate as P};
        let (spo, pos, osp) = (self.db.spo, self.db.pos, self.db.osp);
        let inner = match (subject, predicate, object) {
            (Some(s), Some(p), Some(o)) => {
                let t = Triple {
                    subject: s,
                    predicate: p,
                    object: o,
                };
                let hit = spo.get(txn, &Spo::encode(&t)).lmdb()?;
                Matches::One(hit.map(|id| (id, t)))
            }
            (Some(s), Some(p), None) => {
                Matches::Spo(spo.prefix_iter(txn, &prefix(&[E(s), P(p)])).lmdb()?)
            }
            (Some(s), None, Some(o)) => {
                Matches::Osp(osp.prefix_iter(txn, &prefix(&[E(o), E(s)])).lmdb()?)
            }
            (Some(s), None, None) => Matches::Spo(spo.prefix_iter(txn, &prefix(&[E(s)])).lmdb()?),
            (None, Some(p), Some(o)) => {
                Matches::Pos(pos.prefix_iter(txn, &prefix(&[P(p), E(o)])).lmdb()?)
            }
            (None, Some(p), None) => Matches::Pos(pos.prefix_iter(txn, &prefix(&[P(p)])).lmdb()?),
            (None, None, Some(o)) => Matches::Osp(osp.prefix_iter(txn, &prefix(&[E(o)])).lmdb()?),
            (None, None, None) => Matches::All(spo.iter(txn).lmdb()?),
        };
        Ok(PropositionMatches { inner })
    }

    /// Every proposition whose subject or object is `element` (links about
    /// links included), in id order without repeats: what a DETACH delete
    /// must remove first.
    pub fn propositions_mentioning(
        &self,
        txn: &RoTxn<'_>,
        element: ElementId,
    ) -> Result<Vec<PropositionId>, StoreError> {
        let mut out = Vec::new();
        for m in self.iter_propositions_matching(txn, Some(element), None, None)? {
            out.push(m?.0);
        }
        for m in self.iter_propositions_matching(txn, None, None, Some(element))? {
            out.push(m?.0);
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Every proposition in id order.
    pub fn all_propositions<'t>(
        &'t self,
        txn: &'t RoTxn<'_>,
    ) -> Result<
        impl Iterator<Item = Result<(PropositionId, PropositionRecord), StoreError>> + 't,
        StoreError,
    > {
        let iter = self.db.propositions.iter(txn).lmdb()?;
        Ok(iter.map(move |entry| {
            let (id, raw) = entry.lmdb()?;
            Ok((
                id,
                PropositionRecord {
                    subject: raw.triple.subject,
                    predicate: raw.triple.predicate,
                    object: raw.triple.object,
                    attributes: self.decode_fields(txn, raw.attributes)?,
                    metadata: self.decode_fields(txn, raw.metadata)?,
                },
            ))
        }))
    }

    /// Some proposition that refers to `element`, if any.
    pub(crate) fn first_mention(
        &self,
        txn: &RoTxn<'_>,
        element: ElementId,
    ) -> Result<Option<PropositionId>, StoreError> {
        if let Some(m) = self
            .iter_propositions_matching(txn, Some(element), None, None)?
            .next()
        {
            return Ok(Some(m?.0));
        }
        if let Some(m) = self
            .iter_propositions_matching(txn, None, None, Some(element))?
            .next()
        {
            return Ok(Some(m?.0));
        }
        Ok(None)
    }

    fn ensure_ends_exist(&self, txn: &RoTxn<'_>, t: &Triple) -> Result<(), StoreError> {
        for end in [t.subject, t.object] {
            if !self.contains(txn, end)? {
                return Err(StoreError::NotFound { element: end });
            }
        }
        Ok(())
    }

    fn put_proposition(
        &self,
        txn: &mut RwTxn<'_>,
        id: PropositionId,
        record: &PropositionRecord,
    ) -> Result<(), StoreError> {
        let attributes = self.encode_fields(txn, &record.attributes)?;
        let metadata = self.encode_fields(txn, &record.metadata)?;
        let raw = PropositionBytes {
            triple: record.triple(),
            attributes: &attributes,
            metadata: &metadata,
        };
        self.db.propositions.put(txn, &id, &raw).lmdb()
    }

    fn index_proposition(
        &self,
        txn: &mut RwTxn<'_>,
        id: PropositionId,
        t: &Triple,
    ) -> Result<(), StoreError> {
        self.db.spo.put(txn, &Spo::encode(t), &id).lmdb()?;
        self.index_proposition_rest(txn, id, t)
    }

    /// What [`Store::index_proposition`] does after `spo`.
    fn index_proposition_rest(
        &self,
        txn: &mut RwTxn<'_>,
        id: PropositionId,
        t: &Triple,
    ) -> Result<(), StoreError> {
        self.db.pos.put(txn, &Pos::encode(t), &id).lmdb()?;
        self.db.osp.put(txn, &Osp::encode(t), &id).lmdb()?;
        self.add_stat(txn, StatKey::PropositionsOfPredicate(t.predicate), 1)?;
        self.add_stat(txn, StatKey::Propositions, 1)
    }

    /// The upgrade to format 5: rewrites every proposition record with its
    /// triple in compact parts and its maps in today's value encoding, and
    /// rebuilds `spo`, `pos` and `osp` with compact keys and values. Returns
    /// the propositions rewritten.
    pub(crate) fn upgrade_propositions(&self, txn: &mut RwTxn<'_>) -> Result<u64, StoreError> {
        use crate::codec::proposition::v4;
        self.db.spo.clear(txn).lmdb()?;
        self.db.pos.clear(txn).lmdb()?;
        self.db.osp.clear(txn).lmdb()?;
        let records = self
            .db
            .propositions
            .remap_types::<heed::types::Bytes, heed::types::Bytes>();
        crate::store::rewrite_in_chunks(
            txn,
            records,
            |key, value| {
                let id = <[u8; 8]>::try_from(key)
                    .map(|b| PropositionId(u64::from_be_bytes(b)))
                    .map_err(|_| StoreError::corrupt("a proposition key is not 8 bytes"))?;
                let old = v4::decode(value)?;
                let new = PropositionBytes {
                    triple: old.triple,
                    attributes: &value::reencode_fields(old.attributes)?,
                    metadata: &value::reencode_fields(old.metadata)?,
                };
                Ok((key.to_vec(), id, old.triple, new.encode()))
            },
            |txn, chunk| {
                for (key, id, t, record) in &chunk {
                    records.put(txn, key, record).lmdb()?;
                    self.db.spo.put(txn, &Spo::encode(t), id).lmdb()?;
                    self.db.pos.put(txn, &Pos::encode(t), id).lmdb()?;
                    self.db.osp.put(txn, &Osp::encode(t), id).lmdb()?;
                }
                Ok(())
            },
        )
    }

    fn unindex_proposition(&self, txn: &mut RwTxn<'_>, t: &Triple) -> Result<(), StoreError> {
        self.db.spo.delete(txn, &Spo::encode(t)).lmdb()?;
        self.db.pos.delete(txn, &Pos::encode(t)).lmdb()?;
        self.db.osp.delete(txn, &Osp::encode(t)).lmdb()?;
        self.add_stat(txn, StatKey::PropositionsOfPredicate(t.predicate), -1)?;
        self.add_stat(txn, StatKey::Propositions, -1)
    }
}

/// The matches of one pattern, read lazily from the chosen index.
pub struct PropositionMatches<'t> {
    inner: Matches<'t>,
}

impl std::fmt::Debug for PropositionMatches<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let index = match self.inner {
            Matches::One(_) => "point",
            Matches::Spo(_) | Matches::All(_) => Spo::NAME,
            Matches::Pos(_) => Pos::NAME,
            Matches::Osp(_) => Osp::NAME,
        };
        f.debug_struct("PropositionMatches")
            .field("index", &index)
            .finish_non_exhaustive()
    }
}

enum Matches<'t> {
    One(Option<(PropositionId, Triple)>),
    Spo(RoPrefix<'t, TripleKey<Spo>, CompactPropositionId>),
    Pos(RoPrefix<'t, TripleKey<Pos>, CompactPropositionId>),
    Osp(RoPrefix<'t, TripleKey<Osp>, CompactPropositionId>),
    All(RoIter<'t, TripleKey<Spo>, CompactPropositionId>),
}

impl Iterator for PropositionMatches<'_> {
    type Item = Result<PropositionMatch, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let next = match &mut self.inner {
            Matches::One(hit) => hit.take().map(Ok),
            Matches::Spo(iter) => iter.next().map(|r| r.map(|(t, id)| (id, t))),
            Matches::Pos(iter) => iter.next().map(|r| r.map(|(t, id)| (id, t))),
            Matches::Osp(iter) => iter.next().map(|r| r.map(|(t, id)| (id, t))),
            Matches::All(iter) => iter.next().map(|r| r.map(|(t, id)| (id, t))),
        };
        next.map(|r| {
            r.lmdb()
                .map(|(id, t)| (id, t.subject, t.predicate, t.object))
        })
    }
}

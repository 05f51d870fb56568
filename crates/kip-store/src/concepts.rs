//! Concept records and their three indexes (unique `(type, name)`, by type,
//! by name), kept in step with the per-type and total counts.
//!
//! The store enforces what the graph's integrity needs and nothing about
//! KIP: `(type, name)` is unique, and a concept that a proposition still
//! refers to cannot be deleted. Which types exist, what attributes mean and
//! which metadata keys are reserved is the engine's business.

use heed::{RoTxn, RwTxn};
use serde_json::{Map, Value};

use crate::Store;
use crate::attrs::{AttrEntries, attr_entries};
use crate::codec::concept::ConceptBytes;
use crate::codec::concept_keys::{
    name_member_key, name_member_prefix, type_member_key, type_name_key,
};
use crate::codec::name_key::is_hashed;
use crate::codec::stat_key::StatKey;
use crate::codec::value;
use crate::error::{Lmdb as _, StoreError, lmdb};
use crate::format::meta_key;
use crate::ids::{ConceptId, ElementId};
use crate::names::{InternedKeys, Namespace};

/// A concept node as stored.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConceptRecord {
    /// The interned concept type ([`Namespace::ConceptType`]).
    pub type_id: u32,
    pub name: String,
    pub attributes: Map<String, Value>,
    pub metadata: Map<String, Value>,
}

impl Store {
    /// Creates a concept and returns its new id. Fails with
    /// [`StoreError::DuplicateConcept`] if `(type_id, name)` exists.
    pub fn create_concept(
        &self,
        txn: &mut RwTxn<'_>,
        record: &ConceptRecord,
    ) -> Result<ConceptId, StoreError> {
        self.create_concept_with(txn, record, None)
    }

    /// [`Store::create_concept`], leaving the concept's attribute-index
    /// entries in `later` instead of writing them: a writer creating many
    /// concepts writes them all at once, in key order, with
    /// [`Store::put_attr_entries`]. Until then the attribute index misses
    /// them, so the caller must put them before anything reads the index
    /// or writes these concepts again (and in the same transaction).
    pub fn create_concept_deferring(
        &self,
        txn: &mut RwTxn<'_>,
        record: &ConceptRecord,
        later: &mut AttrEntries,
    ) -> Result<ConceptId, StoreError> {
        self.create_concept_with(txn, record, Some(later))
    }

    fn create_concept_with(
        &self,
        txn: &mut RwTxn<'_>,
        record: &ConceptRecord,
        later: Option<&mut AttrEntries>,
    ) -> Result<ConceptId, StoreError> {
        let id = ConceptId(self.peek_id(txn, meta_key::NEXT_CONCEPT_ID)?);
        // Inserting into the unique index is the uniqueness check: one
        // descent of the B-tree instead of a lookup and then an insert.
        let key = type_name_key(record.type_id, &record.name);
        if !insert_new(self.db.concept_keys, txn, &key, &id)? {
            return Err(self.key_taken(txn, record.type_id, &record.name)?);
        }
        self.take_id(txn, meta_key::NEXT_CONCEPT_ID, id.0)?;
        self.put_concept(txn, id, record, &[], later)?;
        self.index_concept_rest(txn, id, record.type_id, &record.name)?;
        Ok(id)
    }

    /// Re-creates a deleted concept under the id it had (a revert restores
    /// the element itself, so references to its id stay valid). Fails if
    /// `id` was never issued, is in use, or `(type_id, name)` is taken.
    pub fn restore_concept(
        &self,
        txn: &mut RwTxn<'_>,
        id: ConceptId,
        record: &ConceptRecord,
    ) -> Result<(), StoreError> {
        if id.0 == 0 || id.0 >= self.peek_id(txn, meta_key::NEXT_CONCEPT_ID)? {
            return Err(StoreError::invalid(format!("{id} was never issued")));
        }
        if self.db.concepts.get(txn, &id).lmdb()?.is_some() {
            return Err(StoreError::invalid(format!("{id} exists")));
        }
        let key = type_name_key(record.type_id, &record.name);
        if !insert_new(self.db.concept_keys, txn, &key, &id)? {
            return Err(self.key_taken(txn, record.type_id, &record.name)?);
        }
        self.put_concept(txn, id, record, &[], None)?;
        self.index_concept_rest(txn, id, record.type_id, &record.name)
    }

    /// The concept `id`, decoded.
    pub fn get_concept(
        &self,
        txn: &RoTxn<'_>,
        id: ConceptId,
    ) -> Result<Option<ConceptRecord>, StoreError> {
        match self.db.concepts.get(txn, &id).lmdb()? {
            Some(raw) => self.decode_concept(txn, raw).map(Some),
            None => Ok(None),
        }
    }

    /// The type and name of concept `id`, without decoding its maps.
    pub fn concept_head(
        &self,
        txn: &RoTxn<'_>,
        id: ConceptId,
    ) -> Result<Option<(u32, String)>, StoreError> {
        Ok(self
            .db
            .concepts
            .get(txn, &id)
            .lmdb()?
            .map(|raw| (raw.type_id, raw.name.to_owned())))
    }

    /// The concept `(type_id, name)`.
    pub fn find_concept(
        &self,
        txn: &RoTxn<'_>,
        type_id: u32,
        name: &str,
    ) -> Result<Option<ConceptId>, StoreError> {
        let Some(id) = self
            .db
            .concept_keys
            .get(txn, &type_name_key(type_id, name))
            .lmdb()?
        else {
            return Ok(None);
        };
        // A hashed key may (in theory) belong to another long name.
        if is_hashed(name.as_bytes()) && !self.has_name(txn, id, name)? {
            return Ok(None);
        }
        Ok(Some(id))
    }

    /// The concepts of type `type_id` in id order, starting after `after`
    /// (for paging) or from the first.
    pub fn concepts_by_type(
        &self,
        txn: &RoTxn<'_>,
        type_id: u32,
        after: Option<ConceptId>,
    ) -> Result<Vec<ConceptId>, StoreError> {
        self.iter_concepts_by_type(txn, type_id, after)?.collect()
    }

    /// [`Store::concepts_by_type`] as a lazy iterator, for callers that stop
    /// early.
    pub fn iter_concepts_by_type<'t>(
        &self,
        txn: &'t RoTxn<'_>,
        type_id: u32,
        after: Option<ConceptId>,
    ) -> Result<impl Iterator<Item = Result<ConceptId, StoreError>> + 't, StoreError> {
        let first = match after {
            None => Some(0),
            Some(ConceptId(n)) => n.checked_add(1),
        };
        // Past the last possible id the range is empty: start beyond the end.
        let start = match first {
            Some(n) => type_member_key(type_id, ConceptId(n)),
            None => type_member_key(type_id, ConceptId(u64::MAX)),
        };
        let end = type_member_key(type_id, ConceptId(u64::MAX));
        let lower = if first.is_some() {
            std::ops::Bound::Included(&start[..])
        } else {
            std::ops::Bound::Excluded(&start[..])
        };
        let range = (lower, std::ops::Bound::Included(&end[..]));
        let iter = self.db.concepts_by_type.range(txn, &range).lmdb()?;
        Ok(iter.map(|entry| entry.lmdb().map(|((_, id), ())| id)))
    }

    /// Every concept named `name`, whatever its type, in id order.
    pub fn concepts_by_name(
        &self,
        txn: &RoTxn<'_>,
        name: &str,
    ) -> Result<Vec<ConceptId>, StoreError> {
        let prefix = name_member_prefix(name);
        let name_key_len = prefix.len() - 1;
        let hashed = is_hashed(name.as_bytes());
        let mut out = Vec::new();
        for entry in self.db.concepts_by_name.prefix_iter(txn, &prefix).lmdb()? {
            let ((key_name, id), ()) = entry.lmdb()?;
            // Longer names that merely start with `name` and a 0x00 byte
            // share the prefix; only an exact-length key is this name's.
            if key_name.len() != name_key_len {
                continue;
            }
            if hashed && !self.has_name(txn, id, name)? {
                continue;
            }
            out.push(id);
        }
        Ok(out)
    }

    /// Replaces concept `id`'s record. A changed type or name moves the
    /// concept in the indexes (and fails with
    /// [`StoreError::DuplicateConcept`] if the new `(type, name)` is taken).
    pub fn update_concept(
        &self,
        txn: &mut RwTxn<'_>,
        id: ConceptId,
        record: &ConceptRecord,
    ) -> Result<(), StoreError> {
        let Some(old) = self.db.concepts.get(txn, &id).lmdb()? else {
            return Err(StoreError::NotFound {
                element: ElementId::Concept(id),
            });
        };
        let old_attrs = attr_entries(id, &old)?;
        let (old_type, old_name) = (old.type_id, old.name.to_owned());
        if old_type != record.type_id || old_name != record.name {
            self.ensure_key_free(txn, record.type_id, &record.name, Some(id))?;
            self.unindex_concept(txn, id, old_type, &old_name)?;
            self.index_concept(txn, id, record.type_id, &record.name)?;
        }
        self.put_concept(txn, id, record, &old_attrs, None)
    }

    /// Deletes concept `id` and its text-index document; returns the record
    /// it had, or `None` if it did not exist. Fails with
    /// [`StoreError::StillReferenced`] while a proposition refers to it.
    pub fn delete_concept(
        &self,
        txn: &mut RwTxn<'_>,
        id: ConceptId,
    ) -> Result<Option<ConceptRecord>, StoreError> {
        let Some(raw) = self.db.concepts.get(txn, &id).lmdb()? else {
            return Ok(None);
        };
        let old_attrs = attr_entries(id, &raw)?;
        let record = self.decode_concept(txn, raw)?;
        let element = ElementId::Concept(id);
        if let Some(by) = self.first_mention(txn, element)? {
            return Err(StoreError::StillReferenced { element, by });
        }
        self.reindex_attrs(txn, &old_attrs, &[])?;
        self.remove_document(txn, element)?;
        self.unindex_concept(txn, id, record.type_id, &record.name)?;
        self.db.concepts.delete(txn, &id).lmdb()?;
        Ok(Some(record))
    }

    /// Every concept in id order.
    pub fn all_concepts<'t>(
        &'t self,
        txn: &'t RoTxn<'_>,
    ) -> Result<impl Iterator<Item = Result<(ConceptId, ConceptRecord), StoreError>> + 't, StoreError>
    {
        let iter = self.db.concepts.iter(txn).lmdb()?;
        Ok(iter.map(move |entry| {
            let (id, raw) = entry.lmdb()?;
            Ok((id, self.decode_concept(txn, raw)?))
        }))
    }

    /// Whether the element exists (without decoding it).
    pub fn contains(&self, txn: &RoTxn<'_>, element: ElementId) -> Result<bool, StoreError> {
        match element {
            ElementId::Concept(c) => Ok(self
                .db
                .concepts
                .lazily_decode_data()
                .get(txn, &c)
                .lmdb()?
                .is_some()),
            ElementId::Proposition(p) => Ok(self
                .db
                .propositions
                .lazily_decode_data()
                .get(txn, &p)
                .lmdb()?
                .is_some()),
        }
    }

    /// Fails with [`StoreError::NotFound`] for the first of `elements`
    /// (in strictly increasing order) that does not exist. A run of
    /// concepts or of propositions that is not too sparse (a bulk import's
    /// new elements, a batch of links' ends) is checked by one cursor walk
    /// over its records: a step costs a small fraction of a look-up from
    /// the root.
    pub(crate) fn require_all(
        &self,
        txn: &RoTxn<'_>,
        elements: &[ElementId],
    ) -> Result<(), StoreError> {
        let split = elements.partition_point(|e| matches!(e, ElementId::Concept(_)));
        let (concepts, propositions) = elements.split_at(split);
        self.require_run(txn, self.db.concepts.remap_types(), concepts)?;
        self.require_run(txn, self.db.propositions.remap_types(), propositions)
    }

    /// [`Store::require_all`] for a run of one kind, whose records
    /// `records` holds under their numbers.
    fn require_run(
        &self,
        txn: &RoTxn<'_>,
        records: heed::Database<'_, crate::codec::integer::U64Be, heed::types::Bytes>,
        elements: &[ElementId],
    ) -> Result<(), StoreError> {
        /// Walk a run whose span is less than this many times its length.
        const WALK_SPAN: u64 = 8;
        let number = |e: ElementId| match e {
            ElementId::Concept(c) => c.0,
            ElementId::Proposition(p) => p.0,
        };
        let (Some(&first), Some(&last)) = (elements.first(), elements.last()) else {
            return Ok(());
        };
        let (low, high) = (number(first), number(last));
        let missing = |element| StoreError::NotFound { element };
        // A sparse run: a lookup each costs less than walking the gaps.
        if high - low >= WALK_SPAN * elements.len() as u64 {
            for &element in elements {
                if !self.contains(txn, element)? {
                    return Err(missing(element));
                }
            }
            return Ok(());
        }
        let mut present = records.range(txn, &(low..=high)).lmdb()?;
        for &element in elements {
            let want = number(element);
            loop {
                match present.next().transpose().lmdb()? {
                    Some((n, _)) if n < want => continue,
                    Some((n, _)) if n == want => break,
                    _ => return Err(missing(element)),
                }
            }
        }
        Ok(())
    }

    fn decode_concept(
        &self,
        txn: &RoTxn<'_>,
        raw: ConceptBytes<'_>,
    ) -> Result<ConceptRecord, StoreError> {
        Ok(ConceptRecord {
            type_id: raw.type_id,
            name: raw.name.to_owned(),
            attributes: self.decode_fields(txn, raw.attributes)?,
            metadata: self.decode_fields(txn, raw.metadata)?,
        })
    }

    /// Writes the record and brings its attribute-index entries from
    /// `old_attrs` (what the previous record implied) to what this one
    /// implies, or leaves the new record's in `later` (a creation, see
    /// [`Store::create_concept_deferring`]): every path that writes a
    /// concept record comes here.
    fn put_concept(
        &self,
        txn: &mut RwTxn<'_>,
        id: ConceptId,
        record: &ConceptRecord,
        old_attrs: &[Vec<u8>],
        mut later: Option<&mut AttrEntries>,
    ) -> Result<(), StoreError> {
        // A batch's concepts share their keys: each interned once.
        let mut own = InternedKeys::default();
        let interned = match later.as_deref_mut() {
            Some(batch) => &mut batch.interned,
            None => &mut own,
        };
        let mut intern = |key: &str| interned.id(self, txn, key);
        let (mut attributes, mut metadata) = (Vec::new(), Vec::new());
        value::encode_fields(&mut attributes, &record.attributes, &mut intern)?;
        value::encode_fields(&mut metadata, &record.metadata, &mut intern)?;
        let raw = ConceptBytes {
            type_id: record.type_id,
            name: &record.name,
            attributes: &attributes,
            metadata: &metadata,
        };
        let new_attrs = attr_entries(id, &raw)?;
        match later {
            Some(later) if old_attrs.is_empty() => later.keys.extend(new_attrs),
            _ => self.reindex_attrs(txn, old_attrs, &new_attrs)?,
        }
        self.db.concepts.put(txn, &id, &raw).lmdb()
    }

    fn has_name(&self, txn: &RoTxn<'_>, id: ConceptId, name: &str) -> Result<bool, StoreError> {
        Ok(self
            .db
            .concepts
            .get(txn, &id)
            .lmdb()?
            .is_some_and(|raw| raw.name == name))
    }

    /// Fails if `(type_id, name)` belongs to a concept other than `me`.
    fn ensure_key_free(
        &self,
        txn: &RoTxn<'_>,
        type_id: u32,
        name: &str,
        me: Option<ConceptId>,
    ) -> Result<(), StoreError> {
        let key = type_name_key(type_id, name);
        match self.db.concept_keys.get(txn, &key).lmdb()? {
            None => Ok(()),
            Some(holder) if Some(holder) == me => Ok(()),
            Some(_) => Err(self.key_taken(txn, type_id, name)?),
        }
    }

    /// The error for a `(type_id, name)` that is taken.
    fn key_taken(
        &self,
        txn: &RoTxn<'_>,
        type_id: u32,
        name: &str,
    ) -> Result<StoreError, StoreError> {
        let key = type_name_key(type_id, name);
        let Some(holder) = self.db.concept_keys.get(txn, &key).lmdb()? else {
            return Err(StoreError::corrupt(
                "a taken concept key vanished in its transaction",
            ));
        };
        if is_hashed(name.as_bytes()) && !self.has_name(txn, holder, name)? {
            return Ok(StoreError::Conflict {
                detail: format!(
                    "two long concept names of type #{type_id} share a hash; shorten the name ({} bytes)",
                    name.len()
                ),
            });
        }
        Ok(StoreError::DuplicateConcept {
            type_id,
            name: name.to_owned(),
            existing: holder,
        })
    }

    fn index_concept(
        &self,
        txn: &mut RwTxn<'_>,
        id: ConceptId,
        type_id: u32,
        name: &str,
    ) -> Result<(), StoreError> {
        self.db
            .concept_keys
            .put(txn, &type_name_key(type_id, name), &id)
            .lmdb()?;
        self.index_concept_rest(txn, id, type_id, name)
    }

    /// What [`Store::index_concept`] does after the unique index.
    fn index_concept_rest(
        &self,
        txn: &mut RwTxn<'_>,
        id: ConceptId,
        type_id: u32,
        name: &str,
    ) -> Result<(), StoreError> {
        self.db
            .concepts_by_type
            .put(txn, &type_member_key(type_id, id), &())
            .lmdb()?;
        self.db
            .concepts_by_name
            .put(txn, &name_member_key(name, id), &())
            .lmdb()?;
        self.add_stat(txn, StatKey::ConceptsOfType(type_id), 1)?;
        self.add_stat(txn, StatKey::Concepts, 1)
    }

    fn unindex_concept(
        &self,
        txn: &mut RwTxn<'_>,
        id: ConceptId,
        type_id: u32,
        name: &str,
    ) -> Result<(), StoreError> {
        self.db
            .concept_keys
            .delete(txn, &type_name_key(type_id, name))
            .lmdb()?;
        self.db
            .concepts_by_type
            .delete(txn, &type_member_key(type_id, id))
            .lmdb()?;
        self.db
            .concepts_by_name
            .delete(txn, &name_member_key(name, id))
            .lmdb()?;
        self.add_stat(txn, StatKey::ConceptsOfType(type_id), -1)?;
        self.add_stat(txn, StatKey::Concepts, -1)
    }

    /// Encodes a record map, interning its keys.
    pub(crate) fn encode_fields(
        &self,
        txn: &mut RwTxn<'_>,
        map: &Map<String, Value>,
    ) -> Result<Vec<u8>, StoreError> {
        let mut out = Vec::new();
        value::encode_fields(&mut out, map, |key| self.intern(txn, Namespace::Key, key))?;
        Ok(out)
    }

    /// Decodes a record map, resolving its keys.
    pub(crate) fn decode_fields(
        &self,
        txn: &RoTxn<'_>,
        bytes: &[u8],
    ) -> Result<Map<String, Value>, StoreError> {
        value::decode_fields(bytes, |id| self.key_name(txn, id))
    }

    /// The id the `meta` counter `key` hands out next (ids start at 1 and
    /// are never handed out twice). Claim it with [`Store::take_id`].
    pub(crate) fn peek_id(&self, txn: &RoTxn<'_>, key: &str) -> Result<u64, StoreError> {
        match self.db.meta.get(txn, key).lmdb()? {
            Some(bytes) => <[u8; 8]>::try_from(bytes)
                .map(u64::from_be_bytes)
                .map_err(|_| StoreError::corrupt(format!("meta `{key}` is not 8 bytes"))),
            None => Ok(1),
        }
    }

    /// Claims `id`, the value [`Store::peek_id`] returned.
    pub(crate) fn take_id(
        &self,
        txn: &mut RwTxn<'_>,
        key: &str,
        id: u64,
    ) -> Result<(), StoreError> {
        let after = id
            .checked_add(1)
            .ok_or_else(|| StoreError::invalid(format!("no ids left in `{key}`")))?;
        self.db.meta.put(txn, key, &after.to_be_bytes()).lmdb()
    }
}

impl Store {
    /// The upgrade to format 5: every concept record's maps in today's value
    /// encoding (canonical timestamps as integers). Keys, names and the
    /// indexes do not change. Returns the records rewritten.
    pub(crate) fn upgrade_concepts(&self, txn: &mut RwTxn<'_>) -> Result<u64, StoreError> {
        let records = self
            .db
            .concepts
            .remap_types::<heed::types::Bytes, heed::types::Bytes>();
        crate::store::rewrite_in_chunks(
            txn,
            records,
            |key, bytes| {
                let old = ConceptBytes::decode(bytes)?;
                let new = ConceptBytes {
                    attributes: &value::reencode_fields(old.attributes)?,
                    metadata: &value::reencode_fields(old.metadata)?,
                    ..old
                };
                Ok((key.to_vec(), new.encode()))
            },
            |txn, chunk| {
                for (key, record) in &chunk {
                    records.put(txn, key, record).lmdb()?;
                }
                Ok(())
            },
        )
    }
}

/// Puts `key` only if it is absent; returns whether it was inserted.
pub(crate) fn insert_new<'a, KC, DC>(
    db: heed::Database<'static, KC, DC>,
    txn: &mut RwTxn<'_>,
    key: &'a KC::EItem,
    value: &'a DC::EItem,
) -> Result<bool, StoreError>
where
    KC: heed::BytesEncode<'a>,
    DC: heed::BytesEncode<'a>,
{
    match db.put_with_flags(txn, heed::PutFlags::NO_OVERWRITE, key, value) {
        Ok(()) => Ok(true),
        Err(heed::Error::Mdb(heed::MdbError::KeyExist)) => Ok(false),
        Err(e) => Err(lmdb(e)),
    }
}

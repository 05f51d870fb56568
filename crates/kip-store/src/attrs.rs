//! The attribute index (`attr_index`, since format 3): every concept's
//! scalar attribute and metadata values (booleans, numbers, strings; dates
//! are ISO strings) per `(type, kind, key)`, in the order-preserving
//! encoding of [`crate::codec::attr_key`], so that an equality, a range or
//! a string prefix over one key of one type is a range of keys. Since
//! format 6 an array or an object has a key too (without its value), so the
//! keys of one `(type, kind, key)` are that key's column: see `column.rs`.
//!
//! The index is maintained where concept records are written
//! (`concepts.rs`: create, restore, update, delete), in the same
//! transaction, so no writer above the store can forget it. Long strings
//! are keyed by their first bytes, so a lookup answers a superset of the
//! concepts whose value matches: callers re-check the values (the engine
//! keeps the FILTER that chose the index).
//!
//! Also here: reading one field of a concept without decoding the rest of
//! its record ([`Store::concept_field`]), which is what a FILTER over a type
//! scan needs per instance.

use heed::types::Bytes;
use heed::{RoTxn, RwTxn};
use serde_json::Value;

use crate::Store;
use crate::codec::attr_key::{self, FieldKind};
use crate::codec::concept::ConceptBytes;
use crate::codec::value;
use crate::error::{Lmdb as _, StoreError};
use crate::ids::ConceptId;
use crate::names::{InternedKeys, Namespace};

/// What an attribute-index lookup selects among the values of one key.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrQuery {
    /// Values equal to one of these (`==`, `IN`). Nulls, arrays and objects
    /// equal nothing the index holds and select nothing.
    Equals(Vec<Value>),
    /// Values of the bounds' type between them, both inclusive (a strict
    /// bound is the caller's to re-check). At least one bound is given;
    /// with two, both have the same JSON type.
    Between {
        lower: Option<Value>,
        upper: Option<Value>,
    },
    /// Strings starting with this text.
    Prefix(String),
}

/// The result of [`Store::attr_lookup`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttrMatches {
    /// The concepts found, in index order (by value, then id); a concept
    /// appears once per matching value of its key, so at most once.
    pub ids: Vec<ConceptId>,
    /// Whether every match was read (`false` when `cap` stopped the scan).
    pub complete: bool,
}

impl Store {
    /// The concepts of type `type_id` whose `key` (in `kind`) has a value
    /// `query` selects, reading at most `cap` index entries.
    pub fn attr_lookup(
        &self,
        txn: &RoTxn<'_>,
        type_id: u32,
        kind: FieldKind,
        key: &str,
        query: &AttrQuery,
        cap: usize,
    ) -> Result<AttrMatches, StoreError> {
        let mut out = AttrMatches {
            ids: Vec::new(),
            complete: true,
        };
        let Some(key) = self.lookup(txn, Namespace::Key, key)? else {
            return Ok(out);
        };
        let field = attr_key::field_prefix(type_id, kind, key);
        let db = self.db.attr_index.remap_types::<Bytes, Bytes>();
        let mut take = |start: &[u8], end: std::ops::Bound<&[u8]>| -> Result<bool, StoreError> {
            let range = (std::ops::Bound::Included(start), end);
            for entry in db.range(txn, &range).lmdb()? {
                let (k, _) = entry.lmdb()?;
                if out.ids.len() >= cap {
                    out.complete = false;
                    return Ok(false);
                }
                let id = attr_key::entry_id(k)
                    .ok_or_else(|| StoreError::corrupt("an attribute-index key is too short"))?;
                out.ids.push(id);
            }
            Ok(true)
        };
        match query {
            AttrQuery::Equals(values) => {
                for v in values {
                    let Some(start) = attr_key::value_start(&field, v) else {
                        continue;
                    };
                    let mut end = start.clone();
                    end.extend_from_slice(&[0xFF; 8]);
                    if !take(&start, std::ops::Bound::Included(&end))? {
                        break;
                    }
                }
            }
            AttrQuery::Between { lower, upper } => {
                let Some(like) = lower.as_ref().or(upper.as_ref()) else {
                    return Ok(out);
                };
                let start = match lower {
                    Some(v) => attr_key::value_start(&field, v),
                    None => attr_key::type_start(&field, like),
                };
                let end = match upper {
                    Some(v) => attr_key::value_start(&field, v).map(|mut e| {
                        e.extend_from_slice(&[0xFF; 8]);
                        e
                    }),
                    None => attr_key::type_end(&field, like),
                };
                let (Some(start), Some(end)) = (start, end) else {
                    return Ok(out);
                };
                if start <= end {
                    let bound = if upper.is_some() {
                        std::ops::Bound::Included(&end[..])
                    } else {
                        std::ops::Bound::Excluded(&end[..])
                    };
                    take(&start, bound)?;
                }
            }
            AttrQuery::Prefix(prefix) => {
                let start = attr_key::string_prefix(type_id, kind, key, prefix);
                for entry in db.prefix_iter(txn, &start).lmdb()? {
                    let (k, _) = entry.lmdb()?;
                    if out.ids.len() >= cap {
                        out.complete = false;
                        break;
                    }
                    let id = attr_key::entry_id(k).ok_or_else(|| {
                        StoreError::corrupt("an attribute-index key is too short")
                    })?;
                    out.ids.push(id);
                }
            }
        }
        Ok(out)
    }

    /// The value of one top-level key of a concept's attributes or metadata,
    /// decoding nothing else of the record: `None` if the concept does not
    /// exist, `Some(None)` if it lacks the key. `key` is the key's interned
    /// id ([`Namespace::Key`]; a key never interned is in no record).
    pub fn concept_field(
        &self,
        txn: &RoTxn<'_>,
        id: ConceptId,
        kind: FieldKind,
        key: u32,
    ) -> Result<Option<Option<Value>>, StoreError> {
        let Some(raw) = self.db.concepts.get(txn, &id).lmdb()? else {
            return Ok(None);
        };
        let bytes = match kind {
            FieldKind::Attributes => raw.attributes,
            FieldKind::Metadata => raw.metadata,
        };
        Ok(Some(value::field_value(bytes, key)?))
    }

    /// Brings the attribute index of concept `id` from what `old` implied
    /// to what `new` implies (either may be absent: a creation, a deletion).
    pub(crate) fn reindex_attrs(
        &self,
        txn: &mut RwTxn<'_>,
        old: &[Vec<u8>],
        new: &[Vec<u8>],
    ) -> Result<(), StoreError> {
        let db = self.db.attr_index;
        for key in old {
            if !new.contains(key) {
                db.delete(txn, key.as_slice()).lmdb()?;
            }
        }
        for key in new {
            if !old.contains(key) {
                db.put(txn, key.as_slice(), &()).lmdb()?;
            }
        }
        Ok(())
    }
}

/// Attribute-index entries held back by
/// [`Store::create_concept_deferring`], to be written together by
/// [`Store::put_attr_entries`].
#[derive(Debug, Default)]
pub struct AttrEntries {
    pub(crate) keys: Vec<Vec<u8>>,
    /// The record keys interned in this transaction so far.
    pub(crate) interned: InternedKeys,
}

impl AttrEntries {
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

impl Store {
    /// Writes the entries held back in `entries` (emptying it), in key
    /// order: consecutive puts then land on the same pages instead of
    /// one page per concept and key (about half the index's write cost
    /// when a bundle creates many concepts).
    pub fn put_attr_entries(
        &self,
        txn: &mut RwTxn<'_>,
        entries: &mut AttrEntries,
    ) -> Result<(), StoreError> {
        let mut keys = std::mem::take(&mut entries.keys);
        keys.sort_unstable();
        let db = self.db.attr_index.remap_types::<Bytes, Bytes>();
        let entries = keys.iter().map(|k| (k.as_slice(), &[][..]));
        crate::env::put_in_order(txn, db, heed::PutFlags::empty(), entries)?;
        Ok(())
    }
}

/// The attribute-index keys a concept record implies: one per top-level
/// key whose value is not null.
pub(crate) fn attr_entries(
    id: ConceptId,
    record: &ConceptBytes<'_>,
) -> Result<Vec<Vec<u8>>, StoreError> {
    let mut out = Vec::new();
    for (kind, bytes) in [
        (FieldKind::Attributes, record.attributes),
        (FieldKind::Metadata, record.metadata),
    ] {
        for (key, v) in value::indexed_fields(bytes)? {
            match v {
                Some(v) => out.extend(attr_key::entry_key(record.type_id, kind, key, &v, id)),
                None => out.push(attr_key::compound_key(record.type_id, kind, key, id)),
            }
        }
    }
    Ok(out)
}

impl Store {
    /// Builds the attribute index of every concept (the migration to
    /// format 3); returns how many entries it wrote.
    pub(crate) fn build_attr_index(&self, txn: &mut RwTxn<'_>) -> Result<u64, StoreError> {
        let mut entries = Vec::new();
        for entry in self.db.concepts.iter(txn).lmdb()? {
            let (id, raw) = entry.lmdb()?;
            entries.extend(attr_entries(id, &raw)?);
        }
        entries.sort();
        self.db.attr_index.clear(txn).lmdb()?;
        let db = self.db.attr_index.remap_types::<Bytes, Bytes>();
        for key in &entries {
            // Sorted and new: appending skips the B-tree descent.
            db.put_with_flags(txn, heed::PutFlags::APPEND, key, &[])
                .lmdb()?;
        }
        Ok(entries.len() as u64)
    }
}

//! One key of a type's concepts read as a column: the attribute index's
//! keys of one `(type, kind, key)`, walked in order, each handed out as a
//! [`Cell`] read from the key's bytes — no record is read or decoded.
//!
//! Since format 6 every concept whose value at the key is not null has
//! exactly one such key (a scalar with its value, an array or an object as
//! [`Cell::Other`]), so the walk names every concept of the type that has
//! a value there; the others have none (missing or null). This is what a
//! FILTER scan over a type reads (`kip-nexus`, `kql/column.rs`): a
//! substring search over 50,000 strings here is a pass over contiguous
//! index pages instead of 50,000 record look-ups.
//!
//! The walk is in the index's order (by value, then concept id), not in id
//! order: the caller sorts what it keeps.

use heed::RoTxn;
use heed::types::Bytes;

use crate::Store;
use crate::codec::attr_key::{self, Cell, FieldKind};
use crate::error::{Lmdb as _, StoreError};
use crate::ids::ConceptId;

impl Store {
    /// Visits each concept of type `type_id` whose value at the key with
    /// interned id `key` (in `kind`) is not null, with that value as a
    /// [`Cell`]; returns how many it visited.
    pub fn attr_column(
        &self,
        txn: &RoTxn<'_>,
        type_id: u32,
        kind: FieldKind,
        key: u32,
        visit: &mut dyn FnMut(ConceptId, Cell<'_>),
    ) -> Result<u64, StoreError> {
        let field = attr_key::field_prefix(type_id, kind, key);
        let db = self.db.attr_index.remap_types::<Bytes, Bytes>();
        let mut visited = 0;
        for entry in db.prefix_iter(txn, &field).lmdb()? {
            let (k, _) = entry.lmdb()?;
            let (Some(cell), Some(id)) = (attr_key::cell(k, field.len()), attr_key::entry_id(k))
            else {
                return Err(StoreError::corrupt("an attribute-index key holds no value"));
            };
            visit(id, cell);
            visited += 1;
        }
        Ok(visited)
    }

    /// Adds the attribute-index keys of every array and object value (the
    /// migration to format 6); returns how many it wrote.
    pub(crate) fn index_compound_values(
        &self,
        txn: &mut heed::RwTxn<'_>,
    ) -> Result<u64, StoreError> {
        let mut keys = Vec::new();
        for entry in self.db.concepts.iter(txn).lmdb()? {
            let (id, raw) = entry.lmdb()?;
            for (kind, bytes) in [
                (FieldKind::Attributes, raw.attributes),
                (FieldKind::Metadata, raw.metadata),
            ] {
                for (key, value) in crate::codec::value::indexed_fields(bytes)? {
                    if value.is_none() {
                        keys.push(attr_key::compound_key(raw.type_id, kind, key, id));
                    }
                }
            }
        }
        keys.sort_unstable();
        let db = self.db.attr_index.remap_types::<Bytes, Bytes>();
        for key in &keys {
            db.put(txn, key, &[]).lmdb()?;
        }
        Ok(keys.len() as u64)
    }
}

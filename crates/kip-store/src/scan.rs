//! Propositions in id order with their maps still encoded: what a sweep
//! over every link needs (an `UPDATE ?link … WHERE { ?link (?s, ?p, ?o)
//! FILTER(…) }`), reading a metadata key or two of each link without
//! decoding its records, from any id on so that the next sweep cycle can
//! take up where the last one stopped.
//!
//! It deliberately knows nothing of FILTERs: the engine decides which keys
//! to read and what they mean.

use heed::RoTxn;
use serde_json::Value;

use crate::Store;
use crate::codec::attr_key::FieldKind;
use crate::codec::triple::Triple;
use crate::codec::value;
use crate::error::{Lmdb as _, StoreError};
use crate::ids::PropositionId;

/// A stored proposition, its attribute and metadata maps still in the
/// store's `fields` form, borrowed from the transaction's pages.
#[derive(Clone, Copy, Debug)]
pub struct RawProposition<'t> {
    pub id: PropositionId,
    pub triple: Triple,
    pub attributes: &'t [u8],
    pub metadata: &'t [u8],
}

impl RawProposition<'_> {
    /// The value of the top-level key `key` (its interned id) of the
    /// attributes or the metadata, decoding nothing else; `None` if the
    /// map lacks it.
    pub fn field(&self, kind: FieldKind, key: u32) -> Result<Option<Value>, StoreError> {
        encoded_field(
            match kind {
                FieldKind::Attributes => self.attributes,
                FieldKind::Metadata => self.metadata,
            },
            key,
        )
    }
}

/// The value of key `key` in a map in the store's `fields` form (a
/// [`RawProposition`]'s map, or a copy of one), decoding nothing else.
pub fn encoded_field(fields: &[u8], key: u32) -> Result<Option<Value>, StoreError> {
    Ok(value::field_value(fields, key)?)
}

impl Store {
    /// The proposition `id`, its maps not decoded.
    pub fn raw_proposition<'t>(
        &self,
        txn: &'t RoTxn<'_>,
        id: PropositionId,
    ) -> Result<Option<RawProposition<'t>>, StoreError> {
        Ok(self
            .db
            .propositions
            .get(txn, &id)
            .lmdb()?
            .map(|raw| RawProposition {
                id,
                triple: raw.triple,
                attributes: raw.attributes,
                metadata: raw.metadata,
            }))
    }

    /// The propositions whose id is `start` or more, in id order, their
    /// maps not decoded.
    pub fn raw_propositions_from<'t>(
        &self,
        txn: &'t RoTxn<'_>,
        start: PropositionId,
    ) -> Result<impl Iterator<Item = Result<RawProposition<'t>, StoreError>> + 't, StoreError> {
        let iter = self.db.propositions.range(txn, &(start..)).lmdb()?;
        Ok(iter.map(|entry| {
            let (id, raw) = entry.lmdb()?;
            Ok(RawProposition {
                id,
                triple: raw.triple,
                attributes: raw.attributes,
                metadata: raw.metadata,
            })
        }))
    }
}

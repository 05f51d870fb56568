//! Interned names: concept types, predicates and attribute/metadata keys,
//! each namespace numbering its names from 1 in the order they were first
//! interned. Ids are never reused or renumbered (nothing is ever
//! un-interned), so records and index keys can hold 4-byte ids instead of
//! texts.
//!
//! The store interns the top-level keys of every record's attributes and
//! metadata itself (see [`crate::codec::value`]); the engine interns type
//! and predicate names.

use heed::{RoTxn, RwTxn};

use crate::Store;
use crate::codec::intern::{id_to_name_key, name_to_id_key};
use crate::codec::name_key::is_hashed;
use crate::error::{Lmdb as _, StoreError};

/// A namespace of interned names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Namespace {
    /// Concept type names (`Drug`, `$ConceptType`).
    ConceptType,
    /// Predicate names (`treats`, `belongs_to_domain`).
    Predicate,
    /// Attribute and metadata keys.
    Key,
}

impl Namespace {
    pub const ALL: [Namespace; 3] = [Namespace::ConceptType, Namespace::Predicate, Namespace::Key];

    /// The namespace's first key byte in `names` and `name_ids`.
    pub fn tag(self) -> u8 {
        match self {
            Namespace::ConceptType => 1,
            Namespace::Predicate => 2,
            Namespace::Key => 3,
        }
    }
}

/// Record keys ([`Namespace::Key`]) interned by a batch writer in one
/// transaction, by name: the records of a batch mostly share their few
/// keys, so each is looked up once (a short list; keys past the first 64
/// are looked up each time).
#[derive(Debug, Default)]
pub(crate) struct InternedKeys(Vec<(String, u32)>);

impl InternedKeys {
    /// The id of record key `key`, interning it if it is new.
    pub(crate) fn id(
        &mut self,
        store: &Store,
        txn: &mut RwTxn<'_>,
        key: &str,
    ) -> Result<u32, StoreError> {
        if let Some(&(_, id)) = self.0.iter().find(|(k, _)| k == key) {
            return Ok(id);
        }
        let id = store.intern(txn, Namespace::Key, key)?;
        if self.0.len() < 64 {
            self.0.push((key.to_owned(), id));
        }
        Ok(id)
    }
}

impl Store {
    /// The id of `name` in `namespace`, interning it if it is new.
    pub fn intern(
        &self,
        txn: &mut RwTxn<'_>,
        namespace: Namespace,
        name: &str,
    ) -> Result<u32, StoreError> {
        let ns = namespace.tag();
        let key = name_to_id_key(ns, name);
        if let Some(id) = self.db.names.get(txn, &key).lmdb()? {
            if is_hashed(name.as_bytes())
                && self.resolve(txn, namespace, id)?.as_deref() != Some(name)
            {
                return Err(StoreError::Conflict {
                    detail: format!(
                        "two long {namespace:?} names share a hash; shorten the name ({} bytes)",
                        name.len()
                    ),
                });
            }
            return Ok(id);
        }
        let last = match self.db.name_ids.rev_prefix_iter(txn, &[ns]).lmdb()?.next() {
            Some(entry) => entry.lmdb()?.0.1,
            None => 0,
        };
        let id = last.checked_add(1).ok_or_else(|| {
            StoreError::invalid(format!("the {namespace:?} namespace has no ids left"))
        })?;
        self.db.names.put(txn, &key, &id).lmdb()?;
        self.db
            .name_ids
            .put(txn, &id_to_name_key(ns, id), name)
            .lmdb()?;
        Ok(id)
    }

    /// The id of `name` in `namespace`, if it was ever interned.
    pub fn lookup(
        &self,
        txn: &RoTxn<'_>,
        namespace: Namespace,
        name: &str,
    ) -> Result<Option<u32>, StoreError> {
        let key = name_to_id_key(namespace.tag(), name);
        let Some(id) = self.db.names.get(txn, &key).lmdb()? else {
            return Ok(None);
        };
        if is_hashed(name.as_bytes()) && self.resolve(txn, namespace, id)?.as_deref() != Some(name)
        {
            return Ok(None);
        }
        Ok(Some(id))
    }

    /// The name interned as `id` in `namespace`.
    pub fn resolve(
        &self,
        txn: &RoTxn<'_>,
        namespace: Namespace,
        id: u32,
    ) -> Result<Option<String>, StoreError> {
        Ok(self
            .db
            .name_ids
            .get(txn, &id_to_name_key(namespace.tag(), id))
            .lmdb()?
            .map(str::to_owned))
    }

    /// Every name of `namespace` with its id, in id order.
    pub fn names(
        &self,
        txn: &RoTxn<'_>,
        namespace: Namespace,
    ) -> Result<Vec<(u32, String)>, StoreError> {
        let mut out = Vec::new();
        for entry in self
            .db
            .name_ids
            .prefix_iter(txn, &[namespace.tag()])
            .lmdb()?
        {
            let ((_, id), name) = entry.lmdb()?;
            out.push((id, name.to_owned()));
        }
        Ok(out)
    }

    /// Resolves an attribute key id while decoding a record.
    pub(crate) fn key_name(&self, txn: &RoTxn<'_>, id: u32) -> Result<String, StoreError> {
        self.resolve(txn, Namespace::Key, id)?
            .ok_or_else(|| StoreError::corrupt(format!("attribute key #{id} is not interned")))
    }
}

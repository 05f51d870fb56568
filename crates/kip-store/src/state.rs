//! The `state` database: small named JSON values the application keeps
//! beside the graph (imported files' hashes, the engine's secrets). Not part
//! of the graph: no counts, no change log, no text index.

use heed::{RoTxn, RwTxn};
use serde_json::Value;

use crate::Store;
use crate::codec::name_key::{name_key, scan_prefix};
use crate::codec::state::encode_entry;
use crate::error::{Lmdb as _, StoreError};
use crate::store::for_each_with_prefix;

fn check_key(key: &str) -> Result<(), StoreError> {
    if key.is_empty() {
        return Err(StoreError::invalid("a state key cannot be empty"));
    }
    Ok(())
}

impl Store {
    /// Sets state `key` to `value`.
    pub fn put_state(
        &self,
        txn: &mut RwTxn<'_>,
        key: &str,
        value: &Value,
    ) -> Result<(), StoreError> {
        check_key(key)?;
        let entry = encode_entry(key, value)?;
        self.db
            .state
            .put(txn, &name_key(key.as_bytes()), &entry)
            .lmdb()
    }

    /// The state `key`, if set.
    pub fn get_state(&self, txn: &RoTxn<'_>, key: &str) -> Result<Option<Value>, StoreError> {
        check_key(key)?;
        match self.db.state.get(txn, &name_key(key.as_bytes())).lmdb()? {
            // A long key's hash may (in theory) be another long key's.
            Some((stored, value)) if stored == key => Ok(Some(value)),
            Some(_) | None => Ok(None),
        }
    }

    /// Removes state `key`; returns whether it was set.
    pub fn delete_state(&self, txn: &mut RwTxn<'_>, key: &str) -> Result<bool, StoreError> {
        if self.get_state(txn, key)?.is_none() {
            return Ok(false);
        }
        self.db.state.delete(txn, &name_key(key.as_bytes())).lmdb()
    }

    /// Every state entry whose key starts with `prefix`, in key order.
    pub fn states_with_prefix(
        &self,
        txn: &RoTxn<'_>,
        prefix: &str,
    ) -> Result<Vec<(String, Value)>, StoreError> {
        let mut out = Vec::new();
        for_each_with_prefix(
            self.db.state,
            txn,
            scan_prefix(prefix.as_bytes()),
            |_, (key, value)| {
                if key.starts_with(prefix) {
                    out.push((key.to_owned(), value));
                }
                Ok(())
            },
        )?;
        // Hashed long keys do not sort exactly as their texts would.
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}

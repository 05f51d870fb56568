//! Keys of the interned-name databases.
//!
//! `names`: one namespace byte, then the [`name_key`] of the name; the value
//! is the id. `name_ids`: the namespace byte, then the id as 4 bytes
//! big-endian; the value is the name. Ids count from 1 within each namespace,
//! so a `name_ids` scan of one namespace lists names in the order they were
//! interned.

use std::borrow::Cow;

use heed::{BoxedError, BytesDecode, BytesEncode};

use super::name_key::name_key;
use super::{DecodeError, Reader, boxed};

/// `names` key: namespace byte + key form of the name.
pub fn name_to_id_key(namespace: u8, name: &str) -> Vec<u8> {
    let nk = name_key(name.as_bytes());
    let mut key = Vec::with_capacity(1 + nk.len());
    key.push(namespace);
    key.extend_from_slice(&nk);
    key
}

/// `name_ids` key: namespace byte + id big-endian.
pub fn id_to_name_key(namespace: u8, id: u32) -> [u8; 5] {
    let mut key = [0; 5];
    key[0] = namespace;
    key[1..].copy_from_slice(&id.to_be_bytes());
    key
}

/// The `names` database's key codec. Keys are only ever looked up, never
/// decoded.
#[derive(Debug)]
pub enum NameToIdKey {}

impl<'a> BytesEncode<'a> for NameToIdKey {
    type EItem = [u8];
    fn bytes_encode(item: &'a [u8]) -> Result<Cow<'a, [u8]>, BoxedError> {
        Ok(Cow::Borrowed(item))
    }
}

impl<'a> BytesDecode<'a> for NameToIdKey {
    type DItem = &'a [u8];
    fn bytes_decode(bytes: &'a [u8]) -> Result<&'a [u8], BoxedError> {
        Ok(bytes)
    }
}

/// The `name_ids` database's key codec: decodes to `(namespace, id)`.
#[derive(Debug)]
pub enum IdToNameKey {}

impl<'a> BytesEncode<'a> for IdToNameKey {
    type EItem = [u8];
    fn bytes_encode(item: &'a [u8]) -> Result<Cow<'a, [u8]>, BoxedError> {
        Ok(Cow::Borrowed(item))
    }
}

impl BytesDecode<'_> for IdToNameKey {
    type DItem = (u8, u32);
    fn bytes_decode(bytes: &[u8]) -> Result<(u8, u32), BoxedError> {
        let mut r = Reader::new(bytes);
        let ns = r.u8().map_err(boxed)?;
        let id = r.u32_be().map_err(boxed)?;
        r.finish()
            .map_err(|e| boxed(DecodeError::new(format!("interned-name key: {e}"))))?;
        Ok((ns, id))
    }
}

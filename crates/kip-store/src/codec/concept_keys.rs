//! Keys of the three concept indexes.
//!
//! - `concept_keys` (unique): type id (4 bytes BE) + [`name_key`] of the name.
//!   The name is the last part, so it needs no separator.
//! - `concepts_by_type`: type id (4 bytes BE) + concept id (8 bytes BE), so
//!   one type's concepts are one contiguous run in id order.
//! - `concepts_by_name`: [`name_key`] of the name + `0x00` + concept id
//!   (8 bytes BE). A key belongs to a name only if it is exactly 9 bytes
//!   longer than the name's key; that length check is what keeps a name that
//!   itself contains `0x00` from matching another's prefix.

use std::borrow::Cow;

use heed::{BoxedError, BytesDecode, BytesEncode};

use super::name_key::name_key;
use super::{DecodeError, Reader, boxed};
use crate::ids::ConceptId;

/// `concept_keys` key of `(type_id, name)`.
pub fn type_name_key(type_id: u32, name: &str) -> Vec<u8> {
    let nk = name_key(name.as_bytes());
    let mut key = Vec::with_capacity(4 + nk.len());
    key.extend_from_slice(&type_id.to_be_bytes());
    key.extend_from_slice(&nk);
    key
}

/// `concepts_by_type` key.
pub fn type_member_key(type_id: u32, id: ConceptId) -> [u8; 12] {
    let mut key = [0; 12];
    key[..4].copy_from_slice(&type_id.to_be_bytes());
    key[4..].copy_from_slice(&id.0.to_be_bytes());
    key
}

/// `concepts_by_name` prefix shared by every concept named `name`.
pub fn name_member_prefix(name: &str) -> Vec<u8> {
    let nk = name_key(name.as_bytes());
    let mut key = Vec::with_capacity(nk.len() + 9);
    key.extend_from_slice(&nk);
    key.push(0x00);
    key
}

/// `concepts_by_name` key.
pub fn name_member_key(name: &str, id: ConceptId) -> Vec<u8> {
    let mut key = name_member_prefix(name);
    key.extend_from_slice(&id.0.to_be_bytes());
    key
}

/// Raw-bytes key codec used for `concept_keys` (only looked up).
#[derive(Debug)]
pub enum TypeNameKey {}

impl<'a> BytesEncode<'a> for TypeNameKey {
    type EItem = [u8];
    fn bytes_encode(item: &'a [u8]) -> Result<Cow<'a, [u8]>, BoxedError> {
        Ok(Cow::Borrowed(item))
    }
}

impl<'a> BytesDecode<'a> for TypeNameKey {
    type DItem = &'a [u8];
    fn bytes_decode(bytes: &'a [u8]) -> Result<&'a [u8], BoxedError> {
        Ok(bytes)
    }
}

/// `concepts_by_type` key codec: decodes to `(type_id, concept)`.
#[derive(Debug)]
pub enum TypeMemberKey {}

impl<'a> BytesEncode<'a> for TypeMemberKey {
    type EItem = [u8];
    fn bytes_encode(item: &'a [u8]) -> Result<Cow<'a, [u8]>, BoxedError> {
        Ok(Cow::Borrowed(item))
    }
}

impl BytesDecode<'_> for TypeMemberKey {
    type DItem = (u32, ConceptId);
    fn bytes_decode(bytes: &[u8]) -> Result<(u32, ConceptId), BoxedError> {
        let mut r = Reader::new(bytes);
        let type_id = r.u32_be().map_err(boxed)?;
        let id = r.u64_be().map_err(boxed)?;
        r.finish()
            .map_err(|e| boxed(DecodeError::new(format!("concepts_by_type key: {e}"))))?;
        Ok((type_id, ConceptId(id)))
    }
}

/// `concepts_by_name` key codec: decodes to `(name key, concept)`.
#[derive(Debug)]
pub enum NameMemberKey {}

impl<'a> BytesEncode<'a> for NameMemberKey {
    type EItem = [u8];
    fn bytes_encode(item: &'a [u8]) -> Result<Cow<'a, [u8]>, BoxedError> {
        Ok(Cow::Borrowed(item))
    }
}

impl<'a> BytesDecode<'a> for NameMemberKey {
    type DItem = (&'a [u8], ConceptId);
    fn bytes_decode(bytes: &'a [u8]) -> Result<(&'a [u8], ConceptId), BoxedError> {
        let Some(split) = bytes.len().checked_sub(9) else {
            return Err(boxed(DecodeError::new(
                "concepts_by_name key shorter than 9 bytes",
            )));
        };
        let (name, tail) = bytes.split_at(split);
        let mut r = Reader::new(tail);
        if r.u8().map_err(boxed)? != 0x00 {
            return Err(boxed(DecodeError::new(
                "concepts_by_name key lacks its separator",
            )));
        }
        let id = r.u64_be().map_err(boxed)?;
        Ok((name, ConceptId(id)))
    }
}

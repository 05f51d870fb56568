//! Fixed-width big-endian integers and ids, as keys and as values.
//!
//! Big-endian unsigned bytes compare like the numbers they encode, which is
//! what makes id-ordered scans and paging by "after this id" work. Signed
//! counters are values only, never keys, so they keep two's complement.

use std::borrow::Cow;

use heed::{BoxedError, BytesDecode, BytesEncode};

use super::{DecodeError, Reader, boxed};
use crate::ids::{ConceptId, PropositionId};

fn exact<const N: usize>(bytes: &[u8], what: &str) -> Result<[u8; N], BoxedError> {
    let mut r = Reader::new(bytes);
    let out = r.array::<N>().map_err(boxed)?;
    r.finish()
        .map_err(|e| boxed(DecodeError::new(format!("{what}: {e}"))))?;
    Ok(out)
}

/// `u32`, 4 bytes big-endian (interned ids, counts of documents' terms).
#[derive(Debug)]
pub enum U32Be {}

impl BytesEncode<'_> for U32Be {
    type EItem = u32;
    fn bytes_encode(item: &u32) -> Result<Cow<'_, [u8]>, BoxedError> {
        Ok(Cow::Owned(item.to_be_bytes().to_vec()))
    }
}

impl BytesDecode<'_> for U32Be {
    type DItem = u32;
    fn bytes_decode(bytes: &[u8]) -> Result<u32, BoxedError> {
        exact::<4>(bytes, "u32").map(u32::from_be_bytes)
    }
}

/// `u64`, 8 bytes big-endian (statistics, change sequence numbers).
#[derive(Debug)]
pub enum U64Be {}

impl BytesEncode<'_> for U64Be {
    type EItem = u64;
    fn bytes_encode(item: &u64) -> Result<Cow<'_, [u8]>, BoxedError> {
        Ok(Cow::Owned(item.to_be_bytes().to_vec()))
    }
}

impl BytesDecode<'_> for U64Be {
    type DItem = u64;
    fn bytes_decode(bytes: &[u8]) -> Result<u64, BoxedError> {
        exact::<8>(bytes, "u64").map(u64::from_be_bytes)
    }
}

/// `i64`, 8 bytes big-endian two's complement (the engine's named counters).
#[derive(Debug)]
pub enum I64Be {}

impl BytesEncode<'_> for I64Be {
    type EItem = i64;
    fn bytes_encode(item: &i64) -> Result<Cow<'_, [u8]>, BoxedError> {
        Ok(Cow::Owned(item.to_be_bytes().to_vec()))
    }
}

impl BytesDecode<'_> for I64Be {
    type DItem = i64;
    fn bytes_decode(bytes: &[u8]) -> Result<i64, BoxedError> {
        exact::<8>(bytes, "i64").map(i64::from_be_bytes)
    }
}

/// [`ConceptId`], its number as 8 bytes big-endian.
#[derive(Debug)]
pub enum ConceptIdCodec {}

impl BytesEncode<'_> for ConceptIdCodec {
    type EItem = ConceptId;
    fn bytes_encode(item: &ConceptId) -> Result<Cow<'_, [u8]>, BoxedError> {
        Ok(Cow::Owned(item.0.to_be_bytes().to_vec()))
    }
}

impl BytesDecode<'_> for ConceptIdCodec {
    type DItem = ConceptId;
    fn bytes_decode(bytes: &[u8]) -> Result<ConceptId, BoxedError> {
        exact::<8>(bytes, "concept id").map(|b| ConceptId(u64::from_be_bytes(b)))
    }
}

/// [`PropositionId`], its number as 8 bytes big-endian.
#[derive(Debug)]
pub enum PropositionIdCodec {}

impl BytesEncode<'_> for PropositionIdCodec {
    type EItem = PropositionId;
    fn bytes_encode(item: &PropositionId) -> Result<Cow<'_, [u8]>, BoxedError> {
        Ok(Cow::Owned(item.0.to_be_bytes().to_vec()))
    }
}

impl BytesDecode<'_> for PropositionIdCodec {
    type DItem = PropositionId;
    fn bytes_decode(bytes: &[u8]) -> Result<PropositionId, BoxedError> {
        exact::<8>(bytes, "proposition id").map(|b| PropositionId(u64::from_be_bytes(b)))
    }
}

/// A proposition id in the fewest big-endian bytes (1–8), the value of the
/// `spo` / `pos` / `osp` indexes (since format 5). Not a key: lengths differ.
#[derive(Debug)]
pub enum CompactPropositionId {}

impl BytesEncode<'_> for CompactPropositionId {
    type EItem = PropositionId;
    fn bytes_encode(item: &PropositionId) -> Result<Cow<'_, [u8]>, BoxedError> {
        Ok(Cow::Owned(compact_u64(item.0)))
    }
}

impl BytesDecode<'_> for CompactPropositionId {
    type DItem = PropositionId;
    fn bytes_decode(bytes: &[u8]) -> Result<PropositionId, BoxedError> {
        decode_compact_u64(bytes).map(PropositionId).map_err(boxed)
    }
}

/// `n` in the fewest big-endian bytes (at least one).
pub fn compact_u64(n: u64) -> Vec<u8> {
    let skip = (n.leading_zeros() as usize / 8).min(7);
    n.to_be_bytes()[skip..].to_vec()
}

/// The inverse of [`compact_u64`], refusing empty, longer than 8 bytes and
/// non-minimal encodings.
pub fn decode_compact_u64(bytes: &[u8]) -> Result<u64, DecodeError> {
    if bytes.is_empty() || bytes.len() > 8 || (bytes.len() > 1 && bytes[0] == 0) {
        return Err(DecodeError::new(format!(
            "a compact id of {} bytes ({:02x?})",
            bytes.len(),
            bytes
        )));
    }
    Ok(bytes.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b)))
}

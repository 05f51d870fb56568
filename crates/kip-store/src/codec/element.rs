//! [`ElementId`] as 9 bytes: a tag (`0x00` concept, `0x01` proposition)
//! then the number, 8 bytes big-endian. Concepts sort before propositions and
//! each kind sorts by number, the same order as `ElementId`'s `Ord`.

use std::borrow::Cow;

use heed::{BoxedError, BytesDecode, BytesEncode};

use super::{DecodeError, Reader, boxed};
use crate::ids::{ConceptId, ElementId, PropositionId};

/// The encoded width of an element id.
pub const LEN: usize = 9;

pub const TAG_CONCEPT: u8 = 0x00;
pub const TAG_PROPOSITION: u8 = 0x01;

pub fn encode(e: ElementId) -> [u8; LEN] {
    let (tag, n) = match e {
        ElementId::Concept(c) => (TAG_CONCEPT, c.0),
        ElementId::Proposition(p) => (TAG_PROPOSITION, p.0),
    };
    let mut out = [0; LEN];
    out[0] = tag;
    out[1..].copy_from_slice(&n.to_be_bytes());
    out
}

pub fn read(r: &mut Reader<'_>) -> Result<ElementId, DecodeError> {
    let tag = r.u8()?;
    let n = r.u64_be()?;
    match tag {
        TAG_CONCEPT => Ok(ElementId::Concept(ConceptId(n))),
        TAG_PROPOSITION => Ok(ElementId::Proposition(PropositionId(n))),
        other => Err(DecodeError::new(format!(
            "unknown element tag {other:#04x}"
        ))),
    }
}

pub fn decode(bytes: &[u8]) -> Result<ElementId, DecodeError> {
    let mut r = Reader::new(bytes);
    let e = read(&mut r)?;
    r.finish()?;
    Ok(e)
}

/// An [`ElementId`] as a whole key or value.
#[derive(Debug)]
pub enum ElementIdCodec {}

impl BytesEncode<'_> for ElementIdCodec {
    type EItem = ElementId;
    fn bytes_encode(item: &ElementId) -> Result<Cow<'_, [u8]>, BoxedError> {
        Ok(Cow::Owned(encode(*item).to_vec()))
    }
}

impl BytesDecode<'_> for ElementIdCodec {
    type DItem = ElementId;
    fn bytes_decode(bytes: &[u8]) -> Result<ElementId, BoxedError> {
        decode(bytes).map_err(boxed)
    }
}

//! A concept record, the value of the `concepts` database:
//!
//! ```text
//! type-id (4 bytes BE) · varint-len name · varint-len attributes-fields · metadata-fields
//! ```
//!
//! Both maps are in the `fields` form of [`super::value`] (keys interned).
//! The type id and name come first and the attribute bytes are
//! length-prefixed, so reading a concept's type or name never touches its
//! maps.

use std::borrow::Cow;

use heed::{BoxedError, BytesDecode, BytesEncode};

use super::{Reader, boxed, write_bytes};

/// A concept record with its maps still encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConceptBytes<'a> {
    pub type_id: u32,
    pub name: &'a str,
    pub attributes: &'a [u8],
    pub metadata: &'a [u8],
}

impl ConceptBytes<'_> {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            4 + 2 + self.name.len() + 2 + self.attributes.len() + self.metadata.len(),
        );
        out.extend_from_slice(&self.type_id.to_be_bytes());
        write_bytes(&mut out, self.name.as_bytes());
        write_bytes(&mut out, self.attributes);
        out.extend_from_slice(self.metadata);
        out
    }
}

impl<'a> ConceptBytes<'a> {
    pub fn decode(bytes: &'a [u8]) -> Result<ConceptBytes<'a>, super::DecodeError> {
        let mut r = Reader::new(bytes);
        let type_id = r.u32_be()?;
        let name = r.str()?;
        let n = r.length()?;
        let attributes = r.take(n)?;
        Ok(ConceptBytes {
            type_id,
            name,
            attributes,
            metadata: r.rest(),
        })
    }
}

/// The `concepts` value codec.
#[derive(Debug)]
pub enum ConceptCodec {}

impl<'a> BytesEncode<'a> for ConceptCodec {
    type EItem = ConceptBytes<'a>;
    fn bytes_encode(item: &'a ConceptBytes<'a>) -> Result<Cow<'a, [u8]>, BoxedError> {
        Ok(Cow::Owned(item.encode()))
    }
}

impl<'a> BytesDecode<'a> for ConceptCodec {
    type DItem = ConceptBytes<'a>;
    fn bytes_decode(bytes: &'a [u8]) -> Result<ConceptBytes<'a>, BoxedError> {
        ConceptBytes::decode(bytes).map_err(boxed)
    }
}

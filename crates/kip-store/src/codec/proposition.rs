//! A proposition record, the value of the `propositions` database:
//!
//! ```text
//! subject (9) · predicate-id (4 bytes BE) · object (9) · varint-len attributes-fields · metadata-fields
//! ```
//!
//! Ends are [`element`](mod@super::element) ids; the maps are in the `fields`
//! form of [`super::value`].

use std::borrow::Cow;

use heed::{BoxedError, BytesDecode, BytesEncode};

use super::triple::Triple;
use super::{Reader, boxed, element, write_bytes};

/// A proposition record with its maps still encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropositionBytes<'a> {
    pub triple: Triple,
    pub attributes: &'a [u8],
    pub metadata: &'a [u8],
}

impl PropositionBytes<'_> {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(22 + 2 + self.attributes.len() + self.metadata.len());
        out.extend_from_slice(&element::encode(self.triple.subject));
        out.extend_from_slice(&self.triple.predicate.to_be_bytes());
        out.extend_from_slice(&element::encode(self.triple.object));
        write_bytes(&mut out, self.attributes);
        out.extend_from_slice(self.metadata);
        out
    }
}

impl<'a> PropositionBytes<'a> {
    pub fn decode(bytes: &'a [u8]) -> Result<PropositionBytes<'a>, super::DecodeError> {
        let mut r = Reader::new(bytes);
        let subject = element::read(&mut r)?;
        let predicate = r.u32_be()?;
        let object = element::read(&mut r)?;
        let n = r.length()?;
        let attributes = r.take(n)?;
        Ok(PropositionBytes {
            triple: Triple {
                subject,
                predicate,
                object,
            },
            attributes,
            metadata: r.rest(),
        })
    }
}

/// The `propositions` value codec.
#[derive(Debug)]
pub enum PropositionCodec {}

impl<'a> BytesEncode<'a> for PropositionCodec {
    type EItem = PropositionBytes<'a>;
    fn bytes_encode(item: &'a PropositionBytes<'a>) -> Result<Cow<'a, [u8]>, BoxedError> {
        Ok(Cow::Owned(item.encode()))
    }
}

impl<'a> BytesDecode<'a> for PropositionCodec {
    type DItem = PropositionBytes<'a>;
    fn bytes_decode(bytes: &'a [u8]) -> Result<PropositionBytes<'a>, BoxedError> {
        PropositionBytes::decode(bytes).map_err(boxed)
    }
}

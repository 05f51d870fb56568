//! A proposition record, the value of the `propositions` database:
//!
//! ```text
//! subject · predicate-id · object · varint-len attributes-fields · metadata-fields
//! ```
//!
//! The triple in the compact parts of [`super::triple`] (since format 5;
//! 9 + 4 + 9 fixed bytes before, read by [`v4`]); the maps are in the
//! `fields` form of [`super::value`].

use std::borrow::Cow;

use heed::{BoxedError, BytesDecode, BytesEncode};

use super::triple::{Permutation, Spo, Triple, read_element, read_predicate};
use super::{Reader, boxed, write_bytes};

/// A proposition record with its maps still encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropositionBytes<'a> {
    pub triple: Triple,
    pub attributes: &'a [u8],
    pub metadata: &'a [u8],
}

impl PropositionBytes<'_> {
    pub fn encode(&self) -> Vec<u8> {
        let triple = Spo::encode(&self.triple);
        let mut out =
            Vec::with_capacity(triple.len() + 2 + self.attributes.len() + self.metadata.len());
        out.extend_from_slice(&triple);
        write_bytes(&mut out, self.attributes);
        out.extend_from_slice(self.metadata);
        out
    }
}

impl<'a> PropositionBytes<'a> {
    pub fn decode(bytes: &'a [u8]) -> Result<PropositionBytes<'a>, super::DecodeError> {
        decode_with(bytes, |r| {
            Ok(Triple {
                subject: read_element(r)?,
                predicate: read_predicate(r)?,
                object: read_element(r)?,
            })
        })
    }
}

/// A record whose triple `triple` reads (the layout of its format), then
/// its two maps.
fn decode_with<'a>(
    bytes: &'a [u8],
    triple: impl FnOnce(&mut Reader<'a>) -> Result<Triple, super::DecodeError>,
) -> Result<PropositionBytes<'a>, super::DecodeError> {
    let mut r = Reader::new(bytes);
    let triple = triple(&mut r)?;
    let n = r.length()?;
    let attributes = r.take(n)?;
    Ok(PropositionBytes {
        triple,
        attributes,
        metadata: r.rest(),
    })
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

/// Records as formats 1–4 kept them (fixed 9 + 4 + 9 bytes for the triple),
/// read once by the upgrade to format 5.
pub mod v4 {
    use super::super::{DecodeError, element};
    use super::{PropositionBytes, Triple};

    pub fn decode(bytes: &[u8]) -> Result<PropositionBytes<'_>, DecodeError> {
        super::decode_with(bytes, |r| {
            Ok(Triple {
                subject: element::read(r)?,
                predicate: r.u32_be()?,
                object: element::read(r)?,
            })
        })
    }

    /// Encodes a record the old way (for tests of the upgrade).
    pub fn encode(record: &PropositionBytes<'_>) -> Vec<u8> {
        let mut out = element::encode(record.triple.subject).to_vec();
        out.extend_from_slice(&record.triple.predicate.to_be_bytes());
        out.extend_from_slice(&element::encode(record.triple.object));
        super::super::write_bytes(&mut out, record.attributes);
        out.extend_from_slice(record.metadata);
        out
    }
}

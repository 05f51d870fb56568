//! Keys of the `stats` database: the counts the store keeps itself, in the
//! same transaction as the change they count (values: `u64`, 8 bytes BE).
//!
//! | key                          | counts                               |
//! |------------------------------|--------------------------------------|
//! | `'T'` · type id (4 BE)       | concepts of that type                |
//! | `'P'` · predicate id (4 BE)  | propositions with that predicate     |
//! | `'c'`                        | concepts                             |
//! | `'p'`                        | propositions                         |
//! | `'d'`                        | documents in the text index          |
//! | `'l'`                        | total length of those documents      |

use std::borrow::Cow;

use heed::{BoxedError, BytesDecode, BytesEncode};

use super::{DecodeError, Reader, boxed};

/// One statistic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StatKey {
    ConceptsOfType(u32),
    PropositionsOfPredicate(u32),
    Concepts,
    Propositions,
    Documents,
    DocumentLength,
}

pub const TAG_CONCEPTS_OF_TYPE: u8 = b'T';
pub const TAG_PROPOSITIONS_OF_PREDICATE: u8 = b'P';

impl StatKey {
    /// The key bytes (1 or 5).
    pub fn encode(self) -> Vec<u8> {
        match self {
            StatKey::ConceptsOfType(t) => tagged(TAG_CONCEPTS_OF_TYPE, t),
            StatKey::PropositionsOfPredicate(p) => tagged(TAG_PROPOSITIONS_OF_PREDICATE, p),
            StatKey::Concepts => vec![b'c'],
            StatKey::Propositions => vec![b'p'],
            StatKey::Documents => vec![b'd'],
            StatKey::DocumentLength => vec![b'l'],
        }
    }

    pub fn decode(bytes: &[u8]) -> Result<StatKey, DecodeError> {
        let mut r = Reader::new(bytes);
        let key = match r.u8()? {
            TAG_CONCEPTS_OF_TYPE => StatKey::ConceptsOfType(r.u32_be()?),
            TAG_PROPOSITIONS_OF_PREDICATE => StatKey::PropositionsOfPredicate(r.u32_be()?),
            b'c' => StatKey::Concepts,
            b'p' => StatKey::Propositions,
            b'd' => StatKey::Documents,
            b'l' => StatKey::DocumentLength,
            other => {
                return Err(DecodeError::new(format!(
                    "unknown statistic tag {other:#04x}"
                )));
            }
        };
        r.finish()?;
        Ok(key)
    }
}

fn tagged(tag: u8, id: u32) -> Vec<u8> {
    let mut key = Vec::with_capacity(5);
    key.push(tag);
    key.extend_from_slice(&id.to_be_bytes());
    key
}

/// The `stats` key codec (encoded keys or tag prefixes in, [`StatKey`] out).
#[derive(Debug)]
pub enum StatKeyCodec {}

impl<'a> BytesEncode<'a> for StatKeyCodec {
    type EItem = [u8];
    fn bytes_encode(item: &'a [u8]) -> Result<Cow<'a, [u8]>, BoxedError> {
        Ok(Cow::Borrowed(item))
    }
}

impl BytesDecode<'_> for StatKeyCodec {
    type DItem = StatKey;
    fn bytes_decode(bytes: &[u8]) -> Result<StatKey, BoxedError> {
        StatKey::decode(bytes).map_err(boxed)
    }
}

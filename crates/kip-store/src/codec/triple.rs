//! Keys of the three proposition indexes, each a permutation of
//! `(subject, predicate, object)` named by its order:
//!
//! | index | key (at most 23 bytes)         | serves bound positions |
//! |-------|--------------------------------|------------------------|
//! | `spo` | subject · predicate · object   | s, sp, spo, none       |
//! | `pos` | predicate · object · subject   | p, po                  |
//! | `osp` | object · subject · predicate   | o, os                  |
//!
//! Each part is **compact and order-preserving** (since format 5; fixed
//! 9 + 4 + 9 bytes before): an element is one byte `tag << 4 | n` (tag 0
//! concept, 1 proposition; `n` in 1..=8) and its number in `n` big-endian
//! bytes, the fewest that hold it; a predicate is one byte `n` (1..=4) and
//! its interned id in `n` bytes. A longer number is a larger one and the
//! tag comes first, so keys sort as `(tag, number)` tuples do, and a part
//! says its own length, so the encoded leading parts ([`prefix`]) are
//! exactly the prefix of every key that binds them. Non-minimal encodings
//! are refused on decoding, so every key decodes one way only. The value
//! is the proposition id in the fewest big-endian bytes
//! ([`super::integer::CompactPropositionId`]). A proposition of the 1M
//! benchmark graph takes ~10 bytes per index key instead of 22.

use std::borrow::Cow;
use std::marker::PhantomData;

use heed::{BoxedError, BytesDecode, BytesEncode};

use super::{DecodeError, Reader, boxed};
use crate::ids::{ConceptId, ElementId, PropositionId};

/// The longest encoded triple.
pub const MAX_LEN: usize = 2 * 9 + 5;

/// A proposition's `(subject, predicate, object)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Triple {
    pub subject: ElementId,
    pub predicate: u32,
    pub object: ElementId,
}

/// An encoded key (or leading part of one), inline.
#[derive(Clone, Copy)]
pub struct KeyBytes {
    buf: [u8; MAX_LEN],
    len: u8,
}

impl KeyBytes {
    fn new() -> KeyBytes {
        KeyBytes {
            buf: [0; MAX_LEN],
            len: 0,
        }
    }

    fn push_number(&mut self, head: u8, bytes: &[u8]) {
        let at = self.len as usize;
        self.buf[at] = head;
        self.buf[at + 1..at + 1 + bytes.len()].copy_from_slice(bytes);
        self.len += 1 + bytes.len() as u8;
    }

    fn push(&mut self, part: Part) -> &mut KeyBytes {
        match part {
            Part::Element(e) => {
                let (tag, n) = match e {
                    ElementId::Concept(c) => (0u8, c.0),
                    ElementId::Proposition(p) => (1u8, p.0),
                };
                let bytes = n.to_be_bytes();
                let skip = (n.leading_zeros() as usize / 8).min(7);
                self.push_number(tag << 4 | (8 - skip) as u8, &bytes[skip..]);
            }
            Part::Predicate(p) => {
                let bytes = p.to_be_bytes();
                let skip = (p.leading_zeros() as usize / 8).min(3);
                self.push_number((4 - skip) as u8, &bytes[skip..]);
            }
        }
        self
    }
}

impl std::ops::Deref for KeyBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf[..self.len as usize]
    }
}

impl PartialEq for KeyBytes {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for KeyBytes {}

impl PartialOrd for KeyBytes {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for KeyBytes {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (**self).cmp(&**other)
    }
}

impl std::fmt::Debug for KeyBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyBytes({:02x?})", &**self)
    }
}

/// One position of a triple, for [`prefix`].
#[derive(Clone, Copy, Debug)]
pub enum Part {
    Element(ElementId),
    Predicate(u32),
}

/// The encoded leading parts of a key: the prefix of every key of an index
/// whose first positions are `parts`.
pub fn prefix(parts: &[Part]) -> KeyBytes {
    let mut out = KeyBytes::new();
    for &part in parts {
        out.push(part);
    }
    out
}

/// Reads `n` big-endian bytes, refusing a leading zero byte (not minimal).
fn read_minimal(r: &mut Reader<'_>, n: usize, what: &str) -> Result<u64, DecodeError> {
    let bytes = r.take(n)?;
    if n > 1 && bytes[0] == 0 {
        return Err(DecodeError::new(format!("{what} is not minimally encoded")));
    }
    Ok(bytes.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b)))
}

/// Reads one compact element.
pub fn read_element(r: &mut Reader<'_>) -> Result<ElementId, DecodeError> {
    let head = r.u8()?;
    let n = usize::from(head & 0x0f);
    if !(1..=8).contains(&n) {
        return Err(DecodeError::new(format!("element head {head:#04x}")));
    }
    let number = read_minimal(r, n, "an element")?;
    match head >> 4 {
        0 => Ok(ElementId::Concept(ConceptId(number))),
        1 => Ok(ElementId::Proposition(PropositionId(number))),
        tag => Err(DecodeError::new(format!("unknown element tag {tag}"))),
    }
}

/// Reads one compact predicate id.
pub fn read_predicate(r: &mut Reader<'_>) -> Result<u32, DecodeError> {
    let n = usize::from(r.u8()?);
    if !(1..=4).contains(&n) {
        return Err(DecodeError::new(format!("predicate of {n} bytes")));
    }
    Ok(read_minimal(r, n, "a predicate")? as u32)
}

/// One order of the three positions.
pub trait Permutation {
    /// The database name of the index in this order.
    const NAME: &'static str;
    /// The positions of `t` in this order.
    fn parts(t: &Triple) -> [Part; 3];
    fn decode(bytes: &[u8]) -> Result<Triple, DecodeError>;
    fn encode(t: &Triple) -> KeyBytes {
        prefix(&Self::parts(t))
    }
}

fn read_triple(
    bytes: &[u8],
    order: impl FnOnce(&mut Reader<'_>) -> Result<Triple, DecodeError>,
) -> Result<Triple, DecodeError> {
    let mut r = Reader::new(bytes);
    let t = order(&mut r)?;
    r.finish()?;
    Ok(t)
}

/// subject · predicate · object.
#[derive(Debug)]
pub enum Spo {}

impl Permutation for Spo {
    const NAME: &'static str = "spo";
    fn parts(t: &Triple) -> [Part; 3] {
        [
            Part::Element(t.subject),
            Part::Predicate(t.predicate),
            Part::Element(t.object),
        ]
    }
    fn decode(bytes: &[u8]) -> Result<Triple, DecodeError> {
        read_triple(bytes, |r| {
            let subject = read_element(r)?;
            let predicate = read_predicate(r)?;
            let object = read_element(r)?;
            Ok(Triple {
                subject,
                predicate,
                object,
            })
        })
    }
}

/// predicate · object · subject.
#[derive(Debug)]
pub enum Pos {}

impl Permutation for Pos {
    const NAME: &'static str = "pos";
    fn parts(t: &Triple) -> [Part; 3] {
        [
            Part::Predicate(t.predicate),
            Part::Element(t.object),
            Part::Element(t.subject),
        ]
    }
    fn decode(bytes: &[u8]) -> Result<Triple, DecodeError> {
        read_triple(bytes, |r| {
            let predicate = read_predicate(r)?;
            let object = read_element(r)?;
            let subject = read_element(r)?;
            Ok(Triple {
                subject,
                predicate,
                object,
            })
        })
    }
}

/// object · subject · predicate.
#[derive(Debug)]
pub enum Osp {}

impl Permutation for Osp {
    const NAME: &'static str = "osp";
    fn parts(t: &Triple) -> [Part; 3] {
        [
            Part::Element(t.object),
            Part::Element(t.subject),
            Part::Predicate(t.predicate),
        ]
    }
    fn decode(bytes: &[u8]) -> Result<Triple, DecodeError> {
        read_triple(bytes, |r| {
            let object = read_element(r)?;
            let subject = read_element(r)?;
            let predicate = read_predicate(r)?;
            Ok(Triple {
                subject,
                predicate,
                object,
            })
        })
    }
}

/// The key codec of the index in order `P`. Keys are passed in already
/// encoded (a whole key or a prefix of one) and decoded back to a
/// [`Triple`] in `(subject, predicate, object)` order.
#[derive(Debug)]
pub struct TripleKey<P>(PhantomData<P>);

impl<'a, P> BytesEncode<'a> for TripleKey<P> {
    type EItem = [u8];
    fn bytes_encode(item: &'a [u8]) -> Result<Cow<'a, [u8]>, BoxedError> {
        Ok(Cow::Borrowed(item))
    }
}

impl<P: Permutation> BytesDecode<'_> for TripleKey<P> {
    type DItem = Triple;
    fn bytes_decode(bytes: &[u8]) -> Result<Triple, BoxedError> {
        P::decode(bytes).map_err(boxed)
    }
}

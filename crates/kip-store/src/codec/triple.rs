//! Keys of the three proposition indexes, each a permutation of
//! `(subject, predicate, object)` named by its order:
//!
//! | index | key (22 bytes)                 | serves bound positions |
//! |-------|--------------------------------|------------------------|
//! | `spo` | subject · predicate · object   | s, sp, spo, none       |
//! | `pos` | predicate · object · subject   | p, po                  |
//! | `osp` | object · subject · predicate   | o, os                  |
//!
//! Subjects and objects are 9-byte [`element`](mod@super::element) ids, the
//! predicate its interned id as 4 bytes big-endian. Every part is fixed-width,
//! so the first `k` bytes of a key are exactly the leading bound positions
//! and a prefix scan returns exactly the matching propositions. The value is
//! the proposition id.

use std::borrow::Cow;
use std::marker::PhantomData;

use heed::{BoxedError, BytesDecode, BytesEncode};

use super::{DecodeError, Reader, boxed, element};
use crate::ids::ElementId;

/// The encoded width of a triple.
pub const LEN: usize = 22;

/// A proposition's `(subject, predicate, object)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Triple {
    pub subject: ElementId,
    pub predicate: u32,
    pub object: ElementId,
}

/// One order of the three positions.
pub trait Permutation {
    /// The database name of the index in this order.
    const NAME: &'static str;
    fn encode(t: &Triple) -> [u8; LEN];
    fn decode(bytes: &[u8]) -> Result<Triple, DecodeError>;
}

fn put(out: &mut [u8; LEN], at: usize, part: &[u8]) -> usize {
    out[at..at + part.len()].copy_from_slice(part);
    at + part.len()
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
    fn encode(t: &Triple) -> [u8; LEN] {
        let mut out = [0; LEN];
        let at = put(&mut out, 0, &element::encode(t.subject));
        let at = put(&mut out, at, &t.predicate.to_be_bytes());
        put(&mut out, at, &element::encode(t.object));
        out
    }
    fn decode(bytes: &[u8]) -> Result<Triple, DecodeError> {
        read_triple(bytes, |r| {
            let subject = element::read(r)?;
            let predicate = r.u32_be()?;
            let object = element::read(r)?;
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
    fn encode(t: &Triple) -> [u8; LEN] {
        let mut out = [0; LEN];
        let at = put(&mut out, 0, &t.predicate.to_be_bytes());
        let at = put(&mut out, at, &element::encode(t.object));
        put(&mut out, at, &element::encode(t.subject));
        out
    }
    fn decode(bytes: &[u8]) -> Result<Triple, DecodeError> {
        read_triple(bytes, |r| {
            let predicate = r.u32_be()?;
            let object = element::read(r)?;
            let subject = element::read(r)?;
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
    fn encode(t: &Triple) -> [u8; LEN] {
        let mut out = [0; LEN];
        let at = put(&mut out, 0, &element::encode(t.object));
        let at = put(&mut out, at, &element::encode(t.subject));
        put(&mut out, at, &t.predicate.to_be_bytes());
        out
    }
    fn decode(bytes: &[u8]) -> Result<Triple, DecodeError> {
        read_triple(bytes, |r| {
            let object = element::read(r)?;
            let subject = element::read(r)?;
            let predicate = r.u32_be()?;
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

//! Keys of the text index.
//!
//! `postings`: term (UTF-8) + `0x00` + element id (9 bytes); the value is
//! the term's frequency in that element's document (4 bytes BE). One term's
//! postings are one contiguous run in element order. As with names, a key
//! belongs to a term only if it is exactly 10 bytes longer than the term.
//!
//! `terms` (key: the term, value: its document frequency) lists every term
//! that has at least one posting, for prefix and fuzzy lookups.
//!
//! Terms longer than [`MAX_TERM_BYTES`] are cut (at a character boundary) by
//! [`clamp_term`] on the way in and on lookup alike, so they stay well within
//! LMDB's key limit and still match themselves.

use std::borrow::Cow;

use heed::{BoxedError, BytesDecode, BytesEncode};

use super::{DecodeError, boxed, element};
use crate::ids::ElementId;

/// The longest term kept, in bytes.
pub const MAX_TERM_BYTES: usize = 256;

/// `term` cut to at most [`MAX_TERM_BYTES`] bytes on a character boundary.
pub fn clamp_term(term: &str) -> &str {
    if term.len() <= MAX_TERM_BYTES {
        return term;
    }
    let mut end = MAX_TERM_BYTES;
    while !term.is_char_boundary(end) {
        end -= 1;
    }
    &term[..end]
}

/// The prefix shared by every posting of `term` (already clamped).
pub fn posting_prefix(term: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(term.len() + 1 + element::LEN);
    key.extend_from_slice(term.as_bytes());
    key.push(0x00);
    key
}

/// The posting key of `(term, element)` (term already clamped).
pub fn posting_key(term: &str, e: ElementId) -> Vec<u8> {
    let mut key = posting_prefix(term);
    key.extend_from_slice(&element::encode(e));
    key
}

/// A decoded posting key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posting<'a> {
    pub term: &'a str,
    pub element: ElementId,
}

/// The `postings` key codec.
#[derive(Debug)]
pub enum PostingKey {}

impl<'a> BytesEncode<'a> for PostingKey {
    type EItem = [u8];
    fn bytes_encode(item: &'a [u8]) -> Result<Cow<'a, [u8]>, BoxedError> {
        Ok(Cow::Borrowed(item))
    }
}

impl<'a> BytesDecode<'a> for PostingKey {
    type DItem = Posting<'a>;
    fn bytes_decode(bytes: &'a [u8]) -> Result<Posting<'a>, BoxedError> {
        let Some(split) = bytes.len().checked_sub(1 + element::LEN) else {
            return Err(boxed(DecodeError::new("posting key too short")));
        };
        let (term, tail) = bytes.split_at(split);
        if tail[0] != 0x00 {
            return Err(boxed(DecodeError::new("posting key lacks its separator")));
        }
        let term = std::str::from_utf8(term)
            .map_err(|e| boxed(DecodeError::new(format!("posting term is not UTF-8: {e}"))))?;
        let element = element::decode(&tail[1..]).map_err(boxed)?;
        Ok(Posting { term, element })
    }
}

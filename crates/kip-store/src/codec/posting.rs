//! Keys and values of the text index (since format 5).
//!
//! | database | key | value |
//! |---|---|---|
//! | `terms` | the term (UTF-8) | its id, `u32` BE |
//! | `term_ids` | term id `u32` BE | document frequency `u32` BE · the term (UTF-8) |
//! | `postings` | term id `u32` BE · the block's first element as an ordinal `u64` BE | a block |
//!
//! A **block** holds up to [`BLOCK_POSTINGS`] postings of one term in
//! element order: a varint count, then per posting the varint difference
//! between its element's ordinal and the previous one's (the first posting's
//! "previous" is the key's, so its difference is 0) and its varint term
//! frequency (at least 1). An element's **ordinal** is its number with the
//! top bit set for propositions, so ordinals sort as [`ElementId`]s do.
//!
//! One LMDB entry per block instead of one per posting: a term shared by
//! many documents costs one or two bytes per document, and a batch of new
//! documents, whose ids follow every indexed one, appends to each of its
//! terms' last block (see `Store::index_documents`).
//!
//! Terms longer than [`MAX_TERM_BYTES`] are cut (at a character boundary) by
//! [`clamp_term`] on the way in and on lookup alike, so they stay well within
//! LMDB's key limit and still match themselves.

use super::{DecodeError, Reader, varint};
use crate::ids::{ConceptId, ElementId, PropositionId};

/// The longest term kept, in bytes.
pub const MAX_TERM_BYTES: usize = 256;

/// The most postings one block holds. Its encoding is at most
/// `2 + 128 × (10 + 5)` bytes, within LMDB's inline limit for 4 KiB pages.
pub const BLOCK_POSTINGS: usize = 128;

/// The width of a `postings` key.
pub const KEY_LEN: usize = 12;

const PROPOSITION_BIT: u64 = 1 << 63;

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

/// `e` as an ordinal: ordinals sort as elements do.
pub fn ordinal(e: ElementId) -> u64 {
    match e {
        ElementId::Concept(c) => c.0 & !PROPOSITION_BIT,
        ElementId::Proposition(p) => p.0 | PROPOSITION_BIT,
    }
}

/// The element an ordinal stands for.
pub fn element_of(ordinal: u64) -> ElementId {
    if ordinal & PROPOSITION_BIT == 0 {
        ElementId::Concept(ConceptId(ordinal))
    } else {
        ElementId::Proposition(PropositionId(ordinal & !PROPOSITION_BIT))
    }
}

/// The `postings` key of `term`'s block starting at `first`.
pub fn block_key(term: u32, first: u64) -> [u8; KEY_LEN] {
    let mut key = [0; KEY_LEN];
    key[..4].copy_from_slice(&term.to_be_bytes());
    key[4..].copy_from_slice(&first.to_be_bytes());
    key
}

/// A `postings` key's term id and first ordinal.
pub fn decode_block_key(key: &[u8]) -> Result<(u32, u64), DecodeError> {
    let mut r = Reader::new(key);
    let term = r.u32_be()?;
    let first = r.u64_be()?;
    r.finish()?;
    Ok((term, first))
}

/// A block of postings `(ordinal, term frequency)`, sorted, not empty; its
/// key's first ordinal is the first posting's.
pub fn encode_block(postings: &[(u64, u32)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + postings.len() * 3);
    encode_block_into(&mut out, postings);
    out
}

/// [`encode_block`] into `out`, which is cleared first (a buffer reused
/// across blocks).
pub fn encode_block_into(out: &mut Vec<u8>, postings: &[(u64, u32)]) {
    out.clear();
    varint::write(out, postings.len() as u64);
    let previous = postings.first().map_or(0, |p| p.0);
    write_postings(out, previous, postings);
}

/// Each posting's difference from the previous ordinal and its frequency.
fn write_postings(out: &mut Vec<u8>, mut previous: u64, postings: &[(u64, u32)]) {
    for &(at, tf) in postings {
        varint::write(out, at - previous);
        varint::write(out, u64::from(tf));
        previous = at;
    }
}

/// Walks the block stored under a key whose first ordinal is `first`,
/// handing each posting to `each`. Checks the block's own invariants: not
/// empty, strictly increasing, starting at `first`, frequencies ≥ 1.
/// Returns the block's [`BlockTail`].
fn walk_block(
    first: u64,
    bytes: &[u8],
    mut each: impl FnMut(u64, u32),
) -> Result<BlockTail, DecodeError> {
    let mut r = Reader::new(bytes);
    let n = r.varint()?;
    // Each posting takes at least two bytes.
    if n == 0 || n > (bytes.len() as u64) / 2 {
        return Err(DecodeError::new(format!(
            "a posting block of {} bytes claims {n} postings",
            bytes.len()
        )));
    }
    let body = bytes.len() - r.rest().len();
    let mut pos = body;
    let mut at = first;
    for i in 0..n {
        let delta = read_varint(bytes, &mut pos)?;
        if (i == 0) != (delta == 0) {
            return Err(DecodeError::new(
                "a posting block is not strictly increasing from its key",
            ));
        }
        at = at
            .checked_add(delta)
            .ok_or_else(|| DecodeError::new("a posting block overflows its ordinals"))?;
        let tf = u32::try_from(read_varint(bytes, &mut pos)?)
            .ok()
            .filter(|tf| *tf > 0)
            .ok_or_else(|| DecodeError::new("a posting's term frequency is 0 or over 32 bits"))?;
        each(at, tf);
    }
    if pos != bytes.len() {
        return Err(DecodeError::new(format!(
            "{} unexpected trailing bytes",
            bytes.len() - pos
        )));
    }
    Ok(BlockTail {
        count: n as usize,
        last: at,
        body,
    })
}

/// The varint at `bytes[*pos..]`, moving `pos` past it: what
/// [`varint::read`] accepts, read without a [`Reader`] step per byte (a
/// block holds two varints per posting).
#[inline(always)]
fn read_varint(bytes: &[u8], pos: &mut usize) -> Result<u64, DecodeError> {
    let mut n: u64 = 0;
    let mut shift = 0;
    while let Some(&byte) = bytes.get(*pos) {
        *pos += 1;
        let bits = u64::from(byte & 0x7f);
        // The tenth byte may only carry the single top bit of a u64.
        if shift == 63 && bits > 1 {
            return Err(DecodeError::new("varint overflows 64 bits"));
        }
        n |= bits << shift;
        if byte & 0x80 == 0 {
            return Ok(n);
        }
        shift += 7;
        if shift > 63 {
            return Err(DecodeError::new("varint longer than 10 bytes"));
        }
    }
    Err(DecodeError::new("a posting block ends inside a varint"))
}

/// Decodes the block stored under a key whose first ordinal is `first`,
/// appending its postings to `out`. Checks the block's own invariants:
/// not empty, strictly increasing, starting at `first`, frequencies ≥ 1.
pub fn decode_block_into(
    first: u64,
    bytes: &[u8],
    out: &mut Vec<(u64, u32)>,
) -> Result<(), DecodeError> {
    // Each posting takes at least two bytes: room for all of them.
    out.reserve(bytes.len() / 2);
    walk_block(first, bytes, |at, tf| out.push((at, tf))).map(drop)
}

/// What appending to a block needs to know about it, read by
/// [`block_tail`] without collecting its postings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockTail {
    /// How many postings the block holds.
    pub count: usize,
    /// The ordinal of its last posting.
    pub last: u64,
    /// Where its postings start (after the count).
    body: usize,
}

/// The [`BlockTail`] of the block stored under a key whose first ordinal is
/// `first`, checked as [`decode_block_into`] checks a block.
pub fn block_tail(first: u64, bytes: &[u8]) -> Result<BlockTail, DecodeError> {
    walk_block(first, bytes, |_, _| {})
}

/// Writes into `out` (cleared first) the block `block`, whose tail is
/// `tail`, followed by `postings` (sorted, all after `tail.last`): the same
/// bytes [`encode_block`] gives for the block's postings and these, without
/// decoding the block's postings.
pub fn append_to_block(out: &mut Vec<u8>, block: &[u8], tail: BlockTail, postings: &[(u64, u32)]) {
    out.clear();
    varint::write(out, (tail.count + postings.len()) as u64);
    out.extend_from_slice(&block[tail.body..]);
    write_postings(out, tail.last, postings);
}

/// [`decode_block_into`] into a fresh vector.
pub fn decode_block(first: u64, bytes: &[u8]) -> Result<Vec<(u64, u32)>, DecodeError> {
    let mut out = Vec::new();
    decode_block_into(first, bytes, &mut out)?;
    Ok(out)
}

/// A `term_ids` value.
pub fn encode_term_entry(document_frequency: u32, term: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + term.len());
    out.extend_from_slice(&document_frequency.to_be_bytes());
    out.extend_from_slice(term.as_bytes());
    out
}

/// A `term_ids` value's document frequency and term.
pub fn decode_term_entry(bytes: &[u8]) -> Result<(u32, &str), DecodeError> {
    let mut r = Reader::new(bytes);
    let df = r.u32_be()?;
    let term = std::str::from_utf8(r.rest())
        .map_err(|e| DecodeError::new(format!("a term is not UTF-8: {e}")))?;
    Ok((df, term))
}

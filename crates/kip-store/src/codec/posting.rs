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
    varint::write(&mut out, postings.len() as u64);
    let mut previous = postings.first().map_or(0, |p| p.0);
    for &(at, tf) in postings {
        varint::write(&mut out, at - previous);
        varint::write(&mut out, u64::from(tf));
        previous = at;
    }
    out
}

/// Decodes the block stored under a key whose first ordinal is `first`,
/// appending its postings to `out`. Checks the block's own invariants:
/// not empty, strictly increasing, starting at `first`, frequencies ≥ 1.
pub fn decode_block_into(
    first: u64,
    bytes: &[u8],
    out: &mut Vec<(u64, u32)>,
) -> Result<(), DecodeError> {
    let mut r = Reader::new(bytes);
    let n = r.varint()?;
    // Each posting takes at least two bytes.
    if n == 0 || n > (bytes.len() as u64) / 2 {
        return Err(DecodeError::new(format!(
            "a posting block of {} bytes claims {n} postings",
            bytes.len()
        )));
    }
    out.reserve(n as usize);
    let mut at = first;
    for i in 0..n {
        let delta = r.varint()?;
        if (i == 0) != (delta == 0) {
            return Err(DecodeError::new(
                "a posting block is not strictly increasing from its key",
            ));
        }
        at = at
            .checked_add(delta)
            .ok_or_else(|| DecodeError::new("a posting block overflows its ordinals"))?;
        let tf = u32::try_from(r.varint()?)
            .ok()
            .filter(|tf| *tf > 0)
            .ok_or_else(|| DecodeError::new("a posting's term frequency is 0 or over 32 bits"))?;
        out.push((at, tf));
    }
    r.finish()
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

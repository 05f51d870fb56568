//! The key form of a text (a concept name, an interned name, a state key):
//! the text itself when it is shorter than [`HASHED_LEN`] bytes, otherwise
//! its first [`KEPT_PREFIX`] bytes followed by a 16-byte FNV-1a-128 hash of
//! the whole text.
//!
//! LMDB refuses keys longer than 511 bytes, and concept names (an event's
//! description, a sentence of Chinese) can be longer than that. Short texts
//! keep their natural byte order; a hashed key is exactly [`HASHED_LEN`]
//! bytes long and a plain one is shorter, so the two forms never collide.
//! Hashed keys can collide with each other in principle, so whoever looks a
//! hashed key up compares the stored full text before trusting the match.

use std::borrow::Cow;

/// Texts of this many bytes or more are stored hashed.
pub const HASHED_LEN: usize = 448;

/// How much of a long text is kept verbatim in front of its hash.
pub const KEPT_PREFIX: usize = HASHED_LEN - 16;

/// Whether `text` is stored in hashed form.
pub fn is_hashed(text: &[u8]) -> bool {
    text.len() >= HASHED_LEN
}

/// The key form of `text` (see the module doc).
pub fn name_key(text: &[u8]) -> Cow<'_, [u8]> {
    if !is_hashed(text) {
        return Cow::Borrowed(text);
    }
    let mut key = Vec::with_capacity(HASHED_LEN);
    key.extend_from_slice(&text[..KEPT_PREFIX]);
    key.extend_from_slice(&fnv1a_128(text).to_be_bytes());
    Cow::Owned(key)
}

/// The part of a key that every key of a text starting with `prefix` starts
/// with (for prefix scans; callers filter on the full text).
pub fn scan_prefix(prefix: &[u8]) -> &[u8] {
    &prefix[..prefix.len().min(KEPT_PREFIX)]
}

/// FNV-1a with 128-bit state: small, stable across platforms and Rust
/// versions (unlike `std`'s hasher), and good enough for the collision check
/// described in the module doc.
pub fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let mut hash = OFFSET;
    for &b in bytes {
        hash ^= u128::from(b);
        hash = hash.wrapping_mul(PRIME);
    }
    hash
}

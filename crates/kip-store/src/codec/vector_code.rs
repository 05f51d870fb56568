//! Binary codes of embedding vectors, the prefilter of SEARCH by meaning:
//! one bit per dimension, set when the stored (int8) vector's component is
//! above its code centre's (the sign of the centred vector). The Hamming
//! distance between two codes estimates the angle between the vectors
//! (`π × distance / bits`), cheaply: six `u64` words and six popcounts for
//! 384 dimensions.
//!
//! Codes are kept in blocks of [`PER_BLOCK`] concepts by id (concept ids are
//! dense, so a block is mostly full): the key is `id / 64` (`u64` BE), the
//! value a presence mask (`u64` LE, bit `id % 64`) followed by 64 slots of
//! `words` little-endian `u64` each (absent slots are zero). A scan reads a
//! few thousand values instead of one per concept.

/// Concepts per block.
pub const PER_BLOCK: u64 = 64;

/// The block key and slot of concept number `id`.
pub fn place(id: u64) -> (u64, usize) {
    (id / PER_BLOCK, (id % PER_BLOCK) as usize)
}

/// The `u64` words of a code of `dimension` bits.
pub fn words(dimension: usize) -> usize {
    dimension.div_ceil(64)
}

/// The code of `v` against `centre` (`None`: zero): bit `j` is set when
/// `v[j] > centre[j]`. A centre of another dimension counts as zero.
pub fn code(v: &[f32], centre: Option<&[f32]>) -> Vec<u64> {
    let centre = centre.filter(|c| c.len() == v.len());
    let mut out = vec![0u64; words(v.len())];
    for (j, x) in v.iter().enumerate() {
        let c = centre.map_or(0.0, |c| c[j]);
        if *x > c {
            out[j / 64] |= 1 << (j % 64);
        }
    }
    out
}

/// How many words each slot of a stored block holds (`None`: malformed).
pub fn block_words(block: &[u8]) -> Option<usize> {
    let body = block.len().checked_sub(8)?;
    let per_slot = PER_BLOCK as usize * 8;
    (body > 0 && body % per_slot == 0).then_some(body / per_slot)
}

/// The presence mask of a stored block.
pub fn mask(block: &[u8]) -> u64 {
    block
        .first_chunk::<8>()
        .map_or(0, |m| u64::from_le_bytes(*m))
}

/// The code bytes in slot `slot` of a block of `words` words per slot.
pub fn slot(block: &[u8], words: usize, slot: usize) -> &[u8] {
    let start = 8 + slot * words * 8;
    block.get(start..start + words * 8).unwrap_or(&[])
}

/// `block` (or a new one) with `code` in slot `at`. A block whose slots
/// have another width (the dimension changed) is started over.
pub fn with_code(block: Option<&[u8]>, at: usize, code: &[u64]) -> Vec<u8> {
    let w = code.len();
    let mut out = match block {
        Some(b) if block_words(b) == Some(w) => b.to_vec(),
        _ => vec![0u8; 8 + PER_BLOCK as usize * w * 8],
    };
    let m = mask(&out) | (1 << at);
    out[..8].copy_from_slice(&m.to_le_bytes());
    let start = 8 + at * w * 8;
    for (i, word) in code.iter().enumerate() {
        out[start + i * 8..start + i * 8 + 8].copy_from_slice(&word.to_le_bytes());
    }
    out
}

/// `block` without the code in slot `at`; `None` when no slot is left.
pub fn without_code(block: &[u8], at: usize) -> Option<Vec<u8>> {
    let w = block_words(block)?;
    let m = mask(block) & !(1 << at);
    if m == 0 {
        return None;
    }
    let mut out = block.to_vec();
    out[..8].copy_from_slice(&m.to_le_bytes());
    out[8 + at * w * 8..8 + (at + 1) * w * 8].fill(0);
    Some(out)
}

/// The Hamming distance between a query code and stored code bytes of the
/// same number of words.
pub fn hamming(query: &[u64], stored: &[u8]) -> u32 {
    query
        .iter()
        .zip(stored.chunks_exact(8))
        .map(|(q, s)| {
            let s = u64::from_le_bytes(<[u8; 8]>::try_from(s).unwrap_or_default());
            (q ^ s).count_ones()
        })
        .sum()
}

/// Calls `f(slot, distance)` for every code in `block` (in slot order)
/// with its Hamming distance to `query`; a block of another width is
/// skipped. (A build with the `popcnt` instruction, chosen at run time,
/// saved 0.7 ms of 4 at 200,000 codes on one data set and nothing
/// measurable on another: not worth an `unsafe` call; BENCHMARKS.md.)
pub fn for_each_distance(query: &[u64], block: &[u8], mut f: impl FnMut(usize, u32)) {
    if block_words(block) != Some(query.len()) {
        return;
    }
    let mut m = mask(block);
    while m != 0 {
        let at = m.trailing_zeros() as usize;
        m &= m - 1;
        f(at, hamming(query, slot(block, query.len(), at)));
    }
}

/// Whether the stored code bytes are exactly `code`.
pub fn equals(stored: &[u8], code: &[u64]) -> bool {
    stored.len() == code.len() * 8
        && code
            .iter()
            .zip(stored.chunks_exact(8))
            .all(|(c, s)| s == c.to_le_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_signs_and_blocks_keep_their_slots() {
        let v: Vec<f32> = (0..70)
            .map(|i| if i % 3 == 0 { 0.5 } else { -0.5 })
            .collect();
        let c = code(&v, None);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].count_ones() + c[1].count_ones(), 24);
        let centre = vec![0.6f32; 70];
        assert_eq!(code(&v, Some(&centre)), vec![0, 0]);
        let b = with_code(None, 5, &c);
        let b = with_code(Some(&b), 63, &[u64::MAX, 1]);
        assert_eq!(block_words(&b), Some(2));
        assert_eq!(mask(&b), (1 << 5) | (1 << 63));
        assert!(equals(slot(&b, 2, 5), &c));
        assert_eq!(hamming(&c, slot(&b, 2, 5)), 0);
        assert_eq!(hamming(&[0, 0], slot(&b, 2, 63)), 65);
        let b = without_code(&b, 5).unwrap_or_default();
        assert_eq!(mask(&b), 1 << 63);
        assert!(equals(slot(&b, 2, 5), &[0, 0]));
        assert_eq!(without_code(&b, 63), None);
    }
}

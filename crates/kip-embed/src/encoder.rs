//! The BERT encoder of multilingual-e5-small: embeddings (word + position +
//! token type) and LayerNorm, 12 post-norm layers of multi-head attention and
//! a GELU feed-forward, then mean pooling and L2 normalisation.
//!
//! Weight matrices are dequantised from Q4_0 to f32 once at load (about
//! 85 MB for the encoder) so a batch's hot path is a plain SGEMM; a query's
//! few tokens read them in their 4-bit form instead (a copy of 13 MB,
//! `kernel.rs`). The 250k-row word table stays 4-bit (54 MB) and rows are
//! expanded per token.

use crate::format::{self, BLOCK_BYTES, Dims, Image, QK, Vocab};
use crate::kernel;

/// The most tokens one forward pass takes (activations stay under ~30 MB).
const BATCH_TOKENS: usize = 2048;

#[derive(Debug)]
struct Layer {
    q: Linear,
    k: Linear,
    v: Linear,
    attn_out: Linear,
    attn_norm: Norm,
    ffn_in: Linear,
    ffn_out: Linear,
    out_norm: Norm,
}

#[derive(Debug)]
struct Linear {
    /// `[out][in]`, row-major.
    weight: Vec<f32>,
    /// The same weights in the file's 4-bit blocks, for a query's few
    /// tokens ([`kernel::q4_rows_times_tokens`]).
    q4: kernel::Q4,
    bias: Vec<f32>,
    inputs: usize,
}

#[derive(Debug)]
struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

/// The loaded model.
#[derive(Debug)]
pub(crate) struct Model {
    dims: Dims,
    vocab: Vocab,
    word_q4: Vec<u8>,
    positions: Vec<f32>,
    token_type: Vec<f32>,
    embed_norm: Norm,
    layers: Vec<Layer>,
}

impl Linear {
    fn load(
        image: &Image<'_>,
        prefix: &str,
        outputs: usize,
        inputs: usize,
    ) -> Result<Self, String> {
        let name = format!("{prefix}.w");
        let blocks = image.raw(&name, outputs * inputs / QK * BLOCK_BYTES)?;
        let blocks = blocks.chunks_exact(BLOCK_BYTES);
        let q4 = kernel::Q4 {
            scales: (blocks.clone())
                .map(|b| format::f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
            nibbles: blocks.flat_map(|b| &b[2..]).copied().collect(),
        };
        Ok(Self {
            weight: image.q4_matrix(&name, outputs, inputs)?,
            q4,
            bias: image.f32s(&format!("{prefix}.b"), outputs)?,
            inputs,
        })
    }

    /// `x` is `[tokens][inputs]`; returns `[tokens][outputs]`.
    fn apply(&self, x: &[f32], tokens: usize) -> Vec<f32> {
        let outputs = self.bias.len();
        let mut y = Vec::with_capacity(tokens * outputs);
        for _ in 0..tokens {
            y.extend_from_slice(&self.bias);
        }
        assert_eq!(x.len(), tokens * self.inputs, "activation shape");
        assert_eq!(self.weight.len(), outputs * self.inputs, "weight shape");
        if tokens <= SMALL_BATCH {
            // A query's few tokens: SGEMM would copy (pack) every weight
            // matrix for a handful of rows; reading each weight row once
            // against every token is several times faster.
            kernel::q4_rows_times_tokens(&self.q4, &self.weight, self.inputs, x, &mut y);
            return y;
        }
        // SAFETY: `sgemm` reads an m×k matrix at `x` (row stride k), a k×n
        // matrix at `weight` read transposed (row stride 1, column stride k,
        // i.e. the [n][k] weight), and writes m×n at `y` (row stride n); the
        // asserts above and `y`'s length (tokens × outputs) bound every index.
        #[allow(unsafe_code)]
        unsafe {
            matrixmultiply::sgemm(
                tokens,
                self.inputs,
                outputs,
                1.0,
                x.as_ptr(),
                self.inputs as isize,
                1,
                self.weight.as_ptr(),
                1,
                self.inputs as isize,
                1.0,
                y.as_mut_ptr(),
                outputs as isize,
                1,
            );
        }
        y
    }
}

impl Norm {
    fn load(image: &Image<'_>, prefix: &str, hidden: usize) -> Result<Self, String> {
        Ok(Self {
            weight: image.f32s(&format!("{prefix}.w"), hidden)?,
            bias: image.f32s(&format!("{prefix}.b"), hidden)?,
        })
    }

    /// `x = LayerNorm(x + residual)` row by row.
    fn apply(&self, x: &mut [f32], residual: Option<&[f32]>, eps: f32) {
        let hidden = self.weight.len();
        for (t, row) in x.chunks_exact_mut(hidden).enumerate() {
            if let Some(r) = residual {
                for (a, b) in row.iter_mut().zip(&r[t * hidden..(t + 1) * hidden]) {
                    *a += b;
                }
            }
            let mean = row.iter().sum::<f32>() / hidden as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / hidden as f32;
            let inv = 1.0 / (var + eps).sqrt();
            for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *v = (*v - mean) * inv * w + b;
            }
        }
    }
}

impl Model {
    pub(crate) fn new(image: Image<'_>) -> Result<Self, String> {
        let d = image.dims;
        let h = d.hidden;
        let word_len = image.vocab.scores.len() * h / QK * BLOCK_BYTES;
        let mut layers = Vec::with_capacity(d.layers);
        for l in 0..d.layers {
            let p = |s: &str| format!("l{l}.{s}");
            layers.push(Layer {
                q: Linear::load(&image, &p("q"), h, h)?,
                k: Linear::load(&image, &p("k"), h, h)?,
                v: Linear::load(&image, &p("v"), h, h)?,
                attn_out: Linear::load(&image, &p("ao"), h, h)?,
                attn_norm: Norm::load(&image, &p("aln"), h)?,
                ffn_in: Linear::load(&image, &p("fi"), d.ffn, h)?,
                ffn_out: Linear::load(&image, &p("fo"), h, d.ffn)?,
                out_norm: Norm::load(&image, &p("oln"), h)?,
            });
        }
        Ok(Self {
            word_q4: image.raw("emb.word", word_len)?.to_vec(),
            positions: image.f32s("emb.pos", d.max_positions * h)?,
            token_type: image.f32s("emb.type", h)?,
            embed_norm: Norm::load(&image, "emb.ln", h)?,
            layers,
            dims: d,
            vocab: image.vocab,
        })
    }

    pub(crate) fn dimension(&self) -> usize {
        self.dims.hidden
    }

    /// Embeds (already prefixed) texts. Texts longer than the model's 512
    /// positions are cut into windows whose mean-pooled vectors are averaged
    /// by token count, as the reference engine does. Windows of many texts
    /// run through one forward pass (up to [`BATCH_TOKENS`] tokens), so each
    /// weight matrix is streamed once per batch instead of once per text.
    pub(crate) fn embed(&self, texts: &[String]) -> Vec<Vec<f32>> {
        let h = self.dims.hidden;
        let window = self.dims.max_positions.saturating_sub(2).max(1);
        // (text index, window ids with <s> … </s>, weight)
        let mut windows: Vec<(usize, Vec<u32>, f32)> = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let content = self.vocab.tokenize(text);
            let mut chunks: Vec<&[u32]> = content.chunks(window).collect();
            if chunks.is_empty() {
                chunks.push(&[]);
            }
            for chunk in chunks {
                let mut ids = Vec::with_capacity(chunk.len() + 2);
                ids.push(self.vocab.bos);
                ids.extend_from_slice(chunk);
                ids.push(self.vocab.eos);
                windows.push((i, ids, chunk.len().max(1) as f32));
            }
        }
        let mut sums = vec![vec![0.0f32; h]; texts.len()];
        let mut at = 0;
        while at < windows.len() {
            let mut end = at + 1;
            let mut tokens = windows[at].1.len();
            while end < windows.len() && tokens + windows[end].1.len() <= BATCH_TOKENS {
                tokens += windows[end].1.len();
                end += 1;
            }
            let segments: Vec<&[u32]> = windows[at..end].iter().map(|w| w.1.as_slice()).collect();
            for ((i, _, weight), pooled) in windows[at..end].iter().zip(self.forward(&segments)) {
                for (s, p) in sums[*i].iter_mut().zip(pooled) {
                    *s += weight * p;
                }
            }
            at = end;
        }
        for sum in &mut sums {
            let norm = sum.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-6);
            sum.iter_mut().for_each(|v| *v /= norm);
        }
        sums
    }

    /// The mean-pooled last hidden state of each segment (a window of token
    /// ids); the segments' tokens share the matmuls, attention stays within
    /// each segment.
    fn forward(&self, segments: &[&[u32]]) -> Vec<Vec<f32>> {
        let d = self.dims;
        let h = d.hidden;
        let mut bounds = Vec::with_capacity(segments.len());
        let mut t = 0;
        for seg in segments {
            bounds.push((t, t + seg.len()));
            t += seg.len();
        }
        let mut x = vec![0.0f32; t * h];
        let blocks_per_row = h / QK * BLOCK_BYTES;
        let positions = segments.iter().flat_map(|s| s.iter().enumerate());
        for ((pos, &id), row) in positions.zip(x.chunks_exact_mut(h)) {
            let start = id as usize * blocks_per_row;
            let q4 = &self.word_q4[start..start + blocks_per_row];
            for (block, out) in q4.chunks_exact(BLOCK_BYTES).zip(row.chunks_exact_mut(QK)) {
                format::dequantize_block(block, out);
            }
            let p = &self.positions[pos * h..(pos + 1) * h];
            for ((v, p), ty) in row.iter_mut().zip(p).zip(&self.token_type) {
                *v += p + ty;
            }
        }
        self.embed_norm.apply(&mut x, None, d.eps);
        for layer in &self.layers {
            let ctx = self.attention(layer, &x, &bounds);
            let attn = layer.attn_out.apply(&ctx, t);
            layer.attn_norm.apply(&mut x, Some(&attn), d.eps);
            let mut mid = layer.ffn_in.apply(&x, t);
            kernel::gelu_all(&mut mid);
            let out = layer.ffn_out.apply(&mid, t);
            layer.out_norm.apply(&mut x, Some(&out), d.eps);
        }
        bounds
            .iter()
            .map(|&(a, b)| {
                let mut pooled = vec![0.0f32; h];
                for row in x[a * h..b * h].chunks_exact(h) {
                    for (p, v) in pooled.iter_mut().zip(row) {
                        *p += v;
                    }
                }
                pooled.iter_mut().for_each(|p| *p /= (b - a) as f32);
                pooled
            })
            .collect()
    }

    /// Scaled dot-product attention over all `t` tokens, head by head.
    fn attention(&self, layer: &Layer, x: &[f32], bounds: &[(usize, usize)]) -> Vec<f32> {
        let (h, heads) = (self.dims.hidden, self.dims.heads);
        let t = x.len() / h;
        let hd = h / heads;
        let (q, k, v) = (
            layer.q.apply(x, t),
            layer.k.apply(x, t),
            layer.v.apply(x, t),
        );
        let scale = 1.0 / (hd as f32).sqrt();
        let mut ctx = vec![0.0f32; t * h];
        let longest = bounds.iter().map(|(a, b)| b - a).max().unwrap_or(0);
        let mut scratch = vec![0.0f32; longest];
        for &(a, b) in bounds {
            let prob = &mut scratch[..b - a];
            for i in a..b {
                for head in 0..heads {
                    let off = head * hd;
                    let qh = &q[i * h + off..i * h + off + hd];
                    for (s, p) in (a..b).zip(prob.iter_mut()) {
                        let kh = &k[s * h + off..s * h + off + hd];
                        *p = qh.iter().zip(kh).map(|(a, b)| a * b).sum::<f32>() * scale;
                    }
                    let max = prob.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                    prob.iter_mut().for_each(|p| *p = (*p - max).exp());
                    let inv = 1.0 / prob.iter().sum::<f32>();
                    let out = &mut ctx[i * h + off..i * h + off + hd];
                    for (s, p) in (a..b).zip(prob.iter()) {
                        let vh = &v[s * h + off..s * h + off + hd];
                        for (o, vv) in out.iter_mut().zip(vh) {
                            *o += p * inv * vv;
                        }
                    }
                }
            }
        }
        ctx
    }
}

/// Up to this many tokens, [`Linear::apply`] skips SGEMM.
const SMALL_BATCH: usize = 24;

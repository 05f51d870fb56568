//! The encoder's inner loops that are not SGEMM: a query's few tokens
//! against each weight row, and the GELU (vectorisable: an `f32` erf with
//! its own `exp`). Each has a portable form in plain Rust, for the baseline
//! x86-64 (SSE2, what every build targets) and other CPUs, and one picked
//! at run time where the CPU has AVX2 and FMA: the GELU is the same code
//! compiled for AVX2; the products read the weights in their 4-bit blocks
//! (13 MB, which stay in the CPU's cache between queries, instead of 85 MB
//! of floats), expand each row with AVX2 and multiply it with four tokens
//! at a time in fused multiply-adds (BENCHMARKS.md: a short query from 21
//! to 10 ms).

/// `y[t][o] += x[t] · weight[o]` for every token `t` (`x` is
/// `[tokens][inputs]`) and output `o` (`weight` is `[outputs][inputs]`,
/// `y` is `[tokens][outputs]`): each weight row is read once, against every
/// token, which for a handful of tokens beats SGEMM's packing of the whole
/// matrix.
pub(crate) fn rows_times_tokens(weight: &[f32], inputs: usize, x: &[f32], y: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() {
        // SAFETY: `rows_avx2` only requires AVX2 and FMA, which the CPU
        // has (checked just above).
        #[allow(unsafe_code)]
        unsafe {
            rows_avx2(weight, inputs, x, y);
        }
        return;
    }
    rows(weight, inputs, x, y);
}

/// The 4-bit form of a weight matrix, as the file stores it: one scale per
/// 32 weights and their values, 16 bytes per 32 (low nibbles the first 16
/// weights, high nibbles the next 16; a weight is `(nibble − 8) × scale`).
#[derive(Debug)]
pub(crate) struct Q4 {
    pub scales: Vec<f32>,
    pub nibbles: Vec<u8>,
}

/// [`rows_times_tokens`] reading the weights in their 4-bit form where the
/// CPU has AVX2: each row is expanded (to exactly the floats of the `f32`
/// matrix) into a scratch row, then used against every token. A query
/// then reads 13 MB of weights instead of 85, which stay in the CPU's
/// cache from one query to the next.
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
pub(crate) fn q4_rows_times_tokens(
    q4: &Q4,
    weight: &[f32],
    inputs: usize,
    x: &[f32],
    y: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() && inputs.is_multiple_of(32) && q4.scales.len() * 32 == weight.len() {
        let mut row = vec![0.0f32; inputs];
        // SAFETY: as in `rows_times_tokens`.
        #[allow(unsafe_code)]
        unsafe {
            q4_rows_avx2(q4, &mut row, x, y);
        }
        return;
    }
    rows_times_tokens(weight, inputs, x, y);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn q4_rows_avx2(q4: &Q4, row: &mut [f32], x: &[f32], y: &mut [f32]) {
    let inputs = row.len();
    let blocks = inputs / 32;
    let outputs = q4.scales.len() / blocks.max(1);
    let (nibbles, _) = q4.nibbles.as_chunks::<16>();
    for o in 0..outputs {
        let (out, _) = row.as_chunks_mut::<32>();
        for (b, out) in out.iter_mut().enumerate() {
            let k = o * blocks + b;
            expand_block(&nibbles[k], q4.scales[k], out);
        }
        row_times_tokens_avx2(row, x, y, o, outputs);
    }
}

/// One 4-bit block into 32 floats, with AVX2: the two nibbles of each byte
/// apart, widened to 32-bit integers, converted, `(n − 8) × scale` — the
/// very operations of the file reader's `dequantize_block`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(unsafe_code)]
fn expand_block(nibbles: &[u8; 16], scale: f32, out: &mut [f32; 32]) {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_loadu_si128, _mm_set1_epi8, _mm_srli_epi16, _mm_srli_si128,
        _mm256_cvtepi32_ps, _mm256_cvtepu8_epi32, _mm256_mul_ps, _mm256_set1_ps, _mm256_storeu_ps,
        _mm256_sub_ps,
    };
    // SAFETY: `nibbles` is 16 readable bytes, what an unaligned 128-bit
    // load reads.
    let v = unsafe { _mm_loadu_si128(nibbles.as_ptr().cast::<__m128i>()) };
    let mask = _mm_set1_epi8(0x0f);
    let low = _mm_and_si128(v, mask);
    let high = _mm_and_si128(_mm_srli_epi16::<4>(v), mask);
    let (eight, scale) = (_mm256_set1_ps(8.0), _mm256_set1_ps(scale));
    let parts = [
        low,
        _mm_srli_si128::<8>(low),
        high,
        _mm_srli_si128::<8>(high),
    ];
    for (i, part) in parts.into_iter().enumerate() {
        let w = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(part));
        let w = _mm256_mul_ps(_mm256_sub_ps(w, eight), scale);
        // SAFETY: `out[i * 8..i * 8 + 8]` is 8 writable floats (i < 4),
        // what an unaligned 256-bit store writes.
        unsafe { _mm256_storeu_ps(out[i * 8..].as_mut_ptr(), w) };
    }
}

/// `v = GELU(v)`, element by element (the exact erf GELU BERT uses).
pub(crate) fn gelu_all(v: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2_fma() {
        // SAFETY: as in `rows_times_tokens`.
        #[allow(unsafe_code)]
        unsafe {
            gelu_avx2(v);
        }
        return;
    }
    v.iter_mut().for_each(|x| *x = gelu(*x));
}

#[cfg(target_arch = "x86_64")]
fn has_avx2_fma() -> bool {
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn rows_avx2(weight: &[f32], inputs: usize, x: &[f32], y: &mut [f32]) {
    let outputs = weight.len() / inputs.max(1);
    for (o, row) in weight.chunks_exact(inputs).enumerate() {
        row_times_tokens_avx2(row, x, y, o, outputs);
    }
}

/// `y[t][o] += x[t] · row` for every token, four tokens at a time (each
/// weight loaded once for the four; eight independent accumulators).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn row_times_tokens_avx2(row: &[f32], x: &[f32], y: &mut [f32], o: usize, outputs: usize) {
    let inputs = row.len();
    let mut tokens = x.chunks_exact(inputs).enumerate();
    loop {
        let mut four = [&[][..]; 4];
        let mut at = [0usize; 4];
        let mut n = 0;
        for (slot, (t, xt)) in (&mut tokens).take(4).enumerate() {
            four[slot] = xt;
            at[slot] = t;
            n += 1;
        }
        match n {
            0 => break,
            4 => {
                let sums = dot4_avx2(four, row);
                for (t, s) in at.iter().zip(sums) {
                    y[t * outputs + o] += s;
                }
            }
            _ => {
                for (t, xt) in at.iter().zip(four).take(n) {
                    y[t * outputs + o] += dot_avx2(xt, row);
                }
            }
        }
    }
}

/// Four dot products with one vector `w`, 16 floats a step: two 8-lane
/// accumulators per token.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(unsafe_code)]
fn dot4_avx2(xs: [&[f32]; 4], w: &[f32]) -> [f32; 4] {
    use std::arch::x86_64::{__m256, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_setzero_ps};
    let n = w.len();
    if xs.iter().any(|x| x.len() != n) {
        return xs.map(|x| dot(x, w));
    }
    let mut acc: [[__m256; 2]; 4] = [[_mm256_setzero_ps(); 2]; 4];
    let mut k = 0;
    while k + 16 <= n {
        // SAFETY: `k + 16 ≤ n` and every slice here is `n` floats long
        // (checked above): the 8 floats at `k` and at `k + 8` are readable.
        unsafe {
            let w0 = _mm256_loadu_ps(w.as_ptr().add(k));
            let w1 = _mm256_loadu_ps(w.as_ptr().add(k + 8));
            for (x, acc) in xs.iter().zip(acc.iter_mut()) {
                acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(x.as_ptr().add(k)), w0, acc[0]);
                acc[1] = _mm256_fmadd_ps(_mm256_loadu_ps(x.as_ptr().add(k + 8)), w1, acc[1]);
            }
        }
        k += 16;
    }
    let mut out = [0.0f32; 4];
    for ((o, acc), x) in out.iter_mut().zip(acc).zip(xs) {
        let mut lanes = [0.0f32; 8];
        for a in acc {
            let mut v = [0.0f32; 8];
            // SAFETY: `v` is 8 writable floats.
            unsafe { std::arch::x86_64::_mm256_storeu_ps(v.as_mut_ptr(), a) };
            lanes.iter_mut().zip(v).for_each(|(l, v)| *l += v);
        }
        *o =
            lanes.iter().sum::<f32>() + x[k..].iter().zip(&w[k..]).map(|(a, b)| a * b).sum::<f32>();
    }
    out
}

/// A dot product with AVX2 and FMA: four 8-lane accumulators, so that
/// consecutive fused multiply-adds do not wait for each other. (The
/// compiler vectorises [`dot`]'s lanes only two at a time.)
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(unsafe_code)]
fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    use std::arch::x86_64::{
        __m256, _mm_add_ps, _mm_cvtss_f32, _mm_hadd_ps, _mm256_add_ps, _mm256_castps256_ps128,
        _mm256_extractf128_ps, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_setzero_ps,
    };
    let (ac, ar) = a.as_chunks::<32>();
    let (bc, br) = b.as_chunks::<32>();
    let mut acc: [__m256; 4] = [_mm256_setzero_ps(); 4];
    for (x, y) in ac.iter().zip(bc) {
        for (i, acc) in acc.iter_mut().enumerate() {
            // SAFETY: `x` and `y` are 32 floats each: the 8 at `i * 8`
            // (i < 4) are readable, what an unaligned 256-bit load reads.
            let (xv, yv) = unsafe {
                (
                    _mm256_loadu_ps(x[i * 8..].as_ptr()),
                    _mm256_loadu_ps(y[i * 8..].as_ptr()),
                )
            };
            *acc = _mm256_fmadd_ps(xv, yv, *acc);
        }
    }
    let sum = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
    let half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps::<1>(sum));
    let quarter = _mm_hadd_ps(half, half);
    let total = _mm_cvtss_f32(_mm_hadd_ps(quarter, quarter));
    total + ar.iter().zip(br).map(|(x, y)| x * y).sum::<f32>()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn gelu_avx2(v: &mut [f32]) {
    v.iter_mut().for_each(|x| *x = gelu(*x));
}

fn rows(weight: &[f32], inputs: usize, x: &[f32], y: &mut [f32]) {
    let outputs = weight.len() / inputs.max(1);
    for (o, row) in weight.chunks_exact(inputs).enumerate() {
        for (t, xt) in x.chunks_exact(inputs).enumerate() {
            y[t * outputs + o] += dot(xt, row);
        }
    }
}

/// A dot product in 32 independent lanes, which the compiler vectorises
/// for the baseline CPU.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 32];
    let (ac, ar) = a.as_chunks::<32>();
    let (bc, br) = b.as_chunks::<32>();
    for (x, y) in ac.iter().zip(bc) {
        for i in 0..32 {
            lanes[i] += x[i] * y[i];
        }
    }
    let mut sum = [0.0f32; 8];
    for chunk in lanes.chunks_exact(8) {
        for i in 0..8 {
            sum[i] += chunk[i];
        }
    }
    sum.iter().sum::<f32>() + ar.iter().zip(br).map(|(x, y)| x * y).sum::<f32>()
}

/// The exact (erf) GELU BERT uses.
#[inline(always)]
pub(crate) fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// `erf` through Numerical Recipes' Chebyshev fit of `erfc` (fractional
/// error below 1.2e-7), in `f32` and without branches or library calls, so
/// a loop of them vectorises: the standard library has no `erf`, and the
/// cruder tanh GELU would move the vectors away from the model's training.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_2
        + t * (1.000_023_7
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_204
                                + t * (1.488_515_9 + t * (-0.822_152_2 + t * 0.170_872_77))))))));
    let erfc = t * exp(poly);
    (1.0 - erfc).copysign(x)
}

/// `e^x` for the range `erf` needs (`x ≤ 0`; below −87 it is 0): `2^n ×
/// e^r` with `n = round(x / ln 2)` and a degree-6 polynomial for `e^r` on
/// `|r| ≤ ln 2 / 2` (relative error about 2e-7), in branch-free `f32`.
#[inline(always)]
fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    let n = (x * std::f32::consts::LOG2_E).round();
    // ln 2 in two parts, so `x − n ln 2` loses no digits.
    let r = x - n * 0.693_145_75 - n * 1.428_606_8e-6;
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (0.166_666_67
                    + r * (0.041_666_668 + r * (0.008_333_334 + r * 0.001_388_889)))));
    p * f32::from_bits(((n as i32 + 127) as u32) << 23)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_and_erf_agree_with_f64() {
        for i in -4000..=4000 {
            let x = i as f32 / 500.0;
            let e = f64::from(x).min(0.0).exp();
            let got = f64::from(exp(x.min(0.0)));
            assert!(
                (got - e).abs() <= 1e-6 * e.max(1e-30),
                "exp({x}) = {got}, not {e}"
            );
            let want = erf_f64(f64::from(x));
            let got = f64::from(erf(x));
            assert!((got - want).abs() < 1e-6, "erf({x}) = {got}, not {want}");
        }
    }

    /// The `f64` form of the same fit, which the encoder used before.
    fn erf_f64(x: f64) -> f64 {
        let t = 1.0 / (1.0 + 0.5 * x.abs());
        let y = t
            * (-x * x - 1.265_512_23
                + t * (1.000_023_68
                    + t * (0.374_091_96
                        + t * (0.096_784_18
                            + t * (-0.186_288_06
                                + t * (0.278_868_07
                                    + t * (-1.135_203_98
                                        + t * (1.488_515_87
                                            + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
                .exp();
        if x >= 0.0 { 1.0 - y } else { y - 1.0 }
    }

    #[test]
    fn q4_rows_match_the_expanded_weights() {
        let inputs = 64;
        let scales: Vec<f32> = (0..6).map(|i| 0.01 * (i as f32 + 1.0)).collect();
        let nibbles: Vec<u8> = (0..6 * 16).map(|i| (i * 37 % 256) as u8).collect();
        let mut w = Vec::new();
        for (b, scale) in scales.iter().enumerate() {
            let nib = &nibbles[b * 16..(b + 1) * 16];
            let low = nib.iter().map(|n| (f32::from(n & 15) - 8.0) * scale);
            let high = nib.iter().map(|n| (f32::from(n >> 4) - 8.0) * scale);
            w.extend(low.chain(high));
        }
        let x: Vec<f32> = (0..inputs * 2)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 5.0)
            .collect();
        let (mut a, mut b) = (vec![0.5f32; 6], vec![0.5f32; 6]);
        rows_times_tokens(&w, inputs, &x, &mut a);
        let q4 = Q4 { scales, nibbles };
        q4_rows_times_tokens(&q4, &w, inputs, &x, &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn rows_match_a_plain_product() {
        let inputs = 70;
        let w: Vec<f32> = (0..inputs * 5)
            .map(|i| ((i * 31 % 17) as f32 - 8.0) / 9.0)
            .collect();
        let x: Vec<f32> = (0..inputs * 3)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 5.0)
            .collect();
        let mut y = vec![1.0f32; 15];
        rows_times_tokens(&w, inputs, &x, &mut y);
        for t in 0..3 {
            for o in 0..5 {
                let want: f32 = 1.0
                    + (0..inputs)
                        .map(|i| x[t * inputs + i] * w[o * inputs + i])
                        .sum::<f32>();
                assert!((y[t * 5 + o] - want).abs() < 1e-4, "{t} {o}");
            }
        }
    }
}

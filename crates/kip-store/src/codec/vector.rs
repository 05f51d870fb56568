//! Embedding vectors, quantised to int8 with one scale per vector: the
//! value is the vector's group (a byte the engine chooses: its language
//! group), the scale (`f32`, little-endian) and one `i8` per dimension,
//! each component being `i8 × scale`. A 384-dimensional unit
//! vector takes 388 bytes instead of 1,536, and the cosine of two unit
//! vectors keeps about three significant digits (rank order among close
//! hits can move; the recall tests and BENCHMARKS.md measure it).

/// Quantises `v` (any finite floats) of group `group`.
pub fn encode(group: u8, v: &[f32]) -> Vec<u8> {
    let (scale, q) = quantize(v);
    let mut out = Vec::with_capacity(5 + q.len());
    out.push(group);
    out.extend_from_slice(&scale.to_le_bytes());
    out.extend(q.iter().map(|&x| x as u8));
    out
}

/// The quantised form of `v`: a scale and the int8 components.
pub fn quantize(v: &[f32]) -> (f32, Vec<i8>) {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let q = v
        .iter()
        .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8)
        .collect();
    (scale, q)
}

/// Decodes a stored vector back to its group and floats (`None` if
/// malformed).
pub fn decode(bytes: &[u8]) -> Option<(u8, Vec<f32>)> {
    let (scale, q) = split(bytes)?;
    Some((
        group(bytes)?,
        q.iter().map(|&x| f32::from(x as i8) * scale).collect(),
    ))
}

/// The group of a stored vector.
pub fn group(bytes: &[u8]) -> Option<u8> {
    bytes.first().copied()
}

fn split(bytes: &[u8]) -> Option<(f32, &[u8])> {
    let (head, q) = bytes.get(1..)?.split_first_chunk::<4>()?;
    Some((f32::from_le_bytes(*head), q))
}

/// The dot product of a quantised query (`scale`, `query`) with a stored
/// vector, in integer arithmetic; `None` if the stored vector is malformed
/// or of another dimension.
pub fn dot(scale: f32, query: &[i8], stored: &[u8]) -> Option<f32> {
    let (s, q) = split(stored)?;
    if q.len() != query.len() {
        return None;
    }
    // Sixteen lanes of independent sums: the compiler turns this into SIMD
    // multiply-adds (a plain running sum does not vectorise as well).
    let mut lanes = [0i32; 16];
    let (qc, qr) = query.as_chunks::<16>();
    let (sc, sr) = q.as_chunks::<16>();
    for (a, b) in qc.iter().zip(sc) {
        for i in 0..16 {
            lanes[i] += i32::from(a[i]) * i32::from(b[i] as i8);
        }
    }
    let mut acc: i32 = lanes.iter().sum();
    for (a, b) in qr.iter().zip(sr) {
        acc += i32::from(*a) * i32::from(*b as i8);
    }
    Some(acc as f32 * scale * s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_the_direction() {
        let v: Vec<f32> = (0..384)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 400.0)
            .collect();
        let (g, back) = decode(&encode(3, &v)).unwrap_or_default();
        assert_eq!(g, 3);
        let (dot_vb, nv, nb) = v
            .iter()
            .zip(&back)
            .fold((0.0, 0.0, 0.0), |(d, a, b), (x, y)| {
                (d + x * y, a + x * x, b + y * y)
            });
        assert!(dot_vb / (nv * nb).sqrt() > 0.9999);
    }

    #[test]
    fn integer_dot_matches_the_float_dot() {
        let a: Vec<f32> = (0..64).map(|i| (i as f32).sin()).collect();
        let b: Vec<f32> = (0..64).map(|i| (i as f32 * 0.7).cos()).collect();
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let (s, q) = quantize(&a);
        let got = dot(s, &q, &encode(0, &b)).unwrap_or(f32::NAN);
        assert!(
            (got - exact).abs() < 0.05 * exact.abs().max(1.0),
            "{got} vs {exact}"
        );
        assert_eq!(dot(s, &q[..10], &encode(0, &b)), None);
    }
}

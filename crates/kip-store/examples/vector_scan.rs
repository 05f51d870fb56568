//! `cargo run --release -p kip-store --example vector_scan -- N [KIND]`:
//! SEARCH by meaning's vector search over N concepts' 384-dimensional int8
//! vectors in two groups — the exact centred scan, and the binary-code
//! prefilter with exact rescoring of its candidates for a few candidate
//! counts — p50 and p90 of 21 searches each, recall@10 of the prefilter
//! against the exact top 10 (mean of 21 queries), and the bytes the
//! vectors and codes take (BENCHMARKS.md, "Recall by meaning").
//!
//! KIND `random` (the default): independent random unit vectors, the worst
//! case for any index (a query's nearest neighbours are barely nearer than
//! the rest). KIND `topics`: each vector is its group's common direction
//! (e5's vectors share one, which centring removes), one of 2,000 topics
//! and noise, and each query is a topic's — nearer to the structure of real
//! memories.
use std::time::Instant;

use kip_store::{ConceptId, ConceptRecord, Namespace, Store, StoreError};

fn unit(seed: &mut u64, dim: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..dim)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((*seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        })
        .collect();
    normal(v)
}

fn normal(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-9);
    v.iter_mut().for_each(|x| *x /= n);
    v
}

fn mix(parts: &[(&[f32], f32)]) -> Vec<f32> {
    let mut v = vec![0.0f32; parts[0].0.len()];
    for (p, w) in parts {
        v.iter_mut().zip(*p).for_each(|(a, b)| *a += w * b);
    }
    normal(v)
}

/// Makes vectors of the kind asked: `next(i, seed)` for concept `i`, and
/// queries.
struct Data {
    topics: Vec<Vec<f32>>,
    commons: [Vec<f32>; 2],
}

impl Data {
    fn new(kind: &str, seed: &mut u64) -> Data {
        let topics = match kind {
            "topics" => (0..2000).map(|_| unit(seed, 384)).collect(),
            _ => Vec::new(),
        };
        Data {
            topics,
            commons: [unit(seed, 384), unit(seed, 384)],
        }
    }

    fn vector(&self, group: usize, seed: &mut u64) -> Vec<f32> {
        if self.topics.is_empty() {
            return unit(seed, 384);
        }
        let t = (*seed >> 20) as usize % self.topics.len();
        let noise = unit(seed, 384);
        mix(&[
            (&self.commons[group], 1.0),
            (&self.topics[t], 0.5),
            (&noise, 0.5),
        ])
    }
}

fn p50_p90(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[times.len() * 9 / 10])
}

fn top10(mut hits: Vec<(ConceptId, f32)>) -> Vec<ConceptId> {
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.into_iter().take(10).map(|h| h.0).collect()
}

fn main() -> Result<(), StoreError> {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    let kind = std::env::args().nth(2).unwrap_or_else(|| "random".into());
    let dir = std::env::temp_dir().join(format!("kip-vector-scan-{}", std::process::id()));
    let store = Store::open(&dir)?;
    let mut seed = 7u64;
    let data = Data::new(&kind, &mut seed);
    let t = Instant::now();
    store.write(|txn| {
        let ty = store.intern(txn, Namespace::ConceptType, "Memory")?;
        for i in 0..n {
            let rec = ConceptRecord {
                type_id: ty,
                name: format!("m{i}"),
                ..Default::default()
            };
            store.create_concept(txn, &rec)?;
        }
        store.reset_vectors(txn, "bench")?;
        for (id, seq) in store.vector_backlog(txn, n as usize)? {
            let group = (id.0 % 2) as usize;
            let v = data.vector(group, &mut seed);
            store.settle_vector(txn, id, seq, group as u8, &v)?;
        }
        Ok::<_, StoreError>(())
    })?;
    // Two language groups, centred as SEARCH centres them; the codes
    // against the same centres (the engine records its prior centres).
    let centres = store.read(|txn| store.vector_centroids(txn))?;
    let centres: Vec<(u8, Vec<f32>)> = centres.into_iter().map(|(g, _, m)| (g, m)).collect();
    let written = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let codes = store.write(|txn| store.set_code_centres(txn, &centres))?;
    eprintln!(
        "{n} {kind} vectors written in {written:.1} s; {codes} codes recomputed for new centres in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    let queries: Vec<Vec<f32>> = (0..21)
        .map(|i| {
            let g = i % 2;
            let raw = data.vector(g, &mut seed);
            let c = &centres[g].1;
            normal(raw.iter().zip(c).map(|(a, b)| a - b).collect())
        })
        .collect();
    let mut exact = Vec::new();
    let mut times = Vec::new();
    for q in &queries {
        let t = Instant::now();
        let mut hits = Vec::new();
        store
            .read(|txn| store.scan_vectors_centred(txn, q, &centres, |id, s| hits.push((id, s))))?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        exact.push(top10(hits));
    }
    let (p50, p90) = p50_p90(times);
    println!("n={n} {kind}: exact scan p50 {p50:.1} ms p90 {p90:.1} ms");
    for candidates in [200, 600, 1000, 2000, 4000] {
        let mut times = Vec::new();
        let mut found = 0;
        for (q, want) in queries.iter().zip(&exact) {
            let t = Instant::now();
            let near =
                store.read(|txn| store.nearest_vectors_centred(txn, q, &centres, candidates))?;
            let got = top10(near.hits);
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            found += got.iter().filter(|id| want.contains(id)).count();
        }
        let (p50, p90) = p50_p90(times);
        println!(
            "  prefilter {candidates:>4} candidates: p50 {p50:.1} ms p90 {p90:.1} ms, recall@10 {:.3}",
            found as f64 / (10 * queries.len()) as f64
        );
    }
    let sizes = store.sizes()?;
    let mb = |name: &str| {
        let pages = (sizes.databases.iter().find(|d| d.name == name)).map_or(0, |d| d.pages());
        (pages * sizes.page_size) as f64 / 1e6
    };
    println!(
        "  vectors database {:.1} MB, codes {:.1} MB",
        mb("vectors"),
        mb("vector_codes")
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

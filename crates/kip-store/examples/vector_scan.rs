//! `cargo run --release -p kip-store --example vector_scan -- N`: the exact
//! centred scan behind SEARCH by meaning over N concepts' 384-dimensional
//! int8 vectors (random unit vectors in two groups), p50 and p90 of 21
//! scans, and the bytes the vectors take (BENCHMARKS.md, "Recall by
//! meaning").
use std::time::Instant;

use kip_store::{ConceptRecord, Namespace, Store, StoreError};

fn unit(seed: &mut u64, dim: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((*seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

fn main() -> Result<(), StoreError> {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    let dir = std::env::temp_dir().join(format!("kip-vector-scan-{}", std::process::id()));
    let store = Store::open(&dir)?;
    let mut seed = 7u64;
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
            store.settle_vector(txn, id, seq, (id.0 % 2) as u8, &unit(&mut seed, 384))?;
        }
        Ok::<_, StoreError>(())
    })?;
    eprintln!(
        "{n} concepts with vectors written in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let query = unit(&mut seed, 384);
    // Two language groups, centred as SEARCH centres them.
    let centres = store.read(|txn| store.vector_centroids(txn))?;
    let centres: Vec<(u8, Vec<f32>)> = centres.into_iter().map(|(g, _, m)| (g, m)).collect();
    let mut times = Vec::new();
    for _ in 0..21 {
        let t = Instant::now();
        let mut best = (f32::MIN, 0u64);
        store.read(|txn| {
            store.scan_vectors_centred(txn, &query, &centres, |id, s| {
                if s > best.0 {
                    best = (s, id.0);
                }
            })
        })?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let sizes = store.sizes()?;
    let vectors = sizes.databases.iter().find(|d| d.name == "vectors");
    let pages = vectors.map_or(0, |d| d.pages());
    println!(
        "n={n} scan p50 {:.1} ms p90 {:.1} ms; vectors database {:.1} MB",
        times[10],
        times[18],
        (pages * sizes.page_size) as f64 / 1e6
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

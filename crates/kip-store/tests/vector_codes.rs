//! The binary-code prefilter of SEARCH by meaning: randomized stores where
//! the prefilter's answer is compared with the exact scan's, and the
//! upgrade of a format-5 store holding vectors.

use std::collections::HashSet;
use std::path::Path;

use kip_store::codec::vector_code as vc;
use kip_store::{ConceptId, ConceptRecord, Namespace, Store, StoreError};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = (self.0)
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn unit(&mut self, dim: usize) -> Vec<f32> {
        let v: Vec<f32> = (0..dim)
            .map(|_| (self.next() % 2001) as f32 / 1000.0 - 1.0)
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
        v.into_iter().map(|x| x / n).collect()
    }
}

/// A store of `n` concepts with random vectors in two groups (a few
/// deleted), code centres recorded; returns the centres.
fn random_store(store: &Store, rng: &mut Rng, n: usize, dim: usize) -> Vec<(u8, Vec<f32>)> {
    store
        .write(|txn| {
            let ty = store.intern(txn, Namespace::ConceptType, "Memory")?;
            let mut ids = Vec::new();
            for i in 0..n {
                let rec = ConceptRecord {
                    type_id: ty,
                    name: format!("m{i}"),
                    ..Default::default()
                };
                ids.push(store.create_concept(txn, &rec)?);
            }
            store.reset_vectors(txn, "test")?;
            for (id, seq) in store.vector_backlog(txn, n)? {
                let v = rng.unit(dim);
                store.settle_vector(txn, id, seq, (rng.next() % 2) as u8, &v)?;
            }
            for id in ids.iter().step_by(7) {
                store.delete_concept(txn, *id)?;
            }
            let centres: Vec<(u8, Vec<f32>)> = (0..2).map(|g| (g, rng.unit(dim))).collect();
            store.set_code_centres(txn, &centres)?;
            Ok::<_, StoreError>(centres)
        })
        .expect("the random store")
}

fn ranked(mut hits: Vec<(ConceptId, f32)>) -> Vec<(ConceptId, f32)> {
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits
}

/// For random stores, queries and candidate counts: the prefilter returns
/// exactly its candidates, the Hamming-nearest ones, each with the exact
/// scan's score; and once the candidates include every vector at most as
/// far (in Hamming distance) as the exact top k's farthest, its top k is
/// the exact top k.
#[test]
fn prefilter_and_rescore_is_the_exact_top_k_when_the_candidates_suffice() {
    for seed in 0..12u64 {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let mut rng = Rng(seed * 7919 + 1);
        let dim = [16, 64, 70][seed as usize % 3];
        let n = 150 + (seed as usize * 37) % 200;
        let centres = random_store(&store, &mut rng, n, dim);
        store
            .read(|txn| {
                let mut exact = Vec::new();
                let query = rng.unit(dim);
                store.scan_vectors_centred(txn, &query, &centres, |id, s| exact.push((id, s)))?;
                let exact = ranked(exact);
                let qcode = vc::code(&query, None);
                let distance = |id: ConceptId| -> u32 {
                    let code = store
                        .vector_code(txn, id)
                        .ok()
                        .flatten()
                        .unwrap_or_default();
                    assert_eq!(code.len(), qcode.len(), "{id} has its code");
                    code.iter()
                        .zip(&qcode)
                        .map(|(a, b)| (a ^ b).count_ones())
                        .sum()
                };
                let k = 10;
                let farthest = exact
                    .iter()
                    .take(k)
                    .map(|h| distance(h.0))
                    .max()
                    .unwrap_or(0);
                let needed = exact.iter().filter(|h| distance(h.0) <= farthest).count();
                for candidates in [1, k, needed.saturating_sub(1).max(1), needed, needed + 5, n] {
                    let near = store.nearest_vectors_centred(txn, &query, &centres, candidates)?;
                    assert_eq!(near.hits.len(), candidates.min(exact.len()), "seed {seed}");
                    let ids: HashSet<ConceptId> = near.hits.iter().map(|h| h.0).collect();
                    assert_eq!(ids.len(), near.hits.len());
                    for (id, score) in &near.hits {
                        let want = exact.iter().find(|h| h.0 == *id).map(|h| h.1);
                        assert_eq!(want, Some(*score), "seed {seed}: {id}");
                    }
                    // The candidates are the nearest codes.
                    let worst_in = near.hits.iter().map(|h| distance(h.0)).max().unwrap_or(0);
                    let best_out = (exact.iter())
                        .filter(|h| !ids.contains(&h.0))
                        .map(|h| distance(h.0))
                        .min()
                        .unwrap_or(u32::MAX);
                    assert!(worst_in <= best_out, "seed {seed}: {worst_in} > {best_out}");
                    if candidates >= needed {
                        let top: Vec<_> = ranked(near.hits).into_iter().take(k).collect();
                        assert_eq!(top, exact[..k.min(exact.len())], "seed {seed}");
                    }
                }
                Ok::<_, StoreError>(())
            })
            .expect("read");
        let report = store.check().expect("check");
        assert!(report.ok, "{report:#?}");
    }
}

/// `tests/data/format-5-vectors/data.mdb`: five concepts, four with
/// vectors of 16 dimensions in two groups and one waiting, as the program
/// of format 5 (4c3c4c4) wrote them, before the binary codes. The upgrade
/// computes a code for every vector, the check verifies them, and the
/// prefilter's search is the exact scan's.
#[test]
fn a_format_5_store_with_vectors_gains_their_codes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/format-5-vectors/data.mdb");
    std::fs::copy(fixture, dir.path().join("data.mdb")).expect("copy the fixture");
    let store = Store::open(dir.path()).expect("open the format-5 store");
    let report = store.check().expect("check");
    assert!(report.ok, "{report:#?}");
    store
        .read(|txn| {
            assert_eq!(store.vector_count(txn)?, 4);
            assert_eq!(store.vector_backlog_len(txn)?, 1);
            assert!(store.code_centres(txn)?.is_empty());
            let coded = (1..=5)
                .filter(|i| matches!(store.vector_code(txn, ConceptId(*i)), Ok(Some(_))))
                .count();
            assert_eq!(coded, 4);
            let query: Vec<f32> = (0..16)
                .map(|j| if j % 2 == 0 { 0.25 } else { -0.25 })
                .collect();
            let mut exact = Vec::new();
            store.scan_vectors_centred(txn, &query, &[], |id, s| exact.push((id, s)))?;
            let near = store.nearest_vectors_centred(txn, &query, &[], 2)?;
            assert!(near.cut);
            assert_eq!(near.hits.len(), 2);
            assert!(near.hits.iter().all(|h| exact.contains(h)));
            Ok::<_, StoreError>(())
        })
        .expect("read");
    // Recording centres recomputes every code, and the check agrees.
    let centres = vec![(0u8, vec![0.1f32; 16]), (1, vec![-0.1; 16])];
    let recomputed = store
        .write(|txn| store.set_code_centres(txn, &centres))
        .expect("centres");
    assert_eq!(recomputed, 4);
    let again = store
        .write(|txn| store.set_code_centres(txn, &centres))
        .expect("centres");
    assert_eq!(again, 0);
    let report = store.check().expect("check");
    assert!(report.ok, "{report:#?}");
}

//! Store-level measurements on a generated graph (no KIP parsing or
//! planning: the engine's own benchmark is `kip bench`).
//!
//! `cargo bench -p kip-store --bench store -- [CONCEPTS] [PROPOSITIONS]`
//! (default 200,000 and 1,000,000, as in BRIEF §6). Prints load rates (half
//! the propositions created one by one in writes of 50,000, half with
//! `create_propositions` in writes of 200,000) and p50 / p95 of a one-hop
//! lookup from a named concept, one hop with full records, a two-hop
//! expansion and a per-type count.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use kip_store::{
    ConceptId, ConceptRecord, ElementId, Namespace, PropositionRecord, Store, StoreError,
};
use serde_json::{Map, json};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

const TYPES: [&str; 4] = ["Drug", "Symptom", "Gene", "Disease"];
const PREDICATES: [&str; 6] = [
    "treats",
    "has_side_effect",
    "interacts_with",
    "associated_with",
    "presents_with",
    "related_to",
];
/// Writes of this many concepts or one-by-one propositions; batched
/// propositions go four times as many per write.
const CHUNK: usize = 50_000;

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.95))
}

fn measure(
    runs: usize,
    mut f: impl FnMut(usize) -> Result<(), StoreError>,
) -> Result<(Duration, Duration), StoreError> {
    let mut samples = Vec::with_capacity(runs);
    for i in 0..runs {
        let t = Instant::now();
        f(i)?;
        samples.push(t.elapsed());
    }
    Ok(percentiles(samples))
}

fn main() -> Result<(), StoreError> {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let concepts = args.first().copied().unwrap_or(200_000);
    let propositions = args.get(1).copied().unwrap_or(1_000_000);
    let dir = tempfile::tempdir()?;
    let store = Store::open(dir.path())?;
    let (types, predicates) = store.write(|txn| {
        let types: Vec<u32> = TYPES
            .iter()
            .map(|t| store.intern(txn, Namespace::ConceptType, t))
            .collect::<Result<_, _>>()?;
        let predicates: Vec<u32> = PREDICATES
            .iter()
            .map(|p| store.intern(txn, Namespace::Predicate, p))
            .collect::<Result<_, _>>()?;
        Ok::<_, StoreError>((types, predicates))
    })?;
    let metadata: Map<String, serde_json::Value> = serde_json::from_value(
        json!({"_created_at": "2025-01-01T00:00:00Z", "_updated_at": "2025-01-01T00:00:00Z"}),
    )
    .unwrap_or_default();

    let t = Instant::now();
    let mut next = 0;
    while next < concepts {
        let end = (next + CHUNK as u64).min(concepts);
        store.write(|txn| {
            for i in next..end {
                let record = ConceptRecord {
                    type_id: types[(i % 4) as usize],
                    name: format!("{} {i}", TYPES[(i % 4) as usize]),
                    attributes: serde_json::from_value(json!({"rank": i, "label": "generated"}))
                        .unwrap_or_default(),
                    metadata: metadata.clone(),
                };
                store.create_concept(txn, &record)?;
            }
            Ok::<_, StoreError>(())
        })?;
        next = end;
    }
    let elapsed = t.elapsed();
    println!(
        "load concepts       {concepts:>9} in {elapsed:>10.2?}  {:>9.0}/s",
        concepts as f64 / elapsed.as_secs_f64()
    );

    // Distinct random triples, generated up front so that only storing is
    // timed. Half are stored one by one, half in batches.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut seen = HashSet::new();
    let mut all = Vec::with_capacity(propositions as usize);
    while (all.len() as u64) < propositions {
        let record = PropositionRecord {
            subject: ElementId::Concept(ConceptId(1 + rng.below(concepts))),
            predicate: predicates[rng.below(6) as usize],
            object: ElementId::Concept(ConceptId(1 + rng.below(concepts))),
            attributes: Map::new(),
            metadata: metadata.clone(),
        };
        if seen.insert(record.triple()) {
            all.push(record);
        }
    }
    let (one_by_one, batched) = all.split_at(all.len() / 2);
    let t = Instant::now();
    for chunk in one_by_one.chunks(CHUNK) {
        store.write(|txn| {
            for record in chunk {
                store.create_proposition(txn, record)?;
            }
            Ok::<_, StoreError>(())
        })?;
    }
    let elapsed = t.elapsed();
    let n = one_by_one.len() as f64;
    println!(
        "load propositions 1 {n:>9} in {elapsed:>10.2?}  {:>9.0}/s",
        n / elapsed.as_secs_f64()
    );
    let t = Instant::now();
    for chunk in batched.chunks(CHUNK * 4) {
        let chunk: Vec<_> = chunk.iter().map(PropositionRecord::as_new).collect();
        store.write(|txn| store.create_propositions(txn, &chunk))?;
    }
    let elapsed = t.elapsed();
    let n = batched.len() as f64;
    println!(
        "load propositions n {n:>9} in {elapsed:>10.2?}  {:>9.0}/s",
        n / elapsed.as_secs_f64()
    );

    let runs = 10_000;
    let (p50, p95) = measure(runs, |_| {
        let i = rng.below(concepts);
        store.read(|txn| {
            let ty = store
                .lookup(txn, Namespace::ConceptType, TYPES[(i % 4) as usize])?
                .unwrap_or(0);
            let Some(c) =
                store.find_concept(txn, ty, &format!("{} {i}", TYPES[(i % 4) as usize]))?
            else {
                return Ok(());
            };
            for m in store.iter_propositions_matching(txn, Some(c.into()), None, None)? {
                let (_, _, _, o) = m?;
                if let ElementId::Concept(o) = o {
                    std::hint::black_box(store.concept_head(txn, o)?);
                }
            }
            Ok(())
        })
    })?;
    println!("one hop (by name)   p50 {p50:>9.2?}  p95 {p95:>9.2?}");

    let (p50, p95) = measure(runs, |_| {
        let c = ConceptId(1 + rng.below(concepts));
        store.read(|txn| {
            for m in
                store.iter_propositions_matching(txn, Some(c.into()), Some(predicates[0]), None)?
            {
                let (_, _, _, o) = m?;
                std::hint::black_box(store.get_concept(txn, o.as_concept().unwrap_or(c))?);
            }
            Ok(())
        })
    })?;
    println!("one hop + records   p50 {p50:>9.2?}  p95 {p95:>9.2?}");

    let (p50, p95) = measure(1_000, |_| {
        let c = ConceptId(1 + rng.below(concepts));
        store.read(|txn| {
            let mut n = 0;
            for m in store.iter_propositions_matching(txn, Some(c.into()), None, None)? {
                let (_, _, _, o) = m?;
                for m2 in store.iter_propositions_matching(txn, Some(o), None, None)? {
                    m2?;
                    n += 1;
                }
            }
            std::hint::black_box(n);
            Ok(())
        })
    })?;
    println!("two hops            p50 {p50:>9.2?}  p95 {p95:>9.2?}");

    let (p50, p95) = measure(runs, |i| {
        store.read(|txn| {
            std::hint::black_box(store.concept_count_by_type(txn, types[i % 4])?);
            Ok(())
        })
    })?;
    println!("count of a type     p50 {p50:>9.2?}  p95 {p95:>9.2?}");
    Ok(())
}

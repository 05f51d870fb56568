//! The generated benchmark graph: four concept types (Drug, Symptom, Gene,
//! Disease) of `concepts / 4` instances each, half of them with Chinese
//! names, and `propositions` links over six predicates drawn from a
//! fixed-seed generator, so two runs build the same graph.
//!
//! Everything here streams: each capsule is handed to `emit` as soon as it
//! holds `chunk` items and then dropped, and a name is computed from its
//! number when needed (no table of names, no set of links drawn so far), so
//! memory is O(chunk) and time O(concepts + propositions) at any size.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A small deterministic generator (xorshift64*), so runs are comparable.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

pub const TYPES: [&str; 4] = ["Drug", "Symptom", "Gene", "Disease"];
const CJK: [&str; 4] = ["药物", "症状", "基因", "疾病"];
/// (predicate, subject type index, object type index)
const PREDICATES: [(&str, usize, usize); 6] = [
    ("treats", 0, 3),
    ("has_side_effect", 0, 1),
    ("interacts_with", 0, 0),
    ("associated_with", 2, 3),
    ("presents_with", 3, 1),
    ("related_to", 3, 3),
];

/// The name of instance `i` of type `type_index`.
pub fn name(type_index: usize, i: u64) -> String {
    if i.is_multiple_of(2) {
        format!("{} {i}", TYPES[type_index])
    } else {
        format!("{}{i}号", CJK[type_index])
    }
}

pub fn schema_capsule() -> String {
    let mut s = String::from(
        "UPSERT {\n  CONCEPT ?bench { {type: \"Domain\", name: \"Bench\"} SET ATTRIBUTES { description: \"Generated benchmark graph\" } }\n",
    );
    for t in TYPES {
        let _ = writeln!(
            s,
            "  CONCEPT {{ {{type: \"$ConceptType\", name: \"{t}\"}} SET ATTRIBUTES {{ description: \"{t}s of the benchmark\" }} SET PROPOSITIONS {{ (\"belongs_to_domain\", ?bench) }} }}"
        );
    }
    for (p, s_t, o_t) in PREDICATES {
        let _ = writeln!(
            s,
            "  CONCEPT {{ {{type: \"$PropositionType\", name: \"{p}\"}} SET ATTRIBUTES {{ description: \"{p}\", subject_types: [\"{}\"], object_types: [\"{}\"] }} SET PROPOSITIONS {{ (\"belongs_to_domain\", ?bench) }} }}",
            TYPES[s_t], TYPES[o_t]
        );
    }
    s.push('}');
    s
}

/// Emits the capsules that create `per_type` concepts of each type, in
/// chunks, one at a time (so they need not all be in memory).
pub fn concept_capsules(
    per_type: u64,
    chunk: u64,
    emit: &mut impl FnMut(String) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let total = per_type * TYPES.len() as u64;
    upsert_capsules(total, chunk, emit, |k, s| {
        let (t, i) = ((k / per_type) as usize, k % per_type);
        let ty = TYPES[t];
        let _ = writeln!(
            s,
            "CONCEPT {{ {{type: \"{ty}\", name: \"{}\"}} SET ATTRIBUTES {{ description: \"generated {ty} number {i}\", score: {} }} }}",
            name(t, i),
            i % 100
        );
    })
}

/// Emits the capsules that create `count` links, in chunks, one at a time.
/// Links are drawn independently (duplicates are left to the engine, which
/// merges them), so drawing one costs O(1) whatever the size.
pub fn link_capsules(
    per_type: u64,
    count: u64,
    chunk: u64,
    rng: &mut Rng,
    emit: &mut impl FnMut(String) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    upsert_capsules(count, chunk, emit, |_, s| {
        let (p, st, ot) = PREDICATES[rng.below(PREDICATES.len() as u64) as usize];
        let a = rng.below(per_type);
        let b = rng.below(per_type);
        let _ = writeln!(
            s,
            "CONCEPT {{ {{type: \"{}\", name: \"{}\"}} SET PROPOSITIONS {{ (\"{p}\", {{type: \"{}\", name: \"{}\"}}) }} }}",
            TYPES[st],
            name(st, a),
            TYPES[ot],
            name(ot, b)
        );
    })
}

/// Emits `items` CONCEPT blocks as capsules of one UPSERT with at most
/// `chunk` blocks each, one capsule at a time; `item(k, s)` appends block
/// `k` to `s`.
fn upsert_capsules(
    items: u64,
    chunk: u64,
    emit: &mut impl FnMut(String) -> anyhow::Result<()>,
    mut item: impl FnMut(u64, &mut String),
) -> anyhow::Result<()> {
    let mut s = String::new();
    for k in 0..items {
        if k % chunk == 0 {
            s.push_str("UPSERT {\n");
        }
        item(k, &mut s);
        if (k + 1) % chunk == 0 || k + 1 == items {
            s.push('}');
            emit(std::mem::take(&mut s))?;
        }
    }
    Ok(())
}

/// Writes capsules to numbered files in `folder` as they are generated;
/// `paths` collects the files in order (one path per `chunk` items: 500
/// paths for 10M links at 20,000 a capsule).
pub fn to_files<'p>(
    folder: &'p Path,
    prefix: &'p str,
    paths: &'p mut Vec<PathBuf>,
) -> impl FnMut(String) -> anyhow::Result<()> + 'p {
    move |text| {
        let path = folder.join(format!("{prefix}-{:05}.kip", paths.len()));
        std::fs::write(&path, text)?;
        paths.push(path);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each emitted capsule holds at most `chunk` items, and together they
    /// hold every item: the generator never gathers more than one capsule.
    #[test]
    fn capsules_are_emitted_one_chunk_at_a_time() {
        let (mut sizes, mut total) = (Vec::new(), 0);
        link_capsules(10, 2_345, 100, &mut Rng(7), &mut |text: String| {
            let lines = text.lines().filter(|l| l.starts_with("CONCEPT")).count();
            sizes.push(lines);
            total += lines;
            Ok(())
        })
        .expect("the generator emits");
        assert_eq!(total, 2_345);
        assert!(sizes.iter().all(|&n| n <= 100), "{sizes:?}");
        assert_eq!(sizes.len(), 24);

        let (mut sizes, mut total) = (Vec::new(), 0);
        concept_capsules(250, 300, &mut |text: String| {
            let lines = text.lines().filter(|l| l.starts_with("CONCEPT")).count();
            sizes.push(lines);
            total += lines;
            Ok(())
        })
        .expect("the generator emits");
        assert_eq!(total, 1_000);
        assert!(sizes.iter().all(|&n| n <= 300), "{sizes:?}");
    }

    /// Two runs with one seed draw the same graph.
    #[test]
    fn the_graph_is_deterministic() {
        let draw = || {
            let mut all = String::new();
            link_capsules(50, 500, 128, &mut Rng(0x5EED_CAFE), &mut |t: String| {
                all.push_str(&t);
                Ok(())
            })
            .expect("the generator emits");
            all
        };
        assert_eq!(draw(), draw());
    }
}

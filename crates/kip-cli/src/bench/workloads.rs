//! The measured workloads of BRIEF §6 (and issue 17's FILTER and write
//! budgets): each a label, a maker of the next query text and a p50 budget.

use super::graph::{Rng, name};

/// Makes the next query text of a workload.
pub type MakeQuery = Box<dyn FnMut(&mut Rng) -> String>;

/// The measured workloads: a label, the query maker and the p50 budget in
/// milliseconds (NaN where BRIEF §6 sets none).
pub fn workloads(per_type: u64) -> Vec<(&'static str, MakeQuery, f64)> {
    let mut all = graph_workloads(per_type);
    all.extend(filter_workloads(per_type));
    all.extend(write_workloads());
    all
}

/// Reads that walk the graph, search it and describe it.
fn graph_workloads(per_type: u64) -> Vec<(&'static str, MakeQuery, f64)> {
    vec![
        (
            "one-hop FIND from a named concept",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?s.name) WHERE {{ ({{type: \"Drug\", name: \"{}\"}}, \"has_side_effect\", ?s) }}",
                    name(0, r.below(per_type))
                )
            }),
            0.2,
        ),
        (
            "two-hop FIND",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?s.name) WHERE {{ ({{type: \"Drug\", name: \"{}\"}}, \"treats\", ?d) (?d, \"presents_with\", ?s) }}",
                    name(0, r.below(per_type))
                )
            }),
            2.0,
        ),
        (
            "{1,3} path",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?x.name) WHERE {{ ({{type: \"Disease\", name: \"{}\"}}, \"related_to\"{{1,3}}, ?x) }}",
                    name(3, r.below(per_type))
                )
            }),
            10.0,
        ),
        (
            "SEARCH CONCEPT top-10 (English)",
            Box::new(move |r: &mut Rng| {
                format!(
                    "SEARCH CONCEPT \"Gene {}\" LIMIT 10",
                    2 * r.below(per_type / 2)
                )
            }),
            5.0,
        ),
        (
            "SEARCH CONCEPT top-10 (Chinese)",
            Box::new(move |r: &mut Rng| {
                format!(
                    "SEARCH CONCEPT \"基因{}号\" LIMIT 10",
                    2 * r.below(per_type / 2) + 1
                )
            }),
            5.0,
        ),
        (
            "DESCRIBE PRIMER",
            Box::new(|_: &mut Rng| "DESCRIBE PRIMER".to_owned()),
            20.0,
        ),
        (
            "COUNT over a type",
            Box::new(|_: &mut Rng| "FIND(COUNT(?d)) WHERE { ?d {type: \"Drug\"} }".to_owned()),
            5.0,
        ),
    ]
}

/// FILTERs over a 50,000-concept type: by the attribute index, and by scans.
fn filter_workloads(per_type: u64) -> Vec<(&'static str, MakeQuery, f64)> {
    vec![
        (
            "FILTER scan over a type (LIMIT 10)",
            Box::new(|r: &mut Rng| {
                format!(
                    "FIND(?d.name) WHERE {{ ?d {{type: \"Symptom\"}} FILTER(?d.attributes.score == {}) }} LIMIT 10",
                    r.below(100)
                )
            }),
            f64::NAN,
        ),
        (
            "FILTER ==, 1 match (index)",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?d.name) WHERE {{ ?d {{type: \"Symptom\"}} FILTER(?d.attributes.description == \"generated Symptom number {}\") }}",
                    r.below(per_type)
                )
            }),
            1.0,
        ),
        (
            "FILTER STARTS_WITH, <=11 matches (index)",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?d.name) WHERE {{ ?d {{type: \"Symptom\"}} FILTER(STARTS_WITH(?d.attributes.description, \"generated Symptom number {}\")) }}",
                    r.below(per_type.max(10) / 10) + 1
                )
            }),
            1.0,
        ),
        (
            "FILTER range, 90% match, LIMIT 10",
            Box::new(|r: &mut Rng| {
                format!(
                    "FIND(?d.name) WHERE {{ ?d {{type: \"Symptom\"}} FILTER(?d.attributes.score >= {}) }} LIMIT 10",
                    r.below(10)
                )
            }),
            1.0,
        ),
        (
            "FILTER CONTAINS, full scan of a type",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?d.name) WHERE {{ ?d {{type: \"Symptom\"}} FILTER(CONTAINS(?d.attributes.description, \"number {}\")) }}",
                    r.below(per_type)
                )
            }),
            // BRIEF §6 (issue 32 §1): a full FILTER scan over a 50,000-concept type.
            5.0,
        ),
        (
            "FILTER ==, 1 match, forced scan",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?d.name) WHERE {{ ?d {{type: \"Symptom\"}} FILTER(!(!(?d.attributes.description == \"generated Symptom number {}\"))) }}",
                    r.below(per_type)
                )
            }),
            5.0,
        ),
    ]
}

/// One small write, committed and as a dry run.
fn write_workloads() -> Vec<(&'static str, MakeQuery, f64)> {
    vec![
        (
            "single small UPSERT, durable commit",
            Box::new(|r: &mut Rng| {
                format!(
                    "UPSERT {{ CONCEPT {{ {{type: \"Symptom\", name: \"bench write target\"}} SET ATTRIBUTES {{ bench_write: {} }} }} }}",
                    r.next() % 1_000_000_000
                )
            }),
            1.0,
        ),
        (
            DRY_RUN_WRITE,
            Box::new(|r: &mut Rng| {
                format!(
                    "UPSERT {{ CONCEPT {{ {{type: \"Symptom\", name: \"bench write target\"}} SET ATTRIBUTES {{ bench_write: {} }} }} }}",
                    r.next() % 1_000_000_000
                )
            }),
            f64::NAN,
        ),
    ]
}

/// The write workload run as a dry run: everything a durable write does but
/// the commit, so the difference between the two is the commit's cost.
pub const DRY_RUN_WRITE: &str = "same UPSERT, dry run (no commit)";

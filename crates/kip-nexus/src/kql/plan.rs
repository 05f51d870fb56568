//! The planner: which atom to join next. Each remaining atom's output is
//! estimated from the counters (per type, per predicate, totals) given the
//! slots already bound, and the cheapest runs next, so the order a query is
//! written in never matters. Also names the index a step reads, for
//! `explain`.
//!
//! Estimates read counters only, never instances.

use std::collections::BTreeSet;

use crate::graph::{Graph, Result};

use super::compile::{Atom, CompiledGroup, ConceptTest, PredTest, Slot};

/// Picks the remaining atom with the smallest estimated output.
pub(super) fn cheapest(
    graph: &Graph<'_>,
    group: &CompiledGroup,
    remaining: &[usize],
    bound: &BTreeSet<Slot>,
    rows: usize,
) -> Result<(usize, f64)> {
    let mut best = (0, f64::INFINITY);
    for (i, &a) in remaining.iter().enumerate() {
        let cost = estimate(graph, &group.atoms[a].0, bound)? * rows.max(1) as f64;
        if cost < best.1 {
            best = (i, cost);
        }
    }
    Ok(best)
}

/// Estimated rows one input row becomes after `atom`.
fn estimate(g: &Graph<'_>, atom: &Atom, bound: &BTreeSet<Slot>) -> Result<f64> {
    Ok(match atom {
        Atom::Concept {
            var, test, index, ..
        } => {
            if bound.contains(var) {
                0.5
            } else {
                match test {
                    ConceptTest::One(_) => 1.0,
                    ConceptTest::Name(_) => 2.0,
                    ConceptTest::Type(t) => match index {
                        // Counted from the index, up to its probe. A lookup
                        // that finds nothing keeps the type's count: the
                        // plan stays the one without the index, so the
                        // rows the FILTER removes are the ones `explain`
                        // shows, and an empty lookup is cheap wherever it runs.
                        Some(ix) => {
                            let probe = ix.probe(g, *t)?;
                            if probe.complete && !probe.ids.is_empty() {
                                probe.ids.len() as f64
                            } else {
                                g.count_type(*t)? as f64
                            }
                        }
                        None => g.count_type(*t)? as f64,
                    },
                }
            }
        }
        Atom::PropId { .. } => 1.0,
        Atom::Prop {
            var, s, pred, o, ..
        } => {
            if var.is_some_and(|v| bound.contains(&v)) {
                return Ok(0.5);
            }
            let base = match pred {
                PredTest::Names(ps) => {
                    let mut n = 0;
                    for p in ps {
                        n += g.count_predicate(*p)?;
                    }
                    n as f64
                }
                PredTest::Var(p) if bound.contains(p) => {
                    (g.total_propositions()? as f64 / 16.0).max(1.0)
                }
                PredTest::Var(_) => g.total_propositions()? as f64,
                PredTest::Path { preds, max, .. } => {
                    let mut n = 0;
                    for p in preds {
                        n += g.count_predicate(*p)?;
                    }
                    // A path explores more than one hop.
                    n as f64 * f64::from(max.unwrap_or(8).clamp(1, 8))
                }
            };
            let concepts = g.total_concepts()?.max(1) as f64;
            match (bound.contains(s), bound.contains(o)) {
                (true, true) => 0.5,
                (true, false) | (false, true) => (base / concepts * 4.0).clamp(1.0, base.max(1.0)),
                (false, false) => base.max(1.0) * 2.0,
            }
        }
    })
}

/// The index a step reads, given which of its positions are already bound.
pub(super) fn index_name(atom: &Atom, bound: &BTreeSet<Slot>) -> String {
    match atom {
        Atom::Concept { var, .. } if bound.contains(var) => "record lookup (check)".into(),
        Atom::Concept {
            test: ConceptTest::One(_),
            ..
        } => "unique (type, name) / id".into(),
        Atom::Concept {
            test: ConceptTest::Type(_),
            index: Some(ix),
            ..
        } => format!("attribute index ({})", ix.text),
        Atom::Concept {
            test: ConceptTest::Type(_),
            ..
        } => "type index".into(),
        Atom::Concept {
            test: ConceptTest::Name(_),
            ..
        } => "name index".into(),
        Atom::PropId { .. } => "proposition id".into(),
        Atom::Prop { s, o, pred, .. } => {
            let (sb, ob) = (bound.contains(s), bound.contains(o));
            let path = matches!(pred, PredTest::Path { .. });
            let base = match (sb, ob) {
                (true, _) => "spo",
                (false, true) => "osp",
                (false, false) => match pred {
                    PredTest::Var(_) => "spo (full scan)",
                    _ => "pos",
                },
            };
            if path {
                format!("{base} (breadth-first)")
            } else {
                base.to_owned()
            }
        }
    }
}

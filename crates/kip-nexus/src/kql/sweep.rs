//! UPDATE's scan of one link pattern: the spec's sleep-cycle sweep
//! (`UPDATE ?link … WHERE { ?link (?s, ?p, ?o) FILTER(…) } LIMIT n`,
//! RC11 §4.3 "Iterating large sweeps") run over a graph of any size.
//!
//! The join would materialize every link before its FILTERs run (a
//! `KIP_4002` past [`ROW_BUDGET`] links, and seconds of work per cycle
//! below it). Instead the links are read in id order with their maps
//! still encoded, each FILTER reading the key it needs from the bytes
//! ([`Graph::scan_links`]), and the scan stops once LIMIT links are
//! selected.
//!
//! Where it starts ([`SweepFrom`]) is what the previous cycle of the same
//! statement left ([`super::SweepStarts`], in `cycle.rs`): the links it selected, looked at
//! again first, then the links after where it stopped. The links before
//! that point are skipped only when they are known not to match: the
//! previous cycles looked at each of them and saw it fail the block, and
//! the change log shows that no write has changed a link since (the
//! previous cycle's own entry aside, which changed only the links it
//! selected). Otherwise the scan goes round from the first link up to
//! where it started. Either way each link is looked at at most once per
//! statement, and a cycle that selects fewer than LIMIT has looked at
//! every link that could match, so `updated < LIMIT` still means the sweep
//! is done. Which links a capped UPDATE selects is implementation-defined
//! (RC11 §4.3); any start selects the same links when the whole match set
//! fits under the cap.
//!
//! Only the shape the sweep has takes this path (one link pattern whose
//! link variable is UPDATE's target, its ends and predicate free, FILTERs
//! over those variables only, no NOT / OPTIONAL / UNION); everything else
//! is joined as before. A block whose FILTERs read the link's ends never
//! skips links: an end can change without any link changing. FIND keeps its own order and is not affected.

use kip_lang::ast::Group;
use kip_store::PropositionId;

use crate::graph::{Graph, LinkHead, Result};
use crate::stats::Stats;

use super::compile::{Atom, CompiledGroup, PredTest, Slot, Vars, compile};
use super::cycle::{Stop, Sweep, SweepFrom, SweepHint};
use super::exec::{Executor, ROW_BUDGET, rows_exceeded};
use super::row::{Row, Val, set};

/// Evaluates UPDATE's WHERE block as [`super::solve`] does, scanning it
/// as a sweep when it has the shape (see the module's doc): the executor,
/// the solution rows and what the scan did.
pub fn solve_sweep<'g, 't>(
    graph: &'g Graph<'t>,
    source: &str,
    where_: &Group,
    target: &str,
    from: SweepFrom,
    cap: Option<usize>,
) -> Result<(Executor<'g, 't>, Vec<Row>, Sweep)> {
    let mut vars = Vars::default();
    let compiled = compile(graph, source, where_, &mut vars)?;
    let mut exec = Executor::new(graph, &vars);
    exec.sweep = Some(Sweep {
        target: exec.slots.get(target).copied(),
        from,
        cap,
        ran: false,
        reads_ends: false,
        stopped: None,
    });
    let rows = exec.eval(&compiled, vec![exec.empty_row()])?;
    let sweep = exec
        .sweep
        .take()
        .unwrap_or_else(|| unreachable!("set above"));
    // As `solve`: rows that differ only in hidden slots are one solution.
    Ok((exec, super::exec::distinct_solutions(rows, &vars), sweep))
}

/// Whether the links before a hint's start are still known not to match:
/// the change log after the hint's cycle holds that cycle's own entry
/// (exactly its updates, when it made any) and then only writes that
/// changed no link.
pub fn still_clean(graph: &Graph<'_>, hint: &SweepHint) -> Result<bool> {
    let (entries, whole) = graph.changes_since(hint.seq)?;
    if !whole {
        return Ok(false);
    }
    let stats =
        |e: &serde_json::Value| serde_json::from_value::<Stats>(e.get("stats")?.clone()).ok();
    let mut rest = entries.iter();
    if hint.updated > 0 {
        let own = Stats {
            propositions_updated: hint.updated,
            ..Stats::default()
        };
        match rest.next() {
            Some((seq, e)) if *seq == hint.seq + 1 && stats(e) == Some(own) => {}
            _ => return Ok(false),
        }
    }
    Ok(rest.all(|(_, e)| {
        stats(e).is_some_and(|s| {
            s.propositions_created == 0
                && s.propositions_updated == 0
                && s.propositions_deleted == 0
        })
    }))
}

/// The shape of a sweep's block: its link pattern's slots.
struct Shape<'a> {
    var: Slot,
    s: Slot,
    o: Slot,
    p: Option<Slot>,
    names: Option<&'a [u32]>,
}

impl Executor<'_, '_> {
    /// The sweep's scan of `group` from its one input row, when the
    /// executor was asked for one and the block has the shape; `None`
    /// leaves the block to the join. Takes the FILTERs from `pending`.
    pub(super) fn sweep_scan(
        &mut self,
        group: &CompiledGroup,
        rows: &[Row],
        pending: &mut Vec<usize>,
    ) -> Result<Option<Vec<Row>>> {
        let Some(mut sweep) = self.sweep.take() else {
            return Ok(None);
        };
        let shape = match (group.atoms.as_slice(), rows) {
            ([(atom, _)], [input]) => sweep_shape(group, atom, input, pending, sweep.target),
            _ => None,
        };
        let Some(shape) = shape else {
            self.sweep = Some(sweep);
            return Ok(None);
        };
        let input = &rows[0];
        let filters = std::mem::take(pending);
        let graph = self.graph;
        let from = &sweep.from;
        let mut out = Vec::new();
        let full = |out: &Vec<Row>| sweep.cap.is_some_and(|cap| out.len() >= cap);
        let mut stopped = None;
        for (i, &id) in from.recheck.iter().enumerate() {
            if full(&out) {
                stopped = Some(Stop::Recheck(i));
                break;
            }
            if let Some(link) = graph.scan_link(id)? {
                self.sweep_link(group, &filters, &shape, input, link, &mut out)?;
            }
        }
        let laps = [
            (from.start, None, Stop::Range as fn(PropositionId) -> Stop),
            (PropositionId(0), Some(from.start), Stop::Wrap),
        ];
        let laps = if from.wrap { &laps[..] } else { &laps[..1] };
        'laps: for &(first, until, stop) in laps {
            if stopped.is_some() {
                break;
            }
            for link in graph.scan_links(first, until)? {
                let link = link?;
                if full(&out) {
                    stopped = Some(stop(link.0));
                    break 'laps;
                }
                if from.recheck.binary_search(&link.0).is_err() {
                    self.sweep_link(group, &filters, &shape, input, link, &mut out)?;
                }
            }
        }
        graph.clear_scanned();
        sweep.ran = true;
        sweep.reads_ends = filters.iter().any(|&f| {
            group.filters[f]
                .1
                .iter()
                .any(|&x| x == shape.s || x == shape.o)
        });
        sweep.stopped = stopped;
        self.sweep = Some(sweep);
        Ok(Some(out))
    }

    /// Looks at one link: binds it and runs the FILTERs, adding the row to
    /// `out` when they hold.
    fn sweep_link(
        &mut self,
        group: &CompiledGroup,
        filters: &[usize],
        shape: &Shape<'_>,
        input: &Row,
        (id, subject, predicate, object): LinkHead,
        out: &mut Vec<Row>,
    ) -> Result<()> {
        self.charge(1)?;
        if shape.names.is_some_and(|n| !n.contains(&predicate)) {
            return Ok(());
        }
        let mut row = input.clone();
        let bound = set(&mut row, shape.var, Val::Prop(id))
            && set(&mut row, shape.s, Val::of(subject))
            && set(&mut row, shape.o, Val::of(object))
            && shape
                .p
                .is_none_or(|p| set(&mut row, p, Val::Pred(predicate)));
        if !bound {
            return Ok(());
        }
        for &f in filters {
            self.charge(1)?;
            if !self.holds(&group.filters[f].0, &row)? {
                return Ok(());
            }
        }
        out.push(row);
        if out.len() > ROW_BUDGET {
            self.graph.clear_scanned();
            return Err(rows_exceeded());
        }
        Ok(())
    }
}

/// The block's link pattern, when it has the sweep's shape (see the
/// module's doc) for a scan that binds `target`.
fn sweep_shape<'a>(
    group: &'a CompiledGroup,
    atom: &'a Atom,
    input: &Row,
    pending: &[usize],
    target: Option<Slot>,
) -> Option<Shape<'a>> {
    let Atom::Prop {
        var: Some(var),
        s,
        pred,
        o,
        ..
    } = atom
    else {
        return None;
    };
    let (p, names) = match pred {
        PredTest::Var(p) => (Some(*p), None),
        PredTest::Names(names) => (None, Some(names.as_slice())),
        PredTest::Path { .. } => return None,
    };
    let slots: Vec<Slot> = [*var, *s, *o].into_iter().chain(p).collect();
    let fits = target == Some(*var)
        && group.nots.is_empty()
        && group.optionals.is_empty()
        && group.unions.is_empty()
        && slots.iter().all(|&x| input[x] == Val::Null)
        && pending
            .iter()
            .all(|&f| group.filters[f].1.iter().all(|x| slots.contains(x)));
    fits.then_some(Shape {
        var: *var,
        s: *s,
        o: *o,
        p,
        names,
    })
}

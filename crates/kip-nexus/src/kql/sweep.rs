//! UPDATE's scan of one link pattern: the spec's sleep-cycle sweep
//! (`UPDATE ?link … WHERE { ?link (?s, ?p, ?o) FILTER(…) } LIMIT n`,
//! RC11 §4.3 "Iterating large sweeps") run over a graph of any size.
//!
//! The join would materialize every link before its FILTERs run (a
//! `KIP_4002` past [`ROW_BUDGET`] links, and seconds of work per cycle
//! below it). Instead the links are read in id order with their maps
//! still encoded, each FILTER reading the key it needs from the bytes
//! ([`Graph::set_scanned`]), and the scan stops once LIMIT links are
//! selected. It starts where the previous cycle of the same statement
//! stopped ([`SweepStarts`]) and, if it reaches the last link first, goes
//! round from the first one up to where it started: every link is looked
//! at at most once per statement, and a cycle that selects fewer than
//! LIMIT has looked at them all, so `updated < LIMIT` still means the
//! sweep is done. The start is only a hint: which links a capped UPDATE
//! selects is implementation-defined (RC11 §4.3), and any start selects
//! the same links when the whole match set fits under the cap.
//!
//! Only the shape the sweep has takes this path (one link pattern whose
//! link variable is UPDATE's target, its ends and predicate free, FILTERs
//! over those variables only, no NOT / OPTIONAL / UNION); everything else
//! is joined as before. FIND keeps its own order and is not affected.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use kip_lang::ast::Group;
use kip_store::PropositionId;

use crate::graph::{Graph, OrInternal as _, Result};

use super::compile::{Atom, CompiledGroup, PredTest, Slot, Vars, compile};
use super::exec::{Executor, ROW_BUDGET, rows_exceeded};
use super::row::{Row, Val, set};

/// What an UPDATE asks of its scan and what the scan did.
#[derive(Clone, Copy, Debug)]
pub struct Sweep {
    /// The UPDATE's target: the scan applies only when it is the link.
    target: Option<Slot>,
    /// The first link to look at (then round to the ones before it).
    start: PropositionId,
    /// LIMIT: the scan stops once it has selected this many.
    cap: Option<usize>,
    /// Whether the block had the sweep's shape and was scanned.
    pub ran: bool,
    /// The first link the scan did not look at, when LIMIT stopped it;
    /// `None` when it went round them all.
    pub stopped_at: Option<PropositionId>,
}

/// Where each sweep's next cycle starts, by statement (its bound WHERE
/// block): held by the nexus across commands, in memory only. A start is
/// a hint that makes each cycle look at the links after the previous
/// one's instead of the ones already marked; losing it (a restart, another
/// process) costs time, never correctness.
#[derive(Debug, Default)]
pub struct SweepStarts(Mutex<HashMap<String, PropositionId>>);

/// Statements remembered at most (the oldest are not told apart: all are
/// forgotten when a new one would pass this).
const MAX_SWEEPS: usize = 64;

impl SweepStarts {
    /// The statement's key: its WHERE block as bound (spans and values).
    pub fn key(where_: &Group) -> String {
        format!("{where_:?}")
    }

    /// Where the statement's next scan starts (the first link when none).
    pub fn start(&self, key: &str) -> PropositionId {
        let starts = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        starts.get(key).copied().unwrap_or(PropositionId(0))
    }

    /// Records where the statement's scan stopped (`None`: it went round).
    pub fn remember(&self, key: String, stopped_at: Option<PropositionId>) {
        let mut starts = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match stopped_at {
            Some(at) => {
                if starts.len() >= MAX_SWEEPS && !starts.contains_key(&key) {
                    starts.clear();
                }
                starts.insert(key, at);
            }
            None => {
                starts.remove(&key);
            }
        }
    }
}

/// Evaluates UPDATE's WHERE block as [`super::solve`] does, scanning it
/// as a sweep when it has the shape (see the module's doc): the executor,
/// the solution rows and what the scan did.
pub fn solve_sweep<'g, 't>(
    graph: &'g Graph<'t>,
    source: &str,
    where_: &Group,
    target: &str,
    start: PropositionId,
    cap: Option<usize>,
) -> Result<(Executor<'g, 't>, Vec<Row>, Sweep)> {
    let mut vars = Vars::default();
    let compiled = compile(graph, source, where_, &mut vars)?;
    let mut exec = Executor::new(graph, &vars);
    exec.sweep = Some(Sweep {
        target: exec.slots.get(target).copied(),
        start,
        cap,
        ran: false,
        stopped_at: None,
    });
    let rows = exec.eval(&compiled, vec![exec.empty_row()])?;
    let sweep = exec
        .sweep
        .take()
        .unwrap_or_else(|| unreachable!("set above"));
    // As `solve`: rows that differ only in hidden slots are one solution.
    let visible = vars.visible();
    let mut seen = HashSet::with_capacity(rows.len());
    let rows = rows
        .into_iter()
        .filter(|r| seen.insert(visible.iter().map(|&s| r[s]).collect::<Vec<_>>()))
        .collect();
    Ok((exec, rows, sweep))
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
        let Some(sweep) = self.sweep else {
            return Ok(None);
        };
        let ([(atom, _)], [input]) = (group.atoms.as_slice(), rows) else {
            return Ok(None);
        };
        let Atom::Prop {
            var: Some(var),
            s,
            pred,
            o,
            ..
        } = atom
        else {
            return Ok(None);
        };
        let (var, s, o) = (*var, *s, *o);
        let p = match pred {
            PredTest::Var(p) => Some(*p),
            PredTest::Names(_) => None,
            PredTest::Path { .. } => return Ok(None),
        };
        let slots: Vec<Slot> = [var, s, o].into_iter().chain(p).collect();
        if sweep.target != Some(var)
            || !group.nots.is_empty()
            || !group.optionals.is_empty()
            || !group.unions.is_empty()
            || slots.iter().any(|&x| input[x] != Val::Null)
            || pending
                .iter()
                .any(|&f| group.filters[f].1.iter().any(|x| !slots.contains(x)))
        {
            return Ok(None);
        }
        let filters = std::mem::take(pending);
        let graph = self.graph;
        let mut out = Vec::new();
        let mut stopped_at = None;
        // From the start to the last link, then from the first link up to
        // the start: each link once.
        let laps = [(sweep.start, None), (PropositionId(0), Some(sweep.start))];
        'laps: for (from, until) in laps {
            if until == Some(PropositionId(0)) {
                break;
            }
            for link in graph.store.raw_propositions_from(graph.txn, from).kip()? {
                let link = link.kip()?;
                if until.is_some_and(|u| link.id >= u) {
                    break;
                }
                if sweep.cap.is_some_and(|cap| out.len() >= cap) {
                    stopped_at = Some(link.id);
                    break 'laps;
                }
                self.charge(1)?;
                if let PredTest::Names(names) = pred
                    && !names.contains(&link.triple.predicate)
                {
                    continue;
                }
                let mut row = input.clone();
                let bound = set(&mut row, var, Val::Prop(link.id))
                    && set(&mut row, s, Val::of(link.triple.subject))
                    && set(&mut row, o, Val::of(link.triple.object))
                    && p.is_none_or(|p| set(&mut row, p, Val::Pred(link.triple.predicate)));
                if !bound {
                    continue;
                }
                graph.set_scanned(&link);
                let mut keep = true;
                for &f in &filters {
                    self.charge(1)?;
                    if !self.holds(&group.filters[f].0, &row)? {
                        keep = false;
                        break;
                    }
                }
                if keep {
                    out.push(row);
                    if out.len() > ROW_BUDGET {
                        graph.clear_scanned();
                        return Err(rows_exceeded());
                    }
                }
            }
        }
        graph.clear_scanned();
        self.sweep = Some(Sweep {
            ran: true,
            stopped_at,
            ..sweep
        });
        Ok(Some(out))
    }
}

//! The executor: evaluates a compiled group into solution rows. A *row*
//! holds one [`Val`] per variable slot (`Val::Null` = unbound).
//!
//! Evaluation of a group: the concept and proposition atoms are joined in
//! the order the planner picks (cheapest estimate first, given which slots
//! are already bound — written order never matters); each FILTER runs as
//! soon as all its variables are bound; then NOT (anti-join, evaluated per
//! row with its bindings), OPTIONAL (left join, per row), the FILTERs that
//! read OPTIONAL variables, and finally each UNION branch, evaluated from an
//! empty row in its own scope, adds its rows. Work is metered: a runaway
//! query ends with `KIP_4001` (work budget) or `KIP_4002` (too many rows).
//!
//! With `explain`, the top-level block records a [`Step`](crate::explain::Step) per evaluation
//! step in a [`Trace`]; why an empty result is empty is worked out in
//! [`crate::explain`], not here.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

use kip_lang::ast::*;
use kip_lang::{ErrorCode, KipError};
use kip_store::ConceptId;
use serde_json::json;

use crate::explain::Explain;
use crate::filter::{self, RegexCache};
use crate::graph::{Graph, Result};

use super::compile::{Atom, CompiledGroup, ConceptTest, IndexUse, PredTest, Slot, Vars, compile};
use super::plan;
use super::read::path_value;
use super::row::{Row, Val, set};
use super::trace::{Failed, Trace, atom_kind, input_copy};

/// Index entries or edges a single command may touch before `KIP_4001`.
pub const WORK_BUDGET: u64 = 50_000_000;
/// Intermediate rows a single command may hold before `KIP_4002`.
pub const ROW_BUDGET: usize = 1_000_000;

/// Nodes the path walks (`path.rs`) expanded and the longest walk they
/// found, kept by the executor for `explain`.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Walk {
    pub(super) nodes_visited: u64,
    pub(super) depth_reached: u32,
}

/// Executes compiled groups over a graph with a work meter.
#[allow(missing_debug_implementations)] // holds a transaction
pub struct Executor<'g, 't> {
    pub graph: &'g Graph<'t>,
    pub width: usize,
    /// Read for every path a FILTER resolves: hashed with foldhash, not SipHash.
    pub(super) slots: HashMap<String, Slot, foldhash::fast::RandomState>,
    work: u64,
    regexes: RegexCache,
    /// Set for `explain`: the steps of the top-level block.
    pub trace: Option<Trace>,
    /// How deep in NOT / OPTIONAL / UNION the evaluation is (only depth 0 is traced).
    depth: usize,
    /// What path steps walked since the last reset, for `explain`.
    pub(super) walk: Walk,
    /// Rows the caller needs at most (LIMIT without ORDER BY or aggregates,
    /// plus one to know whether a next page exists): a lone type clause
    /// stops its scan once it has them.
    pub(super) row_cap: Option<usize>,
    /// Whether type clauses may read the attribute index (not in the
    /// probes of `explain`, which ask what a clause matches on its own).
    pub(super) use_index: bool,
    /// Set when an `explain` run read a type's instances instead of an
    /// index lookup that found nothing, so the FILTER step shows why.
    pub(super) index_fell_back: bool,
    /// Set by UPDATE: scan a lone link pattern as a sweep ([`super::sweep`]).
    pub(super) sweep: Option<super::cycle::Sweep>,
}

fn budget_exceeded() -> KipError {
    KipError::new(
        ErrorCode::ExecutionTimeout,
        format!("the query exceeded its work budget of {WORK_BUDGET} index steps"),
    )
}

pub(super) fn rows_exceeded() -> KipError {
    KipError::new(
        ErrorCode::ResourceExhausted,
        format!("the query produced more than {ROW_BUDGET} intermediate rows"),
    )
}

impl<'g, 't> Executor<'g, 't> {
    pub fn new(graph: &'g Graph<'t>, vars: &Vars) -> Executor<'g, 't> {
        let slots = vars
            .names
            .iter()
            .enumerate()
            .filter_map(|(i, n)| Some((n.clone()?, i)))
            .collect();
        Executor {
            graph,
            width: vars.len(),
            slots,
            work: 0,
            regexes: RegexCache::default(),
            trace: None,
            depth: 0,
            walk: Walk::default(),
            row_cap: None,
            use_index: true,
            index_fell_back: false,
            sweep: None,
        }
    }

    pub(super) fn charge(&mut self, n: u64) -> Result<()> {
        self.work += n;
        if self.work > WORK_BUDGET {
            return Err(budget_exceeded());
        }
        Ok(())
    }

    pub fn empty_row(&self) -> Row {
        vec![Val::Null; self.width]
    }

    /// Evaluates a group on each input row (its outer bindings).
    pub fn eval(&mut self, group: &CompiledGroup, input: Vec<Row>) -> Result<Vec<Row>> {
        let tracing = self.trace.is_some() && self.depth == 0;
        self.depth += 1;
        let result = self.eval_inner(group, input, tracing);
        self.depth -= 1;
        result
    }

    fn eval_inner(
        &mut self,
        group: &CompiledGroup,
        input: Vec<Row>,
        tracing: bool,
    ) -> Result<Vec<Row>> {
        let mut rows = input;
        let has_main = !group.atoms.is_empty() || !group.optionals.is_empty();
        if !has_main
            && !group.unions.is_empty()
            && rows.iter().all(|r| r.iter().all(|v| *v == Val::Null))
        {
            // A block holding only UNION branches has no rows of its own.
            rows.clear();
        }
        let mut pending: Vec<usize> = (0..group.filters.len()).collect();
        rows = self.join_atoms(group, rows, &mut pending, tracing)?;
        for not in &group.nots {
            rows = self.anti_join(not, rows, tracing)?;
        }
        for optional in &group.optionals {
            rows = self.left_join(optional, rows, tracing)?;
        }
        // FILTERs over variables that only OPTIONAL (or nothing) binds run last.
        let all: BTreeSet<Slot> = (0..self.width).collect();
        self.apply_ready_filters(group, &mut pending, &all, &mut rows, tracing)?;
        for union in &group.unions {
            self.add_union(union, &mut rows, tracing)?;
        }
        Ok(rows)
    }

    /// Joins the group's atoms in the order the planner picks, running each
    /// FILTER of `pending` as soon as its variables are bound (those still
    /// waiting stay in `pending`).
    fn join_atoms(
        &mut self,
        group: &CompiledGroup,
        mut rows: Vec<Row>,
        pending: &mut Vec<usize>,
        tracing: bool,
    ) -> Result<Vec<Row>> {
        let mut bound: BTreeSet<Slot> = (0..self.width)
            .filter(|&s| !rows.is_empty() && rows.iter().all(|r| r[s] != Val::Null))
            .collect();
        let mut remaining: Vec<usize> = (0..group.atoms.len()).collect();
        self.apply_ready_filters(group, pending, &bound, &mut rows, tracing)?;
        if !tracing
            && self.depth == 1
            && let Some(out) = self.capped_scan(group, &rows, pending, self.row_cap)?
        {
            return Ok(out);
        }
        if !tracing
            && self.depth == 1
            && let Some(out) = self.sweep_scan(group, &rows, pending)?
        {
            return Ok(out);
        }
        while !remaining.is_empty() {
            let (pick, cost) = if remaining.len() == 1 && !tracing {
                (0, 0.0) // nothing to choose, and the cost is only shown
            } else {
                plan::cheapest(self.graph, group, &remaining, &bound, rows.len())?
            };
            let atom_index = remaining.remove(pick);
            let (atom, span) = &group.atoms[atom_index];
            let rows_in = rows.len();
            let started = Instant::now();
            let index = tracing.then(|| plan::index_name(atom, &bound));
            let input_copy = input_copy(tracing, &rows);
            self.walk = Walk::default();
            rows = self.apply(atom, rows)?;
            if rows.len() > ROW_BUDGET {
                return Err(rows_exceeded());
            }
            if tracing {
                let kind = atom_kind(atom);
                let mut step = self.step(kind, *span, rows_in, &rows, started);
                if kind == "path" {
                    step.detail
                        .insert("nodes_visited".into(), json!(self.walk.nodes_visited));
                    step.detail
                        .insert("depth_reached".into(), json!(self.walk.depth_reached));
                }
                step.index = if std::mem::take(&mut self.index_fell_back) {
                    Some("type index (the attribute index found no match)".to_owned())
                } else {
                    index
                };
                step.estimated_rows = Some((cost * 10.0).round() / 10.0);
                self.record(step, input_copy, Failed::Atom(atom_index));
            }
            bound.extend(atom.slots());
            self.apply_ready_filters(group, pending, &bound, &mut rows, tracing)?;
        }
        Ok(rows)
    }

    /// NOT: keeps the rows for which the block, evaluated with the row's
    /// bindings, finds nothing.
    fn anti_join(
        &mut self,
        not: &CompiledGroup,
        rows: Vec<Row>,
        tracing: bool,
    ) -> Result<Vec<Row>> {
        let rows_in = rows.len();
        let started = Instant::now();
        let input_copy = input_copy(tracing, &rows);
        let mut kept = Vec::with_capacity(rows.len());
        for row in rows {
            if self.eval(not, vec![row.clone()])?.is_empty() {
                kept.push(row);
            }
        }
        if tracing {
            self.trace_not(not, rows_in, &kept, started, input_copy);
        }
        Ok(kept)
    }

    // The steps of blocks are recorded by functions of their own, so that
    // the frames of `eval`, `anti_join`, `left_join` and `add_union` — one
    // set per level of nested blocks, up to `kip_lang::MAX_DEPTH` — do not
    // hold a `Step` each.
    #[inline(never)]
    fn trace_not(
        &mut self,
        not: &CompiledGroup,
        rows_in: usize,
        kept: &[Row],
        started: Instant,
        input_copy: Option<Vec<Row>>,
    ) {
        let mut step = self.step("not", not.span, rows_in, kept, started);
        step.detail
            .insert("rows_removed".into(), json!(rows_in - kept.len()));
        self.record(step, input_copy, Failed::Not);
    }

    /// OPTIONAL: each row extended by the block's rows, or kept as it is
    /// when the block finds nothing for it.
    fn left_join(
        &mut self,
        optional: &CompiledGroup,
        rows: Vec<Row>,
        tracing: bool,
    ) -> Result<Vec<Row>> {
        let rows_in = rows.len();
        let started = Instant::now();
        let (mut extended_rows, mut padded) = (0, 0);
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let extended = self.eval(optional, vec![row.clone()])?;
            if extended.is_empty() {
                padded += 1;
                out.push(row);
            } else {
                extended_rows += 1;
                out.extend(extended);
            }
            if out.len() > ROW_BUDGET {
                return Err(rows_exceeded());
            }
        }
        if tracing {
            self.trace_optional(optional, rows_in, &out, started, (extended_rows, padded));
        }
        Ok(out)
    }

    #[inline(never)]
    fn trace_optional(
        &mut self,
        optional: &CompiledGroup,
        rows_in: usize,
        out: &[Row],
        started: Instant,
        (extended_rows, padded): (usize, usize),
    ) {
        let mut step = self.step("optional", optional.span, rows_in, out, started);
        step.detail
            .insert("rows_extended".into(), json!(extended_rows));
        step.detail.insert("rows_padded".into(), json!(padded));
        self.record(step, None, Failed::Other);
    }

    /// UNION: adds the rows of a branch evaluated from an empty row, in its
    /// own scope.
    fn add_union(
        &mut self,
        union: &CompiledGroup,
        rows: &mut Vec<Row>,
        tracing: bool,
    ) -> Result<()> {
        let rows_in = rows.len();
        let started = Instant::now();
        let branch = self.eval(union, vec![self.empty_row()])?;
        let added = branch.len();
        rows.extend(branch);
        if rows.len() > ROW_BUDGET {
            return Err(rows_exceeded());
        }
        if tracing {
            self.trace_union(union, rows_in, rows, started, added);
        }
        Ok(())
    }

    #[inline(never)]
    fn trace_union(
        &mut self,
        union: &CompiledGroup,
        rows_in: usize,
        rows: &[Row],
        started: Instant,
        added: usize,
    ) {
        let mut step = self.step("union", union.span, rows_in, rows, started);
        step.detail.insert("branch_rows".into(), json!(added));
        self.record(step, None, Failed::Other);
    }

    fn apply_ready_filters(
        &mut self,
        group: &CompiledGroup,
        pending: &mut Vec<usize>,
        bound: &BTreeSet<Slot>,
        rows: &mut Vec<Row>,
        tracing: bool,
    ) -> Result<()> {
        let mut i = 0;
        while i < pending.len() {
            let filter_index = pending[i];
            let (expr, slots, span) = &group.filters[filter_index];
            if slots.iter().all(|s| bound.contains(s)) {
                let rows_in = rows.len();
                let started = Instant::now();
                let input_copy = input_copy(tracing, rows);
                let mut kept = Vec::with_capacity(rows.len());
                for row in rows.drain(..) {
                    self.charge(1)?;
                    if self.holds(expr, &row)? {
                        kept.push(row);
                    }
                }
                *rows = kept;
                pending.remove(i);
                if tracing {
                    let step = self.step("filter", *span, rows_in, rows, started);
                    self.record(step, input_copy, Failed::Filter(filter_index));
                }
            } else {
                i += 1;
            }
        }
        Ok(())
    }

    /// An executor over the same variables with a fresh work meter, for probes.
    pub(crate) fn probe(&self) -> Executor<'g, 't> {
        Executor {
            graph: self.graph,
            width: self.width,
            slots: self.slots.clone(),
            work: 0,
            regexes: RegexCache::default(),
            trace: None,
            depth: 1,
            walk: Walk::default(),
            row_cap: None,
            use_index: false,
            index_fell_back: false,
            sweep: None,
        }
    }

    /// The value bound to a path's variable in `row`.
    pub fn val(&self, row: &Row, var: &str) -> Val {
        self.slots.get(var).map_or(Val::Null, |&s| row[s])
    }

    pub(super) fn holds(&mut self, expr: &Expr, row: &Row) -> Result<bool> {
        let graph = self.graph;
        let slots = &self.slots;
        let mut resolve = |path: &DotPath| {
            let val = slots.get(&path.var.name).map_or(Val::Null, |&s| row[s]);
            path_value(graph, path, val)
        };
        filter::holds(expr, &mut resolve, &mut self.regexes)
    }

    pub(crate) fn apply(&mut self, atom: &Atom, rows: Vec<Row>) -> Result<Vec<Row>> {
        match atom {
            Atom::Concept {
                var, test, index, ..
            } => self.apply_concept(*var, test, index.as_deref(), rows),
            Atom::PropId { var, id } => {
                let mut out = Vec::new();
                for mut row in rows {
                    self.charge(1)?;
                    let Some(id) = id else { continue };
                    if self.graph.proposition(*id)?.is_some() && set(&mut row, *var, Val::Prop(*id))
                    {
                        out.push(row);
                    }
                }
                Ok(out)
            }
            Atom::Prop {
                var, s, pred, o, ..
            } => self.apply_prop(*var, *s, pred, *o, rows),
        }
    }

    fn concept_matches(&self, test: &ConceptTest, c: ConceptId) -> Result<bool> {
        Ok(match test {
            ConceptTest::One(id) => *id == Some(c),
            ConceptTest::Type(t) => self.graph.concept(c)?.is_some_and(|r| r.type_id == *t),
            ConceptTest::Name(n) => self.graph.concept(c)?.is_some_and(|r| r.name == *n),
        })
    }

    /// The concepts a concept test matches, read once per atom.
    fn concept_candidates(
        &mut self,
        test: &ConceptTest,
        index: Option<&IndexUse>,
    ) -> Result<Vec<ConceptId>> {
        let list = match test {
            ConceptTest::One(id) => match id {
                Some(c) if self.graph.concept(*c)?.is_some() => vec![*c],
                _ => Vec::new(),
            },
            ConceptTest::Type(t) => match index {
                Some(ix) if self.use_index => {
                    let ids = ix.all(self.graph, *t)?;
                    if ids.is_empty() && self.trace.is_some() {
                        self.index_fell_back = true;
                        self.graph.concepts_of_type(*t)?
                    } else {
                        ids
                    }
                }
                _ => self.graph.concepts_of_type(*t)?,
            },
            ConceptTest::Name(n) => self.graph.concepts_named(n)?,
        };
        self.charge(list.len() as u64 + 1)?;
        Ok(list)
    }

    fn apply_concept(
        &mut self,
        var: Slot,
        test: &ConceptTest,
        index: Option<&IndexUse>,
        rows: Vec<Row>,
    ) -> Result<Vec<Row>> {
        let mut candidates: Option<Vec<ConceptId>> = None;
        let mut out = Vec::new();
        for row in rows {
            match row[var] {
                Val::Null => {
                    if candidates.is_none() {
                        candidates = Some(self.concept_candidates(test, index)?);
                    }
                    for &c in candidates.iter().flatten() {
                        self.charge(1)?;
                        let mut r = row.clone();
                        r[var] = Val::Concept(c);
                        out.push(r);
                        if out.len() > ROW_BUDGET {
                            return Err(rows_exceeded());
                        }
                    }
                }
                Val::Concept(c) => {
                    self.charge(1)?;
                    if self.concept_matches(test, c)? {
                        out.push(row);
                    }
                }
                Val::Prop(_) | Val::Pred(_) => {}
            }
        }
        Ok(out)
    }

    fn apply_prop(
        &mut self,
        var: Option<Slot>,
        s: Slot,
        pred: &PredTest,
        o: Slot,
        rows: Vec<Row>,
    ) -> Result<Vec<Row>> {
        let mut out = Vec::new();
        for row in rows {
            if let PredTest::Path {
                preds, min, max, ..
            } = pred
            {
                self.apply_path(&row, s, preds, *min, *max, o, &mut out)?;
                continue;
            }
            // A bound link variable: check the one link.
            if let Some(v) = var
                && let Val::Prop(pid) = row[v]
            {
                self.charge(1)?;
                if let Some(rec) = self.graph.proposition(pid)? {
                    let mut r = row.clone();
                    let pred_ok = match pred {
                        PredTest::Names(ps) => ps.contains(&rec.predicate),
                        PredTest::Var(p) => set(&mut r, *p, Val::Pred(rec.predicate)),
                        PredTest::Path { .. } => false,
                    };
                    if pred_ok
                        && set(&mut r, s, Val::of(rec.subject))
                        && set(&mut r, o, Val::of(rec.object))
                    {
                        out.push(r);
                    }
                }
                continue;
            }
            if var.is_some_and(|v| row[v] != Val::Null) {
                continue; // bound to something that is not a proposition
            }
            let subject = match row[s] {
                Val::Null => None,
                v => match v.element() {
                    Some(e) => Some(e),
                    None => continue,
                },
            };
            let object = match row[o] {
                Val::Null => None,
                v => match v.element() {
                    Some(e) => Some(e),
                    None => continue,
                },
            };
            let preds: Vec<Option<u32>> = match pred {
                PredTest::Names(ps) => ps.iter().map(|p| Some(*p)).collect(),
                PredTest::Var(p) => match row[*p] {
                    Val::Null => vec![None],
                    Val::Pred(id) => vec![Some(id)],
                    _ => continue,
                },
                PredTest::Path { .. } => continue,
            };
            for p in preds {
                let matches = self.graph.propositions(subject, p, object)?;
                self.charge(matches.len() as u64 + 1)?;
                for (pid, ms, mp, mo) in matches {
                    let mut r = row.clone();
                    let ok = set(&mut r, s, Val::of(ms))
                        && set(&mut r, o, Val::of(mo))
                        && var.is_none_or(|v| set(&mut r, v, Val::Prop(pid)))
                        && match pred {
                            PredTest::Var(pv) => set(&mut r, *pv, Val::Pred(mp)),
                            _ => true,
                        };
                    if ok {
                        out.push(r);
                    }
                    if out.len() > ROW_BUDGET {
                        return Err(rows_exceeded());
                    }
                }
            }
        }
        Ok(out)
    }
}

/// Evaluates a WHERE block from scratch: the executor (for reading the rows)
/// and the solution rows, de-duplicated on the visible variables.
pub fn solve<'g, 't>(
    graph: &'g Graph<'t>,
    source: &str,
    where_: &Group,
) -> Result<(Executor<'g, 't>, Vec<Row>)> {
    let (exec, rows, _) = solve_explained(graph, source, where_, false, None)?;
    Ok((exec, rows))
}

/// [`solve`], also returning the `explain` profile when asked.
pub fn solve_explained<'g, 't>(
    graph: &'g Graph<'t>,
    source: &str,
    where_: &Group,
    explain: bool,
    row_cap: Option<usize>,
) -> Result<(Executor<'g, 't>, Vec<Row>, Option<Explain>)> {
    let mut vars = Vars::default();
    let compiled = compile(graph, source, where_, &mut vars)?;
    let mut exec = Executor::new(graph, &vars);
    exec.row_cap = row_cap;
    if explain {
        exec.trace = Some(Trace {
            source: source.to_owned(),
            ..Trace::default()
        });
    }
    let start = exec.empty_row();
    let rows = exec.eval(&compiled, vec![start])?;
    let explained = if explain {
        let why_empty = if rows.is_empty() {
            exec.diagnose(&compiled)?
        } else {
            Vec::new()
        };
        let plan = exec
            .trace
            .as_mut()
            .map(|t| std::mem::take(&mut t.steps))
            .unwrap_or_default();
        Some(Explain {
            plan,
            rows: rows.len(),
            why_empty,
            pattern: Some(crate::pattern::outline(source, where_)),
        })
    } else {
        None
    };
    Ok((exec, distinct_solutions(rows, &vars), explained))
}

/// Rows that differ only in hidden slots (inline patterns) are the same
/// solution: collapsed, keeping first-seen order.
pub(super) fn distinct_solutions(rows: Vec<Row>, vars: &Vars) -> Vec<Row> {
    let visible = vars.visible();
    let mut seen = HashSet::with_capacity(rows.len());
    rows.into_iter()
        .filter(|r| seen.insert(visible.iter().map(|&s| r[s]).collect::<Vec<_>>()))
        .collect()
}

//! KQL: compiling a WHERE block, planning it by selectivity, and executing
//! it into solution rows; then FIND's grouping, ordering, paging and the
//! columnar result.
//!
//! A *row* holds one [`Val`] per variable slot (`Val::Null` = unbound).
//! Inline `{…}` concepts and nested `(…)` propositions become hidden slots
//! with their own atoms, so every proposition atom joins three slots.
//!
//! Evaluation of a group: the concept and proposition atoms are joined in
//! the order the planner picks (cheapest estimate first, given which slots
//! are already bound — written order never matters); each FILTER runs as
//! soon as all its variables are bound; then NOT (anti-join, evaluated per
//! row with its bindings), OPTIONAL (left join, per row), the FILTERs that
//! read OPTIONAL variables, and finally each UNION branch, evaluated from an
//! empty row in its own scope, adds its rows. Work is metered: a runaway
//! query ends with `KIP_4001` (work budget) or `KIP_4002` (too many rows).

use std::collections::{BTreeSet, HashMap, HashSet};

use kip_lang::ast::*;
use kip_lang::{ErrorCode, KipError};
use kip_store::{ConceptId, ElementId, PropositionId};
use serde_json::{Value as Json, json};

use crate::explain::{self, Cause, Explain, Fix, Range, Step};
use crate::filter::{self, RegexCache};
use crate::graph::{Graph, Result};
use crate::{cursor, value};

/// Index entries or edges a single command may touch before `KIP_4001`.
pub const WORK_BUDGET: u64 = 50_000_000;
/// Intermediate rows a single command may hold before `KIP_4002`.
pub const ROW_BUDGET: usize = 1_000_000;
/// Rows a FIND returns without LIMIT.
pub const DEFAULT_PAGE: u64 = 1_000;

/// The value bound to a variable in a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Val {
    Null,
    Concept(ConceptId),
    Prop(PropositionId),
    /// A predicate, bound by a predicate variable `(?s, ?p, ?o)`.
    Pred(u32),
}

impl Val {
    fn element(self) -> Option<ElementId> {
        match self {
            Val::Concept(c) => Some(ElementId::Concept(c)),
            Val::Prop(p) => Some(ElementId::Proposition(p)),
            Val::Null | Val::Pred(_) => None,
        }
    }

    fn of(e: ElementId) -> Val {
        match e {
            ElementId::Concept(c) => Val::Concept(c),
            ElementId::Proposition(p) => Val::Prop(p),
        }
    }
}

pub type Row = Vec<Val>;
pub type Slot = usize;

/// Variable names and their slots; hidden slots have no name.
#[derive(Debug, Default)]
pub struct Vars {
    names: Vec<Option<String>>,
}

impl Vars {
    pub fn slot(&mut self, name: &str) -> Slot {
        if let Some(i) = self.names.iter().position(|n| n.as_deref() == Some(name)) {
            return i;
        }
        self.names.push(Some(name.to_owned()));
        self.names.len() - 1
    }

    fn hidden(&mut self) -> Slot {
        self.names.push(None);
        self.names.len() - 1
    }

    pub fn get(&self, name: &str) -> Option<Slot> {
        self.names.iter().position(|n| n.as_deref() == Some(name))
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    fn visible(&self) -> Vec<Slot> {
        (0..self.names.len())
            .filter(|&i| self.names[i].is_some())
            .collect()
    }
}

/// A concept test with names already resolved against the store.
#[derive(Debug)]
enum ConceptTest {
    /// `{id}` or `{type, name}`: one concept, or none if it does not exist.
    One(Option<ConceptId>),
    Type(u32),
    Name(String),
}

#[derive(Debug)]
enum PredTest {
    Var(Slot),
    Names(Vec<u32>),
    Path {
        preds: Vec<u32>,
        min: u32,
        max: Option<u32>,
        /// Where the hop range is written.
        hops: Span,
    },
}

#[derive(Debug)]
enum Atom {
    Concept {
        var: Slot,
        test: ConceptTest,
        /// The pattern as written, for `explain`.
        matcher: ConceptMatcher,
    },
    PropId {
        var: Slot,
        id: Option<PropositionId>,
    },
    Prop {
        var: Option<Slot>,
        s: Slot,
        pred: PredTest,
        o: Slot,
        /// Where the subject and object are written (for suggested edits).
        ends: (Span, Span),
    },
}

impl Atom {
    fn slots(&self) -> Vec<Slot> {
        match self {
            Atom::Concept { var, .. } | Atom::PropId { var, .. } => vec![*var],
            Atom::Prop {
                var, s, pred, o, ..
            } => {
                let mut v = vec![*s, *o];
                v.extend(var.iter().copied());
                if let PredTest::Var(p) = pred {
                    v.push(*p);
                }
                v
            }
        }
    }
}

/// A compiled WHERE block.
#[derive(Debug, Default)]
pub struct CompiledGroup {
    /// Each atom with the source range of the clause (or inline term) it
    /// comes from.
    atoms: Vec<(Atom, Span)>,
    filters: Vec<(Expr, Vec<Slot>, Span)>,
    nots: Vec<CompiledGroup>,
    optionals: Vec<CompiledGroup>,
    unions: Vec<CompiledGroup>,
    span: Span,
}

/// Compiles a group, resolving type and predicate names (`KIP_2001` for an
/// undefined one, with suggestions).
pub fn compile(
    graph: &Graph<'_>,
    source: &str,
    group: &Group,
    vars: &mut Vars,
) -> Result<CompiledGroup> {
    let mut compiler = Compiler {
        graph,
        source,
        vars,
    };
    compiler.group(group)
}

struct Compiler<'g, 't, 'v> {
    graph: &'g Graph<'t>,
    source: &'g str,
    vars: &'v mut Vars,
}

impl Compiler<'_, '_, '_> {
    fn group(&mut self, group: &Group) -> Result<CompiledGroup> {
        let mut out = CompiledGroup {
            span: group.span,
            ..CompiledGroup::default()
        };
        for item in &group.items {
            match item {
                Pattern::Concept(c) => {
                    let var = match &c.var {
                        Some(v) => self.vars.slot(&v.name),
                        None => self.vars.hidden(),
                    };
                    let test = self.concept_test(&c.matcher)?;
                    let matcher = c.matcher.clone();
                    out.atoms
                        .push((Atom::Concept { var, test, matcher }, c.span));
                }
                Pattern::Proposition(p) => {
                    let var = p.var.as_ref().map(|v| self.vars.slot(&v.name));
                    self.proposition(&p.matcher, var, p.span, &mut out.atoms)?;
                }
                Pattern::Filter(f) => {
                    let mut refs = Vec::new();
                    kip_lang::expr_vars(&f.expr, &mut refs);
                    let slots = refs.iter().map(|v| self.vars.slot(&v.name)).collect();
                    out.filters.push((f.expr.clone(), slots, f.span));
                }
                Pattern::Not(g) => out.nots.push(self.group(g)?),
                Pattern::Optional(g) => out.optionals.push(self.group(g)?),
                Pattern::Union(g) => out.unions.push(self.group(g)?),
            }
        }
        Ok(out)
    }

    fn text<'a>(&self, arg: &'a Arg<String>) -> Result<&'a str> {
        arg.lit().map(String::as_str).ok_or_else(|| {
            KipError::new(ErrorCode::ReferenceError, "a placeholder was not bound")
                .at(self.source, arg.span())
        })
    }

    fn type_id(&self, arg: &Arg<String>) -> Result<u32> {
        let name = self.text(arg)?;
        if self.graph.is_type_defined(name)?
            && let Some(id) = self.graph.type_id(name)?
        {
            return Ok(id);
        }
        if self.graph.is_type_defined(name)? {
            // Defined but with no instance ever created: nothing matches.
            return Ok(u32::MAX);
        }
        Err(crate::schema::unknown_type(self.graph, name)?.at(self.source, arg.span()))
    }

    fn predicate_id(&self, arg: &Arg<String>) -> Result<u32> {
        let name = self.text(arg)?;
        if self.graph.is_predicate_defined(name)? {
            return Ok(self.graph.predicate_id(name)?.unwrap_or(u32::MAX));
        }
        Err(crate::schema::unknown_predicate(self.graph, name)?.at(self.source, arg.span()))
    }

    fn concept_test(&mut self, m: &ConceptMatcher) -> Result<ConceptTest> {
        Ok(match m {
            ConceptMatcher::Id(id) => {
                let text = self.text(id)?;
                ConceptTest::One(match text.parse::<ElementId>() {
                    Ok(ElementId::Concept(c)) => Some(c),
                    _ => None,
                })
            }
            ConceptMatcher::TypeName { ty, name } => {
                let t = self.type_id(ty)?;
                let name = self.text(name)?;
                ConceptTest::One(self.graph.find_concept(t, name)?)
            }
            ConceptMatcher::Type(ty) => ConceptTest::Type(self.type_id(ty)?),
            ConceptMatcher::Name(name) => ConceptTest::Name(self.text(name)?.to_owned()),
        })
    }

    fn term(&mut self, term: &Term, atoms: &mut Vec<(Atom, Span)>) -> Result<Slot> {
        Ok(match term {
            Term::Var(v) => self.vars.slot(&v.name),
            Term::Concept(m, span) => {
                let var = self.vars.hidden();
                let test = self.concept_test(m)?;
                atoms.push((
                    Atom::Concept {
                        var,
                        test,
                        matcher: m.clone(),
                    },
                    *span,
                ));
                var
            }
            Term::Proposition(m, span) => {
                let var = self.vars.hidden();
                self.proposition(m, Some(var), *span, atoms)?;
                var
            }
        })
    }

    fn proposition(
        &mut self,
        m: &PropositionMatcher,
        var: Option<Slot>,
        span: Span,
        atoms: &mut Vec<(Atom, Span)>,
    ) -> Result<()> {
        match m {
            PropositionMatcher::Id(id) => {
                let text = self.text(id)?;
                let id = match text.parse::<ElementId>() {
                    Ok(ElementId::Proposition(p)) => Some(p),
                    _ => None,
                };
                let var = var.unwrap_or_else(|| self.vars.hidden());
                atoms.push((Atom::PropId { var, id }, span));
            }
            PropositionMatcher::Triple(t) => {
                let s = self.term(&t.subject, atoms)?;
                let o = self.term(&t.object, atoms)?;
                let pred = match &t.predicate {
                    PredicateExpr::Var(v) => PredTest::Var(self.vars.slot(&v.name)),
                    PredicateExpr::Names { names, hops, .. } => {
                        let mut preds = Vec::new();
                        for n in names {
                            preds.push(self.predicate_id(n)?);
                        }
                        match hops {
                            Some(h) if !(h.min == 1 && h.max == Some(1)) => {
                                if var.is_some() {
                                    return Err(KipError::new(
                                        ErrorCode::InvalidSyntax,
                                        "a path pattern with a hop range cannot bind a proposition variable",
                                    )
                                    .with_hint("A path spans several links; remove the variable before the pattern, or use a single hop.")
                                    .at(self.source, span));
                                }
                                PredTest::Path {
                                    preds,
                                    min: h.min,
                                    max: h.max,
                                    hops: h.span,
                                }
                            }
                            _ => PredTest::Names(preds),
                        }
                    }
                };
                let ends = (t.subject.span(), t.object.span());
                atoms.push((
                    Atom::Prop {
                        var,
                        s,
                        pred,
                        o,
                        ends,
                    },
                    span,
                ));
            }
        }
        Ok(())
    }
}

/// Executes compiled groups over a graph with a work meter.
#[allow(missing_debug_implementations)] // holds a transaction
pub struct Executor<'g, 't> {
    pub graph: &'g Graph<'t>,
    pub width: usize,
    slots: HashMap<String, Slot>,
    work: u64,
    regexes: RegexCache,
    /// Set for `explain`: the steps of the top-level block.
    pub trace: Option<Trace>,
    /// How deep in NOT / OPTIONAL / UNION the evaluation is (only depth 0 is traced).
    depth: usize,
    /// What path steps walked since the last reset, for `explain`.
    walk: Walk,
}

/// Nodes a path walk expanded and the longest walk it found.
#[derive(Debug, Default, Clone, Copy)]
struct Walk {
    nodes_visited: u64,
    depth_reached: u32,
}

/// The profile being recorded for `explain`.
#[derive(Debug, Default)]
pub struct Trace {
    pub source: String,
    pub steps: Vec<Step>,
    /// The first step that turned rows into none: its index in `steps`,
    /// what it was, and (a bounded copy of) the rows it received.
    failed: Option<(usize, Failed, Vec<Row>)>,
}

#[derive(Debug, Clone, Copy)]
enum Failed {
    Atom(usize),
    Filter(usize),
    Not,
    Other,
}

fn atom_kind(atom: &Atom) -> &'static str {
    match atom {
        Atom::Concept { .. } => "concept",
        Atom::PropId { .. } => "proposition",
        Atom::Prop {
            pred: PredTest::Path { .. },
            ..
        } => "path",
        Atom::Prop { .. } => "proposition",
    }
}

/// The index a step reads, given which of its positions are already bound.
fn index_name(atom: &Atom, bound: &BTreeSet<Slot>) -> String {
    match atom {
        Atom::Concept { var, .. } if bound.contains(var) => "record lookup (check)".into(),
        Atom::Concept {
            test: ConceptTest::One(_),
            ..
        } => "unique (type, name) / id".into(),
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

fn budget_exceeded() -> KipError {
    KipError::new(
        ErrorCode::ExecutionTimeout,
        format!("the query exceeded its work budget of {WORK_BUDGET} index steps"),
    )
}

fn rows_exceeded() -> KipError {
    KipError::new(
        ErrorCode::ResourceExhausted,
        format!("the query produced more than {ROW_BUDGET} intermediate rows"),
    )
}

fn set(row: &mut Row, slot: Slot, val: Val) -> bool {
    match row[slot] {
        Val::Null => {
            row[slot] = val;
            true
        }
        existing => existing == val,
    }
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
        }
    }

    fn charge(&mut self, n: u64) -> Result<()> {
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
        let mut bound: BTreeSet<Slot> = (0..self.width)
            .filter(|&s| !rows.is_empty() && rows.iter().all(|r| r[s] != Val::Null))
            .collect();
        let mut pending: Vec<usize> = (0..group.filters.len()).collect();
        let mut remaining: Vec<usize> = (0..group.atoms.len()).collect();
        self.apply_ready_filters(group, &mut pending, &bound, &mut rows, tracing)?;
        while !remaining.is_empty() {
            let (pick, cost) = self.cheapest(group, &remaining, &bound, rows.len())?;
            let atom_index = remaining.remove(pick);
            let (atom, span) = &group.atoms[atom_index];
            let rows_in = rows.len();
            let started = std::time::Instant::now();
            let index = tracing.then(|| index_name(atom, &bound));
            let input_copy = (tracing && rows_in > 0)
                .then(|| rows.iter().take(200).cloned().collect::<Vec<_>>());
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
                step.index = index;
                step.estimated_rows = Some((cost * 10.0).round() / 10.0);
                self.record(step, input_copy, Failed::Atom(atom_index));
            }
            bound.extend(atom.slots());
            self.apply_ready_filters(group, &mut pending, &bound, &mut rows, tracing)?;
        }
        for not in &group.nots {
            let rows_in = rows.len();
            let started = std::time::Instant::now();
            let input_copy = (tracing && rows_in > 0)
                .then(|| rows.iter().take(200).cloned().collect::<Vec<_>>());
            let mut kept = Vec::with_capacity(rows.len());
            for row in rows {
                if self.eval(not, vec![row.clone()])?.is_empty() {
                    kept.push(row);
                }
            }
            rows = kept;
            if tracing {
                let mut step = self.step("not", not.span, rows_in, &rows, started);
                step.detail
                    .insert("rows_removed".into(), json!(rows_in - rows.len()));
                self.record(step, input_copy, Failed::Not);
            }
        }
        for optional in &group.optionals {
            let rows_in = rows.len();
            let started = std::time::Instant::now();
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
            rows = out;
            if tracing {
                let mut step = self.step("optional", optional.span, rows_in, &rows, started);
                step.detail
                    .insert("rows_extended".into(), json!(extended_rows));
                step.detail.insert("rows_padded".into(), json!(padded));
                self.record(step, None, Failed::Other);
            }
        }
        // FILTERs over variables that only OPTIONAL (or nothing) binds run last.
        let all: BTreeSet<Slot> = (0..self.width).collect();
        self.apply_ready_filters(group, &mut pending, &all, &mut rows, tracing)?;
        for union in &group.unions {
            let rows_in = rows.len();
            let started = std::time::Instant::now();
            let branch = self.eval(union, vec![self.empty_row()])?;
            let added = branch.len();
            rows.extend(branch);
            if rows.len() > ROW_BUDGET {
                return Err(rows_exceeded());
            }
            if tracing {
                let mut step = self.step("union", union.span, rows_in, &rows, started);
                step.detail.insert("branch_rows".into(), json!(added));
                self.record(step, None, Failed::Other);
            }
        }
        Ok(rows)
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
                let started = std::time::Instant::now();
                let input_copy = (tracing && rows_in > 0)
                    .then(|| rows.iter().take(200).cloned().collect::<Vec<_>>());
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

    fn step(
        &self,
        kind: &'static str,
        span: Span,
        rows_in: usize,
        rows: &[Row],
        started: std::time::Instant,
    ) -> Step {
        let source = self.trace.as_ref().map_or("", |t| t.source.as_str());
        let sample = rows
            .iter()
            .take(explain::SAMPLE)
            .map(|r| self.sample_row(r))
            .collect();
        Step {
            order: self.trace.as_ref().map_or(0, |t| t.steps.len()) + 1,
            kind,
            clause: Range::of(source, span),
            text: source
                .get(span.start..span.end)
                .unwrap_or_default()
                .to_owned(),
            index: None,
            estimated_rows: None,
            rows_in,
            rows_out: rows.len(),
            time_ms: (started.elapsed().as_secs_f64() * 1e6).round() / 1e3,
            detail: serde_json::Map::new(),
            sample,
        }
    }

    fn record(&mut self, step: Step, input: Option<Vec<Row>>, what: Failed) {
        if let Some(trace) = &mut self.trace {
            if trace.failed.is_none() && step.rows_in > 0 && step.rows_out == 0 {
                trace.failed = Some((trace.steps.len(), what, input.unwrap_or_default()));
            }
            trace.steps.push(step);
        }
    }

    /// A row as `{variable: short value}` for samples.
    fn sample_row(&self, row: &Row) -> serde_json::Map<String, Json> {
        let mut out = serde_json::Map::new();
        let mut names: Vec<(&String, &Slot)> = self.slots.iter().collect();
        names.sort_by_key(|(_, s)| **s);
        for (name, &slot) in names {
            let v = match row[slot] {
                Val::Null => continue,
                Val::Concept(c) => match self.graph.concept(c).ok().flatten() {
                    Some(r) => json!({
                        "id": ElementId::Concept(c).to_string(),
                        "type": self.graph.type_name(r.type_id).map(|t| t.to_string()).unwrap_or_default(),
                        "name": r.name,
                    }),
                    None => json!(ElementId::Concept(c).to_string()),
                },
                Val::Prop(p) => match self.graph.proposition(p).ok().flatten() {
                    Some(r) => json!({
                        "id": ElementId::Proposition(p).to_string(),
                        "predicate": self.graph.predicate_name(r.predicate).map(|t| t.to_string()).unwrap_or_default(),
                    }),
                    None => json!(ElementId::Proposition(p).to_string()),
                },
                Val::Pred(p) => json!(
                    self.graph
                        .predicate_name(p)
                        .map(|t| t.to_string())
                        .unwrap_or_default()
                ),
            };
            out.insert(name.clone(), v);
        }
        out
    }

    /// An executor over the same variables with a fresh work meter, for probes.
    fn probe(&self) -> Executor<'g, 't> {
        Executor {
            graph: self.graph,
            width: self.width,
            slots: self.slots.clone(),
            work: 0,
            regexes: RegexCache::default(),
            trace: None,
            depth: 1,
            walk: Walk::default(),
        }
    }

    /// Why the top-level block produced no rows: the clauses that match
    /// nothing on their own, or else the first step that emptied the rows.
    pub fn diagnose(&mut self, group: &CompiledGroup) -> Result<Vec<Cause>> {
        let source = self
            .trace
            .as_ref()
            .map(|t| t.source.clone())
            .unwrap_or_default();
        let mut causes = Vec::new();
        for (atom, span) in &group.atoms {
            let mut probe = self.probe();
            let alone = probe.apply(atom, vec![probe.empty_row()])?;
            if alone.is_empty() {
                causes.push(self.empty_alone(atom, *span, &source)?);
            }
        }
        if !causes.is_empty() {
            return Ok(causes);
        }
        let Some((step, what, input)) = self.trace.as_mut().and_then(|t| t.failed.take()) else {
            return Ok(causes);
        };
        let text = |span: Span| {
            source
                .get(span.start..span.end)
                .unwrap_or_default()
                .to_owned()
        };
        match what {
            Failed::Atom(i) => {
                let (atom, span) = &group.atoms[i];
                causes.push(self.join_failed(atom, *span, &input, &source)?);
            }
            Failed::Filter(i) => {
                let (expr, _, span) = &group.filters[i];
                let mut refs = Vec::new();
                kip_lang::expr_vars(expr, &mut refs);
                let mut paths = Vec::new();
                collect_paths(expr, &mut paths);
                let mut seen = Vec::new();
                for path in &paths {
                    let mut values = Vec::new();
                    for row in input.iter().take(5) {
                        values.push(
                            path_value(self.graph, path, self.val(row, &path.var.name))?
                                .to_string(),
                        );
                    }
                    let written = source
                        .get(path.span.start..path.span.end)
                        .unwrap_or_default();
                    seen.push(format!("{written} = {}", values.join(", ")));
                }
                let fix = self.loosen_filter(expr, &input, &source)?;
                causes.push(Cause {
                    clause: Range::of(&source, *span),
                    text: text(*span),
                    reason: "filter_removed_all",
                    message: format!(
                        "this FILTER removed all {} rows that reached it; values seen: {}",
                        input.len(),
                        seen.join("; ")
                    ),
                    fix,
                });
            }
            Failed::Not => {
                let span = self
                    .trace
                    .as_ref()
                    .and_then(|t| t.steps.get(step))
                    .map(|s| Span::new(s.clause.offset, s.clause.offset + s.clause.length))
                    .unwrap_or_default();
                causes.push(Cause {
                    clause: Range::of(&source, span),
                    text: text(span),
                    reason: "not_removed_all",
                    message: format!("this NOT removed all {} rows: every candidate matches the excluded pattern", input.len()),
                    fix: None,
                });
            }
            Failed::Other => {}
        }
        Ok(causes)
    }

    /// For a FILTER that is one numeric comparison of a dot path with a
    /// number (`?d.attributes.risk_level > 5`), the edit that keeps the
    /// rows with the most extreme value the comparison saw: `> 5` with
    /// values 1…4 becomes `>= 4`. `None` for any other shape.
    fn loosen_filter(&self, expr: &Expr, input: &[Row], source: &str) -> Result<Option<Fix>> {
        let Expr::Compare(op, left, right) = expr else {
            return Ok(None);
        };
        let (path, op, value) = match (left.as_ref(), right.as_ref()) {
            (Expr::Path(p), Expr::Value(_, value)) => (p, *op, value),
            // `5 < ?x` reads as `?x > 5`.
            (Expr::Value(_, value), Expr::Path(p)) => (
                p,
                match op {
                    CompareOp::Lt => CompareOp::Gt,
                    CompareOp::Le => CompareOp::Ge,
                    CompareOp::Gt => CompareOp::Lt,
                    CompareOp::Ge => CompareOp::Le,
                    other => *other,
                },
                value,
            ),
            _ => return Ok(None),
        };
        let wants_more = match op {
            CompareOp::Gt | CompareOp::Ge => true,
            CompareOp::Lt | CompareOp::Le => false,
            _ => return Ok(None),
        };
        let mut best: Option<f64> = None;
        let mut best_text = String::new();
        for row in input {
            let v = path_value(self.graph, path, self.val(row, &path.var.name))?;
            let Some(n) = v.as_f64() else { continue };
            let better = best.is_none_or(|b| if wants_more { n > b } else { n < b });
            if better {
                best = Some(n);
                best_text = v.to_string();
            }
        }
        if best.is_none() {
            return Ok(None);
        }
        let written = source
            .get(path.span.start..path.span.end)
            .unwrap_or_default();
        let op_text = if wants_more { ">=" } else { "<=" };
        // The whole comparison, whichever side the number is on.
        let span = Span::new(
            path.span.start.min(value.start),
            path.span.end.max(value.end),
        );
        Ok(Some(Fix {
            range: Range::of(source, span),
            replacement: format!("{written} {op_text} {best_text}"),
            label: format!(
                "Keep the {} value seen ({best_text})",
                if wants_more { "largest" } else { "smallest" }
            ),
        }))
    }

    /// Why one clause matches nothing even on its own.
    fn empty_alone(&self, atom: &Atom, span: Span, source: &str) -> Result<Cause> {
        let g = self.graph;
        let text = source
            .get(span.start..span.end)
            .unwrap_or_default()
            .to_owned();
        let cause = |reason, message: String, fix| Cause {
            clause: Range::of(source, span),
            text: text.clone(),
            reason,
            message,
            fix,
        };
        let replace = |from: &str, to: &str, label: String| {
            let quoted_from = serde_json::to_string(from).unwrap_or_default();
            let quoted_to = serde_json::to_string(to).unwrap_or_default();
            text.contains(&quoted_from).then(|| Fix {
                range: Range::of(source, span),
                replacement: text.replacen(&quoted_from, &quoted_to, 1),
                label,
            })
        };
        Ok(match atom {
            Atom::Concept { matcher, .. } => {
                let (ty, name) = match matcher {
                    ConceptMatcher::TypeName { ty, name } => {
                        (ty.lit().cloned(), name.lit().cloned().unwrap_or_default())
                    }
                    ConceptMatcher::Name(name) => (None, name.lit().cloned().unwrap_or_default()),
                    ConceptMatcher::Type(ty) => {
                        let ty = ty.lit().cloned().unwrap_or_default();
                        return Ok(cause(
                            "no_instances",
                            format!("no concept of type {ty} exists yet"),
                            None,
                        ));
                    }
                    ConceptMatcher::Id(id) => {
                        let id = id.lit().cloned().unwrap_or_default();
                        return Ok(cause(
                            "unknown_name",
                            format!("no concept has the id {id:?}"),
                            None,
                        ));
                    }
                };
                // The name under another type.
                if let Some(ty) = &ty {
                    let mut others = Vec::new();
                    for c in g.concepts_named(&name)? {
                        if let Some(r) = g.concept(c)? {
                            others.push(g.type_name(r.type_id)?.to_string());
                        }
                    }
                    if let Some(other) = others.first() {
                        return Ok(cause(
                            "name_under_other_type",
                            format!("no {ty} is named '{name}', but a {other} is"),
                            replace(ty, other, format!("Use type {other}")),
                        ));
                    }
                }
                // The same name with different case or spacing, or a typo.
                let candidates = name_candidates(g, ty.as_deref(), &name)?;
                let norm = normalize(&name);
                if let Some(same) = candidates.iter().find(|c| normalize(c) == norm) {
                    return Ok(cause(
                        "name_differs_in_case_or_spacing",
                        format!(
                            "'{name}' does not exist, but '{same}' does (names are exact: case and spacing matter)"
                        ),
                        replace(&name, same, format!("Use '{same}'")),
                    ));
                }
                let similar =
                    kip_lang::suggest::similar(&name, candidates.iter().map(String::as_str));
                if let Some(best) = similar.first() {
                    return Ok(cause(
                        "similar_name",
                        format!("'{name}' does not exist; did you mean '{best}'?"),
                        replace(&name, best, format!("Use '{best}'")),
                    ));
                }
                let what = ty.map_or_else(|| "concept".to_owned(), |t| t.to_string());
                cause(
                    "unknown_name",
                    format!("no {what} named '{name}' exists"),
                    None,
                )
            }
            Atom::PropId { .. } => cause("unknown_name", "no proposition has this id".into(), None),
            Atom::Prop {
                s,
                o,
                pred:
                    PredTest::Path {
                        preds,
                        min,
                        max,
                        hops,
                    },
                ..
            } if preds
                .iter()
                .map(|p| g.count_predicate(*p))
                .sum::<Result<u64>>()?
                > 0 =>
            {
                // The links exist; the hop range misses them.
                let wider = max.map_or(*min + 3, |m| m + 3);
                let mut probe = self.probe();
                let mut out = Vec::new();
                probe.apply_path(&probe.empty_row(), *s, preds, 1, Some(wider), *o, &mut out)?;
                let names = preds
                    .iter()
                    .map(|p| g.predicate_name(*p).map(|n| n.to_string()))
                    .collect::<Result<Vec<_>>>()?
                    .join(" or ");
                let range = match max {
                    Some(m) if m == min => format!("{min}"),
                    Some(m) => format!("{min} to {m}"),
                    None => format!("{min} or more"),
                };
                if out.is_empty() {
                    cause(
                        "no_join",
                        format!("no walk of {range} {names} links exists here"),
                        None,
                    )
                } else {
                    let fix = Fix {
                        range: Range::of(source, *hops),
                        replacement: format!("{{1,{wider}}}"),
                        label: format!("Allow 1 to {wider} hops"),
                    };
                    cause(
                        "path_too_short",
                        format!(
                            "no walk of exactly {range} {names} links exists, but shorter or longer ones do"
                        ),
                        Some(fix),
                    )
                }
            }
            Atom::Prop { pred, .. } => {
                let names = match pred {
                    PredTest::Names(ps) | PredTest::Path { preds: ps, .. } => ps
                        .iter()
                        .map(|p| g.predicate_name(*p).map(|n| n.to_string()))
                        .collect::<Result<Vec<_>>>()?,
                    PredTest::Var(_) => Vec::new(),
                };
                cause(
                    "no_links",
                    format!("no {} link exists at all", names.join(" or ")),
                    None,
                )
            }
        })
    }

    /// Why a clause joined with the rows before it gives nothing.
    fn join_failed(&self, atom: &Atom, span: Span, input: &[Row], source: &str) -> Result<Cause> {
        let g = self.graph;
        let text = source
            .get(span.start..span.end)
            .unwrap_or_default()
            .to_owned();
        let cause = |reason, message: String, fix| Cause {
            clause: Range::of(source, span),
            text: text.clone(),
            reason,
            message,
            fix,
        };
        match atom {
            Atom::Prop {
                s, o, pred, ends, ..
            } => {
                let preds: Vec<u32> = match pred {
                    PredTest::Names(ps) | PredTest::Path { preds: ps, .. } => ps.clone(),
                    PredTest::Var(_) => Vec::new(),
                };
                let names = preds
                    .iter()
                    .map(|p| g.predicate_name(*p).map(|n| n.to_string()))
                    .collect::<Result<Vec<_>>>()?
                    .join(" or ");
                // The link in the opposite direction?
                let mut reversed = false;
                for row in input.iter().take(200) {
                    let (sv, ov) = (row[*s].element(), row[*o].element());
                    for &p in &preds {
                        let found = match (sv, ov) {
                            (Some(a), Some(b)) => {
                                !g.propositions(Some(b), Some(p), Some(a))?.is_empty()
                            }
                            (Some(a), None) => !g.propositions(None, Some(p), Some(a))?.is_empty(),
                            (None, Some(b)) => !g.propositions(Some(b), Some(p), None)?.is_empty(),
                            (None, None) => false,
                        };
                        reversed |= found;
                    }
                    if reversed {
                        break;
                    }
                }
                if reversed {
                    let (a, b) = *ends;
                    let fix = (a.end <= b.start && span.start <= a.start && b.end <= span.end)
                        .then(|| {
                            let piece = |x: Span| source.get(x.start..x.end).unwrap_or_default();
                            let swapped = format!(
                                "{}{}{}{}{}",
                                source.get(span.start..a.start).unwrap_or_default(),
                                piece(b),
                                source.get(a.end..b.start).unwrap_or_default(),
                                piece(a),
                                source.get(b.end..span.end).unwrap_or_default()
                            );
                            Fix {
                                range: Range::of(source, span),
                                replacement: swapped,
                                label: "Swap subject and object".into(),
                            }
                        });
                    return Ok(cause(
                        "opposite_direction",
                        format!("the {names} link exists, but in the opposite direction"),
                        fix,
                    ));
                }
                if let PredTest::Path {
                    preds,
                    min,
                    max: Some(max),
                    hops,
                } = pred
                {
                    let longer = max + 3;
                    let mut probe = self.probe();
                    for row in input.iter().take(50) {
                        let mut out = Vec::new();
                        probe.apply_path(row, *s, preds, *min, Some(longer), *o, &mut out)?;
                        if !out.is_empty() {
                            let fix = Fix {
                                range: Range::of(source, *hops),
                                replacement: format!("{{{min},{longer}}}"),
                                label: format!("Allow up to {longer} hops"),
                            };
                            return Ok(cause(
                                "path_too_short",
                                format!(
                                    "no path of {min} to {max} {names} links exists, but a longer one does"
                                ),
                                Some(fix),
                            ));
                        }
                    }
                }
                Ok(cause(
                    "no_join",
                    format!(
                        "none of the {} rows produced by the earlier clauses has a link {names} here",
                        input.len()
                    ),
                    None,
                ))
            }
            Atom::Concept { var, matcher, .. } => {
                let mut types = Vec::new();
                for row in input.iter().take(50) {
                    if let Val::Concept(c) = row[*var]
                        && let Some(r) = g.concept(c)?
                    {
                        let t = g.type_name(r.type_id)?.to_string();
                        if !types.contains(&t) {
                            types.push(t);
                        }
                    }
                }
                let wanted = match matcher {
                    ConceptMatcher::Type(t) | ConceptMatcher::TypeName { ty: t, .. } => {
                        t.lit().cloned().unwrap_or_default()
                    }
                    _ => String::new(),
                };
                Ok(cause(
                    "type_mismatch",
                    format!(
                        "the earlier clauses bind this variable to {} concepts, which this clause ({wanted}) does not match",
                        types.join(", ")
                    ),
                    None,
                ))
            }
            Atom::PropId { .. } => Ok(cause(
                "no_join",
                "the proposition does not join the earlier rows".into(),
                None,
            )),
        }
    }

    /// The value bound to a path's variable in `row`.
    pub fn val(&self, row: &Row, var: &str) -> Val {
        self.slots.get(var).map_or(Val::Null, |&s| row[s])
    }

    fn holds(&mut self, expr: &Expr, row: &Row) -> Result<bool> {
        let graph = self.graph;
        let slots = &self.slots;
        let mut regexes = std::mem::take(&mut self.regexes);
        let mut resolve = |path: &DotPath| {
            let val = slots.get(&path.var.name).map_or(Val::Null, |&s| row[s]);
            path_value(graph, path, val)
        };
        let result = filter::holds(expr, &mut resolve, &mut regexes);
        self.regexes = regexes;
        result
    }

    /// Picks the remaining atom with the smallest estimated output.
    fn cheapest(
        &mut self,
        group: &CompiledGroup,
        remaining: &[usize],
        bound: &BTreeSet<Slot>,
        rows: usize,
    ) -> Result<(usize, f64)> {
        let mut best = (0, f64::INFINITY);
        for (i, &a) in remaining.iter().enumerate() {
            let cost = self.estimate(&group.atoms[a].0, bound)? * rows.max(1) as f64;
            if cost < best.1 {
                best = (i, cost);
            }
        }
        Ok(best)
    }

    /// Estimated rows one input row becomes after `atom`.
    fn estimate(&self, atom: &Atom, bound: &BTreeSet<Slot>) -> Result<f64> {
        let g = self.graph;
        Ok(match atom {
            Atom::Concept { var, test, .. } => {
                if bound.contains(var) {
                    0.5
                } else {
                    match test {
                        ConceptTest::One(_) => 1.0,
                        ConceptTest::Name(_) => 2.0,
                        ConceptTest::Type(t) => g.count_type(*t)? as f64,
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
                    (true, false) | (false, true) => {
                        (base / concepts * 4.0).clamp(1.0, base.max(1.0))
                    }
                    (false, false) => base.max(1.0) * 2.0,
                }
            }
        })
    }

    fn apply(&mut self, atom: &Atom, rows: Vec<Row>) -> Result<Vec<Row>> {
        match atom {
            Atom::Concept { var, test, .. } => self.apply_concept(*var, test, rows),
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

    fn apply_concept(&mut self, var: Slot, test: &ConceptTest, rows: Vec<Row>) -> Result<Vec<Row>> {
        let mut candidates: Option<Vec<ConceptId>> = None;
        let mut out = Vec::new();
        for row in rows {
            match row[var] {
                Val::Null => {
                    if candidates.is_none() {
                        let list = match test {
                            ConceptTest::One(id) => match id {
                                Some(c) if self.graph.concept(*c)?.is_some() => vec![*c],
                                _ => Vec::new(),
                            },
                            ConceptTest::Type(t) => self.graph.concepts_of_type(*t)?,
                            ConceptTest::Name(n) => self.graph.concepts_named(n)?,
                        };
                        self.charge(list.len() as u64 + 1)?;
                        candidates = Some(list);
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

    /// The elements one hop from `from` along `preds` (forward or backward).
    fn neighbours(
        &mut self,
        from: ElementId,
        preds: &[u32],
        forward: bool,
    ) -> Result<Vec<ElementId>> {
        let mut out = Vec::new();
        for &p in preds {
            let links = if forward {
                self.graph.propositions(Some(from), Some(p), None)?
            } else {
                self.graph.propositions(None, Some(p), Some(from))?
            };
            self.charge(links.len() as u64 + 1)?;
            out.extend(
                links
                    .into_iter()
                    .map(|(_, s, _, o)| if forward { o } else { s }),
            );
        }
        Ok(out)
    }

    /// Every element reachable from `start` by a walk of `min..=max` hops.
    /// Exact level sets up to `min` (a node seen early may be reached again
    /// at the right length), then breadth-first with a visited set, which
    /// ends on cycles when `max` is unbounded.
    fn reach(
        &mut self,
        start: ElementId,
        preds: &[u32],
        min: u32,
        max: Option<u32>,
        forward: bool,
    ) -> Result<Vec<ElementId>> {
        let mut result: Vec<ElementId> = Vec::new();
        let mut seen_result: HashSet<ElementId> = HashSet::new();
        let mut level: Vec<ElementId> = vec![start];
        let mut depth = 0u32;
        if min == 0 {
            seen_result.insert(start);
            result.push(start);
        }
        // Exact levels until the minimum length.
        while depth < min && !level.is_empty() {
            let mut next: Vec<ElementId> = Vec::new();
            let mut seen_level: HashSet<ElementId> = HashSet::new();
            for &n in &level {
                self.walk.nodes_visited += 1;
                for m in self.neighbours(n, preds, forward)? {
                    if seen_level.insert(m) {
                        next.push(m);
                    }
                }
            }
            level = next;
            depth += 1;
            if !level.is_empty() {
                self.walk.depth_reached = self.walk.depth_reached.max(depth);
            }
        }
        if depth < min {
            return Ok(result);
        }
        for &n in &level {
            if seen_result.insert(n) && depth >= min {
                result.push(n);
            }
        }
        let mut visited: HashSet<ElementId> = level.iter().copied().collect();
        while max.is_none_or(|m| depth < m) && !level.is_empty() {
            let mut next = Vec::new();
            for &n in &level {
                self.walk.nodes_visited += 1;
                for m in self.neighbours(n, preds, forward)? {
                    if visited.insert(m) {
                        next.push(m);
                        if seen_result.insert(m) {
                            result.push(m);
                        }
                    }
                }
            }
            level = next;
            depth += 1;
            if !level.is_empty() {
                self.walk.depth_reached = self.walk.depth_reached.max(depth);
            }
        }
        Ok(result)
    }

    #[allow(clippy::too_many_arguments)]
    fn apply_path(
        &mut self,
        row: &Row,
        s: Slot,
        preds: &[u32],
        min: u32,
        max: Option<u32>,
        o: Slot,
        out: &mut Vec<Row>,
    ) -> Result<()> {
        let (subject, object) = (row[s].element(), row[o].element());
        if row[s] != Val::Null && subject.is_none() || row[o] != Val::Null && object.is_none() {
            return Ok(());
        }
        let emit = |start: ElementId, end: ElementId, out: &mut Vec<Row>| {
            let mut r = row.clone();
            if set(&mut r, s, Val::of(start)) && set(&mut r, o, Val::of(end)) {
                out.push(r);
            }
        };
        match (subject, object) {
            (Some(a), _) => {
                for end in self.reach(a, preds, min, max, true)? {
                    emit(a, end, out);
                }
            }
            (None, Some(b)) => {
                for start in self.reach(b, preds, min, max, false)? {
                    emit(start, b, out);
                }
            }
            (None, None) => {
                // Every element that can start a walk: the subjects of the
                // predicates (and, for zero hops, their objects too).
                let mut starts: Vec<ElementId> = Vec::new();
                let mut seen = HashSet::new();
                for &p in preds {
                    let links = self.graph.propositions(None, Some(p), None)?;
                    self.charge(links.len() as u64 + 1)?;
                    for (_, a, _, b) in links {
                        if seen.insert(a) {
                            starts.push(a);
                        }
                        if min == 0 && seen.insert(b) {
                            starts.push(b);
                        }
                    }
                }
                for a in starts {
                    for end in self.reach(a, preds, min, max, true)? {
                        emit(a, end, out);
                    }
                    if out.len() > ROW_BUDGET {
                        return Err(rows_exceeded());
                    }
                }
            }
        }
        Ok(())
    }
}

/// The JSON value of a dot path for the value bound to its variable.
pub fn path_value(graph: &Graph<'_>, path: &DotPath, val: Val) -> Result<Json> {
    let lookup = |map: &serde_json::Map<String, Json>, keys: &[String]| -> Json {
        if keys.is_empty() {
            return Json::Object(map.clone());
        }
        let mut cur = map.get(&keys[0]);
        for k in &keys[1..] {
            cur = cur.and_then(|v| v.get(k));
        }
        cur.cloned().unwrap_or(Json::Null)
    };
    Ok(match val {
        Val::Null => Json::Null,
        Val::Pred(p) => match path.field {
            Field::Whole | Field::Name => Json::String(graph.predicate_name(p)?.to_string()),
            _ => Json::Null,
        },
        Val::Concept(c) => {
            let Some(rec) = graph.concept(c)? else {
                return Ok(Json::Null);
            };
            match &path.field {
                Field::Whole => graph.element_json(ElementId::Concept(c))?,
                Field::Id => Json::String(ElementId::Concept(c).to_string()),
                Field::Type => Json::String(graph.type_name(rec.type_id)?.to_string()),
                Field::Name => Json::String(rec.name.clone()),
                Field::Attributes(keys) => lookup(&rec.attributes, keys),
                Field::Metadata(keys) => lookup(&rec.metadata, keys),
                Field::Subject | Field::Predicate | Field::Object => Json::Null,
            }
        }
        Val::Prop(p) => {
            let Some(rec) = graph.proposition(p)? else {
                return Ok(Json::Null);
            };
            match &path.field {
                Field::Whole => graph.element_json(ElementId::Proposition(p))?,
                Field::Id => Json::String(ElementId::Proposition(p).to_string()),
                Field::Subject => Json::String(rec.subject.to_string()),
                Field::Predicate => Json::String(graph.predicate_name(rec.predicate)?.to_string()),
                Field::Object => Json::String(rec.object.to_string()),
                Field::Attributes(keys) => lookup(&rec.attributes, keys),
                Field::Metadata(keys) => lookup(&rec.metadata, keys),
                Field::Type | Field::Name => Json::Null,
            }
        }
    })
}

/// Evaluates a WHERE block from scratch: the executor (for reading the rows)
/// and the solution rows, de-duplicated on the visible variables.
pub fn solve<'g, 't>(
    graph: &'g Graph<'t>,
    source: &str,
    where_: &Group,
) -> Result<(Executor<'g, 't>, Vec<Row>)> {
    let (exec, rows, _) = solve_explained(graph, source, where_, false)?;
    Ok((exec, rows))
}

/// [`solve`], also returning the `explain` profile when asked.
pub fn solve_explained<'g, 't>(
    graph: &'g Graph<'t>,
    source: &str,
    where_: &Group,
    explain: bool,
) -> Result<(Executor<'g, 't>, Vec<Row>, Option<Explain>)> {
    let mut vars = Vars::default();
    let compiled = compile(graph, source, where_, &mut vars)?;
    let mut exec = Executor::new(graph, &vars);
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
    // Rows that differ only in hidden slots (inline patterns) are the same
    // solution: collapse them, keeping first-seen order.
    let visible = vars.visible();
    let mut seen = HashSet::with_capacity(rows.len());
    let rows = rows
        .into_iter()
        .filter(|r| seen.insert(visible.iter().map(|&s| r[s]).collect::<Vec<_>>()))
        .collect();
    Ok((exec, rows, explained))
}

/// The result of a FIND: the `result` value and the `next_cursor`, if any.
#[derive(Debug)]
pub struct FindOutput {
    pub result: Json,
    pub next_cursor: Option<String>,
    /// The profile, when `explain` was asked for.
    pub explain: Option<Explain>,
}

/// `FIND(COUNT(?x)) WHERE { ?x {type: "T"} }` is answered from the type's
/// counter, without touching the instances.
fn count_from_statistics(
    graph: &Graph<'_>,
    source: &str,
    query: &FindQuery,
) -> Result<Option<Json>> {
    let [Projection::Aggregate(agg)] = query.find.as_slice() else {
        return Ok(None);
    };
    let [Pattern::Concept(clause)] = query.where_.items.as_slice() else {
        return Ok(None);
    };
    let (ConceptMatcher::Type(ty), Some(var)) = (&clause.matcher, &clause.var) else {
        return Ok(None);
    };
    if agg.func != AggregateFunc::Count
        || agg.arg.field != Field::Whole
        || agg.arg.var.name != var.name
        || query.cursor.is_some()
    {
        return Ok(None);
    }
    let mut vars = Vars::default();
    // Compiling checks that the type is defined, exactly as a full run would.
    compile(graph, source, &query.where_, &mut vars)?;
    let name = ty.lit().map(String::as_str).unwrap_or_default();
    let n = match graph.type_id(name)? {
        Some(t) => graph.count_type(t)?,
        None => 0,
    };
    Ok(Some(json!(n)))
}

/// Runs a bound FIND query.
pub fn find(
    graph: &Graph<'_>,
    source: &str,
    query: &FindQuery,
    secret: u64,
    explain: bool,
) -> Result<FindOutput> {
    if !explain && let Some(result) = count_from_statistics(graph, source, query)? {
        return Ok(FindOutput {
            result,
            next_cursor: None,
            explain: None,
        });
    }
    let (exec, rows, explained) = solve_explained(graph, source, &query.where_, explain)?;
    let has_aggregate = query
        .find
        .iter()
        .chain(query.order_by.iter().map(|k| &k.expr))
        .any(|p| matches!(p, Projection::Aggregate(_)));

    // Each output row: the FIND values and the ORDER BY keys.
    let mut out: Vec<(Vec<Json>, Vec<Json>)> = Vec::new();
    let lazy = !has_aggregate && query.order_by.is_empty();
    if has_aggregate {
        let plain: Vec<&DotPath> = query
            .find
            .iter()
            .filter_map(|p| match p {
                Projection::Path(path) => Some(path),
                Projection::Aggregate(_) => None,
            })
            .collect();
        // Implicit GROUP BY on the plain expressions, groups in first-seen order.
        let mut groups: Vec<(Vec<Json>, Vec<usize>)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for (i, row) in rows.iter().enumerate() {
            let mut key = Vec::with_capacity(plain.len());
            for path in &plain {
                key.push(path_value(graph, path, exec.val(row, &path.var.name))?);
            }
            let k = Json::Array(key.clone()).to_string();
            match index.get(&k) {
                Some(&g) => groups[g].1.push(i),
                None => {
                    index.insert(k, groups.len());
                    groups.push((key, vec![i]));
                }
            }
        }
        if groups.is_empty() && plain.is_empty() {
            groups.push((Vec::new(), Vec::new()));
        }
        for (key, members) in groups {
            let mut plain_values = key.into_iter();
            let mut values = Vec::with_capacity(query.find.len());
            for p in &query.find {
                values.push(match p {
                    Projection::Path(_) => plain_values.next().unwrap_or(Json::Null),
                    Projection::Aggregate(a) => aggregate(graph, &exec, a, &rows, &members)?,
                });
            }
            let mut keys = Vec::with_capacity(query.order_by.len());
            for k in &query.order_by {
                keys.push(match &k.expr {
                    Projection::Aggregate(a) => aggregate(graph, &exec, a, &rows, &members)?,
                    Projection::Path(path) => match members.first() {
                        Some(&m) => path_value(graph, path, exec.val(&rows[m], &path.var.name))?,
                        None => Json::Null,
                    },
                });
            }
            out.push((values, keys));
        }
    } else if !lazy {
        for row in &rows {
            let mut values = Vec::with_capacity(query.find.len());
            for p in &query.find {
                if let Projection::Path(path) = p {
                    values.push(path_value(graph, path, exec.val(row, &path.var.name))?);
                }
            }
            let mut keys = Vec::with_capacity(query.order_by.len());
            for k in &query.order_by {
                if let Projection::Path(path) = &k.expr {
                    keys.push(path_value(graph, path, exec.val(row, &path.var.name))?);
                }
            }
            out.push((values, keys));
        }
    }
    if !query.order_by.is_empty() {
        out.sort_by(|a, b| {
            for (i, k) in query.order_by.iter().enumerate() {
                let o = value::total_cmp(&a.1[i], &b.1[i]);
                let o = if k.descending { o.reverse() } else { o };
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        });
    }

    // Paging.
    let total = if lazy { rows.len() } else { out.len() } as u64;
    let mut fingerprint_query = query.clone();
    fingerprint_query.limit = None;
    fingerprint_query.cursor = None;
    let fingerprint = Command::Find(fingerprint_query).to_string();
    let offset = match &query.cursor {
        Some(arg) => {
            let token = arg.lit().map(String::as_str).unwrap_or_default();
            cursor::decode(secret, &fingerprint, token)
                .map_err(|e| e.at(source, arg.span()))?
                .offset
        }
        None => 0,
    };
    let limit = query
        .limit
        .as_ref()
        .and_then(|l| l.lit().copied())
        .unwrap_or(DEFAULT_PAGE);
    let start = offset.min(total);
    let end = start.saturating_add(limit).min(total);
    let next_cursor = (end < total).then(|| cursor::encode(secret, &fingerprint, end));
    let (start, end) = (start as usize, end as usize);

    let page: Vec<Vec<Json>> = if lazy {
        let mut page = Vec::with_capacity(end - start);
        for row in &rows[start..end] {
            let mut values = Vec::with_capacity(query.find.len());
            for p in &query.find {
                if let Projection::Path(path) = p {
                    values.push(path_value(graph, path, exec.val(row, &path.var.name))?);
                }
            }
            page.push(values);
        }
        page
    } else {
        out.drain(start..end).map(|(v, _)| v).collect()
    };

    let aggregate_only = query
        .find
        .iter()
        .all(|p| matches!(p, Projection::Aggregate(_)));
    let columns: Vec<Json> = (0..query.find.len())
        .map(|c| {
            if aggregate_only {
                page.first().map_or(Json::Null, |r| r[c].clone())
            } else {
                Json::Array(page.iter().map(|r| r[c].clone()).collect())
            }
        })
        .collect();
    let result = if columns.len() == 1 {
        columns.into_iter().next().unwrap_or(Json::Null)
    } else {
        Json::Array(columns)
    };
    Ok(FindOutput {
        result,
        next_cursor,
        explain: explained,
    })
}

fn aggregate(
    graph: &Graph<'_>,
    exec: &Executor<'_, '_>,
    agg: &Aggregate,
    rows: &[Row],
    members: &[usize],
) -> Result<Json> {
    if agg.func == AggregateFunc::Count && agg.arg.field == Field::Whole {
        // Counting bindings needs no element decoded.
        let vals = members
            .iter()
            .map(|&m| exec.val(&rows[m], &agg.arg.var.name))
            .filter(|v| *v != Val::Null);
        let n = if agg.distinct {
            vals.collect::<HashSet<_>>().len()
        } else {
            vals.count()
        };
        return Ok(json!(n));
    }
    let mut values = Vec::with_capacity(members.len());
    for &m in members {
        let v = path_value(graph, &agg.arg, exec.val(&rows[m], &agg.arg.var.name))?;
        if !v.is_null() {
            values.push(v);
        }
    }
    if agg.distinct {
        let mut seen = HashSet::new();
        values.retain(|v| seen.insert(v.to_string()));
    }
    Ok(match agg.func {
        AggregateFunc::Count => json!(values.len()),
        AggregateFunc::Sum => {
            let mut sum = json!(0);
            for v in values.iter().filter(|v| v.is_number()) {
                sum = value::add(&sum, v).unwrap_or(sum);
            }
            sum
        }
        AggregateFunc::Avg => {
            let nums: Vec<f64> = values.iter().filter_map(Json::as_f64).collect();
            if nums.is_empty() {
                Json::Null
            } else {
                json!(nums.iter().sum::<f64>() / nums.len() as f64)
            }
        }
        AggregateFunc::Min => values
            .into_iter()
            .min_by(value::total_cmp)
            .unwrap_or(Json::Null),
        AggregateFunc::Max => values
            .into_iter()
            .max_by(value::total_cmp)
            .unwrap_or(Json::Null),
    })
}

/// Lower-case, with runs of spaces, underscores and hyphens collapsed: two
/// names equal under this differ only in case or spacing.
fn normalize(name: &str) -> String {
    let mut out = String::new();
    let mut gap = false;
    for c in name.chars() {
        if c.is_whitespace() || c == '_' || c == '-' {
            gap = true;
        } else {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// Names of concepts (of type `ty`, if given) that may be what `name` meant:
/// the search index's hits for its words (typo-tolerant), or, for a small
/// type, all its instances.
fn name_candidates(g: &Graph<'_>, ty: Option<&str>, name: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let query = crate::search::Query {
        propositions: false,
        term: name,
        with_type: ty,
        limit: 50,
    };
    for (e, _) in crate::search::search(g, &query)? {
        if let ElementId::Concept(c) = e
            && let Some(r) = g.concept(c)?
        {
            out.push(r.name.clone());
        }
    }
    if let Some(t) = ty.map(|t| g.type_id(t)).transpose()?.flatten() {
        let ids = g.concepts_of_type(t)?;
        if ids.len() <= 2_000 {
            for c in ids {
                if let Some(r) = g.concept(c)? {
                    out.push(r.name.clone());
                }
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn collect_paths<'a>(expr: &'a Expr, out: &mut Vec<&'a DotPath>) {
    match expr {
        Expr::Or(l, r) | Expr::And(l, r) | Expr::Compare(_, l, r) => {
            collect_paths(l, out);
            collect_paths(r, out);
        }
        Expr::Not(e) => collect_paths(e, out),
        Expr::Call(c) => c.args.iter().for_each(|a| collect_paths(a, out)),
        Expr::Path(p) => out.push(p),
        Expr::Value(..) => {}
    }
}

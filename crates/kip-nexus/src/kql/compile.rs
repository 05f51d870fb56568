//! Compiling a WHERE block: type and predicate names are resolved against
//! the in-graph schema (`KIP_2001` for an undefined one, with suggestions)
//! and the block is flattened into [`Atom`]s over variable slots. Inline
//! `{…}` concepts and nested `(…)` propositions become hidden slots with
//! their own atoms, so every proposition atom joins three slots.
//!
//! Compiling reads names and ids, never instances: what matches is the
//! executor's business. It also chooses, from the block's FILTERs alone,
//! the attribute-index lookup a type clause may read ([`IndexUse`], see
//! `index.rs` for why the answer stays the scan's); the lookup is a part
//! of the compiled atom, so it is defined here and read in `index.rs`.
//!
//! Compiling and executing recurse once per nested block and FILTER
//! expression level, relying on the parser's proof that neither nests
//! deeper than `kip_lang::MAX_DEPTH` (`tests/nesting.rs` runs both limits
//! at once on a 2 MiB stack).

use std::cell::RefCell;

use kip_lang::ast::*;
use kip_lang::{ErrorCode, KipError};
use kip_store::{ConceptId, ElementId, PropositionId};
use serde_json::Value as Json;

use crate::graph::{AttrMatches, AttrQuery, FieldKind, Graph, Result};

/// A variable's position in a row.
pub type Slot = usize;

/// Variable names and their slots; hidden slots have no name.
#[derive(Debug, Default)]
pub struct Vars {
    pub(super) names: Vec<Option<String>>,
}

impl Vars {
    pub fn slot(&mut self, name: &str) -> Slot {
        if let Some(i) = self.names.iter().position(|n| n.as_deref() == Some(name)) {
            return i;
        }
        self.names.push(Some(name.to_owned()));
        self.names.len() - 1
    }

    pub(super) fn hidden(&mut self) -> Slot {
        self.names.push(None);
        self.names.len() - 1
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub(super) fn visible(&self) -> Vec<Slot> {
        (0..self.names.len())
            .filter(|&i| self.names[i].is_some())
            .collect()
    }
}

/// A concept test with names already resolved against the store.
#[derive(Debug)]
pub(crate) enum ConceptTest {
    /// `{id}` or `{type, name}`: one concept, or none if it does not exist.
    One(Option<ConceptId>),
    Type(u32),
    Name(String),
}

#[derive(Debug)]
pub(crate) enum PredTest {
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
pub(crate) enum Atom {
    Concept {
        var: Slot,
        test: ConceptTest,
        /// The pattern as written, for `explain`.
        matcher: ConceptMatcher,
        /// For a type clause, the attribute-index lookup its block's
        /// FILTERs allow ([`super::index`]).
        index: Option<Box<IndexUse>>,
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
    pub(super) fn slots(&self) -> Vec<Slot> {
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
    pub(crate) atoms: Vec<(Atom, Span)>,
    pub(crate) filters: Vec<(Expr, Vec<Slot>, Span)>,
    pub(super) nots: Vec<CompiledGroup>,
    pub(super) optionals: Vec<CompiledGroup>,
    pub(super) unions: Vec<CompiledGroup>,
    pub(super) span: Span,
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
        // Blocks recurse here once per level (up to `kip_lang::MAX_DEPTH`):
        // the other items are compiled by functions of their own, so that
        // this frame stays small.
        for item in &group.items {
            match item {
                Pattern::Concept(c) => self.concept_clause(c, &mut out)?,
                Pattern::Proposition(p) => {
                    let var = p.var.as_ref().map(|v| self.vars.slot(&v.name));
                    self.proposition(&p.matcher, var, p.span, &mut out.atoms)?;
                }
                Pattern::Filter(f) => self.filter(f, &mut out),
                Pattern::Not(g) => out.nots.push(self.group(g)?),
                Pattern::Optional(g) => out.optionals.push(self.group(g)?),
                Pattern::Union(g) => out.unions.push(self.group(g)?),
            }
        }
        self.choose_indexes(&mut out);
        Ok(out)
    }

    /// Gives each named type clause of the block the attribute-index
    /// lookup its FILTERs allow.
    fn choose_indexes(&self, out: &mut CompiledGroup) {
        let filters = &out.filters;
        for (atom, _) in &mut out.atoms {
            if let Atom::Concept {
                var,
                test: ConceptTest::Type(_),
                index,
                ..
            } = atom
                && let Some(Some(name)) = self.vars.names.get(*var)
            {
                *index = choose(name, *var, filters).map(Box::new);
            }
        }
    }

    fn concept_clause(&mut self, c: &ConceptClause, out: &mut CompiledGroup) -> Result<()> {
        let var = match &c.var {
            Some(v) => self.vars.slot(&v.name),
            None => self.vars.hidden(),
        };
        let test = self.concept_test(&c.matcher)?;
        let matcher = c.matcher.clone();
        out.atoms.push((
            Atom::Concept {
                var,
                test,
                matcher,
                index: None,
            },
            c.span,
        ));
        Ok(())
    }

    fn filter(&mut self, f: &Filter, out: &mut CompiledGroup) {
        let mut refs = Vec::new();
        kip_lang::expr_vars(&f.expr, &mut refs);
        let slots = refs.iter().map(|v| self.vars.slot(&v.name)).collect();
        out.filters.push((f.expr.clone(), slots, f.span));
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
                        index: None,
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
                let pred = self.predicate_test(&t.predicate, var, span)?;
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

    /// The predicate of a proposition clause; a hop range other than
    /// `{1,1}` makes it a path, which cannot bind a proposition variable.
    fn predicate_test(
        &mut self,
        predicate: &PredicateExpr,
        var: Option<Slot>,
        span: Span,
    ) -> Result<PredTest> {
        let (names, hops) = match predicate {
            PredicateExpr::Var(v) => return Ok(PredTest::Var(self.vars.slot(&v.name))),
            PredicateExpr::Names { names, hops, .. } => (names, hops),
        };
        let mut preds = Vec::new();
        for n in names {
            preds.push(self.predicate_id(n)?);
        }
        Ok(match hops {
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
        })
    }
}

// ------------------------------------------------------- index choice

/// An attribute-index lookup chosen for a type clause.
#[derive(Debug)]
pub(crate) struct IndexUse {
    pub(super) kind: FieldKind,
    pub(super) key: String,
    pub(super) query: AttrQuery,
    /// The condition as `explain` shows it (`attributes.score >= 10`).
    pub(super) text: String,
    /// The first [`PROBE`](super::index::PROBE) entries, read once per
    /// command.
    pub(super) probe: RefCell<Option<AttrMatches>>,
}

/// The best index lookup the block's FILTERs allow for the variable `var`
/// (`slot`): an equality or `IN` first, then a prefix, then a range (both
/// bounds of one key combined).
fn choose(var: &str, slot: Slot, filters: &[(Expr, Vec<Slot>, Span)]) -> Option<IndexUse> {
    let mut conds = Vec::new();
    for (expr, slots, _) in filters {
        if slots.contains(&slot) {
            conjuncts(expr, &mut |e| {
                if let Some(c) = condition(var, e) {
                    conds.push(c);
                }
            });
        }
    }
    let rank = |q: &AttrQuery| match q {
        AttrQuery::Equals(_) => 0,
        AttrQuery::Prefix(_) => 1,
        AttrQuery::Between { .. } => 2,
    };
    conds.sort_by_key(|c| rank(&c.query));
    let mut best = conds.first()?.clone();
    if let AttrQuery::Between { lower, upper } = &mut best.query {
        // `k >= a && k < b`: one range instead of a half-open one.
        for c in &conds[1..] {
            let AttrQuery::Between { lower: l, upper: u } = &c.query else {
                continue;
            };
            if c.kind != best.kind || c.key != best.key {
                continue;
            }
            let same_type =
                |a: &Json, b: &Json| std::mem::discriminant(a) == std::mem::discriminant(b);
            let like = lower.clone().or(upper.clone());
            let fits = |v: &Option<Json>| {
                v.as_ref()
                    .is_some_and(|v| like.as_ref().is_some_and(|w| same_type(v, w)))
            };
            if lower.is_none() && fits(l) {
                *lower = l.clone();
                best.text = format!("{} && {}", best.text, c.text);
            } else if upper.is_none() && fits(u) {
                *upper = u.clone();
                best.text = format!("{} && {}", best.text, c.text);
            }
        }
    }
    Some(IndexUse {
        kind: best.kind,
        key: best.key,
        query: best.query,
        text: best.text,
        probe: RefCell::default(),
    })
}

#[derive(Clone, Debug)]
struct Condition {
    kind: FieldKind,
    key: String,
    query: AttrQuery,
    text: String,
}

/// Calls `f` on each conjunct of the top-level `&&` of `expr`.
fn conjuncts<'e>(expr: &'e Expr, f: &mut dyn FnMut(&'e Expr)) {
    match expr {
        Expr::And(l, r) => {
            conjuncts(l, f);
            conjuncts(r, f);
        }
        other => f(other),
    }
}

/// `?var.attributes.k` or `?var.metadata.k`: the map and the key.
fn field_of(var: &str, e: &Expr) -> Option<(FieldKind, String, String)> {
    let Expr::Path(DotPath { var: v, field, .. }) = e else {
        return None;
    };
    if v.name != var {
        return None;
    }
    match field {
        Field::Attributes(keys) if keys.len() == 1 => Some((
            FieldKind::Attributes,
            keys[0].clone(),
            format!("attributes.{}", keys[0]),
        )),
        Field::Metadata(keys) if keys.len() == 1 => Some((
            FieldKind::Metadata,
            keys[0].clone(),
            format!("metadata.{}", keys[0]),
        )),
        _ => None,
    }
}

/// A literal the index can look up: a boolean, a number or a string.
fn scalar(e: &Expr) -> Option<Json> {
    let Expr::Value(v, _) = e else {
        return None;
    };
    match v {
        Value::Bool(_) | Value::Number(_) | Value::String(_) => v.to_json(),
        _ => None,
    }
}

fn condition(var: &str, e: &Expr) -> Option<Condition> {
    match e {
        Expr::Compare(op, l, r) => {
            let (op, path, lit) = match (field_of(var, l), scalar(r)) {
                (Some(p), Some(v)) => (*op, p, v),
                _ => (flip(*op)?, field_of(var, r)?, scalar(l)?),
            };
            let (kind, key, shown) = path;
            let text = format!("{shown} {} {lit}", op_text(op));
            let query = match op {
                CompareOp::Eq => AttrQuery::Equals(vec![lit]),
                CompareOp::Lt | CompareOp::Le => AttrQuery::Between {
                    lower: None,
                    upper: Some(lit),
                },
                CompareOp::Gt | CompareOp::Ge => AttrQuery::Between {
                    lower: Some(lit),
                    upper: None,
                },
                CompareOp::Ne => return None,
            };
            Some(Condition {
                kind,
                key,
                query,
                text,
            })
        }
        Expr::Call(call) => {
            let [target, arg] = call.args.as_slice() else {
                return None;
            };
            let (kind, key, shown) = field_of(var, target)?;
            let (query, text) = match call.func {
                Func::StartsWith => {
                    let Some(Json::String(p)) = scalar(arg) else {
                        return None;
                    };
                    let text = format!("STARTS_WITH({shown}, {})", Json::String(p.clone()));
                    (AttrQuery::Prefix(p), text)
                }
                Func::In => {
                    let Expr::Value(Value::Array(items), _) = arg else {
                        return None;
                    };
                    let mut values = Vec::new();
                    for item in items {
                        match item {
                            Value::Bool(_) | Value::Number(_) | Value::String(_) => {
                                values.push(item.to_json()?);
                            }
                            // A null item equals nothing; an array or object
                            // item could equal a value the index lacks.
                            Value::Null => {}
                            _ => return None,
                        }
                    }
                    let text = format!("IN({shown}, {})", Json::Array(values.clone()));
                    (AttrQuery::Equals(values), text)
                }
                _ => return None,
            };
            Some(Condition {
                kind,
                key,
                query,
                text,
            })
        }
        _ => None,
    }
}

/// `lit op path` as `path op' lit`.
fn flip(op: CompareOp) -> Option<CompareOp> {
    Some(match op {
        CompareOp::Eq => CompareOp::Eq,
        CompareOp::Lt => CompareOp::Gt,
        CompareOp::Le => CompareOp::Ge,
        CompareOp::Gt => CompareOp::Lt,
        CompareOp::Ge => CompareOp::Le,
        CompareOp::Ne => return None,
    })
}

fn op_text(op: CompareOp) -> &'static str {
    match op {
        CompareOp::Eq => "==",
        CompareOp::Ne => "!=",
        CompareOp::Lt => "<",
        CompareOp::Le => "<=",
        CompareOp::Gt => ">",
        CompareOp::Ge => ">=",
    }
}

//! Choosing the attribute index for a type scan: a `?x {type: "T"}` clause
//! whose block FILTERs `?x.attributes.k` or `?x.metadata.k` with `==`, `<`,
//! `<=`, `>`, `>=`, `IN` or `STARTS_WITH` against literals, in a conjunct
//! of the FILTER's top-level `&&`, reads the matching instances from the
//! index instead of the whole type.
//!
//! The FILTER itself stays where it was and still runs on every row: the
//! index only narrows the candidates to a superset of the rows the FILTER
//! keeps (a comparison with a literal holds only for a value of the
//! literal's JSON type, and the index keeps types apart), so the answer is
//! the scan's answer by construction. Candidates are visited in id order,
//! the scan's order, so LIMIT and cursors cut the same pages.

use std::cell::RefCell;

use kip_lang::ast::{CompareOp, DotPath, Expr, Field, Func, Span, Value};
use serde_json::Value as Json;

use crate::graph::{AttrMatches, AttrQuery, FieldKind, Graph, Result};

use kip_store::ConceptId;

use super::compile::{Atom, CompiledGroup, ConceptTest, Slot};
use super::exec::{Executor, ROW_BUDGET, Row, Val, rows_exceeded};

/// Index entries read to estimate a lookup; a lookup with more matches is
/// treated as unselective.
pub(super) const PROBE: usize = 4096;

/// An attribute-index lookup chosen for a type clause.
#[derive(Debug)]
pub(crate) struct IndexUse {
    pub(super) kind: FieldKind,
    pub(super) key: String,
    pub(super) query: AttrQuery,
    /// The condition as `explain` shows it (`attributes.score >= 10`).
    pub(super) text: String,
    /// The first [`PROBE`] entries, read once per command.
    probe: RefCell<Option<AttrMatches>>,
}

impl IndexUse {
    /// The first [`PROBE`] matches (all of them when `complete`).
    pub(super) fn probe(&self, graph: &Graph<'_>, type_id: u32) -> Result<AttrMatches> {
        if let Some(p) = &*self.probe.borrow() {
            return Ok(p.clone());
        }
        let p = graph.attr_lookup(type_id, self.kind, &self.key, &self.query, PROBE)?;
        *self.probe.borrow_mut() = Some(p.clone());
        Ok(p)
    }

    /// Whether the lookup is one value (`==`): its index entries are then
    /// in id order, the scan's order, and can be read as far as needed.
    fn one_value(&self) -> bool {
        matches!(&self.query, AttrQuery::Equals(values) if values.len() == 1)
    }

    /// The matches of a one-value lookup in id order, read from the index
    /// as they are needed (in batches growing ×4 from 64), so that a scan
    /// under LIMIT stops after the rows it needs however many match.
    fn streamed<'g>(&'g self, graph: &'g Graph<'g>, type_id: u32) -> Streamed<'g> {
        Streamed {
            ix: self,
            graph,
            type_id,
            batch: Vec::new(),
            pos: 0,
            want: 16,
            complete: false,
        }
    }

    /// Every match, in id order.
    pub(super) fn all(&self, graph: &Graph<'_>, type_id: u32) -> Result<Vec<ConceptId>> {
        let probe = self.probe(graph, type_id)?;
        let mut ids = if probe.complete {
            probe.ids
        } else {
            graph
                .attr_lookup(type_id, self.kind, &self.key, &self.query, usize::MAX)?
                .ids
        };
        ids.sort_unstable();
        ids.dedup();
        Ok(ids)
    }
}

/// A one-value lookup's matches, read as needed (see [`IndexUse::streamed`]).
struct Streamed<'g> {
    ix: &'g IndexUse,
    graph: &'g Graph<'g>,
    type_id: u32,
    /// The first `batch.len()` matches, of which `pos` were handed out.
    batch: Vec<ConceptId>,
    pos: usize,
    want: usize,
    complete: bool,
}

impl Iterator for Streamed<'_> {
    type Item = Result<ConceptId>;

    fn next(&mut self) -> Option<Result<ConceptId>> {
        if self.pos == self.batch.len() {
            if self.complete {
                return None;
            }
            // The same snapshot gives the same entries in the same order:
            // a larger read starts with the ids handed out already.
            self.want = self.want.saturating_mul(4);
            let ix = self.ix;
            match self
                .graph
                .attr_lookup(self.type_id, ix.kind, &ix.key, &ix.query, self.want)
            {
                Ok(m) => {
                    self.complete = m.complete;
                    self.batch = m.ids;
                }
                Err(e) => {
                    self.complete = true;
                    self.batch.clear();
                    self.pos = 0;
                    return Some(Err(e));
                }
            }
            if self.pos >= self.batch.len() {
                return None;
            }
        }
        self.pos += 1;
        Some(Ok(self.batch[self.pos - 1]))
    }
}

/// The best index lookup the block's FILTERs allow for the variable `var`
/// (`slot`): an equality or `IN` first, then a prefix, then a range (both
/// bounds of one key combined).
pub(super) fn choose(
    var: &str,
    slot: Slot,
    filters: &[(Expr, Vec<Slot>, Span)],
) -> Option<IndexUse> {
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

impl Executor<'_, '_> {
    /// A block that is one type clause and FILTERs over its variable alone,
    /// as one pass: visits candidates in id order, runs the FILTERs on each
    /// and, with a `cap` (LIMIT without ORDER BY), stops once it has that
    /// many rows. The candidates come from the attribute index when its
    /// matches are fewer than what the scan is expected to read before it
    /// has `cap` rows, else from the type's instances, read lazily; no row
    /// is held that the FILTERs drop. `None` when the block has another
    /// shape (the general join runs instead).
    pub(super) fn capped_scan(
        &mut self,
        group: &CompiledGroup,
        rows: &[Row],
        pending: &mut Vec<usize>,
        cap: Option<usize>,
    ) -> Result<Option<Vec<Row>>> {
        let ([(atom, _)], [input]) = (group.atoms.as_slice(), rows) else {
            return Ok(None);
        };
        let Atom::Concept {
            var,
            test: ConceptTest::Type(t),
            index,
            ..
        } = atom
        else {
            return Ok(None);
        };
        if !group.nots.is_empty()
            || !group.optionals.is_empty()
            || !group.unions.is_empty()
            || input[*var] != Val::Null
            || pending
                .iter()
                .any(|&f| group.filters[f].1.iter().any(|s| s != var))
        {
            return Ok(None);
        }
        let graph = self.graph;
        // One value under LIMIT: its entries are in id order, read as far
        // as the rows need, however many match.
        let streamed = match index {
            Some(ix) if self.use_index && cap.is_some() && ix.one_value() => Some(ix),
            _ => None,
        };
        let from_index = match index {
            _ if streamed.is_some() => false,
            Some(_) if !self.use_index => false,
            Some(ix) if cap.is_none() => ix.probe(graph, *t)?.complete,
            Some(ix) => {
                let probe = ix.probe(graph, *t)?;
                let n = graph.count_type(*t)? as f64;
                let matches = probe.ids.len().max(1) as f64;
                // The scan reads about cap / selectivity instances.
                probe.complete && matches <= cap.unwrap_or(usize::MAX) as f64 * n / matches
            }
            None => false,
        };
        let candidates: Box<dyn Iterator<Item = Result<ConceptId>> + '_> = match (streamed, index) {
            (Some(ix), _) => Box::new(ix.streamed(graph, *t)),
            (None, Some(ix)) if from_index => Box::new(ix.all(graph, *t)?.into_iter().map(Ok)),
            _ => Box::new(graph.concepts_of_type_iter(*t)?),
        };
        let filters: Vec<usize> = std::mem::take(pending);
        let mut out = Vec::new();
        for (visited, c) in candidates.enumerate() {
            if cap.is_some_and(|cap| out.len() >= cap) {
                break;
            }
            // The rows a join would hold before its FILTERs, as it counts them.
            if cap.is_none() && visited >= ROW_BUDGET {
                return Err(rows_exceeded());
            }
            self.charge(1)?;
            let mut row = input.clone();
            row[*var] = Val::Concept(c?);
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
            }
        }
        Ok(Some(out))
    }
}

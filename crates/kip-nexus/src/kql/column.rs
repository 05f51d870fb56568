//! A FILTER scan over a type read as a column: when every FILTER of a lone
//! type clause reads one key of its variable (`?x.attributes.k` or
//! `?x.metadata.k`) and nothing else, the FILTERs are compiled to a
//! [`ColumnFilter`] and evaluated on the attribute index's keys of that
//! key (`Graph::attr_column`), which hold every non-null value of the
//! type's instances: no record is read or decoded, a `CONTAINS` is one
//! vectorised substring search (`memchr::memmem`) over the key's bytes.
//!
//! Same answers as the scan, by construction: the compiled form evaluates
//! exactly as [`crate::filter`] does on the same value (BRIEF §3: `null`
//! compares false, kinds never mix, numbers compare as `f64`, which is how
//! the index keeps them); a value the index does not hold whole (an array,
//! an object, a long string or one holding NUL) is decided by the FILTERs
//! themselves on the record; the instances without a value (missing or
//! `null`) are the type's others, added only when the FILTERs hold for
//! `null`. The rows are then put in id order, the scan's order, so LIMIT
//! and cursors cut the same pages. Under LIMIT the scan first reads the
//! type's instances as before, so that a FILTER most instances pass stops
//! after a few; only if the page is not full after [`LAZY`] instances does
//! it read the column for the rest.

use kip_lang::ast::{Call, CompareOp, DotPath, Expr, Field, Func};
use kip_store::ConceptId;
use memchr::memmem::Finder;
use serde_json::Value as Json;

use crate::graph::{Cell, FieldKind, Result};

use super::compile::{CompiledGroup, Slot};
use super::exec::{Executor, ROW_BUDGET};
use super::row::{Row, Val};

/// Instances a capped scan reads one by one before it reads the column.
const LAZY: usize = 256;

/// A scalar value as a FILTER sees it (a string as its UTF-8 bytes).
#[derive(Clone, Copy, Debug)]
enum V<'a> {
    Null,
    Bool(bool),
    Num(f64),
    Str(&'a [u8]),
}

/// A literal of the FILTER.
#[derive(Clone, Debug)]
enum Lit {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
}

impl Lit {
    /// A scalar literal; `None` for an array or an object.
    fn of(v: &Json) -> Option<Lit> {
        Some(match v {
            Json::Null => Lit::Null,
            Json::Bool(b) => Lit::Bool(*b),
            Json::Number(n) => Lit::Num(n.as_f64()?),
            Json::String(s) => Lit::Str(s.clone()),
            Json::Array(_) | Json::Object(_) => return None,
        })
    }

    fn v(&self) -> V<'_> {
        match self {
            Lit::Null => V::Null,
            Lit::Bool(b) => V::Bool(*b),
            Lit::Num(n) => V::Num(*n),
            Lit::Str(s) => V::Str(s.as_bytes()),
        }
    }
}

/// A FILTER expression over the column's value.
#[derive(Debug)]
enum Node {
    Or(Box<Node>, Box<Node>),
    And(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Compare(CompareOp, Box<Node>, Box<Node>),
    /// `CONTAINS(a, b)`, with `b`'s searcher when it is a string literal.
    Contains(Box<[Node]>, Option<Box<Finder<'static>>>),
    StartsWith(Box<[Node]>),
    EndsWith(Box<[Node]>),
    /// `IN(a, [literals])`; the scalar items (nothing equals the others).
    In(Box<[Node]>, Option<Vec<Lit>>),
    IsNull(Box<[Node]>),
    IsNotNull(Box<[Node]>),
    /// The column's value.
    Cell,
    Lit(Lit),
}

/// The FILTERs of a scan over one key, compiled (see the module docs).
#[derive(Debug)]
pub(super) struct ColumnFilter {
    kind: FieldKind,
    key: String,
    /// The FILTERs, all of which must hold.
    nodes: Vec<Node>,
    /// Whether they hold for an instance without a value.
    holds_for_null: bool,
}

impl ColumnFilter {
    /// The FILTERs `filters` of `group` over the variable in `slot`
    /// compiled, if every path they read is one same top-level key of it.
    pub(super) fn compile(
        group: &CompiledGroup,
        filters: &[usize],
        slot: Slot,
        slots: &dyn Fn(&str) -> Option<Slot>,
    ) -> Option<ColumnFilter> {
        let mut column: Option<(FieldKind, String)> = None;
        let mut nodes = Vec::new();
        for &f in filters {
            let mut path = |p: &DotPath| -> Option<()> {
                let found = match &p.field {
                    Field::Attributes(keys) if keys.len() == 1 => (FieldKind::Attributes, &keys[0]),
                    Field::Metadata(keys) if keys.len() == 1 => (FieldKind::Metadata, &keys[0]),
                    _ => return None,
                };
                if slots(&p.var.name) != Some(slot) {
                    return None;
                }
                match &column {
                    Some((kind, key)) => (*kind == found.0 && key == found.1).then_some(()),
                    None => {
                        column = Some((found.0, found.1.clone()));
                        Some(())
                    }
                }
            };
            nodes.push(node(&group.filters[f].0, &mut path)?);
        }
        let (kind, key) = column?;
        let mut out = ColumnFilter {
            kind,
            key,
            nodes,
            holds_for_null: false,
        };
        out.holds_for_null = out.holds(V::Null);
        Some(out)
    }

    /// Whether the FILTERs hold for `cell`; `None` when the cell does not
    /// hold the value whole (the record decides).
    fn decide(&self, cell: Cell<'_>) -> Option<bool> {
        let v = match cell {
            Cell::Bool(b) => V::Bool(b),
            Cell::Number(n) => V::Num(n),
            Cell::Text(s) => V::Str(s),
            Cell::Other => return None,
        };
        Some(self.holds(v))
    }

    fn holds(&self, v: V<'_>) -> bool {
        self.nodes.iter().all(|n| truthy(eval(n, v)))
    }
}

/// Compiles one FILTER expression; `None` if it reads anything but the
/// column's path (which `path` checks) or uses REGEX.
fn node(e: &Expr, path: &mut dyn FnMut(&DotPath) -> Option<()>) -> Option<Node> {
    Some(match e {
        Expr::Or(l, r) => Node::Or(Box::new(node(l, path)?), Box::new(node(r, path)?)),
        Expr::And(l, r) => Node::And(Box::new(node(l, path)?), Box::new(node(r, path)?)),
        Expr::Not(x) => Node::Not(Box::new(node(x, path)?)),
        Expr::Compare(op, l, r) => {
            Node::Compare(*op, Box::new(node(l, path)?), Box::new(node(r, path)?))
        }
        Expr::Call(call) => return call_node(call, path),
        Expr::Path(p) => {
            path(p)?;
            Node::Cell
        }
        Expr::Value(v, _) => Node::Lit(Lit::of(&v.to_json().unwrap_or(Json::Null))?),
    })
}

fn call_node(call: &Call, path: &mut dyn FnMut(&DotPath) -> Option<()>) -> Option<Node> {
    // `IN`'s list is the one place a literal array may stand.
    let list = match (call.func, call.args.get(1)) {
        (Func::In, Some(Expr::Value(v, _))) => match v.to_json().unwrap_or(Json::Null) {
            Json::Array(items) => Some(items.iter().filter_map(Lit::of).collect::<Vec<_>>()),
            _ => None,
        },
        _ => None,
    };
    let mut args = Vec::with_capacity(call.args.len());
    for (i, a) in call.args.iter().enumerate() {
        if i == 1 && list.is_some() {
            args.push(Node::Lit(Lit::Null)); // the list, kept aside
            continue;
        }
        args.push(node(a, path)?);
    }
    let args = args.into_boxed_slice();
    Some(match call.func {
        Func::Contains => {
            let finder = match args.get(1) {
                Some(Node::Lit(Lit::Str(s))) => {
                    Some(Box::new(Finder::new(s.as_bytes()).into_owned()))
                }
                _ => None,
            };
            Node::Contains(args, finder)
        }
        Func::StartsWith => Node::StartsWith(args),
        Func::EndsWith => Node::EndsWith(args),
        Func::Regex => return None,
        Func::In => Node::In(args, list),
        Func::IsNull => Node::IsNull(args),
        Func::IsNotNull => Node::IsNotNull(args),
    })
}

fn truthy(v: V<'_>) -> bool {
    matches!(v, V::Bool(true))
}

/// FILTER's `==` (`crate::value::equals`) on scalars.
fn equals(a: V<'_>, b: V<'_>) -> bool {
    match (a, b) {
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Num(x), V::Num(y)) => x == y,
        (V::Str(x), V::Str(y)) => x == y,
        _ => false,
    }
}

/// `crate::value::partial_cmp` on scalars.
fn partial_cmp(a: V<'_>, b: V<'_>) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (V::Num(x), V::Num(y)) => x.partial_cmp(&y),
        (V::Str(x), V::Str(y)) => Some(x.cmp(y)),
        (V::Bool(x), V::Bool(y)) => Some(x.cmp(&y)),
        _ => None,
    }
}

/// `crate::filter`'s `compare`.
fn compare(op: CompareOp, a: V<'_>, b: V<'_>) -> bool {
    use std::cmp::Ordering::*;
    match op {
        CompareOp::Eq => equals(a, b),
        CompareOp::Ne => !matches!(a, V::Null) && !matches!(b, V::Null) && !equals(a, b),
        CompareOp::Lt => partial_cmp(a, b) == Some(Less),
        CompareOp::Le => matches!(partial_cmp(a, b), Some(Less | Equal)),
        CompareOp::Gt => partial_cmp(a, b) == Some(Greater),
        CompareOp::Ge => matches!(partial_cmp(a, b), Some(Greater | Equal)),
    }
}

/// Evaluates a node with the column's value `cell`, as `crate::filter::eval`.
fn eval<'a>(n: &'a Node, cell: V<'a>) -> V<'a> {
    match n {
        Node::Or(l, r) => V::Bool(truthy(eval(l, cell)) || truthy(eval(r, cell))),
        Node::And(l, r) => V::Bool(truthy(eval(l, cell)) && truthy(eval(r, cell))),
        Node::Not(x) => V::Bool(!truthy(eval(x, cell))),
        Node::Compare(op, l, r) => V::Bool(compare(*op, value(l, cell), value(r, cell))),
        Node::Cell => cell,
        Node::Lit(l) => l.v(),
        Node::Contains(args, finder) => {
            V::Bool(match (arg(args, 0, cell), arg(args, 1, cell), finder) {
                (V::Str(s), _, Some(f)) => f.find(s).is_some(),
                (V::Str(s), V::Str(t), None) => memchr::memmem::find(s, t).is_some(),
                _ => false,
            })
        }
        Node::StartsWith(args) => V::Bool(match (arg(args, 0, cell), arg(args, 1, cell)) {
            (V::Str(s), V::Str(t)) => s.starts_with(t),
            _ => false,
        }),
        Node::EndsWith(args) => V::Bool(match (arg(args, 0, cell), arg(args, 1, cell)) {
            (V::Str(s), V::Str(t)) => s.ends_with(t),
            _ => false,
        }),
        Node::In(args, list) => {
            let first = arg(args, 0, cell);
            V::Bool(
                list.as_ref()
                    .is_some_and(|items| items.iter().any(|i| equals(first, i.v()))),
            )
        }
        Node::IsNull(args) => V::Bool(matches!(arg(args, 0, cell), V::Null)),
        Node::IsNotNull(args) => V::Bool(!matches!(arg(args, 0, cell), V::Null)),
    }
}

/// A node's value: the column's and literals without a call (the usual
/// operands, read once per instance of the type).
#[inline(always)]
fn value<'a>(n: &'a Node, cell: V<'a>) -> V<'a> {
    match n {
        Node::Cell => cell,
        Node::Lit(l) => l.v(),
        _ => eval(n, cell),
    }
}

/// A call's `i`-th argument (`null` when missing, as in `crate::filter`).
#[inline(always)]
fn arg<'a>(args: &'a [Node], i: usize, cell: V<'a>) -> V<'a> {
    args.get(i).map_or(V::Null, |a| value(a, cell))
}

impl Executor<'_, '_> {
    /// A lone type clause's FILTERs `filters`, when they compile to a
    /// [`ColumnFilter`], run over the column (see the module docs): the
    /// rows in id order, at most `cap`. `None` when they do not compile,
    /// or without a cap over more than [`ROW_BUDGET`] instances (the scan
    /// reports that).
    pub(super) fn column_scan(
        &mut self,
        group: &CompiledGroup,
        filters: &[usize],
        input: &Row,
        (var, type_id): (Slot, u32),
        cap: Option<usize>,
    ) -> Result<Option<Vec<Row>>> {
        let slots = &self.slots;
        let Some(column) = ColumnFilter::compile(group, filters, var, &|n| slots.get(n).copied())
        else {
            return Ok(None);
        };
        if cap.is_none() && self.graph.count_type(type_id)? > ROW_BUDGET as u64 {
            return Ok(None);
        }
        let mut out = Vec::new();
        let mut after = None;
        if let Some(cap) = cap {
            let graph = self.graph;
            let mut instances = graph.concepts_of_type_iter(type_id)?;
            for _ in 0..LAZY {
                if out.len() >= cap {
                    return Ok(Some(out));
                }
                let Some(c) = instances.next() else {
                    return Ok(Some(out));
                };
                let c = c?;
                after = Some(c);
                self.charge(1)?;
                let row = self.row_if(group, filters, input, var, c)?;
                out.extend(row);
            }
            if out.len() >= cap {
                return Ok(Some(out));
            }
        }
        for c in self.column_ids(&column, group, filters, input, (var, type_id), after)? {
            if cap.is_some_and(|cap| out.len() >= cap) {
                break;
            }
            let mut row = input.clone();
            row[var] = Val::Concept(c);
            out.push(row);
        }
        Ok(Some(out))
    }

    /// `input` with `c` in `var`, if the FILTERs hold for it (read from
    /// the record, as the scan reads it).
    fn row_if(
        &mut self,
        group: &CompiledGroup,
        filters: &[usize],
        input: &Row,
        var: Slot,
        c: ConceptId,
    ) -> Result<Option<Row>> {
        let mut row = input.clone();
        row[var] = Val::Concept(c);
        for &f in filters {
            self.charge(1)?;
            if !self.holds(&group.filters[f].0, &row)? {
                return Ok(None);
            }
        }
        Ok(Some(row))
    }

    /// The instances after `after` the FILTERs keep, in id order.
    fn column_ids(
        &mut self,
        column: &ColumnFilter,
        group: &CompiledGroup,
        filters: &[usize],
        input: &Row,
        (var, type_id): (Slot, u32),
        after: Option<ConceptId>,
    ) -> Result<Vec<ConceptId>> {
        let graph = self.graph;
        let (mut kept, mut undecided, mut valued) = (Vec::new(), Vec::new(), Vec::new());
        if let Some(key_id) = graph.key_id(&column.key)? {
            let visited = graph.attr_column(type_id, column.kind, key_id, &mut |id, cell| {
                if after.is_some_and(|a| id <= a) {
                    return;
                }
                match column.decide(cell) {
                    Some(true) => kept.push(id),
                    Some(false) => {}
                    None => undecided.push(id),
                }
                if column.holds_for_null {
                    valued.push(id);
                }
            })?;
            self.charge(visited)?;
        }
        for c in undecided {
            if self.row_if(group, filters, input, var, c)?.is_some() {
                kept.push(c);
            }
        }
        if column.holds_for_null {
            // The instances without a value pass too.
            valued.sort_unstable();
            for c in graph.concepts_of_type_after(type_id, after)? {
                let c = c?;
                self.charge(1)?;
                if valued.binary_search(&c).is_err() {
                    kept.push(c);
                }
            }
        }
        kept.sort_unstable();
        Ok(kept)
    }
}

//! FIND: the result of a query from the solution rows of its WHERE block.
//! With aggregates the rows are grouped on the plain FIND expressions
//! (implicit GROUP BY, groups in first-seen order); then ORDER BY sorts,
//! LIMIT and a keyed cursor cut one page, and the page is shaped into
//! columns. `COUNT` of a whole type is read from its counter instead.

use std::cmp::Ordering;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use kip_lang::ast::*;
use serde_json::{Number, Value as Json, json};

use crate::explain::Explain;
use crate::graph::{Graph, Result};
use crate::{cursor, value};

use super::compile::{Vars, compile};
use super::exec::{Executor, solve_explained};
use super::read::path_value;
use super::row::{Row, Val};

/// Rows a FIND returns without LIMIT.
pub const DEFAULT_PAGE: u64 = 1_000;

/// The result of a FIND: the `result` value and the `next_cursor`, if any.
#[derive(Debug)]
pub struct FindOutput {
    pub result: Json,
    pub next_cursor: Option<String>,
    /// The profile, when `explain` was asked for.
    pub explain: Option<Explain>,
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
    // Without ORDER BY or aggregates a page needs its rows and one more (to
    // know a next page exists), so a lone type clause may stop early.
    let has_aggregate = query
        .find
        .iter()
        .chain(query.order_by.iter().map(|k| &k.expr))
        .any(|p| matches!(p, Projection::Aggregate(_)));
    // (A cursor that does not decode is reported by the paging below, after
    // the rows, as it always was.)
    let row_cap = match Page::window(query, source, secret) {
        Ok((offset, limit)) if !has_aggregate && query.order_by.is_empty() => {
            usize::try_from(offset.saturating_add(limit).saturating_add(1)).ok()
        }
        _ => None,
    };
    let (exec, rows, explained) = solve_explained(graph, source, &query.where_, explain, row_cap)?;
    let rows = distinct_on_projected(&exec, &query.find, rows);
    let solution = Solution {
        graph,
        exec: &exec,
        rows: &rows,
    };
    // With nothing to group or sort, only the rows of the page are projected.
    let lazy = !has_aggregate && query.order_by.is_empty();
    let mut out = if has_aggregate {
        solution.grouped(query)?
    } else if lazy {
        Vec::new()
    } else {
        solution.ungrouped(query)?
    };
    order(&query.order_by, &mut out);
    let total = if lazy { rows.len() } else { out.len() } as u64;
    let page = Page::of(query, source, secret, total)?;
    let values = if lazy {
        solution.project(&query.find, &rows[page.start..page.end])?
    } else {
        out.drain(page.start..page.end).map(|r| r.values).collect()
    };
    Ok(FindOutput {
        result: columns(&query.find, &values),
        next_cursor: page.next_cursor,
        explain: explained,
    })
}

/// Collapses the solutions that bind every variable the FIND projects
/// identically (RC10 §3.3), keeping first-seen order: `FIND(?p)` over
/// `(?s, ?p, ?o)` lists each predicate once. Solutions are compared by
/// their bindings, not by the values projected from them, so two distinct
/// drugs that share a name stay two rows of `FIND(?d.name)`. This runs
/// before grouping, ordering and paging, so `LIMIT n` counts distinct
/// solutions and aggregates see each solution once.
fn distinct_on_projected(exec: &Executor<'_, '_>, find: &[Projection], rows: Vec<Row>) -> Vec<Row> {
    let mut projected: Vec<&str> = Vec::new();
    for p in find {
        let var = match p {
            Projection::Path(path) => &path.var.name,
            Projection::Aggregate(agg) => &agg.arg.var.name,
        };
        if !projected.contains(&var.as_str()) {
            projected.push(var);
        }
    }
    let mut seen = HashSet::with_capacity(rows.len());
    rows.into_iter()
        .filter(|row| {
            let key: Vec<Val> = projected.iter().map(|v| exec.val(row, v)).collect();
            seen.insert(key)
        })
        .collect()
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

/// One row of the output before paging: the FIND values and the ORDER BY
/// keys.
#[derive(Debug)]
struct OutRow {
    values: Vec<Json>,
    keys: Vec<Json>,
}

/// A group of the implicit GROUP BY: the values of the plain FIND
/// expressions and the solution rows that have them.
#[derive(Debug)]
struct Group {
    key: Vec<Json>,
    members: Vec<usize>,
}

/// The solution rows of a FIND and what reads them.
struct Solution<'a, 'g, 't> {
    graph: &'a Graph<'t>,
    exec: &'a Executor<'g, 't>,
    rows: &'a [Row],
}

impl Solution<'_, '_, '_> {
    /// The value of a dot path in one row.
    fn value(&self, path: &DotPath, row: &Row) -> Result<Json> {
        path_value(self.graph, path, self.exec.val(row, &path.var.name))
    }

    /// The values in one row of the dot paths among `exprs` (aggregates
    /// are left out).
    fn path_values<'p>(
        &self,
        exprs: impl IntoIterator<Item = &'p Projection>,
        row: &Row,
    ) -> Result<Vec<Json>> {
        let mut values = Vec::new();
        for p in exprs {
            if let Projection::Path(path) = p {
                values.push(self.value(path, row)?);
            }
        }
        Ok(values)
    }

    /// The FIND values of `rows`, for a page projected lazily.
    fn project(&self, find: &[Projection], rows: &[Row]) -> Result<Vec<Vec<Json>>> {
        rows.iter().map(|row| self.path_values(find, row)).collect()
    }

    /// One output row per solution row, when nothing aggregates.
    fn ungrouped(&self, query: &FindQuery) -> Result<Vec<OutRow>> {
        let mut out = Vec::with_capacity(self.rows.len());
        for row in self.rows {
            out.push(OutRow {
                values: self.path_values(&query.find, row)?,
                keys: self.path_values(query.order_by.iter().map(|k| &k.expr), row)?,
            });
        }
        Ok(out)
    }

    /// One output row per group, its aggregates computed over the group's
    /// members.
    fn grouped(&self, query: &FindQuery) -> Result<Vec<OutRow>> {
        let plain: Vec<&DotPath> = query
            .find
            .iter()
            .filter_map(|p| match p {
                Projection::Path(path) => Some(path),
                Projection::Aggregate(_) => None,
            })
            .collect();
        let groups = self.groups(&plain)?;
        let mut out = Vec::with_capacity(groups.len());
        for group in groups {
            out.push(self.group_row(query, group)?);
        }
        Ok(out)
    }

    /// Implicit GROUP BY on the plain FIND expressions, groups in
    /// first-seen order. A FIND of aggregates only has one group, even
    /// over no rows.
    fn groups(&self, plain: &[&DotPath]) -> Result<Vec<Group>> {
        let mut groups: Vec<Group> = Vec::new();
        let mut index: HashMap<GroupKey, usize> = HashMap::new();
        for (i, row) in self.rows.iter().enumerate() {
            let mut key = Vec::with_capacity(plain.len());
            for path in plain {
                key.push(self.value(path, row)?);
            }
            match index.entry(GroupKey(key)) {
                Entry::Occupied(e) => groups[*e.get()].members.push(i),
                Entry::Vacant(e) => {
                    groups.push(Group {
                        key: e.key().0.clone(),
                        members: vec![i],
                    });
                    e.insert(groups.len() - 1);
                }
            }
        }
        if groups.is_empty() && plain.is_empty() {
            groups.push(Group {
                key: Vec::new(),
                members: Vec::new(),
            });
        }
        Ok(groups)
    }

    /// The FIND values and ORDER BY keys of one group. A plain ORDER BY
    /// key is read from the group's first member.
    fn group_row(&self, query: &FindQuery, group: Group) -> Result<OutRow> {
        let mut plain_values = group.key.into_iter();
        let mut values = Vec::with_capacity(query.find.len());
        for p in &query.find {
            values.push(match p {
                Projection::Path(_) => plain_values.next().unwrap_or(Json::Null),
                Projection::Aggregate(a) => self.aggregate(a, &group.members)?,
            });
        }
        let mut keys = Vec::with_capacity(query.order_by.len());
        for k in &query.order_by {
            keys.push(match &k.expr {
                Projection::Aggregate(a) => self.aggregate(a, &group.members)?,
                Projection::Path(path) => match group.members.first() {
                    Some(&m) => self.value(path, &self.rows[m])?,
                    None => Json::Null,
                },
            });
        }
        Ok(OutRow { values, keys })
    }

    /// An aggregate over the member rows of a group.
    fn aggregate(&self, agg: &Aggregate, members: &[usize]) -> Result<Json> {
        if agg.func == AggregateFunc::Count && agg.arg.field == Field::Whole {
            // Counting bindings needs no element decoded.
            let vals = members
                .iter()
                .map(|&m| self.exec.val(&self.rows[m], &agg.arg.var.name))
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
            let v = self.value(&agg.arg, &self.rows[m])?;
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
}

/// Sorts the output by its ORDER BY keys. The sort is stable: ties keep
/// group (or solution) order. `null` sorts last in both directions (RC9
/// §3.5), so rows without a value (an OPTIONAL miss, a UNION branch that
/// does not bind the key) end up after every row that has one.
fn order(order_by: &[OrderKey], out: &mut [OutRow]) {
    if order_by.is_empty() {
        return;
    }
    out.sort_by(|a, b| {
        for (i, k) in order_by.iter().enumerate() {
            let (x, y) = (&a.keys[i], &b.keys[i]);
            let o = match (x.is_null(), y.is_null()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    let o = value::total_cmp(x, y);
                    if k.descending { o.reverse() } else { o }
                }
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
}

/// The rows one page shows, `start..end` of the output, and the cursor to
/// the next page.
#[derive(Debug)]
struct Page {
    start: usize,
    end: usize,
    next_cursor: Option<String>,
}

impl Page {
    /// The page a query asks for (after its CURSOR, at most LIMIT rows) of
    /// `total` output rows.
    fn of(query: &FindQuery, source: &str, secret: u64, total: u64) -> Result<Page> {
        let (offset, limit) = Page::window(query, source, secret)?;
        let start = offset.min(total);
        let end = start.saturating_add(limit).min(total);
        // Printing the query for its fingerprint costs more than a small
        // FIND itself: only a page with a next one needs it.
        let next_cursor =
            (end < total).then(|| cursor::encode(secret, &Page::fingerprint(query), end));
        Ok(Page {
            start: start as usize,
            end: end as usize,
            next_cursor,
        })
    }

    /// A cursor is bound to the query without its LIMIT and CURSOR.
    fn fingerprint(query: &FindQuery) -> String {
        let mut fingerprint_query = query.clone();
        fingerprint_query.limit = None;
        fingerprint_query.cursor = None;
        Command::Find(fingerprint_query).to_string()
    }

    /// The offset (from the CURSOR) and the LIMIT a query asks for.
    fn window(query: &FindQuery, source: &str, secret: u64) -> Result<(u64, u64)> {
        let offset = match &query.cursor {
            Some(arg) => {
                let token = arg.lit().map(String::as_str).unwrap_or_default();
                cursor::decode(secret, &Page::fingerprint(query), token)
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
        Ok((offset, limit))
    }
}

/// The `result` value: one column per FIND expression, a single column on
/// its own. A FIND of aggregates only gives the values themselves.
fn columns(find: &[Projection], page: &[Vec<Json>]) -> Json {
    let aggregate_only = find.iter().all(|p| matches!(p, Projection::Aggregate(_)));
    let columns: Vec<Json> = (0..find.len())
        .map(|c| {
            if aggregate_only {
                page.first().map_or(Json::Null, |r| r[c].clone())
            } else {
                Json::Array(page.iter().map(|r| r[c].clone()).collect())
            }
        })
        .collect();
    if columns.len() == 1 {
        columns.into_iter().next().unwrap_or(Json::Null)
    } else {
        Json::Array(columns)
    }
}

/// The key of a group: the values of its plain FIND expressions. Two keys
/// are equal exactly when their values serialize to the same JSON text,
/// which is how groups have always been told apart: object members compare
/// in their order, and numbers by representation (`1`, `1.0` and `-0.0`
/// are three groups).
#[derive(Debug)]
struct GroupKey(Vec<Json>);

impl PartialEq for GroupKey {
    fn eq(&self, other: &GroupKey) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| same_text(a, b))
    }
}

impl Eq for GroupKey {}

impl Hash for GroupKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.len().hash(state);
        for v in &self.0 {
            hash_text(v, state);
        }
    }
}

/// A JSON number as its text tells it apart: a non-negative integer, a
/// negative one, or a float by its bits (the shortest text of a float is
/// unique to it, `-0.0` included).
#[derive(PartialEq, Eq, Hash)]
enum NumberKey {
    Unsigned(u64),
    Negative(i64),
    Float(u64),
}

impl NumberKey {
    fn of(n: &Number) -> NumberKey {
        if let Some(u) = n.as_u64() {
            NumberKey::Unsigned(u)
        } else if let Some(i) = n.as_i64() {
            NumberKey::Negative(i)
        } else {
            NumberKey::Float(n.as_f64().unwrap_or_default().to_bits())
        }
    }
}

/// Whether `a` and `b` serialize to the same JSON text.
fn same_text(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Null, Json::Null) => true,
        (Json::Bool(x), Json::Bool(y)) => x == y,
        (Json::Number(x), Json::Number(y)) => NumberKey::of(x) == NumberKey::of(y),
        (Json::String(x), Json::String(y)) => x == y,
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_text(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((ka, va), (kb, vb))| ka == kb && same_text(va, vb))
        }
        _ => false,
    }
}

/// A hash consistent with [`same_text`].
fn hash_text<H: Hasher>(v: &Json, state: &mut H) {
    match v {
        Json::Null => 0u8.hash(state),
        Json::Bool(b) => (1u8, b).hash(state),
        Json::Number(n) => (2u8, NumberKey::of(n)).hash(state),
        Json::String(s) => (3u8, s).hash(state),
        Json::Array(a) => {
            (4u8, a.len()).hash(state);
            a.iter().for_each(|x| hash_text(x, state));
        }
        Json::Object(m) => {
            (5u8, m.len()).hash(state);
            for (k, x) in m {
                k.hash(state);
                hash_text(x, state);
            }
        }
    }
}

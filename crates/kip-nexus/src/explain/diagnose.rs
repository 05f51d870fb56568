//! Why an empty result is empty. After an `explain` run that found no rows,
//! [`Executor::diagnose`] first probes each clause of the top-level block
//! alone (a clause that matches nothing by itself is the cause, and the
//! reason says why: a name under another type, a near miss in case or
//! spelling, a hop range that misses the links…); if every clause matches
//! on its own, it looks at the first step that emptied the rows, from the
//! copy of its input the trace kept. Each cause carries a fix where one
//! exists.
//!
//! Diagnosis stays cheap: it runs single clauses from an empty row, on
//! executors with a fresh work meter, and probes at most a few hundred of
//! the failing step's input rows.

use kip_lang::ast::*;
use kip_store::ElementId;

use crate::graph::{Graph, Result};
use crate::kql::{Atom, CompiledGroup, Executor, Failed, PredTest, Row, Slot, Val, path_value};

use super::report::{Cause, Fix};
use crate::pattern::Range;

/// A clause of the source, for the causes that point at it.
struct Clause<'s> {
    source: &'s str,
    span: Span,
    /// The clause as written.
    text: String,
}

impl<'s> Clause<'s> {
    fn new(source: &'s str, span: Span) -> Clause<'s> {
        Clause {
            source,
            span,
            text: source
                .get(span.start..span.end)
                .unwrap_or_default()
                .to_owned(),
        }
    }

    fn cause(&self, reason: &'static str, message: String, fix: Option<Fix>) -> Cause {
        Cause {
            clause: Range::of(self.source, self.span),
            text: self.text.clone(),
            reason,
            message,
            fix,
        }
    }

    /// The clause with the quoted string `from` replaced by `to` (quoted),
    /// if the clause spells `from` that way.
    fn replace(&self, from: &str, to: &str, label: String) -> Option<Fix> {
        let quoted_from = serde_json::to_string(from).unwrap_or_default();
        let quoted_to = serde_json::to_string(to).unwrap_or_default();
        self.text.contains(&quoted_from).then(|| Fix {
            range: Range::of(self.source, self.span),
            replacement: self.text.replacen(&quoted_from, &quoted_to, 1),
            label,
        })
    }
}

impl Executor<'_, '_> {
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
        match what {
            Failed::Atom(i) => {
                let (atom, span) = &group.atoms[i];
                causes.push(self.join_failed(atom, *span, &input, &source)?);
            }
            Failed::Filter(i) => {
                let (expr, _, span) = &group.filters[i];
                let clause = Clause::new(&source, *span);
                causes.push(self.filter_removed_all(expr, &input, &clause)?);
            }
            Failed::Not => {
                let span = self
                    .trace
                    .as_ref()
                    .and_then(|t| t.steps.get(step))
                    .map(|s| Span::new(s.clause.offset, s.clause.offset + s.clause.length))
                    .unwrap_or_default();
                causes.push(Clause::new(&source, span).cause(
                    "not_removed_all",
                    format!(
                        "this NOT removed all {} rows: every candidate matches the excluded pattern",
                        input.len()
                    ),
                    None,
                ));
            }
            Failed::Other => {}
        }
        Ok(causes)
    }

    /// A FILTER that removed every row: the values its dot paths saw in
    /// the first rows, and a loosened comparison where there is one.
    fn filter_removed_all(&self, expr: &Expr, input: &[Row], clause: &Clause<'_>) -> Result<Cause> {
        let source = clause.source;
        let mut paths = Vec::new();
        collect_paths(expr, &mut paths);
        let mut seen = Vec::new();
        for path in &paths {
            let mut values = Vec::new();
            for row in input.iter().take(5) {
                values
                    .push(path_value(self.graph, path, self.val(row, &path.var.name))?.to_string());
            }
            let written = source
                .get(path.span.start..path.span.end)
                .unwrap_or_default();
            seen.push(format!("{written} = {}", values.join(", ")));
        }
        let fix = match self.case_fix(expr, input, source)? {
            Some(fix) => Some(fix),
            None => self.loosen_filter(expr, input, source)?,
        };
        Ok(clause.cause(
            "filter_removed_all",
            format!(
                "this FILTER removed all {} rows that reached it; values seen: {}",
                input.len(),
                seen.join("; ")
            ),
            fix,
        ))
    }

    /// For a FILTER that is one `==` of a dot path with a string that no
    /// row's value equals, but one equals up to case and spacing
    /// (`?d.name == "aspirin"`, the drug is "Aspirin"): the edit that
    /// writes the value as it is stored. `None` for any other shape.
    fn case_fix(&self, expr: &Expr, input: &[Row], source: &str) -> Result<Option<Fix>> {
        let Expr::Compare(CompareOp::Eq, left, right) = expr else {
            return Ok(None);
        };
        let (path, wanted, span) = match (left.as_ref(), right.as_ref()) {
            (Expr::Path(p), Expr::Value(Value::String(w), span))
            | (Expr::Value(Value::String(w), span), Expr::Path(p)) => (p, w, *span),
            _ => return Ok(None),
        };
        let norm = normalize(wanted);
        let mut found = None;
        for row in input {
            let v = path_value(self.graph, path, self.val(row, &path.var.name))?;
            let Some(text) = v.as_str() else { continue };
            if text == wanted {
                return Ok(None);
            }
            if found.is_none() && normalize(text) == norm {
                found = Some(text.to_owned());
            }
        }
        Ok(found.map(|same| Fix {
            range: Range::of(source, span),
            replacement: serde_json::to_string(&same).unwrap_or_default(),
            label: format!("Use '{same}' (values are exact: case and spacing matter)"),
        }))
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
        let clause = Clause::new(source, span);
        Ok(match atom {
            Atom::Concept { matcher, .. } => self.concept_missing(matcher, &clause)?,
            Atom::PropId { .. } => {
                clause.cause("unknown_name", "no proposition has this id".into(), None)
            }
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
                self.path_misses((*s, *o), preds, (*min, *max), *hops, &clause)?
            }
            Atom::Prop { pred, .. } => {
                let names = match pred {
                    PredTest::Names(ps) | PredTest::Path { preds: ps, .. } => ps
                        .iter()
                        .map(|p| g.predicate_name(*p).map(|n| n.to_string()))
                        .collect::<Result<Vec<_>>>()?,
                    PredTest::Var(_) => Vec::new(),
                };
                clause.cause(
                    "no_links",
                    format!("no {} link exists at all", names.join(" or ")),
                    None,
                )
            }
        })
    }

    /// Why a concept clause matches nothing: no instance of its type, no
    /// such id, or a name that exists under another type, differs in case
    /// or spacing, or is a typo away from one that exists.
    fn concept_missing(&self, matcher: &ConceptMatcher, clause: &Clause<'_>) -> Result<Cause> {
        let g = self.graph;
        let (ty, name) = match matcher {
            ConceptMatcher::TypeName { ty, name } => {
                (ty.lit().cloned(), name.lit().cloned().unwrap_or_default())
            }
            ConceptMatcher::Name(name) => (None, name.lit().cloned().unwrap_or_default()),
            ConceptMatcher::Type(ty) => {
                let ty = ty.lit().cloned().unwrap_or_default();
                return Ok(clause.cause(
                    "no_instances",
                    format!("no concept of type {ty} exists yet"),
                    None,
                ));
            }
            ConceptMatcher::Id(id) => {
                let id = id.lit().cloned().unwrap_or_default();
                return Ok(clause.cause(
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
                return Ok(clause.cause(
                    "name_under_other_type",
                    format!("no {ty} is named '{name}', but a {other} is"),
                    clause.replace(ty, other, format!("Use type {other}")),
                ));
            }
        }
        // The same name with different case or spacing, or a typo.
        let candidates = name_candidates(g, ty.as_deref(), &name)?;
        let norm = normalize(&name);
        if let Some(same) = candidates.iter().find(|c| normalize(c) == norm) {
            return Ok(clause.cause(
                "name_differs_in_case_or_spacing",
                format!(
                    "'{name}' does not exist, but '{same}' does (names are exact: case and spacing matter)"
                ),
                clause.replace(&name, same, format!("Use '{same}'")),
            ));
        }
        let similar = kip_lang::suggest::similar(&name, candidates.iter().map(String::as_str));
        if let Some(best) = similar.first() {
            return Ok(clause.cause(
                "similar_name",
                format!("'{name}' does not exist; did you mean '{best}'?"),
                clause.replace(&name, best, format!("Use '{best}'")),
            ));
        }
        let what = ty.map_or_else(|| "concept".to_owned(), |t| t.to_string());
        Ok(clause.cause(
            "unknown_name",
            format!("no {what} named '{name}' exists"),
            None,
        ))
    }

    /// Why a path clause whose links exist matches nothing: walks of other
    /// lengths (1 to 3 more than the range's end) exist, or none does here.
    fn path_misses(
        &self,
        (s, o): (Slot, Slot),
        preds: &[u32],
        (min, max): (u32, Option<u32>),
        hops: Span,
        clause: &Clause<'_>,
    ) -> Result<Cause> {
        // The links exist; the hop range misses them.
        let wider = max.map_or(min + 3, |m| m + 3);
        let mut probe = self.probe();
        let mut out = Vec::new();
        probe.apply_path(&probe.empty_row(), s, preds, 1, Some(wider), o, &mut out)?;
        let names = predicate_names(self.graph, preds)?;
        let range = match max {
            Some(m) if m == min => format!("{min}"),
            Some(m) => format!("{min} to {m}"),
            None => format!("{min} or more"),
        };
        if out.is_empty() {
            return Ok(clause.cause(
                "no_join",
                format!("no walk of {range} {names} links exists here"),
                None,
            ));
        }
        let fix = Fix {
            range: Range::of(clause.source, hops),
            replacement: format!("{{1,{wider}}}"),
            label: format!("Allow 1 to {wider} hops"),
        };
        Ok(clause.cause(
            "path_too_short",
            format!(
                "no walk of exactly {range} {names} links exists, but shorter or longer ones do"
            ),
            Some(fix),
        ))
    }

    /// Why a clause joined with the rows before it gives nothing.
    fn join_failed(&self, atom: &Atom, span: Span, input: &[Row], source: &str) -> Result<Cause> {
        let clause = Clause::new(source, span);
        match atom {
            Atom::Prop {
                s, o, pred, ends, ..
            } => self.link_failed((*s, *o), pred, *ends, input, &clause),
            Atom::Concept { var, matcher, .. } => self.type_mismatch(*var, matcher, input, &clause),
            Atom::PropId { .. } => Ok(clause.cause(
                "no_join",
                "the proposition does not join the earlier rows".into(),
                None,
            )),
        }
    }

    /// Why a proposition clause finds no link for the earlier rows: the link
    /// runs the other way, or a path needs more hops, or it is just absent.
    fn link_failed(
        &self,
        (s, o): (Slot, Slot),
        pred: &PredTest,
        ends: (Span, Span),
        input: &[Row],
        clause: &Clause<'_>,
    ) -> Result<Cause> {
        let preds: Vec<u32> = match pred {
            PredTest::Names(ps) | PredTest::Path { preds: ps, .. } => ps.clone(),
            PredTest::Var(_) => Vec::new(),
        };
        let names = predicate_names(self.graph, &preds)?;
        if self.linked_backwards((s, o), &preds, input)? {
            return Ok(clause.cause(
                "opposite_direction",
                format!("the {names} link exists, but in the opposite direction"),
                swap_ends(clause, ends),
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
                probe.apply_path(row, s, preds, *min, Some(longer), o, &mut out)?;
                if !out.is_empty() {
                    let fix = Fix {
                        range: Range::of(clause.source, *hops),
                        replacement: format!("{{{min},{longer}}}"),
                        label: format!("Allow up to {longer} hops"),
                    };
                    return Ok(clause.cause(
                        "path_too_short",
                        format!(
                            "no path of {min} to {max} {names} links exists, but a longer one does"
                        ),
                        Some(fix),
                    ));
                }
            }
        }
        Ok(clause.cause(
            "no_join",
            format!(
                "none of the {} rows produced by the earlier clauses has a link {names} here",
                input.len()
            ),
            None,
        ))
    }

    /// Whether, for one of the first 200 input rows, a link of `preds`
    /// runs from the object's binding to the subject's.
    fn linked_backwards(&self, (s, o): (Slot, Slot), preds: &[u32], input: &[Row]) -> Result<bool> {
        let g = self.graph;
        let mut reversed = false;
        for row in input.iter().take(200) {
            let (sv, ov) = (row[s].element(), row[o].element());
            for &p in preds {
                let found = match (sv, ov) {
                    (Some(a), Some(b)) => !g.propositions(Some(b), Some(p), Some(a))?.is_empty(),
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
        Ok(reversed)
    }

    /// A concept clause that rejects what the earlier clauses bound its
    /// variable to: the types they bound.
    fn type_mismatch(
        &self,
        var: Slot,
        matcher: &ConceptMatcher,
        input: &[Row],
        clause: &Clause<'_>,
    ) -> Result<Cause> {
        let g = self.graph;
        let mut types = Vec::new();
        for row in input.iter().take(50) {
            if let Val::Concept(c) = row[var]
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
        Ok(clause.cause(
            "type_mismatch",
            format!(
                "the earlier clauses bind this variable to {} concepts, which this clause ({wanted}) does not match",
                types.join(", ")
            ),
            None,
        ))
    }
}

/// The clause with its subject and object swapped, when both lie inside it
/// in that order.
fn swap_ends(clause: &Clause<'_>, (a, b): (Span, Span)) -> Option<Fix> {
    let (source, span) = (clause.source, clause.span);
    (a.end <= b.start && span.start <= a.start && b.end <= span.end).then(|| {
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
    })
}

/// Predicate names joined with "or".
fn predicate_names(g: &Graph<'_>, preds: &[u32]) -> Result<String> {
    Ok(preds
        .iter()
        .map(|p| g.predicate_name(*p).map(|n| n.to_string()))
        .collect::<Result<Vec<_>>>()?
        .join(" or "))
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

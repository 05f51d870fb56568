//! The `explain` profile of an evaluation: one [`Step`] per step of the
//! top-level block (rows in and out, time, a sample of the rows after it),
//! and the first step that emptied the rows with a bounded copy of its
//! input, which [`crate::explain`] reads to say why a result is empty.

use std::time::Instant;

use kip_lang::ast::Span;
use kip_store::ElementId;
use serde_json::{Value as Json, json};

use crate::explain::{self, Range, Step};

use super::compile::{Atom, PredTest, Slot};
use super::exec::{Executor, Row, Val};

/// The profile being recorded for `explain`.
#[derive(Debug, Default)]
pub struct Trace {
    pub source: String,
    pub steps: Vec<Step>,
    /// The first step that turned rows into none: its index in `steps`,
    /// what it was, and (a bounded copy of) the rows it received.
    pub(crate) failed: Option<(usize, Failed, Vec<Row>)>,
}

/// The kind of step that emptied the rows: an atom or a FILTER of the
/// block (by index), a NOT, or something diagnosis does not look into.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Failed {
    Atom(usize),
    Filter(usize),
    Not,
    Other,
}

/// The `kind` of an atom's step.
pub(super) fn atom_kind(atom: &Atom) -> &'static str {
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

/// A bounded copy of a step's input rows, kept while tracing so that a
/// step that empties the rows can be diagnosed.
pub(super) fn input_copy(tracing: bool, rows: &[Row]) -> Option<Vec<Row>> {
    (tracing && !rows.is_empty()).then(|| rows.iter().take(200).cloned().collect())
}

impl Executor<'_, '_> {
    pub(super) fn step(
        &self,
        kind: &'static str,
        span: Span,
        rows_in: usize,
        rows: &[Row],
        started: Instant,
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

    pub(super) fn record(&mut self, step: Step, input: Option<Vec<Row>>, what: Failed) {
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
}

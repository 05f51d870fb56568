//! Recording the `explain` profile: the executor's steps, their sample
//! rows and the first step that emptied the rows (the profile's shapes are
//! in `trace.rs`, which the executor holds).

use std::time::Instant;

use kip_lang::ast::Span;
use kip_store::ElementId;
use serde_json::{Value as Json, json};

use crate::explain::{self, Range, Step};

use super::compile::Slot;
use super::exec::Executor;
use super::row::{Row, Val};
use super::trace::Failed;

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

//! `explain`: the profile of a query's evaluation and, when it returns no
//! rows, the reason why (issue 6 of the project; an extension of
//! `execute_kip` enabled with `"explain": true`).
//!
//! The executor records one [`Step`] per evaluation step of the top-level
//! WHERE block — each concept or proposition clause in the order the
//! planner ran it, each FILTER when it ran, each NOT, OPTIONAL and UNION —
//! with the clause's source range, the index used, estimated and actual
//! rows, time, and a bounded sample of the rows after it. When the result
//! is empty, [`diagnose`] names the clauses responsible with a reason a
//! person understands and, where it can, a suggested edit. Diagnosis stays
//! cheap: it runs single clauses alone and probes the one failing step.

use serde::Serialize;
use serde_json::{Map, Value as Json, json};

use kip_lang::Position;
use kip_lang::ast::Span;

/// A source range as the UI needs it to point at a clause.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Range {
    pub line: usize,
    pub column: usize,
    pub offset: usize,
    pub length: usize,
}

impl Range {
    pub fn of(source: &str, span: Span) -> Range {
        let p = Position::of(source, span.start);
        Range {
            line: p.line,
            column: p.column,
            offset: span.start,
            length: span.len(),
        }
    }
}

/// One evaluation step of the top-level WHERE block.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// 1-based position in evaluation order.
    pub order: usize,
    /// `concept`, `proposition`, `path`, `filter`, `not`, `optional` or `union`.
    pub kind: &'static str,
    pub clause: Range,
    /// The clause as written.
    pub text: String,
    /// The index the step read, e.g. `type index`, `spo`, `pos`, `osp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
    /// The planner's estimate of the rows after the step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_rows: Option<f64>,
    pub rows_in: usize,
    pub rows_out: usize,
    pub time_ms: f64,
    /// Step-specific counts: rows removed by NOT, extended and padded by
    /// OPTIONAL, rows per UNION branch, nodes visited and depth of a path.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub detail: Map<String, Json>,
    /// Up to [`SAMPLE`] rows after the step: variable → bound value.
    pub sample: Vec<Map<String, Json>>,
}

/// Rows kept per step in the sample.
pub const SAMPLE: usize = 20;

/// Why a query returned nothing: one entry per responsible clause.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Cause {
    pub clause: Range,
    pub text: String,
    /// A machine-readable reason: `unknown_name`, `name_under_other_type`,
    /// `name_differs_in_case_or_spacing`, `similar_name`, `no_instances`,
    /// `no_links`, `opposite_direction`, `path_too_short`, `no_join`,
    /// `filter_removed_all`, `not_removed_all`, `type_mismatch`.
    pub reason: &'static str,
    /// The reason in words.
    pub message: String,
    /// A suggested replacement for the clause's text, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
}

/// Replace `range` of the source by `replacement`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Fix {
    pub range: Range,
    pub replacement: String,
    /// What the fix does, for a button label.
    pub label: String,
}

/// The `explain` member of a FIND response.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Explain {
    pub plan: Vec<Step>,
    pub rows: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub why_empty: Vec<Cause>,
}

impl Explain {
    pub fn to_json(&self) -> Json {
        serde_json::to_value(self).unwrap_or_else(|_| json!(null))
    }
}

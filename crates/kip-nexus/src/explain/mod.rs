//! `explain`: the profile of a query's evaluation and, when it returns no
//! rows, the reason why (issue 6 of the project; an extension of
//! `execute_kip` enabled with `"explain": true`).
//!
//! The executor records one [`Step`] per evaluation step of the top-level
//! WHERE block — each concept or proposition clause in the order the
//! planner ran it, each FILTER when it ran, each NOT, OPTIONAL and UNION —
//! with the clause's source range, the index used, estimated and actual
//! rows, time, and a bounded sample of the rows after it. When the result
//! is empty, [`Executor::diagnose`](crate::kql::Executor::diagnose) (in
//! `diagnose.rs`) names the clauses responsible with a reason a person
//! understands and, where it can, a suggested edit. Diagnosis stays cheap:
//! it runs single clauses alone and probes the one failing step.
//!
//! This module holds the shapes and the explanation of a FIND the engine
//! refused ([`for_error`]); the executor records the steps.

use serde::Serialize;
use serde_json::{Map, Value as Json, json};

use kip_lang::ast::{Command, Span};
use kip_lang::{ErrorCode, KipError, Position};

use crate::pattern::{self, Pattern};

mod diagnose;

/// A source range as the UI needs it to point at a clause.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Step {
    /// 1-based position in evaluation order.
    pub order: usize,
    /// `concept`, `proposition`, `path`, `filter`, `not`, `optional` or `union`.
    #[cfg_attr(
        feature = "ts",
        ts(type = "'concept' | 'proposition' | 'path' | 'filter' | 'not' | 'optional' | 'union'")
    )]
    pub kind: &'static str,
    pub clause: Range,
    /// The clause as written.
    pub text: String,
    /// The index the step read, e.g. `type index`, `spo`, `pos`, `osp`.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
    /// The planner's estimate of the rows after the step.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_rows: Option<f64>,
    pub rows_in: usize,
    pub rows_out: usize,
    pub time_ms: f64,
    /// Step-specific counts: rows removed by NOT, extended and padded by
    /// OPTIONAL, rows per UNION branch, nodes visited and depth of a path.
    #[cfg_attr(
        feature = "ts",
        ts(as = "Option<std::collections::HashMap<String, f64>>", optional)
    )]
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub detail: Map<String, Json>,
    /// Up to [`SAMPLE`] rows after the step: variable → bound value (a
    /// concept as `{id, type, name}`, a link as `{id, predicate}`).
    #[cfg_attr(feature = "ts", ts(type = "Array<{ [key in string]?: JsonValue }>"))]
    pub sample: Vec<Map<String, Json>>,
}

/// Rows kept per step in the sample.
pub const SAMPLE: usize = 20;

/// Why a query returned nothing: one entry per responsible clause.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Cause {
    pub clause: Range,
    pub text: String,
    /// A machine-readable reason: `unknown_name`, `name_under_other_type`,
    /// `name_differs_in_case_or_spacing`, `similar_name`, `no_instances`,
    /// `no_links`, `opposite_direction`, `path_too_short`, `no_join`,
    /// `filter_removed_all`, `not_removed_all`, and for a query the engine
    /// refused, `unknown_type` and `unknown_predicate`.
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub reason: &'static str,
    /// The reason in words.
    pub message: String,
    /// A suggested replacement for the clause's text, when there is one.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
}

/// Replace `range` of the source by `replacement`.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Fix {
    pub range: Range,
    pub replacement: String,
    /// What the fix does, for a button label.
    pub label: String,
}

/// The `explain` member of a FIND response (and of the error response of
/// a FIND the engine refused, with an empty plan).
#[derive(Clone, Debug, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Explain {
    /// The steps in the order they ran.
    pub plan: Vec<Step>,
    /// Solution rows before duplicates collapse and before paging.
    pub rows: usize,
    #[cfg_attr(feature = "ts", ts(as = "Option<Vec<Cause>>", optional))]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub why_empty: Vec<Cause>,
    /// The WHERE block as a diagram, with the same ranges as the steps.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<Pattern>,
}

impl Explain {
    pub fn to_json(&self) -> Json {
        serde_json::to_value(self).unwrap_or_else(|_| json!(null))
    }
}

/// `explain` for a FIND the engine refused before running it: the pattern,
/// and for an undefined type or predicate (`KIP_2001` at the name) the
/// clause it is in, as a cause with the closest defined name as the fix.
/// `None` when `source` is not one FIND.
pub fn for_error(source: &str, error: &KipError) -> Option<Explain> {
    let commands = kip_lang::parse(source).ok()?;
    let [Command::Find(query)] = commands.as_slice() else {
        return None;
    };
    let pattern = pattern::outline(source, &query.where_);
    let mut why_empty = Vec::new();
    if error.code == ErrorCode::TypeMismatch
        && let Some(at) = error.data.get("offset").and_then(Json::as_u64)
    {
        let at = at as usize;
        let len = error
            .data
            .get("length")
            .and_then(Json::as_u64)
            .map_or(0, |l| l as usize);
        if let Some(cause) = unknown_name_cause(source, &pattern, error, at, len) {
            why_empty.push(cause);
        }
    }
    Some(Explain {
        plan: Vec::new(),
        rows: 0,
        why_empty,
        pattern: Some(pattern),
    })
}

fn contains(r: &Range, at: usize) -> bool {
    r.offset <= at && at < r.offset + r.length
}

/// The cause for a name the schema does not define at `at..at+len`: in a
/// predicate position it is a predicate, in a concept clause a type.
fn unknown_name_cause(
    source: &str,
    pattern: &Pattern,
    error: &KipError,
    at: usize,
    len: usize,
) -> Option<Cause> {
    let on_edge = pattern
        .edges
        .iter()
        .filter(|e| contains(&e.predicate_range, at))
        .min_by_key(|e| e.clause.length)
        .map(|e| (e.clause.clone(), "unknown_predicate"));
    let on_node = || {
        pattern
            .nodes
            .iter()
            .flat_map(|n| n.clauses.iter())
            .filter(|r| contains(r, at))
            .min_by_key(|r| r.length)
            .map(|r| (r.clone(), "unknown_type"))
    };
    let (clause, reason) = on_edge.or_else(on_node)?;
    let written = source.get(at..at + len)?;
    let fix = error
        .data
        .get("suggestions")
        .and_then(Json::as_array)
        .and_then(|s| s.first())
        .and_then(Json::as_str)
        .map(|best| Fix {
            range: Range::of(source, Span::new(at, at + len)),
            replacement: if written.starts_with('"') {
                serde_json::to_string(best).unwrap_or_default()
            } else {
                best.to_owned()
            },
            label: format!("Use '{best}'"),
        });
    let what = if reason == "unknown_predicate" {
        "predicate"
    } else {
        "concept type"
    };
    let message = match &fix {
        Some(f) => format!(
            "the {what} {written} is not defined, so this clause can match nothing; did you mean {}?",
            f.replacement
        ),
        None => format!("the {what} {written} is not defined, so this clause can match nothing"),
    };
    Some(Cause {
        text: source
            .get(clause.offset..clause.offset + clause.length)
            .unwrap_or_default()
            .to_owned(),
        clause,
        reason,
        message,
        fix,
    })
}

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
use serde_json::{Value as Json, json};

use kip_lang::ast::{Command, Span};
use kip_lang::{ErrorCode, KipError};

use crate::pattern::{self, Pattern};

mod diagnose;
mod report;

pub use crate::pattern::Range;
pub use report::{Cause, Fix, SAMPLE, Step};

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

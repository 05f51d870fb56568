//! The shapes of an explanation: the steps of a plan, and the causes of an
//! empty result with their fixes. A leaf, so that the diagnosis and the
//! executor can use them without importing the explanation's assembly.

use serde::Serialize;
use serde_json::{Map, Value as Json};

use crate::pattern::Range;

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

//! The cognitive trace's operations (BRIEF §7): list and show entries,
//! record THINK / SAY entries, review flags, revert a write, import an
//! exported trace. Entries name [`crate::Api`]'s originator unless a request
//! says otherwise.

use kip_nexus::{Nexus, Reverted, RevertedTo, TraceEntry};
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorCode, KipCode};

/// `trace_entry`: one entry by id.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TraceEntryRequest {
    /// `T:…`.
    pub id: String,
}

/// `trace_add`: a THINK or SAY entry (an agent's reasoning, a curator's
/// note); `originator` defaults to the host's. The engine's own type.
pub use kip_nexus::NewTraceEntry as TraceAddRequest;

/// `trace_flag`: the review state of an entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TraceFlagRequest {
    pub id: String,
    /// Flags to set, e.g. `["Reviewed"]`.
    #[serde(default)]
    pub set: Vec<String>,
    /// Flags to clear.
    #[serde(default)]
    pub clear: Vec<String>,
}

/// `trace_revert`: undo the write an entry describes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TraceRevertRequest {
    pub id: String,
    /// Revert even though later writes touched the same elements.
    #[serde(default)]
    pub force: bool,
}

/// `trace_revert_to`: put an element back as entry `to` left it ("revert
/// to here" in an element's history).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TraceRevertToRequest {
    /// The element (`C:…` / `P:…`).
    pub element: String,
    /// An entry that touched it (`T:…`).
    pub to: String,
    /// Revert even though later writes touched other elements of those writes.
    #[serde(default)]
    pub force: bool,
}

/// `trace_import`: an exported trace, JSON Lines.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TraceImportRequest {
    pub jsonl: String,
}

/// What `trace_import` did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TraceImportResponse {
    pub imported: u64,
}

pub(crate) fn add(
    nexus: &Nexus,
    originator: &str,
    mut r: TraceAddRequest,
) -> Result<TraceEntry, ApiError> {
    r.originator.get_or_insert_with(|| originator.to_owned());
    Ok(nexus.trace_add(&r)?)
}

pub(crate) fn revert(
    nexus: &Nexus,
    originator: &str,
    r: &TraceRevertRequest,
) -> Result<Reverted, ApiError> {
    Ok(nexus.revert(&r.id, originator, r.force)?)
}

pub(crate) fn revert_to(
    nexus: &Nexus,
    originator: &str,
    r: &TraceRevertToRequest,
) -> Result<RevertedTo, ApiError> {
    Ok(nexus.revert_to(&r.element, &r.to, originator, r.force)?)
}

/// `list_logs`: the official KIP MCP bridge's log tool (BRIEF §5,
/// `specs/kip-v1.0-rc11/mcp-bridge/README.md`), the cognitive trace oldest
/// first, a page at a time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ListLogsRequest {
    /// Where the previous page ended (its `next_cursor`); none: the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cursor: Option<String>,
    /// Entries per page: default [`LIST_LOGS_DEFAULT`], at most
    /// [`LIST_LOGS_MAX`]; 0 answers an empty page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub limit: Option<u64>,
}

/// One page of `list_logs`: `{result: [entries…], next_cursor?}`.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ListLogsResponse {
    pub result: Vec<TraceEntry>,
    /// Pass as `cursor` for the next page; absent after the last entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub next_cursor: Option<String>,
}

/// `list_logs`' page size when none is asked for.
pub const LIST_LOGS_DEFAULT: u64 = 10;
/// `list_logs`' largest page.
pub const LIST_LOGS_MAX: u64 = 100;

/// The prefix of a `list_logs` cursor: `log:` and the id of the page's last entry.
const LOG_CURSOR: &str = "log:T:";

pub(crate) fn list_logs(nexus: &Nexus, r: &ListLogsRequest) -> Result<ListLogsResponse, ApiError> {
    let after = match &r.cursor {
        None => 0,
        Some(c) => c
            .strip_prefix(LOG_CURSOR)
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::Kip(KipCode::InvalidSyntax),
                    format!("`{c}` is not a cursor list_logs gave"),
                    "Pass the `next_cursor` of the previous page unchanged, or no cursor to start from the oldest entry.",
                )
                .with_data("cursor", serde_json::json!(c))
            })?,
    };
    let limit = r.limit.unwrap_or(LIST_LOGS_DEFAULT).min(LIST_LOGS_MAX);
    if limit == 0 {
        return Ok(ListLogsResponse {
            result: Vec::new(),
            next_cursor: r.cursor.clone(),
        });
    }
    let page = nexus.trace_list(&kip_nexus::TraceFilter {
        after: Some(format!("T:{after}")),
        limit: Some(limit as usize),
        ..kip_nexus::TraceFilter::default()
    })?;
    let next_cursor = match page.entries.last() {
        Some(last) if page.entries.len() as u64 == limit && last.id != page.last_id => {
            Some(format!("log:{}", last.id))
        }
        _ => None,
    };
    Ok(ListLogsResponse {
        result: page.entries,
        next_cursor,
    })
}

/// An entry as one line of JSON Lines (the seed's field names).
pub fn jsonl_line(entry: &TraceEntry) -> String {
    serde_json::to_string(entry).unwrap_or_default()
}

//! The cognitive trace's operations (BRIEF §7): list and show entries,
//! record THINK / SAY entries, review flags, revert a write, import an
//! exported trace. Entries name [`crate::Api`]'s originator unless a request
//! says otherwise.

use kip_nexus::{Nexus, Reverted, RevertedTo, TraceEntry};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

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

/// An entry as one line of JSON Lines (the seed's field names).
pub fn jsonl_line(entry: &TraceEntry) -> String {
    serde_json::to_string(entry).unwrap_or_default()
}

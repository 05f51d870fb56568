//! Time travel's wire shape (issue 31 §6): `diff`, what changed between
//! two times. Reads as of a past time go through `execute` (its `as_of`)
//! and `neighbourhood` (its `as_of`); the work is the engine's
//! (`Nexus::as_of`, `Nexus::diff`).

use kip_nexus::{Diff, Nexus};
use serde::{Deserialize, Serialize};

use crate::ApiError;

/// `diff`: what changed between `since` and `until` (now when absent),
/// each an ISO 8601 time or a trace entry id (`T:n`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct DiffRequest {
    pub since: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub until: Option<String>,
    /// At most this many elements per list (default 1,000, at most 10,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub limit: Option<u32>,
}

pub(crate) fn diff(nexus: &Nexus, r: &DiffRequest) -> Result<Diff, ApiError> {
    Ok(nexus.diff(&r.since, r.until.as_deref(), r.limit.map(|l| l as usize))?)
}

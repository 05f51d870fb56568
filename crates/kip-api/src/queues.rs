//! The curator's queues (issue 31): duplicate candidates, and the pairs
//! dismissed as not the same. The work is the engine's
//! (`kip_nexus::duplicates`); this module is its wire shape.

use kip_nexus::Nexus;
use kip_nexus::duplicates::Duplicate;
use serde::{Deserialize, Serialize};

use crate::ApiError;

/// `duplicates`: which types (all but the meta-types when absent), how many.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct DuplicatesRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub types: Option<Vec<String>>,
    /// At most this many, best first (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub limit: Option<u32>,
}

/// The candidates, best first.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DuplicatesResponse {
    pub candidates: Vec<Duplicate>,
}

/// `duplicates_dismiss`: two concepts (`C:…`) that are not the same.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct DismissRequest {
    pub a: String,
    pub b: String,
}

/// What `duplicates_dismiss` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DismissResponse {
    pub dismissed: bool,
}

/// The default number of candidates a request gets.
pub const DEFAULT_DUPLICATES: u32 = 100;

pub(crate) fn duplicates(
    nexus: &Nexus,
    r: &DuplicatesRequest,
) -> Result<DuplicatesResponse, ApiError> {
    let types = r.types.clone().unwrap_or_default();
    let limit = r.limit.unwrap_or(DEFAULT_DUPLICATES) as usize;
    Ok(DuplicatesResponse {
        candidates: nexus.duplicates(&types, limit.max(1))?,
    })
}

pub(crate) fn dismiss(nexus: &Nexus, r: &DismissRequest) -> Result<DismissResponse, ApiError> {
    nexus.dismiss_duplicate(&r.a, &r.b)?;
    Ok(DismissResponse { dismissed: true })
}

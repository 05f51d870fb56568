//! The contradictions queue (issue 31 §4) on the wire: the engine's
//! contradictions (`kip_nexus::contradictions`), and a curator's
//! resolution — keep one side, retire the others as superseded — previewed
//! by a dry run and applied as the host's traced write.

use kip_nexus::Access;
use kip_nexus::contradictions::{ContradictionQuery, Contradictions, Resolve, Resolved};
use serde::{Deserialize, Serialize};

use crate::{Api, ApiError};

/// `contradictions`: which subject types (all when absent), how many.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ContradictionsRequest {
    /// Only subjects of these concept types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub types: Option<Vec<String>>,
    /// At most this many listed (default 100); `total` counts them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub limit: Option<u32>,
}

/// `contradiction_resolve`: keep one link (`P:…`), retire the others of
/// the same subject and predicate, with the curator's reason; or keep one
/// side of an attribute contradiction (`attribute:C:…/KEY#earlier` or
/// `#current`) and retire the other.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ContradictionResolveRequest {
    pub keep: String,
    pub retire: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reason: Option<String>,
    /// Preview only: the write run and rolled back, its changes returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub dry_run: Option<bool>,
}

/// The default number of contradictions a request lists.
pub const DEFAULT_CONTRADICTIONS: u32 = 100;

pub(crate) fn list(api: &Api, r: &ContradictionsRequest) -> Result<Contradictions, ApiError> {
    let query = ContradictionQuery {
        types: r.types.clone().unwrap_or_default(),
        limit: r.limit.unwrap_or(DEFAULT_CONTRADICTIONS).max(1) as usize,
    };
    Ok(api.nexus.contradictions(&query)?)
}

pub(crate) fn resolve(api: &Api, r: &ContradictionResolveRequest) -> Result<Resolved, ApiError> {
    let resolve = Resolve {
        keep: r.keep.clone(),
        retire: r.retire.clone(),
        reason: r.reason.clone(),
        dry_run: r.dry_run.unwrap_or(false),
    };
    Ok(api
        .nexus
        .resolve_contradiction(&resolve, &api.context(Access::ReadWrite))?)
}

//! The curator's queues (issue 31): the memory's health, duplicate
//! candidates, and the pairs dismissed as not the same. The work is the engine's
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

/// `health`: the engine's counts, and the agent writes no curator has
/// reviewed yet (from the trace).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HealthResponse {
    #[serde(flatten)]
    pub health: kip_nexus::health::Health,
    /// Trace entries flagged `Unverified` and neither `Reviewed` nor
    /// `Rejected` (`T:…` ids), newest first.
    pub unreviewed: kip_nexus::health::Counted,
}

/// How many unverified entries the health report reads at most.
const UNREVIEWED_SCAN: usize = 10_000;

pub(crate) fn health(nexus: &Nexus) -> Result<HealthResponse, ApiError> {
    let health = nexus.health()?;
    let mut unreviewed = kip_nexus::health::Counted::default();
    let mut filter = kip_nexus::TraceFilter {
        flag: Some("Unverified".into()),
        limit: Some(kip_nexus::MAX_TRACE_PAGE),
        ..kip_nexus::TraceFilter::default()
    };
    let mut read = 0;
    loop {
        let page = nexus.trace_list(&filter)?;
        read += page.entries.len();
        for e in &page.entries {
            if !e.flags.iter().any(|f| f == "Reviewed" || f == "Rejected") {
                unreviewed.count += 1;
                if unreviewed.sample.len() < kip_nexus::health::SAMPLE {
                    unreviewed.sample.push(e.id.clone());
                }
            }
        }
        match page.next_before {
            Some(before) if read < UNREVIEWED_SCAN => filter.before = Some(before),
            _ => break,
        }
    }
    Ok(HealthResponse { health, unreviewed })
}

/// `schema_map`: how many best-connected concepts (default
/// [`kip_nexus::overview::DEFAULT_HUBS`], at most 500).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct SchemaMapRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub hubs: Option<u32>,
}

/// The most hubs a schema map request may ask for.
pub const MAX_HUBS: u32 = 500;

pub(crate) fn schema_map(
    nexus: &Nexus,
    r: &SchemaMapRequest,
) -> Result<kip_nexus::overview::SchemaMap, ApiError> {
    let hubs = r.hubs.map_or(kip_nexus::overview::DEFAULT_HUBS, |n| {
        n.min(MAX_HUBS) as usize
    });
    Ok(nexus.schema_map(hubs)?)
}

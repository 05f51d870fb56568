//! What agents read and what they would recall (issue 31 §7, §8): recall
//! heat from the trace's read entries, the recall simulator and its pin /
//! demote actions. The work is the engine's (`kip_nexus::trace`'s heat,
//! `kip_nexus::recall`); this module hands it the host's context.

use kip_nexus::recall::{Recall, RecallAction, RecallActionOutcome, RecallQuery};
use kip_nexus::{Access, HeatQuery, ReadHeat};

use crate::{Api, ApiError};

/// `related`: the concepts nearest in meaning to one concept (the
/// inspector's "related by meaning").
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct RelatedRequest {
    /// The concept (`C:…`).
    pub id: String,
    /// At most this many (8 by default, 50 at most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub limit: Option<u32>,
}

impl Api {
    /// `read_heat`: per element, how many reads returned it and by whom.
    pub fn read_heat(&self, q: &HeatQuery) -> Result<ReadHeat, ApiError> {
        Ok(self.nexus.read_heat(q)?)
    }

    /// `recall`: what an agent's SEARCH for the text would recall, with
    /// each score's parts and one-hop context.
    pub fn recall(&self, q: &RecallQuery) -> Result<Recall, ApiError> {
        Ok(self.nexus.recall(q)?)
    }

    /// `related`: see [`RelatedRequest`].
    pub fn related(&self, r: &RelatedRequest) -> Result<kip_nexus::related::Related, ApiError> {
        Ok(self
            .nexus
            .related_by_meaning(&r.id, r.limit.map(|n| n as usize))?)
    }

    /// `recall_action`: pin or demote a recalled concept as this host's
    /// traced write (or its dry run).
    pub fn recall_action(&self, a: &RecallAction) -> Result<RecallActionOutcome, ApiError> {
        let access = if self.is_read_only() {
            Access::ReadOnly
        } else {
            Access::ReadWrite
        };
        Ok(self.nexus.recall_action(a, &self.context(access))?)
    }
}

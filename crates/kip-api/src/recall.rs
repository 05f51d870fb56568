//! What agents read and what they would recall (issue 31 §7, §8): recall
//! heat from the trace's read entries, the recall simulator and its pin /
//! demote actions. The work is the engine's (`kip_nexus::trace`'s heat,
//! `kip_nexus::recall`); this module hands it the host's context.

use kip_nexus::recall::{Recall, RecallAction, RecallActionOutcome, RecallQuery};
use kip_nexus::{Access, HeatQuery, ReadHeat};

use crate::{Api, ApiError};

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

//! What a write changed: the one change-statistics type of the workspace.
//!
//! The KML writer counts into it, a text's commands add up with `+=`, the
//! change log stores it, the capsule pipeline reports it per file and the
//! API sends it to clients (as `ChangeStats` in the TypeScript bindings).

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

/// Concepts and propositions created, updated and deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ChangeStats"))]
#[serde(default)]
pub struct Stats {
    pub concepts_created: u64,
    pub concepts_updated: u64,
    pub concepts_deleted: u64,
    pub propositions_created: u64,
    pub propositions_updated: u64,
    pub propositions_deleted: u64,
}

impl Stats {
    /// Whether anything changed.
    pub fn changed(&self) -> bool {
        *self != Stats::default()
    }
}

impl AddAssign for Stats {
    fn add_assign(&mut self, other: Stats) {
        self.concepts_created += other.concepts_created;
        self.concepts_updated += other.concepts_updated;
        self.concepts_deleted += other.concepts_deleted;
        self.propositions_created += other.propositions_created;
        self.propositions_updated += other.propositions_updated;
        self.propositions_deleted += other.propositions_deleted;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_add_up_field_by_field() {
        let mut a = Stats {
            concepts_created: 1,
            propositions_deleted: 2,
            ..Stats::default()
        };
        assert!(a.changed());
        a += Stats {
            concepts_created: 3,
            concepts_updated: 4,
            ..Stats::default()
        };
        assert_eq!(
            a,
            Stats {
                concepts_created: 4,
                concepts_updated: 4,
                propositions_deleted: 2,
                ..Stats::default()
            }
        );
        assert!(!Stats::default().changed());
    }

    #[test]
    fn stats_read_leniently() {
        // Change-log entries of older versions may lack fields.
        let s: Stats = serde_json::from_str(r#"{"concepts_created": 2}"#).expect("stats");
        assert_eq!(s.concepts_created, 2);
        assert_eq!(s.propositions_created, 0);
    }
}

//! What a revert must know from the rest of the trace: the later writes
//! that stand in its way (BRIEF §7: a revert is refused when a later write
//! touched the same elements, naming it), and the highest `_version` an
//! element it brings back has ever had (BRIEF §3: reserved metadata only
//! moves forward).
//!
//! Both are decided by the trace's entries, never by comparing the graph's
//! state with an entry's after-image: a later write that put an element
//! back as it was is still a later write.

use std::collections::{HashMap, HashSet};

use kip_store::ElementId;
use serde_json::Value as Json;

use super::entry::{Entry, from_body, parse_entry_id};
use crate::graph::TxnError;
use crate::kml::{ChangeOp, ElementChange, VersionFloors};
use crate::nexus::Nexus;

/// A later write in the way of a revert: its entry number and the first of
/// the reverted entry's elements it touched.
pub(super) type Later = (u64, ElementId);

fn data_str(entry: &Entry, key: &str) -> Option<String> {
    entry.data.as_ref()?.get(key)?.as_str().map(str::to_owned)
}

/// The `_version` of a state in an entry's change (`before` or `after`).
fn state_version(change: &Json, which: &str) -> u64 {
    change
        .get(which)
        .and_then(|s| s.get("metadata"))
        .and_then(|m| m.get("_version"))
        .and_then(Json::as_u64)
        .unwrap_or(0)
}

impl Nexus {
    /// Every write after entry `n` that still stands in the way of
    /// reverting it, oldest first, each once: one that touched an element
    /// of `elements`, or one that touched an element outside them that the
    /// revert would run into (see [`Nexus::in_the_way_of`]). A write
    /// reverted since, and the revert of a write newer than `n`, cancel out
    /// and do not count.
    pub(super) fn later_writes(
        &self,
        txn: &kip_store::RoTxn<'_>,
        n: u64,
        elements: &[ElementId],
        changes: &[ElementChange],
    ) -> Result<Vec<Later>, TxnError> {
        let mut found: HashMap<u64, ElementId> = HashMap::new();
        for &e in elements {
            for later in self.store.trace_touching(txn, e)? {
                if later > n && !found.contains_key(&later) && self.stands(txn, later, n)? {
                    found.insert(later, e);
                }
            }
        }
        let own: HashSet<&str> = changes.iter().map(|c| c.id.as_str()).collect();
        let mut in_the_way = Vec::new();
        for c in changes {
            self.in_the_way_of(txn, c, &own, &mut in_the_way)?;
        }
        // What is in the way is so now, whatever the trace's reverts say
        // (a forced revert that changed nothing, then a revert bringing the
        // element back, leaves no standing entry): name the newest later
        // write that touched it.
        for x in in_the_way {
            let newest = (self.store.trace_touching(txn, x)?)
                .into_iter()
                .filter(|&later| later > n)
                .max();
            if let Some(later) = newest {
                found.entry(later).or_insert(x);
            }
        }
        let mut out: Vec<Later> = found.into_iter().collect();
        out.sort_unstable_by_key(|&(n, _)| n);
        Ok(out)
    }

    /// The elements outside the entry (`own`) that would stop the revert
    /// of change `c`: a link to an element it created (undoing the creation
    /// would take the link too), the concept that now holds the type and
    /// name of one it deleted, or a missing end of a link it deleted.
    fn in_the_way_of(
        &self,
        txn: &kip_store::RoTxn<'_>,
        c: &ElementChange,
        own: &HashSet<&str>,
        out: &mut Vec<ElementId>,
    ) -> Result<(), TxnError> {
        let Ok(e) = c.id.parse::<ElementId>() else {
            return Ok(());
        };
        let foreign = |x: &ElementId| !own.contains(x.to_string().as_str());
        match c.op {
            ChangeOp::Created => {
                let links = self.store.propositions_mentioning(txn, e)?;
                out.extend(
                    links
                        .into_iter()
                        .map(ElementId::Proposition)
                        .filter(foreign),
                );
            }
            ChangeOp::Deleted if !self.store.contains(txn, e)? => {
                if let (Some(ty), Some(name)) = (&c.type_name, &c.name) {
                    let g = crate::graph::Graph::new(&self.store, txn);
                    let holder = g.find_concept_by_names(ty, name)?;
                    out.extend(holder.map(ElementId::Concept).filter(|h| *h != e));
                }
                let before = c.before.as_ref();
                let ends = [
                    before
                        .and_then(|b| b.subject.as_ref())
                        .or(c.subject.as_ref()),
                    before.and_then(|b| b.object.as_ref()).or(c.object.as_ref()),
                ];
                for end in ends.into_iter().flatten() {
                    if let Ok(x) = end.id.parse::<ElementId>()
                        && foreign(&x)
                        && !self.store.contains(txn, x)?
                    {
                        out.push(x);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Whether entry `later` (after `n`) is a write that still stands: not
    /// reverted since, and not the revert of a write newer than `n` (the
    /// two cancel out).
    fn stands(&self, txn: &kip_store::RoTxn<'_>, later: u64, n: u64) -> Result<bool, TxnError> {
        let Some(body) = self.store.trace_entry(txn, later)? else {
            return Ok(false);
        };
        let entry = from_body(later, body)?;
        let reverted = data_str(&entry, "reverted_by").is_some();
        let reverts_newer = data_str(&entry, "reverts")
            .and_then(|m| parse_entry_id(&m).ok())
            .is_some_and(|m| m > n);
        Ok(!reverted && !reverts_newer)
    }

    /// For each element `changes` deletes (which a revert brings back), the
    /// highest `_version` any kept entry saw it at, before or after.
    pub(super) fn version_floors(
        &self,
        txn: &kip_store::RoTxn<'_>,
        changes: &[ElementChange],
    ) -> Result<VersionFloors, TxnError> {
        let mut floors = VersionFloors::new();
        for c in changes.iter().filter(|c| c.op == ChangeOp::Deleted) {
            let Ok(e) = c.id.parse::<ElementId>() else {
                continue;
            };
            let mut highest = 0;
            for n in self.store.trace_touching(txn, e)? {
                let Some(body) = self.store.trace_entry(txn, n)? else {
                    continue;
                };
                let listed = body
                    .get("data")
                    .and_then(|d| d.get("changes"))
                    .and_then(Json::as_array);
                for change in listed.into_iter().flatten() {
                    if change.get("id").and_then(Json::as_str) == Some(c.id.as_str()) {
                        let seen =
                            state_version(change, "before").max(state_version(change, "after"));
                        highest = highest.max(seen);
                    }
                }
            }
            floors.insert(e, highest);
        }
        Ok(floors)
    }
}

//! What changed between two times (issue 31 §6): every element whose state
//! as of `since` differs from its state as of `until`, read from the
//! trace's before-images without rebuilding either state.
//!
//! An element's state at a point is the before-image of the first write
//! after the point that touched it (absent when that write created it), or
//! its current record when no later write touched it. So only the elements
//! the writes between the two points touched are looked at, each compared
//! on its attributes, its metadata other than the engine's reserved `_`
//! keys (which move on every write, a revert's included) and a link's ends.
//! An element changed and changed back is not listed.

use std::collections::BTreeMap;

use kip_lang::{ErrorCode, KipError};
use kip_store::{ConceptId, ElementId, PropositionId};
use serde::Serialize;
use serde_json::{Map, Value as Json};

use super::as_of::AsOfPoint;
use super::entry::{Entry, EntryType, from_body};
use super::ops::changes_of;
use crate::clock;
use crate::graph::{Graph, Result, TxnError};
use crate::kml::{ChangeEnd, ChangeKind, ChangeOp, ElementChange};
use crate::nexus::Nexus;

/// The most elements a diff lists per kind of change, by default and at
/// most.
pub const DEFAULT_DIFF_LIMIT: usize = 1_000;
pub const MAX_DIFF_LIMIT: usize = 10_000;

/// An element's state at one point.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiffState {
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown>"))]
    pub attributes: Map<String, Json>,
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown>"))]
    pub metadata: Map<String, Json>,
    /// A link's subject (`C:…` / `P:…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub subject: Option<String>,
    /// A link's object.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub object: Option<String>,
}

impl DiffState {
    /// Equal for a curator: attributes, ends and the metadata a writer
    /// sets (not the engine's `_` keys).
    fn same(&self, other: &DiffState) -> bool {
        let own = |m: &Map<String, Json>| -> Vec<(String, Json)> {
            m.iter()
                .filter(|(k, _)| !k.starts_with('_'))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        self.attributes == other.attributes
            && own(&self.metadata) == own(&other.metadata)
            && self.subject == other.subject
            && self.object == other.object
    }
}

/// One element of a diff: what it is, and its state at both points
/// (`before` absent: added; `after` absent: removed).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiffElement {
    pub id: String,
    pub kind: ChangeKind,
    /// A concept's type, or a link's predicate.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub type_name: Option<String>,
    /// A concept's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub name: Option<String>,
    /// A link's subject, named.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub subject: Option<ChangeEnd>,
    /// A link's object, named.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub object: Option<ChangeEnd>,
    pub before: Option<DiffState>,
    pub after: Option<DiffState>,
}

/// How many elements each list holds in all (the lists stop at the limit).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiffTotals {
    pub added: u64,
    pub changed: u64,
    pub removed: u64,
}

/// What [`Nexus::diff`] found.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Diff {
    pub since: AsOfPoint,
    pub until: AsOfPoint,
    pub added: Vec<DiffElement>,
    pub changed: Vec<DiffElement>,
    pub removed: Vec<DiffElement>,
    pub totals: DiffTotals,
    /// Some list stopped at the limit (the totals count them all).
    pub truncated: bool,
}

/// What the scan knows of one element: its description, its state at
/// `since` and (once a write after `until` touched it) at `until`.
struct Slot {
    change: ElementChange,
    before: Option<DiffState>,
    after: Option<Option<DiffState>>,
}

/// The state `c` found its element in (none: `c` created it).
fn state_before(c: &ElementChange) -> Option<DiffState> {
    if c.op == ChangeOp::Created {
        return None;
    }
    let before = c.before.as_ref()?;
    let end = |moved: &Option<ChangeEnd>, now: &Option<ChangeEnd>| {
        moved.as_ref().or(now.as_ref()).map(|e| e.id.clone())
    };
    Some(DiffState {
        attributes: before.attributes.clone(),
        metadata: before.metadata.clone(),
        subject: end(&before.subject, &c.subject),
        object: end(&before.object, &c.object),
    })
}

fn own_write(entry: &Entry) -> bool {
    entry.kind == EntryType::Trace
        && entry
            .data
            .as_ref()
            .is_none_or(|d| d.get("imported_from").is_none())
}

impl Nexus {
    /// What changed between `since` and `until` (now when absent), both an
    /// ISO 8601 time or a trace entry id as [`Nexus::as_of`] takes them:
    /// the elements added, changed and removed, each with its state at
    /// both points, at most `limit` of each kind (1 000 by default, 10 000
    /// at most). Refused as `as_of` refuses a point, and when `since` is
    /// after `until`.
    pub fn diff(&self, since: &str, until: Option<&str>, limit: Option<usize>) -> Result<Diff> {
        let from = self.resolve_point(since)?;
        let now = clock::now();
        let to = self.resolve_point(until.unwrap_or(&now))?;
        if from.position > to.position {
            return Err(KipError::new(
                ErrorCode::InvalidSyntax,
                format!(
                    "since ({}) is after until ({})",
                    from.report.at, to.report.at
                ),
            )
            .with_hint("Give the earlier time as since and the later one as until."));
        }
        let limit = limit.unwrap_or(DEFAULT_DIFF_LIMIT).clamp(1, MAX_DIFF_LIMIT);
        self.read(|g| {
            let slots = self.diff_slots(g, from.position, to.position)?;
            let mut diff = Diff {
                since: from.report.clone(),
                until: to.report.clone(),
                added: Vec::new(),
                changed: Vec::new(),
                removed: Vec::new(),
                totals: DiffTotals::default(),
                truncated: false,
            };
            for (e, slot) in slots {
                let after = match slot.after {
                    Some(after) => after,
                    None => current(g, e)?,
                };
                let (list, total) = match (&slot.before, &after) {
                    (None, Some(_)) => (&mut diff.added, &mut diff.totals.added),
                    (Some(_), None) => (&mut diff.removed, &mut diff.totals.removed),
                    (Some(b), Some(a)) if !b.same(a) => {
                        (&mut diff.changed, &mut diff.totals.changed)
                    }
                    _ => continue,
                };
                *total += 1;
                if list.len() == limit {
                    diff.truncated = true;
                    continue;
                }
                list.push(describe(g, e, slot.change, slot.before, after)?);
            }
            Ok(diff)
        })
    }

    /// Every element a write after `from` and up to `to` touched, in id
    /// order, with its state at `from` and, if a write after `to` touched
    /// it, its state at `to`.
    fn diff_slots(&self, g: &Graph<'_>, from: u64, to: u64) -> Result<BTreeMap<ElementId, Slot>> {
        let mut slots: BTreeMap<ElementId, Slot> = BTreeMap::new();
        let mut failed = None;
        self.store
            .visit_trace(g.txn, Some(from), None, false, |id, body| {
                let entry = match from_body(id, body) {
                    Ok(e) => e,
                    Err(e) => {
                        failed = Some(e);
                        return Ok(false);
                    }
                };
                if !own_write(&entry) {
                    return Ok(true);
                }
                for c in changes_of(&entry).unwrap_or_default() {
                    let Ok(e) = c.id.parse::<ElementId>() else {
                        continue;
                    };
                    if id <= to {
                        if let Some(slot) = slots.get_mut(&e) {
                            fill(&mut slot.change, &c);
                        } else {
                            let before = state_before(&c);
                            slots.insert(
                                e,
                                Slot {
                                    change: c,
                                    before,
                                    after: None,
                                },
                            );
                        }
                    } else if let Some(slot) = slots.get_mut(&e)
                        && slot.after.is_none()
                    {
                        slot.after = Some(state_before(&c));
                        fill(&mut slot.change, &c);
                    }
                }
                Ok(true)
            })
            .map_err(|e| TxnError::from(e).0)?;
        match failed {
            Some(e) => Err(e),
            None => Ok(slots),
        }
    }
}

/// Takes what `c` says of an element that `into` does not say yet (a bulk
/// write's creations name nothing).
fn fill(into: &mut ElementChange, c: &ElementChange) {
    into.type_name = into.type_name.take().or_else(|| c.type_name.clone());
    into.name = into.name.take().or_else(|| c.name.clone());
    into.predicate = into.predicate.take().or_else(|| c.predicate.clone());
    into.subject = into.subject.take().or_else(|| c.subject.clone());
    into.object = into.object.take().or_else(|| c.object.clone());
}

/// An element's state now (none: it does not exist).
fn current(g: &Graph<'_>, e: ElementId) -> Result<Option<DiffState>> {
    Ok(match e {
        ElementId::Concept(id) => g.concept(id)?.map(|r| DiffState {
            attributes: r.attributes.clone(),
            metadata: r.metadata.clone(),
            subject: None,
            object: None,
        }),
        ElementId::Proposition(id) => g.proposition(id)?.map(|r| DiffState {
            attributes: r.attributes.clone(),
            metadata: r.metadata.clone(),
            subject: Some(r.subject.to_string()),
            object: Some(r.object.to_string()),
        }),
    })
}

/// The listed element: what its changes named, else what the store holds.
fn describe(
    g: &Graph<'_>,
    e: ElementId,
    c: ElementChange,
    before: Option<DiffState>,
    after: Option<DiffState>,
) -> Result<DiffElement> {
    let mut out = DiffElement {
        id: e.to_string(),
        kind: c.kind,
        type_name: c.type_name.or(c.predicate),
        name: c.name,
        subject: c.subject,
        object: c.object,
        before,
        after,
    };
    match e {
        ElementId::Concept(ConceptId(n)) if out.type_name.is_none() || out.name.is_none() => {
            if let Some(r) = g.concept(ConceptId(n))? {
                out.type_name = Some(g.type_name(r.type_id)?.to_string());
                out.name = Some(r.name.clone());
            }
        }
        ElementId::Proposition(PropositionId(n)) if out.type_name.is_none() => {
            if let Some(r) = g.proposition(PropositionId(n))? {
                out.type_name = Some(g.predicate_name(r.predicate)?.to_string());
                let end = |x: ElementId| ChangeEnd {
                    id: x.to_string(),
                    type_name: None,
                    name: None,
                };
                out.subject = Some(end(r.subject));
                out.object = Some(end(r.object));
            }
        }
        _ => {}
    }
    Ok(out)
}

//! What a change is: the op, the element's kind, its state before and
//! after, and the before-image a traced write keeps (with the ranges of
//! what a bulk write created).

use kip_store::{ConceptId, ElementId, PropositionId};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// What happened to an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ChangeOp"))]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Created,
    Updated,
    Deleted,
}

/// Whether the element is a concept or a proposition (a link).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ChangeKind"))]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Concept,
    Proposition,
}

/// One end of a link, named so a reader need not look it up: a concept's
/// type and name, or for a link about a link only its id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ChangeEnd"))]
pub struct End {
    pub id: String,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub type_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub name: Option<String>,
}

/// The part of an element a write can change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ChangeState"))]
pub struct State {
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown>"))]
    pub attributes: Map<String, Json>,
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown>"))]
    pub metadata: Map<String, Json>,
    /// A link's subject, only when the write moved its ends (a MERGE
    /// repoints the source's links to the target): in `before` the old
    /// end, which a revert puts back; in `after` the new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub subject: Option<End>,
    /// A link's object, as `subject`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub object: Option<End>,
}

/// One element's change. A concept carries `type` and `name`; a
/// proposition carries `subject`, `predicate` and `object`. `before` is
/// absent for a creation, `after` for a deletion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ElementChange {
    pub op: Op,
    pub kind: Kind,
    /// `C:…` or `P:…`. In a dry run, a created element's id is the one it
    /// would have had; the aborted transaction frees it again.
    pub id: String,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub type_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub subject: Option<End>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub predicate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub object: Option<End>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub before: Option<State>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub after: Option<State>,
}

/// A write that creates more elements than this in one command is a bulk
/// write: its before-image keeps its new elements as id ranges
/// ([`BeforeImage::created`]) instead of one change each.
pub const BULK_CREATIONS: usize = 1_000;

/// A committed write's before-image for the cognitive trace: the changes
/// of the elements it touched one by one, and the ranges `(first, last)`
/// of consecutive ids a bulk write created (see [`BULK_CREATIONS`]).
#[derive(Debug, Default)]
pub struct BeforeImage {
    pub changes: Vec<ElementChange>,
    pub created: Vec<(ElementId, ElementId)>,
    /// The lean creations in `changes` (see [`BeforeImage::extend`]).
    pub(super) lean_listed: usize,
}

impl BeforeImage {
    /// Adds a later command's before-image (of the same text). The write
    /// is bulk when its commands together are: once they have created more
    /// than [`BULK_CREATIONS`] elements, every lean creation is kept in the
    /// ranges, concepts' then links', in id order, as one command creating
    /// them all keeps them (a bundle applied in parts leaves the trace a
    /// whole import leaves).
    pub fn extend(&mut self, other: BeforeImage) {
        // Only the new command's changes can hold lean creations once the
        // write is bulk (they moved to the ranges when it became so).
        let from = if self.created.is_empty() {
            0
        } else {
            self.changes.len()
        };
        self.lean_listed +=
            other.lean_listed + other.changes.iter().filter(|c| is_lean_creation(c)).count();
        self.changes.extend(other.changes);
        self.created.extend(other.created);
        if self.created.is_empty() && self.lean_listed <= BULK_CREATIONS {
            return;
        }
        self.lean_listed = 0;
        let mut ranges: [Vec<(u64, u64)>; 2] = Default::default();
        for &(first, last) in &self.created {
            let ((k, a), (_, b)) = (kind_of(first), kind_of(last));
            ranges[k].push((a, b));
        }
        let mut i = 0;
        self.changes.retain(|c| {
            i += 1;
            if i <= from || !is_lean_creation(c) {
                return true;
            }
            let Ok(id) = c.id.parse::<ElementId>() else {
                return true;
            };
            let (k, n) = kind_of(id);
            ranges[k].push((n, n));
            false
        });
        self.created.clear();
        for (k, mut r) in ranges.into_iter().enumerate() {
            r.sort_unstable();
            let mut joined: Vec<(u64, u64)> = Vec::with_capacity(r.len());
            for range in r {
                push_range(&mut joined, range);
            }
            self.created.extend(
                joined
                    .into_iter()
                    .map(|(a, b)| (element(k, a), element(k, b))),
            );
        }
    }
}

/// Appends the range `(first, last)` to `ranges` (in id order), joined to
/// the last one when it follows it.
pub(super) fn push_range(ranges: &mut Vec<(u64, u64)>, (first, last): (u64, u64)) {
    match ranges.last_mut() {
        Some(prev) if prev.1.checked_add(1) == Some(first) => prev.1 = last,
        _ => ranges.push((first, last)),
    }
}

/// A creation noted without its state (see `Changes::lean`), which a bulk
/// write keeps as part of a range instead.
pub(super) fn is_lean_creation(c: &ElementChange) -> bool {
    c.op == Op::Created && c.after.is_none() && !is_schema(c)
}

/// The element of kind `k` (see [`kind_of`]) with number `n`.
pub(super) fn element(k: usize, n: u64) -> ElementId {
    if k == 0 {
        ElementId::Concept(ConceptId(n))
    } else {
        ElementId::Proposition(PropositionId(n))
    }
}

/// An element as its kind (0 for a concept, 1 for a proposition) and its
/// number (see [`element`]).
pub(super) fn kind_of(e: ElementId) -> (usize, u64) {
    match e {
        ElementId::Concept(c) => (0, c.0),
        ElementId::Proposition(p) => (1, p.0),
    }
}

/// A `$ConceptType` or `$PropositionType` definition: the trace says the
/// schema changed, so such a creation is always noted as a change.
pub(super) fn is_schema(c: &ElementChange) -> bool {
    matches!(
        c.type_name.as_deref(),
        Some(crate::graph::CONCEPT_TYPE | crate::graph::PROPOSITION_TYPE)
    )
}

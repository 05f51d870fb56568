//! What a write changed, element by element: the `changes` list of a dry
//! run's result, and the description of a change that the cognitive trace
//! (BRIEF §7) can keep as a write's before-image.
//!
//! The [`Writer`] collects only when asked ([`Writer::collect_changes`]):
//! a preview adds them to its result; a traced committed write keeps them in
//! its trace entry ([`Writer::take_changes`]) and its result shape stays as
//! it was. Each element appears once per command, in the order it was first
//! touched; several touches fold into one change (created then updated is
//! "created" with the final state, updated then deleted is "deleted" with
//! the state before the command, created then deleted disappears).
//!
//! This module only describes; it never decides what is written.

use std::collections::HashMap;

use kip_store::{ConceptId, ConceptRecord, ElementId, PropositionId, PropositionRecord};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use super::Writer;
use crate::graph::Result;

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
    lean_listed: usize,
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
fn push_range(ranges: &mut Vec<(u64, u64)>, (first, last): (u64, u64)) {
    match ranges.last_mut() {
        Some(prev) if prev.1.checked_add(1) == Some(first) => prev.1 = last,
        _ => ranges.push((first, last)),
    }
}

/// A creation noted without its state (see `Changes::lean`), which a bulk
/// write keeps as part of a range instead.
fn is_lean_creation(c: &ElementChange) -> bool {
    c.op == Op::Created && c.after.is_none() && !is_schema(c)
}

/// The element of kind `k` (see [`kind_of`]) with number `n`.
fn element(k: usize, n: u64) -> ElementId {
    if k == 0 {
        ElementId::Concept(ConceptId(n))
    } else {
        ElementId::Proposition(PropositionId(n))
    }
}

/// The changes of one command, one per element.
#[derive(Debug, Default)]
pub(super) struct Changes {
    list: Vec<Option<ElementChange>>,
    at: HashMap<ElementId, usize>,
    /// Keep a created element's id and names but not its state: a traced
    /// write's before-image needs only the id to undo a creation, and the
    /// state is in the graph (and in the command's text).
    lean: bool,
    /// Lean creations noted one by one so far (until a bulk write's
    /// creations become ranges).
    lean_created: usize,
    /// A bulk write's creations, per kind, in id order (fresh ids only
    /// grow): elements created and neither updated away from "created"
    /// nor deleted since. Empty until the write turns out to be bulk.
    ranges: [Vec<(u64, u64)>; 2],
    bulk: bool,
}

fn kind_of(e: ElementId) -> (usize, u64) {
    match e {
        ElementId::Concept(c) => (0, c.0),
        ElementId::Proposition(p) => (1, p.0),
    }
}

impl Changes {
    /// Whether `e` lies in a range of bulk creations.
    fn in_ranges(&self, e: ElementId) -> bool {
        let (k, n) = kind_of(e);
        let r = &self.ranges[k];
        let i = r.partition_point(|&(_, last)| last < n);
        r.get(i).is_some_and(|&(first, _)| first <= n)
    }

    /// Adds a new element to the ranges.
    fn add_to_ranges(&mut self, e: ElementId) {
        let (k, n) = kind_of(e);
        push_range(&mut self.ranges[k], (n, n));
    }

    /// Takes `e` out of the ranges (it was deleted in the same command).
    fn remove_from_ranges(&mut self, e: ElementId) {
        let (k, n) = kind_of(e);
        let r = &mut self.ranges[k];
        let i = r.partition_point(|&(_, last)| last < n);
        let Some(&(first, last)) = r.get(i).filter(|&&(first, _)| first <= n) else {
            return;
        };
        let mut parts = Vec::with_capacity(2);
        if first < n {
            parts.push((first, n - 1));
        }
        if n < last {
            parts.push((n + 1, last));
        }
        r.splice(i..=i, parts);
    }

    /// Notes a lean creation without state; returns `false` when it must
    /// be noted as a change (the write is not bulk yet). When the count
    /// passes [`BULK_CREATIONS`], the creations noted so far move to the
    /// ranges.
    fn note_bulk_creation(&mut self, e: ElementId) -> bool {
        if !self.bulk {
            self.lean_created += 1;
            if self.lean_created <= BULK_CREATIONS {
                return false;
            }
            self.become_bulk();
        }
        self.add_to_ranges(e);
        true
    }

    /// Makes the write bulk: the lean creations noted so far move to the
    /// ranges, and the next ones go there.
    fn become_bulk(&mut self) {
        self.bulk = true;
        for slot in &mut self.list {
            let lean_creation = slot.as_ref().is_some_and(is_lean_creation);
            if lean_creation
                && let Some(c) = slot.take()
                && let Ok(id) = c.id.parse::<ElementId>()
            {
                self.at.remove(&id);
                let (k, n) = kind_of(id);
                push_range(&mut self.ranges[k], (n, n));
            }
        }
    }

    /// Told that `plain` lean creations are about to be noted: when they
    /// would take the write past [`BULK_CREATIONS`], it becomes bulk now —
    /// what the creation past the bound would do — so that none of them is
    /// noted in full first (a 20,000-link capsule's first 1,000 links were
    /// noted with their ends' names, then moved to the ranges).
    fn expect_creations(&mut self, plain: usize) {
        if self.lean && !self.bulk && self.lean_created + plain > BULK_CREATIONS {
            self.become_bulk();
        }
    }

    pub(super) fn into_image(self) -> BeforeImage {
        let mut created = Vec::new();
        for (k, ranges) in self.ranges.iter().enumerate() {
            for &(first, last) in ranges {
                created.push((element(k, first), element(k, last)));
            }
        }
        BeforeImage {
            changes: self.list.into_iter().flatten().collect(),
            created,
            lean_listed: 0,
        }
    }

    /// Adds `c` about `e`, folding it into an earlier change of `e`.
    fn note(&mut self, e: ElementId, c: ElementChange) {
        let Some(&i) = self.at.get(&e) else {
            self.at.insert(e, self.list.len());
            self.list.push(Some(c));
            return;
        };
        let slot = &mut self.list[i];
        let Some(mut old) = slot.take() else {
            // Deleted and gone earlier in the command: this is a new element
            // that reuses nothing, but keep it anyway.
            *slot = Some(c);
            return;
        };
        // A link first updated in place and moved later: its ends before
        // the command are the ones the first change names.
        if let (Some(first), Some(later)) = (&mut old.before, &c.before)
            && first.subject.is_none()
            && later.subject.is_some()
        {
            first.subject.clone_from(&old.subject);
            first.object.clone_from(&old.object);
        }
        *slot = match (old.op, c.op) {
            (Op::Created, Op::Deleted) => None,
            (Op::Created, _) => Some(ElementChange {
                op: Op::Created,
                before: None,
                ..c
            }),
            (Op::Updated, Op::Deleted) => Some(ElementChange {
                before: old.before,
                ..c
            }),
            (Op::Updated, _) => Some(ElementChange {
                op: Op::Updated,
                before: old.before,
                ..c
            }),
            (Op::Deleted, _) => Some(c),
        };
    }

    fn into_list(self) -> Vec<ElementChange> {
        self.list.into_iter().flatten().collect()
    }
}

/// A `$ConceptType` or `$PropositionType` definition: the trace says the
/// schema changed, so such a creation is always noted as a change.
fn is_schema(c: &ElementChange) -> bool {
    matches!(
        c.type_name.as_deref(),
        Some(crate::CONCEPT_TYPE | crate::PROPOSITION_TYPE)
    )
}

/// Metadata `confidence` below 0.5: the trace flags the write `Uncertain`,
/// so a lean before-image keeps such a creation's state.
pub(super) fn uncertain(metadata: &Map<String, Json>) -> bool {
    metadata
        .get("confidence")
        .and_then(Json::as_f64)
        .is_some_and(|c| c < 0.5)
}

fn state(attributes: &Map<String, Json>, metadata: &Map<String, Json>) -> State {
    State {
        attributes: attributes.clone(),
        metadata: metadata.clone(),
        subject: None,
        object: None,
    }
}

impl Writer<'_, '_> {
    /// Starts collecting the command's changes (for a dry run's preview).
    pub fn collect_changes(&mut self) {
        self.changes = Some(Changes::default());
    }

    /// Tells the changes of `command` (this command's when `None`) that
    /// `plain` lean creations are about to be noted (see
    /// `Changes::expect_creations`).
    pub(super) fn expect_creations(&mut self, command: Option<u32>, plain: usize) -> Result<()> {
        let expect = |w: &mut Self| {
            if let Some(c) = &mut w.changes {
                c.expect_creations(plain);
            }
            Ok(())
        };
        match command {
            Some(command) => self.note_in(command, expect),
            None => expect(self),
        }
    }

    /// Runs `note` with the before-image of command `command` of a group
    /// write (see `Carry`) as the one collected: a link an earlier
    /// command deferred is noted where that command's changes are.
    pub(super) fn note_in(
        &mut self,
        command: u32,
        note: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let slot = match &mut self.group {
            Some(g) if g.command != command => g.earlier.get_mut(command as usize),
            _ => None,
        };
        let Some(slot) = slot else {
            return note(self);
        };
        let mine = std::mem::replace(&mut self.changes, slot.take());
        let noted = note(self);
        let theirs = std::mem::replace(&mut self.changes, mine);
        if let Some(g) = &mut self.group {
            g.earlier[command as usize] = theirs;
        }
        noted
    }

    /// Collects changes as a before-image: creations without their state
    /// (see `Changes::lean`), which keeps tracing bulk imports cheap.
    pub fn collect_before_image(&mut self) {
        self.changes = Some(Changes {
            lean: true,
            ..Changes::default()
        });
    }

    /// Whether creations are noted without their state.
    fn lean(&self) -> bool {
        self.changes.as_ref().is_some_and(|c| c.lean)
    }

    /// The collected changes, taken (empty when none were collected): a
    /// committed write's before-image for the cognitive trace.
    pub fn take_changes(&mut self) -> Vec<ElementChange> {
        self.changes
            .take()
            .map(Changes::into_list)
            .unwrap_or_default()
    }

    /// The collected before-image, taken (empty when none was collected).
    pub fn take_before_image(&mut self) -> BeforeImage {
        self.changes
            .take()
            .map(Changes::into_image)
            .unwrap_or_default()
    }

    /// Whether changes are being collected.
    pub(super) fn previewing(&self) -> bool {
        self.changes.is_some()
    }

    /// `result` with the collected changes added as `changes`, when they
    /// were collected; otherwise `result` as it is.
    pub fn with_changes(&mut self, mut result: Json) -> Json {
        if let (Some(changes), Json::Object(obj)) = (self.changes.take(), &mut result) {
            let list = changes.into_list();
            obj.insert(
                "changes".into(),
                serde_json::to_value(list).unwrap_or(Json::Null),
            );
        }
        result
    }

    /// Notes a concept's change; `before` / `after` are its records before
    /// and after (absent for a creation / a deletion).
    pub(super) fn note_concept(
        &mut self,
        op: Op,
        id: ConceptId,
        before: Option<&ConceptRecord>,
        after: Option<&ConceptRecord>,
    ) -> Result<()> {
        let Some(rec) = after.or(before).filter(|_| self.previewing()) else {
            return Ok(());
        };
        let type_name = self.cached_type_name(rec.type_id)?;
        let definition = type_name == crate::CONCEPT_TYPE || type_name == crate::PROPOSITION_TYPE;
        let plain = after.is_some_and(|r| !uncertain(&r.metadata)) && !definition;
        let Some(op) = self.bulk(op, ElementId::Concept(id), plain) else {
            return Ok(());
        };
        let before = before.filter(|_| op != Op::Created);
        let keep_after = !(op == Op::Created && self.lean());
        let change = ElementChange {
            op,
            kind: Kind::Concept,
            id: ElementId::Concept(id).to_string(),
            type_name: Some(type_name),
            name: Some(rec.name.clone()),
            subject: None,
            predicate: None,
            object: None,
            before: before.map(|r| state(&r.attributes, &r.metadata)),
            after: after
                .filter(|r| keep_after || uncertain(&r.metadata))
                .map(|r| state(&r.attributes, &r.metadata)),
        };
        if let Some(c) = &mut self.changes {
            c.note(ElementId::Concept(id), change);
        }
        Ok(())
    }

    /// Notes a proposition's change (see [`Writer::note_concept`]). Its ends
    /// are named now, while they exist.
    pub(super) fn note_proposition(
        &mut self,
        op: Op,
        id: PropositionId,
        before: Option<&PropositionRecord>,
        after: Option<&PropositionRecord>,
    ) -> Result<()> {
        let Some(rec) = after.or(before).filter(|_| self.previewing()) else {
            return Ok(());
        };
        let plain = after.is_some_and(|r| !uncertain(&r.metadata));
        let Some(op) = self.bulk(op, ElementId::Proposition(id), plain) else {
            return Ok(());
        };
        let before = before.filter(|_| op != Op::Created);
        let predicate = self.graph(|g| Ok(g.predicate_name(rec.predicate)?.to_string()))?;
        let keep_after = !(op == Op::Created && self.lean());
        // Only a MERGE moves a link's ends; then both states name them.
        let moved = matches!((before, after), (Some(b), Some(a)) if (b.subject, b.object) != (a.subject, a.object));
        let before = match before {
            Some(r) => Some(self.link_state(r, moved)?),
            None => None,
        };
        let after = match after.filter(|r| keep_after || uncertain(&r.metadata)) {
            Some(r) => Some(self.link_state(r, moved)?),
            None => None,
        };
        let change = ElementChange {
            op,
            kind: Kind::Proposition,
            id: ElementId::Proposition(id).to_string(),
            type_name: None,
            name: None,
            subject: Some(self.end(rec.subject)?),
            predicate: Some(predicate),
            object: Some(self.end(rec.object)?),
            before,
            after,
        };
        if let Some(c) = &mut self.changes {
            c.note(ElementId::Proposition(id), change);
        }
        Ok(())
    }

    /// Handles a change of an element of a bulk write's ranges, or a new
    /// `plain` (stateless in a lean before-image) creation that makes or
    /// keeps the write bulk; `true` when nothing more is to be noted. An
    /// element created in this command stays "created" when it is updated,
    /// and leaves the before-image when it is deleted.
    ///
    /// Returns the operation to note (`None`: nothing): an element of the
    /// ranges updated into a state the trace must see (low confidence)
    /// leaves them and is noted as created, with that state.
    fn bulk(&mut self, op: Op, e: ElementId, plain: bool) -> Option<Op> {
        let Some(c) = self.changes.as_mut().filter(|c| c.lean) else {
            return Some(op);
        };
        match op {
            Op::Created if plain && c.note_bulk_creation(e) => None,
            Op::Created => Some(op),
            Op::Updated | Op::Deleted if !c.in_ranges(e) => Some(op),
            Op::Updated if plain => None,
            Op::Updated => {
                c.remove_from_ranges(e);
                Some(Op::Created)
            }
            Op::Deleted => {
                c.remove_from_ranges(e);
                None
            }
        }
    }

    /// A link's state, with its ends when `with_ends`.
    fn link_state(&mut self, r: &PropositionRecord, with_ends: bool) -> Result<State> {
        let mut s = state(&r.attributes, &r.metadata);
        if with_ends {
            s.subject = Some(self.end(r.subject)?);
            s.object = Some(self.end(r.object)?);
        }
        Ok(s)
    }

    fn end(&mut self, e: ElementId) -> Result<End> {
        let (type_name, name) = match e {
            ElementId::Concept(c) => match self.head(c)? {
                Some((t, name)) => (Some(self.cached_type_name(t)?), Some(name)),
                None => (None, None),
            },
            ElementId::Proposition(_) => (None, None),
        };
        Ok(End {
            id: e.to_string(),
            type_name,
            name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(op: Op, name: &str) -> ElementChange {
        ElementChange {
            op,
            kind: Kind::Concept,
            id: "C:1".into(),
            type_name: Some("Drug".into()),
            name: Some(name.into()),
            subject: None,
            predicate: None,
            object: None,
            before: (op != Op::Created).then(|| state(&Map::new(), &Map::new())),
            after: (op != Op::Deleted).then(|| state(&Map::new(), &Map::new())),
        }
    }

    fn folded(ops: &[Op]) -> Vec<Op> {
        let mut c = Changes::default();
        let e = ElementId::Concept(ConceptId(1));
        for &op in ops {
            c.note(e, change(op, "A"));
        }
        c.into_list().iter().map(|c| c.op).collect()
    }

    #[test]
    fn touches_of_one_element_fold_into_one_change() {
        assert_eq!(folded(&[Op::Created, Op::Updated]), [Op::Created]);
        assert_eq!(folded(&[Op::Updated, Op::Updated]), [Op::Updated]);
        assert_eq!(folded(&[Op::Updated, Op::Deleted]), [Op::Deleted]);
        assert_eq!(folded(&[Op::Created, Op::Deleted]), [] as [Op; 0]);
    }

    #[test]
    fn a_created_change_has_no_before_even_after_an_update() {
        let mut c = Changes::default();
        let e = ElementId::Concept(ConceptId(1));
        c.note(e, change(Op::Created, "A"));
        c.note(e, change(Op::Updated, "A"));
        let list = c.into_list();
        assert_eq!(list[0].before, None);
        assert!(list[0].after.is_some());
    }

    /// A command's image: `n` lean creations of concepts from `first` on,
    /// and the link range `links`.
    fn image(first: u64, n: u64, links: Option<(u64, u64)>) -> BeforeImage {
        let changes = (first..first + n)
            .map(|i| ElementChange {
                id: format!("C:{i}"),
                after: None,
                ..change(Op::Created, "A")
            })
            .collect();
        let created = links
            .map(|(a, b)| (element(1, a), element(1, b)))
            .into_iter()
            .collect();
        BeforeImage {
            changes,
            created,
            lean_listed: 0,
        }
    }

    #[test]
    fn commands_that_together_create_in_bulk_leave_one_range_per_kind() {
        // Two small commands: listed one by one, as each alone would be.
        let mut small = BeforeImage::default();
        small.extend(image(1, 400, None));
        small.extend(image(401, 400, None));
        assert_eq!((small.changes.len(), small.created.len()), (800, 0));
        // Then past the bulk threshold: every lean creation in a range,
        // concepts' first, and the parts' ranges joined.
        small.extend(image(801, 400, Some((1, 10))));
        small.extend(image(1201, 400, Some((11, 20))));
        assert!(small.changes.is_empty());
        assert_eq!(
            small.created,
            [
                (element(0, 1), element(0, 1600)),
                (element(1, 1), element(1, 20)),
            ]
        );
        // A schema creation or a change with its state stays listed.
        let mut kept = change(Op::Created, "Drug");
        kept.type_name = Some(crate::CONCEPT_TYPE.into());
        small.extend(BeforeImage {
            changes: vec![kept, change(Op::Updated, "B")],
            created: Vec::new(),
            lean_listed: 0,
        });
        assert_eq!(small.changes.len(), 2);
    }
}

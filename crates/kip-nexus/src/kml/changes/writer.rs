//! The writer's side: collecting changes when asked, noting each concept
//! and link it touches, and handing the list or the before-image out.

use kip_store::{ConceptId, ConceptRecord, ElementId, PropositionId, PropositionRecord};
use serde_json::Value as Json;

use crate::graph::Result;
use crate::kml::writer::Writer;

use super::fold::{Changes, state, uncertain};
use super::model::{BeforeImage, ElementChange, End, Kind, Op, State};

impl Writer<'_, '_> {
    /// Starts collecting the command's changes (for a dry run's preview).
    pub fn collect_changes(&mut self) {
        self.changes = Some(Changes::default());
    }

    /// Tells the changes of `command` (this command's when `None`) that
    /// `plain` lean creations are about to be noted (see
    /// `Changes::expect_creations`).
    pub(in crate::kml) fn expect_creations(
        &mut self,
        command: Option<u32>,
        plain: usize,
    ) -> Result<()> {
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
    pub(in crate::kml) fn note_in(
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
        self.changes = Some(Changes::lean());
    }

    /// Whether creations are noted without their state.
    pub(super) fn lean(&self) -> bool {
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
    pub(in crate::kml) fn previewing(&self) -> bool {
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
    pub(in crate::kml) fn note_concept(
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
        let definition =
            type_name == crate::graph::CONCEPT_TYPE || type_name == crate::graph::PROPOSITION_TYPE;
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
    pub(in crate::kml) fn note_proposition(
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
    pub(super) fn bulk(&mut self, op: Op, e: ElementId, plain: bool) -> Option<Op> {
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
    pub(super) fn link_state(&mut self, r: &PropositionRecord, with_ends: bool) -> Result<State> {
        let mut s = state(&r.attributes, &r.metadata);
        if with_ends {
            s.subject = Some(self.end(r.subject)?);
            s.object = Some(self.end(r.object)?);
        }
        Ok(s)
    }

    pub(super) fn end(&mut self, e: ElementId) -> Result<End> {
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

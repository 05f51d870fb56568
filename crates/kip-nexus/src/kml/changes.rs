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

/// The changes of one command, one per element.
#[derive(Debug, Default)]
pub(super) struct Changes {
    list: Vec<Option<ElementChange>>,
    at: HashMap<ElementId, usize>,
    /// Keep a created element's id and names but not its state: a traced
    /// write's before-image needs only the id to undo a creation, and the
    /// state is in the graph (and in the command's text).
    lean: bool,
}

impl Changes {
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

/// Metadata `confidence` below 0.5: the trace flags the write `Uncertain`,
/// so a lean before-image keeps such a creation's state.
fn uncertain(metadata: &Map<String, Json>) -> bool {
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
        let keep_after = !(op == Op::Created && self.lean());
        let change = ElementChange {
            op,
            kind: Kind::Concept,
            id: ElementId::Concept(id).to_string(),
            type_name: Some(self.cached_type_name(rec.type_id)?),
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
}

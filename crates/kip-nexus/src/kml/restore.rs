//! Undoing a write: the compensating change of a list of [`ElementChange`]s
//! (a traced write's before-image), applied in the caller's transaction.
//!
//! Each element is put back as it was: a created element is deleted (with
//! the DETACH cascade), an updated one gets its attributes, metadata and
//! ends back, and a deleted one is re-created under its former id, links
//! removed by a DETACH cascade included. Elements return in dependency
//! order: concepts before links, and a link only once both of its ends
//! exist (a link about a link after the link it is about), whatever order
//! the write removed them in.
//!
//! The undo is itself a mutation (BRIEF §3, "reserved metadata is the
//! engine's, always moving forward"): the engine's `_version` climbs one
//! above the highest the element has had (its current record's, or for an
//! element that returns the `floor` its caller found in the trace) and
//! `_updated_at` is now; the other metadata, reserved keys such as
//! `_created_at` and `_merged_from` included, are the before-image's. The
//! changes are noted like any write's, so the compensating write is itself
//! traced and revertible. Time travel's rewind of a throwaway copy
//! ([`Writer::rewind`]) is the one exception: it puts reserved metadata
//! back exactly, because it reconstructs a past state, not a new one.

use std::collections::HashMap;

use kip_lang::{ErrorCode, KipError};
use kip_store::{
    ConceptId, ConceptRecord, ElementId, PropositionId, PropositionRecord, StoreError,
};
use serde_json::Value as Json;

use super::changes::{ElementChange, Kind, Op, State};
use super::object::{Object, version_of};
use super::writer::Writer;
use crate::graph::{BELONGS_TO_DOMAIN, OrInternal as _, Result};
use crate::search;

/// The highest `_version` each element named by a before-image has had,
/// as far as the trace remembers (see [`Writer::restore`]).
pub type VersionFloors = HashMap<ElementId, u64>;

fn element(c: &ElementChange) -> Result<ElementId> {
    c.id.parse().map_err(|_| {
        KipError::new(
            ErrorCode::InternalError,
            format!("a trace entry names `{}`, which is not an element id", c.id),
        )
    })
}

fn end_id(end: Option<&super::changes::End>) -> Result<ElementId> {
    let id = end.map(|e| e.id.as_str()).unwrap_or_default();
    id.parse().map_err(|_| {
        KipError::new(
            ErrorCode::InternalError,
            format!("a trace entry names a link end `{id}` that is not an element id"),
        )
    })
}

/// A link end to restore: the one a before-image names (the write moved
/// the link), else the one it has now.
fn moved_end(before: Option<&super::changes::End>, now: ElementId) -> Result<ElementId> {
    match before {
        Some(_) => end_id(before),
        None => Ok(now),
    }
}

/// The ends a deleted link returns at: those before the write (a link
/// moved and then deleted in one write returns at its ends before the
/// write), else those it had when it was deleted.
fn recreated_ends(c: &ElementChange) -> Result<(ElementId, ElementId)> {
    let before = c.before.as_ref();
    let subject = end_id(
        before
            .and_then(|b| b.subject.as_ref())
            .or(c.subject.as_ref()),
    )?;
    let object = end_id(before.and_then(|b| b.object.as_ref()).or(c.object.as_ref()))?;
    Ok((subject, object))
}

/// Metadata equal but for the keys that move on every write (all of it
/// when `exact`: a rewind puts those keys back too).
fn same_metadata(a: &Object, b: &Object, exact: bool) -> bool {
    if exact {
        return a == b;
    }
    let moving = |k: &String| k != "_version" && k != "_updated_at";
    a.iter()
        .filter(|(k, _)| moving(k))
        .eq(b.iter().filter(|(k, _)| moving(k)))
}

/// A refusal of the undo: what is in the way, and what to do.
fn in_the_way(message: String, hint: &str) -> KipError {
    KipError::new(ErrorCode::VersionConflict, message).with_hint(hint.to_owned())
}

/// A store refusal of a restored element, said as what later write is in
/// the way; anything else stays a storage error.
fn refusal(e: ElementId, err: StoreError) -> KipError {
    match err {
        StoreError::DuplicateConcept { name, existing, .. } => in_the_way(
            format!("{e} cannot come back: {existing} now has its type and name ({name:?})"),
            "A later write created that concept; delete or merge it first, then revert again.",
        ),
        StoreError::DuplicateProposition { existing } => in_the_way(
            format!(
                "{e} cannot come back: {existing} now links the same ends with the same predicate"
            ),
            "A later write created that link; delete it first, then revert again.",
        ),
        StoreError::NotFound { element } => in_the_way(
            format!("{e} cannot come back: its end {element} no longer exists"),
            "A later write deleted that end; revert that write first.",
        ),
        other => crate::graph::internal(other),
    }
}

/// One change per element, as it was before the write's first touch: a
/// text of several commands (a triage action's UPDATE then DELETE METADATA)
/// lists an element once per command, and only the first before-image is
/// the state to go back to. An element the write created stays created;
/// one it changed then deleted is deleted, with its first before-image.
fn first_per_element(changes: &[ElementChange]) -> Vec<ElementChange> {
    let mut out: Vec<ElementChange> = Vec::with_capacity(changes.len());
    let mut at: HashMap<&str, usize> = HashMap::new();
    for c in changes {
        match at.get(c.id.as_str()) {
            None => {
                at.insert(&c.id, out.len());
                out.push(c.clone());
            }
            Some(&i) => {
                if out[i].op == Op::Updated && c.op == Op::Deleted {
                    out[i].op = Op::Deleted;
                }
            }
        }
    }
    out
}

impl Writer<'_, '_> {
    /// Applies the inverse of `changes` (one write's before-image, in the
    /// order the write touched its elements). `floors` holds the highest
    /// `_version` the trace has seen each element that returns at.
    pub fn restore(&mut self, changes: &[ElementChange], floors: &VersionFloors) -> Result<()> {
        let changes = &first_per_element(changes);
        // Links a MERGE moved go back first wherever their old ends exist:
        // undoing a creation below deletes with the DETACH cascade, which
        // must not take a link that only passes through the created element
        // (reverting the revert of a MERGE deletes the re-created source).
        let mut restored = vec![false; changes.len()];
        for (c, done) in changes.iter().zip(&mut restored) {
            if c.op == Op::Updated && self.old_ends_exist(c)? {
                self.restore_state(c, floors)?;
                *done = true;
            }
        }
        // Creations are undone newest first (links before the concepts they
        // join); deletions are undone in dependency order, so every link's
        // ends exist again when it returns; the other updates last, because
        // a link a MERGE moved may go back to an end (the merged source, or
        // a link it folded) that only exists again now.
        for c in changes.iter().rev() {
            if c.op == Op::Created {
                let e = element(c)?;
                if self.store.contains(self.txn, e).kip()? {
                    self.delete_element(e)?;
                }
            }
        }
        self.recreate_all(changes, floors)?;
        for (c, done) in changes.iter().zip(&restored) {
            if c.op == Op::Updated && !done {
                self.restore_state(c, floors)?;
            }
        }
        Ok(())
    }

    /// Brings back every deleted element of `changes`: concepts first, then
    /// links in passes, each link once both of its ends exist (a DETACH
    /// cascade lists a link about a link before the link it is about).
    fn recreate_all(&mut self, changes: &[ElementChange], floors: &VersionFloors) -> Result<()> {
        let deleted = |kind| {
            changes
                .iter()
                .filter(move |c| c.op == Op::Deleted && c.kind == kind)
        };
        for c in deleted(Kind::Concept) {
            self.recreate(c, floors)?;
        }
        let mut waiting: Vec<&ElementChange> = deleted(Kind::Proposition).collect();
        while !waiting.is_empty() {
            let mut blocked = Vec::new();
            let mut missing = None;
            for c in &waiting {
                let (subject, object) = recreated_ends(c)?;
                let mut ready = true;
                for end in [subject, object] {
                    if !self.store.contains(self.txn, end).kip()? {
                        ready = false;
                        missing.get_or_insert((element(c)?, end));
                    }
                }
                if ready {
                    self.recreate(c, floors)?;
                } else {
                    blocked.push(*c);
                }
            }
            if blocked.len() == waiting.len()
                && let Some((e, end)) = missing
            {
                // No link could return: one waits for an end nothing brings back.
                return Err(refusal(e, StoreError::NotFound { element: end }));
            }
            waiting = blocked;
        }
        Ok(())
    }

    /// Whether `c` moved a link (its before-image names the old ends) and
    /// both of those ends exist now.
    fn old_ends_exist(&mut self, c: &ElementChange) -> Result<bool> {
        let Some(before) = &c.before else {
            return Ok(false);
        };
        if before.subject.is_none() && before.object.is_none() {
            return Ok(false);
        }
        for end in [&before.subject, &before.object].into_iter().flatten() {
            if !self.store.contains(self.txn, end_id(Some(end))?).kip()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The metadata of an element put back: `before`'s, with `_version`
    /// one above `highest` (and above `before`'s own) and `_updated_at` now.
    fn restored_metadata(&self, before: &Object, highest: u64) -> Object {
        if self.rewind {
            return before.clone();
        }
        let mut meta = before.clone();
        let version = highest.max(version_of(before)) + 1;
        meta.insert("_version".into(), Json::from(version));
        meta.insert("_updated_at".into(), Json::from(self.now.as_str()));
        meta
    }

    /// Puts an element that exists back in its before-image's state; one
    /// already in that state is left alone (a no-op is no write).
    fn restore_state(&mut self, c: &ElementChange, floors: &VersionFloors) -> Result<()> {
        let Some(before) = &c.before else {
            return Ok(());
        };
        let e = element(c)?;
        let floor = floors.get(&e).copied().unwrap_or(0);
        match e {
            ElementId::Concept(id) => {
                let Some(old) = self.store.get_concept(self.txn, id).kip()? else {
                    return Ok(());
                };
                if old.attributes == before.attributes
                    && same_metadata(&old.metadata, &before.metadata, self.rewind)
                {
                    return Ok(());
                }
                let highest = version_of(&old.metadata).max(floor);
                let rec = ConceptRecord {
                    attributes: before.attributes.clone(),
                    metadata: self.restored_metadata(&before.metadata, highest),
                    ..old.clone()
                };
                self.store.update_concept(self.txn, id, &rec).kip()?;
                search::index_concept(self.store, self.txn, id, &rec)?;
                self.note_concept(Op::Updated, id, Some(&old), Some(&rec))?;
                self.stats.concepts_updated += 1;
            }
            ElementId::Proposition(id) => {
                let Some(old) = self.store.get_proposition(self.txn, id).kip()? else {
                    return Ok(());
                };
                let subject = moved_end(before.subject.as_ref(), old.subject)?;
                let object = moved_end(before.object.as_ref(), old.object)?;
                if (subject, object) == (old.subject, old.object)
                    && old.attributes == before.attributes
                    && same_metadata(&old.metadata, &before.metadata, self.rewind)
                {
                    return Ok(());
                }
                let highest = version_of(&old.metadata).max(floor);
                let rec = PropositionRecord {
                    subject,
                    object,
                    attributes: before.attributes.clone(),
                    metadata: self.restored_metadata(&before.metadata, highest),
                    ..old.clone()
                };
                self.store
                    .update_proposition(self.txn, id, &rec)
                    .map_err(|err| refusal(e, err))?;
                self.reindex_proposition(id, &rec)?;
                self.note_proposition(Op::Updated, id, Some(&old), Some(&rec))?;
                self.stats.propositions_updated += 1;
            }
        }
        Ok(())
    }

    /// Re-creates a deleted element under its former id. Found in place (a
    /// forced revert over a later write that brought it back), it is put
    /// back in its before-image's state instead.
    fn recreate(&mut self, c: &ElementChange, floors: &VersionFloors) -> Result<()> {
        let e = element(c)?;
        let mut before = c.before.clone().unwrap_or_else(|| State {
            attributes: Object::default(),
            metadata: Object::default(),
            subject: None,
            object: None,
        });
        if self.store.contains(self.txn, e).kip()? {
            if c.kind == Kind::Proposition {
                before.subject = before.subject.or_else(|| c.subject.clone());
                before.object = before.object.or_else(|| c.object.clone());
            }
            let in_place = ElementChange {
                op: Op::Updated,
                before: Some(before),
                ..c.clone()
            };
            return self.restore_state(&in_place, floors);
        }
        let highest = floors.get(&e).copied().unwrap_or(0);
        let metadata = self.restored_metadata(&before.metadata, highest);
        match e {
            ElementId::Concept(ConceptId(n)) => {
                let id = ConceptId(n);
                let type_name = c.type_name.as_deref().unwrap_or_default();
                let rec = ConceptRecord {
                    type_id: self.intern_type(type_name)?,
                    name: c.name.clone().unwrap_or_default(),
                    attributes: before.attributes,
                    metadata,
                };
                self.store
                    .restore_concept(self.txn, id, &rec)
                    .map_err(|err| refusal(e, err))?;
                search::index_concept(self.store, self.txn, id, &rec)?;
                self.note_concept(Op::Created, id, None, Some(&rec))?;
                self.stats.concepts_created += 1;
            }
            ElementId::Proposition(PropositionId(n)) => {
                let id = PropositionId(n);
                let predicate = c.predicate.as_deref().unwrap_or_default();
                let (subject, object) = recreated_ends(c)?;
                let rec = PropositionRecord {
                    subject,
                    predicate: self.intern_predicate(predicate)?,
                    object,
                    attributes: before.attributes,
                    metadata,
                };
                self.store
                    .restore_proposition(self.txn, id, &rec)
                    .map_err(|err| refusal(e, err))?;
                if predicate == BELONGS_TO_DOMAIN {
                    self.count_domain_member(&rec, 1)?;
                }
                self.reindex_proposition(id, &rec)?;
                self.note_proposition(Op::Created, id, None, Some(&rec))?;
                self.stats.propositions_created += 1;
            }
        }
        Ok(())
    }
}

//! Undoing a write: the compensating change of a list of [`ElementChange`]s
//! (a traced write's before-image), applied in the caller's transaction.
//!
//! Each element is put back exactly as it was: a created element is deleted
//! (with the DETACH cascade), an updated one gets its attributes and
//! metadata back (engine metadata included, so `_version` returns to what
//! it was), and a deleted one is re-created under its former id, links
//! removed by a DETACH cascade included. The changes are noted like any
//! write's, so the compensating write is itself traced and revertible.

use kip_lang::{ErrorCode, KipError};
use kip_store::{ConceptId, ConceptRecord, ElementId, PropositionId, PropositionRecord};

use super::changes::{ElementChange, Kind, Op};
use super::writer::Writer;
use crate::graph::{BELONGS_TO_DOMAIN, OrInternal as _, Result};
use crate::search;

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

impl Writer<'_, '_> {
    /// Applies the inverse of `changes` (one write's before-image, in the
    /// order the write touched its elements).
    pub fn restore(&mut self, changes: &[ElementChange]) -> Result<()> {
        // Links a MERGE moved go back first wherever their old ends exist:
        // undoing a creation below deletes with the DETACH cascade, which
        // must not take a link that only passes through the created element
        // (reverting the revert of a MERGE deletes the re-created source).
        let mut restored = vec![false; changes.len()];
        for (c, done) in changes.iter().zip(&mut restored) {
            if c.op == Op::Updated && self.old_ends_exist(c)? {
                self.restore_state(c)?;
                *done = true;
            }
        }
        // Creations are undone newest first (links before the concepts they
        // join); deletions are undone concepts first, then links, so every
        // link's ends exist again when it returns; the other updates last,
        // because a link a MERGE moved may go back to an end (the merged
        // source, or a link it folded) that only exists again now.
        for c in changes.iter().rev() {
            if c.op == Op::Created {
                let e = element(c)?;
                if self.store.contains(self.txn, e).kip()? {
                    self.delete_element(e)?;
                }
            }
        }
        for kind in [Kind::Concept, Kind::Proposition] {
            for c in changes
                .iter()
                .filter(|c| c.op == Op::Deleted && c.kind == kind)
            {
                self.recreate(c)?;
            }
        }
        for (c, done) in changes.iter().zip(&restored) {
            if c.op == Op::Updated && !done {
                self.restore_state(c)?;
            }
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

    fn restore_state(&mut self, c: &ElementChange) -> Result<()> {
        let Some(before) = &c.before else {
            return Ok(());
        };
        match element(c)? {
            ElementId::Concept(id) => {
                let Some(old) = self.store.get_concept(self.txn, id).kip()? else {
                    return Ok(());
                };
                let rec = ConceptRecord {
                    attributes: before.attributes.clone(),
                    metadata: before.metadata.clone(),
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
                let rec = PropositionRecord {
                    subject: moved_end(before.subject.as_ref(), old.subject)?,
                    object: moved_end(before.object.as_ref(), old.object)?,
                    attributes: before.attributes.clone(),
                    metadata: before.metadata.clone(),
                    ..old.clone()
                };
                self.store.update_proposition(self.txn, id, &rec).kip()?;
                self.reindex_proposition(id, &rec)?;
                self.note_proposition(Op::Updated, id, Some(&old), Some(&rec))?;
                self.stats.propositions_updated += 1;
            }
        }
        Ok(())
    }

    fn recreate(&mut self, c: &ElementChange) -> Result<()> {
        let before = c.before.clone().unwrap_or_else(|| super::changes::State {
            attributes: Default::default(),
            metadata: Default::default(),
            subject: None,
            object: None,
        });
        match element(c)? {
            ElementId::Concept(ConceptId(n)) => {
                let id = ConceptId(n);
                let type_name = c.type_name.as_deref().unwrap_or_default();
                let rec = ConceptRecord {
                    type_id: self.intern_type(type_name)?,
                    name: c.name.clone().unwrap_or_default(),
                    attributes: before.attributes,
                    metadata: before.metadata,
                };
                self.store.restore_concept(self.txn, id, &rec).kip()?;
                search::index_concept(self.store, self.txn, id, &rec)?;
                self.note_concept(Op::Created, id, None, Some(&rec))?;
                self.stats.concepts_created += 1;
            }
            ElementId::Proposition(PropositionId(n)) => {
                let id = PropositionId(n);
                let predicate = c.predicate.as_deref().unwrap_or_default();
                // A link moved and then deleted in one write returns at its
                // ends before the write.
                let rec = PropositionRecord {
                    subject: end_id(before.subject.as_ref().or(c.subject.as_ref()))?,
                    predicate: self.intern_predicate(predicate)?,
                    object: end_id(before.object.as_ref().or(c.object.as_ref()))?,
                    attributes: before.attributes,
                    metadata: before.metadata,
                };
                self.store.restore_proposition(self.txn, id, &rec).kip()?;
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

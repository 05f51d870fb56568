//! A concept matched or created, and its attributes and metadata merged
//! shallowly (strictly idempotent: `_updated_at` moves only when something
//! changed).

use kip_lang::ast::*;
use kip_lang::{ErrorCode, KipError};
use kip_store::{ConceptId, ConceptRecord, ElementId};

use crate::graph::{CONCEPT_TYPE, OrInternal as _, Result};
use crate::schema;

use crate::kml::changes::Op;
use crate::kml::object::{Object, merged};
use crate::kml::writer::Writer;

impl Writer<'_, '_> {
    pub(super) fn upsert_concept(
        &mut self,
        c: &ConceptBlock,
        attrs: &Object,
        meta: &Object,
    ) -> Result<ConceptId> {
        match &c.matcher {
            ConceptMatcher::Id(arg) => {
                let id = self.existing_concept(arg)?;
                self.update_concept(id, attrs, meta, c.span)?;
                Ok(id)
            }
            ConceptMatcher::TypeName { ty, name } => {
                let (ty_s, name_s) = (self.text(ty)?, self.text(name)?);
                // The root defines itself (seed 001 §2.9.2): the one concept
                // whose type need not exist beforehand.
                let self_defining = ty_s == CONCEPT_TYPE && name_s == CONCEPT_TYPE;
                if !self_defining && !self.type_defined(ty_s)? {
                    return Err(self
                        .graph(|g| schema::unknown_type(g, ty_s))?
                        .at(self.source, ty.span()));
                }
                let type_id = self.intern_type(ty_s)?;
                match self.find_concept(type_id, name_s)? {
                    Some(id) => {
                        self.update_concept(id, attrs, meta, c.span)?;
                        Ok(id)
                    }
                    None => self.create_concept(type_id, ty_s, name_s, attrs, meta),
                }
            }
            ConceptMatcher::Type(_) | ConceptMatcher::Name(_) => Err(KipError::new(
                ErrorCode::InvalidSyntax,
                "a CONCEPT block needs {type, name} or {id}",
            )
            .at(self.source, c.span)),
        }
    }

    pub(super) fn create_concept(
        &mut self,
        type_id: u32,
        ty: &str,
        name: &str,
        attrs: &Object,
        meta: &Object,
    ) -> Result<ConceptId> {
        let mut metadata = meta.clone();
        self.stamp_new(&mut metadata);
        let record = ConceptRecord {
            type_id,
            name: name.to_owned(),
            attributes: attrs.clone(),
            metadata,
        };
        let id = self
            .store
            .create_concept_deferring(self.txn, &record, &mut self.pending_attrs)
            .kip()?;
        self.remember_concept(id, type_id, name);
        // Definitions make their name usable: intern it in its namespace.
        if ty == CONCEPT_TYPE {
            self.intern_type(name)?;
        } else if ty == crate::graph::PROPOSITION_TYPE {
            self.intern_predicate(name)?;
        }
        self.defer_document(id, &record);
        self.stats.concepts_created += 1;
        self.note_concept(Op::Created, id, None, Some(&record))?;
        Ok(id)
    }

    pub(super) fn update_concept(
        &mut self,
        id: ConceptId,
        attrs: &Object,
        meta: &Object,
        span: Span,
    ) -> Result<()> {
        if attrs.is_empty() && meta.is_empty() {
            // Nothing to merge: the record cannot change. (Both callers
            // have just found the concept, so it exists.)
            return Ok(());
        }
        let Some(old) = self.graph(|g| Ok(g.concept(id)?.map(|r| (*r).clone())))? else {
            return Err(KipError::new(
                ErrorCode::NotFound,
                format!("concept {} does not exist", ElementId::Concept(id)),
            )
            .at(self.source, span));
        };
        let ty = self.graph(|g| Ok(g.type_name(old.type_id)?.to_string()))?;
        let attributes = merged(&old.attributes, attrs);
        let mut metadata = merged(&old.metadata, meta);
        if attributes == old.attributes && metadata == old.metadata {
            return Ok(()); // a repeat: a true no-op, `_updated_at` included
        }
        if !self.bootstrap {
            schema::check_modification(
                &ty,
                &old.name,
                (&old.attributes, &old.metadata),
                (&attributes, &metadata),
            )
            .map_err(|e| e.at(self.source, span))?;
        }
        self.touch(&mut metadata, &old.metadata);
        if ty == crate::graph::PROPOSITION_TYPE {
            self.cache.predicates.clear();
        }
        let before = self.previewing().then(|| old.clone());
        let record = ConceptRecord {
            attributes,
            metadata,
            ..old
        };
        // The concept may be one this command created: its entries first.
        self.flush_attrs()?;
        self.store.update_concept(self.txn, id, &record).kip()?;
        self.defer_document(id, &record);
        self.stats.concepts_updated += 1;
        self.note_concept(Op::Updated, id, before.as_ref(), Some(&record))?;
        Ok(())
    }
}

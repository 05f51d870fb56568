//! UPSERT: blocks in order, handles, `{type, name}` match-or-create and
//! `{id}` match-only, shallow merges of attributes and metadata, additive
//! links checked against predicate signatures, and strict idempotency
//! (`_updated_at` moves only when something changed). The links of
//! `SET PROPOSITIONS` are written together at the end of the command or
//! before anything reads links back.

use std::collections::HashMap;

use kip_lang::ast::*;
use kip_lang::{ErrorCode, KipError};
use kip_store::{
    ConceptId, ConceptRecord, ElementId, NewProposition, PropositionId, PropositionRecord,
};
use serde_json::{Value as Json, json};

use crate::graph::{BELONGS_TO_DOMAIN, CONCEPT_TYPE, Graph, OrInternal as _, Result};
use crate::schema;
use crate::search::{self, NameOf};

use super::changes::Op;
use super::{Object, Writer, json_object, merged};

impl Writer<'_, '_> {
    pub fn upsert(&mut self, u: &Upsert) -> Result<Json> {
        self.upsert_with(u, &mut HashMap::new())
    }

    /// [`Writer::upsert`] with the handles defined so far: empty for a
    /// whole UPSERT, those of its earlier parts for one that continues
    /// (a streamed import, see `Nexus::run_parts`). Adds the handles it
    /// defines.
    pub fn upsert_with(
        &mut self,
        u: &Upsert,
        handles: &mut HashMap<String, ElementId>,
    ) -> Result<Json> {
        self.check_no_reserved(u.metadata.as_ref())?;
        let defaults = json_object(u.metadata.as_ref());
        let mut concept_ids = Vec::new();
        let mut proposition_ids = Vec::new();
        // A group write keeps no command's result (its callers count).
        let listing = self.group.is_none();
        for item in &u.items {
            match item {
                UpsertItem::Concept(c) => {
                    let id = self.concept_block(c, &defaults, handles)?;
                    if let Some(h) = &c.handle {
                        handles.insert(h.name.clone(), ElementId::Concept(id));
                    }
                    if listing {
                        concept_ids.push(json!(ElementId::Concept(id).to_string()));
                    }
                }
                UpsertItem::Proposition(p) => {
                    let id = self.proposition_block(p, &defaults, handles)?;
                    if let Some(h) = &p.handle {
                        handles.insert(h.name.clone(), ElementId::Proposition(id));
                    }
                    if listing {
                        proposition_ids.push(json!(ElementId::Proposition(id).to_string()));
                    }
                }
            }
        }
        if self.group.is_none() {
            self.flush_links()?;
            self.flush_documents()?;
        }
        Ok(json!({
            "blocks": u.items.len(),
            "upsert_concept_nodes": concept_ids,
            "upsert_proposition_links": proposition_ids,
        }))
    }

    /// A CONCEPT block: the concept matched or created, then the links of
    /// its SET PROPOSITIONS (deferred, see [`Writer::flush_links`]).
    fn concept_block(
        &mut self,
        c: &ConceptBlock,
        defaults: &Object,
        handles: &HashMap<String, ElementId>,
    ) -> Result<ConceptId> {
        self.check_no_reserved(c.attributes.as_ref())?;
        self.check_no_reserved(c.metadata.as_ref())?;
        let meta = merged(defaults, &json_object(c.metadata.as_ref()));
        let attrs = json_object(c.attributes.as_ref());
        if let Some(expected) = &c.expect_version {
            let current = self.current_concept_version(&c.matcher)?;
            self.expect_version(expected, current, "the concept")?;
        }
        let id = self.upsert_concept(c, &attrs, &meta)?;
        if attrs.contains_key(crate::logic::LOGIC_PROPERTIES)
            || attrs.contains_key("instance_schema")
        {
            self.graph(|g| crate::logic::check_definition(g, id))
                .map_err(|e| e.at(self.source, c.span))?;
        }
        for entry in c.propositions.iter().flatten() {
            self.check_no_reserved(entry.metadata.as_ref())?;
            let predicate = self.text(&entry.predicate)?;
            let target = self.resolve_term(&entry.target, handles)?;
            let entry_meta = match &entry.metadata {
                None => meta.clone(),
                Some(m) => merged(&meta, &json_object(Some(m))),
            };
            self.defer_link(
                ElementId::Concept(id),
                predicate,
                entry.predicate.span(),
                target,
                &entry_meta,
                entry.span,
            )?;
        }
        Ok(id)
    }

    /// A PROPOSITION block: the link matched by `(id: …)`, or matched or
    /// created by its triple.
    fn proposition_block(
        &mut self,
        p: &PropositionBlock,
        defaults: &Object,
        handles: &HashMap<String, ElementId>,
    ) -> Result<PropositionId> {
        // This block reads and writes links by id: the deferred ones must
        // be stored first.
        self.flush_links()?;
        self.check_no_reserved(p.attributes.as_ref())?;
        self.check_no_reserved(p.metadata.as_ref())?;
        let meta = merged(defaults, &json_object(p.metadata.as_ref()));
        let attrs = json_object(p.attributes.as_ref());
        match &p.matcher {
            PropositionMatcher::Id(arg) => {
                let id = self.existing_proposition(arg)?;
                if let Some(expected) = &p.expect_version {
                    let current = self.proposition_version(id)?;
                    self.expect_version(expected, current, "the proposition")?;
                }
                self.update_proposition(id, &attrs, &meta)?;
                Ok(id)
            }
            PropositionMatcher::Triple(t) => {
                let s = self.resolve_term(&t.subject, handles)?;
                let o = self.resolve_term(&t.object, handles)?;
                let (name, span) = self.written_predicate(&t.predicate, p.span)?;
                if let Some(expected) = &p.expect_version {
                    let existing = match self.graph(|g| g.predicate_id(&name))? {
                        Some(pid) => self.store.find_proposition(self.txn, s, pid, o).kip()?,
                        None => None,
                    };
                    let current = match existing {
                        Some(id) => self.proposition_version(id)?,
                        None => 0,
                    };
                    self.expect_version(expected, current, "the proposition")?;
                }
                self.upsert_link(s, &name, span, o, &attrs, &meta, p.span)
            }
        }
    }

    /// The predicate a written link names, and where: a link is written
    /// with one predicate name, never a variable.
    fn written_predicate(&self, predicate: &PredicateExpr, block: Span) -> Result<(String, Span)> {
        match predicate {
            PredicateExpr::Names { names, .. } => match names.first() {
                Some(n) => Ok((self.text(n)?.to_owned(), n.span())),
                None => Err(KipError::new(ErrorCode::InvalidSyntax, "missing predicate")
                    .at(self.source, block)),
            },
            PredicateExpr::Var(v) => Err(KipError::new(
                ErrorCode::InvalidSyntax,
                "a predicate variable cannot be written",
            )
            .at(self.source, v.span)),
        }
    }

    fn existing_concept(&self, arg: &Arg<String>) -> Result<ConceptId> {
        let text = self.text(arg)?;
        let id = match text.parse::<ElementId>() {
            Ok(ElementId::Concept(c)) => Some(c),
            _ => None,
        };
        let exists = match id {
            Some(c) => self.graph(|g| Ok(g.concept(c)?.is_some()))?,
            None => false,
        };
        match id {
            Some(c) if exists => Ok(c),
            _ => Err(KipError::new(ErrorCode::NotFound, format!("concept {text:?} does not exist"))
                .with_hint("{id: …} only matches an existing concept. Find its id with SEARCH CONCEPT \"…\" or FIND(?x.id), or create it with {type: \"…\", name: \"…\"}.")
                .at(self.source, arg.span())),
        }
    }

    fn existing_proposition(&self, arg: &Arg<String>) -> Result<PropositionId> {
        let text = self.text(arg)?;
        let id = match text.parse::<ElementId>() {
            Ok(ElementId::Proposition(p)) => Some(p),
            _ => None,
        };
        let exists = match id {
            Some(p) => self.graph(|g| Ok(g.proposition(p)?.is_some()))?,
            None => false,
        };
        match id {
            Some(p) if exists => Ok(p),
            _ => Err(KipError::new(ErrorCode::NotFound, format!("proposition {text:?} does not exist"))
                .with_hint("(id: …) only matches an existing proposition. Find its id with FIND(?link.id) WHERE { ?link (…) }.")
                .at(self.source, arg.span())),
        }
    }

    /// Resolves a subject or object term of a write: a handle defined
    /// earlier, an existing concept, an existing proposition.
    fn resolve_term(
        &mut self,
        term: &Term,
        handles: &HashMap<String, ElementId>,
    ) -> Result<ElementId> {
        match term {
            Term::Var(v) => handles.get(&v.name).copied().ok_or_else(|| {
                KipError::new(
                    ErrorCode::ReferenceError,
                    format!("handle ?{} is not defined", v.name),
                )
                .at(self.source, v.span)
            }),
            Term::Concept(ConceptMatcher::Id(id), _) => {
                Ok(ElementId::Concept(self.existing_concept(id)?))
            }
            Term::Concept(ConceptMatcher::TypeName { ty, name }, span) => {
                let (ty_s, name_s) = (self.text(ty)?, self.text(name)?);
                if !self.type_defined(ty_s)? {
                    return Err(self
                        .graph(|g| schema::unknown_type(g, ty_s))?
                        .at(self.source, ty.span()));
                }
                let found = match self.type_id(ty_s)? {
                    Some(t) => self.find_concept(t, name_s)?,
                    None => None,
                };
                match found {
                    Some(c) => Ok(ElementId::Concept(c)),
                    None => {
                        let similar = self.graph(|g| similar_names(g, ty_s, name_s))?;
                        let hint = match similar.first() {
                            Some(s) => format!(
                                "Did you mean {ty_s} '{s}'? Otherwise create {ty_s} '{name_s}' with a CONCEPT block earlier in this UPSERT and refer to it by its handle."
                            ),
                            None => format!(
                                "Create {ty_s} '{name_s}' with a CONCEPT block earlier in this UPSERT and refer to it by its handle, or check the name with SEARCH CONCEPT \"{name_s}\"."
                            ),
                        };
                        Err(KipError::new(
                            ErrorCode::NotFound,
                            format!("{ty_s} '{name_s}' does not exist"),
                        )
                        .with_hint(hint)
                        .at(self.source, *span)
                        .with_suggestions(&similar))
                    }
                }
            }
            Term::Concept(_, span) => Err(KipError::new(
                ErrorCode::InvalidSyntax,
                "a written link must name its concept by {type, name} or {id}",
            )
            .at(self.source, *span)),
            Term::Proposition(PropositionMatcher::Id(id), _) => {
                self.flush_links()?;
                Ok(ElementId::Proposition(self.existing_proposition(id)?))
            }
            Term::Proposition(PropositionMatcher::Triple(t), span) => {
                self.flush_links()?;
                let s = self.resolve_term(&t.subject, handles)?;
                let o = self.resolve_term(&t.object, handles)?;
                let name = match &t.predicate {
                    PredicateExpr::Names { names, .. } => names
                        .first()
                        .map(|n| self.text(n))
                        .transpose()?
                        .unwrap_or_default(),
                    PredicateExpr::Var(_) => "",
                };
                let found = self.graph(|g| {
                    let Some(p) = g.predicate_id(name)? else {
                        return Ok(None);
                    };
                    Ok(g.propositions(Some(s), Some(p), Some(o))?
                        .first()
                        .map(|m| m.0))
                })?;
                found.map(ElementId::Proposition).ok_or_else(|| {
                    KipError::new(ErrorCode::NotFound, "the proposition this link points to does not exist")
                        .with_hint("A nested (subject, \"predicate\", object) target must already be stored; create it first with a PROPOSITION block and refer to its handle.")
                        .at(self.source, *span)
                })
            }
        }
    }

    /// The `_version` of the concept a CONCEPT block matches, 0 if it does
    /// not exist (yet).
    fn current_concept_version(&mut self, matcher: &ConceptMatcher) -> Result<u64> {
        let id = match matcher {
            ConceptMatcher::Id(arg) => match self.text(arg)?.parse::<ElementId>() {
                Ok(ElementId::Concept(c)) => Some(c),
                _ => None,
            },
            ConceptMatcher::TypeName { ty, name } => {
                let (ty_s, name_s) = (self.text(ty)?, self.text(name)?);
                match self.type_id(ty_s)? {
                    Some(t) => self.find_concept(t, name_s)?,
                    None => None,
                }
            }
            ConceptMatcher::Type(_) | ConceptMatcher::Name(_) => None,
        };
        let Some(id) = id else { return Ok(0) };
        self.graph(|g| Ok(g.concept(id)?.map_or(0, |r| super::version_of(&r.metadata))))
    }

    fn proposition_version(&mut self, id: PropositionId) -> Result<u64> {
        self.graph(|g| {
            Ok(g.proposition(id)?
                .map_or(0, |r| super::version_of(&r.metadata)))
        })
    }

    /// `EXPECT VERSION n` (RC9 §2.11.2): the block runs only if the element
    /// is at `_version` `n` (`0`: it must not exist). A mismatch is
    /// `KIP_3005`, and the caller's transaction aborts the whole UPSERT.
    fn expect_version(&self, expected: &Arg<u64>, current: u64, what: &str) -> Result<()> {
        let Some(&want) = expected.lit() else {
            return Err(
                KipError::new(ErrorCode::ReferenceError, "a placeholder was not bound")
                    .at(self.source, expected.span()),
            );
        };
        if want == current {
            return Ok(());
        }
        let message = match (want, current) {
            (0, _) => format!(
                "version conflict: {what} already exists (at _version {current}); EXPECT VERSION 0 only creates"
            ),
            (_, 0) => format!(
                "version conflict: {what} does not exist, but EXPECT VERSION {want} expects it at _version {want}"
            ),
            _ => format!(
                "version conflict: {what} is at _version {current}, but EXPECT VERSION {want} expects {want}; someone changed it since it was read"
            ),
        };
        Err(KipError::new(ErrorCode::VersionConflict, message)
            .at(self.source, expected.span())
            .with_data("expected", want)
            .with_data("actual", current))
    }

    fn upsert_concept(
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

    fn create_concept(
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

    fn update_concept(
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

    /// Checks a link before it is written: the predicate is defined and
    /// `s` and `o` have allowed types. Returns the predicate's id.
    fn check_link(
        &mut self,
        s: ElementId,
        predicate: &str,
        predicate_span: Span,
        o: ElementId,
        span: Span,
    ) -> Result<u32> {
        let Some(signature) = self.predicate(predicate)? else {
            return Err(self
                .graph(|g| schema::unknown_predicate(g, predicate))?
                .at(self.source, predicate_span));
        };
        for (end, allowed, role) in [
            (s, &signature.subject_types, "subject"),
            (o, &signature.object_types, "object"),
        ] {
            let Some(allowed) = allowed else { continue };
            if !self.has_type_in(end, allowed)? {
                let actual = self.element_type(end)?;
                let found = actual.map_or_else(|| "a proposition".to_owned(), |t| format!("a {t}"));
                return Err(KipError::new(
                    ErrorCode::TypeMismatch,
                    format!("predicate '{predicate}' needs a {role} of type {}, found {found}", allowed.join(" or ")),
                )
                .with_hint(format!("Check the direction and the types: DESCRIBE PROPOSITION TYPE \"{predicate}\" shows its subject_types and object_types."))
                .at(self.source, span));
            }
        }
        self.intern_predicate(predicate)
    }

    /// Whether `e` is a concept whose type is one of `allowed`.
    fn has_type_in(&mut self, e: ElementId, allowed: &[String]) -> Result<bool> {
        let ElementId::Concept(c) = e else {
            return Ok(false);
        };
        let type_id = match self.cache.heads.get(&c) {
            Some(h) => h.0,
            None => match self.head(c)? {
                Some(h) => h.0,
                None => return Ok(false),
            },
        };
        if !self.cache.type_names.contains_key(&type_id) {
            self.cached_type_name(type_id)?;
        }
        let name = &self.cache.type_names[&type_id];
        Ok(allowed.iter().any(|a| a == name))
    }

    /// Creates or updates the link `(s, predicate, o)`; checks that the
    /// predicate is defined and that `s` and `o` have allowed types.
    #[allow(clippy::too_many_arguments)]
    fn upsert_link(
        &mut self,
        s: ElementId,
        predicate: &str,
        predicate_span: Span,
        o: ElementId,
        attrs: &Object,
        meta: &Object,
        span: Span,
    ) -> Result<PropositionId> {
        let p = self.check_link(s, predicate, predicate_span, o, span)?;
        let existing = self.store.find_proposition(self.txn, s, p, o).kip()?;
        if let Some(id) = existing {
            self.update_proposition(id, attrs, meta)?;
            return Ok(id);
        }
        let mut metadata = meta.clone();
        self.stamp_new(&mut metadata);
        let record = PropositionRecord {
            subject: s,
            predicate: p,
            object: o,
            attributes: attrs.clone(),
            metadata,
        };
        let id = self.store.create_proposition(self.txn, &record).kip()?;
        // Not a deferred link: a group no longer knows every link it wrote.
        self.written.untracked = true;
        if predicate == BELONGS_TO_DOMAIN {
            self.count_domain_member(&record, 1)?;
        }
        let names = [
            predicate.replace('_', " "),
            self.element_name(s)?,
            self.element_name(o)?,
        ];
        search::index_proposition(self.store, self.txn, id, &record, &names)?;
        self.stats.propositions_created += 1;
        self.note_proposition(Op::Created, id, None, Some(&record))?;
        Ok(id)
    }

    /// [`Writer::upsert_link`] for a `SET PROPOSITIONS` entry (a link
    /// without attributes whose id is not needed): the same checks, merges
    /// and counts, but a new link is only recorded, and written by
    /// [`Writer::flush_links`] together with the others.
    fn defer_link(
        &mut self,
        s: ElementId,
        predicate: &str,
        predicate_span: Span,
        o: ElementId,
        meta: &Object,
        span: Span,
    ) -> Result<()> {
        let p = self.check_link(s, predicate, predicate_span, o, span)?;
        if let Some(&i) = self.pending.by_triple.get(&(s, p, o))
            && let Some(group) = &self.group
            && self.pending.commands[i] != group.command
        {
            // A repeat of a link an earlier command of the group decided:
            // written first, it is updated as it would be had that
            // command been committed on its own.
            self.flush_links()?;
        }
        if let Some(&i) = self.pending.by_triple.get(&(s, p, o)) {
            // A repeat of a link of this command: merge as
            // `update_proposition` would merge into the stored record.
            let old = &self.pending.metadata[self.pending.meta[i] as usize];
            let mut metadata = merged(old, meta);
            if metadata != *old {
                metadata.insert("_updated_at".into(), json!(self.now));
                self.pending.meta[i] = self.pending.share(metadata);
                self.stats.propositions_updated += 1;
            }
            return Ok(());
        }
        if self.may_be_stored(&(s, p, o))?
            && let Some(id) = self.store.find_proposition(self.txn, s, p, o).kip()?
        {
            return self.update_proposition(id, &Object::new(), meta);
        }
        if predicate == BELONGS_TO_DOMAIN {
            let record = PropositionRecord {
                subject: s,
                predicate: p,
                object: o,
                attributes: Object::new(),
                metadata: Object::new(),
            };
            self.count_domain_member(&record, 1)?;
        }
        // A group write decides tens of thousands of links: room for them
        // at once.
        if self.group.is_some() && self.pending.by_triple.is_empty() {
            self.pending.by_triple.reserve(GROUP_LINKS);
            if self.pending_documents.links.is_empty() {
                self.pending_documents.links.reserve(2 * GROUP_LINKS);
            }
        }
        // The ends' names are at hand now (the links' search documents
        // are built when the links are created, maybe after a file whose
        // look-ups are forgotten).
        let mut end_terms = [search::Terms::default(); 2];
        for (e, terms) in [s, o].into_iter().zip(&mut end_terms) {
            *terms = match self.pending_documents.links.known(e) {
                Some(t) => t,
                None => {
                    let name = self.element_name(e)?;
                    self.pending_documents.links.meet(e, &name)
                }
            };
        }
        self.pending.end_terms.push(end_terms);
        self.pending
            .by_triple
            .insert((s, p, o), self.pending.triples.len());
        self.pending.triples.push(kip_store::Triple {
            subject: s,
            predicate: p,
            object: o,
        });
        let now = &self.now;
        let shared = self
            .pending
            .share_new(meta, now, |m| super::stamp_new_at(m, now));
        self.pending.meta.push(shared);
        if let Some(group) = &self.group {
            self.pending.commands.push(group.command);
        }
        self.stats.propositions_created += 1;
        Ok(())
    }

    /// Whether link `(s, p, o)` may be stored already (the caller has
    /// looked among the pending links): `false` only in a group write
    /// whose transaction started from the state in which the checks ahead
    /// found the link absent (see [`crate::KnownConcepts::set_links`]), or
    /// from the end of the last groups that followed that state
    /// ([`super::RecentGroups`]), when none of them and nothing this group
    /// has written could be it. Saves a random look-up in `spo` per new
    /// link of a bulk import.
    fn may_be_stored(&mut self, link: &crate::LinkKey) -> Result<bool> {
        let Some(known) = self.known else {
            return Ok(true);
        };
        if self.group.is_none() || self.written.untracked {
            return Ok(true);
        }
        let since = match self.known_links_hold {
            Some(since) => since,
            None => {
                // A group appends its change-log entries at its end: the
                // last one is still the one it started from.
                let now = self.store.last_change_seq(self.txn).kip()?;
                let since = match known.links_checked_at() {
                    Some(at) if at == now => Some(&[][..]),
                    // Checked before the last groups: they count too.
                    Some(at) => self.recent.and_then(|r| r.between(at, now)),
                    None => None,
                };
                self.known_links_hold = Some(since);
                since
            }
        };
        let Some(since) = since else {
            return Ok(true);
        };
        Ok(known.link_was_stored(link)
            || self.written.may_hold(link)
            || since.iter().any(|g| g.created(link)))
    }

    /// Decides `id`'s search document; written by
    /// [`Writer::flush_documents`] (a later one for the same concept wins).
    fn defer_document(&mut self, id: ConceptId, record: &ConceptRecord) {
        let (terms, len) = search::concept_document(record);
        let document = kip_store::NewDocument {
            element: ElementId::Concept(id),
            terms,
            len,
        };
        let pending = &mut self.pending_documents;
        match pending.at.get(&id) {
            Some(&at) => pending.documents[at] = document,
            None => {
                pending.at.insert(id, pending.documents.len());
                pending.documents.push(document);
            }
        }
    }

    /// Writes the attribute-index entries of the concepts created since
    /// the last call (see [`kip_store::Store::create_concept_deferring`]).
    pub(super) fn flush_attrs(&mut self) -> Result<()> {
        if self.pending_attrs.is_empty() {
            return Ok(());
        }
        self.store
            .put_attr_entries(self.txn, &mut self.pending_attrs)
            .kip()
    }

    /// Writes the deferred concept documents as one batch: each distinct
    /// term is looked up once, and new concepts append to its postings.
    /// The command's attribute-index entries go first.
    pub(super) fn flush_documents(&mut self) -> Result<()> {
        self.flush_attrs()?;
        if self.pending_documents.documents.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending_documents);
        self.store
            .index_documents(self.txn, &pending.documents)
            .kip()
    }

    /// Writes the deferred links, in the order they were decided (ids as
    /// one-by-one creation would give them), and their search documents.
    ///
    /// In a group write, before its end, the links are noted in
    /// [`super::WrittenLinks`] (what it decides next must know) and their
    /// search documents wait for [`Writer::index_link_documents`] at the
    /// group's end, to be indexed in one batch (each distinct term is
    /// looked up once per batch).
    pub(super) fn flush_links(&mut self) -> Result<()> {
        let in_group = self.group.is_some();
        self.create_pending_links(in_group)?;
        if !in_group {
            self.index_link_documents()?;
        }
        Ok(())
    }

    /// Indexes the documents of the links written so far.
    pub(super) fn index_link_documents(&mut self) -> Result<()> {
        let links = std::mem::take(&mut self.pending_documents.links);
        if links.is_empty() {
            return Ok(());
        }
        links.write(self.store, self.txn)
    }

    /// Creates the deferred links (see [`Writer::flush_links`]); their
    /// search documents wait in `pending_documents`. `note_written`: the
    /// links are noted in [`super::WrittenLinks`].
    pub(super) fn create_pending_links(&mut self, note_written: bool) -> Result<()> {
        if self.pending.triples.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        if note_written {
            self.written.note(&pending.triples);
        }
        let no_attributes = Object::new();
        let records: Vec<NewProposition<'_>> = pending
            .triples
            .iter()
            .zip(&pending.meta)
            .map(|(&triple, &m)| NewProposition {
                triple,
                attributes: &no_attributes,
                metadata: &pending.metadata[m as usize],
            })
            .collect();
        let ids = self.store.create_propositions(self.txn, &records).kip()?;
        drop(records);
        let mut documents = std::mem::take(&mut self.pending_documents.links);
        // Kept beside each triple (pushed together in `defer_link`).
        let aligned = pending.end_terms.len() == pending.triples.len();
        for (i, (&id, t)) in ids.iter().zip(&pending.triples).enumerate() {
            let ends = pending.end_terms.get(i).copied().filter(|_| aligned);
            documents.add(
                id,
                (t.subject, t.predicate, t.object),
                ends,
                |of| match of {
                    NameOf::Predicate(p) => self.graph(|g| Ok(g.predicate_name(p)?.to_string())),
                    NameOf::End(e) => self.element_name(e),
                },
            )?;
        }
        self.pending_documents.links = documents;
        // Creations are noted where changes are collected: this command's,
        // or those of the group's earlier commands (see `Carry`).
        let noting = self.previewing()
            || (self.group.as_ref()).is_some_and(|g| g.earlier.iter().any(Option::is_some));
        if !noting {
            return Ok(());
        }
        // One record to note the links with, its metadata copied only when
        // it is not the previous link's (the links of a command share it).
        let first = pending.triples[0];
        let mut record = PropositionRecord {
            subject: first.subject,
            predicate: first.predicate,
            object: first.object,
            attributes: Object::new(),
            metadata: Object::new(),
        };
        // Each command's plain creations, counted first: a command they take
        // past the bulk bound notes none of them in full.
        let mut plain: Vec<(Option<u32>, usize)> = Vec::new();
        for (i, &m) in pending.meta.iter().enumerate() {
            if super::changes::uncertain(&pending.metadata[m as usize]) {
                continue;
            }
            let command = pending.commands.get(i).copied();
            match plain.iter_mut().find(|(c, _)| *c == command) {
                Some((_, n)) => *n += 1,
                None => plain.push((command, 1)),
            }
        }
        for (command, n) in plain {
            self.expect_creations(command, n)?;
        }
        let mut record_meta = None;
        for (i, (id, &m)) in ids.into_iter().zip(&pending.meta).enumerate() {
            let t = pending.triples[i];
            (record.subject, record.predicate, record.object) = (t.subject, t.predicate, t.object);
            if record_meta != Some(m) {
                record.metadata = pending.metadata[m as usize].clone();
                record_meta = Some(m);
            }
            match pending.commands.get(i) {
                Some(&command) => self.note_in(command, |w| {
                    w.note_proposition(Op::Created, id, None, Some(&record))
                })?,
                None => self.note_proposition(Op::Created, id, None, Some(&record))?,
            }
        }
        Ok(())
    }

    fn update_proposition(
        &mut self,
        id: PropositionId,
        attrs: &Object,
        meta: &Object,
    ) -> Result<()> {
        let Some(old) = self.graph(|g| Ok(g.proposition(id)?.map(|r| (*r).clone())))? else {
            return Ok(());
        };
        let attributes = merged(&old.attributes, attrs);
        let mut metadata = merged(&old.metadata, meta);
        if attributes == old.attributes && metadata == old.metadata {
            return Ok(());
        }
        self.touch(&mut metadata, &old.metadata);
        let before = self.previewing().then(|| old.clone());
        let record = PropositionRecord {
            attributes,
            metadata,
            ..old
        };
        self.store.update_proposition(self.txn, id, &record).kip()?;
        self.reindex_proposition(id, &record)?;
        self.stats.propositions_updated += 1;
        self.note_proposition(Op::Updated, id, before.as_ref(), Some(&record))?;
        Ok(())
    }
}

/// The links a group write is made room for at once (see `defer_link`).
const GROUP_LINKS: usize = 1 << 15;

/// Names of concepts of type `ty` that look like `name` (case, spacing, typos).
fn similar_names(graph: &Graph<'_>, ty: &str, name: &str) -> Result<Vec<String>> {
    let Some(t) = graph.type_id(ty)? else {
        return Ok(Vec::new());
    };
    let ids = graph.concepts_of_type(t)?;
    if ids.len() > 5_000 {
        return Ok(Vec::new()); // too many to compare cheaply; SEARCH will help
    }
    let mut names = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(c) = graph.concept(id)? {
            names.push(c.name.clone());
        }
    }
    Ok(kip_lang::suggest::similar(
        name,
        names.iter().map(String::as_str),
    ))
}

//! The blocks of an UPSERT in order: handles, matching `{type, name}` or
//! `{id}`, the terms of a link, and EXPECT VERSION.

use std::collections::HashMap;

use kip_lang::ast::*;
use kip_lang::{ErrorCode, KipError};
use kip_store::{ConceptId, ElementId, PropositionId};
use serde_json::{Value as Json, json};

use crate::graph::{Graph, OrInternal as _, Result};
use crate::schema;

use crate::kml::object::{Object, json_object, merged, version_of};
use crate::kml::writer::Writer;

impl Writer<'_, '_> {
    pub fn upsert(&mut self, u: &Upsert) -> Result<Json> {
        self.upsert_with(u, &mut HashMap::new())
    }

    /// [`Writer::upsert`] with the handles defined so far: empty for a
    /// whole UPSERT, those of its earlier parts for one that continues
    /// (a streamed import, see `Bulk::parts`). Adds the handles it
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
    pub(super) fn concept_block(
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
    pub(super) fn proposition_block(
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
    pub(super) fn written_predicate(
        &self,
        predicate: &PredicateExpr,
        block: Span,
    ) -> Result<(String, Span)> {
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

    pub(super) fn existing_concept(&self, arg: &Arg<String>) -> Result<ConceptId> {
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

    pub(super) fn existing_proposition(&self, arg: &Arg<String>) -> Result<PropositionId> {
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
    pub(super) fn resolve_term(
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
    pub(super) fn current_concept_version(&mut self, matcher: &ConceptMatcher) -> Result<u64> {
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
        self.graph(|g| Ok(g.concept(id)?.map_or(0, |r| version_of(&r.metadata))))
    }

    pub(super) fn proposition_version(&mut self, id: PropositionId) -> Result<u64> {
        self.graph(|g| Ok(g.proposition(id)?.map_or(0, |r| version_of(&r.metadata))))
    }

    /// `EXPECT VERSION n` (RC9 §2.11.2): the block runs only if the element
    /// is at `_version` `n` (`0`: it must not exist). A mismatch is
    /// `KIP_3005`, and the caller's transaction aborts the whole UPSERT.
    pub(super) fn expect_version(
        &self,
        expected: &Arg<u64>,
        current: u64,
        what: &str,
    ) -> Result<()> {
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
}

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

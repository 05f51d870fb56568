//! KML: UPSERT and the four DELETE forms, inside the caller's write
//! transaction (the caller commits, or aborts on error or dry run, so a
//! command is atomic).
//!
//! Every write goes through [`Writer`], which keeps the derived state in
//! the same transaction as the change: provenance timestamps, the search
//! index, per-domain counters and the DETACH cascade.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use kip_lang::ast::*;
use kip_lang::{ErrorCode, KipError};
use kip_store::{
    ConceptId, ConceptRecord, ElementId, Namespace, PropositionId, PropositionRecord, RwTxn, Store,
};
use serde_json::{Map, Value as Json, json};

use crate::graph::{BELONGS_TO_DOMAIN, CONCEPT_TYPE, Graph, OrInternal as _, Result};
use crate::kql::{self, Val};
use crate::{schema, search};

type Object = Map<String, Json>;

/// The counter of concepts of one type in one domain.
pub fn domain_counter(domain: ConceptId, type_id: u32) -> Vec<u8> {
    format!("domain/{}/type/{type_id}", domain.0).into_bytes()
}

/// Writes of one command.
#[allow(missing_debug_implementations)] // holds a transaction
pub struct Writer<'a, 't> {
    pub store: &'a Store,
    pub txn: &'a mut RwTxn<'t>,
    pub source: &'a str,
    /// The command's timestamp (ISO 8601, UTC): one per command.
    pub now: String,
    /// Elements created, updated and deleted (for reports and the change log).
    pub stats: Stats,
    /// Schema lookups repeated by every block of a large capsule.
    cache: WriterCache,
    /// New links of `SET PROPOSITIONS` entries not written yet: they are
    /// created together by [`Writer::flush_links`], in their order (so they
    /// get the ids one-by-one creation would give them).
    pending: PendingLinks,
}

/// Links decided but not yet written (see [`Writer::flush_links`]).
///
/// Only links that nothing reads back before the flush are deferred: every
/// path that reads propositions from the store (a `PROPOSITION` block, a
/// `(…)` or `{id}` proposition term) flushes first, and a link repeated
/// before the flush is found here and merged, as the stored one would be.
#[derive(Debug, Default)]
struct PendingLinks {
    records: Vec<PropositionRecord>,
    /// The predicate (spaces for underscores) and the subject's and
    /// object's names of each record, for its search document.
    names: Vec<[String; 3]>,
    by_triple: HashMap<(ElementId, u32, ElementId), usize>,
}

/// What one command looks up again and again. Only facts that cannot turn
/// false within the command are kept (a defined type stays defined: UPSERT
/// cannot delete), and predicate signatures are dropped whenever a
/// `$PropositionType` definition is written.
#[derive(Debug, Default)]
struct WriterCache {
    defined_types: HashSet<String>,
    predicates: HashMap<String, Option<Rc<schema::Signature>>>,
    heads: HashMap<ConceptId, (u32, String)>,
    type_names: HashMap<u32, String>,
    /// Interned ids of type and predicate names (an interned id never
    /// changes; only names found interned are kept).
    type_ids: HashMap<String, u32>,
    predicate_ids: HashMap<String, u32>,
    /// Concepts by type id and name: UPSERT neither deletes nor renames,
    /// so a concept found or created stays where it is for the command.
    concepts: HashMap<u32, HashMap<String, ConceptId>>,
}

#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct Stats {
    pub concepts_created: u64,
    pub concepts_updated: u64,
    pub concepts_deleted: u64,
    pub propositions_created: u64,
    pub propositions_updated: u64,
    pub propositions_deleted: u64,
}

impl Stats {
    pub fn changed(&self) -> bool {
        self.concepts_created
            + self.concepts_updated
            + self.concepts_deleted
            + self.propositions_created
            + self.propositions_updated
            + self.propositions_deleted
            > 0
    }
}

fn reserved_key_error(key: &str, source: &str, span: Span) -> KipError {
    KipError::new(
        ErrorCode::ImmutableTarget,
        format!("'{key}' is reserved for the engine: keys starting with '_' cannot be written"),
    )
    .with_hint("The engine maintains _created_at and _updated_at itself; rename the key without the leading underscore.")
    .at(source, span)
}

fn json_object(obj: Option<&kip_lang::ast::Object>) -> Object {
    obj.and_then(kip_lang::ast::Object::to_json)
        .unwrap_or_default()
}

/// `base` with `over`'s keys laid over it (a shallow merge).
fn merged(base: &Object, over: &Object) -> Object {
    let mut out = base.clone();
    for (k, v) in over {
        out.insert(k.clone(), v.clone());
    }
    out
}

impl<'a, 't> Writer<'a, 't> {
    pub fn new(
        store: &'a Store,
        txn: &'a mut RwTxn<'t>,
        source: &'a str,
        now: String,
    ) -> Writer<'a, 't> {
        Writer {
            store,
            txn,
            source,
            now,
            stats: Stats::default(),
            cache: WriterCache::default(),
            pending: PendingLinks::default(),
        }
    }

    /// The interned id of a concept type, if it has one.
    fn type_id(&mut self, name: &str) -> Result<Option<u32>> {
        if let Some(&id) = self.cache.type_ids.get(name) {
            return Ok(Some(id));
        }
        let id = self.graph(|g| g.type_id(name))?;
        if let Some(id) = id {
            self.cache.type_ids.insert(name.to_owned(), id);
        }
        Ok(id)
    }

    /// Interns a concept type name (see [`Store::intern`]).
    fn intern_type(&mut self, name: &str) -> Result<u32> {
        if let Some(&id) = self.cache.type_ids.get(name) {
            return Ok(id);
        }
        let id = self
            .store
            .intern(self.txn, Namespace::ConceptType, name)
            .kip()?;
        self.cache.type_ids.insert(name.to_owned(), id);
        Ok(id)
    }

    /// Interns a predicate name (see [`Store::intern`]).
    fn intern_predicate(&mut self, name: &str) -> Result<u32> {
        if let Some(&id) = self.cache.predicate_ids.get(name) {
            return Ok(id);
        }
        let id = self
            .store
            .intern(self.txn, Namespace::Predicate, name)
            .kip()?;
        self.cache.predicate_ids.insert(name.to_owned(), id);
        Ok(id)
    }

    /// The concept `(type_id, name)`, if it exists.
    fn find_concept(&mut self, type_id: u32, name: &str) -> Result<Option<ConceptId>> {
        if let Some(&id) = self.cache.concepts.get(&type_id).and_then(|m| m.get(name)) {
            return Ok(Some(id));
        }
        let id = self.graph(|g| g.find_concept(type_id, name))?;
        if let Some(id) = id {
            self.remember_concept(id, type_id, name);
        }
        Ok(id)
    }

    fn remember_concept(&mut self, id: ConceptId, type_id: u32, name: &str) {
        self.cache
            .concepts
            .entry(type_id)
            .or_default()
            .insert(name.to_owned(), id);
        self.cache
            .heads
            .entry(id)
            .or_insert_with(|| (type_id, name.to_owned()));
    }

    fn type_defined(&mut self, name: &str) -> Result<bool> {
        if self.cache.defined_types.contains(name) {
            return Ok(true);
        }
        let defined = self.graph(|g| g.is_type_defined(name))?;
        if defined {
            self.cache.defined_types.insert(name.to_owned());
        }
        Ok(defined)
    }

    /// The signature of a predicate, or `None` if it is not defined.
    fn predicate(&mut self, name: &str) -> Result<Option<Rc<schema::Signature>>> {
        if let Some(sig) = self.cache.predicates.get(name) {
            return Ok(sig.clone());
        }
        let sig = self.graph(|g| {
            Ok(if g.is_predicate_defined(name)? {
                Some(Rc::new(schema::signature(g, name)?))
            } else {
                None
            })
        })?;
        self.cache.predicates.insert(name.to_owned(), sig.clone());
        Ok(sig)
    }

    /// The type id and name of a concept.
    fn head(&mut self, c: ConceptId) -> Result<Option<(u32, String)>> {
        if let Some(h) = self.cache.heads.get(&c) {
            return Ok(Some(h.clone()));
        }
        let head = self.store.concept_head(self.txn, c).kip()?;
        if let Some(h) = &head {
            self.cache.heads.insert(c, h.clone());
        }
        Ok(head)
    }

    fn cached_type_name(&mut self, id: u32) -> Result<String> {
        if let Some(n) = self.cache.type_names.get(&id) {
            return Ok(n.clone());
        }
        let name = self.graph(|g| Ok(g.type_name(id)?.to_string()))?;
        self.cache.type_names.insert(id, name.clone());
        Ok(name)
    }

    /// The type name of an element (`None` for a proposition).
    fn element_type(&mut self, e: ElementId) -> Result<Option<String>> {
        match e {
            ElementId::Concept(c) => match self.head(c)? {
                Some((t, _)) => Ok(Some(self.cached_type_name(t)?)),
                None => Ok(None),
            },
            ElementId::Proposition(_) => Ok(None),
        }
    }

    /// The name of an element for the search index (empty for a proposition).
    fn element_name(&mut self, e: ElementId) -> Result<String> {
        Ok(match e {
            ElementId::Concept(c) => self.head(c)?.map(|h| h.1).unwrap_or_default(),
            ElementId::Proposition(_) => String::new(),
        })
    }

    fn graph<T>(&self, f: impl FnOnce(&Graph<'_>) -> Result<T>) -> Result<T> {
        let graph = Graph::new(self.store, self.txn);
        f(&graph)
    }

    fn check_no_reserved(&self, obj: Option<&kip_lang::ast::Object>) -> Result<()> {
        if let Some(o) = obj
            && let Some((k, _)) = o.members.iter().find(|(k, _)| k.starts_with('_'))
        {
            return Err(reserved_key_error(k, self.source, o.span));
        }
        Ok(())
    }

    fn text<'b>(&self, arg: &'b Arg<String>) -> Result<&'b str> {
        arg.lit().map(String::as_str).ok_or_else(|| {
            KipError::new(ErrorCode::ReferenceError, "a placeholder was not bound")
                .at(self.source, arg.span())
        })
    }

    // ------------------------------------------------------------ UPSERT

    pub fn upsert(&mut self, u: &Upsert) -> Result<Json> {
        self.check_no_reserved(u.metadata.as_ref())?;
        let defaults = json_object(u.metadata.as_ref());
        let mut handles: HashMap<String, ElementId> = HashMap::new();
        let mut concept_ids = Vec::new();
        let mut proposition_ids = Vec::new();
        for item in &u.items {
            match item {
                UpsertItem::Concept(c) => {
                    self.check_no_reserved(c.attributes.as_ref())?;
                    self.check_no_reserved(c.metadata.as_ref())?;
                    let meta = merged(&defaults, &json_object(c.metadata.as_ref()));
                    let attrs = json_object(c.attributes.as_ref());
                    let id = self.upsert_concept(c, &attrs, &meta)?;
                    for entry in c.propositions.iter().flatten() {
                        self.check_no_reserved(entry.metadata.as_ref())?;
                        let predicate = self.text(&entry.predicate)?;
                        let target = self.resolve_term(&entry.target, &handles)?;
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
                    if let Some(h) = &c.handle {
                        handles.insert(h.name.clone(), ElementId::Concept(id));
                    }
                    concept_ids.push(json!(ElementId::Concept(id).to_string()));
                }
                UpsertItem::Proposition(p) => {
                    // This block reads and writes links by id: the deferred
                    // ones must be stored first.
                    self.flush_links()?;
                    self.check_no_reserved(p.attributes.as_ref())?;
                    self.check_no_reserved(p.metadata.as_ref())?;
                    let meta = merged(&defaults, &json_object(p.metadata.as_ref()));
                    let attrs = json_object(p.attributes.as_ref());
                    let id = match &p.matcher {
                        PropositionMatcher::Id(arg) => {
                            let id = self.existing_proposition(arg)?;
                            self.update_proposition(id, &attrs, &meta)?;
                            id
                        }
                        PropositionMatcher::Triple(t) => {
                            let s = self.resolve_term(&t.subject, &handles)?;
                            let o = self.resolve_term(&t.object, &handles)?;
                            let (name, span) = match &t.predicate {
                                PredicateExpr::Names { names, .. } => match names.first() {
                                    Some(n) => (self.text(n)?.to_owned(), n.span()),
                                    None => {
                                        return Err(KipError::new(
                                            ErrorCode::InvalidSyntax,
                                            "missing predicate",
                                        )
                                        .at(self.source, p.span));
                                    }
                                },
                                PredicateExpr::Var(v) => {
                                    return Err(KipError::new(
                                        ErrorCode::InvalidSyntax,
                                        "a predicate variable cannot be written",
                                    )
                                    .at(self.source, v.span));
                                }
                            };
                            self.upsert_link(s, &name, span, o, &attrs, &meta, p.span)?
                        }
                    };
                    if let Some(h) = &p.handle {
                        handles.insert(h.name.clone(), ElementId::Proposition(id));
                    }
                    proposition_ids.push(json!(ElementId::Proposition(id).to_string()));
                }
            }
        }
        self.flush_links()?;
        Ok(json!({
            "blocks": u.items.len(),
            "upsert_concept_nodes": concept_ids,
            "upsert_proposition_links": proposition_ids,
        }))
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
                let (ty_s, name_s) = (self.text(ty)?.to_owned(), self.text(name)?.to_owned());
                // The root defines itself (seed 001 §2.9.2): the one concept
                // whose type need not exist beforehand.
                let self_defining = ty_s == CONCEPT_TYPE && name_s == CONCEPT_TYPE;
                if !self_defining && !self.type_defined(&ty_s)? {
                    return Err(self
                        .graph(|g| schema::unknown_type(g, &ty_s))?
                        .at(self.source, ty.span()));
                }
                let type_id = self.intern_type(&ty_s)?;
                match self.find_concept(type_id, &name_s)? {
                    Some(id) => {
                        self.update_concept(id, attrs, meta, c.span)?;
                        Ok(id)
                    }
                    None => self.create_concept(type_id, &ty_s, &name_s, attrs, meta),
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
        metadata.insert("_created_at".into(), json!(self.now));
        metadata.insert("_updated_at".into(), json!(self.now));
        let record = ConceptRecord {
            type_id,
            name: name.to_owned(),
            attributes: attrs.clone(),
            metadata,
        };
        let id = self.store.create_concept(self.txn, &record).kip()?;
        self.remember_concept(id, type_id, name);
        // Definitions make their name usable: intern it in its namespace.
        if ty == CONCEPT_TYPE {
            self.intern_type(name)?;
        } else if ty == crate::graph::PROPOSITION_TYPE {
            self.intern_predicate(name)?;
        }
        search::index_concept(self.store, self.txn, id, &record)?;
        self.stats.concepts_created += 1;
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
        if schema::has_immutable_id(&ty, &old.name)
            && let (Some(new_id), Some(old_id)) = (attrs.get("id"), old.attributes.get("id"))
            && new_id != old_id
        {
            return Err(
                schema::protected_error(&ty, &old.name, "given a new `id`").at(self.source, span)
            );
        }
        let attributes = merged(&old.attributes, attrs);
        let mut metadata = merged(&old.metadata, meta);
        if attributes == old.attributes && metadata == old.metadata {
            return Ok(()); // a repeat: a true no-op, `_updated_at` included
        }
        metadata.insert("_updated_at".into(), json!(self.now));
        if ty == crate::graph::PROPOSITION_TYPE {
            self.cache.predicates.clear();
        }
        let record = ConceptRecord {
            attributes,
            metadata,
            ..old
        };
        self.store.update_concept(self.txn, id, &record).kip()?;
        search::index_concept(self.store, self.txn, id, &record)?;
        self.stats.concepts_updated += 1;
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
        metadata.insert("_created_at".into(), json!(self.now));
        metadata.insert("_updated_at".into(), json!(self.now));
        let record = PropositionRecord {
            subject: s,
            predicate: p,
            object: o,
            attributes: attrs.clone(),
            metadata,
        };
        let id = self.store.create_proposition(self.txn, &record).kip()?;
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
        if let Some(&i) = self.pending.by_triple.get(&(s, p, o)) {
            // A repeat of a link of this command: merge as
            // `update_proposition` would merge into the stored record.
            let old = &mut self.pending.records[i];
            let mut metadata = merged(&old.metadata, meta);
            if metadata != old.metadata {
                metadata.insert("_updated_at".into(), json!(self.now));
                old.metadata = metadata;
                self.stats.propositions_updated += 1;
            }
            return Ok(());
        }
        if let Some(id) = self.store.find_proposition(self.txn, s, p, o).kip()? {
            return self.update_proposition(id, &Object::new(), meta);
        }
        let mut metadata = meta.clone();
        metadata.insert("_created_at".into(), json!(self.now));
        metadata.insert("_updated_at".into(), json!(self.now));
        let record = PropositionRecord {
            subject: s,
            predicate: p,
            object: o,
            attributes: Object::new(),
            metadata,
        };
        if predicate == BELONGS_TO_DOMAIN {
            self.count_domain_member(&record, 1)?;
        }
        let names = [
            predicate.replace('_', " "),
            self.element_name(s)?,
            self.element_name(o)?,
        ];
        self.pending
            .by_triple
            .insert((s, p, o), self.pending.records.len());
        self.pending.records.push(record);
        self.pending.names.push(names);
        self.stats.propositions_created += 1;
        Ok(())
    }

    /// Writes the deferred links, in the order they were decided (ids as
    /// one-by-one creation would give them), and their search documents.
    fn flush_links(&mut self) -> Result<()> {
        if self.pending.records.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        let ids = self
            .store
            .create_propositions(self.txn, &pending.records)
            .kip()?;
        for ((id, record), names) in ids.into_iter().zip(&pending.records).zip(&pending.names) {
            search::index_proposition(self.store, self.txn, id, record, names)?;
        }
        Ok(())
    }

    fn count_domain_member(&mut self, link: &PropositionRecord, delta: i64) -> Result<()> {
        if let (ElementId::Concept(member), ElementId::Concept(domain)) =
            (link.subject, link.object)
            && let Some((t, _)) = self.head(member)?
        {
            self.store
                .add_counter(self.txn, &domain_counter(domain, t), delta)
                .kip()?;
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
        metadata.insert("_updated_at".into(), json!(self.now));
        let record = PropositionRecord {
            attributes,
            metadata,
            ..old
        };
        self.store.update_proposition(self.txn, id, &record).kip()?;
        self.reindex_proposition(id, &record)?;
        self.stats.propositions_updated += 1;
        Ok(())
    }

    fn reindex_proposition(&mut self, id: PropositionId, record: &PropositionRecord) -> Result<()> {
        let predicate =
            self.graph(|g| Ok(g.predicate_name(record.predicate)?.replace('_', " ")))?;
        let names = [
            predicate,
            self.element_name(record.subject)?,
            self.element_name(record.object)?,
        ];
        search::index_proposition(self.store, self.txn, id, record, &names)
    }

    // ------------------------------------------------------------ DELETE

    pub fn delete(&mut self, d: &Delete) -> Result<Json> {
        let targets: Vec<Val> = {
            let graph = Graph::new(self.store, self.txn);
            let (exec, rows) = kql::solve(&graph, self.source, &d.where_)?;
            let mut seen = HashSet::new();
            rows.iter()
                .map(|r| exec.val(r, &d.var.name))
                .filter(|v| *v != Val::Null && seen.insert(*v))
                .collect()
        };
        match &d.target {
            DeleteTarget::Attributes(keys) | DeleteTarget::Metadata(keys) => {
                let is_attributes = matches!(d.target, DeleteTarget::Attributes(_));
                let mut names = Vec::new();
                for k in keys {
                    let name = self.text(k)?;
                    if !is_attributes && name.starts_with('_') {
                        return Err(reserved_key_error(name, self.source, k.span()));
                    }
                    names.push(name.to_owned());
                }
                let (mut concepts, mut propositions) = (0, 0);
                for t in targets {
                    match t {
                        Val::Concept(c) => {
                            if self.delete_concept_keys(c, &names, is_attributes, d.span)? {
                                concepts += 1;
                            }
                        }
                        Val::Prop(p) => {
                            if self.delete_proposition_keys(p, &names, is_attributes)? {
                                propositions += 1;
                            }
                        }
                        Val::Null | Val::Pred(_) => {}
                    }
                }
                Ok(json!({"updated_concepts": concepts, "updated_propositions": propositions}))
            }
            DeleteTarget::Propositions => {
                let before = self.stats.propositions_deleted;
                for t in targets {
                    if let Val::Prop(p) = t {
                        self.delete_element(ElementId::Proposition(p))?;
                    }
                }
                Ok(json!({"deleted_propositions": self.stats.propositions_deleted - before}))
            }
            DeleteTarget::Concept => {
                // Check every target before deleting any, so a protected
                // one refuses the whole command.
                let mut concepts = Vec::new();
                for t in &targets {
                    if let Val::Concept(c) = t {
                        let (ty, name) = self.graph(|g| {
                            let rec = g.concept(*c)?;
                            Ok(match rec {
                                Some(r) => (g.type_name(r.type_id)?.to_string(), r.name.clone()),
                                None => (String::new(), String::new()),
                            })
                        })?;
                        if schema::is_protected(&ty, &name) {
                            return Err(schema::protected_error(&ty, &name, "deleted")
                                .at(self.source, d.var.span));
                        }
                        concepts.push(*c);
                    }
                }
                let (c0, p0) = (self.stats.concepts_deleted, self.stats.propositions_deleted);
                for c in concepts {
                    self.delete_element(ElementId::Concept(c))?;
                }
                Ok(json!({
                    "deleted_concepts": self.stats.concepts_deleted - c0,
                    "deleted_propositions": self.stats.propositions_deleted - p0,
                }))
            }
        }
    }

    fn delete_concept_keys(
        &mut self,
        id: ConceptId,
        keys: &[String],
        attributes: bool,
        span: Span,
    ) -> Result<bool> {
        let Some(mut rec) = self.graph(|g| Ok(g.concept(id)?.map(|r| (*r).clone())))? else {
            return Ok(false);
        };
        if attributes && keys.iter().any(|k| k == "id") {
            let ty = self.graph(|g| Ok(g.type_name(rec.type_id)?.to_string()))?;
            if schema::has_immutable_id(&ty, &rec.name) {
                return Err(
                    schema::protected_error(&ty, &rec.name, "stripped of its `id`")
                        .at(self.source, span),
                );
            }
        }
        let map = if attributes {
            &mut rec.attributes
        } else {
            &mut rec.metadata
        };
        let before = map.len();
        for k in keys {
            map.shift_remove(k);
        }
        if map.len() == before {
            return Ok(false);
        }
        rec.metadata.insert("_updated_at".into(), json!(self.now));
        self.store.update_concept(self.txn, id, &rec).kip()?;
        search::index_concept(self.store, self.txn, id, &rec)?;
        self.stats.concepts_updated += 1;
        Ok(true)
    }

    fn delete_proposition_keys(
        &mut self,
        id: PropositionId,
        keys: &[String],
        attributes: bool,
    ) -> Result<bool> {
        let Some(mut rec) = self.graph(|g| Ok(g.proposition(id)?.map(|r| (*r).clone())))? else {
            return Ok(false);
        };
        let map = if attributes {
            &mut rec.attributes
        } else {
            &mut rec.metadata
        };
        let before = map.len();
        for k in keys {
            map.shift_remove(k);
        }
        if map.len() == before {
            return Ok(false);
        }
        rec.metadata.insert("_updated_at".into(), json!(self.now));
        self.store.update_proposition(self.txn, id, &rec).kip()?;
        self.reindex_proposition(id, &rec)?;
        self.stats.propositions_updated += 1;
        Ok(true)
    }

    /// Deletes an element and, transitively, every link that mentions it
    /// (links about links included). Links go first, while the concepts
    /// they join still exist (the domain counters need their types).
    pub fn delete_element(&mut self, root: ElementId) -> Result<()> {
        let mut work = vec![root];
        let mut order = Vec::new();
        let mut seen: HashSet<ElementId> = HashSet::new();
        while let Some(e) = work.pop() {
            if !seen.insert(e) {
                continue;
            }
            order.push(e);
            for link in self.store.propositions_mentioning(self.txn, e).kip()? {
                work.push(ElementId::Proposition(link));
            }
        }
        for &e in order.iter().rev() {
            if let ElementId::Proposition(p) = e
                && let Some(rec) = self.graph(|g| Ok(g.proposition(p)?.map(|r| (*r).clone())))?
            {
                let pred = self.graph(|g| Ok(g.predicate_name(rec.predicate)?.to_string()))?;
                if pred == BELONGS_TO_DOMAIN {
                    self.count_domain_member(&rec, -1)?;
                }
                search::unindex(self.store, self.txn, e)?;
                self.store.delete_proposition(self.txn, p).kip()?;
                self.stats.propositions_deleted += 1;
            }
        }
        for &e in &order {
            if let ElementId::Concept(c) = e
                && self.graph(|g| Ok(g.concept(c)?.is_some()))?
            {
                search::unindex(self.store, self.txn, e)?;
                self.store.delete_concept(self.txn, c).kip()?;
                self.cache.heads.remove(&c);
                self.stats.concepts_deleted += 1;
            }
        }
        Ok(())
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

//! The [`Writer`]: every KML write goes through it, so that the derived
//! state stays in the same transaction as the change (provenance
//! timestamps, the search index, per-domain counters). It holds the
//! per-command caches and what was decided but not written yet; the
//! commands (`upsert`, `update`, `merge`, `delete`, `restore`) add their
//! methods beside it.

use std::rc::Rc;

use kip_lang::ast::*;
use kip_lang::{ErrorCode, KipError};
use kip_store::{ConceptId, ElementId, Namespace, PropositionId, PropositionRecord, RwTxn, Store};
use serde_json::Value as Json;

use super::changes;
use super::group::{Carry, Group, GroupLinks, RecentGroups, WrittenLinks};
use super::object::{Object, reserved_key_error, stamp_new_at, version_of};
use super::pending::{PendingDocuments, PendingLinks, WriterCache};
use crate::graph::{Graph, OrInternal as _, Result};
use crate::stats::Stats;
use crate::{schema, search};

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
    pub(in crate::kml) cache: WriterCache,
    /// New links of `SET PROPOSITIONS` entries not written yet: they are
    /// created together by [`Writer::flush_links`], in their order (so they
    /// get the ids one-by-one creation would give them).
    pub(in crate::kml) pending: PendingLinks,
    /// Search documents of concepts an UPSERT created or changed, written
    /// together at the end of the command (see [`Writer::flush_documents`]).
    pub(in crate::kml) pending_documents: PendingDocuments,
    /// Attribute-index entries of the concepts an UPSERT created, written
    /// together in key order with its search documents (see
    /// [`Writer::flush_documents`]), or before a concept is written again.
    pub(in crate::kml) pending_attrs: kip_store::AttrEntries,
    /// Set only while Genesis bootstraps a new nexus: the foundation is
    /// being laid, so the protected scope does not apply yet.
    pub(crate) bootstrap: bool,
    /// Each element's change, collected only for a preview (see
    /// [`Writer::collect_changes`]).
    pub(in crate::kml) changes: Option<changes::Changes>,
    /// Concepts the caller looked up before the write (see
    /// [`crate::known::KnownConcepts`]): consulted before the store.
    pub known: Option<&'a crate::known::KnownConcepts>,
    /// Set while the writer runs one command of a group write (see
    /// [`Carry`]): its links and documents are not written at the end of
    /// the command.
    pub(in crate::kml) group: Option<Group>,
    /// The links a group write has written before its end (see
    /// [`Writer::may_be_stored`]).
    pub(in crate::kml) written: WrittenLinks,
    /// The links the last group writes created (set in a group write).
    pub(crate) recent: Option<&'a RecentGroups>,
    /// Whether the links `known` says were absent are still absent unless
    /// the group wrote them, and the earlier groups that could have written
    /// them since: looked up once per command.
    pub(in crate::kml) known_links_hold: Option<Option<&'a [GroupLinks]>>,
    /// Where each sweep's next cycle starts (the nexus's; see
    /// `kql::sweep`). Without it every UPDATE scans from the first link.
    pub(crate) sweep_starts: Option<&'a crate::kql::SweepStarts>,
    /// Set while time travel rewinds a throwaway copy (see
    /// `trace::as_of`): [`Writer::restore`] puts every element back exactly
    /// as its before-image says, reserved metadata included, instead of as
    /// a new mutation.
    pub(crate) rewind: bool,
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
            pending_documents: PendingDocuments::default(),
            pending_attrs: kip_store::AttrEntries::default(),
            bootstrap: false,
            changes: None,
            known: None,
            group: None,
            written: WrittenLinks::default(),
            recent: None,
            known_links_hold: None,
            sweep_starts: None,
            rewind: false,
        }
    }

    /// Takes up a group write where the previous command's writer left it
    /// (see [`Carry`]): this writer runs the group's next command.
    pub(crate) fn resume(&mut self, carry: Carry) {
        let Carry {
            pending,
            pending_documents,
            cache,
            group,
            written,
        } = carry;
        self.pending = pending;
        self.pending_documents = pending_documents;
        self.cache = cache;
        self.written = written;
        self.group = Some(Group {
            command: group.earlier.len() as u32,
            earlier: group.earlier,
        });
    }

    /// Hands the group write on after this writer's command, its
    /// before-image included, without writing what it deferred.
    pub(crate) fn suspend(mut self) -> Result<Carry> {
        // The next text may read what this one created by its attributes.
        self.flush_attrs()?;
        let mut group = self.group.take().unwrap_or_default();
        group.earlier.push(self.changes.take());
        Ok(self.hand_on(group))
    }

    /// What this writer carries on to the group's next writer.
    pub(in crate::kml) fn hand_on(&mut self, group: Group) -> Carry {
        Carry {
            pending: std::mem::take(&mut self.pending),
            pending_documents: std::mem::take(&mut self.pending_documents),
            cache: std::mem::take(&mut self.cache),
            group,
            written: std::mem::take(&mut self.written),
        }
    }

    /// Writes the links a group write has decided so far (see [`Carry`]),
    /// or when there are none their search documents and the concepts',
    /// and hands the group on; this writer runs no command.
    pub(crate) fn write_decided(mut self, carry: Carry) -> Result<Carry> {
        self.resume(carry);
        if self.pending.triples.is_empty() {
            // Asked again: the search documents too.
            self.index_link_documents()?;
            self.flush_documents()?;
        } else {
            // Their search documents wait (one batch is cheaper), unless
            // asked again.
            self.flush_links()?;
        }
        let group = self.group.take().unwrap_or_default();
        Ok(self.hand_on(group))
    }

    /// Writes everything a group write deferred (see [`Carry`]) and hands
    /// back each command's before-image; this writer runs no command.
    pub(crate) fn finish_group(mut self, carry: Carry) -> Result<Carry> {
        self.resume(carry);
        // Noted for the next groups (see `RecentGroups`).
        self.create_pending_links(true)?;
        self.index_link_documents()?;
        self.flush_documents()?;
        let group = self.group.take().unwrap_or_default();
        Ok(Carry {
            group,
            written: std::mem::take(&mut self.written),
            ..Carry::default()
        })
    }

    /// The engine's metadata of a new element: `_version` 1, created and
    /// updated now.
    pub(in crate::kml) fn stamp_new(&self, meta: &mut Object) {
        stamp_new_at(meta, &self.now);
    }

    /// The engine's metadata of an element that really changed: `_version`
    /// one above the old record's, updated now. Callers only touch after
    /// comparing, so a no-op leaves both untouched.
    pub(in crate::kml) fn touch(&self, meta: &mut Object, old: &Object) {
        meta.insert("_version".into(), Json::from(version_of(old) + 1));
        meta.insert("_updated_at".into(), Json::from(self.now.as_str()));
    }

    /// The interned id of a concept type, if it has one.
    pub(in crate::kml) fn type_id(&mut self, name: &str) -> Result<Option<u32>> {
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
    pub(in crate::kml) fn intern_type(&mut self, name: &str) -> Result<u32> {
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
    pub(in crate::kml) fn intern_predicate(&mut self, name: &str) -> Result<u32> {
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
    pub(in crate::kml) fn find_concept(
        &mut self,
        type_id: u32,
        name: &str,
    ) -> Result<Option<ConceptId>> {
        // Most of a bulk import's concepts were looked up by its checks
        // ahead: found there, they need no copy in `cache.concepts` (only
        // their head, for the links' checks and search documents).
        if let Some(known) = self.known {
            if !self.cache.type_names.contains_key(&type_id) {
                self.cached_type_name(type_id)?;
            }
            let ty = self
                .cache
                .type_names
                .get(&type_id)
                .map_or("", String::as_str);
            if let Some(Some(id)) = known.get_in_order(ty, name) {
                (self.cache.heads)
                    .entry(id)
                    .or_insert_with(|| (type_id, name.to_owned()));
                return Ok(Some(id));
            }
        }
        if let Some(&id) = self.cache.concepts.get(&type_id).and_then(|m| m.get(name)) {
            return Ok(Some(id));
        }
        let id = self.graph(|g| g.find_concept(type_id, name))?;
        if let Some(id) = id {
            self.remember_concept(id, type_id, name);
        }
        Ok(id)
    }

    pub(in crate::kml) fn remember_concept(&mut self, id: ConceptId, type_id: u32, name: &str) {
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

    pub(in crate::kml) fn type_defined(&mut self, name: &str) -> Result<bool> {
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
    pub(in crate::kml) fn predicate(
        &mut self,
        name: &str,
    ) -> Result<Option<Rc<schema::Signature>>> {
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
    pub(in crate::kml) fn head(&mut self, c: ConceptId) -> Result<Option<(u32, String)>> {
        if let Some(h) = self.cache.heads.get(&c) {
            return Ok(Some(h.clone()));
        }
        let head = self.store.concept_head(self.txn, c).kip()?;
        if let Some(h) = &head {
            self.cache.heads.insert(c, h.clone());
        }
        Ok(head)
    }

    pub(in crate::kml) fn cached_type_name(&mut self, id: u32) -> Result<String> {
        if let Some(n) = self.cache.type_names.get(&id) {
            return Ok(n.clone());
        }
        let name = self.graph(|g| Ok(g.type_name(id)?.to_string()))?;
        self.cache.type_names.insert(id, name.clone());
        Ok(name)
    }

    /// The type name of an element (`None` for a proposition).
    pub(in crate::kml) fn element_type(&mut self, e: ElementId) -> Result<Option<String>> {
        match e {
            ElementId::Concept(c) => match self.head(c)? {
                Some((t, _)) => Ok(Some(self.cached_type_name(t)?)),
                None => Ok(None),
            },
            ElementId::Proposition(_) => Ok(None),
        }
    }

    /// The name of an element for the search index (empty for a proposition).
    pub(in crate::kml) fn element_name(&mut self, e: ElementId) -> Result<String> {
        Ok(match e {
            ElementId::Concept(c) => self.head(c)?.map(|h| h.1).unwrap_or_default(),
            ElementId::Proposition(_) => String::new(),
        })
    }

    pub(in crate::kml) fn graph<T>(&self, f: impl FnOnce(&Graph<'_>) -> Result<T>) -> Result<T> {
        let graph = Graph::new(self.store, self.txn);
        f(&graph)
    }

    pub(in crate::kml) fn check_no_reserved(
        &self,
        obj: Option<&kip_lang::ast::Object>,
    ) -> Result<()> {
        if let Some(o) = obj
            && let Some((k, _)) = o.members.iter().find(|(k, _)| k.starts_with('_'))
        {
            return Err(reserved_key_error(k, self.source, o.span));
        }
        Ok(())
    }

    pub(in crate::kml) fn text<'b>(&self, arg: &'b Arg<String>) -> Result<&'b str> {
        arg.lit().map(String::as_str).ok_or_else(|| {
            KipError::new(ErrorCode::ReferenceError, "a placeholder was not bound")
                .at(self.source, arg.span())
        })
    }

    /// Moves the per-domain counter of the member's type when a
    /// `belongs_to_domain` link is created (`+1`) or deleted (`-1`).
    pub(in crate::kml) fn count_domain_member(
        &mut self,
        link: &PropositionRecord,
        delta: i64,
    ) -> Result<()> {
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

    /// Rewrites a link's search document after its record changed.
    pub(in crate::kml) fn reindex_proposition(
        &mut self,
        id: PropositionId,
        record: &PropositionRecord,
    ) -> Result<()> {
        let predicate =
            self.graph(|g| Ok(g.predicate_name(record.predicate)?.replace('_', " ")))?;
        let names = [
            predicate,
            self.element_name(record.subject)?,
            self.element_name(record.object)?,
        ];
        search::index_proposition(self.store, self.txn, id, record, &names)
    }
}

//! KML: UPSERT, UPDATE, MERGE and the four DELETE forms, inside the caller's write
//! transaction (the caller commits, or aborts on error or dry run, so a
//! command is atomic).
//!
//! Every write goes through [`Writer`], which keeps the derived state in
//! the same transaction as the change: provenance timestamps, the search
//! index, per-domain counters and the DETACH cascade.
//!
//! This module holds the [`Writer`] with its per-command caches and the
//! statistics; `upsert.rs`, `update.rs`, `merge.rs` and `delete.rs` hold
//! the commands.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use kip_lang::ast::*;
use kip_lang::{ErrorCode, KipError};
use kip_store::{ConceptId, ElementId, Namespace, PropositionId, PropositionRecord, RwTxn, Store};
use serde_json::{Map, Value as Json};

use crate::graph::{Graph, OrInternal as _, Result};
pub use crate::stats::Stats;
use crate::{schema, search};

pub(crate) mod changes;
mod delete;
mod merge;
mod restore;
mod update;
mod upsert;

pub use changes::{
    BeforeImage, ElementChange, End as ChangeEnd, Kind as ChangeKind, Op as ChangeOp,
    State as ChangeState,
};

type Object = Map<String, Json>;

/// The writer's caches are looked up several times per written link: a
/// fast hasher, seeded per process like std's.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

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
    /// Search documents of concepts an UPSERT created or changed, written
    /// together at the end of the command (see [`Writer::flush_documents`]).
    pending_documents: PendingDocuments,
    /// Attribute-index entries of the concepts an UPSERT created, written
    /// together in key order with its search documents (see
    /// [`Writer::flush_documents`]), or before a concept is written again.
    pending_attrs: kip_store::AttrEntries,
    /// Set only while Genesis bootstraps a new nexus: the foundation is
    /// being laid, so the protected scope does not apply yet.
    pub(crate) bootstrap: bool,
    /// Each element's change, collected only for a preview (see
    /// [`Writer::collect_changes`]).
    changes: Option<changes::Changes>,
    /// Concepts the caller looked up before the write (see
    /// [`crate::known::KnownConcepts`]): consulted before the store.
    pub known: Option<&'a crate::known::KnownConcepts>,
    /// Set while the writer runs one command of a group write (see
    /// [`Carry`]): its links and documents are not written at the end of
    /// the command.
    group: Option<Group>,
    /// The links a group write has written before its end (see
    /// [`Writer::may_be_stored`]).
    written: WrittenLinks,
    /// The links the last group writes created (set in a group write).
    pub(crate) recent: Option<&'a RecentGroups>,
    /// Whether the links `known` says were absent are still absent unless
    /// the group wrote them, and the earlier groups that could have written
    /// them since: looked up once per command.
    known_links_hold: Option<Option<&'a [GroupLinks]>>,
}

/// What a group write has written of links before its end, as far as the
/// links the checks ahead found absent are concerned (see
/// [`crate::known::KnownConcepts::set_links`]): the deferred links it wrote early,
/// and whether it created any other way (then it no longer knows).
///
/// The links written early are kept as 64-bit fingerprints (a group may
/// write hundreds of thousands this way): a fingerprint shared by another
/// link only costs that link the look-up it would have had anyway.
#[derive(Debug, Default)]
pub(crate) struct WrittenLinks {
    early: HashSet<u64, foldhash::fast::RandomState>,
    fingerprint: foldhash::fast::RandomState,
    untracked: bool,
}

impl WrittenLinks {
    /// Fingerprinted as `recent` fingerprints (so that a later group can
    /// look this one's links up there).
    pub(crate) fn new(recent: &RecentGroups) -> WrittenLinks {
        WrittenLinks {
            fingerprint: recent.fingerprint.clone(),
            ..WrittenLinks::default()
        }
    }

    fn note(&mut self, links: &[kip_store::Triple]) {
        use std::hash::BuildHasher as _;
        for t in links {
            let link: crate::known::LinkKey = (t.subject, t.predicate, t.object);
            self.early.insert(self.fingerprint.hash_one(link));
        }
    }

    /// Whether `link` may have been written early.
    fn may_hold(&self, link: &crate::known::LinkKey) -> bool {
        use std::hash::BuildHasher as _;
        self.early.contains(&self.fingerprint.hash_one(link))
    }
}

/// The links the last few group writes of this process created, each with
/// the change-log sequence numbers before and after it: a check made ahead
/// in a snapshot taken before a group (the first file of the next group was
/// checked while this one ran) still holds for the links it found absent
/// when every write since is one of these groups, one after the other, and
/// none of them created the link.
#[derive(Debug, Default)]
pub(crate) struct RecentGroups {
    /// Oldest first.
    groups: Vec<GroupLinks>,
    fingerprint: foldhash::fast::RandomState,
}

/// One committed group write of [`RecentGroups`].
#[derive(Debug)]
pub(crate) struct GroupLinks {
    /// The change-log sequence numbers before and after it.
    before: u64,
    after: u64,
    /// The links it created.
    links: WrittenLinks,
}

impl GroupLinks {
    /// Whether the group may have created `link`.
    pub(crate) fn created(&self, link: &crate::known::LinkKey) -> bool {
        self.links.may_hold(link)
    }
}

impl RecentGroups {
    /// How many groups back a check may have been made: the reader checks
    /// at most two files ahead.
    const KEPT: usize = 2;

    /// Records a committed group that went from `before` to `after`.
    pub(crate) fn record(&mut self, before: u64, after: u64, written: WrittenLinks) {
        if written.untracked {
            self.groups.clear();
            return;
        }
        if self.groups.last().is_some_and(|g| g.after != before) {
            self.groups.clear(); // something else was written in between
        }
        self.groups.push(GroupLinks {
            before,
            after,
            links: written,
        });
        if self.groups.len() > Self::KEPT {
            self.groups.remove(0);
        }
    }

    /// The groups that took the nexus from sequence `from` to `to`, one
    /// after the other, if nothing else was written in between.
    fn between(&self, from: u64, to: u64) -> Option<&[GroupLinks]> {
        let first = self.groups.iter().position(|g| g.before == from)?;
        let chain = &self.groups[first..];
        let ends_at_to = chain.last().is_some_and(|g| g.after == to);
        let joined = chain.windows(2).all(|w| w[0].after == w[1].before);
        (ends_at_to && joined).then_some(chain)
    }
}

/// Where a command of a group write stands: its number in the group, and
/// the before-images of the group's earlier commands, which the links they
/// deferred are noted into when they are written.
#[derive(Debug, Default)]
struct Group {
    command: u32,
    earlier: Vec<Option<changes::Changes>>,
}

/// What a group write (`Bulk::group`: the commands of several texts
/// in one transaction) carries from one command's writer to the next: the
/// links and documents decided but not written yet, so that they are
/// written together, in one sorted batch, at the group's end; the
/// schema look-ups; and each command's before-image so far.
#[derive(Debug, Default)]
pub(crate) struct Carry {
    pending: PendingLinks,
    pending_documents: PendingDocuments,
    cache: WriterCache,
    group: Group,
    written: WrittenLinks,
}

impl Carry {
    /// Forgets the concepts looked up so far (a group write's next text
    /// looks its own up: keeping every text's would hold them all).
    pub(crate) fn forget_concepts(&mut self) {
        self.cache.concepts.clear();
        self.cache.heads.clear();
    }

    /// The number of links and search documents decided and not written
    /// yet (each holds a few hundred bytes until the group's flush).
    pub(crate) fn pending(&self) -> usize {
        self.pending.triples.len()
            + self.pending_documents.documents.len()
            + self.pending_documents.links.len()
    }

    /// Starts a group write's carry, its links fingerprinted as `recent`
    /// fingerprints.
    pub(crate) fn new(recent: &RecentGroups) -> Carry {
        Carry {
            written: WrittenLinks::new(recent),
            ..Carry::default()
        }
    }

    /// The links the group created (once it is finished).
    pub(crate) fn take_written(&mut self) -> WrittenLinks {
        std::mem::take(&mut self.written)
    }

    /// Each command's before-image, in order (empty for commands that
    /// collected none), once everything is written.
    pub(crate) fn into_images(self) -> Vec<BeforeImage> {
        self.group
            .earlier
            .into_iter()
            .map(|c| c.map(changes::Changes::into_image).unwrap_or_default())
            .collect()
    }
}

/// Links decided but not yet written (see [`Writer::flush_links`]).
///
/// Only links that nothing reads back before the flush are deferred: every
/// path that reads propositions from the store (a `PROPOSITION` block, a
/// `(…)` or `{id}` proposition term) flushes first, and a link repeated
/// before the flush is found here and merged, as the stored one would be.
#[derive(Debug, Default)]
struct PendingLinks {
    triples: Vec<kip_store::Triple>,
    /// Each link's metadata, as an index into `metadata`: the links of a
    /// command share theirs (they are stamped with the same time), so a
    /// bulk write holds it once, not once per link.
    meta: Vec<u32>,
    metadata: Vec<Object>,
    /// The command of a group write that decided each link (see
    /// [`Carry`]); empty outside a group.
    commands: Vec<u32>,
    /// Each link's ends' terms for its search document (see
    /// [`crate::search::Terms`]).
    end_terms: Vec<[crate::search::Terms; 2]>,
    by_triple: FastMap<(ElementId, u32, ElementId), usize>,
    /// The last metadata a new link was given, and the time it was
    /// stamped with, and its entry in `metadata`: the next link given the
    /// same at the same time shares that entry without stamping a copy.
    stamped: Option<(Object, String, u32)>,
}

impl PendingLinks {
    /// The index of `metadata` in [`PendingLinks::metadata`]: the last
    /// one's if equal (consecutive links of a command), else a new entry.
    fn share(&mut self, metadata: Object) -> u32 {
        if self.metadata.last() != Some(&metadata) {
            self.metadata.push(metadata);
        }
        (self.metadata.len() - 1) as u32
    }

    /// [`PendingLinks::share`] of `given` stamped as new at `now` (see
    /// [`Writer::stamp_new`]), stamped once for a run of links given the
    /// same metadata at the same time.
    fn share_new(&mut self, given: &Object, now: &str, stamp: impl FnOnce(&mut Object)) -> u32 {
        if let Some((last, at, index)) = &self.stamped
            && last == given
            && at == now
        {
            return *index;
        }
        let mut metadata = given.clone();
        stamp(&mut metadata);
        let index = self.share(metadata);
        self.stamped = Some((given.clone(), now.to_owned(), index));
        index
    }
}

/// Concept search documents decided but not written yet: one per concept
/// (a later block about the same concept replaces its document). Nothing an
/// UPSERT does reads the text index, so they are written once, at the end
/// of the command, as one batch ([`kip_store::Store::index_documents`]).
///
/// So are the documents of links a group write wrote before its end (see
/// [`Writer::flush_links`]): they wait for the group's end.
#[derive(Debug, Default)]
struct PendingDocuments {
    documents: Vec<kip_store::NewDocument>,
    at: FastMap<ConceptId, usize>,
    /// The search documents of the links written so far.
    links: crate::search::LinkDocuments,
}

/// [`Writer::stamp_new`] at time `now`.
fn stamp_new_at(meta: &mut Object, now: &str) {
    meta.insert("_version".into(), Json::from(1));
    meta.insert("_created_at".into(), Json::from(now));
    meta.insert("_updated_at".into(), Json::from(now));
}

/// What one command looks up again and again. Only facts that cannot turn
/// false within the command are kept (a defined type stays defined: UPSERT
/// cannot delete), and predicate signatures are dropped whenever a
/// `$PropositionType` definition is written.
#[derive(Debug, Default)]
struct WriterCache {
    defined_types: HashSet<String, foldhash::fast::RandomState>,
    predicates: FastMap<String, Option<Rc<schema::Signature>>>,
    heads: FastMap<ConceptId, (u32, String)>,
    type_names: FastMap<u32, String>,
    /// Interned ids of type and predicate names (an interned id never
    /// changes; only names found interned are kept).
    type_ids: FastMap<String, u32>,
    predicate_ids: FastMap<String, u32>,
    /// Concepts by type id and name: UPSERT neither deletes nor renames,
    /// so a concept found or created stays where it is for the command.
    concepts: FastMap<u32, FastMap<String, ConceptId>>,
}

fn reserved_key_error(key: &str, source: &str, span: Span) -> KipError {
    KipError::new(
        ErrorCode::ConstraintViolation,
        format!("'{key}' is reserved for the engine: metadata keys starting with '_' cannot be written or deleted"),
    )
    .with_hint("The engine maintains _version, _created_at, _updated_at, _merged_from and _score itself; rename the key without the leading underscore.")
    .at(source, span)
}

/// An element's `_version` (RC9 §2.11.1): its mutation counter, 1 when it
/// was created. A record written before versions existed counts as 1.
pub fn version_of(meta: &Object) -> u64 {
    meta.get("_version").and_then(Json::as_u64).unwrap_or(1)
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
            pending_documents: PendingDocuments::default(),
            pending_attrs: kip_store::AttrEntries::default(),
            bootstrap: false,
            changes: None,
            known: None,
            group: None,
            written: WrittenLinks::default(),
            recent: None,
            known_links_hold: None,
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
    fn hand_on(&mut self, group: Group) -> Carry {
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
    fn stamp_new(&self, meta: &mut Object) {
        stamp_new_at(meta, &self.now);
    }

    /// The engine's metadata of an element that really changed: `_version`
    /// one above the old record's, updated now. Callers only touch after
    /// comparing, so a no-op leaves both untouched.
    fn touch(&self, meta: &mut Object, old: &Object) {
        meta.insert("_version".into(), Json::from(version_of(old) + 1));
        meta.insert("_updated_at".into(), Json::from(self.now.as_str()));
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

    /// Moves the per-domain counter of the member's type when a
    /// `belongs_to_domain` link is created (`+1`) or deleted (`-1`).
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

    /// Rewrites a link's search document after its record changed.
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
}

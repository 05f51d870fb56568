//! The nexus's read view of the store inside one transaction: name
//! resolution, record decoding with a per-command cache, index lookups and
//! counters, and the JSON shapes of concepts and propositions.
//!
//! Everything the query engine reads goes through [`Graph`]; it is the one
//! place that knows the store's API, so the executor stays about KIP.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use crate::embedding::Model;

use kip_lang::{ErrorCode, KipError};
use kip_store::{
    ConceptId, ConceptRecord, ElementId, Namespace, PropositionId, PropositionRecord, RoTxn, Store,
    StoreError,
};
use serde_json::{Value as Json, json};

/// A link as `(id, subject, predicate, object)`.
pub type Link = (PropositionId, ElementId, u32, ElementId);

pub type Result<T> = std::result::Result<T, KipError>;

/// The attribute index's query shapes are part of the read view's API: the
/// planner builds them, [`Graph::attr_lookup`] answers them.
pub(crate) use kip_store::{AttrMatches, AttrQuery, Cell, FieldKind};

/// Storage failures reach clients as `KIP_4003`, with what happened; a
/// full map or a full disk as `KIP_4002`.
pub(crate) fn internal(e: StoreError) -> KipError {
    match e {
        StoreError::Full { .. } | StoreError::DiskFull { .. } => KipError::new(
            ErrorCode::ResourceExhausted,
            format!("the nexus is out of space: {e}"),
        )
        .with_hint("The nexus kept what it held. Free disk space (or raise the limit the message names), or split the write into smaller ones, then try again."),
        other => KipError::new(ErrorCode::InternalError, format!("storage error: {other}")),
    }
}

/// A KIP error crossing a store transaction: the store's closures need an
/// error type its own errors convert into, and KIP errors must pass too.
#[derive(Debug)]
pub(crate) struct TxnError(pub KipError);

impl From<StoreError> for TxnError {
    fn from(e: StoreError) -> TxnError {
        TxnError(internal(e))
    }
}

impl From<KipError> for TxnError {
    fn from(e: KipError) -> TxnError {
        TxnError(e)
    }
}

pub(crate) trait OrInternal<T> {
    fn kip(self) -> Result<T>;
}

impl<T> OrInternal<T> for std::result::Result<T, StoreError> {
    fn kip(self) -> Result<T> {
        self.map_err(internal)
    }
}

/// The meta-types of the bootstrap (seed 001 §2.9.1).
pub const CONCEPT_TYPE: &str = "$ConceptType";
pub const PROPOSITION_TYPE: &str = "$PropositionType";
pub const DOMAIN: &str = "Domain";
pub const BELONGS_TO_DOMAIN: &str = "belongs_to_domain";

/// A read view over one transaction with caches for decoded records.
#[allow(missing_debug_implementations)] // holds a transaction
pub struct Graph<'t> {
    pub(crate) store: &'t Store,
    pub(crate) txn: &'t RoTxn<'t>,
    /// The embedding model, when the nexus searches by meaning.
    pub(crate) embedder: Option<Arc<Model>>,
    concepts: RefCell<HashMap<ConceptId, Rc<ConceptRecord>>>,
    propositions: RefCell<HashMap<PropositionId, Rc<PropositionRecord>>>,
    type_names: RefCell<HashMap<u32, Rc<str>>>,
    predicate_names: RefCell<HashMap<u32, Rc<str>>>,
    /// Interned attribute-key ids by name (`None`: never interned).
    key_ids: RefCell<HashMap<String, Option<u32>, foldhash::fast::RandomState>>,
    /// Name lookups and counters the compiler and planner ask for on every
    /// command: a snapshot that runs many FINDs (the logic-property
    /// resolver's batches) reads each once. Like the record caches above,
    /// valid for the life of the view (a writer makes a new view per
    /// statement). By namespace tag, then name (found without a copy of
    /// the name: the capsule checks ask once per link).
    lookups: RefCell<HashMap<u8, HashMap<String, Option<u32>>>>,
    defined: RefCell<HashMap<(bool, String), bool>>,
    counts: RefCell<HashMap<(u8, u32), u64>>,
    /// The link a sweep is looking at (see [`Graph::set_scanned`]): its
    /// id and its encoded attributes and metadata, so that its FILTERs read
    /// their keys from these bytes rather than looking the link up again.
    scanned: RefCell<Option<ScannedLink>>,
}

/// A link as a sweep scans it: `(id, subject, predicate, object)`.
pub(crate) type LinkHead = (PropositionId, ElementId, u32, ElementId);

fn head(link: &kip_store::RawProposition<'_>) -> LinkHead {
    let t = link.triple;
    (link.id, t.subject, t.predicate, t.object)
}

/// A copy of a scanned link's encoded maps (buffers reused link to link),
/// and the keys read from them so far: a sweep's FILTERs read each key
/// about twice (`IS_NULL(k) || k < x`), decoded once.
struct ScannedLink {
    id: PropositionId,
    attributes: Vec<u8>,
    metadata: Vec<u8>,
    read: Vec<(FieldKind, u32, Json)>,
}

impl<'t> Graph<'t> {
    pub(crate) fn new(store: &'t Store, txn: &'t RoTxn<'t>) -> Graph<'t> {
        Graph {
            store,
            txn,
            concepts: RefCell::default(),
            propositions: RefCell::default(),
            type_names: RefCell::default(),
            predicate_names: RefCell::default(),
            key_ids: RefCell::default(),
            lookups: RefCell::default(),
            defined: RefCell::default(),
            counts: RefCell::default(),
            scanned: RefCell::default(),
            embedder: None,
        }
    }

    /// Makes `link` the link a sweep is looking at: reads of one of its
    /// keys ([`Graph::proposition_field`]) come from its bytes until the
    /// next call, or until [`Graph::clear_scanned`].
    fn set_scanned(&self, link: &kip_store::RawProposition<'_>) {
        let mut slot = self.scanned.borrow_mut();
        let s = slot.get_or_insert_with(|| ScannedLink {
            id: link.id,
            attributes: Vec::new(),
            metadata: Vec::new(),
            read: Vec::new(),
        });
        s.id = link.id;
        s.read.clear();
        s.attributes.clear();
        s.attributes.extend_from_slice(link.attributes);
        s.metadata.clear();
        s.metadata.extend_from_slice(link.metadata);
    }

    pub(crate) fn clear_scanned(&self) {
        *self.scanned.borrow_mut() = None;
    }

    /// The links whose id is in `from..until`, in id order, as `(id,
    /// subject, predicate, object)`; each one yielded becomes the link a
    /// sweep is looking at ([`Graph::set_scanned`]).
    pub(crate) fn scan_links(
        &self,
        from: PropositionId,
        until: Option<PropositionId>,
    ) -> Result<impl Iterator<Item = Result<LinkHead>> + '_> {
        let iter = self.store.raw_propositions_from(self.txn, from).kip()?;
        Ok(iter
            .take_while(move |link| match (link, until) {
                (Ok(l), Some(u)) => l.id < u,
                _ => true,
            })
            .map(|link| {
                let link = link.kip()?;
                self.set_scanned(&link);
                Ok(head(&link))
            }))
    }

    /// The links' `(id, subject, predicate, object)` from the first, in id
    /// order: keys only, nothing of a link's maps copied (for counting).
    pub(crate) fn link_heads(&self) -> Result<impl Iterator<Item = Result<LinkHead>> + '_> {
        let iter = (self.store)
            .raw_propositions_from(self.txn, PropositionId(0))
            .kip()?;
        Ok(iter.map(|link| Ok(head(&link.kip()?))))
    }

    /// The link `id` as [`Graph::scan_links`] yields it (and made the link
    /// a sweep is looking at), if it exists.
    pub(crate) fn scan_link(&self, id: PropositionId) -> Result<Option<LinkHead>> {
        let Some(link) = self.store.raw_proposition(self.txn, id).kip()? else {
            return Ok(None);
        };
        self.set_scanned(&link);
        Ok(Some(head(&link)))
    }

    /// The change log's entries after `seq` in this snapshot, oldest first
    /// (at most [`kip_store::MAX_CHANGES`]), and whether that is all of them.
    pub(crate) fn changes_since(&self, seq: u64) -> Result<(Vec<(u64, Json)>, bool)> {
        let entries = self.store.changes_since(self.txn, seq).kip()?;
        let whole = (entries.len() as u64) < kip_store::MAX_CHANGES;
        Ok((entries, whole))
    }

    /// The view with the nexus's embedder, for SEARCH by meaning.
    pub(crate) fn with_embedder(mut self, embedder: Option<Arc<Model>>) -> Graph<'t> {
        self.embedder = embedder;
        self
    }

    /// Every concept record, in id order (creation order).
    pub fn all_concepts(
        &self,
    ) -> Result<impl Iterator<Item = Result<(ConceptId, ConceptRecord)>> + '_> {
        let iter = self.store.all_concepts(self.txn).kip()?;
        Ok(iter.map(|entry| entry.kip()))
    }

    /// Every proposition record, in id order (a proposition comes after the
    /// elements it links).
    pub fn all_propositions(
        &self,
    ) -> Result<impl Iterator<Item = Result<(PropositionId, PropositionRecord)>> + '_> {
        let iter = self.store.all_propositions(self.txn).kip()?;
        Ok(iter.map(|entry| entry.kip()))
    }

    pub fn type_id(&self, name: &str) -> Result<Option<u32>> {
        self.lookup(Namespace::ConceptType, name)
    }

    /// The ids of the named concept types, for a filter by type: `None`
    /// (every type) when `names` is empty; a name no type has matches
    /// nothing.
    pub fn wanted_types(&self, names: &[String]) -> Result<Option<HashSet<u32>>> {
        if names.is_empty() {
            return Ok(None);
        }
        let mut ids = HashSet::new();
        for t in names {
            if let Some(id) = self.type_id(t)? {
                ids.insert(id);
            }
        }
        Ok(Some(ids))
    }

    pub fn predicate_id(&self, name: &str) -> Result<Option<u32>> {
        self.lookup(Namespace::Predicate, name)
    }

    fn lookup(&self, ns: Namespace, name: &str) -> Result<Option<u32>> {
        let found =
            (self.lookups.borrow().get(&ns.tag())).and_then(|names| names.get(name).copied());
        if let Some(id) = found {
            return Ok(id);
        }
        let id = self.store.lookup(self.txn, ns, name).kip()?;
        (self.lookups.borrow_mut())
            .entry(ns.tag())
            .or_default()
            .insert(name.to_owned(), id);
        Ok(id)
    }

    /// A counter, read once per view (`kind`: 0 per type, 1 per predicate,
    /// 2 all concepts, 3 all propositions).
    fn count(&self, kind: u8, id: u32) -> Result<u64> {
        if let Some(n) = self.counts.borrow().get(&(kind, id)) {
            return Ok(*n);
        }
        let n = match kind {
            0 => self.store.concept_count_by_type(self.txn, id),
            1 => self.store.proposition_count_by_predicate(self.txn, id),
            2 => self.store.concept_count(self.txn),
            _ => self.store.proposition_count(self.txn),
        }
        .kip()?;
        self.counts.borrow_mut().insert((kind, id), n);
        Ok(n)
    }

    pub fn type_name(&self, id: u32) -> Result<Rc<str>> {
        if let Some(n) = self.type_names.borrow().get(&id) {
            return Ok(n.clone());
        }
        let name: Rc<str> = self
            .store
            .resolve(self.txn, Namespace::ConceptType, id)
            .kip()?
            .unwrap_or_default()
            .into();
        self.type_names.borrow_mut().insert(id, name.clone());
        Ok(name)
    }

    pub fn predicate_name(&self, id: u32) -> Result<Rc<str>> {
        if let Some(n) = self.predicate_names.borrow().get(&id) {
            return Ok(n.clone());
        }
        let name: Rc<str> = self
            .store
            .resolve(self.txn, Namespace::Predicate, id)
            .kip()?
            .unwrap_or_default()
            .into();
        self.predicate_names.borrow_mut().insert(id, name.clone());
        Ok(name)
    }

    pub fn concept(&self, id: ConceptId) -> Result<Option<Rc<ConceptRecord>>> {
        if let Some(c) = self.concepts.borrow().get(&id) {
            return Ok(Some(c.clone()));
        }
        let Some(record) = self.store.get_concept(self.txn, id).kip()? else {
            return Ok(None);
        };
        let record = Rc::new(record);
        self.concepts.borrow_mut().insert(id, record.clone());
        Ok(Some(record))
    }

    pub fn proposition(&self, id: PropositionId) -> Result<Option<Rc<PropositionRecord>>> {
        if let Some(p) = self.propositions.borrow().get(&id) {
            return Ok(Some(p.clone()));
        }
        let Some(record) = self.store.get_proposition(self.txn, id).kip()? else {
            return Ok(None);
        };
        let record = Rc::new(record);
        self.propositions.borrow_mut().insert(id, record.clone());
        Ok(Some(record))
    }

    pub fn find_concept(&self, type_id: u32, name: &str) -> Result<Option<ConceptId>> {
        self.store.find_concept(self.txn, type_id, name).kip()
    }

    /// The sequence number of the last change committed in this snapshot
    /// (see [`crate::Nexus::last_change_seq`]).
    pub fn change_seq(&self) -> Result<u64> {
        self.store.last_change_seq(self.txn).kip()
    }

    /// The link `(subject, predicate, object)`, if it is stored.
    pub fn find_link(
        &self,
        subject: ElementId,
        predicate: u32,
        object: ElementId,
    ) -> Result<Option<PropositionId>> {
        self.store
            .find_proposition(self.txn, subject, predicate, object)
            .kip()
    }

    /// The concept `{type, name}` by names; `None` if the type or the concept is unknown.
    pub fn find_concept_by_names(&self, ty: &str, name: &str) -> Result<Option<ConceptId>> {
        match self.type_id(ty)? {
            Some(t) => self.find_concept(t, name),
            None => Ok(None),
        }
    }

    pub fn concepts_of_type(&self, type_id: u32) -> Result<Vec<ConceptId>> {
        self.store.concepts_by_type(self.txn, type_id, None).kip()
    }

    /// The concepts of a type in id order, lazily (for scans that stop
    /// early under LIMIT).
    pub fn concepts_of_type_iter(
        &self,
        type_id: u32,
    ) -> Result<impl Iterator<Item = Result<ConceptId>> + '_> {
        self.concepts_of_type_after(type_id, None)
    }

    /// The concepts of a type after `after` (all without it), in id order.
    pub fn concepts_of_type_after(
        &self,
        type_id: u32,
        after: Option<ConceptId>,
    ) -> Result<impl Iterator<Item = Result<ConceptId>> + '_> {
        let iter = self
            .store
            .iter_concepts_by_type(self.txn, type_id, after)
            .kip()?;
        Ok(iter.map(|r| r.kip()))
    }

    /// The concepts of a type whose attribute or metadata `key` has a value
    /// `query` selects (a superset where long strings are cut: re-check),
    /// reading at most `cap` index entries.
    pub(crate) fn attr_lookup(
        &self,
        type_id: u32,
        kind: FieldKind,
        key: &str,
        query: &AttrQuery,
        cap: usize,
    ) -> Result<AttrMatches> {
        self.store
            .attr_lookup(self.txn, type_id, kind, key, query, cap)
            .kip()
    }

    /// Visits each concept of a type whose value at the key with interned
    /// id `key_id` (see [`Graph::key_id`]) is not null, with that value as
    /// the attribute index holds it, in the index's order (by value, then
    /// id); returns how many it visited. No record is read.
    pub(crate) fn attr_column(
        &self,
        type_id: u32,
        kind: FieldKind,
        key_id: u32,
        visit: &mut dyn FnMut(ConceptId, Cell<'_>),
    ) -> Result<u64> {
        self.store
            .attr_column(self.txn, type_id, kind, key_id, visit)
            .kip()
    }

    /// One top-level attribute or metadata value of a concept: from the
    /// decoded record when it is cached, else read alone from the store
    /// without decoding the rest (what a FILTER over a scan needs).
    /// `None` if the concept does not exist, `Some(Null)` if it lacks the key.
    pub(crate) fn concept_field(
        &self,
        id: ConceptId,
        kind: FieldKind,
        key: &str,
    ) -> Result<Option<Json>> {
        if let Some(c) = self.concepts.borrow().get(&id) {
            let map = match kind {
                FieldKind::Attributes => &c.attributes,
                FieldKind::Metadata => &c.metadata,
            };
            return Ok(Some(map.get(key).cloned().unwrap_or(Json::Null)));
        }
        let key_id = self.key_id(key)?;
        let Some(key_id) = key_id else {
            return Ok(self.concept_exists(id)?.then_some(Json::Null));
        };
        Ok(self
            .store
            .concept_field(self.txn, id, kind, key_id)
            .kip()?
            .map(|v| v.unwrap_or(Json::Null)))
    }

    /// The interned id of a record key (`None`: no record holds it).
    pub(crate) fn key_id(&self, key: &str) -> Result<Option<u32>> {
        if let Some(k) = self.key_ids.borrow().get(key) {
            return Ok(*k);
        }
        let k = self.store.lookup(self.txn, Namespace::Key, key).kip()?;
        self.key_ids.borrow_mut().insert(key.to_owned(), k);
        Ok(k)
    }

    /// One top-level attribute or metadata value of a proposition, as
    /// [`Graph::concept_field`] reads a concept's: from the decoded record
    /// when it is cached, from the link a sweep is looking at, else read
    /// alone from the store. `None` if the link does not exist.
    pub(crate) fn proposition_field(
        &self,
        id: PropositionId,
        kind: FieldKind,
        key: &str,
    ) -> Result<Option<Json>> {
        if let Some(v) = self.scanned_field(id, kind, key)? {
            return Ok(Some(v));
        }
        if let Some(p) = self.propositions.borrow().get(&id) {
            let map = match kind {
                FieldKind::Attributes => &p.attributes,
                FieldKind::Metadata => &p.metadata,
            };
            return Ok(Some(map.get(key).cloned().unwrap_or(Json::Null)));
        }
        let Some(record) = self.proposition(id)? else {
            return Ok(None);
        };
        let map = match kind {
            FieldKind::Attributes => &record.attributes,
            FieldKind::Metadata => &record.metadata,
        };
        Ok(Some(map.get(key).cloned().unwrap_or(Json::Null)))
    }

    /// A key of the link a sweep is looking at, if `id` is that link.
    fn scanned_field(&self, id: PropositionId, kind: FieldKind, key: &str) -> Result<Option<Json>> {
        let mut slot = self.scanned.borrow_mut();
        let Some(s) = slot.as_mut().filter(|s| s.id == id) else {
            return Ok(None);
        };
        // A key no record holds was never interned.
        let Some(key_id) = self.key_id(key)? else {
            return Ok(Some(Json::Null));
        };
        if let Some((_, _, v)) = s.read.iter().find(|(k, id, _)| *k == kind && *id == key_id) {
            return Ok(Some(v.clone()));
        }
        let bytes = match kind {
            FieldKind::Attributes => &s.attributes,
            FieldKind::Metadata => &s.metadata,
        };
        let v = kip_store::encoded_field(bytes, key_id)
            .kip()?
            .unwrap_or(Json::Null);
        s.read.push((kind, key_id, v.clone()));
        Ok(Some(v))
    }

    fn concept_exists(&self, id: ConceptId) -> Result<bool> {
        if self.concepts.borrow().contains_key(&id) {
            return Ok(true);
        }
        self.store.contains(self.txn, ElementId::Concept(id)).kip()
    }

    pub fn concepts_named(&self, name: &str) -> Result<Vec<ConceptId>> {
        self.store.concepts_by_name(self.txn, name).kip()
    }

    /// Propositions matching the bound positions, as `(id, subject, predicate, object)`.
    pub fn propositions(
        &self,
        s: Option<ElementId>,
        p: Option<u32>,
        o: Option<ElementId>,
    ) -> Result<Vec<(PropositionId, ElementId, u32, ElementId)>> {
        self.store.propositions_matching(self.txn, s, p, o).kip()
    }

    /// At most `max` of the links from (`outgoing`) or to `e` (see [`Link`]), as
    /// `(id, subject, predicate, object)`, and whether there are more: a
    /// hub's first links without reading all of them.
    pub fn links_of(&self, e: ElementId, outgoing: bool, max: usize) -> Result<(Vec<Link>, bool)> {
        let (s, o) = if outgoing {
            (Some(e), None)
        } else {
            (None, Some(e))
        };
        let mut out = Vec::new();
        for link in self
            .store
            .iter_propositions_matching(self.txn, s, None, o)
            .kip()?
        {
            if out.len() == max {
                return Ok((out, true));
            }
            out.push(link.kip()?);
        }
        Ok((out, false))
    }

    pub fn count_type(&self, type_id: u32) -> Result<u64> {
        self.count(0, type_id)
    }

    pub fn count_predicate(&self, predicate: u32) -> Result<u64> {
        self.count(1, predicate)
    }

    pub fn total_concepts(&self) -> Result<u64> {
        self.count(2, 0)
    }

    pub fn total_propositions(&self) -> Result<u64> {
        self.count(3, 0)
    }

    /// Whether `name` is a defined concept type (a `$ConceptType` node exists).
    pub fn is_type_defined(&self, name: &str) -> Result<bool> {
        self.defined(false, name)
    }

    /// Whether `name` is a defined predicate (a `$PropositionType` node exists).
    pub fn is_predicate_defined(&self, name: &str) -> Result<bool> {
        self.defined(true, name)
    }

    fn defined(&self, predicate: bool, name: &str) -> Result<bool> {
        let key = (predicate, name.to_owned());
        if let Some(d) = self.defined.borrow().get(&key) {
            return Ok(*d);
        }
        let meta = if predicate {
            PROPOSITION_TYPE
        } else {
            CONCEPT_TYPE
        };
        let d = self.find_concept_by_names(meta, name)?.is_some();
        self.defined.borrow_mut().insert(key, d);
        Ok(d)
    }

    /// The names of all defined concept types, sorted.
    pub fn defined_types(&self) -> Result<Vec<String>> {
        self.definitions(CONCEPT_TYPE)
    }

    /// The names of all defined predicates, sorted.
    pub fn defined_predicates(&self) -> Result<Vec<String>> {
        self.definitions(PROPOSITION_TYPE)
    }

    fn definitions(&self, meta: &str) -> Result<Vec<String>> {
        let Some(meta_type) = self.type_id(meta)? else {
            return Ok(Vec::new());
        };
        let mut names = Vec::new();
        for id in self.concepts_of_type(meta_type)? {
            if let Some(c) = self.concept(id)? {
                names.push(c.name.clone());
            }
        }
        names.sort();
        Ok(names)
    }

    /// The type name of an element (`None` for a proposition).
    pub fn element_type(&self, e: ElementId) -> Result<Option<Rc<str>>> {
        match e {
            ElementId::Concept(c) => match self.concept(c)? {
                Some(rec) => Ok(Some(self.type_name(rec.type_id)?)),
                None => Ok(None),
            },
            ElementId::Proposition(_) => Ok(None),
        }
    }

    /// Whether an element still exists.
    pub fn exists(&self, e: ElementId) -> Result<bool> {
        Ok(match e {
            ElementId::Concept(c) => self.concept(c)?.is_some(),
            ElementId::Proposition(p) => self.proposition(p)?.is_some(),
        })
    }

    /// The full object of an element, as FIND returns it for a bare `?x`.
    pub fn element_json(&self, e: ElementId) -> Result<Json> {
        match e {
            ElementId::Concept(c) => {
                let Some(rec) = self.concept(c)? else {
                    return Ok(Json::Null);
                };
                Ok(json!({
                    "_type": "ConceptNode",
                    "id": e.to_string(),
                    "type": &*self.type_name(rec.type_id)?,
                    "name": rec.name,
                    "attributes": rec.attributes,
                    "metadata": rec.metadata,
                }))
            }
            ElementId::Proposition(p) => {
                let Some(rec) = self.proposition(p)? else {
                    return Ok(Json::Null);
                };
                Ok(json!({
                    "_type": "PropositionLink",
                    "id": e.to_string(),
                    "subject": rec.subject.to_string(),
                    "predicate": &*self.predicate_name(rec.predicate)?,
                    "object": rec.object.to_string(),
                    "attributes": rec.attributes,
                    "metadata": rec.metadata,
                }))
            }
        }
    }
}

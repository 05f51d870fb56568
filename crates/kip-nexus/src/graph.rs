//! The nexus's read view of the store inside one transaction: name
//! resolution, record decoding with a per-command cache, index lookups and
//! counters, and the JSON shapes of concepts and propositions.
//!
//! Everything the query engine reads goes through [`Graph`]; it is the one
//! place that knows the store's API, so the executor stays about KIP.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use kip_lang::{ErrorCode, KipError};
use kip_store::{
    ConceptId, ConceptRecord, ElementId, Namespace, PropositionId, PropositionRecord, RoTxn, Store,
    StoreError,
};
use serde_json::{Map, Value as Json, json};

pub type Result<T> = std::result::Result<T, KipError>;

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
    concepts: RefCell<HashMap<ConceptId, Rc<ConceptRecord>>>,
    propositions: RefCell<HashMap<PropositionId, Rc<PropositionRecord>>>,
    type_names: RefCell<HashMap<u32, Rc<str>>>,
    predicate_names: RefCell<HashMap<u32, Rc<str>>>,
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
        }
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
        self.store
            .lookup(self.txn, Namespace::ConceptType, name)
            .kip()
    }

    pub fn predicate_id(&self, name: &str) -> Result<Option<u32>> {
        self.store
            .lookup(self.txn, Namespace::Predicate, name)
            .kip()
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

    pub fn count_type(&self, type_id: u32) -> Result<u64> {
        self.store.concept_count_by_type(self.txn, type_id).kip()
    }

    pub fn count_predicate(&self, predicate: u32) -> Result<u64> {
        self.store
            .proposition_count_by_predicate(self.txn, predicate)
            .kip()
    }

    pub fn total_concepts(&self) -> Result<u64> {
        self.store.concept_count(self.txn).kip()
    }

    pub fn total_propositions(&self) -> Result<u64> {
        self.store.proposition_count(self.txn).kip()
    }

    /// Whether `name` is a defined concept type (a `$ConceptType` node exists).
    pub fn is_type_defined(&self, name: &str) -> Result<bool> {
        Ok(self.find_concept_by_names(CONCEPT_TYPE, name)?.is_some())
    }

    /// Whether `name` is a defined predicate (a `$PropositionType` node exists).
    pub fn is_predicate_defined(&self, name: &str) -> Result<bool> {
        Ok(self
            .find_concept_by_names(PROPOSITION_TYPE, name)?
            .is_some())
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

    /// The attributes of a concept (empty if it does not exist).
    pub fn concept_attributes(&self, c: ConceptId) -> Result<Map<String, Json>> {
        Ok(self
            .concept(c)?
            .map(|r| r.attributes.clone())
            .unwrap_or_default())
    }
}

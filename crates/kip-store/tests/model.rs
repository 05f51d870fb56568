//! Model test: random sequences of changes applied both to a store and to a
//! plain in-memory model (`BTreeMap`s), with dry runs, atomic batches and
//! close-and-reopen steps; after every reopen and at the end, everything the
//! store can be asked is compared with the model: records, every index
//! lookup for every pattern of bound positions, counts, counters, the text
//! index and state.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use kip_store::{
    ConceptId, ConceptRecord, ElementId, Namespace, PropositionId, PropositionRecord, RwTxn, Store,
    StoreError,
};
use proptest::prelude::*;
use serde_json::{Map, Value};

const TYPES: [&str; 3] = ["Drug", "Symptom", "$ConceptType"];
const PREDICATES: [&str; 3] = ["treats", "belongs_to_domain", "causes"];
const TERMS: [&str; 6] = ["alpha", "alp", "beta", "阿司匹林", "a", "a\0x"];
const COUNTER_KEYS: [&[u8]; 3] = [b"x", b"domain/1/type/2", b"domain/1/type/3"];

fn names() -> Vec<String> {
    vec![
        String::new(),
        "a".to_owned(),
        "a\0b".to_owned(),
        "Aspirin".to_owned(),
        "阿司匹林".to_owned(),
        "long-".repeat(100), // 500 bytes: stored hashed
        format!("{}x", "long-".repeat(100)),
    ]
}

fn state_keys() -> Vec<String> {
    vec![
        "a".to_owned(),
        "import/1".to_owned(),
        "import/2".to_owned(),
        format!("import/{}", "z".repeat(500)),
    ]
}

/// An operation as generated: elements are picked by position among those
/// that exist when the operation runs (wrapping around), so that most
/// operations hit something; `None` picks an id that never existed.
#[derive(Clone, Debug)]
enum Op {
    CreateConcept {
        ty: usize,
        name: usize,
        attrs: Map<String, Value>,
    },
    UpdateConcept {
        pick: Option<usize>,
        ty: usize,
        name: usize,
        attrs: Map<String, Value>,
        meta: Map<String, Value>,
    },
    DeleteConcept {
        pick: Option<usize>,
    },
    CreateProposition {
        s: Option<usize>,
        p: usize,
        o: Option<usize>,
        attrs: Map<String, Value>,
    },
    UpdateProposition {
        pick: Option<usize>,
        p: Option<usize>,
        meta: Map<String, Value>,
    },
    DeleteProposition {
        pick: Option<usize>,
    },
    CreatePropositions {
        items: Vec<(Option<usize>, usize, Option<usize>)>,
    },
    AddCounter {
        key: usize,
        delta: i64,
    },
    IndexDocument {
        pick: Option<usize>,
        terms: Vec<(usize, u32)>,
        len: u32,
    },
    RemoveDocument {
        pick: Option<usize>,
    },
    PutState {
        key: usize,
        value: Value,
    },
    DeleteState {
        key: usize,
    },
    DryRun(Box<Op>),
    Batch(Vec<Op>),
    Reopen,
}

/// An operation with its picks resolved to ids.
#[derive(Clone, Debug)]
enum Concrete {
    CreateConcept(ConceptRecord),
    UpdateConcept(ConceptId, ConceptRecord),
    DeleteConcept(ConceptId),
    CreateProposition(PropositionRecord),
    UpdateProposition(PropositionId, PropositionRecord),
    DeleteProposition(PropositionId),
    CreatePropositions(Vec<PropositionRecord>),
    AddCounter(Vec<u8>, i64),
    IndexDocument(ElementId, Vec<(String, u32)>, u32),
    RemoveDocument(ElementId),
    PutState(String, Value),
    DeleteState(String),
}

/// What an operation returned, compared between store and model.
#[derive(Clone, Debug, PartialEq)]
enum Outcome {
    Created(ElementId),
    CreatedMany(Vec<PropositionId>),
    Done,
    Removed(bool),
    Counter(i64),
    Failed(&'static str),
}

/// A failed `create_propositions`: which record's error is reported is not
/// specified, so only the failure is compared.
const BATCH_FAILED: &str = "batch failed";

fn failure(e: &StoreError) -> &'static str {
    match e {
        StoreError::DuplicateConcept { .. } => "duplicate concept",
        StoreError::DuplicateProposition { .. } => "duplicate proposition",
        StoreError::NotFound { .. } => "not found",
        StoreError::StillReferenced { .. } => "still referenced",
        StoreError::Invalid { .. } => "invalid",
        _ => "other",
    }
}

#[derive(Clone, Debug, Default)]
struct Model {
    concepts: BTreeMap<ConceptId, ConceptRecord>,
    propositions: BTreeMap<PropositionId, PropositionRecord>,
    next_concept: u64,
    next_proposition: u64,
    counters: BTreeMap<Vec<u8>, i64>,
    documents: BTreeMap<ElementId, (u32, BTreeMap<String, u32>)>,
    state: BTreeMap<String, Value>,
}

/// The interned ids of the fixed types and predicates.
#[derive(Clone, Debug)]
struct Ids {
    types: Vec<u32>,
    predicates: Vec<u32>,
}

impl Model {
    fn new() -> Model {
        Model {
            next_concept: 1,
            next_proposition: 1,
            ..Model::default()
        }
    }

    fn elements(&self) -> Vec<ElementId> {
        let mut all: Vec<ElementId> = self.concepts.keys().map(|&c| c.into()).collect();
        all.extend(self.propositions.keys().map(|&p| ElementId::from(p)));
        all
    }

    fn pick_concept(&self, pick: Option<usize>) -> ConceptId {
        match pick {
            Some(i) if !self.concepts.is_empty() => *self
                .concepts
                .keys()
                .nth(i % self.concepts.len())
                .expect("in range"),
            _ => ConceptId(1_000_000),
        }
    }

    fn pick_proposition(&self, pick: Option<usize>) -> PropositionId {
        match pick {
            Some(i) if !self.propositions.is_empty() => *self
                .propositions
                .keys()
                .nth(i % self.propositions.len())
                .expect("in range"),
            _ => PropositionId(1_000_000),
        }
    }

    fn pick_element(&self, pick: Option<usize>) -> ElementId {
        let all = self.elements();
        match pick {
            Some(i) if !all.is_empty() => all[i % all.len()],
            _ => ElementId::Concept(ConceptId(1_000_000)),
        }
    }

    fn resolve(&self, op: &Op, ids: &Ids) -> Concrete {
        let names = names();
        let keys = state_keys();
        match op {
            Op::CreateConcept { ty, name, attrs } => Concrete::CreateConcept(ConceptRecord {
                type_id: ids.types[ty % TYPES.len()],
                name: names[name % names.len()].clone(),
                attributes: attrs.clone(),
                metadata: Map::new(),
            }),
            Op::UpdateConcept {
                pick,
                ty,
                name,
                attrs,
                meta,
            } => Concrete::UpdateConcept(
                self.pick_concept(*pick),
                ConceptRecord {
                    type_id: ids.types[ty % TYPES.len()],
                    name: names[name % names.len()].clone(),
                    attributes: attrs.clone(),
                    metadata: meta.clone(),
                },
            ),
            Op::DeleteConcept { pick } => Concrete::DeleteConcept(self.pick_concept(*pick)),
            Op::CreateProposition { s, p, o, attrs } => {
                Concrete::CreateProposition(PropositionRecord {
                    subject: self.pick_element(*s),
                    predicate: ids.predicates[p % PREDICATES.len()],
                    object: self.pick_element(*o),
                    attributes: attrs.clone(),
                    metadata: Map::new(),
                })
            }
            Op::UpdateProposition { pick, p, meta } => {
                let id = self.pick_proposition(*pick);
                let mut record = self
                    .propositions
                    .get(&id)
                    .cloned()
                    .unwrap_or(PropositionRecord {
                        subject: ElementId::Concept(ConceptId(1)),
                        predicate: ids.predicates[0],
                        object: ElementId::Concept(ConceptId(1)),
                        attributes: Map::new(),
                        metadata: Map::new(),
                    });
                if let Some(p) = p {
                    record.predicate = ids.predicates[p % PREDICATES.len()];
                }
                record.metadata = meta.clone();
                Concrete::UpdateProposition(id, record)
            }
            Op::DeleteProposition { pick } => {
                Concrete::DeleteProposition(self.pick_proposition(*pick))
            }
            Op::CreatePropositions { items } => Concrete::CreatePropositions(
                items
                    .iter()
                    .map(|&(s, p, o)| PropositionRecord {
                        subject: self.pick_element(s),
                        predicate: ids.predicates[p % PREDICATES.len()],
                        object: self.pick_element(o),
                        attributes: Map::new(),
                        metadata: Map::new(),
                    })
                    .collect(),
            ),
            Op::AddCounter { key, delta } => {
                Concrete::AddCounter(COUNTER_KEYS[key % COUNTER_KEYS.len()].to_vec(), *delta)
            }
            Op::IndexDocument { pick, terms, len } => Concrete::IndexDocument(
                self.pick_element(*pick),
                terms
                    .iter()
                    .map(|&(t, tf)| (TERMS[t % TERMS.len()].to_owned(), tf))
                    .collect(),
                *len,
            ),
            Op::RemoveDocument { pick } => Concrete::RemoveDocument(self.pick_element(*pick)),
            Op::PutState { key, value } => {
                Concrete::PutState(keys[key % keys.len()].clone(), value.clone())
            }
            Op::DeleteState { key } => Concrete::DeleteState(keys[key % keys.len()].clone()),
            Op::DryRun(_) | Op::Batch(_) | Op::Reopen => unreachable!("not a single change"),
        }
    }

    fn exists(&self, e: ElementId) -> bool {
        match e {
            ElementId::Concept(c) => self.concepts.contains_key(&c),
            ElementId::Proposition(p) => self.propositions.contains_key(&p),
        }
    }

    fn mentioned(&self, e: ElementId) -> bool {
        self.propositions
            .values()
            .any(|p| p.subject == e || p.object == e)
    }

    fn find_triple(&self, s: ElementId, p: u32, o: ElementId) -> Option<PropositionId> {
        self.propositions
            .iter()
            .find(|(_, r)| r.subject == s && r.predicate == p && r.object == o)
            .map(|(&id, _)| id)
    }

    fn find_concept(&self, type_id: u32, name: &str) -> Option<ConceptId> {
        self.concepts
            .iter()
            .find(|(_, c)| c.type_id == type_id && c.name == name)
            .map(|(&id, _)| id)
    }

    /// Applies a change; on failure the model is left as it was.
    fn apply(&mut self, op: &Concrete) -> Outcome {
        match op {
            Concrete::CreateConcept(record) => {
                if self.find_concept(record.type_id, &record.name).is_some() {
                    return Outcome::Failed("duplicate concept");
                }
                let id = ConceptId(self.next_concept);
                self.next_concept += 1;
                self.concepts.insert(id, record.clone());
                Outcome::Created(id.into())
            }
            Concrete::UpdateConcept(id, record) => {
                if !self.concepts.contains_key(id) {
                    return Outcome::Failed("not found");
                }
                if self
                    .find_concept(record.type_id, &record.name)
                    .is_some_and(|other| other != *id)
                {
                    return Outcome::Failed("duplicate concept");
                }
                self.concepts.insert(*id, record.clone());
                Outcome::Done
            }
            Concrete::DeleteConcept(id) => {
                if !self.concepts.contains_key(id) {
                    return Outcome::Removed(false);
                }
                if self.mentioned((*id).into()) {
                    return Outcome::Failed("still referenced");
                }
                self.concepts.remove(id);
                self.documents.remove(&(*id).into());
                Outcome::Removed(true)
            }
            Concrete::CreateProposition(r) => {
                if self.find_triple(r.subject, r.predicate, r.object).is_some() {
                    return Outcome::Failed("duplicate proposition");
                }
                if !self.exists(r.subject) || !self.exists(r.object) {
                    return Outcome::Failed("not found");
                }
                let id = PropositionId(self.next_proposition);
                self.next_proposition += 1;
                self.propositions.insert(id, r.clone());
                Outcome::Created(id.into())
            }
            Concrete::UpdateProposition(id, r) => {
                let Some(old) = self.propositions.get(id) else {
                    return Outcome::Failed("not found");
                };
                if (old.subject, old.predicate, old.object) != (r.subject, r.predicate, r.object)
                    && self.find_triple(r.subject, r.predicate, r.object).is_some()
                {
                    return Outcome::Failed("duplicate proposition");
                }
                self.propositions.insert(*id, r.clone());
                Outcome::Done
            }
            Concrete::DeleteProposition(id) => {
                if !self.propositions.contains_key(id) {
                    return Outcome::Removed(false);
                }
                if self.mentioned((*id).into()) {
                    return Outcome::Failed("still referenced");
                }
                self.propositions.remove(id);
                self.documents.remove(&(*id).into());
                Outcome::Removed(true)
            }
            Concrete::CreatePropositions(records) => {
                // All or nothing, as the store's batch inside its write.
                let mut after = self.clone();
                let mut ids = Vec::new();
                for r in records {
                    match after.apply(&Concrete::CreateProposition(r.clone())) {
                        Outcome::Created(ElementId::Proposition(id)) => ids.push(id),
                        _ => return Outcome::Failed(BATCH_FAILED),
                    }
                }
                *self = after;
                Outcome::CreatedMany(ids)
            }
            Concrete::AddCounter(key, delta) => {
                let value = self.counters.get(key).copied().unwrap_or(0) + delta;
                if value == 0 {
                    self.counters.remove(key);
                } else {
                    self.counters.insert(key.clone(), value);
                }
                Outcome::Counter(value)
            }
            Concrete::IndexDocument(e, terms, len) => {
                if !self.exists(*e) {
                    return Outcome::Failed("not found");
                }
                let mut merged = BTreeMap::new();
                for (t, tf) in terms {
                    if !t.is_empty() && *tf > 0 {
                        *merged.entry(t.clone()).or_insert(0) += tf;
                    }
                }
                self.documents.insert(*e, (*len, merged));
                Outcome::Done
            }
            Concrete::RemoveDocument(e) => Outcome::Removed(self.documents.remove(e).is_some()),
            Concrete::PutState(k, v) => {
                self.state.insert(k.clone(), v.clone());
                Outcome::Done
            }
            Concrete::DeleteState(k) => Outcome::Removed(self.state.remove(k).is_some()),
        }
    }
}

fn apply_store(store: &Store, txn: &mut RwTxn<'_>, op: &Concrete) -> Result<Outcome, StoreError> {
    Ok(match op {
        Concrete::CreateConcept(r) => Outcome::Created(store.create_concept(txn, r)?.into()),
        Concrete::UpdateConcept(id, r) => {
            store.update_concept(txn, *id, r)?;
            Outcome::Done
        }
        Concrete::DeleteConcept(id) => Outcome::Removed(store.delete_concept(txn, *id)?.is_some()),
        Concrete::CreateProposition(r) => {
            Outcome::Created(store.create_proposition(txn, r)?.into())
        }
        Concrete::UpdateProposition(id, r) => {
            store.update_proposition(txn, *id, r)?;
            Outcome::Done
        }
        Concrete::DeleteProposition(id) => {
            Outcome::Removed(store.delete_proposition(txn, *id)?.is_some())
        }
        Concrete::CreatePropositions(records) => {
            let records: Vec<_> = records.iter().map(PropositionRecord::as_new).collect();
            Outcome::CreatedMany(store.create_propositions(txn, &records)?)
        }
        Concrete::AddCounter(key, delta) => Outcome::Counter(store.add_counter(txn, key, *delta)?),
        Concrete::IndexDocument(e, terms, len) => {
            store.index_document(txn, *e, terms, *len)?;
            Outcome::Done
        }
        Concrete::RemoveDocument(e) => Outcome::Removed(store.remove_document(txn, *e)?),
        Concrete::PutState(k, v) => {
            store.put_state(txn, k, v)?;
            Outcome::Done
        }
        Concrete::DeleteState(k) => Outcome::Removed(store.delete_state(txn, k)?),
    })
}

/// Runs one concrete change in its own write and reports it like the model.
fn run_one(store: &Store, op: &Concrete, commit: bool) -> Outcome {
    let result = store.write_with(commit, |txn| apply_store(store, txn, op));
    match result {
        Ok(o) => o,
        Err(_) if matches!(op, Concrete::CreatePropositions(_)) => Outcome::Failed(BATCH_FAILED),
        Err(e) => Outcome::Failed(failure(&e)),
    }
}

struct Harness {
    dir: tempfile::TempDir,
    store: Option<Store>,
    model: Model,
    ids: Ids,
}

impl Harness {
    fn new() -> Harness {
        let dir = tempfile::tempdir().expect("temporary folder");
        let store = Store::open(dir.path()).expect("open");
        let ids = store
            .write(|txn| {
                let mut types = Vec::new();
                for t in TYPES {
                    types.push(store.intern(txn, Namespace::ConceptType, t)?);
                }
                let mut predicates = Vec::new();
                for p in PREDICATES {
                    predicates.push(store.intern(txn, Namespace::Predicate, p)?);
                }
                Ok::<_, StoreError>(Ids { types, predicates })
            })
            .expect("intern");
        Harness {
            dir,
            store: Some(store),
            model: Model::new(),
            ids,
        }
    }

    fn store(&self) -> &Store {
        self.store.as_ref().expect("open store")
    }

    fn run(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match op {
            Op::Reopen => {
                drop(self.store.take());
                self.store = Some(Store::open(self.dir.path()).expect("reopen"));
                prop_assert!(!self.store().is_fresh());
                check(self.store(), &self.model, &self.ids)?;
            }
            Op::DryRun(inner) => match &**inner {
                Op::DryRun(_) | Op::Batch(_) | Op::Reopen => self.run(inner)?,
                single => {
                    let concrete = self.model.resolve(single, &self.ids);
                    let expected = self.model.clone().apply(&concrete);
                    let got = run_one(self.store(), &concrete, false);
                    prop_assert_eq!(got, expected, "dry run of {:?}", concrete);
                }
            },
            Op::Batch(ops) => {
                // Resolve and apply on a copy of the model; the batch commits
                // only if every change succeeds.
                let mut after = self.model.clone();
                let mut concrete = Vec::new();
                let mut expected = Vec::new();
                for op in ops {
                    if matches!(op, Op::DryRun(_) | Op::Batch(_) | Op::Reopen) {
                        continue;
                    }
                    let c = after.resolve(op, &self.ids);
                    let outcome = after.apply(&c);
                    let failed = matches!(outcome, Outcome::Failed(_));
                    concrete.push(c);
                    expected.push(outcome);
                    if failed {
                        break;
                    }
                }
                let store = self.store.as_ref().expect("open store");
                let got = store.write(|txn| {
                    let mut outcomes = Vec::new();
                    for c in &concrete {
                        outcomes.push(apply_store(store, txn, c)?);
                    }
                    Ok::<_, StoreError>(outcomes)
                });
                match (got, expected.last()) {
                    // Which record of a failed batch creation is reported
                    // is not specified.
                    (Err(_), Some(Outcome::Failed(BATCH_FAILED))) => {}
                    (Err(e), Some(Outcome::Failed(kind))) => prop_assert_eq!(failure(&e), *kind),
                    (Ok(outcomes), _) => {
                        prop_assert_eq!(&outcomes, &expected);
                        self.model = after;
                    }
                    (Err(e), _) => prop_assert!(false, "batch failed with {e} but should not have"),
                }
            }
            single => {
                let concrete = self.model.resolve(single, &self.ids);
                let expected = self.model.apply(&concrete);
                let got = run_one(self.store(), &concrete, true);
                prop_assert_eq!(got, expected, "{:?}", concrete);
            }
        }
        Ok(())
    }
}

/// Compares everything the store answers with the model.
fn check(store: &Store, model: &Model, ids: &Ids) -> Result<(), TestCaseError> {
    store
        .read(|txn| -> Result<(), CheckError> {
            // Concepts: records, the three indexes, counts.
            for (&id, record) in &model.concepts {
                ensure(store.get_concept(txn, id)?.as_ref() == Some(record), || {
                    format!("record {id}")
                })?;
                ensure(
                    store.find_concept(txn, record.type_id, &record.name)? == Some(id),
                    || format!("find {id}"),
                )?;
                ensure(store.contains(txn, id.into())?, || format!("contains {id}"))?;
            }
            ensure(!store.contains(txn, ConceptId(1_000_000).into())?, || {
                "contains missing".into()
            })?;
            let all: Vec<_> = store.all_concepts(txn)?.collect::<Result<_, _>>()?;
            let expected: Vec<_> = model
                .concepts
                .iter()
                .map(|(&id, r)| (id, r.clone()))
                .collect();
            ensure(all == expected, || "all_concepts".into())?;
            ensure(
                store.concept_count(txn)? == model.concepts.len() as u64,
                || "concept count".into(),
            )?;
            let mut per_type = Vec::new();
            for &t in &ids.types {
                let of_type: Vec<ConceptId> = model
                    .concepts
                    .iter()
                    .filter(|(_, c)| c.type_id == t)
                    .map(|(&id, _)| id)
                    .collect();
                ensure(store.concepts_by_type(txn, t, None)? == of_type, || {
                    format!("type {t}")
                })?;
                for (i, &after) in of_type.iter().enumerate() {
                    ensure(
                        store.concepts_by_type(txn, t, Some(after))? == of_type[i + 1..],
                        || format!("type {t} after {after}"),
                    )?;
                }
                ensure(
                    store.concept_count_by_type(txn, t)? == of_type.len() as u64,
                    || format!("count of type {t}"),
                )?;
                if !of_type.is_empty() {
                    per_type.push((t, of_type.len() as u64));
                }
            }
            ensure(store.concept_counts_by_type(txn)? == per_type, || {
                "counts by type".into()
            })?;
            for name in names()
                .iter()
                .chain([&"nobody".to_owned(), &"a\0".to_owned()])
            {
                let named: Vec<ConceptId> = model
                    .concepts
                    .iter()
                    .filter(|(_, c)| &c.name == name)
                    .map(|(&id, _)| id)
                    .collect();
                ensure(store.concepts_by_name(txn, name)? == named, || {
                    format!("name {name:?}")
                })?;
            }

            // Propositions: records, point lookups, every pattern.
            for (&id, r) in &model.propositions {
                ensure(store.get_proposition(txn, id)?.as_ref() == Some(r), || {
                    format!("record {id}")
                })?;
                ensure(
                    store.find_proposition(txn, r.subject, r.predicate, r.object)? == Some(id),
                    || format!("find {id}"),
                )?;
            }
            let all: Vec<_> = store.all_propositions(txn)?.collect::<Result<_, _>>()?;
            let expected: Vec<_> = model
                .propositions
                .iter()
                .map(|(&id, r)| (id, r.clone()))
                .collect();
            ensure(all == expected, || "all_propositions".into())?;
            ensure(
                store.proposition_count(txn)? == model.propositions.len() as u64,
                || "proposition count".into(),
            )?;
            let mut ends: Vec<Option<ElementId>> = model.elements().into_iter().map(Some).collect();
            ends.push(None);
            ends.push(Some(ElementId::Proposition(PropositionId(1_000_000))));
            let mut predicates: Vec<Option<u32>> =
                ids.predicates.iter().copied().map(Some).collect();
            predicates.push(None);
            predicates.push(Some(u32::MAX));
            for &s in &ends {
                for &p in &predicates {
                    for &o in &ends {
                        let mut expected: Vec<_> = model
                            .propositions
                            .iter()
                            .filter(|(_, r)| {
                                s.is_none_or(|s| r.subject == s)
                                    && p.is_none_or(|p| r.predicate == p)
                                    && o.is_none_or(|o| r.object == o)
                            })
                            .map(|(&id, r)| (id, r.subject, r.predicate, r.object))
                            .collect();
                        expected.sort();
                        let mut got = store.propositions_matching(txn, s, p, o)?;
                        got.sort();
                        ensure(got == expected, || format!("pattern ({s:?}, {p:?}, {o:?})"))?;
                    }
                }
            }
            for e in model.elements() {
                let expected: BTreeSet<PropositionId> = model
                    .propositions
                    .iter()
                    .filter(|(_, r)| r.subject == e || r.object == e)
                    .map(|(&id, _)| id)
                    .collect();
                let got = store.propositions_mentioning(txn, e)?;
                ensure(got == expected.into_iter().collect::<Vec<_>>(), || {
                    format!("mentioning {e}")
                })?;
            }
            let mut per_predicate = Vec::new();
            for &p in &ids.predicates {
                let n = model
                    .propositions
                    .values()
                    .filter(|r| r.predicate == p)
                    .count() as u64;
                ensure(store.proposition_count_by_predicate(txn, p)? == n, || {
                    format!("count of {p}")
                })?;
                if n > 0 {
                    per_predicate.push((p, n));
                }
            }
            ensure(
                store.proposition_counts_by_predicate(txn)? == per_predicate,
                || "counts by predicate".into(),
            )?;

            // Named counters.
            for key in COUNTER_KEYS {
                let expected = model.counters.get(key).copied().unwrap_or(0);
                ensure(store.counter(txn, key)? == expected, || {
                    format!("counter {key:?}")
                })?;
            }
            let listed = store.counters_with_prefix(txn, b"")?;
            let expected: Vec<_> = model
                .counters
                .iter()
                .map(|(k, &v)| (k.clone(), v))
                .collect();
            ensure(listed == expected, || "counters".into())?;

            // Text index.
            let mut documents = 0;
            let mut total = 0;
            for (e, (len, _)) in &model.documents {
                documents += 1;
                total += u64::from(*len);
                ensure(store.doc_len(txn, *e)? == Some(*len), || {
                    format!("doc_len {e}")
                })?;
            }
            ensure(store.search_stats(txn)? == (documents, total), || {
                "search stats".into()
            })?;
            let mut live_terms = BTreeSet::new();
            for term in TERMS {
                let expected: Vec<(ElementId, u32)> = model
                    .documents
                    .iter()
                    .filter_map(|(e, (_, terms))| terms.get(term).map(|&tf| (*e, tf)))
                    .collect();
                if !expected.is_empty() {
                    live_terms.insert(term.to_owned());
                }
                ensure(
                    store.document_frequency(txn, term)? == expected.len() as u32,
                    || format!("df {term:?}"),
                )?;
                ensure(store.postings(txn, term)? == expected, || {
                    format!("postings {term:?}")
                })?;
            }
            let listed: BTreeSet<String> = store.terms_with_prefix(txn, "")?.into_iter().collect();
            ensure(listed == live_terms, || "terms".into())?;
            let by_prefix: Vec<_> = store
                .postings_with_prefix(txn, "al")?
                .into_iter()
                .map(|p| (p.term, p.element, p.term_frequency))
                .collect();
            let mut expected = Vec::new();
            for term in ["alp", "alpha"] {
                for (e, (_, terms)) in &model.documents {
                    if let Some(&tf) = terms.get(term) {
                        expected.push((term.to_owned(), *e, tf));
                    }
                }
            }
            ensure(by_prefix == expected, || "postings with prefix".into())?;

            // State.
            for key in state_keys() {
                ensure(
                    store.get_state(txn, &key)? == model.state.get(&key).cloned(),
                    || format!("state {key}"),
                )?;
            }
            let listed = store.states_with_prefix(txn, "import/")?;
            let expected: Vec<_> = model
                .state
                .iter()
                .filter(|(k, _)| k.starts_with("import/"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            ensure(listed == expected, || "states with prefix".into())?;
            Ok(())
        })
        .map_err(|e| TestCaseError::fail(e.0))
}

#[derive(Debug)]
struct CheckError(String);

impl From<StoreError> for CheckError {
    fn from(e: StoreError) -> Self {
        CheckError(format!("store error: {e}"))
    }
}

fn ensure(ok: bool, what: impl FnOnce() -> String) -> Result<(), CheckError> {
    if ok {
        Ok(())
    } else {
        Err(CheckError(format!("store and model differ: {}", what())))
    }
}

fn map() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec(("[a-c_]{1,3}", common::json_value()), 0..4)
        .prop_map(|entries| entries.into_iter().collect())
}

fn pick() -> impl Strategy<Value = Option<usize>> {
    prop_oneof![9 => any::<usize>().prop_map(Some), 1 => Just(None)]
}

fn single_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<usize>(), any::<usize>(), map())
            .prop_map(|(ty, name, attrs)| Op::CreateConcept { ty, name, attrs }),
        2 => (pick(), any::<usize>(), any::<usize>(), map(), map())
            .prop_map(|(pick, ty, name, attrs, meta)| Op::UpdateConcept { pick, ty, name, attrs, meta }),
        2 => pick().prop_map(|pick| Op::DeleteConcept { pick }),
        5 => (pick(), any::<usize>(), pick(), map())
            .prop_map(|(s, p, o, attrs)| Op::CreateProposition { s, p, o, attrs }),
        2 => (pick(), prop::option::of(any::<usize>()), map())
            .prop_map(|(pick, p, meta)| Op::UpdateProposition { pick, p, meta }),
        2 => pick().prop_map(|pick| Op::DeleteProposition { pick }),
        2 => prop::collection::vec((pick(), any::<usize>(), pick()), 0..6)
            .prop_map(|items| Op::CreatePropositions { items }),
        2 => (any::<usize>(), -3i64..4).prop_map(|(key, delta)| Op::AddCounter { key, delta }),
        3 => (pick(), prop::collection::vec((any::<usize>(), 0u32..4), 0..5), 0u32..20)
            .prop_map(|(pick, terms, len)| Op::IndexDocument { pick, terms, len }),
        1 => pick().prop_map(|pick| Op::RemoveDocument { pick }),
        1 => (any::<usize>(), common::json_value()).prop_map(|(key, value)| Op::PutState { key, value }),
        1 => any::<usize>().prop_map(|key| Op::DeleteState { key }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => single_op(),
        2 => single_op().prop_map(|op| Op::DryRun(Box::new(op))),
        2 => prop::collection::vec(single_op(), 1..5).prop_map(Op::Batch),
        1 => Just(Op::Reopen),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn store_matches_model(ops in prop::collection::vec(op(), 1..40)) {
        let mut h = Harness::new();
        for op in &ops {
            h.run(op)?;
        }
        check(h.store(), &h.model, &h.ids)?;
        // Whatever happened, a reopened store still agrees.
        h.run(&Op::Reopen)?;
    }
}

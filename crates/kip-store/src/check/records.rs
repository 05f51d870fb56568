//! The records and their indexes: interned names both ways, concepts with
//! `concept_keys`, `concepts_by_type`, `concepts_by_name` and `attr_index`,
//! propositions with `spo`, `pos` and `osp` (the invariants
//! `record-decodes`, `name-is-interned`, `proposition-ends-exist` and the
//! `index-entry-*` three).

use std::collections::{BTreeMap, HashMap, HashSet};

use heed::RoTxn;

use super::{Findings, compare, hex, raw};
use crate::Store;
use crate::codec::concept::ConceptBytes;
use crate::codec::concept_keys::{name_member_key, type_member_key, type_name_key};
use crate::codec::intern::name_to_id_key;
use crate::codec::proposition::PropositionBytes;
use crate::codec::stat_key::StatKey;
use crate::codec::triple::{Osp, Permutation, Pos, Spo};
use crate::codec::value;
use crate::db_name;
use crate::error::{Lmdb as _, StoreError};
use crate::ids::{ConceptId, ElementId, PropositionId};
use crate::names::Namespace;

/// The interned names, as `(namespace tag, id)`.
pub(super) type Interned = HashSet<(u8, u32)>;

/// The ids of the concepts found, and the highest.
pub(super) struct Concepts {
    ids: HashSet<u64>,
    max: u64,
}

/// The ids of every element found: what a proposition's end, a document or
/// the next-id counters are checked against.
pub(super) struct Elements {
    concepts: HashSet<u64>,
    propositions: HashSet<u64>,
    pub(super) max_concept: u64,
    pub(super) max_proposition: u64,
}

impl Elements {
    pub(super) fn exists(&self, e: ElementId) -> bool {
        match e {
            ElementId::Concept(c) => self.concepts.contains(&c.0),
            ElementId::Proposition(p) => self.propositions.contains(&p.0),
        }
    }
}

impl Store {
    /// Checks `names` against `name_ids` and returns what is interned.
    pub(super) fn check_names(
        &self,
        txn: &RoTxn<'_>,
        f: &mut Findings,
    ) -> Result<Interned, StoreError> {
        let mut interned: Interned = HashSet::new();
        let mut names_expected = HashMap::new();
        for entry in raw(self.db.name_ids).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            f.report.counts.names += 1;
            let (Ok(name), [ns, id @ ..]) = (std::str::from_utf8(value), key) else {
                f.add(
                    "record-decodes",
                    db_name::NAME_IDS,
                    format!("the entry {} does not decode", hex(key)),
                );
                continue;
            };
            let Ok(id) = <[u8; 4]>::try_from(id).map(u32::from_be_bytes) else {
                f.add(
                    "record-decodes",
                    db_name::NAME_IDS,
                    format!("the key {} is not a namespace and a 4-byte id", hex(key)),
                );
                continue;
            };
            interned.insert((*ns, id));
            names_expected.insert(
                name_to_id_key(*ns, name),
                (
                    id.to_be_bytes().to_vec(),
                    format!("the name {name:?} (#{id})"),
                ),
            );
        }
        compare(
            txn,
            f,
            db_name::NAMES,
            raw(self.db.names),
            names_expected,
            None,
        )?;
        Ok(interned)
    }

    /// The name of an attribute key, which must be interned (a record whose
    /// maps use another key does not decode).
    fn interned_key_name(
        &self,
        txn: &RoTxn<'_>,
        interned: &Interned,
        id: u32,
    ) -> Result<String, StoreError> {
        if interned.contains(&(Namespace::Key.tag(), id)) {
            self.key_name(txn, id)
        } else {
            Err(StoreError::corrupt(format!("key #{id} is not interned")))
        }
    }

    /// Checks every concept record and its three indexes and the attribute
    /// index, counting what the statistics must say.
    pub(super) fn check_concepts(
        &self,
        txn: &RoTxn<'_>,
        f: &mut Findings,
        interned: &Interned,
        stats: &mut BTreeMap<StatKey, u64>,
    ) -> Result<Concepts, StoreError> {
        let key_name = |id: u32| self.interned_key_name(txn, interned, id);
        let mut concepts = Concepts {
            ids: HashSet::new(),
            max: 0,
        };
        let (mut keys, mut by_type, mut by_name) = (HashMap::new(), HashMap::new(), HashMap::new());
        let mut attr_index = HashMap::new();
        for entry in raw(self.db.concepts).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            f.report.counts.concepts += 1;
            let Ok(id) = <[u8; 8]>::try_from(key).map(u64::from_be_bytes) else {
                f.add(
                    "record-decodes",
                    db_name::CONCEPTS,
                    format!("the key {} is not an 8-byte id", hex(key)),
                );
                continue;
            };
            let id = ConceptId(id);
            concepts.ids.insert(id.0);
            concepts.max = concepts.max.max(id.0);
            let c = match ConceptBytes::decode(value) {
                Ok(c) => c,
                Err(e) => {
                    f.add("record-decodes", db_name::CONCEPTS, format!("{id}: {e}"));
                    continue;
                }
            };
            for (part, bytes) in [("attributes", c.attributes), ("metadata", c.metadata)] {
                if let Err(e) = value::decode_fields::<StoreError>(bytes, key_name) {
                    f.add(
                        "record-decodes",
                        db_name::CONCEPTS,
                        format!("the {part} of {id}: {e}"),
                    );
                }
            }
            if !interned.contains(&(Namespace::ConceptType.tag(), c.type_id)) {
                f.add(
                    "name-is-interned",
                    db_name::CONCEPTS,
                    format!("the type #{} of {id} is not interned", c.type_id),
                );
            }
            *stats.entry(StatKey::ConceptsOfType(c.type_id)).or_default() += 1;
            *stats.entry(StatKey::Concepts).or_default() += 1;
            let owner = format!("{id} ({:?} of type #{})", c.name, c.type_id);
            keys.insert(
                type_name_key(c.type_id, c.name),
                (id.0.to_be_bytes().to_vec(), owner.clone()),
            );
            by_type.insert(
                type_member_key(c.type_id, id).to_vec(),
                (Vec::new(), owner.clone()),
            );
            if let Ok(entries) = crate::attrs::attr_entries(id, &c) {
                for key in entries {
                    attr_index.insert(key, (Vec::new(), owner.clone()));
                }
            }
            by_name.insert(name_member_key(c.name, id), (Vec::new(), owner));
        }
        let db = &self.db;
        for (name, index, expected) in [
            (db_name::CONCEPT_KEYS, raw(db.concept_keys), keys),
            (db_name::CONCEPTS_BY_TYPE, raw(db.concepts_by_type), by_type),
            (db_name::CONCEPTS_BY_NAME, raw(db.concepts_by_name), by_name),
            (db_name::ATTR_INDEX, raw(db.attr_index), attr_index),
        ] {
            compare(txn, f, name, index, expected, None)?;
        }
        Ok(concepts)
    }

    /// Checks every proposition record, its ends and its three indexes,
    /// counting what the statistics must say; returns every element's id.
    pub(super) fn check_propositions(
        &self,
        txn: &RoTxn<'_>,
        f: &mut Findings,
        interned: &Interned,
        concepts: Concepts,
        stats: &mut BTreeMap<StatKey, u64>,
    ) -> Result<Elements, StoreError> {
        let key_name = |id: u32| self.interned_key_name(txn, interned, id);
        // Read the ids first, since an end may be a later one.
        let mut elements = Elements {
            concepts: concepts.ids,
            propositions: HashSet::new(),
            max_concept: concepts.max,
            max_proposition: 0,
        };
        for entry in raw(self.db.propositions).iter(txn).lmdb()? {
            let (key, _) = entry.lmdb()?;
            if let Ok(id) = <[u8; 8]>::try_from(key).map(u64::from_be_bytes) {
                elements.propositions.insert(id);
            }
        }
        let (mut spo, mut pos, mut osp) = (HashMap::new(), HashMap::new(), HashMap::new());
        for entry in raw(self.db.propositions).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            f.report.counts.propositions += 1;
            let Ok(id) = <[u8; 8]>::try_from(key).map(u64::from_be_bytes) else {
                f.add(
                    "record-decodes",
                    db_name::PROPOSITIONS,
                    format!("the key {} is not an 8-byte id", hex(key)),
                );
                continue;
            };
            let id = PropositionId(id);
            elements.max_proposition = elements.max_proposition.max(id.0);
            let p = match PropositionBytes::decode(value) {
                Ok(p) => p,
                Err(e) => {
                    f.add(
                        "record-decodes",
                        db_name::PROPOSITIONS,
                        format!("{id}: {e}"),
                    );
                    continue;
                }
            };
            for (part, bytes) in [("attributes", p.attributes), ("metadata", p.metadata)] {
                if let Err(e) = value::decode_fields::<StoreError>(bytes, key_name) {
                    f.add(
                        "record-decodes",
                        db_name::PROPOSITIONS,
                        format!("the {part} of {id}: {e}"),
                    );
                }
            }
            let t = p.triple;
            if !interned.contains(&(Namespace::Predicate.tag(), t.predicate)) {
                f.add(
                    "name-is-interned",
                    db_name::PROPOSITIONS,
                    format!("the predicate #{} of {id} is not interned", t.predicate),
                );
            }
            for (end, e) in [("subject", t.subject), ("object", t.object)] {
                if !elements.exists(e) {
                    f.add(
                        "proposition-ends-exist",
                        db_name::PROPOSITIONS,
                        format!("the {end} {e} of {id} does not exist"),
                    );
                }
            }
            *stats
                .entry(StatKey::PropositionsOfPredicate(t.predicate))
                .or_default() += 1;
            *stats.entry(StatKey::Propositions).or_default() += 1;
            let owner = format!("{id} ({} #{} {})", t.subject, t.predicate, t.object);
            let value = crate::codec::integer::compact_u64(id.0);
            spo.insert(Spo::encode(&t).to_vec(), (value.clone(), owner.clone()));
            pos.insert(Pos::encode(&t).to_vec(), (value.clone(), owner.clone()));
            osp.insert(Osp::encode(&t).to_vec(), (value, owner));
        }
        compare(txn, f, db_name::SPO, raw(self.db.spo), spo, None)?;
        compare(txn, f, db_name::POS, raw(self.db.pos), pos, None)?;
        compare(txn, f, db_name::OSP, raw(self.db.osp), osp, None)?;
        Ok(elements)
    }
}

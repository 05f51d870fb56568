//! The identities the meaning checks meet, interned, and what a file has
//! done to each: the checker's tables and the small values it passes
//! around. A leaf: it checks nothing and reports nothing.

use kip_nexus::{ConceptId, ElementId};
use serde_json::{Map, Value as Json};

use crate::ops::Loc;

/// The checker's tables are looked up several times per link with keys
/// the file chose: a fast hasher, seeded per process like std's.
pub(super) type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// How an end of a proposition resolved.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Kind {
    Concept(String),
    Proposition,
    /// Not followed (a KIP handle the checks cannot see through).
    Unknown,
}

/// The identity of an element, comparable across items: an index into
/// the checker's interned identities ([`Keys`]), so that a file naming the
/// same few thousand concepts in tens of thousands of links hashes and
/// stores each name once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Key {
    /// A concept by `(type, name)` (whether named so or by `{id}`).
    Concept(u32),
    /// A proposition by its `{id}`.
    Id(u32),
    /// A proposition by its ends and predicate.
    Link(u32),
    Unknown,
}

/// The identities the checks have met, interned.
#[derive(Default)]
pub(super) struct Keys {
    /// Concepts by type, then name.
    pub(super) concepts: HashMap<String, HashMap<String, u32>>,
    /// What the file did to each concept, and its id in the snapshot once
    /// looked up (the snapshot does not change while the checks run, so
    /// one look-up per concept is enough), by [`Key::Concept`] index.
    pub(super) concept_slots: Vec<ConceptSlot>,
    pub(super) ids: HashMap<String, u32>,
    pub(super) predicates: HashMap<String, u32>,
    pub(super) links: HashMap<(Key, u32, Key), u32>,
    /// What the file did to each proposition, by [`Key::Link`] index.
    pub(super) link_seen: Vec<Option<Seen>>,
}

/// One interned concept: what the file has done to it so far, and its id
/// in the snapshot (`None` until looked up, then `Some(None)` if absent).
#[derive(Default)]
pub(super) struct ConceptSlot {
    pub(super) seen: Option<Seen>,
    pub(super) stored: Option<Option<ConceptId>>,
}

impl Keys {
    pub(super) fn concept(&mut self, ty: &str, name: &str) -> u32 {
        if let Some(&k) = self.concepts.get(ty).and_then(|names| names.get(name)) {
            return k;
        }
        let k = self.concept_slots.len() as u32;
        self.concept_slots.push(ConceptSlot::default());
        self.concepts
            .entry(ty.to_owned())
            .or_default()
            .insert(name.to_owned(), k);
        k
    }

    pub(super) fn slot(&mut self, k: u32) -> &mut ConceptSlot {
        &mut self.concept_slots[k as usize]
    }

    pub(super) fn seen(&self, k: u32) -> Option<&Seen> {
        self.concept_slots[k as usize].seen.as_ref()
    }

    pub(super) fn id(&mut self, id: &str) -> u32 {
        intern(&mut self.ids, id)
    }

    pub(super) fn link(&mut self, s: Key, predicate: &str, o: Key) -> u32 {
        let p = intern(&mut self.predicates, predicate);
        let next = self.links.len() as u32;
        let k = *self.links.entry((s, p, o)).or_insert(next);
        if k == next {
            self.link_seen.push(None);
        }
        k
    }
}

fn intern(table: &mut HashMap<String, u32>, s: &str) -> u32 {
    if let Some(&k) = table.get(s) {
        return k;
    }
    let k = table.len() as u32;
    table.insert(s.to_owned(), k);
    k
}

/// A resolved end: what it is, its identity, and its id if it is stored.
pub(super) struct End {
    pub(super) kind: Kind,
    pub(super) key: Key,
    pub(super) stored: Option<ElementId>,
}

/// A predicate's allowed subject and object types (`None`: any).
pub(super) struct Signature {
    pub(super) subject: Option<Vec<String>>,
    pub(super) object: Option<Vec<String>>,
}

/// How an end is used: by which predicate, in which role, and whether it
/// must exist (it need not when the proposition is deleted).
pub(super) struct EndUse<'u> {
    pub(super) predicate: &'u str,
    pub(super) role: &'u str,
    pub(super) must_exist: bool,
}

/// What the file has done to an element so far.
///
/// Boxed fields keep it small: every concept and link of a file has one
/// in the checks' tables, most of them `Present`.
pub(super) enum Seen {
    Upserted {
        attrs: Box<Map<String, Json>>,
        meta: Box<Map<String, Json>>,
        loc: Box<Loc>,
    },
    Deleted {
        loc: Box<Loc>,
    },
    /// An item that failed earlier checks, or a link a capsule upserted
    /// (capsules compare nothing): it counts as present.
    Present,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Defined,
    Deleted,
}

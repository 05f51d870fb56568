//! What a [`Writer`](super::writer::Writer) has decided but not written
//! yet (the links of `SET PROPOSITIONS`, search documents, attribute-index
//! entries wait to be written together, in one sorted batch), and the
//! look-ups it repeats within a command.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use kip_store::{ConceptId, ElementId};

use super::object::Object;
use crate::schema;

/// The writer's caches are looked up several times per written link: a
/// fast hasher, seeded per process like std's.
pub(in crate::kml) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Links decided but not yet written (see [`Writer::flush_links`](super::writer::Writer::flush_links)).
///
/// Only links that nothing reads back before the flush are deferred: every
/// path that reads propositions from the store (a `PROPOSITION` block, a
/// `(…)` or `{id}` proposition term) flushes first, and a link repeated
/// before the flush is found here and merged, as the stored one would be.
#[derive(Debug, Default)]
pub(in crate::kml) struct PendingLinks {
    pub(in crate::kml) triples: Vec<kip_store::Triple>,
    /// Each link's metadata, as an index into `metadata`: the links of a
    /// command share theirs (they are stamped with the same time), so a
    /// bulk write holds it once, not once per link.
    pub(in crate::kml) meta: Vec<u32>,
    pub(in crate::kml) metadata: Vec<Object>,
    /// The command of a group write that decided each link (see
    /// [`Carry`](super::group::Carry)); empty outside a group.
    pub(in crate::kml) commands: Vec<u32>,
    /// Each link's ends' terms for its search document (see
    /// [`crate::search::Terms`]).
    pub(in crate::kml) end_terms: Vec<[crate::search::Terms; 2]>,
    pub(in crate::kml) by_triple: FastMap<(ElementId, u32, ElementId), usize>,
    /// The last metadata a new link was given, and the time it was
    /// stamped with, and its entry in `metadata`: the next link given the
    /// same at the same time shares that entry without stamping a copy.
    pub(in crate::kml) stamped: Option<(Object, String, u32)>,
}

impl PendingLinks {
    /// The index of `metadata` in [`PendingLinks::metadata`]: the last
    /// one's if equal (consecutive links of a command), else a new entry.
    pub(in crate::kml) fn share(&mut self, metadata: Object) -> u32 {
        if self.metadata.last() != Some(&metadata) {
            self.metadata.push(metadata);
        }
        (self.metadata.len() - 1) as u32
    }

    /// [`PendingLinks::share`] of `given` stamped as new at `now` (see
    /// [`Writer::stamp_new`](super::writer::Writer::stamp_new)), stamped once for a run of links given the
    /// same metadata at the same time.
    pub(in crate::kml) fn share_new(
        &mut self,
        given: &Object,
        now: &str,
        stamp: impl FnOnce(&mut Object),
    ) -> u32 {
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
/// [`Writer::flush_links`](super::writer::Writer::flush_links)): they wait for the group's end.
#[derive(Debug, Default)]
pub(in crate::kml) struct PendingDocuments {
    pub(in crate::kml) documents: Vec<kip_store::NewDocument>,
    pub(in crate::kml) at: FastMap<ConceptId, usize>,
    /// The search documents of the links written so far.
    pub(in crate::kml) links: crate::search::LinkDocuments,
}

/// What one command looks up again and again. Only facts that cannot turn
/// false within the command are kept (a defined type stays defined: UPSERT
/// cannot delete), and predicate signatures are dropped whenever a
/// `$PropositionType` definition is written.
#[derive(Debug, Default)]
pub(in crate::kml) struct WriterCache {
    pub(in crate::kml) defined_types: HashSet<String, foldhash::fast::RandomState>,
    pub(in crate::kml) predicates: FastMap<String, Option<Rc<schema::Signature>>>,
    pub(in crate::kml) heads: FastMap<ConceptId, (u32, String)>,
    pub(in crate::kml) type_names: FastMap<u32, String>,
    /// Interned ids of type and predicate names (an interned id never
    /// changes; only names found interned are kept).
    pub(in crate::kml) type_ids: FastMap<String, u32>,
    pub(in crate::kml) predicate_ids: FastMap<String, u32>,
    /// Concepts by type id and name: UPSERT neither deletes nor renames,
    /// so a concept found or created stays where it is for the command.
    pub(in crate::kml) concepts: FastMap<u32, FastMap<String, ConceptId>>,
}

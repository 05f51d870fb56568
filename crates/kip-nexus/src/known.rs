//! What a caller found before a write, handed to the write so that it
//! need not look it up again: the concepts the checks ahead of a pipelined
//! import found (by type and name, and in the order the writer will look
//! them up) and which of a text's links they found stored. The write
//! trusts them only in the state they were found in (see
//! [`crate::RunOptions::with_known`]).

use std::collections::HashMap;

use kip_store::{ConceptId, ElementId};

/// A map with a fast hasher: the writer looks every name up here.
type KnownMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Concept ids a caller looked up before the write, by type and name, so
/// that the write need not look them up again: a capsule checked ahead on
/// another core (`kip-capsule`'s pipelined import) hands over what its
/// checks found. The caller vouches that every entry still names that
/// concept in the state the write meets when its last change-log entry is
/// the one the caller names: UPSERTs never delete or rename, so this holds
/// when nothing but UPSERTs of non-schema concepts and links was written
/// between the look-ups and that entry, and the text only upserts. The
/// write checks the sequence number in its own transaction and ignores the
/// ids if another write came in between. A name that is absent here is
/// looked up as usual.
#[derive(Debug, Default)]
pub struct KnownConcepts {
    by_type: KnownMap<String, KnownMap<String, ConceptId>>,
    /// The same concepts in the order the write will look them up (see
    /// [`KnownConcepts::push_in_order`]).
    in_order: InOrder,
    /// The links the checks looked up (see [`KnownConcepts::set_links`]).
    links: Option<CheckedLinks>,
}

/// A link by its ends and predicate id.
pub type LinkKey = (ElementId, u32, ElementId);

/// See [`KnownConcepts::set_links`].
#[derive(Debug)]
struct CheckedLinks {
    at: u64,
    stored: std::collections::HashSet<LinkKey, foldhash::fast::RandomState>,
}

/// Concepts by type and name in the order a write looks them up: read
/// one after the other, comparing a few bytes that lie side by side,
/// instead of hashing each name and following it to a random place in a
/// large map (two cache misses a look-up, most of
/// [`KnownConcepts::get`]'s cost on a bulk import).
#[derive(Debug, Default)]
struct InOrder {
    types: Vec<String>,
    /// Every name, one after the other.
    names: String,
    entries: Vec<InOrderEntry>,
    /// The entry the next look-up is expected at.
    next: std::sync::atomic::AtomicUsize,
}

#[derive(Debug)]
struct InOrderEntry {
    ty: u32,
    /// Where the name ends in `names` (it starts where the previous one
    /// ends).
    end: usize,
    id: Option<ConceptId>,
}

impl InOrder {
    fn matches(&self, at: usize, ty: &str, name: &str) -> bool {
        let Some(e) = self.entries.get(at) else {
            return false;
        };
        let start = match at {
            0 => 0,
            _ => self.entries[at - 1].end,
        };
        self.names[start..e.end] == *name && self.types[e.ty as usize] == ty
    }
}

impl KnownConcepts {
    /// Records that the write will look concept `(ty, name)` up next,
    /// and that the caller found it stored with id `id` (or absent, `None`;
    /// a stored one is also [`KnownConcepts::insert`]ed by the caller).
    /// The caller lists the look-ups of a text's UPSERTs in the order the
    /// writer makes them: for each CONCEPT block matched by type and name,
    /// the block, then each of its `SET PROPOSITIONS` targets given by type
    /// and name. A look-up that is not where it was expected is found by
    /// name (see [`KnownConcepts::get_in_order`]), so a list that is off
    /// costs time, never a wrong id.
    pub fn push_in_order(&mut self, ty: &str, name: &str, id: Option<ConceptId>) {
        let order = &mut self.in_order;
        let t = match order.types.iter().position(|t| t == ty) {
            Some(t) => t,
            None => {
                order.types.push(ty.to_owned());
                order.types.len() - 1
            }
        };
        order.names.push_str(name);
        order.entries.push(InOrderEntry {
            ty: t as u32,
            end: order.names.len(),
            id,
        });
    }

    /// Starts the look-ups in order from the first (a write that is run
    /// again starts over).
    pub fn rewind(&self) {
        (self.in_order.next).store(0, std::sync::atomic::Ordering::Relaxed);
    }

    /// What the caller found for `(ty, name)`, `Some(None)` meaning absent:
    /// the entry expected next if it names this concept (or the one after
    /// it, or a repeat of the last), else the look-up by name.
    pub fn get_in_order(&self, ty: &str, name: &str) -> Option<Option<ConceptId>> {
        use std::sync::atomic::Ordering::Relaxed;
        let order = &self.in_order;
        let next = order.next.load(Relaxed);
        let found = [next, next + 1, next.wrapping_sub(1)]
            .into_iter()
            .find(|&at| order.matches(at, ty, name));
        match found {
            Some(at) => {
                order.next.store(at + 1, Relaxed);
                Some(order.entries[at].id)
            }
            None => self.get(ty, name).map(Some),
        }
    }

    /// Records that concept `(ty, name)` has id `id`.
    pub fn insert(&mut self, ty: &str, name: &str, id: ConceptId) {
        self.by_type
            .entry(ty.to_owned())
            .or_default()
            .insert(name.to_owned(), id);
    }

    /// The id recorded for `(ty, name)`.
    pub fn get(&self, ty: &str, name: &str) -> Option<ConceptId> {
        self.by_type.get(ty)?.get(name).copied()
    }

    pub fn len(&self) -> usize {
        self.by_type.values().map(KnownMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records that the checks looked up, in the snapshot whose last
    /// change-log entry is `at`, every link the text upserts whose ends
    /// and predicate were stored there, and found `stored` of them: every
    /// other link the text upserts was absent then (a link between
    /// elements the snapshot did not hold cannot have been stored). The
    /// caller vouches that no end of an upserted link was left unresolved
    /// (a handle it could not follow, say).
    ///
    /// A group write ([`crate::bulk::Bulk::group`]) whose transaction started from
    /// that same state, or from the end of this process's last group
    /// writes when nothing else was written since that state, then skips
    /// the look-up of each new link the text upserts that none of them
    /// created, unless the group itself wrote a link it cannot account for
    /// (a `PROPOSITION` block's). A link missed all the same is still
    /// caught: `create_propositions` inserts only new keys, so the write
    /// fails rather than store a link twice, and the import runs its files
    /// again one by one.
    pub fn set_links(&mut self, at: u64, stored: impl IntoIterator<Item = LinkKey>) {
        self.links = Some(CheckedLinks {
            at,
            stored: stored.into_iter().collect(),
        });
    }

    /// The state in which the links were looked up (see
    /// [`KnownConcepts::set_links`]), if they were.
    pub fn links_checked_at(&self) -> Option<u64> {
        self.links.as_ref().map(|l| l.at)
    }

    /// Whether the checks found `link` stored (see
    /// [`KnownConcepts::set_links`]).
    pub fn link_was_stored(&self, link: &LinkKey) -> bool {
        self.links.as_ref().is_some_and(|l| l.stored.contains(link))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Look-ups made in the order the caller listed take the listed ids;
    /// one the list did not expect (or one it skipped) is found by name,
    /// so a list that is off never gives a wrong id; a write run again
    /// starts over.
    #[test]
    fn known_concepts_in_order_follow_the_writer_and_fall_back_by_name() {
        let mut known = KnownConcepts::default();
        for (ty, name, id) in [
            ("Drug", "aspirin", Some(1)),
            ("Disease", "flu", Some(2)),
            ("Drug", "new", None),
            ("Disease", "cold", Some(3)),
        ] {
            let id = id.map(ConceptId);
            if let Some(id) = id {
                known.insert(ty, name, id);
            }
            known.push_in_order(ty, name, id);
        }
        let found = |n: u64| Some(Some(ConceptId(n)));
        // Each look-up in turn, and what it finds.
        let first_run = [
            ("Drug", "aspirin", found(1)),
            // The same name under another type is not this entry.
            ("Drug", "flu", None),
            ("Disease", "flu", found(2)),
            // A repeat of the last.
            ("Disease", "flu", found(2)),
            // Skipping one entry still follows the list.
            ("Disease", "cold", found(3)),
            // Off the list: found by name, or unknown.
            ("Drug", "aspirin", found(1)),
            ("Drug", "new", None),
        ];
        let run_again = [
            ("Drug", "aspirin", found(1)),
            ("Disease", "flu", found(2)),
            ("Drug", "new", Some(None)),
        ];
        for run in [&first_run[..], &run_again[..]] {
            known.rewind();
            for &(ty, name, want) in run {
                assert_eq!(known.get_in_order(ty, name), want, "{ty} {name}");
            }
        }
    }
}

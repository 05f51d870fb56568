//! Folding the touches of one command into one change per element, in
//! the order first touched; the creations of a bulk write kept as ranges.

use std::collections::HashMap;

use kip_store::ElementId;
use serde_json::{Map, Value as Json};

use super::model::{
    BULK_CREATIONS, BeforeImage, ElementChange, Op, State, element, is_lean_creation, kind_of,
    push_range,
};

/// The changes of one command, one per element.
#[derive(Debug, Default)]
pub(in crate::kml) struct Changes {
    list: Vec<Option<ElementChange>>,
    at: HashMap<ElementId, usize>,
    /// Keep a created element's id and names but not its state: a traced
    /// write's before-image needs only the id to undo a creation, and the
    /// state is in the graph (and in the command's text).
    pub(super) lean: bool,
    /// Lean creations noted one by one so far (until a bulk write's
    /// creations become ranges).
    lean_created: usize,
    /// A bulk write's creations, per kind, in id order (fresh ids only
    /// grow): elements created and neither updated away from "created"
    /// nor deleted since. Empty until the write turns out to be bulk.
    ranges: [Vec<(u64, u64)>; 2],
    bulk: bool,
}

impl Changes {
    /// Changes collected as a before-image (see the `lean` field).
    pub(super) fn lean() -> Changes {
        Changes {
            lean: true,
            ..Changes::default()
        }
    }

    /// Whether `e` lies in a range of bulk creations.
    pub(super) fn in_ranges(&self, e: ElementId) -> bool {
        let (k, n) = kind_of(e);
        let r = &self.ranges[k];
        let i = r.partition_point(|&(_, last)| last < n);
        r.get(i).is_some_and(|&(first, _)| first <= n)
    }

    /// Adds a new element to the ranges.
    pub(super) fn add_to_ranges(&mut self, e: ElementId) {
        let (k, n) = kind_of(e);
        push_range(&mut self.ranges[k], (n, n));
    }

    /// Takes `e` out of the ranges (it was deleted in the same command).
    pub(super) fn remove_from_ranges(&mut self, e: ElementId) {
        let (k, n) = kind_of(e);
        let r = &mut self.ranges[k];
        let i = r.partition_point(|&(_, last)| last < n);
        let Some(&(first, last)) = r.get(i).filter(|&&(first, _)| first <= n) else {
            return;
        };
        let mut parts = Vec::with_capacity(2);
        if first < n {
            parts.push((first, n - 1));
        }
        if n < last {
            parts.push((n + 1, last));
        }
        r.splice(i..=i, parts);
    }

    /// Notes a lean creation without state; returns `false` when it must
    /// be noted as a change (the write is not bulk yet). When the count
    /// passes [`BULK_CREATIONS`], the creations noted so far move to the
    /// ranges.
    pub(super) fn note_bulk_creation(&mut self, e: ElementId) -> bool {
        if !self.bulk {
            self.lean_created += 1;
            if self.lean_created <= BULK_CREATIONS {
                return false;
            }
            self.become_bulk();
        }
        self.add_to_ranges(e);
        true
    }

    /// Makes the write bulk: the lean creations noted so far move to the
    /// ranges, and the next ones go there.
    pub(super) fn become_bulk(&mut self) {
        self.bulk = true;
        for slot in &mut self.list {
            let lean_creation = slot.as_ref().is_some_and(is_lean_creation);
            if lean_creation
                && let Some(c) = slot.take()
                && let Ok(id) = c.id.parse::<ElementId>()
            {
                self.at.remove(&id);
                let (k, n) = kind_of(id);
                push_range(&mut self.ranges[k], (n, n));
            }
        }
    }

    /// Told that `plain` lean creations are about to be noted: when they
    /// would take the write past [`BULK_CREATIONS`], it becomes bulk now —
    /// what the creation past the bound would do — so that none of them is
    /// noted in full first (a 20,000-link capsule's first 1,000 links were
    /// noted with their ends' names, then moved to the ranges).
    pub(super) fn expect_creations(&mut self, plain: usize) {
        if self.lean && !self.bulk && self.lean_created + plain > BULK_CREATIONS {
            self.become_bulk();
        }
    }

    pub(in crate::kml) fn into_image(self) -> BeforeImage {
        let mut created = Vec::new();
        for (k, ranges) in self.ranges.iter().enumerate() {
            for &(first, last) in ranges {
                created.push((element(k, first), element(k, last)));
            }
        }
        BeforeImage {
            changes: self.list.into_iter().flatten().collect(),
            created,
            lean_listed: 0,
        }
    }

    /// Adds `c` about `e`, folding it into an earlier change of `e`.
    pub(super) fn note(&mut self, e: ElementId, c: ElementChange) {
        let Some(&i) = self.at.get(&e) else {
            self.at.insert(e, self.list.len());
            self.list.push(Some(c));
            return;
        };
        let slot = &mut self.list[i];
        let Some(mut old) = slot.take() else {
            // Deleted and gone earlier in the command: this is a new element
            // that reuses nothing, but keep it anyway.
            *slot = Some(c);
            return;
        };
        // A link first updated in place and moved later: its ends before
        // the command are the ones the first change names.
        if let (Some(first), Some(later)) = (&mut old.before, &c.before)
            && first.subject.is_none()
            && later.subject.is_some()
        {
            first.subject.clone_from(&old.subject);
            first.object.clone_from(&old.object);
        }
        *slot = match (old.op, c.op) {
            (Op::Created, Op::Deleted) => None,
            (Op::Created, _) => Some(ElementChange {
                op: Op::Created,
                before: None,
                ..c
            }),
            (Op::Updated, Op::Deleted) => Some(ElementChange {
                before: old.before,
                ..c
            }),
            (Op::Updated, _) => Some(ElementChange {
                op: Op::Updated,
                before: old.before,
                ..c
            }),
            (Op::Deleted, _) => Some(c),
        };
    }

    pub(super) fn into_list(self) -> Vec<ElementChange> {
        self.list.into_iter().flatten().collect()
    }
}

/// Metadata `confidence` below 0.5: the trace flags the write `Uncertain`,
/// so a lean before-image keeps such a creation's state.
pub(in crate::kml) fn uncertain(metadata: &Map<String, Json>) -> bool {
    metadata
        .get("confidence")
        .and_then(Json::as_f64)
        .is_some_and(|c| c < 0.5)
}

pub(super) fn state(attributes: &Map<String, Json>, metadata: &Map<String, Json>) -> State {
    State {
        attributes: attributes.clone(),
        metadata: metadata.clone(),
        subject: None,
        object: None,
    }
}

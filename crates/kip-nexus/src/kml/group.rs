//! Group writes (`Bulk::group`: the commands of several texts in one
//! transaction): what one command's [`Writer`](super::writer::Writer)
//! carries to the next ([`Carry`]), and what the last groups created
//! ([`RecentGroups`]), so that checks made ahead of them still hold.

use std::collections::HashSet;

use super::changes::{self, BeforeImage};
use super::pending::{PendingDocuments, PendingLinks, WriterCache};

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
    pub(in crate::kml) early: HashSet<u64, foldhash::fast::RandomState>,
    pub(in crate::kml) fingerprint: foldhash::fast::RandomState,
    pub(in crate::kml) untracked: bool,
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

    pub(in crate::kml) fn note(&mut self, links: &[kip_store::Triple]) {
        use std::hash::BuildHasher as _;
        for t in links {
            let link: crate::known::LinkKey = (t.subject, t.predicate, t.object);
            self.early.insert(self.fingerprint.hash_one(link));
        }
    }

    /// Whether `link` may have been written early.
    pub(in crate::kml) fn may_hold(&self, link: &crate::known::LinkKey) -> bool {
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
    pub(in crate::kml) groups: Vec<GroupLinks>,
    pub(in crate::kml) fingerprint: foldhash::fast::RandomState,
}

/// One committed group write of [`RecentGroups`].
#[derive(Debug)]
pub(crate) struct GroupLinks {
    /// The change-log sequence numbers before and after it.
    pub(in crate::kml) before: u64,
    pub(in crate::kml) after: u64,
    /// The links it created.
    pub(in crate::kml) links: WrittenLinks,
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
    pub(in crate::kml) fn between(&self, from: u64, to: u64) -> Option<&[GroupLinks]> {
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
pub(in crate::kml) struct Group {
    pub(in crate::kml) command: u32,
    pub(in crate::kml) earlier: Vec<Option<changes::Changes>>,
}

/// What a group write (`Bulk::group`: the commands of several texts
/// in one transaction) carries from one command's writer to the next: the
/// links and documents decided but not written yet, so that they are
/// written together, in one sorted batch, at the group's end; the
/// schema look-ups; and each command's before-image so far.
#[derive(Debug, Default)]
pub(crate) struct Carry {
    pub(in crate::kml) pending: PendingLinks,
    pub(in crate::kml) pending_documents: PendingDocuments,
    pub(in crate::kml) cache: WriterCache,
    pub(in crate::kml) group: Group,
    pub(in crate::kml) written: WrittenLinks,
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

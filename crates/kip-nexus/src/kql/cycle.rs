//! What one cycle of a sweep (see `sweep.rs`) is told and leaves behind:
//! where its scan starts ([`SweepFrom`]), what the scan did ([`Sweep`]),
//! and the hints the nexus keeps between commands ([`SweepStarts`]), in
//! memory only: a hint makes each cycle look at the links after the
//! previous one's instead of the ones already marked. Losing it (a
//! restart, another process) costs time, never correctness, and a hint is
//! only taken up once the cycle that left it has committed. A leaf: the
//! executor holds a [`Sweep`], the scan reads and fills it.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use kip_lang::ast::Group;
use kip_store::PropositionId;

use super::compile::Slot;

/// Where a sweep's scan starts.
#[derive(Clone, Debug)]
pub struct SweepFrom {
    /// Links to look at first, in id order (the previous cycle's selection).
    pub recheck: Vec<PropositionId>,
    /// The first link of the range scanned next.
    pub start: PropositionId,
    /// Whether the links before `start` may match: the scan goes round to
    /// them after the last link.
    pub wrap: bool,
}

impl Default for SweepFrom {
    /// From the first link, nothing known.
    fn default() -> SweepFrom {
        SweepFrom {
            recheck: Vec::new(),
            start: PropositionId(0),
            wrap: false,
        }
    }
}

/// Where a capped scan stopped: at the first link it did not look at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// In the links looked at again, at this index of the list.
    Recheck(usize),
    /// In the range from the start to the last link.
    Range(PropositionId),
    /// In the links before the start, having gone round.
    Wrap(PropositionId),
}

/// What an UPDATE asks of its scan and what the scan did.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The UPDATE's target: the scan applies only when it is the link.
    pub(super) target: Option<Slot>,
    pub(super) from: SweepFrom,
    /// LIMIT: the scan stops once it has selected this many.
    pub(super) cap: Option<usize>,
    /// Whether the block had the sweep's shape and was scanned.
    pub ran: bool,
    /// Whether a FILTER reads the link's ends: their state can change
    /// without a link changing, so no link is ever known not to match.
    pub(super) reads_ends: bool,
    /// Where LIMIT stopped the scan; `None` when it looked at every link
    /// it was to look at.
    pub stopped: Option<Stop>,
}

impl Sweep {
    /// Where the next cycle of the statement starts, given the links this
    /// one selected (`selected`, unordered).
    pub fn next(&self, mut selected: Vec<PropositionId>) -> SweepFrom {
        let from = &self.from;
        let (start, clean) = match self.stopped {
            Some(Stop::Recheck(i)) => {
                selected.extend_from_slice(&from.recheck[i..]);
                (from.start, !from.wrap)
            }
            Some(Stop::Range(at)) => (at, !from.wrap),
            Some(Stop::Wrap(at)) => (at, true),
            None => (PropositionId(u64::MAX), true),
        };
        let clean = clean && !self.reads_ends;
        selected.sort_unstable();
        selected.dedup();
        SweepFrom {
            recheck: if clean { selected } else { Vec::new() },
            start,
            wrap: !clean,
        }
    }
}

/// What a cycle of a sweep leaves for the next one.
#[derive(Clone, Debug)]
pub struct SweepHint {
    /// Where the next cycle starts.
    pub from: SweepFrom,
    /// The change log's last sequence number when the cycle ran (its own
    /// entry, if it changed anything, is the next one).
    pub seq: u64,
    /// How many links the cycle updated (what its own entry must say).
    pub updated: u64,
}

/// Statements remembered at most (all are forgotten when a new one would
/// pass this: a hint is only ever a shortcut).
const MAX_SWEEPS: usize = 64;

/// The hints by statement, and those the write transaction under way has
/// left, published when it commits.
#[derive(Debug, Default)]
pub struct SweepStarts(Mutex<Starts>);

#[derive(Debug, Default)]
struct Starts {
    hints: HashMap<String, SweepHint>,
    /// The write transactions under way: one, and for a moment two (the
    /// next writer may begin before the last one's end is noted).
    txns: Vec<Txn>,
}

/// A write transaction (its LMDB id), how many KML commands it has run
/// and the hints it left.
#[derive(Debug)]
struct Txn {
    id: usize,
    commands: usize,
    staged: Vec<(String, SweepHint)>,
}

impl SweepStarts {
    fn lock(&self) -> MutexGuard<'_, Starts> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The statement's key: its WHERE block as bound (spans and values).
    pub fn key(where_: &Group) -> String {
        format!("{where_:?}")
    }

    /// A write transaction begins (or begins again after a retry).
    pub(crate) fn begin(&self, txn: usize) {
        let mut s = self.lock();
        s.txns.retain(|t| t.id != txn);
        if s.txns.len() >= 4 {
            // Only a transaction whose end was never noted stays this long.
            s.txns.remove(0);
        }
        s.txns.push(Txn {
            id: txn,
            commands: 0,
            staged: Vec::new(),
        });
    }

    /// A KML command begins in transaction `txn`: whether it is the first
    /// (only the first may use a hint, since an earlier command of the
    /// same transaction may have changed links the log does not show yet).
    pub(crate) fn command(&self, txn: usize) -> bool {
        let mut s = self.lock();
        let Some(t) = s.txns.iter_mut().find(|t| t.id == txn) else {
            return false;
        };
        t.commands += 1;
        t.commands == 1
    }

    /// The statement's hint, if a committed cycle left one.
    pub(crate) fn hint(&self, key: &str) -> Option<SweepHint> {
        self.lock().hints.get(key).cloned()
    }

    /// Leaves a hint for the statement, taken up if `txn` commits.
    pub(crate) fn stage(&self, txn: usize, key: String, hint: SweepHint) {
        let mut s = self.lock();
        if let Some(t) = s.txns.iter_mut().find(|t| t.id == txn) {
            t.staged.push((key, hint));
        }
    }

    /// The write transaction `txn` ended: its hints are kept if it
    /// committed, dropped otherwise.
    pub(crate) fn end(&self, txn: Option<usize>, committed: bool) {
        let mut s = self.lock();
        let Some(i) = s.txns.iter().position(|t| Some(t.id) == txn) else {
            return;
        };
        let t = s.txns.remove(i);
        if committed {
            for (key, hint) in t.staged {
                if s.hints.len() >= MAX_SWEEPS && !s.hints.contains_key(&key) {
                    s.hints.clear();
                }
                s.hints.insert(key, hint);
            }
        }
    }
}

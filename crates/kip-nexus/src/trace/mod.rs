//! The cognitive trace (BRIEF §7, seed 003): who changed the memory, when,
//! why, and what exactly changed — and the way back.
//!
//! Entries have exactly the seed's fields (`originator`, `type`, `seq`,
//! `message`, `tag`, `flags`) plus what the engine adds (`id`, `at`, and for
//! commands `data`). The engine writes a command's `TRACE` entry in the same
//! write transaction as the command (`run.rs`), with the command's
//! before-image (`data.changes`, the [`ElementChange`] list a preview
//! shows), so an entry exists exactly when its write was committed and
//! [`Nexus::revert`] can put every element back.
//!
//! Reads are folded, not written: the same text from the same originator
//! within [`FOLD_WINDOW_SECS`] is one entry with a count. The folder lives in
//! memory and is flushed inside the next write transaction of this process,
//! by a small write of its own once a window has closed, or when the nexus
//! is dropped — a read never waits for a write.
//!
//! A folded read keeps what its reads returned (`data.returned`: the ids of
//! the elements, at most [`MAX_READ_IDS`], each with how many of the fold's
//! reads returned it; `data.returned_more` counts the ids past that bound),
//! so a curator sees what each agent reads (`returned.rs`) and the graph
//! its recall heat (`heat.rs`). Read ids are data, not the entry's
//! elements: a read touched nothing, so it never blocks a revert.
//!
//! Retention ([`TraceSettings`]) drops the oldest entries first, and a
//! `SPACE` entry says how many went.
//!
//! Time travel reads the same before-images backwards: `as_of` rebuilds
//! the nexus as of a past time in a throwaway copy, `diff` lists what
//! changed between two times.

mod append;
mod as_of;
mod authority;
mod diff;
mod entry;
mod fold;
mod heat;
mod ops;
mod overwrites;
mod returned;
mod revert_to;
mod stale;
mod text;

pub(crate) use append::{Append, CommandRecord, declare_genesis};
pub(crate) use as_of::TimeTravel;
pub use as_of::{AsOf, AsOfPoint};
pub use diff::{Diff, DiffElement, DiffState, DiffTotals};
pub use entry::{Entry, EntryType, NewEntry, TraceFilter, TraceNote, TraceSettings};
pub(crate) use fold::{Fold, Tracer};
pub use heat::{
    DEFAULT_HEAT_ELEMENTS, Heat, HeatQuery, MAX_HEAT_ELEMENTS, MAX_HEAT_SCAN, ReadHeat, ReadsBy,
};
pub use ops::{DEFAULT_TRACE_PAGE, MAX_TRACE_PAGE, Reverted, TracePage};
pub use overwrites::{SUPERSEDED_VALUES, overwrites};
pub use returned::MAX_READ_IDS;
pub(crate) use returned::Returned;
pub use revert_to::RevertedTo;
pub(crate) use text::{add_verb, join_verbs, kept_head, verbs};

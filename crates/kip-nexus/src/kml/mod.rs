//! KML: UPSERT, UPDATE, MERGE and the four DELETE forms, inside the caller's write
//! transaction (the caller commits, or aborts on error or dry run, so a
//! command is atomic).
//!
//! Every write goes through [`Writer`], which keeps the derived state in
//! the same transaction as the change: provenance timestamps, the search
//! index, per-domain counters and the DETACH cascade.
//!
//! This module only assembles and re-exports: `writer` holds the
//! [`Writer`], `pending` what it decided but has not written yet and its
//! per-command caches, `group` what a group write carries from one command
//! to the next, `object` the attribute and metadata objects with the
//! engine's reserved keys, and `changes` describes what a write changed;
//! `upsert`, `update`, `merge`, `delete` and `restore` hold the commands.
//! The children share what they need through those leaves, never through
//! this file.

pub(crate) mod changes;
mod delete;
mod group;
mod merge;
mod object;
mod pending;
mod restore;
mod update;
mod upsert;
mod writer;

pub use crate::stats::Stats;
pub use changes::{
    BeforeImage, ElementChange, End as ChangeEnd, Kind as ChangeKind, Op as ChangeOp,
    State as ChangeState,
};
pub(crate) use group::{Carry, RecentGroups, WrittenLinks};
pub use restore::VersionFloors;
pub use writer::{Writer, domain_counter};

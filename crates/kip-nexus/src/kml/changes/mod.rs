//! What a write changed, element by element: the `changes` list of a dry
//! run's result, and the description of a change that the cognitive trace
//! (BRIEF §7) can keep as a write's before-image.
//!
//! The [`Writer`] collects only when asked ([`Writer::collect_changes`]):
//! a preview adds them to its result; a traced committed write keeps them in
//! its trace entry ([`Writer::take_changes`]) and its result shape stays as
//! it was. Each element appears once per command, in the order it was first
//! touched; several touches fold into one change (created then updated is
//! "created" with the final state, updated then deleted is "deleted" with
//! the state before the command, created then deleted disappears).
//!
//! This module only describes; it never decides what is written.

mod fold;
mod model;
#[cfg(test)]
mod tests;
mod writer;

pub(in crate::kml) use fold::{Changes, uncertain};
/// The trace's tests write just past it to see a bulk write's ranges.
#[cfg(test)]
pub(crate) use model::BULK_CREATIONS;
pub use model::{BeforeImage, ElementChange, End, Kind, Op, State};

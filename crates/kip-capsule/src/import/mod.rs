//! The one import pipeline, for every face (command line, watcher,
//! drag-and-drop, agents): read → parse → check the whole file → apply in
//! one nexus transaction → report.
//!
//! A file with any error applies nothing: the checks run before anything
//! is written, and the writes of a file are one [`Nexus::run`] call
//! ([`Nexus::run_parts`] for a file applied in parts; a group of files
//! shares one [`Nexus::run_group`] call and is imported again file by file
//! if it fails), one LMDB transaction that also updates the search index
//! and the counters, so a failure at any point (the nexus refusing
//! something the checks let through, a full disk) leaves the graph as it
//! was.
//!
//! The pipeline by job: [`file`](mod@file) imports one file, from its
//! text or its path, and hands it by format to [`kip`] (capsules) or
//! [`yaml`] (bundles); [`pipeline`] imports many files, reading and
//! checking the next ([`prepared`], with the reader's checks in
//! [`ahead`]) while the nexus applies the current one, and [`group`]
//! writes a run of additive capsules in one transaction. What the piped and streamed imports share
//! with these (options, progress, the write) is [`crate::apply`]'s.
//!
//! This module only assembles its children: it owns no item of its own.
//!
//! [`Nexus::run`]: kip_nexus::Nexus::run
//! [`Nexus::run_parts`]: kip_nexus::Nexus::run_parts
//! [`Nexus::run_group`]: kip_nexus::Nexus::run_group

mod ahead;
mod file;
mod group;
mod kip;
mod pipeline;
mod prepared;
#[cfg(test)]
mod tests;
mod yaml;

pub(crate) use file::import_read;
pub use file::{
    import_path, import_path_with, import_source, import_streamed, import_text, import_text_with,
};
pub use pipeline::import_paths_with;

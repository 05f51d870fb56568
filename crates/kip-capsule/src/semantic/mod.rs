//! The meaning checks: a file's ops against the nexus, in file order,
//! collecting every problem instead of stopping at the first.
//!
//! - every concept type and predicate is defined, by the nexus or by an
//!   earlier item of the same file, with "did you mean";
//! - every `source` / `target` (subject / object) exists, in the nexus or
//!   created earlier in the file, and was not deleted in between;
//! - the ends have the types the predicate's `subject_types` /
//!   `object_types` allow;
//! - protected elements are neither deleted nor given a new `id`;
//! - in a bundle (a declarative set, unlike a capsule's sequence of
//!   commands), no element is given two different values for one key, or
//!   both upserted and deleted.
//!
//! The checks read one snapshot of the nexus and never write; each concept
//! a file names is looked up in it once, however many links name it. They
//! do not replace the nexus's own checks, which run again when the file is
//! applied.
//!
//! By job: [`checker`] holds the [`Checker`] and the schema as the file
//! changes it, [`items`] checks each op and records what it does,
//! [`ends`] resolves a proposition's ends, [`keys`] interns the
//! identities the checks meet, and [`names`] words the errors shared with
//! the bundle reader.

mod checker;
mod ends;
mod items;
mod keys;
mod names;

pub(crate) use checker::Checker;
pub(crate) use names::{BUNDLE_ROLES, DEFINE_PREDICATE, DEFINE_TYPE, KIP_ROLES, unknown_name};

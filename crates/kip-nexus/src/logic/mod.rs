//! Logic properties (BRIEF §8, seed 004): the declaration a `$ConceptType`
//! definition carries in its `logic_properties` attribute, read into a typed
//! model and checked when it is written.
//!
//! A logic property is computed on demand, never stored: a **metric** (a
//! value over a time window, or a series of one value per step bucket) or an
//! **operator** (a call to a service). This module owns the declaration's
//! shape and its checks — the same reader serves the KML writer (which
//! refuses a bad declaration with `KIP_2003` and the path inside it) and the
//! resolver (`kip-logic`, which reads the definition fresh on every request).
//! It does not resolve or evaluate anything.

mod check;
mod model;
#[cfg(test)]
mod tests;

pub(crate) use check::{check_definition, summary};
pub use check::{check_url, declared};
pub use model::{
    DataSource, LOGIC_PROPERTIES, LogicKind, LogicProperty, ParamType, Parameter, STEPS, ValueFrom,
};

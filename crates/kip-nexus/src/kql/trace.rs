//! The `explain` profile of an evaluation: one [`Step`] per step of the
//! top-level block (rows in and out, time, a sample of the rows after it),
//! and the first step that emptied the rows with a bounded copy of its
//! input, which [`crate::explain`] reads to say why a result is empty.

use crate::explain::Step;

use super::compile::{Atom, PredTest};
use super::row::Row;

/// The profile being recorded for `explain`.
#[derive(Debug, Default)]
pub struct Trace {
    pub source: String,
    pub steps: Vec<Step>,
    /// The first step that turned rows into none: its index in `steps`,
    /// what it was, and (a bounded copy of) the rows it received.
    pub(crate) failed: Option<(usize, Failed, Vec<Row>)>,
}

/// The kind of step that emptied the rows: an atom or a FILTER of the
/// block (by index), a NOT, or something diagnosis does not look into.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Failed {
    Atom(usize),
    Filter(usize),
    Not,
    Other,
}

/// The `kind` of an atom's step.
pub(super) fn atom_kind(atom: &Atom) -> &'static str {
    match atom {
        Atom::Concept { .. } => "concept",
        Atom::PropId { .. } => "proposition",
        Atom::Prop {
            pred: PredTest::Path { .. },
            ..
        } => "path",
        Atom::Prop { .. } => "proposition",
    }
}

/// A bounded copy of a step's input rows, kept while tracing so that a
/// step that empties the rows can be diagnosed.
pub(super) fn input_copy(tracing: bool, rows: &[Row]) -> Option<Vec<Row>> {
    (tracing && !rows.is_empty()).then(|| rows.iter().take(200).cloned().collect())
}

//! The rows the executor joins: a value per variable slot, `Null` while
//! unbound. A leaf, shared by the executor, the path walks, the index scan,
//! the trace and the readers of values.

use kip_store::{ConceptId, ElementId, PropositionId};

use super::compile::Slot;

/// The value bound to a variable in a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Val {
    Null,
    Concept(ConceptId),
    Prop(PropositionId),
    /// A predicate, bound by a predicate variable `(?s, ?p, ?o)`.
    Pred(u32),
}

impl Val {
    pub(crate) fn element(self) -> Option<ElementId> {
        match self {
            Val::Concept(c) => Some(ElementId::Concept(c)),
            Val::Prop(p) => Some(ElementId::Proposition(p)),
            Val::Null | Val::Pred(_) => None,
        }
    }

    pub(super) fn of(e: ElementId) -> Val {
        match e {
            ElementId::Concept(c) => Val::Concept(c),
            ElementId::Proposition(p) => Val::Prop(p),
        }
    }
}

pub type Row = Vec<Val>;

/// Binds `slot` to `val` unless it holds another value; whether the row
/// still agrees.
pub(super) fn set(row: &mut Row, slot: Slot, val: Val) -> bool {
    match row[slot] {
        Val::Null => {
            row[slot] = val;
            true
        }
        existing => existing == val,
    }
}

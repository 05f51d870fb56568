//! The import's plan: what a file asks of the nexus, as a list of [`Op`]s
//! in file order, whichever format it came in.
//!
//! A YAML bundle is read into ops (by [`crate::bundle`]) and the ops become
//! KIP commands ([`to_commands`]) that the nexus runs in one transaction. A
//! `.kip` capsule runs as written; its UPSERTs are lowered into ops
//! ([`lower_kip`]) only so that the meaning checks of [`crate::semantic`]
//! can report every problem at once, which the nexus, stopping at the
//! first, cannot. Either way the nexus is the final judge of every write.
//!
//! Spans are byte ranges of the file's own text; commands built here carry
//! them too, so an error the nexus raises while applying a bundle points at
//! the YAML line it came from.

mod commands;
mod lower;
#[cfg(test)]
mod tests;

use kip_lang::ast::Span;
use serde_json::{Map, Value as Json};

pub(crate) use commands::to_commands;
pub(crate) use lower::{Lowering, defines_schema, lower_kip};

/// Where something is: a path inside a bundle (`[4].source`) and its bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Loc {
    pub(crate) path: Option<String>,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

impl Loc {
    pub(crate) fn span(&self) -> Span {
        Span::new(self.start, self.end.max(self.start))
    }

    fn of_span(span: Span) -> Loc {
        Loc {
            path: None,
            start: span.start,
            end: span.end,
        }
    }
}

/// A reference to an element from a proposition's end.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ref {
    Concept {
        ty: String,
        name: String,
        ty_loc: Loc,
        loc: Loc,
    },
    Id {
        id: String,
        loc: Loc,
    },
    Link(Box<LinkRef>),
    /// A KIP handle the checks cannot follow; the nexus will.
    Unknown,
}

impl Ref {
    pub(crate) fn loc(&self) -> Option<&Loc> {
        match self {
            Ref::Concept { loc, .. } | Ref::Id { loc, .. } => Some(loc),
            Ref::Link(l) => Some(&l.loc),
            Ref::Unknown => None,
        }
    }
}

/// A proposition by its ends.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LinkRef {
    pub(crate) subject: Ref,
    pub(crate) predicate: String,
    pub(crate) predicate_loc: Loc,
    pub(crate) object: Ref,
    pub(crate) loc: Loc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Upsert,
    Delete,
}

/// One step of an import.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Op {
    Concept {
        ty: String,
        name: String,
        attrs: Map<String, Json>,
        meta: Map<String, Json>,
        action: Action,
        loc: Loc,
        ty_loc: Loc,
    },
    /// A KIP block that matches an existing element by id.
    ById { id: String, loc: Loc },
    Link {
        link: Box<LinkRef>,
        attrs: Map<String, Json>,
        meta: Map<String, Json>,
        action: Action,
        loc: Loc,
    },
    /// A bundle item that failed the structure check: its identity is known
    /// (so later items that refer to it are not reported a second time),
    /// nothing else about it is checked, and nothing is applied.
    Placeholder {
        ty: String,
        name: String,
        attrs: Map<String, Json>,
        meta: Map<String, Json>,
        loc: Loc,
    },
}

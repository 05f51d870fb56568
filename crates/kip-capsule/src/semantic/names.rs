//! The words of the meaning checks that others share: the names of a
//! proposition's ends, the "not defined, did you mean" error (the bundle
//! reader reports it too) and how an element is described in a message.
//! A leaf: it holds no state and checks nothing.

use kip_lang::{ErrorCode, suggest};

use crate::ops::Ref;
use crate::report::ImportError;

/// Words for a proposition's ends: `source` / `target` in bundles,
/// `subject` / `object` in capsules.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Roles {
    pub(crate) subject: &'static str,
    pub(crate) object: &'static str,
}

pub(crate) const BUNDLE_ROLES: Roles = Roles {
    subject: "source",
    object: "target",
};
pub(crate) const KIP_ROLES: Roles = Roles {
    subject: "subject",
    object: "object",
};

/// "Entity type 'Human' is not defined. Did you mean 'Person'?", as an error.
pub(crate) fn unknown_name(
    what: &str,
    name: &str,
    candidates: impl IntoIterator<Item = String>,
    define: &str,
) -> ImportError {
    let candidates: Vec<String> = candidates.into_iter().collect();
    let suggestions = suggest::similar(name, candidates.iter().map(String::as_str));
    let message = match suggestions.first() {
        Some(s) => format!("{what} '{name}' is not defined. Did you mean '{s}'?"),
        None => format!("{what} '{name}' is not defined"),
    };
    ImportError::new(ErrorCode::TypeMismatch, message)
        .hint(format!(
            "Names are case-sensitive. {define} Run `kip schema` (get_knowledge_schema) to see every defined type and predicate."
        ))
        .suggestions(suggestions)
}

pub(crate) const DEFINE_TYPE: &str =
    "Define a new concept type with a `$ConceptType` item (or UPSERT) before its first use.";
pub(crate) const DEFINE_PREDICATE: &str = "Define a new predicate with a `$PropositionType` item (or UPSERT) before its first use, with its subject_types and object_types.";

/// An element as an error message names it.
pub(super) fn describe_ref(r: &Ref) -> String {
    match r {
        Ref::Concept { ty, name, .. } => format!("{ty} '{name}'"),
        Ref::Id { id, .. } => format!("element {id}"),
        Ref::Link(l) => format!(
            "proposition ({}, '{}', {})",
            describe_ref(&l.subject),
            l.predicate,
            describe_ref(&l.object)
        ),
        Ref::Unknown => "element".to_owned(),
    }
}

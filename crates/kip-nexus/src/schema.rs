//! The schema that lives in the graph (seed 001 §2.9): which concept types
//! and predicates are defined, a predicate's `subject_types` /
//! `object_types`, the protected elements, and the errors that explain a
//! name the schema does not know.

use kip_lang::{ErrorCode, KipError, suggest};
use serde_json::Value as Json;

use crate::graph::{BELONGS_TO_DOMAIN, CONCEPT_TYPE, DOMAIN, Graph, PROPOSITION_TYPE, Result};

/// `KIP_2001` for an undefined concept type, with the closest defined ones.
pub fn unknown_type(graph: &Graph<'_>, name: &str) -> Result<KipError> {
    let defined = graph.defined_types()?;
    let suggestions = suggest::similar(name, defined.iter().map(String::as_str));
    let hint = match suggestions.first() {
        Some(s) => format!(
            "Did you mean '{s}'? Type names are case-sensitive. Run DESCRIBE CONCEPT TYPES to list them, or define the type first with UPSERT {{ CONCEPT {{ {{type: \"$ConceptType\", name: \"{name}\"}} SET ATTRIBUTES {{ description: \"…\" }} }} }}."
        ),
        None => format!(
            "Run DESCRIBE CONCEPT TYPES to list the defined types, or define '{name}' first with UPSERT {{ CONCEPT {{ {{type: \"$ConceptType\", name: \"{name}\"}} SET ATTRIBUTES {{ description: \"…\" }} }} }}."
        ),
    };
    Ok(KipError::new(
        ErrorCode::TypeMismatch,
        format!("concept type '{name}' is not defined"),
    )
    .with_hint(hint)
    .with_suggestions(&suggestions))
}

/// `KIP_2001` for an undefined predicate, with the closest defined ones.
pub fn unknown_predicate(graph: &Graph<'_>, name: &str) -> Result<KipError> {
    let defined = graph.defined_predicates()?;
    let suggestions = suggest::similar(name, defined.iter().map(String::as_str));
    let hint = match suggestions.first() {
        Some(s) => format!(
            "Did you mean '{s}'? Predicates are case-sensitive snake_case. Run DESCRIBE PROPOSITION TYPES to list them."
        ),
        None => format!(
            "Run DESCRIBE PROPOSITION TYPES to list the defined predicates, or define '{name}' first with UPSERT {{ CONCEPT {{ {{type: \"$PropositionType\", name: \"{name}\"}} SET ATTRIBUTES {{ description: \"…\", subject_types: [\"*\"], object_types: [\"*\"] }} }} }}."
        ),
    };
    Ok(KipError::new(
        ErrorCode::TypeMismatch,
        format!("predicate '{name}' is not defined"),
    )
    .with_hint(hint)
    .with_suggestions(&suggestions))
}

/// The allowed subject and object types of a predicate (`None` = any).
#[derive(Debug, Clone, Default)]
pub struct Signature {
    pub subject_types: Option<Vec<String>>,
    pub object_types: Option<Vec<String>>,
}

/// The types a predicate definition's `subject_types` / `object_types`
/// value allows: `None` for any (`"*"`, an empty list, or no list at all).
/// The engine's signature checks and the capsule pipeline's both read
/// definitions through this one function.
pub fn type_list(v: Option<&Json>) -> Option<Vec<String>> {
    let list: Vec<String> = v?
        .as_array()?
        .iter()
        .filter_map(|t| t.as_str().map(str::to_owned))
        .collect();
    if list.is_empty() || list.iter().any(|t| t == "*") {
        None
    } else {
        Some(list)
    }
}

/// The signature of a defined predicate.
pub fn signature(graph: &Graph<'_>, predicate: &str) -> Result<Signature> {
    let Some(id) = graph.find_concept_by_names(PROPOSITION_TYPE, predicate)? else {
        return Ok(Signature::default());
    };
    let Some(def) = graph.concept(id)? else {
        return Ok(Signature::default());
    };
    Ok(Signature {
        subject_types: type_list(def.attributes.get("subject_types")),
        object_types: type_list(def.attributes.get("object_types")),
    })
}

/// The elements RC10's `KIP_3004` protects whole, `(type, name)`: they
/// cannot be deleted, and neither their attributes nor their metadata can
/// be modified (by UPSERT, DELETE ATTRIBUTES / METADATA, UPDATE or MERGE).
pub const PROTECTED: [(&str, &str); 5] = [
    (CONCEPT_TYPE, CONCEPT_TYPE),
    (CONCEPT_TYPE, PROPOSITION_TYPE),
    (CONCEPT_TYPE, DOMAIN),
    (DOMAIN, "CoreSchema"),
    (PROPOSITION_TYPE, BELONGS_TO_DOMAIN),
];

/// The system actors: they cannot be deleted or merged, and their identity
/// (`type`, `name`, the `id` attribute) and `core_directives` cannot be
/// modified; their other attributes evolve freely (RC10 §A3.2).
pub const ACTORS: [(&str, &str); 2] = [("Person", "$self"), ("Person", "$system")];

/// The attributes of a system actor that cannot be modified.
pub const ACTOR_FIXED_ATTRIBUTES: [&str; 2] = ["id", "core_directives"];

/// How much of a concept is protected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    /// An ordinary concept.
    None,
    /// A system actor: its identity and `core_directives` are fixed.
    Actor,
    /// A foundation element: nothing about it may change.
    Whole,
}

/// How much of the concept `(type, name)` is protected.
pub fn protection(ty: &str, name: &str) -> Protection {
    if PROTECTED.iter().any(|&(t, n)| t == ty && n == name) {
        Protection::Whole
    } else if ACTORS.iter().any(|&(t, n)| t == ty && n == name) {
        Protection::Actor
    } else {
        Protection::None
    }
}

/// Whether the concept `(type, name)` is protected from deletion.
pub fn is_protected(ty: &str, name: &str) -> bool {
    protection(ty, name) != Protection::None
}

/// The persons whose `id` attribute may never change.
pub fn has_immutable_id(ty: &str, name: &str) -> bool {
    protection(ty, name) == Protection::Actor
}

/// Whether changing a concept from `(old_attrs, old_meta)` to
/// `(new_attrs, new_meta)` touches what its protection fixes; the error
/// names what was refused (`action` says how it was attempted).
pub fn check_modification(
    ty: &str,
    name: &str,
    old: (
        &serde_json::Map<String, Json>,
        &serde_json::Map<String, Json>,
    ),
    new: (
        &serde_json::Map<String, Json>,
        &serde_json::Map<String, Json>,
    ),
) -> std::result::Result<(), KipError> {
    match protection(ty, name) {
        Protection::None => Ok(()),
        Protection::Whole => {
            if old.0 == new.0 && user_keys(old.1) == user_keys(new.1) {
                Ok(())
            } else {
                Err(protected_error(ty, name, "modified"))
            }
        }
        Protection::Actor => {
            for key in ACTOR_FIXED_ATTRIBUTES {
                if old.0.get(key) != new.0.get(key) {
                    let action = match new.0.get(key) {
                        None => format!("stripped of its `{key}`"),
                        Some(_) if key == "id" => "given a new `id`".to_owned(),
                        Some(_) => format!("given new `{key}`"),
                    };
                    return Err(protected_error(ty, name, &action));
                }
            }
            Ok(())
        }
    }
}

/// The metadata keys an author wrote (the engine's `_` keys left out).
fn user_keys(meta: &serde_json::Map<String, Json>) -> Vec<(&String, &Json)> {
    meta.iter().filter(|(k, _)| !k.starts_with('_')).collect()
}

pub fn protected_error(ty: &str, name: &str, action: &str) -> KipError {
    KipError::new(
        ErrorCode::ImmutableTarget,
        format!("{ty} '{name}' is protected and cannot be {action}"),
    )
    .with_hint("The meta-types $ConceptType and $PropositionType, the Domain type, the belongs_to_domain predicate, the CoreSchema domain, and the identity and core_directives of $self and $system are the nexus's foundation; leave them in place. Other attributes of $self and $system may evolve with UPSERT.")
}

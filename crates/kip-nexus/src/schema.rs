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

/// The elements BRIEF §3 protects from deletion: `(type, name)`.
pub const PROTECTED: [(&str, &str); 6] = [
    (CONCEPT_TYPE, CONCEPT_TYPE),
    (CONCEPT_TYPE, PROPOSITION_TYPE),
    ("Person", "$self"),
    ("Person", "$system"),
    (DOMAIN, "CoreSchema"),
    (PROPOSITION_TYPE, BELONGS_TO_DOMAIN),
];

/// Whether the concept `(type, name)` is protected.
pub fn is_protected(ty: &str, name: &str) -> bool {
    PROTECTED.iter().any(|&(t, n)| t == ty && n == name)
}

/// The persons whose `id` attribute may never change.
pub fn has_immutable_id(ty: &str, name: &str) -> bool {
    ty == "Person" && (name == "$self" || name == "$system")
}

pub fn protected_error(ty: &str, name: &str, action: &str) -> KipError {
    KipError::new(
        ErrorCode::ImmutableTarget,
        format!("{ty} '{name}' is protected and cannot be {action}"),
    )
    .with_hint("The meta-types, $self, $system, the CoreSchema domain and belongs_to_domain are part of the nexus's foundation; leave them in place. Other attributes of $self and $system may grow with UPSERT.")
}

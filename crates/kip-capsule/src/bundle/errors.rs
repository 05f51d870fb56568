//! The schema's errors as import errors that name the path, the expected
//! and the found in the bundle's own words.

use jsonschema::ValidationError;
use kip_lang::ErrorCode;
use serde_json::Value as Json;

use crate::ops::{LinkRef, Loc, Ref};
use crate::report::ImportError;
use crate::semantic::{DEFINE_TYPE, unknown_name};
use crate::yaml::Node;

use super::path::{Seg, render};

/// Where a schema error points inside an item.
pub(super) struct At<'a> {
    pub(super) item: &'a Node,
    /// The item's own path (`[4]`).
    pub(super) prefix: &'a str,
    /// The item's predicate, when it is a proposition.
    pub(super) predicate: Option<&'a str>,
    /// The steps from the item to `node`.
    pub(super) segs: Vec<Seg>,
    pub(super) node: &'a Node,
}

impl At<'_> {
    pub(super) fn path(&self) -> String {
        render(self.prefix, &self.segs)
    }

    /// The path of `key` under the node.
    pub(super) fn child(&self, key: &str) -> String {
        let mut child = self.segs.clone();
        child.push(Seg::Key(key.to_owned()));
        render(self.prefix, &child)
    }
}

/// `type`: a value of the wrong type.
pub(super) fn wrong_type(at: &At<'_>, kind: &jsonschema::error::TypeKind) -> ImportError {
    ImportError::new(
        ErrorCode::InvalidValueType,
        format!(
            "expected {}, found {}",
            type_words(kind),
            at.node.kind_name()
        ),
    )
    .hint("Correct the value's type (quote a text, leave numbers unquoted).")
}

/// `enum`: an end of the wrong type, an unknown type, or a value not
/// among the allowed ones.
pub(super) fn not_allowed(at: &At<'_>, options: &Json) -> ImportError {
    let allowed: Vec<String> = options
        .as_array()
        .map(|a| {
            a.iter()
                .map(|o| o.as_str().map_or_else(|| o.to_string(), str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let node = at.node;
    let value = node
        .as_str()
        .map_or_else(|| node.to_json().to_string(), str::to_owned);
    let segs = &at.segs;
    let end = segs.len() >= 2 && segs.last() == Some(&Seg::Key("type".into()));
    let role = segs.iter().rev().nth(1).and_then(|s| match s {
        Seg::Key(k) if k == "source" || k == "target" => Some(k.as_str()),
        _ => None,
    });
    if let (true, Some(role), Some(p)) = (end, role, at.predicate)
        && segs.len() == 2
    {
        ImportError::new(
            ErrorCode::TypeMismatch,
            format!(
                "Cannot create '{p}': its {role} must be a {}, not a {value}",
                allowed.join(" or ")
            ),
        )
        .hint(format!(
            "Check the direction and the types of '{p}' (`kip schema` lists them)."
        ))
    } else if end {
        // Only the message and the hint: the suggestions stay out, as
        // they always have here.
        let e = unknown_name("Entity type", &value, allowed, DEFINE_TYPE);
        ImportError::new(e.code, e.message).hint(e.hint)
    } else {
        let suggestions = kip_lang::suggest::similar(&value, allowed.iter().map(String::as_str));
        let mean = suggestions
            .first()
            .map(|s| format!(" Did you mean '{s}'?"))
            .unwrap_or_default();
        ImportError::new(
            ErrorCode::ConstraintViolation,
            format!("`{value}` is not one of: {}.{mean}", allowed.join(", ")),
        )
        .hint("Use one of the listed values.")
    }
}

/// `pattern`: a name that is not an identifier, or a malformed id.
pub(super) fn no_match(at: &At<'_>, pattern: &str) -> ImportError {
    let value = at.node.as_str().unwrap_or_default();
    if at.segs == [Seg::Key("name".into())] {
        ImportError::new(
            ErrorCode::InvalidIdentifier,
            format!("'{value}' is not a valid name for a type or predicate"),
        )
        .hint(
            "Use letters, digits and '_' only, not starting with a digit (e.g. DrugClass, treats).",
        )
    } else {
        ImportError::new(
            ErrorCode::ConstraintViolation,
            format!("'{value}' does not match {pattern}"),
        )
        .hint("An id is C:<number> for a concept or P:<number> for a proposition.")
    }
}

/// `minLength`: an empty name.
pub(super) fn empty_name() -> ImportError {
    ImportError::new(ErrorCode::ConstraintViolation, "must not be empty")
        .hint("Give the element a name.")
}

/// A reference that is not a mapping at all.
pub(super) fn not_a_reference(node: &Node) -> ImportError {
    ImportError::new(
        ErrorCode::InvalidValueType,
        format!(
            "expected a reference like {{type: …, name: …}} or {{id: …}}, found {}",
            node.kind_name()
        ),
    )
    .hint("Refer to a concept as {type: Drug, name: Aspirin}, or to any element as {id: C:12}.")
}

/// A proposition given as the end of a predicate that links only concepts.
pub(super) fn proposition_end(at: &At<'_>) -> ImportError {
    let role = match at.segs.last() {
        Some(Seg::Key(k)) => k.clone(),
        _ => "end".to_owned(),
    };
    let p = at.predicate.unwrap_or("this predicate");
    ImportError::new(
        ErrorCode::TypeMismatch,
        format!("Cannot create '{p}': its {role} must be a concept, not a proposition"),
    )
    .hint(format!(
        "Only predicates whose subject_types / object_types are \"*\" link to propositions; refer to a concept as {{type, name}} (`kip schema` shows what '{p}' links)."
    ))
}

/// Any other schema error, in the validator's words.
pub(super) fn other(e: &ValidationError<'_>) -> ImportError {
    ImportError::new(ErrorCode::ConstraintViolation, e.to_string())
        .hint(ErrorCode::ConstraintViolation.default_hint())
}

/// A `source` / `target` the schema accepted.
pub(super) fn reference(node: &Node, path: &str) -> Ref {
    let loc = Loc {
        path: Some(path.to_owned()),
        start: node.start,
        end: node.end,
    };
    if let Some(id) = node.get("id").and_then(Node::as_str) {
        return Ref::Id {
            id: id.to_owned(),
            loc,
        };
    }
    let ty = node
        .get("type")
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_owned();
    let type_node = node.get("type").unwrap_or(node);
    let ty_loc = Loc {
        path: Some(format!("{path}.type")),
        start: type_node.start,
        end: type_node.end,
    };
    if node.get("source").is_some() || node.get("target").is_some() {
        return Ref::Link(Box::new(LinkRef {
            subject: node
                .get("source")
                .map_or(Ref::Unknown, |n| reference(n, &format!("{path}.source"))),
            predicate: ty,
            predicate_loc: ty_loc,
            object: node
                .get("target")
                .map_or(Ref::Unknown, |n| reference(n, &format!("{path}.target"))),
            loc,
        }));
    }
    let name = node
        .get("name")
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_owned();
    Ref::Concept {
        ty,
        name,
        ty_loc,
        loc,
    }
}

pub(super) fn type_words(kind: &jsonschema::error::TypeKind) -> String {
    let words = |t: jsonschema::JsonType| -> &'static str {
        match t {
            jsonschema::JsonType::Array => "a list",
            jsonschema::JsonType::Boolean => "a boolean",
            jsonschema::JsonType::Integer => "an integer",
            jsonschema::JsonType::Null => "null",
            jsonschema::JsonType::Number => "a number",
            jsonschema::JsonType::Object => "a mapping",
            jsonschema::JsonType::String => "a string",
        }
    };
    match kind {
        jsonschema::error::TypeKind::Single(t) => words(*t).to_owned(),
        jsonschema::error::TypeKind::Multiple(set) => {
            let all: Vec<&str> = set.iter().map(words).collect();
            all.join(" or ")
        }
    }
}

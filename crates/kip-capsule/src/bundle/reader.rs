//! The structure check of each item against its branch of the schema,
//! and the op a valid item becomes.

use std::collections::{HashMap, HashSet};

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use kip_lang::ErrorCode;
use serde_json::{Map, Value as Json};

use crate::emit::{CONCEPT_KEYS, PROPOSITION_KEYS};
use crate::model::Model;
use crate::ops::{Action, LinkRef, Loc, Op, Ref};
use crate::report::ImportError;
use crate::schema;
use crate::semantic::{DEFINE_PREDICATE, DEFINE_TYPE, unknown_name};
use crate::text::LineIndex;
use crate::yaml::Node;

use super::errors::{
    At, empty_name, no_match, not_a_reference, not_allowed, other, proposition_end, reference,
    wrong_type,
};
use super::path::{Seg, node_at, segments};
use super::shape::{reserved, split};

pub(super) struct Reader<'a> {
    pub(super) text: &'a str,
    pub(super) lines: &'a LineIndex,
    /// The nexus's schema overlaid with the bundle's own definitions.
    pub(super) model: Model,
    pub(super) defs: Json,
    /// One compiled branch per name used (`None`: the branch failed to
    /// compile, which an invalid `instance_schema` can cause).
    pub(super) validators: HashMap<String, Option<Validator>>,
    pub(super) defaults: Map<String, Json>,
    /// Whether the nexus holds concept `(type, name)` with attribute `key`.
    pub(super) stored: &'a dyn Fn(&str, &str, &str) -> bool,
    /// The attribute keys earlier items gave each concept.
    pub(super) given: HashMap<(String, String), HashSet<String>>,
}

impl<'a> Reader<'a> {
    pub(super) fn new(
        text: &'a str,
        lines: &'a LineIndex,
        model: Model,
        defaults: Map<String, Json>,
        stored: &'a dyn Fn(&str, &str, &str) -> bool,
    ) -> Reader<'a> {
        Reader {
            text,
            lines,
            defs: schema::definitions(&model),
            model,
            validators: HashMap::new(),
            defaults,
            stored,
            given: HashMap::new(),
        }
    }

    /// Notes the attributes a concept item gives.
    pub(super) fn remember(&mut self, item: &Node) {
        if let (Some(ty), Some(name)) = (
            item.get("type").and_then(Node::as_str),
            item.get("name").and_then(Node::as_str),
        ) && self.model.types.contains_key(ty)
        {
            let (attrs, _) = split(item, &CONCEPT_KEYS);
            self.given
                .entry((ty.to_owned(), name.to_owned()))
                .or_default()
                .extend(attrs.keys().cloned());
        }
    }

    /// Whether a required attribute an item leaves out is already there:
    /// an upsert merges, so updating a concept need not repeat what it has.
    pub(super) fn already_has(&self, item: &Node, key: &str) -> bool {
        let (Some(ty), Some(name)) = (
            item.get("type").and_then(Node::as_str),
            item.get("name").and_then(Node::as_str),
        ) else {
            return false;
        };
        if !self.model.types.contains_key(ty) {
            return false;
        }
        self.given
            .get(&(ty.to_owned(), name.to_owned()))
            .is_some_and(|keys| keys.contains(key))
            || (self.stored)(ty, name, key)
    }

    pub(super) fn error(&self, e: ImportError, path: String, offset: usize) -> ImportError {
        let (line, column) = self.lines.position(self.text, offset);
        ImportError {
            path: Some(path),
            line: Some(line),
            column: Some(column),
            ..e
        }
    }

    pub(super) fn validator(&mut self, name: &str) -> Option<&Validator> {
        if !self.validators.contains_key(name) {
            let compiled = schema::branch(&self.model, name).and_then(|mut branch| {
                branch["definitions"] = self.defs.clone();
                jsonschema::draft7::new(&branch).ok()
            });
            self.validators.insert(name.to_owned(), compiled);
        }
        self.validators.get(name).and_then(Option::as_ref)
    }

    /// Checks one item's structure; errors go to `out`.
    pub(super) fn item(&mut self, i: usize, item: &Node, out: &mut Vec<ImportError>) {
        let prefix = format!("[{i}]");
        if item.entries().is_none() {
            out.push(
                self.error(
                    ImportError::new(
                        ErrorCode::InvalidValueType,
                        format!(
                            "an item is a mapping with a `type`, found {}",
                            item.kind_name()
                        ),
                    )
                    .hint("Write the item as `- type: …` followed by its keys, indented."),
                    prefix,
                    item.start,
                ),
            );
            return;
        }
        let Some(type_node) = item.get("type") else {
            out.push(self.error(
                ImportError::new(ErrorCode::ConstraintViolation, "`type` is required")
                    .hint("Every item names its concept type (for a concept) or its predicate (for a proposition) in `type`."),
                format!("{prefix}.type"),
                item.start,
            ));
            return;
        };
        let Some(ty) = type_node.as_str() else {
            out.push(self.error(
                ImportError::new(
                    ErrorCode::InvalidValueType,
                    format!("`type` must be a string, found {}", type_node.kind_name()),
                ),
                format!("{prefix}.type"),
                type_node.start,
            ));
            return;
        };
        if !self.model.knows(ty) {
            let link = item.get("source").is_some() || item.get("target").is_some();
            let e = if link {
                unknown_name(
                    "Predicate",
                    ty,
                    self.model.predicates.keys().cloned(),
                    DEFINE_PREDICATE,
                )
            } else {
                unknown_name(
                    "Entity type",
                    ty,
                    self.model.types.keys().cloned(),
                    DEFINE_TYPE,
                )
            };
            out.push(self.error(e, format!("{prefix}.type"), type_node.start));
            return;
        }
        let json = item.to_json();
        let Some(validator) = self.validator(ty) else {
            out.push(
                self.error(
                    ImportError::new(
                        ErrorCode::InternalError,
                        format!("the schema of '{ty}' cannot be compiled"),
                    )
                    .hint(format!(
                        "Check the instance_schema of '{ty}' (DESCRIBE CONCEPT TYPE \"{ty}\")."
                    )),
                    prefix,
                    item.start,
                ),
            );
            return;
        };
        let found: Vec<ValidationError<'static>> = validator
            .iter_errors(&json)
            .map(ValidationError::to_owned)
            .collect();
        let predicate = self.model.predicates.contains_key(ty).then_some(ty);
        for e in &found {
            self.map(e, item, &prefix, predicate, out);
        }
    }

    /// One schema error, as import errors: each kind of error has its own
    /// function below (an `anyOf` becomes the errors of the alternative the
    /// item was evidently written for).
    pub(super) fn map(
        &self,
        e: &ValidationError<'_>,
        item: &Node,
        prefix: &str,
        predicate: Option<&str>,
        out: &mut Vec<ImportError>,
    ) {
        let segs = segments(e.instance_path().as_str());
        let at = At {
            item,
            prefix,
            predicate,
            node: node_at(item, &segs),
            segs,
        };
        match e.kind() {
            ValidationErrorKind::Required { property } => {
                self.required(&at, property.as_str().unwrap_or_default(), out);
            }
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                self.unexpected_keys(&at, unexpected, out);
            }
            ValidationErrorKind::PropertyNames { error } => {
                out.push(self.forbidden_key(&at, e, error));
            }
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                self.alternatives(&at, context, out);
            }
            ValidationErrorKind::Type { kind } => {
                out.push(self.at_node(&at, wrong_type(&at, kind)))
            }
            ValidationErrorKind::Enum { options } => {
                out.push(self.at_node(&at, not_allowed(&at, options)));
            }
            ValidationErrorKind::Pattern { pattern } => {
                out.push(self.at_node(&at, no_match(&at, pattern)));
            }
            ValidationErrorKind::MinLength { .. } => out.push(self.at_node(&at, empty_name())),
            _ => out.push(self.at_node(&at, other(e))),
        }
    }

    /// An error about the node a schema error points at.
    pub(super) fn at_node(&self, at: &At<'_>, e: ImportError) -> ImportError {
        self.error(e, at.path(), at.node.start)
    }

    /// `required`: a missing key, unless it is an attribute the element
    /// already has (an upsert merges).
    pub(super) fn required(&self, at: &At<'_>, p: &str, out: &mut Vec<ImportError>) {
        let segs = &at.segs;
        let attribute = segs.is_empty()
            && !["type", "name", "source", "target", "attributes"].contains(&p)
            || *segs == [Seg::Key("attributes".into())];
        if attribute && self.already_has(at.item, p) {
            return;
        }
        let why = if segs.is_empty() && !["type", "name", "source", "target"].contains(&p) {
            " (its type's instance_schema marks it is_required)"
        } else {
            ""
        };
        out.push(
            self.error(
                ImportError::new(
                    ErrorCode::ConstraintViolation,
                    format!("`{p}` is required{why}"),
                )
                .hint(format!("Add `{p}: …` to this mapping.")),
                at.child(p),
                at.node.start,
            ),
        );
    }

    /// `additionalProperties`: one error per key a reference may not have.
    pub(super) fn unexpected_keys(
        &self,
        at: &At<'_>,
        unexpected: &[String],
        out: &mut Vec<ImportError>,
    ) {
        for k in unexpected {
            let entry = at.node.entry(k);
            out.push(self.error(
                ImportError::new(ErrorCode::InvalidSyntax, format!("unexpected key `{k}`"))
                    .hint("A reference is {type, name} for a concept, {id} for an element, or {type, source, target} for a proposition."),
                at.child(k),
                entry.map_or(at.node.start, |e| e.key_start),
            ));
        }
    }

    /// `propertyNames`: a key an item that deletes may not have, or a
    /// reserved `_` key.
    pub(super) fn forbidden_key(
        &self,
        at: &At<'_>,
        e: &ValidationError<'_>,
        error: &ValidationError<'_>,
    ) -> ImportError {
        let key = error
            .instance()
            .as_str()
            .map(str::to_owned)
            .unwrap_or_default();
        let entry = at.node.entry(&key);
        let deleting = e.schema_path().as_str().contains("then");
        let err = if deleting {
            ImportError::new(
                ErrorCode::InvalidSyntax,
                format!("an item that deletes takes only its identity and `action`; `{key}` is not allowed"),
            )
            .hint("Remove the key, or remove `action: delete` to write the item.")
        } else {
            reserved(&key)
        };
        self.error(
            err,
            at.child(&key),
            entry.map_or(at.node.start, |e| e.key_start),
        )
    }

    /// `anyOf` / `oneOf` (the forms of a reference): what is wrong with the
    /// reference as a whole, or else the errors of the alternative it was
    /// written as.
    pub(super) fn alternatives(
        &self,
        at: &At<'_>,
        context: &[Vec<ValidationError<'static>>],
        out: &mut Vec<ImportError>,
    ) {
        let node = at.node;
        let link = node.get("source").is_some() || node.get("target").is_some();
        if node.entries().is_none() {
            out.push(self.at_node(at, not_a_reference(node)));
        } else if link && context.len() <= 2 {
            out.push(self.at_node(at, proposition_end(at)));
        } else {
            let branch = if node.get("id").is_some() {
                1
            } else if link && context.len() > 2 {
                2
            } else {
                0
            };
            if let Some(errs) = context.get(branch) {
                for inner in errs {
                    self.map(inner, at.item, at.prefix, at.predicate, out);
                }
            }
        }
    }

    /// Builds the op of a structurally valid item.
    pub(super) fn op(&self, i: usize, item: &Node) -> Op {
        let prefix = format!("[{i}]");
        let ty = item
            .get("type")
            .and_then(Node::as_str)
            .unwrap_or_default()
            .to_owned();
        let action = if item.get("action").and_then(Node::as_str) == Some("delete") {
            Action::Delete
        } else {
            Action::Upsert
        };
        let loc = |path: String, node: &Node| Loc {
            path: Some(path),
            start: node.start,
            end: node.end,
        };
        let type_node = item.get("type").unwrap_or(item);
        if self.model.predicates.contains_key(&ty) {
            let (attrs, meta) = split(item, &PROPOSITION_KEYS);
            let mut full = self.defaults.clone();
            full.extend(meta);
            let source = item
                .get("source")
                .map_or(Ref::Unknown, |n| reference(n, &format!("{prefix}.source")));
            let target = item
                .get("target")
                .map_or(Ref::Unknown, |n| reference(n, &format!("{prefix}.target")));
            Op::Link {
                link: Box::new(LinkRef {
                    subject: source,
                    predicate: ty,
                    predicate_loc: loc(format!("{prefix}.type"), type_node),
                    object: target,
                    loc: loc(prefix.clone(), item),
                }),
                attrs,
                meta: full,
                action,
                loc: loc(prefix, item),
            }
        } else {
            let (attrs, meta) = split(item, &CONCEPT_KEYS);
            let mut full = self.defaults.clone();
            full.extend(meta);
            let name = item
                .get("name")
                .and_then(Node::as_str)
                .unwrap_or_default()
                .to_owned();
            Op::Concept {
                ty,
                name,
                attrs,
                meta: full,
                action,
                loc: loc(prefix.clone(), item),
                ty_loc: loc(format!("{prefix}.type"), type_node),
            }
        }
    }
}

//! The shape of a bundle (a list of items, or `{metadata, items}`), its
//! default metadata, and the stand-in op of an item that failed.

use kip_lang::ErrorCode;
use serde_json::{Map, Value as Json};

use crate::emit::CONCEPT_KEYS;
use crate::ops::{Loc, Op};
use crate::report::ImportError;
use crate::yaml::{Entry, Kind, Node};

/// Places an error: the error, its path, and the byte offset it points at.
pub(super) type Place<'p> = dyn Fn(ImportError, Option<String>, usize) -> ImportError + 'p;

/// The shape of a bundle: its list of items and the default metadata (a
/// list, or a mapping `{metadata, items}`); `None` when there is no list
/// to read at all.
pub(super) fn shape<'n>(
    root: &'n Node,
    at: &Place<'_>,
    errors: &mut Vec<ImportError>,
) -> Option<(&'n [Node], Map<String, Json>)> {
    match &root.kind {
        Kind::Seq(items) => Some((items, Map::new())),
        Kind::Map(entries) => mapping_shape(root, entries, at, errors),
        _ => {
            errors.push(at(
                ImportError::new(
                    ErrorCode::InvalidSyntax,
                    format!("a bundle is a list of items, found {}", root.kind_name()),
                )
                .hint("Write one item per `- type: …` entry; see `kip schema` for an example."),
                None,
                root.start,
            ));
            None
        }
    }
}

/// A bundle written as a mapping: `{metadata, items}`, or by mistake a
/// single item (told by its `type`).
pub(super) fn mapping_shape<'n>(
    root: &'n Node,
    entries: &'n [Entry],
    at: &Place<'_>,
    errors: &mut Vec<ImportError>,
) -> Option<(&'n [Node], Map<String, Json>)> {
    let mut defaults = Map::new();
    let mut items: &[Node] = &[];
    let mut unexpected = false;
    let looks_like_item = root.get("type").is_some();
    for e in entries {
        match e.key.as_str() {
            "items" => {
                if let Some(list) = items_of(e, at, errors) {
                    items = list;
                }
            }
            "metadata" => metadata_of(e, &mut defaults, at, errors),
            other if !looks_like_item => {
                unexpected = true;
                errors.push(unexpected_top_key(other, e, at));
            }
            _ => {}
        }
    }
    if !looks_like_item && !unexpected && root.get("items").is_none() {
        errors.push(at(
            ImportError::new(ErrorCode::ConstraintViolation, "`items` is required")
                .hint("A bundle mapping holds its items in a list under `items:` (and optional `metadata:`)."),
            Some("items".into()),
            root.start,
        ));
    }
    if looks_like_item {
        errors.push(at(
            ImportError::new(
                ErrorCode::InvalidSyntax,
                "a bundle is a list of items, but this file is a single mapping",
            )
            .hint("Start the item with `- ` (a list of one item): `- type: …`."),
            None,
            root.start,
        ));
        return None;
    }
    Some((items, defaults))
}

/// The list under `items:` (`None` when it is empty or not a list).
pub(super) fn items_of<'n>(
    e: &'n Entry,
    at: &Place<'_>,
    errors: &mut Vec<ImportError>,
) -> Option<&'n [Node]> {
    match &e.value.kind {
        Kind::Seq(list) => Some(list),
        Kind::Null => None,
        _ => {
            errors.push(at(
                ImportError::new(
                    ErrorCode::InvalidValueType,
                    format!("`items` must be a list, found {}", e.value.kind_name()),
                )
                .hint("Write each item on its own line starting with `- `."),
                Some("items".into()),
                e.value.start,
            ));
            None
        }
    }
}

/// The default metadata under `metadata:`, into `defaults`.
pub(super) fn metadata_of(
    e: &Entry,
    defaults: &mut Map<String, Json>,
    at: &Place<'_>,
    errors: &mut Vec<ImportError>,
) {
    match &e.value.kind {
        Kind::Map(meta) => {
            for m in meta {
                if m.key.starts_with('_') {
                    errors.push(at(
                        reserved(&m.key),
                        Some(format!("metadata.{}", m.key)),
                        m.key_start,
                    ));
                } else {
                    defaults.insert(m.key.clone(), m.value.to_json());
                }
            }
        }
        Kind::Null => {}
        _ => errors.push(at(
            ImportError::new(
                ErrorCode::InvalidValueType,
                format!(
                    "`metadata` must be a mapping, found {}",
                    e.value.kind_name()
                ),
            )
            .hint("Write metadata as `key: value` lines, e.g. `source: …` and `confidence: 0.9`."),
            Some("metadata".into()),
            e.value.start,
        )),
    }
}

/// A key at the top of a bundle mapping other than `metadata` and `items`.
pub(super) fn unexpected_top_key(key: &str, e: &Entry, at: &Place<'_>) -> ImportError {
    let suggestions = kip_lang::suggest::similar(key, ["metadata", "items"]);
    let mean = suggestions
        .first()
        .map(|s| format!(". Did you mean `{s}`?"))
        .unwrap_or_default();
    at(
        ImportError::new(
            ErrorCode::InvalidSyntax,
            format!("unexpected key `{key}` at the top of the bundle{mean}"),
        )
        .hint("A bundle is a list of items, or a mapping with exactly `metadata` and `items`.")
        .suggestions(suggestions),
        Some(key.to_owned()),
        e.key_start,
    )
}

/// A reserved `_` key written by a bundle: a data-constraint violation
/// (`KIP_2003`), as the engine answers it for `.kip` capsules (RC10).
pub(super) fn reserved(key: &str) -> ImportError {
    ImportError::new(
        ErrorCode::ConstraintViolation,
        format!("`{key}` is reserved for the engine: keys starting with '_' cannot be written"),
    )
    .hint("The engine maintains _created_at and _updated_at itself; rename the key without the leading underscore.")
}

/// What a failed concept item still tells: its identity, and what it
/// says about it (for the contradiction check).
pub(super) fn placeholder(i: usize, item: &Node, defaults: &Map<String, Json>) -> Option<Op> {
    let ty = item.get("type")?.as_str()?;
    let name = item.get("name")?.as_str()?;
    let (attrs, meta) = split(item, &CONCEPT_KEYS);
    let mut full = defaults.clone();
    full.extend(meta);
    Some(Op::Placeholder {
        ty: ty.to_owned(),
        name: name.to_owned(),
        attrs,
        meta: full,
        loc: Loc {
            path: Some(format!("[{i}]")),
            start: item.start,
            end: item.end,
        },
    })
}

/// An item's attributes (its keys other than `own`, and the entries of its
/// `attributes` mapping) and its metadata.
pub(super) fn split(item: &Node, own: &[&str]) -> (Map<String, Json>, Map<String, Json>) {
    let mut attrs = Map::new();
    let mut meta = Map::new();
    for e in item.entries().unwrap_or_default() {
        if !own.contains(&e.key.as_str()) {
            attrs.insert(e.key.clone(), e.value.to_json());
        } else if e.key == "attributes" {
            for a in e.value.entries().unwrap_or_default() {
                attrs.insert(a.key.clone(), a.value.to_json());
            }
        } else if e.key == "metadata" {
            for m in e.value.entries().unwrap_or_default() {
                meta.insert(m.key.clone(), m.value.to_json());
            }
        }
    }
    (attrs, meta)
}

//! Reading a YAML knowledge bundle (BRIEF §4): the positioned YAML tree,
//! its shape (a list of items, or `{metadata, items}`), and the structure
//! check of every item against the JSON Schema that
//! [`crate::schema`] generates, each error mapped back to its path
//! (`[4].source.name`) and its line and column.
//!
//! Items are checked one by one against their own branch of the schema's
//! `oneOf`, chosen by `type`: the branches are told apart by a `const`
//! `type`, so this is exactly what the `oneOf` means, it names the one
//! branch's errors instead of "matches none of 40 schemas", and it costs
//! one branch per item instead of all of them. The branches are compiled
//! from the schema of the nexus overlaid with the bundle's own definitions,
//! so a bundle may define a type and use it.

mod errors;
mod path;
mod reader;
mod shape;
mod stream;

pub(crate) use stream::{Streamed, stream};

use kip_lang::ErrorCode;
use kip_nexus::{CONCEPT_TYPE, PROPOSITION_TYPE};

use crate::emit::CONCEPT_KEYS;
use crate::model::Model;
use crate::ops::Op;
use crate::report::{ImportError, Phase, Progress};
use crate::text::LineIndex;
use crate::yaml::{self, Node};

use reader::Reader;
use shape::{placeholder, shape, split};

/// A bundle read into ops.
#[derive(Debug, Default)]
pub(crate) struct Read {
    pub(crate) ops: Vec<Op>,
    pub(crate) items: usize,
}

/// Reads the bundle and checks its structure; structural errors go to
/// `errors`. Items that failed become placeholders, so that the meaning
/// checks that follow neither run on them nor report their consequences.
pub(crate) fn read(
    text: &str,
    lines: &LineIndex,
    live: &Model,
    stored: &dyn Fn(&str, &str, &str) -> bool,
    errors: &mut Vec<ImportError>,
    progress: &mut dyn FnMut(Progress),
) -> Read {
    let at = |e: ImportError, path: Option<String>, offset: usize| {
        let (line, column) = lines.position(text, offset);
        ImportError {
            path,
            line: Some(line),
            column: Some(column),
            ..e
        }
    };
    let root = match yaml::parse(text) {
        Ok(Some(root)) => root,
        Ok(None) => return Read::default(),
        Err(e) => {
            errors.push(at(
                ImportError::new(ErrorCode::InvalidSyntax, e.message).hint(e.hint),
                None,
                e.offset,
            ));
            return Read::default();
        }
    };
    let Some((items, defaults)) = shape(&root, &at, errors) else {
        return Read::default();
    };
    // The bundle's own definitions, laid over the nexus's schema.
    let mut model = live.clone();
    for item in items {
        define(&mut model, item);
    }
    let mut reader = Reader::new(text, lines, model, defaults, stored);
    let total = items.len() as u64;
    let mut ops = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if i % 1000 == 0 {
            progress(Progress::items(Phase::Validating, i as u64, total));
        }
        let before = errors.len();
        reader.item(i, item, errors);
        reader.remember(item);
        if errors.len() == before {
            ops.push(reader.op(i, item));
        } else if let Some(p) = placeholder(i, item, &reader.defaults) {
            ops.push(p);
        }
    }
    drop(reader);
    Read {
        ops,
        items: items.len(),
    }
}

/// Whether the nexus holds concept `(ty, name)` with attribute `key` (a
/// required attribute an item leaves out may already be there).
pub(crate) fn stored_attribute(
    g: &kip_nexus::Graph<'_>,
    ty: &str,
    name: &str,
    key: &str,
) -> kip_nexus::Result<bool> {
    Ok(match g.find_concept_by_names(ty, name)? {
        Some(c) => g
            .concept(c)?
            .is_some_and(|r| r.attributes.contains_key(key)),
        None => false,
    })
}

/// Whether `item` is a definition: a `$ConceptType` or `$PropositionType`
/// item (deleted ones included).
fn is_definition(item: &Node) -> bool {
    matches!(
        item.get("type").and_then(Node::as_str),
        Some(CONCEPT_TYPE | PROPOSITION_TYPE)
    )
}

/// Adds the definition `item` makes, if it makes one (an upserted
/// `$ConceptType` or `$PropositionType` with a name), to `model`.
fn define(model: &mut Model, item: &Node) {
    if let (Some(ty), Some(name)) = (
        item.get("type").and_then(Node::as_str),
        item.get("name").and_then(Node::as_str),
    ) && (ty == CONCEPT_TYPE || ty == PROPOSITION_TYPE)
        && item.get("action").and_then(Node::as_str) != Some("delete")
    {
        let (attrs, _) = split(item, &CONCEPT_KEYS);
        model.define(ty, name, &attrs);
    }
}

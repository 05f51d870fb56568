//! YAML with positions: a bundle file becomes a tree of [`Node`]s that
//! remember the byte range they were written at, so every error can name its
//! line and column; and the writer's side, scalars and keys quoted so that
//! they read back as the same JSON value.
//!
//! The tree is built from `saphyr-parser`'s event stream rather than from a
//! generic YAML value, because bundle errors need what generic loaders drop:
//! the position of every key and value, duplicate keys (refused here, not
//! silently overwritten), and a bound on alias expansion. Scalars resolve by
//! the YAML 1.2 core schema (`saphyr`'s resolver), so `yes` is a string and
//! `1.0` a number, as JSON tools expect.
//!
//! Limits (each an error, never a crash): one document per file, nesting at
//! most [`MAX_DEPTH`] deep, alias expansion bounded by [`MAX_NODES`] or eight
//! nodes per byte of input, whichever is larger, no non-finite numbers (JSON
//! has none).

#[cfg(test)]
mod tests;
mod tree;
mod write;

use serde_json::{Map, Number, Value as Json};

use tree::{Tree, events};
pub(crate) use write::{flow, key, string};

/// How deep collections may nest: the one nesting limit of KIP Explorer,
/// as for KIP text (the tree is built without recursion, and every pass
/// over it — conversion to JSON, schema validation, the import's checks —
/// relies on this bound).
pub(crate) const MAX_DEPTH: usize = kip_lang::MAX_DEPTH;
/// How deep saphyr lets flow collections (`[…]`, `{…}`) nest: it counts
/// them in a `u8` (see [`flow_too_deep`]).
const MAX_FLOW_LEVELS: usize = u8::MAX as usize;
/// The floor of the node budget (aliases expand into copies).
pub(crate) const MAX_NODES: usize = 1_000_000;

/// A YAML node and the bytes it was written at.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind {
    Null,
    Bool(bool),
    Number(Number),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

/// A mapping entry: the key as text, where it was written, and its value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    pub(crate) key: String,
    pub(crate) key_start: usize,
    pub(crate) key_end: usize,
    pub(crate) value: Node,
}

/// A YAML syntax problem at a byte offset.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct YamlError {
    pub(crate) message: String,
    pub(crate) hint: String,
    pub(crate) offset: usize,
}

impl Node {
    /// The entries of a mapping.
    pub(crate) fn entries(&self) -> Option<&[Entry]> {
        match &self.kind {
            Kind::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// The entry `key` of a mapping.
    pub(crate) fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries()?.iter().find(|e| e.key == key)
    }

    /// The value of `key` in a mapping.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The node as JSON (key order kept).
    pub(crate) fn to_json(&self) -> Json {
        match &self.kind {
            Kind::Null => Json::Null,
            Kind::Bool(b) => Json::Bool(*b),
            Kind::Number(n) => Json::Number(n.clone()),
            Kind::Str(s) => Json::String(s.clone()),
            Kind::Seq(items) => Json::Array(items.iter().map(Node::to_json).collect()),
            Kind::Map(entries) => Json::Object(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), e.value.to_json()))
                    .collect::<Map<String, Json>>(),
            ),
        }
    }

    /// How to name the node's kind in a message.
    pub(crate) fn kind_name(&self) -> &'static str {
        match &self.kind {
            Kind::Null => "null",
            Kind::Bool(_) => "a boolean",
            Kind::Number(_) => "a number",
            Kind::Str(_) => "a string",
            Kind::Seq(_) => "a list",
            Kind::Map(_) => "a mapping",
        }
    }

    fn size(&self) -> usize {
        match &self.kind {
            Kind::Seq(items) => 1 + items.iter().map(Node::size).sum::<usize>(),
            Kind::Map(entries) => 1 + entries.iter().map(|e| 1 + e.value.size()).sum::<usize>(),
            _ => 1,
        }
    }
}

fn error(offset: usize, message: impl Into<String>, hint: impl Into<String>) -> YamlError {
    YamlError {
        message: message.into(),
        hint: hint.into(),
        offset,
    }
}

/// Parses a YAML text of at most one document. `Ok(None)` for a text with
/// no document (empty, or only comments).
pub(crate) fn parse(text: &str) -> Result<Option<Node>, YamlError> {
    let mut tree = Tree::new(MAX_NODES.max(text.len().saturating_mul(8)));
    events(text, &mut tree)?;
    Ok(tree.root)
}

/// Where [`parse_items`] hands each item, with the bundle mapping's
/// entries before `items`; `false` stops it.
pub(crate) type ItemSink<'a> = dyn FnMut(Node, &[Entry]) -> bool + 'a;

/// How [`parse_items`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Items {
    /// Every item of the list went to the sink.
    Done,
    /// The sink asked to stop.
    Stopped,
    /// The document is not a list of items (or there is none), nor a
    /// mapping of `metadata` and then `items` only: the text is left for
    /// [`parse`] (for a mapping, some items may have gone to the sink
    /// before a key after `items` showed it).
    NotAList,
}

/// Parses a YAML text whose document is a list of items, or a mapping of
/// `metadata` and then `items` (a bundle's two shapes), handing each item
/// to `sink` as soon as it is complete instead of building the list, with
/// the mapping's entries before `items` (none for a list): what lets an
/// import apply a bundle's first items while it reads the rest. The
/// limits and errors are [`parse`]'s (a syntax error after some items is
/// still an error: the caller must drop what it did with them).
pub(crate) fn parse_items(text: &str, sink: &mut ItemSink<'_>) -> Result<Items, YamlError> {
    let mut tree = Tree::new(MAX_NODES.max(text.len().saturating_mul(8)));
    tree.sink = Some(sink);
    events(text, &mut tree)?;
    Ok(tree.ended.unwrap_or(Items::NotAList))
}

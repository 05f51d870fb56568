//! The typed, spanned syntax tree of KIP v1.0-RC2 and the later additions
//! accepted as a compatible superset (RC9–RC10: `UPDATE`, `MERGE`,
//! `EXPECT VERSION`, `EXPORT`, `SEARCH … MODE / THRESHOLD`).
//!
//! Every node that a later error may need to point at carries a [`Span`].
//! Spans are positions, not meaning: two spans always compare equal, so that
//! `parse(format(x)) == x` holds although formatting moves every position.
//!
//! Placeholders (`:name`) may stand wherever a value may stand; they are kept
//! in the tree as [`Arg::Param`] / [`Value::Param`] until [`crate::bind`]
//! replaces them. A *bound* tree holds no placeholder.

mod kml;
mod kql;
mod meta;

use std::fmt;

pub use kml::*;
pub use kql::*;
pub use meta::*;

/// A byte range `start..end` in the source text.
#[derive(Clone, Copy, Debug, Default, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub const fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    pub const fn len(self) -> usize {
        self.end - self.start
    }

    pub const fn is_empty(self) -> bool {
        self.start == self.end
    }
}

impl PartialEq for Span {
    /// Spans never distinguish two trees; see the module documentation.
    fn eq(&self, _other: &Span) -> bool {
        true
    }
}

/// A name as written in the source, with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A variable (`?drug`) or, in KML, a local handle. `name` excludes the `?`.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    pub name: String,
    pub span: Span,
}

/// A placeholder `:name`. `name` excludes the `:`.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub span: Span,
}

/// A literal of type `T` or a placeholder standing for one.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg<T> {
    Lit(T, Span),
    Param(Param),
}

impl<T> Arg<T> {
    pub fn span(&self) -> Span {
        match self {
            Arg::Lit(_, span) => *span,
            Arg::Param(p) => p.span,
        }
    }

    /// The literal, or `None` while the placeholder is unbound.
    pub fn lit(&self) -> Option<&T> {
        match self {
            Arg::Lit(v, _) => Some(v),
            Arg::Param(_) => None,
        }
    }
}

/// A KIP value: JSON plus placeholders. Objects keep their written key order.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Value>),
    Object(Object),
    Param(Param),
}

/// An object literal: ordered `key: value` members with unique keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Object {
    pub members: Vec<(String, Value)>,
    pub span: Span,
}

impl Value {
    /// Converts a bound value to JSON; `None` if a placeholder is left.
    pub fn to_json(&self) -> Option<serde_json::Value> {
        Some(match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => serde_json::Value::Number(n.clone()),
            Value::String(s) => serde_json::Value::String(s.clone()),
            Value::Array(items) => {
                serde_json::Value::Array(items.iter().map(Value::to_json).collect::<Option<_>>()?)
            }
            Value::Object(obj) => serde_json::Value::Object(obj.to_json()?),
            Value::Param(_) => return None,
        })
    }

    /// Converts JSON (e.g. a parameter's value) to a KIP value.
    pub fn from_json(json: &serde_json::Value, span: Span) -> Value {
        match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Number(n.clone()),
            serde_json::Value::String(s) => Value::String(s.clone()),
            serde_json::Value::Array(items) => {
                Value::Array(items.iter().map(|v| Value::from_json(v, span)).collect())
            }
            serde_json::Value::Object(map) => Value::Object(Object {
                members: map
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v, span)))
                    .collect(),
                span,
            }),
        }
    }
}

impl Object {
    /// Converts a bound object to a JSON map; `None` if a placeholder is left.
    pub fn to_json(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        self.members
            .iter()
            .map(|(k, v)| Some((k.clone(), v.to_json()?)))
            .collect()
    }
}

/// One KIP command. A script (a capsule file) holds several.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Find(FindQuery),
    Upsert(Upsert),
    /// RC9: pattern-matched bulk mutation.
    Update(Update),
    /// RC9: atomic consolidation of two concepts.
    Merge(Merge),
    Delete(Delete),
    Describe(Describe),
    Search(Search),
    /// RC9: a matched subgraph as a capsule (META, read-only).
    Export(Export),
}

impl Command {
    pub fn span(&self) -> Span {
        match self {
            Command::Find(q) => q.span,
            Command::Upsert(u) => u.span,
            Command::Update(u) => u.span,
            Command::Merge(m) => m.span,
            Command::Delete(d) => d.span,
            Command::Describe(d) => d.span,
            Command::Search(s) => s.span,
            Command::Export(e) => e.span,
        }
    }

    /// Which sub-language the command belongs to.
    pub fn kind(&self) -> CommandKind {
        match self {
            Command::Find(_) => CommandKind::Kql,
            Command::Upsert(_) | Command::Update(_) | Command::Merge(_) | Command::Delete(_) => {
                CommandKind::Kml
            }
            Command::Describe(_) | Command::Search(_) | Command::Export(_) => CommandKind::Meta,
        }
    }
}

/// KQL (queries), KML (changes) or META (introspection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandKind {
    Kql,
    Kml,
    Meta,
}

impl fmt::Display for CommandKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CommandKind::Kql => "KQL",
            CommandKind::Kml => "KML",
            CommandKind::Meta => "META",
        })
    }
}

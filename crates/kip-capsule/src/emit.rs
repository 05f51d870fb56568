//! Writing bundle items as YAML (for export and for the schema's example):
//! one block mapping per item, attributes as keys, nested values in flow
//! style, every scalar quoted so that it reads back as the same JSON.

use serde_json::{Map, Value as Json};

use crate::yaml;

/// The keys a concept item uses for itself (the writer, the schema and the
/// reader all go by them; they live here, with the writer, so that the
/// schema, which writes its example through this module, is not imported
/// back).
pub(crate) const CONCEPT_KEYS: [&str; 5] = ["type", "name", "action", "metadata", "attributes"];
/// The keys a proposition item uses for itself.
pub(crate) const PROPOSITION_KEYS: [&str; 6] = [
    "type",
    "source",
    "target",
    "action",
    "metadata",
    "attributes",
];

/// A concept by type and name, or a proposition by its ends.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ref {
    Concept { ty: String, name: String },
    Link(Box<(Ref, String, Ref)>),
}

impl Ref {
    pub(crate) fn concept(ty: &str, name: &str) -> Ref {
        Ref::Concept {
            ty: ty.to_owned(),
            name: name.to_owned(),
        }
    }

    fn flow(&self) -> String {
        match self {
            Ref::Concept { ty, name } => {
                format!(
                    "{{type: {}, name: {}}}",
                    yaml::string(ty),
                    yaml::string(name)
                )
            }
            Ref::Link(l) => format!(
                "{{type: {}, source: {}, target: {}}}",
                yaml::string(&l.1),
                l.0.flow(),
                l.2.flow()
            ),
        }
    }
}

/// What an item is about.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Subject {
    Concept {
        ty: String,
        name: String,
    },
    Link {
        predicate: String,
        source: Ref,
        target: Ref,
    },
}

/// One bundle item to write.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Item {
    pub(crate) subject: Subject,
    pub(crate) attrs: Map<String, Json>,
    pub(crate) meta: Map<String, Json>,
    pub(crate) delete: bool,
}

impl Item {
    pub(crate) fn concept(ty: &str, name: &str, attrs: Map<String, Json>) -> Item {
        Item {
            subject: Subject::Concept {
                ty: ty.to_owned(),
                name: name.to_owned(),
            },
            attrs,
            meta: Map::new(),
            delete: false,
        }
    }

    pub(crate) fn link(
        predicate: &str,
        source: Ref,
        target: Ref,
        attrs: Map<String, Json>,
    ) -> Item {
        Item {
            subject: Subject::Link {
                predicate: predicate.to_owned(),
                source,
                target,
            },
            attrs,
            meta: Map::new(),
            delete: false,
        }
    }
}

/// Appends `item` to `out` as a list entry.
pub(crate) fn item(out: &mut String, item: &Item) {
    let own: &[&str] = match &item.subject {
        Subject::Concept { ty, name } => {
            out.push_str(&format!("- type: {}\n", yaml::string(ty)));
            out.push_str(&format!("  name: {}\n", yaml::string(name)));
            &CONCEPT_KEYS
        }
        Subject::Link {
            predicate,
            source,
            target,
        } => {
            out.push_str(&format!("- type: {}\n", yaml::string(predicate)));
            out.push_str(&format!("  source: {}\n", source.flow()));
            out.push_str(&format!("  target: {}\n", target.flow()));
            &PROPOSITION_KEYS
        }
    };
    if item.delete {
        out.push_str("  action: delete\n");
        return;
    }
    let mut nested = Vec::new();
    for (k, v) in &item.attrs {
        if own.contains(&k.as_str()) {
            nested.push((k, v));
        } else {
            out.push_str(&format!("  {}: {}\n", yaml::key(k), yaml::flow(v)));
        }
    }
    if !nested.is_empty() {
        out.push_str("  attributes:\n");
        for (k, v) in nested {
            out.push_str(&format!("    {}: {}\n", yaml::key(k), yaml::flow(v)));
        }
    }
    if !item.meta.is_empty() {
        out.push_str("  metadata:\n");
        for (k, v) in &item.meta {
            out.push_str(&format!("    {}: {}\n", yaml::key(k), yaml::flow(v)));
        }
    }
}

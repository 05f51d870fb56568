//! A memory's shape at a glance (issue 31 §9): the schema map and the
//! best-connected concepts — what a large memory's first view shows
//! instead of a few dozen unconnected dots.
//!
//! - **Types**: every concept type with instances, with its count (the
//!   store's per-type counter) and the id of its `$ConceptType` definition.
//! - **Edges**: links counted by (subject type, predicate, object type),
//!   over every link; a link whose subject or object is another link
//!   (higher-order) is counted in `higher_order` instead.
//! - **Hubs**: the concepts with the most links, `belongs_to_domain` aside
//!   (every concept has one, and it would make the domains the hubs).
//!
//! The schema's own definitions (`$ConceptType`, `$PropositionType`
//! instances) are left out of types, edges and hubs. One pass over the
//! concept ids by type (keys only) and one over the links' keys.

use std::collections::{BTreeMap, HashMap};

use kip_store::{ConceptId, ElementId};
use serde::Serialize;

use crate::graph::{BELONGS_TO_DOMAIN, CONCEPT_TYPE, Graph, PROPOSITION_TYPE, Result};

/// A fast hasher: the map looks up two ends per link.
type Fast<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// How many hubs a map holds unless asked otherwise.
pub const DEFAULT_HUBS: usize = 40;

/// A concept type and how many concepts it has.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TypeCount {
    pub name: String,
    /// The type's definition (`C:…`, a `$ConceptType` concept).
    pub definition: Option<String>,
    pub count: u64,
}

/// How many links of one predicate go from one type to another.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EdgeCount {
    pub subject_type: String,
    pub predicate: String,
    pub object_type: String,
    pub count: u64,
}

/// A concept with many links.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Hub {
    pub id: String,
    #[serde(rename = "type")]
    #[cfg_attr(feature = "ts", ts(rename = "type"))]
    pub type_name: String,
    pub name: String,
    /// Links in and out, `belongs_to_domain` aside.
    pub degree: u64,
}

/// The memory's shape (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SchemaMap {
    /// When it was read (ISO 8601, UTC).
    pub at: String,
    /// Concepts that are not schema definitions.
    pub concepts: u64,
    pub links: u64,
    /// Types with instances, most first.
    pub types: Vec<TypeCount>,
    /// Most first.
    pub edges: Vec<EdgeCount>,
    /// Links whose subject or object is a link.
    pub higher_order: u64,
    /// Most links first.
    pub hubs: Vec<Hub>,
}

/// The map of the memory `g` holds, with at most `hubs` hubs.
pub fn schema_map(g: &Graph<'_>, hubs: usize, now: &str) -> Result<SchemaMap> {
    let mut map = SchemaMap {
        at: now.to_owned(),
        ..SchemaMap::default()
    };
    let (type_of, names) = concept_types(g, &mut map)?;
    let domain_link = g.predicate_id(BELONGS_TO_DOMAIN)?;
    let mut edges: Fast<(u32, u32, u32), u64> = Fast::default();
    let mut degree: Fast<ConceptId, u64> = Fast::default();
    for head in g.link_heads()? {
        let (_, subject, predicate, object) = head?;
        let (ElementId::Concept(s), ElementId::Concept(o)) = (subject, object) else {
            map.higher_order += 1;
            continue;
        };
        // Links of the schema's definitions are the schema's business.
        let (Some(&st), Some(&ot)) = (type_of.get(&s), type_of.get(&o)) else {
            continue;
        };
        map.links += 1;
        *edges.entry((st, predicate, ot)).or_default() += 1;
        if Some(predicate) != domain_link {
            *degree.entry(s).or_default() += 1;
            *degree.entry(o).or_default() += 1;
        }
    }
    for ((st, p, ot), count) in edges {
        map.edges.push(EdgeCount {
            subject_type: names[&st].clone(),
            predicate: g.predicate_name(p)?.to_string(),
            object_type: names[&ot].clone(),
            count,
        });
    }
    map.edges.sort_by(|a, b| {
        (b.count.cmp(&a.count))
            .then_with(|| (&a.subject_type, &a.predicate).cmp(&(&b.subject_type, &b.predicate)))
            .then_with(|| a.object_type.cmp(&b.object_type))
    });
    let mut best: Vec<(ConceptId, u64)> = degree.into_iter().collect();
    best.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (id, degree) in best.into_iter().take(hubs) {
        if let Some(c) = g.concept(id)? {
            map.hubs.push(Hub {
                id: ElementId::Concept(id).to_string(),
                type_name: names[&c.type_id].clone(),
                name: c.name.clone(),
                degree,
            });
        }
    }
    Ok(map)
}

/// Every instance concept's type (definitions left out), and the types'
/// names; fills `map.types` and `map.concepts`.
#[allow(clippy::type_complexity)]
fn concept_types(
    g: &Graph<'_>,
    map: &mut SchemaMap,
) -> Result<(Fast<ConceptId, u32>, BTreeMap<u32, String>)> {
    let mut type_of = Fast::default();
    let mut names = BTreeMap::new();
    let Some(meta) = g.type_id(CONCEPT_TYPE)? else {
        return Ok((type_of, names));
    };
    let mut types = Vec::new();
    for def in g.concepts_of_type(meta)? {
        let Some(c) = g.concept(def)? else { continue };
        if c.name == CONCEPT_TYPE || c.name == PROPOSITION_TYPE {
            continue;
        }
        let Some(t) = g.type_id(&c.name)? else {
            continue;
        };
        let mut count = 0;
        for id in g.concepts_of_type_iter(t)? {
            type_of.insert(id?, t);
            count += 1;
        }
        names.insert(t, c.name.clone());
        if count > 0 {
            types.push(TypeCount {
                name: c.name.clone(),
                definition: Some(ElementId::Concept(def).to_string()),
                count,
            });
        }
    }
    types.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    map.concepts = types.iter().map(|t| t.count).sum();
    map.types = types;
    Ok((type_of, names))
}

impl crate::nexus::Nexus {
    /// The memory's schema map now, with at most `hubs` hubs (see
    /// [`schema_map`]).
    pub fn schema_map(&self, hubs: usize) -> Result<SchemaMap> {
        let now = crate::clock::now();
        self.read(|g| schema_map(g, hubs, &now))
    }
}

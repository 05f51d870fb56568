//! The schema as the capsule pipeline sees it: every defined concept type
//! and predicate with the attributes of its definition node, read from the
//! nexus and, for a bundle, overlaid with the definitions the bundle itself
//! brings (`$ConceptType` / `$PropositionType` items), so that a bundle may
//! define a type and use it.

use std::collections::BTreeMap;

use kip_nexus::Nexus;
use kip_nexus::{CONCEPT_TYPE, Graph, PROPOSITION_TYPE, Result};
use serde_json::{Map, Value as Json};

/// One attribute of an `instance_schema`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PropSpec {
    pub(crate) name: String,
    /// The declared type: `string`, `number`, `integer`, `boolean`,
    /// `array`, `object`, `null`, or anything else (then unchecked).
    pub(crate) ty: Option<Json>,
    pub(crate) item_type: Option<String>,
    pub(crate) required: bool,
    pub(crate) description: Option<String>,
    pub(crate) default: Option<Json>,
}

/// A concept type's or predicate's definition node, by its attributes.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Definition {
    pub(crate) attributes: Map<String, Json>,
}

impl Definition {
    pub(crate) fn description(&self) -> Option<&str> {
        self.attributes.get("description").and_then(Json::as_str)
    }

    /// The attributes its instances should carry, in written order.
    pub(crate) fn instance_schema(&self) -> Vec<PropSpec> {
        let Some(Json::Object(schema)) = self.attributes.get("instance_schema") else {
            return Vec::new();
        };
        schema
            .iter()
            .map(|(name, spec)| {
                let spec = spec.as_object();
                let get = |k: &str| spec.and_then(|s| s.get(k));
                PropSpec {
                    name: name.clone(),
                    ty: get("type").cloned(),
                    item_type: get("item_type").and_then(Json::as_str).map(str::to_owned),
                    required: get("is_required").and_then(Json::as_bool) == Some(true),
                    description: get("description").and_then(Json::as_str).map(str::to_owned),
                    default: get("default_value").cloned(),
                }
            })
            .collect()
    }

    /// The logic properties the definition declares (BRIEF §8) as JSON
    /// (`[{name, type, description, parameters, data_source}]`); none when
    /// it declares none or its declaration does not read (the nexus refuses
    /// those when they are written).
    pub(crate) fn logic_properties(&self) -> Vec<Json> {
        kip_nexus::logic_properties(&self.attributes)
            .map(|props| {
                props
                    .iter()
                    .filter_map(|p| serde_json::to_value(p).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `subject_types` / `object_types`: `None` for any (`"*"`, missing).
    pub(crate) fn end_types(&self, key: &str) -> Option<Vec<String>> {
        kip_nexus::type_list(self.attributes.get(key))
    }
}

/// Every concept type and predicate, by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Model {
    pub(crate) types: BTreeMap<String, Definition>,
    pub(crate) predicates: BTreeMap<String, Definition>,
}

impl Model {
    pub(crate) fn load(nexus: &Nexus) -> Result<Model> {
        nexus.read(Model::from_graph)
    }

    pub(crate) fn from_graph(g: &Graph<'_>) -> Result<Model> {
        let mut model = Model::default();
        for (meta, target) in [
            (CONCEPT_TYPE, &mut model.types),
            (PROPOSITION_TYPE, &mut model.predicates),
        ] {
            let Some(meta_type) = g.type_id(meta)? else {
                continue;
            };
            for id in g.concepts_of_type(meta_type)? {
                if let Some(c) = g.concept(id)? {
                    target.insert(
                        c.name.clone(),
                        Definition {
                            attributes: c.attributes.clone(),
                        },
                    );
                }
            }
        }
        Ok(model)
    }

    /// Applies a definition item the way UPSERT would: attributes merge
    /// shallowly into an existing definition.
    pub(crate) fn define(&mut self, meta: &str, name: &str, attributes: &Map<String, Json>) {
        let target = if meta == CONCEPT_TYPE {
            &mut self.types
        } else if meta == PROPOSITION_TYPE {
            &mut self.predicates
        } else {
            return;
        };
        let def = target.entry(name.to_owned()).or_default();
        for (k, v) in attributes {
            def.attributes.insert(k.clone(), v.clone());
        }
    }

    /// Whether `name` is a concept type or a predicate.
    pub(crate) fn knows(&self, name: &str) -> bool {
        self.types.contains_key(name) || self.predicates.contains_key(name)
    }
}

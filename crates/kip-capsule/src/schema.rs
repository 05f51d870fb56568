//! `get_knowledge_schema`: the JSON Schema (draft-07) of a YAML knowledge
//! bundle for the nexus as it is now, generated from the live `$ConceptType`
//! and `$PropositionType` definitions, and an example bundle that validates
//! against it and imports cleanly.
//!
//! The bundle is an array; each item matches exactly one branch of the
//! `oneOf`, one branch per concept type and per predicate, told apart by
//! `type` (a `const`). A concept branch requires `name` and, unless the item
//! deletes, the attributes its type's `instance_schema` marks
//! `is_required`; attribute types come from the same `instance_schema`. A
//! proposition branch requires `source` and `target`, each `{type, name}`
//! with `type` limited to the predicate's `subject_types` /
//! `object_types`, or `{id}`; where a predicate allows any type (`"*"`),
//! an end may also be another proposition, `{type, source, target}`.
//!
//! Attributes are open, as seed 001 wants (`instance_schema` is a
//! guideline): an item may carry attributes its type does not list. Keys
//! starting with `_` are refused (the engine owns them). An attribute whose
//! name is one of the item's own keys (`type`, `name`, `action`,
//! `metadata`, `attributes`, and `source` / `target` for propositions) is
//! written inside `attributes: {…}` instead (e.g. a Person's display
//! `name`).

use kip_lang::KipError;
use kip_nexus::Nexus;
use kip_nexus::{BELONGS_TO_DOMAIN, CONCEPT_TYPE, DOMAIN, PROPOSITION_TYPE};
use serde_json::{Map, Value as Json, json};

use crate::emit::{self, CONCEPT_KEYS, PROPOSITION_KEYS};
use crate::model::{Definition, Model, PropSpec};

/// `get_knowledge_schema` for the current nexus:
/// `{"full_bundle_schema": …, "example_yaml": "…"}`.
pub fn knowledge_schema(nexus: &Nexus) -> Result<KnowledgeSchema, KipError> {
    let model = Model::load(nexus)?;
    Ok(KnowledgeSchema {
        full_bundle_schema: bundle_schema(&model),
        example_yaml: example_yaml(&model),
    })
}

/// `get_knowledge_schema`'s answer: the bundle schema of the live types and
/// an example bundle that validates against it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KnowledgeSchema {
    /// A draft-07 JSON Schema of a knowledge bundle (the array form).
    #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
    pub full_bundle_schema: Json,
    /// A small bundle in YAML using the live types.
    pub example_yaml: String,
}

/// The JSON Schema of a bundle (the array form) for `model`.
pub(crate) fn bundle_schema(model: &Model) -> Json {
    let mut branches = Vec::new();
    for (name, def) in &model.types {
        branches.push(concept_branch(name, def));
    }
    for (name, def) in &model.predicates {
        branches.push(proposition_branch(name, def));
    }
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "KIP knowledge bundle",
        "description": "A list of knowledge items for a KIP Cognitive Nexus, imported atomically: every item is checked first and then all are applied in one transaction, or none. A concept item is {type: <concept type>, name, …attributes, metadata?, action?}; a proposition item is {type: <predicate>, source, target, …attributes, metadata?, action?}. `action` is `upsert` (the default: create, or merge attributes into what exists) or `delete` (a concept is deleted with every proposition that mentions it). An item that updates a concept which already has a required attribute (in the nexus, or from an earlier item) may leave that attribute out. A file may also be a mapping {metadata: {…}, items: [...]}, whose metadata is the default for every item.",
        "type": "array",
        "items": {"oneOf": branches},
        "definitions": definitions(model),
    })
}

/// The shared definitions the branches refer to.
pub(crate) fn definitions(model: &Model) -> Json {
    let types: Vec<&String> = model.types.keys().collect();
    let predicates: Vec<&String> = model.predicates.keys().collect();
    json!({
        "metadata": {
            "type": "object",
            "description": "Provenance and context of the knowledge (source, author, confidence, status, …), kept beside it. Keys starting with '_' belong to the engine.",
            "propertyNames": {"pattern": "^[^_]"},
        },
        "element_id": {
            "type": "object",
            "description": "An element of the nexus by its id (C:… for a concept, P:… for a proposition).",
            "required": ["id"],
            "properties": {"id": {"type": "string", "pattern": "^[CP]:[0-9]+$"}},
            "additionalProperties": false,
        },
        "concept_ref": {
            "type": "object",
            "description": "A concept by its type and name. It must exist in the nexus or be created earlier in the same bundle.",
            "required": ["type", "name"],
            "properties": {
                "type": {"type": "string", "enum": types},
                "name": {"type": "string", "minLength": 1},
            },
            "additionalProperties": false,
        },
        "proposition_ref": {
            "type": "object",
            "description": "A proposition by its predicate and ends (for propositions about propositions).",
            "required": ["type", "source", "target"],
            "properties": {
                "type": {"type": "string", "enum": predicates},
                "source": {"$ref": "#/definitions/element_ref"},
                "target": {"$ref": "#/definitions/element_ref"},
            },
            "additionalProperties": false,
        },
        "logic_properties": logic_properties_schema(),
        "element_ref": {
            "anyOf": [
                {"$ref": "#/definitions/concept_ref"},
                {"$ref": "#/definitions/element_id"},
                {"$ref": "#/definitions/proposition_ref"},
            ],
        },
    })
}

/// The branch for one name (concept type or predicate), if defined.
pub(crate) fn branch(model: &Model, name: &str) -> Option<Json> {
    if let Some(def) = model.types.get(name) {
        return Some(concept_branch(name, def));
    }
    model
        .predicates
        .get(name)
        .map(|def| proposition_branch(name, def))
}

/// A JSON type name of `instance_schema`'s vocabulary, if it is one.
fn json_type(t: &str) -> Option<&'static str> {
    Some(match t {
        "string" => "string",
        "number" => "number",
        "integer" => "integer",
        "boolean" => "boolean",
        "array" => "array",
        "object" => "object",
        "null" => "null",
        _ => return None,
    })
}

/// The schema of one attribute.
fn property_schema(spec: &PropSpec) -> Json {
    let mut s = Map::new();
    let mut declared = Vec::new();
    let mut unchecked = None;
    match &spec.ty {
        Some(Json::String(t)) => match json_type(t) {
            Some(j) => declared.push(j),
            None => unchecked = Some(t.clone()),
        },
        Some(Json::Array(list)) => {
            let names: Vec<Option<&'static str>> = list
                .iter()
                .map(|t| t.as_str().and_then(json_type))
                .collect();
            if names.iter().all(Option::is_some) {
                declared.extend(names.into_iter().flatten());
            }
        }
        _ => {}
    }
    if !declared.is_empty() {
        if !spec.required && !declared.contains(&"null") {
            declared.push("null");
        }
        s.insert(
            "type".into(),
            if declared.len() == 1 {
                json!(declared[0])
            } else {
                json!(declared)
            },
        );
        if declared.contains(&"array")
            && let Some(item) = spec.item_type.as_deref().and_then(json_type)
        {
            s.insert("items".into(), json!({"type": item}));
        }
    }
    let mut description = spec.description.clone().unwrap_or_default();
    if let Some(t) = unchecked {
        if !description.is_empty() {
            description.push(' ');
        }
        description.push_str(&format!("(declared type: {t})"));
    }
    if !description.is_empty() {
        s.insert("description".into(), json!(description));
    }
    if let Some(d) = &spec.default {
        s.insert("default".into(), d.clone());
    }
    Json::Object(s)
}

/// The `properties`, `required` and nested `attributes` schema of an item
/// kind whose own keys are `own`.
struct Attributes {
    flat: Map<String, Json>,
    flat_required: Vec<String>,
    nested: Map<String, Json>,
    nested_required: Vec<String>,
}

fn attributes(specs: &[PropSpec], own: &[&str]) -> Attributes {
    let mut a = Attributes {
        flat: Map::new(),
        flat_required: Vec::new(),
        nested: Map::new(),
        nested_required: Vec::new(),
    };
    for spec in specs {
        if spec.name.starts_with('_') {
            continue;
        }
        let schema = property_schema(spec);
        if own.contains(&spec.name.as_str()) {
            a.nested.insert(spec.name.clone(), schema);
            if spec.required {
                a.nested_required.push(spec.name.clone());
            }
        } else {
            a.flat.insert(spec.name.clone(), schema);
            if spec.required {
                a.flat_required.push(spec.name.clone());
            }
        }
    }
    a
}

/// The common tail of both branch kinds: `action`, `metadata`,
/// `attributes`, the reserved-key rule, and required attributes unless the
/// item deletes.
fn finish(
    mut properties: Map<String, Json>,
    required: Vec<&str>,
    a: Attributes,
    delete_keys: Vec<&str>,
) -> Map<String, Json> {
    properties.insert(
        "action".into(),
        json!({"type": "string", "enum": ["upsert", "delete"], "default": "upsert",
               "description": "upsert (the default) creates the element or merges its attributes; delete removes it."}),
    );
    properties.insert("metadata".into(), json!({"$ref": "#/definitions/metadata"}));
    let mut nested = json!({
        "type": "object",
        "description": "Attributes whose names are this item's own keys.",
        "propertyNames": {"pattern": "^[^_]"},
    });
    if !a.nested.is_empty() {
        nested["properties"] = Json::Object(a.nested);
    }
    properties.insert("attributes".into(), nested);
    for (k, v) in a.flat {
        properties.insert(k, v);
    }
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    out.insert("required".into(), json!(required));
    out.insert("properties".into(), Json::Object(properties));
    out.insert("propertyNames".into(), json!({"pattern": "^[^_]"}));
    out.insert(
        "if".into(),
        json!({"required": ["action"], "properties": {"action": {"const": "delete"}}}),
    );
    out.insert(
        "then".into(),
        json!({"propertyNames": {"enum": delete_keys}}),
    );
    let mut otherwise = Map::new();
    let mut must: Vec<String> = a.flat_required;
    if !a.nested_required.is_empty() {
        must.push("attributes".into());
        otherwise.insert(
            "properties".into(),
            json!({"attributes": {"required": a.nested_required}}),
        );
    }
    if !must.is_empty() {
        otherwise.insert("required".into(), json!(must));
    }
    out.insert("else".into(), Json::Object(otherwise));
    out
}

fn concept_branch(name: &str, def: &Definition) -> Json {
    let specs = def.instance_schema();
    let a = attributes(&specs, &CONCEPT_KEYS);
    let mut name_schema = json!({"type": "string", "minLength": 1});
    if name == CONCEPT_TYPE {
        name_schema["pattern"] = json!("^\\$?[A-Za-z_][A-Za-z0-9_]*$");
        name_schema["description"] =
            json!("The new type's name: letters, digits and '_', not starting with a digit.");
    } else if name == PROPOSITION_TYPE {
        name_schema["pattern"] = json!("^[A-Za-z_][A-Za-z0-9_]*$");
        name_schema["description"] =
            json!("The predicate's name, snake_case by convention (letters, digits and '_').");
    }
    let mut properties = Map::new();
    properties.insert("type".into(), json!({"const": name}));
    properties.insert("name".into(), name_schema);
    let mut out = finish(
        properties,
        vec!["type", "name"],
        a,
        vec!["type", "name", "action"],
    );
    if name == CONCEPT_TYPE
        && let Some(Json::Object(props)) = out.get_mut("properties")
    {
        props.insert(
            kip_nexus::LOGIC_PROPERTIES.into(),
            json!({"$ref": "#/definitions/logic_properties"}),
        );
    }
    let mut head = Map::new();
    head.insert("title".into(), json!(format!("{name} (concept)")));
    if let Some(d) = def.description() {
        head.insert("description".into(), json!(d));
    }
    // What can be computed for the type's instances (BRIEF §8): an
    // annotation for readers and agents, not a constraint on items.
    let logic = def.logic_properties();
    if !logic.is_empty() {
        head.insert("x-logic-properties".into(), Json::Array(logic));
    }
    head.append(&mut out);
    Json::Object(head)
}

/// The JSON Schema of a `$ConceptType`'s `logic_properties` (BRIEF §8).
/// The nexus checks more when the definition is written (a metric's system
/// parameters, a `property` the type's `instance_schema` has, a query with
/// exactly one aggregate) and answers `KIP_2003` with the path.
fn logic_properties_schema() -> Json {
    let types = ["INTEGER", "NUMBER", "STRING", "BOOLEAN", "OBJECT", "ARRAY"];
    json!({
        "type": "object",
        "description": "Computed properties of the type's instances, by name: a metric (a value over [start, end], or a series of one value per step bucket) or an operator (a call to a service). A metric always has the system parameters instant (BOOLEAN), start and end (INTEGER, ms since epoch) and step (STRING: day|week|month|quarter|year), value_from input and if_system_generate true.",
        "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
        "additionalProperties": {
            "type": "object",
            "required": ["type", "data_source"],
            "properties": {
                "type": {"type": "string", "enum": ["metric", "operator"]},
                "description": {"type": "string"},
                "parameters": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["name", "type"],
                        "properties": {
                            "name": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                            "type": {"type": "string", "enum": types},
                            "value_from": {"type": "string", "enum": ["input", "property", "const"], "default": "input"},
                            "property": {"type": "string", "description": "The instance attribute (value_from property)."},
                            "value": {"description": "The constant (value_from const)."},
                            "if_system_generate": {"type": "boolean"},
                            "required": {"type": "boolean", "default": true},
                            "description": {"type": "string"},
                        },
                        "additionalProperties": false,
                    },
                },
                "data_source": {
                    "oneOf": [
                        {
                            "type": "object",
                            "required": ["kind", "query"],
                            "properties": {
                                "kind": {"const": "kip"},
                                "query": {"type": "string", "description": "A KQL FIND with exactly one aggregate; :self is the instance's id, every parameter is :name, and :start_iso / :end_iso bound the window or bucket."},
                            },
                            "additionalProperties": false,
                        },
                        {
                            "type": "object",
                            "required": ["kind", "url"],
                            "properties": {
                                "kind": {"const": "http"},
                                "url": {"type": "string", "pattern": "^https?://[^/]"},
                            },
                            "additionalProperties": false,
                        },
                    ],
                },
            },
            "additionalProperties": false,
        },
    })
}

/// The schema of a proposition's end allowed to be of `types`.
fn end_schema(types: Option<Vec<String>>) -> Json {
    match types {
        None => json!({"$ref": "#/definitions/element_ref"}),
        Some(types) => json!({
            "anyOf": [
                {
                    "type": "object",
                    "required": ["type", "name"],
                    "properties": {
                        "type": {"type": "string", "enum": types},
                        "name": {"type": "string", "minLength": 1},
                    },
                    "additionalProperties": false,
                },
                {"$ref": "#/definitions/element_id"},
            ],
        }),
    }
}

fn proposition_branch(name: &str, def: &Definition) -> Json {
    let specs = def.instance_schema();
    let a = attributes(&specs, &PROPOSITION_KEYS);
    let subjects = def.end_types("subject_types");
    let objects = def.end_types("object_types");
    let describe = |t: &Option<Vec<String>>| {
        t.as_ref()
            .map_or("any element".to_owned(), |l| l.join(" or "))
    };
    let mut properties = Map::new();
    properties.insert("type".into(), json!({"const": name}));
    let mut source = end_schema(subjects.clone());
    source["description"] = json!(format!("The subject: {}.", describe(&subjects)));
    let mut target = end_schema(objects.clone());
    target["description"] = json!(format!("The object: {}.", describe(&objects)));
    properties.insert("source".into(), source);
    properties.insert("target".into(), target);
    let mut out = finish(
        properties,
        vec!["type", "source", "target"],
        a,
        vec!["type", "source", "target", "action"],
    );
    let mut head = Map::new();
    head.insert("title".into(), json!(format!("{name} (proposition)")));
    if let Some(d) = def.description() {
        head.insert("description".into(), json!(d));
    }
    head.append(&mut out);
    Json::Object(head)
}

// ------------------------------------------------------------------ example

/// A value of the declared type, for the example.
fn sample(spec: &PropSpec, type_name: &str) -> Json {
    if let Some(d) = &spec.default {
        return d.clone();
    }
    let ty = match &spec.ty {
        Some(Json::String(t)) => t.as_str(),
        Some(Json::Array(list)) => list.first().and_then(Json::as_str).unwrap_or("string"),
        _ => "string",
    };
    match ty {
        "number" | "integer" => json!(1),
        "boolean" => json!(false),
        "array" => json!([]),
        "object" => json!({}),
        "null" => Json::Null,
        _ if spec.name == "description" => {
            json!(format!(
                "An example {type_name}, written by get_knowledge_schema."
            ))
        }
        _ => json!(format!("example {}", spec.name)),
    }
}

/// A concept item of `ty` with every required attribute filled.
fn example_concept(model: &Model, ty: &str, name: &str) -> emit::Item {
    emit::Item::concept(ty, name, required_samples(model.types.get(ty), ty))
}

/// A sample value for every attribute a definition's `instance_schema`
/// marks required.
fn required_samples(def: Option<&Definition>, type_name: &str) -> Map<String, Json> {
    let mut attrs = Map::new();
    if let Some(def) = def {
        for spec in def.instance_schema() {
            if spec.required {
                attrs.insert(spec.name.clone(), sample(&spec, type_name));
            }
        }
    }
    attrs
}

/// Whether a type is part of the nexus's own machinery rather than of a
/// domain (not a good subject for an example).
fn is_meta(t: &str) -> bool {
    t.starts_with('$')
}

/// What the example bundle says before its items.
const EXAMPLE_HEADER: &str = "# A KIP knowledge bundle: a list of items, validated as a whole and\n\
         # applied in one transaction (all or nothing).\n\
         # - A concept: type (a concept type), name, attributes as keys, optional\n\
         #   metadata: {…} and action: upsert | delete.\n\
         # - A proposition: type (a predicate), source and target ({type, name}\n\
         #   or {id}), attributes as keys, optional metadata and action.\n\
         # Items may refer to concepts created earlier in the same bundle.\n\
         # A new concept type is itself an item:\n\
         #   - type: $ConceptType\n\
         #     name: Herb\n\
         #     description: A medicinal plant.\n\
         #     instance_schema: {description: {type: string, is_required: true}}\n\
         # The file may also be a mapping whose metadata applies to every item:\n\
         #   metadata: {source: \"…\", confidence: 0.9}\n\
         #   items: [...]\n";

/// The example bundle: a domain, two concepts joined by a predicate of
/// this nexus (the first whose ends are concrete domain types), and their
/// domain membership. It validates against [`bundle_schema`] and imports
/// cleanly: its concepts are new, their types and the predicate exist.
pub(crate) fn example_yaml(model: &Model) -> String {
    let (mut items, members) = match example_predicate(model) {
        Some((p, s, o)) => linked_examples(model, &p, &s, &o),
        None => lone_example(model),
    };
    if model.types.contains_key(DOMAIN) && model.predicates.contains_key(BELONGS_TO_DOMAIN) {
        into_example_domain(model, &mut items, members);
    }
    let mut out = String::from(EXAMPLE_HEADER);
    for item in &items {
        emit::item(&mut out, item);
    }
    out
}

/// The first predicate (other than `belongs_to_domain`) whose ends can be
/// concrete domain types, with those types: `(predicate, subject, object)`.
fn example_predicate(model: &Model) -> Option<(String, String, String)> {
    model.predicates.iter().find_map(|(p, def)| {
        if p == BELONGS_TO_DOMAIN {
            return None;
        }
        let s = def
            .end_types("subject_types")?
            .into_iter()
            .find(|t| !is_meta(t) && model.types.contains_key(t))?;
        let o = def
            .end_types("object_types")?
            .into_iter()
            .find(|t| !is_meta(t) && model.types.contains_key(t))?;
        Some((p.clone(), s, o))
    })
}

/// Two example concepts and predicate `p` between them; also the concepts
/// as `(type, name)`, for their domain membership.
fn linked_examples(
    model: &Model,
    p: &str,
    s: &str,
    o: &str,
) -> (Vec<emit::Item>, Vec<(String, String)>) {
    let s_name = format!("Example {s}");
    let o_name = if s == o {
        format!("Another example {o}")
    } else {
        format!("Example {o}")
    };
    let items = vec![
        example_concept(model, s, &s_name),
        example_concept(model, o, &o_name),
        emit::Item::link(
            p,
            emit::Ref::concept(s, &s_name),
            emit::Ref::concept(o, &o_name),
            required_samples(model.predicates.get(p), p),
        ),
    ];
    (items, vec![(s.to_owned(), s_name), (o.to_owned(), o_name)])
}

/// A nexus with no domain predicates yet: a concept of the first domain
/// type (Person on a fresh nexus), if there is one.
fn lone_example(model: &Model) -> (Vec<emit::Item>, Vec<(String, String)>) {
    let ty = model
        .types
        .keys()
        .find(|t| !is_meta(t) && t.as_str() != DOMAIN)
        .cloned();
    match ty {
        Some(ty) => {
            let name = format!("example-{}", ty.to_lowercase());
            (vec![example_concept(model, &ty, &name)], vec![(ty, name)])
        }
        None => (Vec::new(), Vec::new()),
    }
}

/// Puts the example concepts `members` in an example domain, listed first.
fn into_example_domain(model: &Model, items: &mut Vec<emit::Item>, members: Vec<(String, String)>) {
    let mut domain = example_concept(model, DOMAIN, "Examples");
    domain.attrs.insert(
        "description".into(),
        json!("Example knowledge written by get_knowledge_schema; safe to delete."),
    );
    items.insert(0, domain);
    for (ty, name) in members {
        items.push(emit::Item::link(
            BELONGS_TO_DOMAIN,
            emit::Ref::concept(&ty, &name),
            emit::Ref::concept(DOMAIN, "Examples"),
            Map::new(),
        ));
    }
}

//! Reading a dot path (`?x.name`, `?x.attributes.k.…`) of the element
//! bound to a variable: what FILTER, FIND and ORDER BY see. One top-level
//! attribute or metadata key is read without decoding the rest of the
//! record, which is what makes a FILTER over a type scan cheap.

use kip_lang::ast::{DotPath, Field};
use kip_store::ElementId;
use serde_json::Value as Json;

use crate::graph::{FieldKind, Graph, Result};

use super::row::Val;

/// The JSON value of a dot path for the value bound to its variable.
pub fn path_value(graph: &Graph<'_>, path: &DotPath, val: Val) -> Result<Json> {
    let lookup = |map: &serde_json::Map<String, Json>, keys: &[String]| -> Json {
        if keys.is_empty() {
            return Json::Object(map.clone());
        }
        let mut cur = map.get(&keys[0]);
        for k in &keys[1..] {
            cur = cur.and_then(|v| v.get(k));
        }
        cur.cloned().unwrap_or(Json::Null)
    };
    Ok(match val {
        Val::Null => Json::Null,
        Val::Pred(p) => match path.field {
            Field::Whole | Field::Name => Json::String(graph.predicate_name(p)?.to_string()),
            _ => Json::Null,
        },
        Val::Concept(c) => {
            // One attribute or metadata key (a FILTER's usual read) comes
            // from the record without decoding the rest of it.
            if let Some((kind, keys)) = one_key(&path.field) {
                let Some(first) = graph.concept_field(c, kind, &keys[0])? else {
                    return Ok(Json::Null);
                };
                return Ok(dig(&first, &keys[1..]));
            }
            let Some(rec) = graph.concept(c)? else {
                return Ok(Json::Null);
            };
            match &path.field {
                Field::Whole => graph.element_json(ElementId::Concept(c))?,
                Field::Id => Json::String(ElementId::Concept(c).to_string()),
                Field::Type => Json::String(graph.type_name(rec.type_id)?.to_string()),
                Field::Name => Json::String(rec.name.clone()),
                Field::Attributes(keys) => lookup(&rec.attributes, keys),
                Field::Metadata(keys) => lookup(&rec.metadata, keys),
                Field::Subject | Field::Predicate | Field::Object => Json::Null,
            }
        }
        Val::Prop(p) => {
            // As for a concept: one key of a link a sweep is scanning is
            // read from its bytes, without decoding (or caching) the record.
            if let Some((kind, keys)) = one_key(&path.field) {
                let Some(first) = graph.proposition_field(p, kind, &keys[0])? else {
                    return Ok(Json::Null);
                };
                return Ok(dig(&first, &keys[1..]));
            }
            let Some(rec) = graph.proposition(p)? else {
                return Ok(Json::Null);
            };
            match &path.field {
                Field::Whole => graph.element_json(ElementId::Proposition(p))?,
                Field::Id => Json::String(ElementId::Proposition(p).to_string()),
                Field::Subject => Json::String(rec.subject.to_string()),
                Field::Predicate => Json::String(graph.predicate_name(rec.predicate)?.to_string()),
                Field::Object => Json::String(rec.object.to_string()),
                Field::Attributes(keys) => lookup(&rec.attributes, keys),
                Field::Metadata(keys) => lookup(&rec.metadata, keys),
                Field::Type | Field::Name => Json::Null,
            }
        }
    })
}

/// The kind and keys of a path that reads one top-level attribute or
/// metadata key (and maybe keys inside it).
fn one_key(field: &Field) -> Option<(FieldKind, &[String])> {
    match field {
        Field::Attributes(keys) if !keys.is_empty() => Some((FieldKind::Attributes, keys)),
        Field::Metadata(keys) if !keys.is_empty() => Some((FieldKind::Metadata, keys)),
        _ => None,
    }
}

/// The value at `keys` inside `value` (`null` where one is missing).
fn dig(value: &Json, keys: &[String]) -> Json {
    let mut cur = Some(value);
    for k in keys {
        cur = cur.and_then(|v| v.get(k));
    }
    cur.cloned().unwrap_or(Json::Null)
}

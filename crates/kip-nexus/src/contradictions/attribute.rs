//! The second kind of contradiction (issue 31 §4): an attribute value one
//! source overwrote with another's on the same element ("birthplace: Oslo"
//! from a conversation, then "Bergen" from a document), found in the
//! trace's images (`trace/overwrites.rs` says which writes count).
//!
//! Each is listed as a contradiction of kind `attribute` whose two sides
//! are the earlier and the current value, each with the element's
//! provenance when it held it. Resolving keeps one: one `UPDATE` of the
//! element, run through `execute` like every curator's write (previewed,
//! traced, revertible), appends the retired value to the element's
//! `metadata.superseded_values` (`attribute`, `value`, its provenance,
//! `superseded_at`, `superseded_reason`) — kept as history, per RC11's
//! orthogonal memory axes — and, when the earlier value is kept, writes it
//! back with its own `source`, `author` and `confidence`. The write that
//! records the item resolves the overwrite; a later overwrite of the same
//! attribute is a new one.

use std::collections::HashSet;

use kip_lang::{ErrorCode, KipError};
use kip_store::ElementId;
use serde_json::{Map, Value as Json};

use super::model::{Contradiction, ContradictionSide, Resolve, end};
use crate::graph::{Graph, Result};
use crate::trace::{SUPERSEDED_VALUES, overwrites};

/// The contradiction kind.
pub const ATTRIBUTE: &str = "attribute";

/// The two sides' id suffixes.
const EARLIER: &str = "earlier";
const CURRENT: &str = "current";

fn contradiction_id(e: ElementId, attribute: &str) -> String {
    format!("{ATTRIBUTE}:{e}/{attribute}")
}

/// The element's metadata now (none: it is gone).
fn metadata(g: &Graph<'_>, e: ElementId) -> Result<Option<Map<String, Json>>> {
    Ok(match e {
        ElementId::Concept(c) => g.concept(c)?.map(|r| r.metadata.clone()),
        ElementId::Proposition(p) => g.proposition(p)?.map(|r| r.metadata.clone()),
    })
}

fn side(
    id: String,
    value: &Json,
    meta: &Map<String, Json>,
    written_by: Option<&str>,
) -> ContradictionSide {
    ContradictionSide {
        value: Some(value.clone()),
        written_by: written_by.map(str::to_owned),
        ..ContradictionSide::with_provenance(id, meta)
    }
}

/// The standing overwrites of `g` as contradictions, by element then
/// attribute; `types` (concept type ids) keeps only concepts of those.
pub(crate) fn attribute_contradictions(
    g: &Graph<'_>,
    types: Option<&HashSet<u32>>,
    only: Option<ElementId>,
) -> Result<Vec<Contradiction>> {
    let mut out = Vec::new();
    for ((e, attribute), o) in overwrites(g, only)? {
        if let Some(wanted) = types {
            let of_type = match e {
                ElementId::Concept(c) => g.concept(c)?.is_some_and(|r| wanted.contains(&r.type_id)),
                ElementId::Proposition(_) => false,
            };
            if !of_type {
                continue;
            }
        }
        let id = contradiction_id(e, &attribute);
        out.push(Contradiction {
            subject: end(g, e)?,
            predicate: String::new(),
            attribute: Some(attribute),
            kind: ATTRIBUTE.to_owned(),
            sides: vec![
                side(format!("{id}#{EARLIER}"), &o.earlier, &o.earlier_meta, None),
                side(
                    format!("{id}#{CURRENT}"),
                    &o.current,
                    &o.current_meta,
                    Some(&o.entry),
                ),
            ],
            id,
        });
    }
    Ok(out)
}

const HINT: &str = "Keep one side of an attribute contradiction that `kip contradictions` lists and retire the other: `attribute:<element>/<attribute>#earlier` and `…#current`.";

fn bad(message: String) -> KipError {
    KipError::new(ErrorCode::InvalidSyntax, message).with_hint(HINT)
}

/// `attribute:<element>/<attribute>#<side>` as its parts.
fn parse_side(id: &str) -> Result<(ElementId, &str, &str)> {
    let parsed = id.strip_prefix("attribute:").and_then(|rest| {
        let (head, side) = rest.rsplit_once('#')?;
        let (element, attribute) = head.split_once('/')?;
        Some((element.parse::<ElementId>().ok()?, attribute, side))
    });
    match parsed {
        Some((e, a, s)) if (s == EARLIER || s == CURRENT) && !a.is_empty() => Ok((e, a, s)),
        _ => Err(bad(format!(
            "{id:?} is not a side of an attribute contradiction"
        ))),
    }
}

/// Whether `id` names an attribute contradiction's side.
pub(crate) fn is_attribute_side(id: &str) -> bool {
    id.starts_with("attribute:")
}

/// The `UPDATE` that resolves an attribute contradiction as `r` says,
/// checked against `g` (the overwrite must still stand as listed).
pub(crate) fn attribute_resolution(
    g: &Graph<'_>,
    r: &Resolve,
    now: &str,
) -> Result<(String, Map<String, Json>)> {
    let (e, attribute, kept) = parse_side(&r.keep)?;
    let [retire] = r.retire.as_slice() else {
        return Err(bad(format!(
            "an attribute contradiction has two sides: retire exactly the one {} does not keep",
            r.keep
        )));
    };
    let (e2, attribute2, retired) = parse_side(retire)?;
    if (e2, attribute2) != (e, attribute) || retired == kept {
        return Err(bad(format!(
            "{retire} is not the other side of {}",
            contradiction_id(e, attribute)
        )));
    }
    let standing = overwrites(g, Some(e))?;
    let Some(o) = standing.get(&(e, attribute.to_owned())) else {
        return Err(KipError::new(
            ErrorCode::NotFound,
            format!(
                "{} does not stand any more (resolved, or the value changed since it was listed)",
                contradiction_id(e, attribute)
            ),
        )
        .with_hint("List the contradictions again."));
    };
    let (keep_earlier, (value, meta)) = if kept == EARLIER {
        (true, (&o.current, &o.current_meta))
    } else {
        (false, (&o.earlier, &o.earlier_meta))
    };
    let reason = r
        .reason
        .clone()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| format!("The curator kept the {kept} value of {attribute} on {e}."));
    let mut item = Map::new();
    item.insert("attribute".into(), Json::from(attribute));
    item.insert("value".into(), value.clone());
    for k in ["source", "author", "confidence"] {
        if let Some(v) = meta.get(k) {
            item.insert(k.into(), v.clone());
        }
    }
    item.insert("superseded_at".into(), Json::from(now));
    item.insert("superseded_reason".into(), Json::from(reason.as_str()));
    let mut history = match metadata(g, e)?.and_then(|m| m.get(SUPERSEDED_VALUES).cloned()) {
        Some(Json::Array(a)) => a,
        _ => Vec::new(),
    };
    history.push(Json::Object(item));
    let mut params = Map::new();
    params.insert("element".into(), Json::from(e.to_string()));
    params.insert("history".into(), Json::Array(history));
    params.insert("reason".into(), Json::from(reason));
    let mut set_meta = format!("{SUPERSEDED_VALUES}: :history");
    let mut set = String::new();
    if keep_earlier {
        params.insert("value".into(), o.earlier.clone());
        set = format!("SET ATTRIBUTES {{ {}: :value }}\n", Json::from(attribute));
        // The value goes back with the provenance it came with.
        for k in ["source", "author", "confidence"] {
            if let Some(v) = o.earlier_meta.get(k) {
                params.insert(format!("kept_{k}"), v.clone());
                set_meta += &format!(", {k}: :kept_{k}");
            }
        }
    }
    let pattern = match e {
        ElementId::Concept(_) => "?e {id: :element}",
        ElementId::Proposition(_) => "?e (id: :element)",
    };
    let text = format!("UPDATE ?e\n{set}SET METADATA {{ {set_meta} }}\nWHERE {{ {pattern} }}\n");
    Ok((text, params))
}

//! What the contradictions queue is made of: the contradictions, their
//! sides and ends, and a curator's resolution (shared by the functional
//! kind in `mod.rs` and the attribute kind in `attribute.rs`).

use kip_store::ElementId;
use serde::Serialize;
use serde_json::{Map, Value as Json};

use crate::graph::{Graph, Result};

/// A concept (or, for a higher-order link, a link) a contradiction names.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ContradictionEnd {
    /// `C:…` or `P:…`.
    pub id: String,
    /// The concept's type (empty for a link).
    #[serde(rename = "type")]
    pub type_name: String,
    /// The concept's name (the link's id for a link).
    pub name: String,
}

/// One side of a contradiction: a live link and where it came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ContradictionSide {
    /// The link (`P:…`), or `attribute:<element>/<attribute>#earlier` /
    /// `#current`.
    pub id: String,
    /// A link side's object (`functional`); none for an `attribute` side.
    pub object: Option<ContradictionEnd>,
    /// An `attribute` side's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "JsonValue"))]
    pub value: Option<Json>,
    /// The trace entry (`T:…`) that wrote an `attribute` side's value over
    /// the other's.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub written_by: Option<String>,
    /// `metadata.source` (a string or an array), if any.
    #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
    pub source: Json,
    pub author: Option<String>,
    pub confidence: Option<f64>,
    /// `metadata._created_at` (the engine's).
    pub created_at: Option<String>,
    /// `metadata._updated_at` (the engine's).
    pub updated_at: Option<String>,
}

impl ContradictionSide {
    /// A side `id` with the provenance `meta` records (`source`, `author`,
    /// `confidence` and the engine's times); no object, value or writer yet.
    pub(crate) fn with_provenance(id: String, meta: &Map<String, Json>) -> ContradictionSide {
        let text = |k: &str| meta.get(k).and_then(Json::as_str).map(str::to_owned);
        ContradictionSide {
            id,
            object: None,
            value: None,
            written_by: None,
            source: meta.get("source").cloned().unwrap_or(Json::Null),
            author: text("author"),
            confidence: meta.get("confidence").and_then(Json::as_f64),
            created_at: text("_created_at"),
            updated_at: text("_updated_at"),
        }
    }
}

/// A subject with more than one live object of a functional predicate.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Contradiction {
    /// Stable while the contradiction stands: `functional:<subject>/<predicate>`
    /// or `attribute:<element>/<attribute>`.
    pub id: String,
    /// `functional` or `attribute` (see the module doc).
    pub kind: String,
    /// The subject (`functional`) or the element (`attribute`).
    pub subject: ContradictionEnd,
    /// The functional predicate (empty for `attribute`).
    pub predicate: String,
    /// The attribute two sources disagree on (`attribute` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub attribute: Option<String>,
    /// The live links, oldest first; or the earlier and the current value.
    pub sides: Vec<ContradictionSide>,
}

/// The contradictions found, and how many there are in all.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Contradictions {
    pub total: u64,
    /// The functional predicates looked at.
    pub functional: Vec<String>,
    /// The first `limit`: the functional ones by subject id then predicate,
    /// then the attribute ones by element then attribute.
    pub contradictions: Vec<Contradiction>,
}

/// What to look for.
#[derive(Clone, Debug, Default)]
pub struct ContradictionQuery {
    /// Only subjects of these concept types (all when empty).
    pub types: Vec<String>,
    /// At most this many listed ([`super::MAX_CONTRADICTIONS`] when 0); `total`
    /// counts them all.
    pub limit: usize,
}

/// A curator's resolution: keep one link, retire the others.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Resolve {
    /// The link kept (`P:…`).
    pub keep: String,
    /// The links retired (`P:…`), of the same subject and predicate.
    pub retire: Vec<String>,
    /// Why, in the curator's words (`superseded_reason`).
    pub reason: Option<String>,
    /// Preview only: the write run and rolled back.
    pub dry_run: bool,
}

/// What a resolution ran: its KIP text and parameters, and the engine's
/// response (the changes it made, or would make in a dry run).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Resolved {
    pub command: String,
    #[cfg_attr(feature = "ts", ts(type = "{ [key in string]?: JsonValue }"))]
    pub parameters: Map<String, Json>,
    pub dry_run: bool,
    /// The `execute` response's `result`.
    #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
    pub result: Json,
}

/// A contradiction's subject, named.
pub(crate) fn end(g: &Graph<'_>, e: ElementId) -> Result<ContradictionEnd> {
    let (type_name, name) = match e {
        ElementId::Concept(c) => match g.concept(c)? {
            Some(r) => (g.type_name(r.type_id)?.to_string(), r.name.clone()),
            None => (String::new(), e.to_string()),
        },
        ElementId::Proposition(_) => (String::new(), e.to_string()),
    };
    Ok(ContradictionEnd {
        id: e.to_string(),
        type_name,
        name,
    })
}

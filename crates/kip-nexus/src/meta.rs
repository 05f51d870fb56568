//! META: DESCRIBE and SEARCH (seed 001 §5) with the result shapes of BRIEF §3.
//!
//! The Primer is assembled from `$self`, the Domain concepts, the
//! definitions linked to each domain by `belongs_to_domain`, the per-type
//! counters and the per-domain counters the KML writer keeps — never by
//! scanning instances.
//!
//! A domain's counts say what a `COUNT` query would: `by_type` holds, for
//! each of its key concept types, how many concepts of that type exist
//! (`FIND(COUNT(?x)) WHERE { ?x {type: "T"} }`), `concepts` their sum, and
//! `members` how many concepts are linked to the domain itself by
//! `belongs_to_domain` (its definitions included), and `member_types` those
//! members by type. The first two follow the types' home domain (where the
//! type definitions belong), the last two the instances' own membership:
//! an agent's `Relationships` domain full of `Person`s has no key concept
//! types of its own, yet its `member_types` says `{"Person": 3, …}`.

use kip_lang::ast::{Arg, Describe, DescribeTarget, Search, SearchTarget, Value};
use kip_lang::{ErrorCode, KipError, suggest};
use kip_store::ElementId;
use serde_json::{Map, Value as Json, json};

use crate::graph::{
    BELONGS_TO_DOMAIN, CONCEPT_TYPE, DOMAIN, Graph, OrInternal as _, PROPOSITION_TYPE, Result,
};
use crate::kml::domain_counter;
use crate::{cursor, search, semantic};

/// A META result and its `next_cursor`.
#[derive(Debug)]
pub struct MetaOutput {
    pub result: Json,
    pub next_cursor: Option<String>,
}

fn lit<'a>(source: &str, arg: &'a Arg<String>) -> Result<&'a str> {
    arg.lit().map(String::as_str).ok_or_else(|| {
        KipError::new(ErrorCode::ReferenceError, "a placeholder was not bound")
            .at(source, arg.span())
    })
}

pub fn describe(g: &Graph<'_>, source: &str, d: &Describe, secret: u64) -> Result<MetaOutput> {
    let result = match &d.target {
        DescribeTarget::Primer => primer(g)?,
        DescribeTarget::Domains => {
            let mut domains = Vec::new();
            if let Some(t) = g.type_id(DOMAIN)? {
                for c in g.concepts_of_type(t)? {
                    domains.push(g.element_json(ElementId::Concept(c))?);
                }
            }
            Json::Array(domains)
        }
        DescribeTarget::ConceptTypes | DescribeTarget::PropositionTypes => {
            return type_list(g, source, d, secret);
        }
        DescribeTarget::ConceptType(name) | DescribeTarget::PropositionType(name) => {
            let is_concept = matches!(d.target, DescribeTarget::ConceptType(_));
            type_definition(g, source, name, is_concept)?
        }
    };
    Ok(MetaOutput {
        result,
        next_cursor: None,
    })
}

/// `DESCRIBE CONCEPT TYPES` / `DESCRIBE PROPOSITION TYPES`: one page of
/// the defined names, with a keyed cursor to the next.
fn type_list(g: &Graph<'_>, source: &str, d: &Describe, secret: u64) -> Result<MetaOutput> {
    let names = if matches!(d.target, DescribeTarget::ConceptTypes) {
        g.defined_types()?
    } else {
        g.defined_predicates()?
    };
    let fingerprint = {
        let mut q = d.clone();
        q.limit = None;
        q.cursor = None;
        kip_lang::ast::Command::Describe(q).to_string()
    };
    let offset = match &d.cursor {
        Some(arg) => {
            cursor::decode(secret, &fingerprint, lit(source, arg)?)
                .map_err(|e| e.at(source, arg.span()))?
                .offset
        }
        None => 0,
    };
    let limit = d
        .limit
        .as_ref()
        .and_then(|l| l.lit().copied())
        .unwrap_or(crate::kql::DEFAULT_PAGE);
    let total = names.len() as u64;
    let start = offset.min(total);
    let end = start.saturating_add(limit).min(total);
    let next_cursor = (end < total).then(|| cursor::encode(secret, &fingerprint, end));
    let page: Vec<Json> = names[start as usize..end as usize]
        .iter()
        .map(|n| json!(n))
        .collect();
    Ok(MetaOutput {
        result: Json::Array(page),
        next_cursor,
    })
}

/// `DESCRIBE CONCEPT TYPE "T"` / `DESCRIBE PROPOSITION TYPE "p"`: the
/// definition, or `KIP_3002` with the closest defined names.
fn type_definition(
    g: &Graph<'_>,
    source: &str,
    name: &Arg<String>,
    is_concept: bool,
) -> Result<Json> {
    let meta = if is_concept {
        CONCEPT_TYPE
    } else {
        PROPOSITION_TYPE
    };
    let name_s = lit(source, name)?;
    match g.find_concept_by_names(meta, name_s)? {
        Some(id) => {
            let mut definition = g.element_json(ElementId::Concept(id))?;
            // A concept type's logic properties, in short: what an agent
            // can resolve and which inputs it supplies (BRIEF §8).
            if let Some(attrs) = definition["attributes"].as_object()
                && let Some(summary) = crate::logic::summary(attrs)
            {
                definition["logic_properties"] = summary;
            }
            Ok(definition)
        }
        None => {
            let defined = if is_concept {
                g.defined_types()?
            } else {
                g.defined_predicates()?
            };
            let suggestions = suggest::similar(name_s, defined.iter().map(String::as_str));
            let what = if is_concept {
                "concept type"
            } else {
                "proposition type"
            };
            let list = if is_concept {
                "DESCRIBE CONCEPT TYPES"
            } else {
                "DESCRIBE PROPOSITION TYPES"
            };
            let hint = match suggestions.first() {
                Some(s) => {
                    format!("Did you mean '{s}'? Names are case-sensitive; {list} lists them all.")
                }
                None => format!("{list} lists the defined names."),
            };
            Err(KipError::new(
                ErrorCode::NotFound,
                format!("{what} '{name_s}' is not defined"),
            )
            .with_hint(hint)
            .at(source, name.span())
            .with_suggestions(&suggestions))
        }
    }
}

fn primer(g: &Graph<'_>) -> Result<Json> {
    let identity = match g.find_concept_by_names("Person", "$self")? {
        Some(id) => g.element_json(ElementId::Concept(id))?,
        None => Json::Null,
    };
    let btd = g.predicate_id(BELONGS_TO_DOMAIN)?;
    let definitions = |meta: &str| -> Result<Vec<(String, ElementId)>> {
        let mut out = Vec::new();
        if let Some(t) = g.type_id(meta)? {
            for c in g.concepts_of_type(t)? {
                if let Some(r) = g.concept(c)? {
                    out.push((r.name.clone(), ElementId::Concept(c)));
                }
            }
        }
        Ok(out)
    };
    let concept_types = definitions(CONCEPT_TYPE)?;
    let predicates = definitions(PROPOSITION_TYPE)?;
    let mut domain_map = Vec::new();
    if let Some(domain_type) = g.type_id(DOMAIN)? {
        for d in g.concepts_of_type(domain_type)? {
            let Some(rec) = g.concept(d)? else { continue };
            let domain = ElementId::Concept(d);
            let member = |e: ElementId| -> Result<bool> {
                Ok(match btd {
                    Some(p) => !g.propositions(Some(e), Some(p), Some(domain))?.is_empty(),
                    None => false,
                })
            };
            let mut key_concept_types = Vec::new();
            for (name, e) in &concept_types {
                if member(*e)? {
                    key_concept_types.push(json!(name));
                }
            }
            let mut key_proposition_types = Vec::new();
            for (name, e) in &predicates {
                if member(*e)? {
                    key_proposition_types.push(json!(name));
                }
            }
            let mut by_type = Map::new();
            let mut total = 0u64;
            for name in &key_concept_types {
                let Some(name) = name.as_str() else { continue };
                let n = match g.type_id(name)? {
                    Some(t) => g.store.concept_count_by_type(g.txn, t).kip()?,
                    None => 0,
                };
                by_type.insert(name.to_owned(), json!(n));
                total += n;
            }
            // What is in the domain, by type: its members are the concepts
            // linked to it, whatever domain their types' definitions
            // belong to (a `Person` of `Relationships` is counted there,
            // though `Person` is defined in `CoreSchema`).
            let mut members = 0i64;
            let mut member_types = Map::new();
            for (name, _) in &concept_types {
                if let Some(t) = g.type_id(name)? {
                    let n = g.store.counter(g.txn, &domain_counter(d, t)).kip()?;
                    if n > 0 {
                        member_types.insert(name.clone(), json!(n));
                    }
                    members += n;
                }
            }
            domain_map.push(json!({
                "domain": rec.name,
                "description": rec.attributes.get("description").cloned().unwrap_or(Json::Null),
                "key_concept_types": key_concept_types,
                "key_proposition_types": key_proposition_types,
                "counts": {
                    "concepts": total,
                    "by_type": by_type,
                    "members": members,
                    "member_types": member_types,
                },
            }));
        }
    }
    let total_domains = domain_map.len();
    Ok(json!({
        "identity": identity,
        "domain_map": domain_map,
        "total_domains": total_domains,
        "search_modes": if semantic::serves_meaning(g) { SEARCH_MODES_WITH_MEANING } else { SEARCH_MODES },
        "capabilities": capabilities(g)?,
    }))
}

/// What this engine accepts and where its limits are, for an agent to read
/// before it relies on them (BRIEF §3: `DESCRIBE PRIMER` states
/// `search_modes` and `capabilities`).
fn capabilities(g: &Graph<'_>) -> Result<Json> {
    let embedding = semantic::status(g)?;
    Ok(json!({
        "kip": "v1.0-RC2, with the RC9–RC11 additions",
        "statements": ["FIND", "UPSERT", "UPDATE", "MERGE", "DELETE", "DESCRIBE", "SEARCH", "EXPORT"],
        "features": [
            "predicate variables (?s, ?p, ?o)",
            "multi-key ORDER BY",
            "CURSOR pagination",
            "EXPECT VERSION (KIP_3005 on conflict)",
            "SEARCH MODE and THRESHOLD",
            "dry_run previews",
            "explain (a FIND's plan and why it found nothing)",
            "reason (a write's THINK entry in the trace)",
        ],
        "semantic_search": semantic::serves_meaning(g),
        "embedding": embedding,
        "limits": {
            "find_rows_without_limit": crate::kql::DEFAULT_PAGE,
            "query_rows": crate::kql::ROW_BUDGET,
            "query_steps": crate::kql::WORK_BUDGET,
            "nesting_depth": kip_lang::MAX_DEPTH,
            "search_limit_default": DEFAULT_SEARCH_LIMIT,
            "batch_commands": crate::limits::MAX_BATCH_COMMANDS,
            "request_bytes": crate::limits::MAX_REQUEST_TEXT,
            // A hop range is bounded by the query's steps, not by a count.
            "path_hops": "any range; bounded by query_steps",
            // UPDATE / DELETE LIMIT caps what is written, not what is
            // scanned (RC11 §4.3); a FIND's LIMIT is not capped.
            "update_limit": null,
            "query_timeout": "query_steps (KIP_4001), not wall-clock time",
        },
    }))
}

/// `SEARCH`'s `LIMIT` when none is given.
const DEFAULT_SEARCH_LIMIT: u64 = 10;

/// The search modes a nexus without an embedding model serves (RC10
/// §5.2.1); `DESCRIBE PRIMER` says which it serves.
pub const SEARCH_MODES: &[&str] = &["keyword"];
/// The search modes a nexus with an embedding model serves.
pub const SEARCH_MODES_WITH_MEANING: &[&str] = &["keyword", "semantic", "hybrid"];

/// `SEARCH`: the hits, best first, and a warning when the mode asked for
/// is served by keyword (RC10 §5.2.1: an engine without semantic recall
/// MUST treat `"semantic"` / `"hybrid"` as `"keyword"` rather than fail)
/// or some concepts still wait for their vectors ([`semantic::search`]).
pub fn search_command(g: &Graph<'_>, source: &str, s: &Search) -> Result<(Json, Option<String>)> {
    let term = lit(source, &s.term)?;
    let with_type = s.with_type.as_ref().map(|t| lit(source, t)).transpose()?;
    let propositions = s.target == SearchTarget::Proposition;
    if let (Some(t), Some(arg)) = (with_type, &s.with_type) {
        let known = if propositions {
            g.is_predicate_defined(t)?
        } else {
            g.is_type_defined(t)?
        };
        if !known {
            let e = if propositions {
                crate::schema::unknown_predicate(g, t)?
            } else {
                crate::schema::unknown_type(g, t)?
            };
            return Err(e.at(source, arg.span()));
        }
    }
    let mut mode = None;
    if let Some(arg) = &s.mode {
        match lit(source, arg)? {
            m @ ("keyword" | "semantic" | "hybrid") => mode = Some(m),
            other => {
                return Err(KipError::new(
                    ErrorCode::InvalidValueType,
                    format!("unknown search mode {other:?}; expected \"keyword\", \"semantic\" or \"hybrid\""),
                )
                .with_hint("MODE is \"keyword\", \"semantic\" or \"hybrid\".")
                .at(source, arg.span()));
            }
        }
    }
    let threshold = match &s.threshold {
        None => None,
        Some(Value::Number(n)) if n.as_f64().is_some_and(|x| (0.0..=1.0).contains(&x)) => {
            n.as_f64()
        }
        Some(other) => {
            let shown = other
                .to_json()
                .map_or_else(|| "a placeholder".to_owned(), |j| j.to_string());
            return Err(KipError::new(
                ErrorCode::InvalidValueType,
                format!("THRESHOLD must be a number between 0 and 1, found {shown}"),
            )
            .with_hint("Pass a minimum normalised _score such as 0.75.")
            .at(source, s.span));
        }
    };
    let limit = s
        .limit
        .as_ref()
        .and_then(|l| l.lit().copied())
        .unwrap_or(DEFAULT_SEARCH_LIMIT);
    let query = search::Query {
        propositions,
        term,
        with_type,
        limit: usize::try_from(limit).unwrap_or(usize::MAX),
    };
    let (hits, warning) = semantic::search(g, &query, mode)?;
    let mut out = Vec::new();
    for (e, score) in hits {
        let score = (score * 1000.0).round() / 1000.0;
        if threshold.is_some_and(|t| score < t) {
            break; // hits come best first: the rest score lower still
        }
        let mut obj = g.element_json(e)?;
        if let Some(meta) = obj.get_mut("metadata").and_then(Json::as_object_mut) {
            meta.insert("_score".into(), json!(score));
        }
        out.push(obj);
    }
    Ok((Json::Array(out), warning))
}

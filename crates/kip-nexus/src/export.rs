//! EXPORT (RC9 §5.3, RC10): the elements bound to the target variable by a
//! WHERE block, written as one idempotent UPSERT capsule that reproduces
//! them on any nexus. Read-only (META).
//!
//! The capsule is built as a KIP syntax tree and printed by kip-lang's
//! canonical formatter — the printer `kip export` writes its capsules with —
//! so it always parses back. Concepts come first (type and predicate
//! definitions, then domains, then the rest, each in creation order), then
//! propositions in creation order, which puts a link after every link it is
//! about. Endpoints inside the page are referenced by handle; endpoints
//! outside it as `{type, name}` or, for a proposition, as a nested
//! `(subject, "predicate", object)` clause (link ids are not portable).
//! Reserved `_` metadata is never exported. Pages: LIMIT (default and cap
//! [`DEFAULT_PAGE`](crate::kql::DEFAULT_PAGE)) and an opaque CURSOR.

use std::collections::{HashMap, HashSet};

use kip_lang::ast::*;
use kip_store::{ConceptId, ElementId, PropositionId};
use serde_json::{Map, Value as Json, json};

use crate::cursor;
use crate::graph::{CONCEPT_TYPE, DOMAIN, Graph, PROPOSITION_TYPE, Result};
use crate::kql::{self, DEFAULT_PAGE};

/// The result of an EXPORT and its `next_cursor`.
#[derive(Debug)]
pub struct ExportOutput {
    pub result: Json,
    pub next_cursor: Option<String>,
}

pub fn export(g: &Graph<'_>, source: &str, e: &Export, secret: u64) -> Result<ExportOutput> {
    let (exec, rows) = kql::solve(g, source, &e.where_)?;
    let mut seen = HashSet::new();
    let elements: Vec<ElementId> = rows
        .iter()
        .filter_map(|r| exec.val(r, &e.target.name).element())
        .filter(|el| seen.insert(*el))
        .collect();
    // A cursor is bound to the statement without its LIMIT and CURSOR.
    let mut fingerprint = e.clone();
    fingerprint.limit = None;
    fingerprint.cursor = None;
    let fingerprint = Command::Export(fingerprint).to_string();
    let offset = match &e.cursor {
        Some(arg) => {
            let token = arg.lit().map(String::as_str).unwrap_or_default();
            cursor::decode(secret, &fingerprint, token)
                .map_err(|err| err.at(source, arg.span()))?
                .offset
        }
        None => 0,
    };
    let limit = e
        .limit
        .as_ref()
        .and_then(|l| l.lit().copied())
        .unwrap_or(DEFAULT_PAGE)
        .min(DEFAULT_PAGE);
    let total = elements.len() as u64;
    let start = offset.min(total);
    let end = start.saturating_add(limit).min(total);
    let next_cursor = (end < total).then(|| cursor::encode(secret, &fingerprint, end));
    let page = &elements[start as usize..end as usize];
    let (capsule, concepts, propositions) = capsule(g, page)?;
    Ok(ExportOutput {
        result: json!({"capsule": capsule, "concepts": concepts, "propositions": propositions}),
        next_cursor,
    })
}

/// Definitions first, then domains, then everything else.
fn rank(ty: &str) -> u8 {
    match ty {
        CONCEPT_TYPE => 0,
        PROPOSITION_TYPE => 1,
        DOMAIN => 2,
        _ => 3,
    }
}

/// The page as a capsule: its text and how many concepts and propositions
/// it holds. An empty page is the empty capsule.
fn capsule(g: &Graph<'_>, page: &[ElementId]) -> Result<(String, usize, usize)> {
    let mut concepts: Vec<(u8, ConceptId)> = Vec::new();
    let mut links: Vec<PropositionId> = Vec::new();
    for e in page {
        match *e {
            ElementId::Concept(c) => {
                if let Some(r) = g.concept(c)? {
                    concepts.push((rank(&g.type_name(r.type_id)?), c));
                }
            }
            ElementId::Proposition(p) => links.push(p),
        }
    }
    concepts.sort();
    links.sort();
    if concepts.is_empty() && links.is_empty() {
        return Ok((String::new(), 0, 0));
    }
    let span = Span::default();
    let mut handles: HashMap<ElementId, String> = HashMap::new();
    let mut items = Vec::new();
    for (i, &(_, c)) in concepts.iter().enumerate() {
        let Some(r) = g.concept(c)? else { continue };
        let handle = format!("c{}", i + 1);
        handles.insert(ElementId::Concept(c), handle.clone());
        items.push(UpsertItem::Concept(ConceptBlock {
            handle: Some(Var { name: handle, span }),
            matcher: ConceptMatcher::TypeName {
                ty: Arg::Lit(g.type_name(r.type_id)?.to_string(), span),
                name: Arg::Lit(r.name.clone(), span),
            },
            expect_version: None,
            attributes: object(&r.attributes, false),
            propositions: None,
            metadata: object(&r.metadata, true),
            body: span,
            span,
        }));
    }
    for (i, &p) in links.iter().enumerate() {
        let Some(r) = g.proposition(p)? else { continue };
        let handle = format!("p{}", i + 1);
        let triple = Triple {
            subject: term(g, r.subject, &handles)?,
            predicate: PredicateExpr::Names {
                names: vec![Arg::Lit(g.predicate_name(r.predicate)?.to_string(), span)],
                hops: None,
                span,
            },
            object: term(g, r.object, &handles)?,
        };
        handles.insert(ElementId::Proposition(p), handle.clone());
        items.push(UpsertItem::Proposition(PropositionBlock {
            handle: Some(Var { name: handle, span }),
            matcher: PropositionMatcher::Triple(Box::new(triple)),
            expect_version: None,
            attributes: object(&r.attributes, false),
            metadata: object(&r.metadata, true),
            body: span,
            span,
        }));
    }
    let command = Command::Upsert(Upsert {
        items,
        metadata: None,
        body: span,
        span,
    });
    Ok((format!("{command}\n"), concepts.len(), links.len()))
}

/// A JSON object as an AST object; `None` when empty. Metadata loses the
/// engine's `_` keys: they are the source nexus's bookkeeping.
fn object(map: &Map<String, Json>, metadata: bool) -> Option<Object> {
    let members: Vec<(String, Value)> = map
        .iter()
        .filter(|(k, _)| !(metadata && k.starts_with('_')))
        .map(|(k, v)| (k.clone(), Value::from_json(v, Span::default())))
        .collect();
    (!members.is_empty()).then(|| Object {
        members,
        span: Span::default(),
    })
}

/// An endpoint: a handle inside the page, else `{type, name}` or a nested
/// structural clause.
fn term(g: &Graph<'_>, e: ElementId, handles: &HashMap<ElementId, String>) -> Result<Term> {
    let span = Span::default();
    if let Some(h) = handles.get(&e) {
        return Ok(Term::Var(Var {
            name: h.clone(),
            span,
        }));
    }
    Ok(match e {
        ElementId::Concept(c) => {
            let (ty, name) = match g.concept(c)? {
                Some(r) => (g.type_name(r.type_id)?.to_string(), r.name.clone()),
                None => (String::new(), String::new()),
            };
            Term::Concept(
                ConceptMatcher::TypeName {
                    ty: Arg::Lit(ty, span),
                    name: Arg::Lit(name, span),
                },
                span,
            )
        }
        ElementId::Proposition(p) => {
            let Some(r) = g.proposition(p)? else {
                return Ok(Term::Proposition(
                    PropositionMatcher::Id(Arg::Lit(e.to_string(), span)),
                    span,
                ));
            };
            let triple = Triple {
                subject: term(g, r.subject, handles)?,
                predicate: PredicateExpr::Names {
                    names: vec![Arg::Lit(g.predicate_name(r.predicate)?.to_string(), span)],
                    hops: None,
                    span,
                },
                object: term(g, r.object, handles)?,
            };
            Term::Proposition(PropositionMatcher::Triple(Box::new(triple)), span)
        }
    })
}

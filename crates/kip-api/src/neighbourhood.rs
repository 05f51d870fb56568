//! An element's neighbourhood: its links counted per predicate in each
//! direction, and one bounded page of the links of one predicate.
//!
//! Everything is read from one snapshot, so the counts and the page agree.
//! Counting walks the element's index entries through the engine's read
//! view (keys only, no records); a page decodes only the records it returns. Pages are in index order
//! (by the neighbour's id), which is stable while nothing is written.

use std::collections::BTreeMap;

use kip_lang::{ErrorCode, KipError};
use kip_nexus::ElementId;
use kip_nexus::Graph;
use kip_nexus::Nexus;

use crate::error::ApiError;
use crate::types::{
    Direction, ElementRef, Link, LinkPage, NeighbourhoodRequest, NeighbourhoodResponse,
    PredicateCount,
};

/// Links in one page when the request does not say.
pub const DEFAULT_PAGE: u32 = 50;
/// The largest page a request may ask for.
pub const MAX_PAGE: u32 = 1_000;

pub(crate) fn neighbourhood(
    nexus: &Nexus,
    request: &NeighbourhoodRequest,
) -> Result<NeighbourhoodResponse, ApiError> {
    // Ids are checked before the snapshot is opened: a malformed one is a
    // bad request, not a missing element.
    let target = Target::of(&request.element, "neighbourhood", "element.id")?;
    let limit = request.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
    let offset = request.offset.unwrap_or(0);
    let past = request
        .as_of
        .as_deref()
        .map(|at| nexus.as_of(at))
        .transpose()?;
    let nexus = past.as_ref().map_or(nexus, |v| v.nexus());
    nexus
        .read(|g| {
            let element = target.resolve(g)?;
            let outgoing = count(g, Some(element), None)?;
            let incoming = count(g, None, Some(element))?;
            let page = match &request.predicate {
                None => None,
                Some(predicate) => Some(page(
                    g,
                    element,
                    predicate,
                    request.direction.unwrap_or(Direction::Outgoing),
                    (&outgoing, &incoming),
                    offset,
                    limit,
                )?),
            };
            Ok(NeighbourhoodResponse {
                element: g.element_json(element)?,
                total_outgoing: outgoing.values().sum(),
                total_incoming: incoming.values().sum(),
                outgoing: named_counts(g, &outgoing)?,
                incoming: named_counts(g, &incoming)?,
                page,
            })
        })
        .map_err(ApiError::from)
}

/// An [`ElementRef`] whose id, if it has one, is well-formed.
pub(crate) enum Target<'r> {
    Id(ElementId),
    Concept(&'r str, &'r str),
}

impl<'r> Target<'r> {
    /// Checks the id's form; `path` names the field in a bad-request error.
    pub(crate) fn of(
        element: &'r ElementRef,
        operation: &str,
        path: &str,
    ) -> Result<Target<'r>, ApiError> {
        Ok(match element {
            ElementRef::Id { id } => Target::Id(
                id.parse::<ElementId>()
                    .map_err(|e| ApiError::bad_request(operation, e).with_data("path", path))?,
            ),
            ElementRef::Concept { ty, name } => Target::Concept(ty, name),
        })
    }

    /// The element in this snapshot; `KIP_3002` when there is none.
    pub(crate) fn resolve(&self, g: &Graph<'_>) -> kip_nexus::Result<ElementId> {
        let element = match *self {
            Target::Id(id) => id,
            Target::Concept(ty, name) => match g.find_concept_by_names(ty, name)? {
                Some(c) => ElementId::Concept(c),
                None => {
                    return Err(KipError::new(
                        ErrorCode::NotFound,
                        format!("no concept {{type: \"{ty}\", name: \"{name}\"}} exists"),
                    ));
                }
            },
        };
        if !g.exists(element)? {
            return Err(KipError::new(
                ErrorCode::NotFound,
                format!("element {element} does not exist"),
            ));
        }
        Ok(element)
    }
}

/// The id of a defined predicate; `KIP_2001` with suggestions otherwise.
pub(crate) fn predicate_id(g: &Graph<'_>, predicate: &str) -> kip_nexus::Result<u32> {
    match g.predicate_id(predicate)? {
        Some(p) => Ok(p),
        None => {
            let suggestions = kip_lang::suggest::similar(
                predicate,
                g.defined_predicates()?.iter().map(String::as_str),
            );
            Err(KipError::new(
                ErrorCode::TypeMismatch,
                format!("predicate `{predicate}` is not defined"),
            )
            .with_suggestions(&suggestions))
        }
    }
}

/// Links per predicate id where the element is the subject (`s`) or the object (`o`).
fn count(
    g: &Graph<'_>,
    s: Option<ElementId>,
    o: Option<ElementId>,
) -> kip_nexus::Result<BTreeMap<u32, u64>> {
    let mut counts = BTreeMap::new();
    for (_, _, p, _) in g.propositions(s, None, o)? {
        *counts.entry(p).or_insert(0) += 1;
    }
    Ok(counts)
}

fn named_counts(
    g: &Graph<'_>,
    counts: &BTreeMap<u32, u64>,
) -> kip_nexus::Result<Vec<PredicateCount>> {
    let mut out = Vec::with_capacity(counts.len());
    for (&p, &count) in counts {
        out.push(PredicateCount {
            predicate: g.predicate_name(p)?.to_string(),
            count,
        });
    }
    out.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.predicate.cmp(&b.predicate))
    });
    Ok(out)
}

fn page(
    g: &Graph<'_>,
    element: ElementId,
    predicate: &str,
    direction: Direction,
    (outgoing, incoming): (&BTreeMap<u32, u64>, &BTreeMap<u32, u64>),
    offset: u64,
    limit: u32,
) -> kip_nexus::Result<LinkPage> {
    let p = predicate_id(g, predicate)?;
    let (s, o, counts) = match direction {
        Direction::Outgoing => (Some(element), None, outgoing),
        Direction::Incoming => (None, Some(element), incoming),
    };
    let total = counts.get(&p).copied().unwrap_or(0);
    let skip = usize::try_from(offset).unwrap_or(usize::MAX);
    let mut links = Vec::new();
    for (id, subject, _, object) in g
        .propositions(s, Some(p), o)?
        .into_iter()
        .skip(skip)
        .take(limit as usize)
    {
        let neighbour = match direction {
            Direction::Outgoing => object,
            Direction::Incoming => subject,
        };
        links.push(Link {
            proposition: g.element_json(ElementId::Proposition(id))?,
            neighbour: g.element_json(neighbour)?,
        });
    }
    let end = offset.saturating_add(links.len() as u64);
    Ok(LinkPage {
        predicate: predicate.to_owned(),
        direction,
        offset,
        limit,
        total,
        links,
        next_offset: (end < total).then_some(end),
    })
}

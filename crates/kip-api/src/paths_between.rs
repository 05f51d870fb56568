//! The shortest paths between two elements ("find paths" in the graph):
//! a breadth-first search over the proposition indexes of one snapshot.
//!
//! Every element is a node and every proposition a link, so a path may pass
//! through a proposition that other propositions are about. Links are walked
//! both ways unless the request asks for `directed`. The search is bounded
//! three ways: by `max_hops`, by the number of paths returned, and by a
//! budget of links examined (a hub with a million links must not hold the
//! read transaction for long); the answer says when a bound cut it short.
//!
//! Not to be confused with `paths.rs`, which is about folders on disk.

use std::collections::HashMap;

use kip_nexus::{ElementId, Graph, Nexus, PropositionId};

use crate::error::ApiError;
use crate::neighbourhood::{Target, predicate_id};
use crate::types::{GraphPath, PathsRequest, PathsResponse};

/// Hops looked for when the request does not say.
pub const DEFAULT_MAX_HOPS: u32 = 4;
/// The longest path a request may ask for.
pub const MAX_HOPS: u32 = 8;
/// Paths returned when the request does not say.
pub const DEFAULT_PATHS: u32 = 10;
/// The most paths a request may ask for.
pub const MAX_PATHS: u32 = 100;
/// Links examined before the search stops and reports `truncated`.
pub const LINK_BUDGET: u64 = 200_000;

pub(crate) fn paths(nexus: &Nexus, request: &PathsRequest) -> Result<PathsResponse, ApiError> {
    let from = Target::of(&request.from, "paths", "from.id")?;
    let to = Target::of(&request.to, "paths", "to.id")?;
    let max_hops = request
        .max_hops
        .unwrap_or(DEFAULT_MAX_HOPS)
        .clamp(1, MAX_HOPS);
    let limit = request.limit.unwrap_or(DEFAULT_PATHS).clamp(1, MAX_PATHS) as usize;
    let directed = request.directed.unwrap_or(false);
    nexus
        .read(|g| {
            let from = from.resolve(g)?;
            let to = to.resolve(g)?;
            let predicates = match &request.predicates {
                Some(names) if !names.is_empty() => Some(
                    names
                        .iter()
                        .map(|p| predicate_id(g, p))
                        .collect::<kip_nexus::Result<Vec<u32>>>()?,
                ),
                _ => None,
            };
            let search = Search {
                g,
                predicates: predicates.as_deref(),
                directed,
            };
            let (levels, examined, budget_hit) = search.levels(from, to, max_hops)?;
            let found = levels.dist.contains_key(&to);
            let mut paths = Vec::new();
            let complete = if found {
                levels.collect(from, to, limit, &mut paths)
            } else {
                true
            };
            let elements = elements_of(g, &paths)?;
            Ok(PathsResponse {
                hops: found.then(|| levels.dist[&to]),
                paths: paths.into_iter().map(GraphPath::from).collect(),
                elements,
                truncated: budget_hit || !complete,
                examined,
            })
        })
        .map_err(ApiError::from)
}

struct Search<'g, 't> {
    g: &'g Graph<'t>,
    predicates: Option<&'g [u32]>,
    directed: bool,
}

/// What the breadth-first search learnt: each reached element's distance
/// from the start and every `(previous element, link)` that reaches it at
/// that distance.
#[derive(Default)]
struct Levels {
    dist: HashMap<ElementId, u32>,
    previous: HashMap<ElementId, Vec<(ElementId, PropositionId)>>,
}

impl Search<'_, '_> {
    /// Links at `e`: `(link, the element at its other end)`.
    fn links(&self, e: ElementId) -> kip_nexus::Result<Vec<(PropositionId, ElementId)>> {
        let mut out = Vec::new();
        let mut walk = |p: Option<u32>| -> kip_nexus::Result<()> {
            for (id, _, _, o) in self.g.propositions(Some(e), p, None)? {
                out.push((id, o));
            }
            if !self.directed {
                for (id, s, _, _) in self.g.propositions(None, p, Some(e))? {
                    out.push((id, s));
                }
            }
            Ok(())
        };
        match self.predicates {
            None => walk(None)?,
            Some(ps) => {
                for &p in ps {
                    walk(Some(p))?;
                }
            }
        }
        Ok(out)
    }

    /// Searches level by level until `to` is reached (the whole level is
    /// finished, so every shortest path is kept), `max_hops` is reached,
    /// nothing new is found, or the budget runs out.
    fn levels(
        &self,
        from: ElementId,
        to: ElementId,
        max_hops: u32,
    ) -> kip_nexus::Result<(Levels, u64, bool)> {
        let mut levels = Levels::default();
        levels.dist.insert(from, 0);
        let mut frontier = vec![from];
        let mut examined = 0u64;
        for depth in 1..=max_hops {
            if from == to {
                break;
            }
            let mut next = Vec::new();
            for &node in &frontier {
                for (link, other) in self.links(node)? {
                    examined += 1;
                    if examined > LINK_BUDGET {
                        return Ok((levels, examined - 1, true));
                    }
                    match levels.dist.get(&other) {
                        None => {
                            levels.dist.insert(other, depth);
                            levels.previous.insert(other, vec![(node, link)]);
                            next.push(other);
                        }
                        Some(&d) if d == depth => {
                            levels.previous.entry(other).or_default().push((node, link));
                        }
                        Some(_) => {}
                    }
                }
            }
            if levels.dist.contains_key(&to) || next.is_empty() {
                break;
            }
            frontier = next;
        }
        Ok((levels, examined, false))
    }
}

/// One path while it is built backwards from `to`.
struct Walk {
    nodes: Vec<ElementId>,
    links: Vec<PropositionId>,
}

impl From<Walk> for GraphPath {
    fn from(w: Walk) -> GraphPath {
        GraphPath {
            nodes: w.nodes.iter().map(ToString::to_string).collect(),
            links: w
                .links
                .iter()
                .map(|&l| ElementId::Proposition(l).to_string())
                .collect(),
        }
    }
}

impl Levels {
    /// Every shortest path from `from` to `to`, up to `limit` of them, by
    /// walking the recorded predecessors back from `to`. Returns whether
    /// all of them fit.
    fn collect(&self, from: ElementId, to: ElementId, limit: usize, out: &mut Vec<Walk>) -> bool {
        // Depth-first over the predecessor lists; each stack entry is a
        // partial path from some element back to `to` (reversed at the end).
        let mut stack = vec![(to, Vec::new(), Vec::new())];
        while let Some((node, nodes, links)) = stack.pop() {
            let mut nodes: Vec<ElementId> = nodes;
            nodes.push(node);
            if node == from {
                if out.len() == limit {
                    return false;
                }
                let mut links: Vec<PropositionId> = links;
                nodes.reverse();
                links.reverse();
                out.push(Walk { nodes, links });
                continue;
            }
            // Pushed in reverse so paths come out in discovery order.
            for &(prev, link) in self.previous.get(&node).into_iter().flatten().rev() {
                let mut l = links.clone();
                l.push(link);
                stack.push((prev, nodes.clone(), l));
            }
        }
        true
    }
}

/// The full objects of every element on the paths, each once, in order of
/// first appearance.
fn elements_of(g: &Graph<'_>, paths: &[Walk]) -> kip_nexus::Result<Vec<serde_json::Value>> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for p in paths {
        let links = p.links.iter().map(|&l| ElementId::Proposition(l));
        for e in p.nodes.iter().copied().chain(links) {
            if seen.insert(e) {
                out.push(g.element_json(e)?);
            }
        }
    }
    Ok(out)
}

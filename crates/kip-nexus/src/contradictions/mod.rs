//! Contradictions (issue 31 §4): a predicate whose `$PropositionType`
//! definition says `functional: true` holds at most one object per subject
//! ("born_in", "has_birth_date"); a subject with two or more live links
//! of it is a contradiction, listed with every side's provenance for a
//! curator (or a `$system` agent) to resolve.
//!
//! A link is live unless its metadata says `superseded: true`: RC11 keeps
//! an evolved fact as history (Appendix 1, A1.2: `superseded`,
//! `superseded_by`, `superseded_at`) instead of deleting it, and those
//! links are no side of a contradiction. Resolving keeps one side and
//! retires the others that way: one `UPDATE` text run by the engine
//! through `execute` (so it is previewed by a dry run, traced, and
//! revertible from the trace like any write) sets on each retired link
//! `superseded: true`, `superseded_by` (the kept link), `superseded_at`
//! (now) and `superseded_reason` (the curator's words, an extension of
//! KIP Explorer), and on the kept link `supersedes` (the retired ids,
//! added to any it already had).
//!
//! The second kind, attribute values that conflict between sources on the
//! same element, is found in the trace (`contradictions/attribute.rs`): kind `attribute`,
//! its sides the earlier and the current value.

use std::collections::BTreeMap;

use kip_lang::{ErrorCode, KipError};
use kip_store::{ElementId, PropositionId};
use serde_json::{Map, Value as Json};

mod attribute;
mod model;

pub(crate) use model::end;
pub use model::{
    Contradiction, ContradictionEnd, ContradictionQuery, ContradictionSide, Contradictions,
    Resolve, Resolved,
};

use crate::execute::Context;
use crate::graph::{FieldKind, Graph, PROPOSITION_TYPE, Result};
use crate::request::ExecuteKip;

/// The most contradictions one call lists.
pub const MAX_CONTRADICTIONS: usize = 10_000;

/// The attribute of a `$PropositionType` that makes it functional.
pub const FUNCTIONAL: &str = "functional";

/// The predicates whose definition says `functional: true`, by id.
fn functional_predicates(g: &Graph<'_>) -> Result<Vec<(u32, String)>> {
    let Some(meta) = g.type_id(PROPOSITION_TYPE)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for id in g.concepts_of_type(meta)? {
        let Some(def) = g.concept(id)? else { continue };
        if def.attributes.get(FUNCTIONAL) == Some(&Json::Bool(true))
            && let Some(p) = g.predicate_id(&def.name)?
        {
            out.push((p, def.name.clone()));
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(out)
}

/// Whether the link's metadata says it is history (`superseded: true`).
fn superseded(g: &Graph<'_>, id: PropositionId) -> Result<bool> {
    // A scanned link's metadata key is read from its bytes, undecoded.
    g.scan_link(id)?;
    let v = g.proposition_field(id, FieldKind::Metadata, "superseded")?;
    Ok(v == Some(Json::Bool(true)))
}

/// The contradictions of `g` (see the module doc).
pub fn contradictions(g: &Graph<'_>, query: &ContradictionQuery) -> Result<Contradictions> {
    let predicates = functional_predicates(g)?;
    let wanted = g.wanted_types(&query.types)?;
    let limit = match query.limit {
        0 => MAX_CONTRADICTIONS,
        n => n.min(MAX_CONTRADICTIONS),
    };
    // No record ever held a `superseded` key: every link is live, and no
    // record needs reading to say so.
    let history = g.key_id("superseded")?.is_some();
    // Per subject, then predicate: the live links (from the index alone
    // unless a subject has two or more, the rare case worth a record read).
    let mut found: BTreeMap<(ElementId, String), Vec<(PropositionId, ElementId)>> = BTreeMap::new();
    for (p, name) in &predicates {
        let mut by_subject: BTreeMap<ElementId, Vec<(PropositionId, ElementId)>> = BTreeMap::new();
        for (id, s, _, o) in g.propositions(None, Some(*p), None)? {
            by_subject.entry(s).or_default().push((id, o));
        }
        for (s, mut links) in by_subject.into_iter().filter(|(_, l)| l.len() > 1) {
            if let Some(w) = &wanted {
                let of_type = match s {
                    ElementId::Concept(c) => g.concept(c)?.is_some_and(|r| w.contains(&r.type_id)),
                    ElementId::Proposition(_) => false,
                };
                if !of_type {
                    continue;
                }
            }
            let mut live = Vec::with_capacity(links.len());
            for link in links.drain(..) {
                if !(history && superseded(g, link.0)?) {
                    live.push(link);
                }
            }
            if live.len() > 1 {
                found.insert((s, name.clone()), live);
            }
        }
    }
    g.clear_scanned();
    let attributes = attribute::attribute_contradictions(g, wanted.as_ref(), None)?;
    let mut out = Contradictions {
        total: (found.len() + attributes.len()) as u64,
        functional: predicates.into_iter().map(|(_, n)| n).collect(),
        contradictions: Vec::new(),
    };
    for ((s, predicate), mut links) in found.into_iter().take(limit) {
        links.sort_by_key(|l| l.0);
        let mut sides = Vec::with_capacity(links.len());
        for (id, o) in links {
            sides.push(side(g, id, o)?);
        }
        out.contradictions.push(Contradiction {
            id: format!("functional:{s}/{predicate}"),
            kind: "functional".to_owned(),
            subject: end(g, s)?,
            predicate,
            attribute: None,
            sides,
        });
    }
    let room = limit - out.contradictions.len();
    out.contradictions.extend(attributes.into_iter().take(room));
    Ok(out)
}

fn side(g: &Graph<'_>, id: PropositionId, object: ElementId) -> Result<ContradictionSide> {
    let record = g.proposition(id)?;
    let none = Map::new();
    let meta = record.as_ref().map_or(&none, |r| &r.metadata);
    Ok(ContradictionSide {
        object: Some(end(g, object)?),
        ..ContradictionSide::with_provenance(ElementId::Proposition(id).to_string(), meta)
    })
}

fn bad(message: String, hint: &str) -> KipError {
    KipError::new(ErrorCode::InvalidSyntax, message).with_hint(hint)
}

const HINT: &str = "Keep one side of a contradiction that `kip contradictions` lists and retire the others: links (`P:…`) of one subject and predicate.";

/// The link `id` names, as `(id, subject, predicate, object)`, checked
/// live and existing.
fn live_link(g: &Graph<'_>, id: &str) -> Result<(PropositionId, ElementId, u32)> {
    let Ok(ElementId::Proposition(p)) = id.parse::<ElementId>() else {
        return Err(bad(format!("{id:?} is not a link id"), HINT));
    };
    let Some(r) = g.proposition(p)? else {
        return Err(
            KipError::new(ErrorCode::NotFound, format!("{id} is not in the nexus")).with_hint(HINT),
        );
    };
    if r.metadata.get("superseded") == Some(&Json::Bool(true)) {
        return Err(bad(
            format!("{id} is already superseded (history, not a side of a contradiction)"),
            HINT,
        ));
    }
    Ok((p, r.subject, r.predicate))
}

/// The `UPDATE` text and parameters of `r`, checked against `g`.
fn resolution(g: &Graph<'_>, r: &Resolve, now: &str) -> Result<(String, Map<String, Json>)> {
    let (keep, subject, predicate) = live_link(g, &r.keep)?;
    if r.retire.is_empty() {
        return Err(bad("nothing to retire".to_owned(), HINT));
    }
    let mut retired: Vec<String> = Vec::new();
    for id in &r.retire {
        let (p, s, pred) = live_link(g, id)?;
        if p == keep {
            return Err(bad(format!("{id} is both kept and retired"), HINT));
        }
        if s != subject || pred != predicate {
            return Err(bad(
                format!(
                    "{id} links {s} by `{}`, not {subject} by `{}` as {} does",
                    g.predicate_name(pred)?,
                    g.predicate_name(predicate)?,
                    r.keep
                ),
                HINT,
            ));
        }
        let id = ElementId::Proposition(p).to_string();
        if !retired.contains(&id) {
            retired.push(id);
        }
    }
    let reason = r
        .reason
        .clone()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| {
            format!(
                "The curator kept {} as the one {} of {subject}.",
                r.keep,
                g.predicate_name(predicate)
                    .map(|p| p.to_string())
                    .unwrap_or_default()
            )
        });
    // The kept link's `supersedes`: what it had, then the retired ids.
    let mut supersedes: Vec<Json> = match g
        .proposition(keep)?
        .and_then(|k| k.metadata.get("supersedes").cloned())
    {
        Some(Json::Array(a)) => a,
        Some(v @ Json::String(_)) => vec![v],
        _ => Vec::new(),
    };
    for id in &retired {
        if !supersedes.iter().any(|s| s.as_str() == Some(id)) {
            supersedes.push(Json::from(id.as_str()));
        }
    }
    let supersedes = if supersedes.len() == 1 {
        supersedes.remove(0)
    } else {
        Json::Array(supersedes)
    };
    let keep_id = ElementId::Proposition(keep).to_string();
    let mut params = Map::new();
    params.insert("keep".into(), Json::from(keep_id.as_str()));
    params.insert("now".into(), Json::from(now));
    params.insert("reason".into(), Json::from(reason));
    params.insert("supersedes".into(), supersedes);
    let mut text = String::new();
    for (i, id) in retired.iter().enumerate() {
        params.insert(format!("retire{i}"), Json::from(id.as_str()));
        text += &format!(
            "UPDATE ?old\nSET METADATA {{ superseded: true, superseded_by: :keep, superseded_at: :now, superseded_reason: :reason }}\nWHERE {{ ?old (id: :retire{i}) }}\n\n"
        );
    }
    text += "UPDATE ?kept\nSET METADATA { supersedes: :supersedes }\nWHERE { ?kept (id: :keep) }\n";
    Ok((text, params))
}

impl crate::nexus::Nexus {
    /// The contradictions now (see the module doc).
    pub fn contradictions(&self, query: &ContradictionQuery) -> Result<Contradictions> {
        self.read(|g| contradictions(g, query))
    }

    /// Keeps `r.keep` and retires `r.retire` (see the module doc), as
    /// `ctx`'s write: checked first (nothing is written on a bad id), then
    /// one text run through [`Nexus::execute`](crate::nexus::Nexus), a dry
    /// run when `r.dry_run`.
    pub fn resolve_contradiction(&self, r: &Resolve, ctx: &Context) -> Result<Resolved> {
        let now = crate::clock::now();
        let (command, parameters) = self.read(|g| {
            if attribute::is_attribute_side(&r.keep) {
                attribute::attribute_resolution(g, r, &now)
            } else {
                resolution(g, r, &now)
            }
        })?;
        let request = ExecuteKip {
            command: Some(command.clone()),
            parameters: Some(parameters.clone()),
            dry_run: Some(r.dry_run),
            reason: (!r.dry_run)
                .then(|| {
                    parameters
                        .get("reason")
                        .and_then(Json::as_str)
                        .map(str::to_owned)
                })
                .flatten(),
            ..ExecuteKip::default()
        };
        let mut response = self.execute(&request, ctx);
        if let Some(e) = response.get_mut("error") {
            return Err(serde_json::from_value(e.take()).unwrap_or_else(|e| {
                KipError::new(
                    ErrorCode::InternalError,
                    format!("an unreadable error: {e}"),
                )
            }));
        }
        Ok(Resolved {
            command,
            parameters,
            dry_run: r.dry_run,
            result: response
                .get_mut("result")
                .map(Json::take)
                .unwrap_or(Json::Null),
        })
    }
}

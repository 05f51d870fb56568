//! The recall simulator (issue 31 §8): "what would the agent recall for
//! X?" — the SEARCH an agent would run for `X` (the same ranking, in the
//! same default mode: hybrid where the nexus searches by meaning, else
//! keyword), each hit with the parts of its score and the one-hop context
//! an agent typically loads next (its links, both directions, bounded),
//! and the curator's two actions on a hit, each one traced KIP `UPDATE`
//! that the Trace view can revert:
//!
//! - **pin** sets `metadata.pinned: true` (the key decay triage's pin
//!   sets too);
//! - **demote** multiplies `metadata.memory_strength` (0.7 when unset,
//!   the agent guide's default) by a factor below 1.
//!
//! What they do to ranking, honestly: SEARCH's ranking (BM25, cosine and
//! their fusion) reads neither `pinned` nor `memory_strength` today, so
//! neither action moves a hit in this list. Demote lowers the strength the
//! health report's "fading" list and an agent's decay sweep read (a memory
//! below 0.05 is skipped by the sweep the agent guide gives); pin marks
//! the memory as one the curator wants kept.
//!
//! The simulation is not itself recorded as a read: it is the curator
//! asking, not an agent recalling, and must not heat the graph.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json, json};

use kip_lang::{ErrorCode, KipError};
use kip_store::ElementId;

use crate::execute::Context;
use crate::graph::{Graph, Result};
use crate::nexus::Nexus;
use crate::request::ExecuteKip;
use crate::trace::TraceFilter;

/// The default and largest number of hits.
pub const DEFAULT_RECALL: usize = 10;
pub const MAX_RECALL: usize = 100;
/// The most links of a hit's context (outgoing first, then incoming).
pub const MAX_CONTEXT: usize = 12;
/// Demote's default factor.
pub const DEFAULT_DEMOTE_FACTOR: f64 = 0.5;
/// `memory_strength` when a memory has none (the agent guide's default).
pub const DEFAULT_STRENGTH: f64 = 0.7;

/// What to recall.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct RecallQuery {
    /// What the agent would search for.
    pub text: String,
    /// `keyword`, `semantic` or `hybrid`; absent: SEARCH's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub mode: Option<String>,
    /// At most this many hits (default 10, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub limit: Option<usize>,
}

/// The parts of a hit's score.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ScoreParts {
    /// The keyword (BM25) score, normalised to 0–1, if the keyword ranking
    /// found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub keyword: Option<f64>,
    /// The meaning (cosine) score, 0–1, if the meaning ranking found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub semantic: Option<f64>,
    /// The fused score (hybrid only): `1 − (1 − keyword) × (1 − semantic)`
    /// or reciprocal-rank fusion (`KIP_SEARCH_FUSION=rrf`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub fused: Option<f64>,
    /// Hybrid's exact-name boost: the name or an alias equals the query,
    /// so the hit scores 1. (Keyword ranking's own bonus for a name equal
    /// to the query is inside `keyword`.)
    pub exact_name: bool,
}

/// One element a hit links to.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ContextLink {
    /// The link, `P:…`.
    pub link: String,
    pub predicate: String,
    /// `out` (the hit is the subject) or `in`.
    pub direction: String,
    /// The other end: `{id, type, name}` (a link as an end: `{id}`).
    #[cfg_attr(
        feature = "ts",
        ts(type = "{ id: string; type?: string; name?: string }")
    )]
    pub other: Json,
}

/// One hit, best first.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Recalled {
    pub id: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub name: String,
    /// The `_score` SEARCH gives it (rounded as SEARCH rounds).
    pub score: f64,
    pub parts: ScoreParts,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub memory_strength: Option<f64>,
    pub pinned: bool,
    pub context: Vec<ContextLink>,
    /// Whether it has more links than `context` lists.
    pub context_more: bool,
}

/// What the agent would recall.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Recall {
    /// The SEARCH an agent would send for it.
    pub search: String,
    /// The mode that ranked the hits.
    pub mode: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub warning: Option<String>,
    pub results: Vec<Recalled>,
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

impl Nexus {
    /// What an agent's SEARCH for `q.text` would recall (see the module
    /// doc). Bad input (an empty text, an unknown mode) is an error.
    pub fn recall(&self, q: &RecallQuery) -> Result<Recall> {
        let text = q.text.trim();
        if text.is_empty() {
            return Err(KipError::new(
                ErrorCode::InvalidSyntax,
                "nothing to recall: the text is empty",
            )
            .with_hint("Give the words an agent would search for, e.g. \"headache\"."));
        }
        let mode = match q.mode.as_deref() {
            None => None,
            Some(m @ ("keyword" | "semantic" | "hybrid")) => Some(m),
            Some(other) => {
                return Err(KipError::new(
                    ErrorCode::InvalidValueType,
                    format!("unknown search mode {other:?}; expected \"keyword\", \"semantic\" or \"hybrid\""),
                )
                .with_hint("Leave the mode out for SEARCH's default."));
            }
        };
        let limit = q.limit.unwrap_or(DEFAULT_RECALL).clamp(1, MAX_RECALL);
        if mode != Some("keyword") && self.searches_by_meaning() {
            // As a SEARCH does: recent writes become searchable by meaning.
            let _ = self.catch_up_vectors(crate::semantic::SEARCH_CATCH_UP);
        }
        self.read(|g| {
            let query = crate::search::Query {
                propositions: false,
                term: text,
                with_type: None,
                limit,
            };
            let served = crate::semantic::search_scored(g, &query, mode)?;
            let mut results = Vec::new();
            for hit in served.hits {
                if let Some(r) = recalled(g, &hit, served.mode)? {
                    results.push(r);
                }
            }
            let mode_clause = mode.map(|m| format!(" MODE {m:?}")).unwrap_or_default();
            Ok(Recall {
                search: format!("SEARCH CONCEPT {text:?}{mode_clause} LIMIT {limit}"),
                mode: served.mode.to_owned(),
                warning: served.warning,
                results,
            })
        })
    }
}

fn recalled(g: &Graph<'_>, hit: &crate::semantic::Scored, mode: &str) -> Result<Option<Recalled>> {
    let ElementId::Concept(c) = hit.id else {
        return Ok(None);
    };
    let Some(rec) = g.concept(c)? else {
        return Ok(None);
    };
    let (context, context_more) = context_of(g, hit.id)?;
    Ok(Some(Recalled {
        id: hit.id.to_string(),
        type_name: g.type_name(rec.type_id)?.to_string(),
        name: rec.name.clone(),
        score: round(hit.score),
        parts: ScoreParts {
            keyword: hit.keyword.map(round),
            semantic: hit.semantic.map(round),
            fused: (mode == "hybrid").then(|| round(hit.score)),
            exact_name: hit.exact,
        },
        memory_strength: rec.metadata.get("memory_strength").and_then(Json::as_f64),
        pinned: rec.metadata.get("pinned").and_then(Json::as_bool) == Some(true),
        context,
        context_more,
    }))
}

/// The hit's links: outgoing first, then incoming, at most
/// [`MAX_CONTEXT`] in all.
fn context_of(g: &Graph<'_>, e: ElementId) -> Result<(Vec<ContextLink>, bool)> {
    let (outgoing, more_out) = g.links_of(e, true, MAX_CONTEXT)?;
    let room = MAX_CONTEXT - outgoing.len();
    let (incoming, more_in) = g.links_of(e, false, room)?;
    let mut out = Vec::new();
    for (links, dir) in [(outgoing, "out"), (incoming, "in")] {
        for (p, s, pred, o) in links {
            let other = if dir == "out" { o } else { s };
            out.push(ContextLink {
                link: ElementId::Proposition(p).to_string(),
                predicate: g.predicate_name(pred)?.to_string(),
                direction: dir.to_owned(),
                other: end_json(g, other)?,
            });
        }
    }
    Ok((out, more_out || more_in))
}

fn end_json(g: &Graph<'_>, e: ElementId) -> Result<Json> {
    Ok(match e {
        ElementId::Concept(c) => match g.concept(c)? {
            Some(r) => {
                json!({"id": e.to_string(), "type": &*g.type_name(r.type_id)?, "name": r.name})
            }
            None => json!({"id": e.to_string()}),
        },
        ElementId::Proposition(_) => json!({"id": e.to_string()}),
    })
}

/// A curator's action on a recalled concept.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct RecallAction {
    /// `pin` or `demote`.
    pub action: String,
    /// The concept, `C:…`.
    pub id: String,
    /// Demote's factor, above 0 and below 1 (default 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub factor: Option<f64>,
    /// Preview only: the engine's dry run, nothing changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub dry_run: Option<bool>,
}

/// What an action did (or would do).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RecallActionOutcome {
    /// The KIP command, with its parameters written in.
    pub command: String,
    pub dry_run: bool,
    /// The engine's result (with `changes`: before and after).
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub result: Json,
    /// The write's trace entry (`T:…`), when committed: reverting it
    /// undoes the action.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub entry: Option<String>,
}

const PIN: &str = "UPDATE ?c SET METADATA { pinned: true } WHERE { ?c {id: :id} }";
const DEMOTE: &str = "UPDATE ?c SET METADATA { memory_strength: CLAMP(MUL(COALESCE(?c.metadata.memory_strength, :default), :factor), 0.0, 1.0) } WHERE { ?c {id: :id} }";

impl RecallAction {
    /// The action's KIP command and parameters; bad input is an error.
    pub fn command(&self) -> Result<(&'static str, Map<String, Json>)> {
        if !matches!(self.id.parse::<ElementId>(), Ok(ElementId::Concept(_))) {
            return Err(KipError::new(
                ErrorCode::InvalidSyntax,
                format!("`{}` is not a concept id", self.id),
            )
            .with_hint("Pin or demote a recalled concept by its id, e.g. C:12."));
        }
        let mut params = Map::new();
        params.insert("id".into(), json!(self.id));
        let text = match self.action.as_str() {
            "pin" => PIN,
            "demote" => {
                let factor = self.factor.unwrap_or(DEFAULT_DEMOTE_FACTOR);
                if !(factor > 0.0 && factor < 1.0) {
                    return Err(KipError::new(
                        ErrorCode::InvalidValueType,
                        format!("a demote factor must be above 0 and below 1, found {factor}"),
                    )
                    .with_hint("0.5 halves the memory's strength."));
                }
                params.insert("factor".into(), json!(factor));
                params.insert("default".into(), json!(DEFAULT_STRENGTH));
                DEMOTE
            }
            other => {
                return Err(KipError::new(
                    ErrorCode::InvalidSyntax,
                    format!("`{other}` is not a recall action"),
                )
                .with_hint("Use pin or demote."));
            }
        };
        Ok((text, params))
    }
}

impl Nexus {
    /// Pins or demotes a concept (see the module doc) as `ctx`'s traced
    /// write, or previews it (`dry_run`). A KIP error (no such concept) is
    /// an error; nothing changes then.
    pub fn recall_action(&self, a: &RecallAction, ctx: &Context) -> Result<RecallActionOutcome> {
        let (text, params) = a.command()?;
        let target: ElementId = a.id.parse().map_err(|_| {
            KipError::new(
                ErrorCode::InvalidSyntax,
                format!("`{}` is not a concept id", a.id),
            )
        })?;
        if !self.read(|g| g.exists(target))? {
            return Err(KipError::new(
                ErrorCode::NotFound,
                format!("there is no concept {}", a.id),
            )
            .with_hint(
                "It may have been deleted or merged since the list was made; recall again.",
            ));
        }
        let dry_run = a.dry_run == Some(true);
        let before = self.last_trace_id()?;
        let mut request = ExecuteKip::command(text).with_parameters(params.clone());
        request.reason = Some(format!(
            "The curator chose to {} {} from the recall list.",
            a.action, a.id
        ));
        if dry_run {
            request = request.dry_run();
        }
        let mut response = self.execute(&request, ctx);
        if let Some(e) = response.get("error") {
            let e: KipError = serde_json::from_value(e.clone()).map_err(|err| {
                KipError::new(
                    ErrorCode::InternalError,
                    format!("an unreadable error: {err}"),
                )
            })?;
            return Err(e);
        }
        let result = response
            .get_mut("result")
            .map(Json::take)
            .unwrap_or(Json::Null);
        let entry = if dry_run {
            None
        } else {
            // The first command entry of this originator since the write
            // began: the write's own (folded reads flushed with it come
            // first, and carry no `command` change).
            let filter = TraceFilter {
                originator: ctx
                    .originator
                    .clone()
                    .or_else(|| Some(ctx.origin.name.clone())),
                kind: Some("TRACE".into()),
                text: Some("UPDATE".into()),
                after: Some(format!("T:{before}")),
                limit: Some(1),
                ..TraceFilter::default()
            };
            self.trace_list(&filter)?
                .entries
                .first()
                .map(|e| e.id.clone())
        };
        let mut command = text.replace(":id", &json!(a.id).to_string());
        for key in ["factor", "default"] {
            if let Some(v) = params.get(key) {
                command = command.replace(&format!(":{key}"), &v.to_string());
            }
        }
        Ok(RecallActionOutcome {
            command,
            dry_run,
            result,
            entry,
        })
    }
}

//! Decay triage's bulk actions (issue 31 §5) over chosen memories or a
//! whole list (`triage.rs`), each one KIP text run by the engine as one
//! write — one transaction, one trace entry, revertible from the trace —
//! or previewed by a dry run that changes nothing:
//!
//! - pin: `metadata.pinned: true`, which the decay sweep skips (the
//!   agent guide's statement FILTERs it) and the lists leave out;
//! - renew: `memory_strength` back to 1.0 (or a given value) and
//!   `expires_at` now plus a given number of days, or removed;
//! - archive (concepts): the `belongs_to_domain` links replaced by one to
//!   the `Archived` domain, with `metadata.archived_at` / `archived_by`.
//!   RC11's safe archive pattern (SystemInstructions) writes
//!   `attributes.status: "archived"`; metadata is used instead because a
//!   type's own `status` attribute (`Commitment.status`) would be
//!   overwritten, and `memory_tier` is left alone: RC11 gives it
//!   short-term / long-term and keeps the memory axes apart;
//! - delete: `DELETE PROPOSITIONS` for links (the latest first, so a link
//!   about a link goes before it), then `DELETE CONCEPT … DETACH`.
//!
//! Elements the action cannot apply to are skipped with a reason (gone, a
//! link to archive, already archived, the schema or a protected element);
//! the engine's own checks still refuse anything else whole.

use std::collections::{HashMap, HashSet};

use kip_lang::{ErrorCode, Errors, KipError};
use kip_store::ElementId;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json, json};

use crate::execute::Context;
use crate::graph::{BELONGS_TO_DOMAIN, CONCEPT_TYPE, DOMAIN, Graph, PROPOSITION_TYPE, Result};
use crate::kml::{ChangeKind, ChangeOp, ElementChange};
use crate::nexus::Nexus;
use crate::options::{Mode, RunOptions};
use crate::stats::Stats;
use crate::trace::{TraceFilter, TraceNote};
use crate::triage::{Criteria, TriageQuery, archived_members, bad, members};

/// The most memories one action takes.
pub const MAX_APPLY: usize = 10_000;

/// The most element changes a preview lists (the counts count them all).
pub const MAX_DIFF: usize = 500;

/// The most lines of the KIP text a result shows.
const MAX_TEXT_LINES: usize = 60;

/// What to do with the chosen memories.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum TriageAction {
    Pin,
    Renew,
    Archive,
    Delete,
}

impl std::str::FromStr for TriageAction {
    type Err = KipError;

    fn from_str(s: &str) -> Result<TriageAction> {
        match s {
            "pin" => Ok(TriageAction::Pin),
            "renew" => Ok(TriageAction::Renew),
            "archive" => Ok(TriageAction::Archive),
            "delete" => Ok(TriageAction::Delete),
            _ => Err(bad(
                format!("{s:?} is not a triage action"),
                "The actions are pin, renew, archive and delete.",
            )),
        }
    }
}

/// An action over `ids` and/or every memory of `all_of`'s list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TriageApply {
    pub action: TriageAction,
    /// `C:…` / `P:…`.
    #[serde(default)]
    pub ids: Vec<String>,
    /// Every memory of this list (its page settings aside).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub all_of: Option<TriageQuery>,
    /// Renew: the new `memory_strength` (default 1.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub strength: Option<f64>,
    /// Renew: `expires_at` this many days from now; absent, it is removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub expires_in_days: Option<f64>,
    /// Preview: run exactly, then abort.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub dry_run: Option<bool>,
    /// Why, for the trace (a `DecisionRationale` entry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub message: Option<String>,
}

/// A memory the action left alone, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TriageSkipped {
    pub id: String,
    pub reason: String,
}

/// What an action did, or (a dry run) would do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TriageOutcome {
    pub action: TriageAction,
    pub dry_run: bool,
    /// The memories acted on.
    pub targets: usize,
    pub skipped: Vec<TriageSkipped>,
    /// Elements created, changed and deleted, one count per element.
    pub counts: Stats,
    /// Each element's change, before → after (the first [`MAX_DIFF`]).
    pub changes: Vec<ElementChange>,
    /// How many element changes there are in all.
    pub changes_total: usize,
    /// The KIP the engine ran (its first lines when long).
    pub kip: String,
    /// The trace entry of a committed write: revert it to undo the action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub trace_entry: Option<String>,
}

/// One memory the action changes, as the plan read it.
struct Target {
    id: ElementId,
    /// It has `expires_at` (renew removes it) / domain links (archive).
    has_expiry: bool,
    has_domain: bool,
}

/// The memories of the request: its ids, then its list's, without repeats.
fn chosen(g: &Graph<'_>, r: &TriageApply) -> Result<Vec<ElementId>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for id in &r.ids {
        let e: ElementId = id.trim().parse().map_err(|_| {
            bad(
                format!("{id:?} is not an element id"),
                "Name memories by their ids, e.g. C:12 or P:7, as the triage lists show them.",
            )
        })?;
        if seen.insert(e) {
            out.push(e);
        }
    }
    if let Some(q) = &r.all_of {
        let (_, list) = members(g, &Criteria::of(q)?, MAX_APPLY + 1)?;
        out.extend(list.into_iter().filter(|e| seen.insert(*e)));
    }
    if out.len() > MAX_APPLY {
        return Err(KipError::new(
            ErrorCode::ResourceExhausted,
            format!("more than {MAX_APPLY} memories in one action"),
        )
        .with_hint("Act on the list in pages: choose ids, or narrow the list (--below, --days)."));
    }
    Ok(out)
}

/// The targets the action applies to, and the ones it skips with a reason.
fn plan(g: &Graph<'_>, r: &TriageApply) -> Result<(Vec<Target>, Vec<TriageSkipped>)> {
    let schema: Vec<u32> = [CONCEPT_TYPE, PROPOSITION_TYPE, DOMAIN]
        .iter()
        .filter_map(|t| g.type_id(t).ok().flatten())
        .collect();
    let archived = archived_members(g)?;
    let domain_link = g.predicate_id(BELONGS_TO_DOMAIN)?;
    let mut targets = Vec::new();
    let mut skipped = Vec::new();
    for e in chosen(g, r)? {
        let skip = |why: &str| TriageSkipped {
            id: e.to_string(),
            reason: why.to_owned(),
        };
        let meta = match e {
            ElementId::Concept(id) => match g.concept(id)? {
                None => None,
                Some(c) if schema.contains(&c.type_id) => {
                    skipped.push(skip("the schema and the domains are not triaged"));
                    continue;
                }
                Some(c) if crate::schema::is_protected(&g.type_name(c.type_id)?, &c.name) => {
                    skipped.push(skip("a protected element"));
                    continue;
                }
                Some(c) => Some(c.metadata.clone()),
            },
            ElementId::Proposition(id) => g.proposition(id)?.map(|p| p.metadata.clone()),
        };
        let Some(meta) = meta else {
            skipped.push(skip("not in the nexus (deleted?)"));
            continue;
        };
        let is_link = matches!(e, ElementId::Proposition(_));
        if r.action == TriageAction::Archive && is_link {
            skipped.push(skip(
                "a link belongs to no domain: archive its subject, or delete it",
            ));
            continue;
        }
        if r.action == TriageAction::Archive && archived.contains(&e) {
            skipped.push(skip("already in the Archived domain"));
            continue;
        }
        if r.action == TriageAction::Pin && meta.get("pinned") == Some(&Json::Bool(true)) {
            skipped.push(skip("already pinned"));
            continue;
        }
        let has_domain = !is_link && !g.propositions(Some(e), domain_link, None)?.is_empty();
        targets.push(Target {
            id: e,
            has_expiry: meta.contains_key("expires_at"),
            has_domain: domain_link.is_some() && has_domain,
        });
    }
    Ok((targets, skipped))
}

/// The pattern that matches one element by id.
fn by_id(e: ElementId) -> String {
    match e {
        ElementId::Concept(_) => format!("?x {{id: \"{e}\"}}"),
        ElementId::Proposition(_) => format!("?x (id: \"{e}\")"),
    }
}

/// The KIP text of the action over `targets`.
fn text(r: &TriageApply, targets: &[Target], originator: &str) -> Result<String> {
    let q = |s: &str| Json::String(s.to_owned()).to_string();
    let now = crate::clock::now();
    let mut lines = Vec::new();
    match r.action {
        TriageAction::Pin => {
            for t in targets {
                lines.push(format!(
                    "UPDATE ?x SET METADATA {{ pinned: true }} WHERE {{ {} }}",
                    by_id(t.id)
                ));
            }
        }
        TriageAction::Renew => {
            let strength = r.strength.unwrap_or(1.0);
            if !(0.0..=1.0).contains(&strength) {
                return Err(bad(
                    format!("memory_strength {strength} is not between 0 and 1"),
                    "Renew to 1.0 (the default) or a value between 0 and 1.",
                ));
            }
            let expiry = match r.expires_in_days {
                Some(d) if d.is_finite() && d > 0.0 && d < 36_500.0 => {
                    format!(", expires_at: {}", q(&crate::clock::days_from_now(d)))
                }
                Some(d) => {
                    return Err(bad(
                        format!("expires in {d} days is not a time ahead"),
                        "Give a number of days above 0 (and below a century), or none to remove expires_at.",
                    ));
                }
                None => String::new(),
            };
            for t in targets {
                let x = by_id(t.id);
                lines.push(format!(
                    "UPDATE ?x SET METADATA {{ memory_strength: {strength:?}{expiry} }} WHERE {{ {x} }}"
                ));
                if r.expires_in_days.is_none() && t.has_expiry {
                    lines.push(format!(
                        "DELETE METADATA {{\"expires_at\"}} FROM ?x WHERE {{ {x} }}"
                    ));
                }
            }
        }
        TriageAction::Archive => {
            for t in targets {
                let id = t.id;
                if t.has_domain {
                    lines.push(format!(
                        "DELETE PROPOSITIONS ?l WHERE {{ ?l ({{id: \"{id}\"}}, \"{BELONGS_TO_DOMAIN}\", ?d) }}"
                    ));
                }
                lines.push(format!(
                    "UPSERT {{ PROPOSITION ?a {{ ({{id: \"{id}\"}}, \"{BELONGS_TO_DOMAIN}\", {{type: \"{DOMAIN}\", name: \"{}\"}}) }} }}",
                    crate::triage::ARCHIVED
                ));
                lines.push(format!(
                    "UPDATE ?x SET METADATA {{ archived_at: {}, archived_by: {} }} WHERE {{ {} }}",
                    q(&now),
                    q(originator),
                    by_id(id)
                ));
            }
        }
        TriageAction::Delete => {
            // Links first, the latest first: a link about a link was made
            // after it, so it goes before it.
            let mut links: Vec<ElementId> = targets
                .iter()
                .map(|t| t.id)
                .filter(|e| matches!(e, ElementId::Proposition(_)))
                .collect();
            links.sort_by(|a, b| b.cmp(a));
            for e in links {
                lines.push(format!("DELETE PROPOSITIONS ?x WHERE {{ {} }}", by_id(e)));
            }
            for t in targets
                .iter()
                .filter(|t| matches!(t.id, ElementId::Concept(_)))
            {
                lines.push(format!(
                    "DELETE CONCEPT ?x DETACH WHERE {{ {} }}",
                    by_id(t.id)
                ));
            }
        }
    }
    Ok(lines.join("\n"))
}

/// One change per element across the commands of a text: the first
/// `before`, the last `after` (an element created then deleted is gone).
fn fold(list: impl IntoIterator<Item = ElementChange>) -> Vec<ElementChange> {
    let mut out: Vec<Option<ElementChange>> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for c in list {
        let Some(&i) = at.get(&c.id) else {
            at.insert(c.id.clone(), out.len());
            out.push(Some(c));
            continue;
        };
        let Some(prev) = out[i].as_mut() else {
            out[i] = Some(c);
            continue;
        };
        match (prev.op, c.op) {
            (ChangeOp::Created, ChangeOp::Deleted) => out[i] = None,
            (ChangeOp::Created, _) => prev.after = c.after,
            (_, ChangeOp::Deleted) => {
                prev.op = ChangeOp::Deleted;
                prev.after = None;
            }
            _ => prev.after = c.after,
        }
    }
    out.into_iter().flatten().collect()
}

/// One count per element change.
fn count(changes: &[ElementChange]) -> Stats {
    let mut s = Stats::default();
    for c in changes {
        let n = match (c.kind, c.op) {
            (ChangeKind::Concept, ChangeOp::Created) => &mut s.concepts_created,
            (ChangeKind::Concept, ChangeOp::Updated) => &mut s.concepts_updated,
            (ChangeKind::Concept, ChangeOp::Deleted) => &mut s.concepts_deleted,
            (ChangeKind::Proposition, ChangeOp::Created) => &mut s.propositions_created,
            (ChangeKind::Proposition, ChangeOp::Updated) => &mut s.propositions_updated,
            (ChangeKind::Proposition, ChangeOp::Deleted) => &mut s.propositions_deleted,
        };
        *n += 1;
    }
    s
}

/// Every `changes` list of a text's results (one command's object, or each
/// response of several).
fn changes_in(result: &Json) -> Vec<ElementChange> {
    let one = |r: &Json| -> Vec<ElementChange> {
        r.get("changes")
            .and_then(|c| serde_json::from_value(c.clone()).ok())
            .unwrap_or_default()
    };
    match result {
        Json::Array(items) => items
            .iter()
            .flat_map(|i| one(i.get("result").unwrap_or(i)))
            .collect(),
        other => one(other),
    }
}

/// The first [`MAX_TEXT_LINES`] lines of `text`, and how many more.
fn shown(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= MAX_TEXT_LINES {
        return text.to_owned();
    }
    format!(
        "{}\n// … and {} more commands",
        lines[..MAX_TEXT_LINES].join("\n"),
        lines.len() - MAX_TEXT_LINES
    )
}

impl Nexus {
    /// Applies (or with `dry_run` previews) a decay-triage action as `ctx`
    /// (see the module doc): one traced write, or nothing when nothing
    /// applies.
    pub fn triage_apply(&self, r: &TriageApply, ctx: &Context) -> Result<TriageOutcome> {
        let dry_run = r.dry_run.unwrap_or(false);
        let originator = ctx.originator.as_deref().unwrap_or(&ctx.origin.name);
        let (targets, skipped) = self.read(|g| plan(g, r))?;
        let source = text(r, &targets, originator)?;
        let mut outcome = TriageOutcome {
            action: r.action,
            dry_run,
            targets: targets.len(),
            skipped,
            counts: Stats::default(),
            changes: Vec::new(),
            changes_total: 0,
            kip: shown(&source),
            trace_entry: None,
        };
        if targets.is_empty() {
            return Ok(outcome);
        }
        let commands = kip_lang::parse(&source).map_err(Errors::into_response_error)?;
        let nonce = format!("{:016x}", rand::random::<u64>());
        let mut data = Map::new();
        let what = serde_json::to_value(r.action).unwrap_or(Json::Null);
        data.insert(
            "triage".into(),
            json!({"action": what, "targets": targets.len(), "nonce": nonce}),
        );
        let count_text = format!("{} {}", targets.len(), plural(targets.len()));
        let options = RunOptions {
            mode: Mode::dry_run_if(dry_run),
            origin: ctx.origin.clone(),
            trace: TraceNote {
                originator: Some(originator.to_owned()),
                agent: ctx.agent,
                reason: Some(r.message.clone().unwrap_or_else(|| {
                    format!(
                        "Decay triage: {} {count_text}.",
                        what.as_str().unwrap_or("?")
                    )
                })),
                data,
                ..TraceNote::default()
            },
            ..RunOptions::default()
        };
        let last = self.last_trace_id()?;
        let done = self.run(&source, &commands, &options)?;
        let changes = if dry_run {
            fold(changes_in(&done.result))
        } else {
            // A write that changed nothing leaves an entry with nothing to
            // revert: no entry to offer.
            let entry = self.entry_with_nonce(last, &nonce)?;
            let listed = (entry.as_ref().and_then(|e| e.data.as_ref()))
                .and_then(|d| d.get("changes").cloned())
                .filter(|c| c.as_array().is_some_and(|c| !c.is_empty()));
            if listed.is_some() {
                outcome.trace_entry = entry.map(|e| e.id);
            }
            fold(
                listed
                    .and_then(|c| serde_json::from_value::<Vec<ElementChange>>(c).ok())
                    .unwrap_or_default(),
            )
        };
        outcome.counts = count(&changes);
        outcome.changes_total = changes.len();
        outcome.changes = changes.into_iter().take(MAX_DIFF).collect();
        Ok(outcome)
    }

    /// The trace entry after `T:last` that a triage write tagged `nonce`.
    fn entry_with_nonce(&self, last: u64, nonce: &str) -> Result<Option<crate::trace::Entry>> {
        let filter = TraceFilter {
            after: Some(format!("T:{last}")),
            kind: Some("TRACE".into()),
            limit: Some(crate::trace::MAX_TRACE_PAGE),
            ..TraceFilter::default()
        };
        let page = self.trace_list(&filter)?;
        Ok(page.entries.into_iter().find(|e| {
            e.data
                .as_ref()
                .and_then(|d| d.get("triage"))
                .and_then(|t| t.get("nonce"))
                .and_then(Json::as_str)
                == Some(nonce)
        }))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "memory" } else { "memories" }
}

//! Decay triage (issue 31 §5): the memories a curator (or the `$system`
//! sleep cycle) decides about, as paged lists —
//!
//! - expired: `metadata.expires_at` in the past (RC11 §2.10: a signal for
//!   cleanup, never a query-time filter);
//! - fading: `metadata.memory_strength` below a threshold
//!   ([`crate::health::FADING_BELOW`] unless given);
//! - untouched: `metadata._updated_at` older than a number of days
//!   ([`UNTOUCHED_DAYS`] unless given). Only writes move `_updated_at`:
//!   reads do not count (the trace folds them; elements keep no read time).
//!
//! Concepts and links both (the decay sweep decays links), in id order,
//! concepts first. Left out of every list: the schema (the meta-types'
//! instances), `Domain` concepts and the protected elements, the structural
//! `belongs_to_domain` links, concepts already in the `Archived` domain,
//! and pinned memories (`metadata.pinned: true`, exempt from decay) unless
//! asked for. The bulk actions on a list are `triage_apply.rs`'s.

use std::collections::HashSet;

use kip_store::{ElementId, PropositionId};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::graph::{
    BELONGS_TO_DOMAIN, CONCEPT_TYPE, DOMAIN, FieldKind, Graph, PROPOSITION_TYPE, Result,
};
use crate::health::FADING_BELOW;

/// A memory not written for this many days is untouched (unless a request
/// says otherwise): a season without a write.
pub const UNTOUCHED_DAYS: u32 = 90;

/// The most items one page holds.
pub const MAX_TRIAGE_PAGE: usize = 1_000;

/// Items a page holds unless asked.
pub const DEFAULT_TRIAGE_PAGE: usize = 50;

/// The domain archived memories move to (RC11 Genesis).
pub const ARCHIVED: &str = "Archived";

/// Which list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum TriageList {
    #[default]
    Expired,
    Fading,
    Untouched,
}

impl std::str::FromStr for TriageList {
    type Err = kip_lang::KipError;

    fn from_str(s: &str) -> Result<TriageList> {
        match s {
            "expired" => Ok(TriageList::Expired),
            "fading" => Ok(TriageList::Fading),
            "untouched" => Ok(TriageList::Untouched),
            _ => Err(bad(
                format!("{s:?} is not a triage list"),
                "The lists are expired, fading and untouched.",
            )),
        }
    }
}

/// What to list: the list, its setting, and the page.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TriageQuery {
    pub list: TriageList,
    /// Fading: `memory_strength` below this (default 0.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub below: Option<f64>,
    /// Untouched: not written for this many days (default 90).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub days: Option<u32>,
    /// Also list pinned memories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub include_pinned: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub offset: Option<usize>,
    /// Items per page (default 50, at most 1,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub limit: Option<usize>,
}

/// One memory of a list, with the metadata triage decides by.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TriageItem {
    /// `C:…` or `P:…`.
    pub id: String,
    /// `concept` or `proposition`.
    pub kind: String,
    /// A concept's type, a link's predicate.
    #[serde(rename = "type")]
    pub type_name: String,
    /// A concept's name; a link as `subject —predicate→ object`.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub expires_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub memory_strength: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub memory_tier: Option<String>,
    pub pinned: bool,
    /// The last write (`metadata._updated_at`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub updated_at: Option<String>,
}

/// One page of a list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TriagePage {
    pub list: TriageList,
    /// When it was read (ISO 8601, UTC).
    pub at: String,
    /// How many memories the whole list holds.
    pub total: u64,
    pub offset: usize,
    pub items: Vec<TriageItem>,
    /// The settings the list used: the fading threshold, the days and the
    /// cut-off time they make.
    pub below: f64,
    pub days: u32,
    pub cutoff: String,
}

pub(crate) fn bad(message: impl Into<String>, hint: &str) -> kip_lang::KipError {
    kip_lang::KipError::new(kip_lang::ErrorCode::InvalidSyntax, message).with_hint(hint)
}

/// What makes a memory part of the list, settled once per request.
pub(crate) struct Criteria {
    pub list: TriageList,
    pub now: String,
    pub below: f64,
    pub days: u32,
    pub cutoff: String,
    pub include_pinned: bool,
}

impl Criteria {
    pub(crate) fn of(q: &TriageQuery) -> Result<Criteria> {
        let below = q.below.unwrap_or(FADING_BELOW);
        if !(0.0..=1.0).contains(&below) {
            return Err(bad(
                format!("the fading threshold {below} is not between 0 and 1"),
                "memory_strength runs from 0 to 1: give --below 0.2, say.",
            ));
        }
        let days = q.days.unwrap_or(UNTOUCHED_DAYS);
        Ok(Criteria {
            list: q.list,
            now: crate::clock::now(),
            below,
            days,
            cutoff: crate::clock::days_from_now(-f64::from(days)),
            include_pinned: q.include_pinned.unwrap_or(false),
        })
    }

    /// Whether metadata (read one key at a time by `key`) puts a memory on
    /// the list.
    fn holds(&self, key: &mut dyn FnMut(&str) -> Result<Option<Json>>) -> Result<bool> {
        if !self.include_pinned && key("pinned")?.as_ref() == Some(&Json::Bool(true)) {
            return Ok(false);
        }
        let text = |v: Option<Json>| v.and_then(|v| v.as_str().map(str::to_owned));
        Ok(match self.list {
            TriageList::Expired => text(key("expires_at")?).is_some_and(|t| t < self.now),
            TriageList::Fading => key("memory_strength")?
                .as_ref()
                .and_then(Json::as_f64)
                .is_some_and(|x| x < self.below),
            TriageList::Untouched => text(key("_updated_at")?).is_some_and(|t| t < self.cutoff),
        })
    }
}

/// The elements of `g` on the list, in id order (concepts first), at most
/// `cap` of them, and how many there are in all.
pub(crate) fn members(g: &Graph<'_>, c: &Criteria, cap: usize) -> Result<(u64, Vec<ElementId>)> {
    let skipped: Vec<u32> = [CONCEPT_TYPE, PROPOSITION_TYPE, DOMAIN]
        .iter()
        .filter_map(|t| g.type_id(t).ok().flatten())
        .collect();
    let domain_link = g.predicate_id(BELONGS_TO_DOMAIN)?;
    let archived = archived_members(g)?;
    let mut total = 0u64;
    let mut out = Vec::new();
    let mut take = |e: ElementId| {
        total += 1;
        if out.len() < cap {
            out.push(e);
        }
    };
    for row in g.all_concepts()? {
        let (id, record) = row?;
        let e = ElementId::Concept(id);
        if skipped.contains(&record.type_id) || archived.contains(&e) {
            continue;
        }
        let mut key = |k: &str| Ok(record.metadata.get(k).cloned());
        if c.holds(&mut key)?
            && !crate::schema::is_protected(&g.type_name(record.type_id)?, &record.name)
        {
            take(e);
        }
    }
    for head in g.scan_links(PropositionId(0), None)? {
        let (id, _, predicate, _) = head?;
        if Some(predicate) == domain_link {
            continue;
        }
        let mut key = |k: &str| g.proposition_field(id, FieldKind::Metadata, k);
        if c.holds(&mut key)? {
            take(ElementId::Proposition(id));
        }
    }
    g.clear_scanned();
    Ok((total, out))
}

/// The concepts that belong to the `Archived` domain.
pub(crate) fn archived_members(g: &Graph<'_>) -> Result<HashSet<ElementId>> {
    let (Some(domain), Some(link)) = (archived_domain(g)?, g.predicate_id(BELONGS_TO_DOMAIN)?)
    else {
        return Ok(HashSet::new());
    };
    Ok(
        g.propositions(None, Some(link), Some(ElementId::Concept(domain)))?
            .into_iter()
            .map(|(_, s, _, _)| s)
            .collect(),
    )
}

/// The `Archived` domain's id, if the nexus has one.
pub(crate) fn archived_domain(g: &Graph<'_>) -> Result<Option<kip_store::ConceptId>> {
    g.find_concept_by_names(DOMAIN, ARCHIVED)
}

/// How a list names one element: its kind, type (a link's predicate) and
/// name (a link's ends by name), and its metadata.
pub(crate) fn describe(g: &Graph<'_>, e: ElementId) -> Result<Option<TriageItem>> {
    let (kind, type_name, name, meta) = match e {
        ElementId::Concept(id) => {
            let Some(c) = g.concept(id)? else {
                return Ok(None);
            };
            let ty = g.type_name(c.type_id)?.to_string();
            ("concept", ty, c.name.clone(), c.metadata.clone())
        }
        ElementId::Proposition(id) => {
            let Some(p) = g.proposition(id)? else {
                return Ok(None);
            };
            let predicate = g.predicate_name(p.predicate)?.to_string();
            let name = format!(
                "{} —{predicate}→ {}",
                end_name(g, p.subject)?,
                end_name(g, p.object)?
            );
            ("proposition", predicate, name, p.metadata.clone())
        }
    };
    let text = |k: &str| meta.get(k).and_then(Json::as_str).map(str::to_owned);
    Ok(Some(TriageItem {
        id: e.to_string(),
        kind: kind.to_owned(),
        type_name,
        name,
        expires_at: text("expires_at"),
        memory_strength: meta.get("memory_strength").and_then(Json::as_f64),
        memory_tier: text("memory_tier"),
        pinned: meta.get("pinned") == Some(&Json::Bool(true)),
        updated_at: text("_updated_at"),
    }))
}

/// A link's end by name (a concept's name, a link's id).
fn end_name(g: &Graph<'_>, e: ElementId) -> Result<String> {
    Ok(match e {
        ElementId::Concept(id) => g
            .concept(id)?
            .map_or_else(|| e.to_string(), |c| c.name.clone()),
        ElementId::Proposition(_) => e.to_string(),
    })
}

/// One page of the list `q` asks for (see the module doc).
pub fn triage(g: &Graph<'_>, q: &TriageQuery) -> Result<TriagePage> {
    let c = Criteria::of(q)?;
    let offset = q.offset.unwrap_or(0);
    let limit = q
        .limit
        .unwrap_or(DEFAULT_TRIAGE_PAGE)
        .clamp(1, MAX_TRIAGE_PAGE);
    let (total, ids) = members(g, &c, offset.saturating_add(limit))?;
    let mut items = Vec::new();
    for e in ids.into_iter().skip(offset) {
        if let Some(item) = describe(g, e)? {
            items.push(item);
        }
    }
    Ok(TriagePage {
        list: q.list,
        at: c.now,
        total,
        offset,
        items,
        below: c.below,
        days: c.days,
        cutoff: c.cutoff,
    })
}

impl crate::nexus::Nexus {
    /// One page of a decay-triage list now (see [`triage`]).
    pub fn triage(&self, q: &TriageQuery) -> Result<TriagePage> {
        self.read(|g| triage(g, q))
    }
}

//! Memory health (issue 31 §2): what a curator of a living memory looks
//! after, counted in one snapshot, each count with the first few elements
//! it counts so that it opens as a list:
//!
//! - concepts and links per type / predicate, members per domain;
//! - orphans: concepts linked to nothing but their domain (domains, which
//!   are containers, and the two personas aside);
//! - expired: `metadata.expires_at` in the past (RC11 §2.10: a signal for
//!   the sleep cycle, not hidden from queries);
//! - fading: `metadata.memory_strength` below the threshold;
//! - low confidence: `metadata.confidence` below the threshold;
//! - unconsolidated episodes: `Event` / `Experience` concepts with no
//!   `consolidated_to` link (the RC11 memory profile);
//! - unreviewed: the trace's agent writes flagged `Unverified` that no
//!   curator has marked `Reviewed` or `Rejected`;
//! - contradictions: subjects with two live objects of a functional
//!   predicate (`crate::contradictions`), the subjects as the sample.
//!
//! One pass over the concepts and one over the links; the meta-types'
//! instances (the schema) are left out of every list but the totals.

use std::collections::{BTreeMap, HashMap, HashSet};

use kip_store::{ElementId, PropositionId};
use serde::Serialize;
use serde_json::Value as Json;

use crate::graph::{BELONGS_TO_DOMAIN, CONCEPT_TYPE, FieldKind, Graph, PROPOSITION_TYPE, Result};

/// How many elements each list shows.
pub const SAMPLE: usize = 20;

/// Below this `memory_strength` a memory is fading.
pub const FADING_BELOW: f64 = 0.2;

/// Below this `confidence` a memory is weakly supported.
pub const LOW_CONFIDENCE_BELOW: f64 = 0.5;

/// A count and the first elements it counts (`C:…` / `P:…`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Counted {
    pub count: u64,
    pub sample: Vec<String>,
}

impl Counted {
    fn add(&mut self, e: ElementId) {
        self.count += 1;
        if self.sample.len() < SAMPLE {
            self.sample.push(e.to_string());
        }
    }
}

/// The health of a memory at one moment (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Health {
    /// When it was read (ISO 8601, UTC).
    pub at: String,
    pub concepts: u64,
    pub links: u64,
    /// Concepts per type (the schema's own types aside).
    pub by_type: BTreeMap<String, u64>,
    /// Links per predicate.
    pub by_predicate: BTreeMap<String, u64>,
    /// Concepts per domain (by `belongs_to_domain`).
    pub by_domain: BTreeMap<String, u64>,
    pub orphans: Counted,
    pub expired: Counted,
    pub fading: Counted,
    pub low_confidence: Counted,
    pub unconsolidated: Counted,
    /// Subjects with more than one live object of a functional predicate
    /// (the queue: `Nexus::contradictions`).
    pub contradictions: Counted,
    pub thresholds: Thresholds,
}

/// The thresholds the counts used.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Thresholds {
    pub fading_below: f64,
    pub low_confidence_below: f64,
}

/// Whether an element's metadata (read one key at a time by `key`) says
/// expired, fading or weakly supported, as of `now`.
fn lifecycle(
    h: &mut Health,
    e: ElementId,
    key: &mut dyn FnMut(&str) -> Result<Option<Json>>,
    now: &str,
) -> Result<()> {
    if key("expires_at")?
        .as_ref()
        .and_then(Json::as_str)
        .is_some_and(|t| t < now)
    {
        h.expired.add(e);
    }
    let mut below = |k: &str, limit: f64| -> Result<bool> {
        Ok(key(k)?
            .as_ref()
            .and_then(Json::as_f64)
            .is_some_and(|x| x < limit))
    };
    if below("memory_strength", FADING_BELOW)? {
        h.fading.add(e);
    }
    if below("confidence", LOW_CONFIDENCE_BELOW)? {
        h.low_confidence.add(e);
    }
    Ok(())
}

/// The health of the memory `g` holds, as of `now` (ISO 8601, UTC).
pub fn health(g: &Graph<'_>, now: &str) -> Result<Health> {
    let mut h = Health {
        at: now.to_owned(),
        thresholds: Thresholds {
            fading_below: FADING_BELOW,
            low_confidence_below: LOW_CONFIDENCE_BELOW,
        },
        ..Health::default()
    };
    let schema: Vec<u32> = [CONCEPT_TYPE, PROPOSITION_TYPE]
        .iter()
        .filter_map(|t| g.type_id(t).ok().flatten())
        .collect();
    let domain_link = g.predicate_id(BELONGS_TO_DOMAIN)?;
    let consolidated = g.predicate_id("consolidated_to")?;
    let domain_type = g.type_id(crate::graph::DOMAIN)?;
    let episodic: Vec<u32> = ["Event", "Experience"]
        .iter()
        .filter_map(|t| g.type_id(t).ok().flatten())
        .collect();
    // The links first: which concepts are linked (beyond their domain),
    // which episodes are consolidated, who belongs where.
    let mut linked: HashSet<ElementId> = HashSet::new();
    let mut consolidated_ids: HashSet<ElementId> = HashSet::new();
    let mut members: BTreeMap<ElementId, u64> = BTreeMap::new();
    // Links are read as a sweep reads them: ends and predicate from the
    // key, each metadata key decoded alone from the record's bytes.
    let mut per_predicate: HashMap<u32, u64> = HashMap::new();
    for head in g.scan_links(PropositionId(0), None)? {
        let (id, subject, predicate, object) = head?;
        h.links += 1;
        *per_predicate.entry(predicate).or_default() += 1;
        if Some(predicate) == domain_link {
            *members.entry(object).or_default() += 1;
        } else {
            linked.insert(subject);
            linked.insert(object);
        }
        if Some(predicate) == consolidated {
            consolidated_ids.insert(subject);
        }
        let mut key = |k: &str| g.proposition_field(id, FieldKind::Metadata, k);
        lifecycle(&mut h, ElementId::Proposition(id), &mut key, now)?;
    }
    g.clear_scanned();
    for (p, n) in per_predicate {
        h.by_predicate.insert(g.predicate_name(p)?.to_string(), n);
    }
    let mut per_type: HashMap<u32, u64> = HashMap::new();
    for row in g.all_concepts()? {
        let (id, c) = row?;
        h.concepts += 1;
        if schema.contains(&c.type_id) {
            continue;
        }
        let e = ElementId::Concept(id);
        *per_type.entry(c.type_id).or_default() += 1;
        if let Some(n) = members.get(&e) {
            h.by_domain.insert(c.name.clone(), *n);
        }
        let container = Some(c.type_id) == domain_type
            || crate::schema::ACTORS
                .iter()
                .any(|(_, name)| *name == c.name);
        if !container && !linked.contains(&e) {
            h.orphans.add(e);
        }
        if episodic.contains(&c.type_id) && !consolidated_ids.contains(&e) {
            h.unconsolidated.add(e);
        }
        let mut key = |k: &str| Ok(c.metadata.get(k).cloned());
        lifecycle(&mut h, e, &mut key, now)?;
    }
    for (t, n) in per_type {
        h.by_type.insert(g.type_name(t)?.to_string(), n);
    }
    let query = crate::contradictions::ContradictionQuery {
        limit: SAMPLE,
        ..Default::default()
    };
    let found = crate::contradictions::contradictions(g, &query)?;
    h.contradictions = Counted {
        count: found.total,
        sample: found
            .contradictions
            .into_iter()
            .map(|c| c.subject.id)
            .collect(),
    };
    Ok(h)
}

impl crate::nexus::Nexus {
    /// The memory's health now (see [`health`]).
    pub fn health(&self) -> Result<Health> {
        let now = crate::clock::now();
        self.read(|g| health(g, &now))
    }
}

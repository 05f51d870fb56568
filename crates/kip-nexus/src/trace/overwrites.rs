//! Attribute values one source overwrote with another's (issue 31 §4, the
//! second kind of contradiction): read from the trace's before- and
//! after-images, since an element holds one value per attribute and the
//! one it lost shows only there.
//!
//! A write overwrote a value *between sources* when the element's
//! provenance before it (`metadata.source`, else `metadata.author`) and
//! after it differ and both are known. A source changing its own value is
//! an evolution, and a curator's edit (`source: "curator"`, what the app
//! writes) is a decision, not a conflict; either ends an earlier overwrite
//! of that attribute, and so does a resolution (a write that records a
//! retired value, see `contradictions/attribute.rs`; its revert brings the overwrite
//! back). Only an element's last overwrite of each attribute
//! is kept, and only while the element still holds the value it wrote.

use std::collections::{BTreeMap, BTreeSet};

use kip_store::ElementId;
use serde_json::{Map, Value as Json};

use super::entry::{EntryType, from_body};
use super::ops::changes_of;
use crate::graph::{Graph, Result, TxnError};
use crate::kml::{ChangeOp, ElementChange};

/// The `source` the app's own edits carry: a curator's decision.
const CURATOR_SOURCE: &str = "curator";

/// The element metadata key that keeps the values a curator retired
/// (`contradictions/attribute.rs`); a write that adds an item there resolved that
/// attribute's overwrite.
pub const SUPERSEDED_VALUES: &str = "superseded_values";

/// One overwrite: the value an element held and the value another source
/// wrote over it, each with the element's metadata at the time.
#[derive(Clone, Debug, PartialEq)]
pub struct Overwrite {
    pub attribute: String,
    pub earlier: Json,
    pub earlier_meta: Map<String, Json>,
    pub current: Json,
    pub current_meta: Map<String, Json>,
    /// The trace entry of the overwriting write (`T:…`) and its time.
    pub entry: String,
    pub at: String,
    /// The concept's type and name, as the write named them.
    pub type_name: Option<String>,
    pub name: Option<String>,
}

/// Who an element's metadata says its values came from.
fn provenance(meta: &Map<String, Json>) -> Option<&Json> {
    meta.get("source")
        .filter(|v| !v.is_null())
        .or_else(|| meta.get("author").filter(|v| !v.is_null()))
}

/// Whether `after`'s provenance is the app's curator.
fn by_curator(after: &Map<String, Json>) -> bool {
    match after.get("source") {
        Some(Json::String(s)) => s == CURATOR_SOURCE,
        Some(Json::Array(a)) => a.iter().any(|s| s.as_str() == Some(CURATOR_SOURCE)),
        _ => false,
    }
}

/// The attributes whose retired values (`superseded_values` items) `to`
/// records and `from` does not.
fn retired_in(from: &Map<String, Json>, to: &Map<String, Json>) -> Vec<String> {
    let items = |m: &Map<String, Json>| match m.get(SUPERSEDED_VALUES) {
        Some(Json::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    let (old, new) = (items(from), items(to));
    new.iter()
        .filter(|i| !old.contains(i))
        .filter_map(|i| i.get("attribute").and_then(Json::as_str).map(str::to_owned))
        .collect()
}

/// What the scan keeps: the standing overwrites, and those a resolution
/// settled (put back if a revert takes the resolution away).
#[derive(Default)]
struct Scan {
    found: BTreeMap<(ElementId, String), Overwrite>,
    settled: BTreeMap<(ElementId, String), Overwrite>,
}

impl Scan {
    /// Records what `c` (of entry `entry` at `at`) did to each attribute.
    fn note(&mut self, e: ElementId, c: &ElementChange, entry: &str, at: &str) {
        let (Some(before), Some(after)) = (&c.before, &c.after) else {
            return;
        };
        // A resolution records the value it retires; its revert takes the
        // record away and the overwrite stands again.
        let resolved = retired_in(&before.metadata, &after.metadata);
        let unresolved = retired_in(&after.metadata, &before.metadata);
        let (from, to) = (provenance(&before.metadata), provenance(&after.metadata));
        let between_sources =
            from.is_some() && to.is_some() && from != to && !by_curator(&after.metadata);
        let keys: BTreeSet<&String> = before
            .attributes
            .keys()
            .chain(after.attributes.keys())
            .chain(&resolved)
            .chain(&unresolved)
            .collect();
        for key in keys {
            let slot = (e, key.clone());
            if resolved.contains(key) {
                if let Some(o) = self.found.remove(&slot) {
                    self.settled.insert(slot, o);
                }
                continue;
            }
            let (old, new) = (before.attributes.get(key), after.attributes.get(key));
            if old == new {
                if unresolved.contains(key)
                    && let Some(o) = self.settled.remove(&slot)
                {
                    self.found.insert(slot, o);
                }
                continue;
            }
            self.settled.remove(&slot);
            match (old, new) {
                (Some(old), Some(new)) if between_sources && !old.is_null() && !new.is_null() => {
                    let o = Overwrite {
                        attribute: key.clone(),
                        earlier: old.clone(),
                        earlier_meta: before.metadata.clone(),
                        current: new.clone(),
                        current_meta: after.metadata.clone(),
                        entry: entry.to_owned(),
                        at: at.to_owned(),
                        type_name: c.type_name.clone(),
                        name: c.name.clone(),
                    };
                    self.found.insert(slot, o);
                }
                _ => {
                    self.found.remove(&slot);
                }
            }
        }
    }
}

/// Every attribute overwrite between sources the trace keeps, by element
/// and attribute (the last one of each), whose value the element still
/// holds in `g`. `only` limits it to one element.
pub fn overwrites(
    g: &Graph<'_>,
    only: Option<ElementId>,
) -> Result<BTreeMap<(ElementId, String), Overwrite>> {
    let mut scan = Scan::default();
    let mut failed = None;
    let wanted = only.map(|e| format!("\"{e}\""));
    g.store
        .visit_trace_stored(g.txn, None, None, false, |id, stored| {
            let json = kip_store::stored_trace_json(stored)?;
            // Only a write that updated something can overwrite a value.
            let has = |needle: &str| memchr::memmem::find(&json, needle.as_bytes()).is_some();
            if !has("\"updated\"") || wanted.as_deref().is_some_and(|w| !has(w)) {
                return Ok(true);
            }
            // An entry this version cannot read overwrote nothing it knows.
            let Ok(body) = serde_json::from_slice::<Json>(&json) else {
                return Ok(true);
            };
            let entry = match from_body(id, body) {
                Ok(e) => e,
                Err(e) => {
                    failed = Some(e);
                    return Ok(false);
                }
            };
            if entry.kind != EntryType::Trace {
                return Ok(true);
            }
            for c in changes_of(&entry).unwrap_or_default() {
                if c.op != ChangeOp::Updated {
                    continue;
                }
                let Ok(e) = c.id.parse::<ElementId>() else {
                    continue;
                };
                if only.is_none_or(|o| o == e) {
                    scan.note(e, &c, &entry.id, &entry.at);
                }
            }
            Ok(true)
        })
        .map_err(|e| TxnError::from(e).0)?;
    if let Some(e) = failed {
        return Err(e);
    }
    // Only what still stands: the element holds the overwriting value.
    let mut standing = BTreeMap::new();
    for ((e, key), o) in scan.found {
        let attributes = match e {
            ElementId::Concept(c) => g.concept(c)?.map(|r| r.attributes.clone()),
            ElementId::Proposition(p) => g.proposition(p)?.map(|r| r.attributes.clone()),
        };
        if attributes.is_some_and(|a| a.get(&key) == Some(&o.current)) {
            standing.insert((e, key), o);
        }
    }
    Ok(standing)
}

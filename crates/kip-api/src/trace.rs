//! The cognitive trace's operations (BRIEF §7): list and show entries,
//! record THINK / SAY entries, review flags, revert a write, import an
//! exported trace. Entries name [`crate::Api`]'s originator unless a request
//! says otherwise.

use kip_nexus::{NewTraceEntry, Nexus, Reverted, RevertedTo, TraceEntry};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::error::ApiError;

/// `trace_entry`: one entry by id.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TraceEntryRequest {
    /// `T:…`.
    pub id: String,
}

/// `trace_add`: a THINK or SAY entry (an agent's reasoning, a curator's
/// note). `originator` defaults to the host's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TraceAddRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub originator: Option<String>,
    /// `THINK` or `SAY`.
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
    #[serde(default)]
    pub tag: Vec<String>,
    #[serde(default)]
    pub flags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional, type = "Record<string, unknown>"))]
    pub data: Option<Json>,
}

/// `trace_flag`: the review state of an entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TraceFlagRequest {
    pub id: String,
    /// Flags to set, e.g. `["Reviewed"]`.
    #[serde(default)]
    pub set: Vec<String>,
    /// Flags to clear.
    #[serde(default)]
    pub clear: Vec<String>,
}

/// `trace_revert`: undo the write an entry describes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TraceRevertRequest {
    pub id: String,
    /// Revert even though later writes touched the same elements.
    #[serde(default)]
    pub force: bool,
}

/// `trace_revert_to`: put an element back as entry `to` left it ("revert
/// to here" in an element's history).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TraceRevertToRequest {
    /// The element (`C:…` / `P:…`).
    pub element: String,
    /// An entry that touched it (`T:…`).
    pub to: String,
    /// Revert even though later writes touched other elements of those writes.
    #[serde(default)]
    pub force: bool,
}

/// `trace_import`: an exported trace, JSON Lines.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TraceImportRequest {
    pub jsonl: String,
}

/// What `trace_import` did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TraceImportResponse {
    pub imported: u64,
}

pub(crate) fn add(
    nexus: &Nexus,
    originator: &str,
    r: TraceAddRequest,
) -> Result<TraceEntry, ApiError> {
    let new = NewTraceEntry {
        originator: r.originator.unwrap_or_else(|| originator.to_owned()),
        kind: r.kind,
        message: r.message,
        tag: r.tag,
        flags: r.flags,
        data: r.data,
    };
    Ok(nexus.trace_add(&new)?)
}

pub(crate) fn revert(
    nexus: &Nexus,
    originator: &str,
    r: &TraceRevertRequest,
) -> Result<Reverted, ApiError> {
    Ok(nexus.revert(&r.id, originator, r.force)?)
}

pub(crate) fn revert_to(
    nexus: &Nexus,
    originator: &str,
    r: &TraceRevertToRequest,
) -> Result<RevertedTo, ApiError> {
    Ok(nexus.revert_to(&r.element, &r.to, originator, r.force)?)
}

/// An entry as one line of JSON Lines (the seed's field names).
pub fn jsonl_line(entry: &TraceEntry) -> String {
    serde_json::to_string(entry).unwrap_or_default()
}

/// `trace_promote`: a selection of entries becomes one episodic memory, a
/// Genesis `Event` concept linked by `involves` to the concepts the
/// entries touched (BRIEF §7).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TracePromoteRequest {
    /// The entries (`T:…`), in any order.
    pub ids: Vec<String>,
    /// The Event's name (default: "Trace session <start> by <originators>").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub name: Option<String>,
    /// The Event's `event_class` (default `TraceSession`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub event_class: Option<String>,
    /// The Event's `outcome`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub outcome: Option<String>,
}

/// What `trace_promote` wrote.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TracePromoteResponse {
    /// The Event concept's id (`C:…`).
    pub event: String,
    pub name: String,
    /// The concepts it is linked to by `involves`.
    pub linked: Vec<String>,
    /// How many entries it sums up.
    pub entries: usize,
}

/// The predicate linking an Event to what it involved; defined by the
/// promoting write itself when the nexus lacks it (Genesis has none).
pub const INVOLVES: &str = "involves";
/// At most this many entries become one Event.
pub const MAX_PROMOTED_ENTRIES: usize = 10_000;
/// At most this many touched concepts are linked.
pub const MAX_PROMOTED_LINKS: usize = 500;
/// The Event's `content_summary` is cut to this many characters.
const MAX_SUMMARY_CHARS: usize = 4_000;

/// The concepts an entry's write touched (`data.elements`, `C:…` only),
/// then those of its ranges of created concepts (`data.created`, a bulk
/// write's), at most [`MAX_PROMOTED_LINKS`] of those.
fn touched_concepts(entry: &TraceEntry) -> Vec<String> {
    let data = entry.data.as_ref();
    let mut out: Vec<String> = data
        .and_then(|d| d.get("elements"))
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .filter(|id| id.starts_with("C:"))
        .map(str::to_owned)
        .collect();
    let ranges = data
        .and_then(|d| d.get("created"))
        .and_then(Json::as_array)
        .into_iter()
        .flatten();
    let number = |v: Option<&Json>| {
        v.and_then(Json::as_str)
            .and_then(|id| id.strip_prefix("C:"))
            .and_then(|n| n.parse::<u64>().ok())
    };
    let mut ranged = 0;
    for r in ranges {
        if let (Some(first), Some(last)) = (number(r.get(0)), number(r.get(1))) {
            for n in first..=last {
                if ranged == MAX_PROMOTED_LINKS {
                    return out;
                }
                out.push(format!("C:{n}"));
                ranged += 1;
            }
        }
    }
    out
}

pub(crate) fn promote(
    api: &crate::Api,
    r: &TracePromoteRequest,
) -> Result<TracePromoteResponse, ApiError> {
    use crate::error::{ErrorCode, KipCode};
    let nexus = &api.nexus;
    if r.ids.is_empty() || r.ids.len() > MAX_PROMOTED_ENTRIES {
        return Err(ApiError::bad_request(
            "trace_promote",
            format!("`ids` must name 1 to {MAX_PROMOTED_ENTRIES} entries"),
        ));
    }
    let mut entries = Vec::with_capacity(r.ids.len());
    let mut seen = std::collections::HashSet::new();
    for id in &r.ids {
        if seen.insert(id.as_str()) {
            entries.push(nexus.trace_entry(id)?);
        }
    }
    entries.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.id.cmp(&b.id)));
    let mut participants: Vec<String> = Vec::new();
    for e in &entries {
        if !participants.contains(&e.originator) {
            participants.push(e.originator.clone());
        }
    }
    let mut summary = String::new();
    for e in &entries {
        if !summary.is_empty() {
            summary.push_str(" · ");
        }
        summary.push_str(&format!("{}: {}", e.originator, e.message));
    }
    if summary.chars().count() > MAX_SUMMARY_CHARS {
        summary = summary
            .chars()
            .take(MAX_SUMMARY_CHARS - 1)
            .collect::<String>()
            + "…";
    }
    let start = entries.first().map(|e| e.at.clone()).unwrap_or_default();
    let end = entries.last().map(|e| e.at.clone()).unwrap_or_default();
    // The touched concepts that still exist, ordinary ones only (not the
    // schema's definitions or domains), with their names.
    let mut ids: Vec<String> = Vec::new();
    for e in &entries {
        for id in touched_concepts(e) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let (linked, involves_defined) = nexus.read(|g| {
        let mut linked: Vec<(String, String)> = Vec::new();
        for id in &ids {
            let Ok(kip_nexus::ElementId::Concept(c)) = id.parse() else {
                continue;
            };
            let Some(record) = g.concept(c)? else {
                continue;
            };
            let ty = g.type_name(record.type_id)?;
            if ty.starts_with('$') || &*ty == kip_nexus::DOMAIN {
                continue;
            }
            linked.push(((*id).to_owned(), record.name.clone()));
            if linked.len() == MAX_PROMOTED_LINKS {
                break;
            }
        }
        let involves = g
            .find_concept_by_names(kip_nexus::PROPOSITION_TYPE, INVOLVES)?
            .is_some();
        Ok((linked, involves))
    })?;
    let name = r
        .name
        .clone()
        .unwrap_or_else(|| format!("Trace session {start} by {}", participants.join(", ")));
    let mut text = String::from("UPSERT {\n");
    if !involves_defined {
        text.push_str(
            "  CONCEPT ?involves {\n    {type: \"$PropositionType\", name: \"involves\"}\n    SET ATTRIBUTES {\n      description: \"An Event involves a concept: the bridge from an episode (such as a promoted trace session) to the semantic concepts it touched.\",\n      subject_types: [\"Event\"],\n      object_types: [\"*\"]\n    }\n  }\n",
        );
    }
    text.push_str("  CONCEPT ?event {\n    {type: \"Event\", name: :name}\n    SET ATTRIBUTES {\n      event_class: :event_class,\n      start_time: :start_time,\n      end_time: :end_time,\n      participants: :participants,\n      content_summary: :content_summary,\n      key_concepts: :key_concepts");
    if r.outcome.is_some() {
        text.push_str(",\n      outcome: :outcome");
    }
    text.push_str("\n    }\n");
    let mut parameters = serde_json::Map::new();
    if !linked.is_empty() {
        text.push_str("    SET PROPOSITIONS {\n");
        for (i, (id, _)) in linked.iter().enumerate() {
            text.push_str(&format!("      (\"involves\", {{id: :c{i}}})\n"));
            parameters.insert(format!("c{i}"), Json::String(id.clone()));
        }
        text.push_str("    }\n");
    }
    text.push_str("  }\n}\nWITH METADATA { source: \"trace\", trace_entries: :entries }");
    parameters.insert("name".into(), Json::String(name.clone()));
    parameters.insert(
        "event_class".into(),
        Json::String(
            r.event_class
                .clone()
                .unwrap_or_else(|| "TraceSession".into()),
        ),
    );
    parameters.insert("start_time".into(), Json::String(start));
    parameters.insert("end_time".into(), Json::String(end));
    parameters.insert("participants".into(), serde_json::json!(participants));
    parameters.insert("content_summary".into(), Json::String(summary));
    parameters.insert(
        "key_concepts".into(),
        serde_json::json!(linked.iter().map(|(_, n)| n).collect::<Vec<_>>()),
    );
    if let Some(outcome) = &r.outcome {
        parameters.insert("outcome".into(), Json::String(outcome.clone()));
    }
    parameters.insert(
        "entries".into(),
        serde_json::json!(entries.iter().map(|e| &e.id).collect::<Vec<_>>()),
    );
    let request = crate::ExecuteRequest {
        command: Some(text),
        parameters: Some(parameters),
        reason: Some(format!(
            "I promote {} trace entries to an episodic memory (an Event).",
            entries.len()
        )),
        ..crate::ExecuteRequest::default()
    };
    let response = api.execute(request);
    if let Some(error) = response.get("error") {
        let code = KipCode::ALL
            .iter()
            .copied()
            .find(|c| Some(c.as_str()) == error["code"].as_str())
            .unwrap_or(KipCode::InternalError);
        return Err(ApiError::new(
            ErrorCode::Kip(code),
            format!(
                "the Event could not be written: {}",
                error["message"].as_str().unwrap_or_default()
            ),
            error["hint"].as_str().unwrap_or("See the error's data."),
        )
        .with_data("kip_error", error.clone()));
    }
    let event = response["result"]["upsert_concept_nodes"]
        .as_array()
        .and_then(|ids| ids.last())
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_owned();
    Ok(TracePromoteResponse {
        event,
        name,
        linked: linked.into_iter().map(|(id, _)| id).collect(),
        entries: entries.len(),
    })
}

//! `trace_promote` (BRIEF §7): a selection of trace entries becomes one
//! episodic memory, an `Event` concept linked by `involves` to the
//! concepts the entries touched — the bridge from episodic to semantic
//! memory.

use kip_nexus::{Nexus, TraceEntry};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json, json};

use crate::error::{ApiError, ErrorCode, KipCode};

/// `trace_promote`: a selection of entries becomes one episodic memory, a
/// Genesis `Event` concept linked by `involves` to the concepts the
/// entries touched (BRIEF §7).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct TracePromoteRequest {
    /// The entries (`T:…`), in any order.
    pub ids: Vec<String>,
    /// The Event's name (default: "Trace session <start> by <originators>").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub name: Option<String>,
    /// The Event's `event_class` (default `TraceSession`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub event_class: Option<String>,
    /// The Event's `outcome`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub outcome: Option<String>,
}

/// What `trace_promote` wrote.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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

/// `trace_promote`: the entries `r` names become one `Event`, written as a
/// traced UPSERT through [`crate::Api::execute`] (so it is reviewable and
/// revertible like any write).
pub(crate) fn promote(
    api: &crate::Api,
    r: &TracePromoteRequest,
) -> Result<TracePromoteResponse, ApiError> {
    let entries = promoted_entries(&api.nexus, r)?;
    let episode = Episode::of(&entries);
    let (linked, involves_defined) = linked_concepts(&api.nexus, &entries)?;
    let name = r.name.clone().unwrap_or_else(|| {
        format!(
            "Trace session {} by {}",
            episode.start,
            episode.participants.join(", ")
        )
    });
    let (text, parameters) = event_upsert(r, &name, &episode, &entries, &linked, involves_defined);
    let request = crate::ExecuteRequest {
        command: Some(text),
        parameters: Some(parameters),
        reason: Some(format!(
            "I promote {} trace entries to an episodic memory (an Event).",
            entries.len()
        )),
        ..crate::ExecuteRequest::default()
    };
    let event = written_event(&api.execute(request))?;
    Ok(TracePromoteResponse {
        event,
        name,
        linked: linked.into_iter().map(|(id, _)| id).collect(),
        entries: entries.len(),
    })
}

/// The entries `r` names, each once, oldest first.
fn promoted_entries(nexus: &Nexus, r: &TracePromoteRequest) -> Result<Vec<TraceEntry>, ApiError> {
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
    Ok(entries)
}

/// What the Event says of the entries: who took part, what they said, when.
struct Episode {
    participants: Vec<String>,
    summary: String,
    start: String,
    end: String,
}

impl Episode {
    fn of(entries: &[TraceEntry]) -> Episode {
        let mut participants: Vec<String> = Vec::new();
        for e in entries {
            if !participants.contains(&e.originator) {
                participants.push(e.originator.clone());
            }
        }
        let mut summary = String::new();
        for e in entries {
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
        Episode {
            participants,
            summary,
            start: entries.first().map(|e| e.at.clone()).unwrap_or_default(),
            end: entries.last().map(|e| e.at.clone()).unwrap_or_default(),
        }
    }
}

/// The touched concepts that still exist, ordinary ones only (not the
/// schema's definitions or domains), with their names; and whether the
/// `involves` predicate is defined yet.
fn linked_concepts(
    nexus: &Nexus,
    entries: &[TraceEntry],
) -> Result<(Vec<(String, String)>, bool), ApiError> {
    let mut ids: Vec<String> = Vec::new();
    for e in entries {
        for id in touched_concepts(e) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    Ok(nexus.read(|g| {
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
    })?)
}

/// The UPSERT that writes the Event (and defines `involves` if it is not
/// yet), with its parameters.
fn event_upsert(
    r: &TracePromoteRequest,
    name: &str,
    episode: &Episode,
    entries: &[TraceEntry],
    linked: &[(String, String)],
    involves_defined: bool,
) -> (String, Map<String, Json>) {
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
    let mut parameters = Map::new();
    if !linked.is_empty() {
        text.push_str("    SET PROPOSITIONS {\n");
        for (i, (id, _)) in linked.iter().enumerate() {
            text.push_str(&format!("      (\"involves\", {{id: :c{i}}})\n"));
            parameters.insert(format!("c{i}"), Json::String(id.clone()));
        }
        text.push_str("    }\n");
    }
    text.push_str("  }\n}\nWITH METADATA { source: \"trace\", trace_entries: :entries }");
    let class = r.event_class.as_deref().unwrap_or("TraceSession");
    let names: Vec<&String> = linked.iter().map(|(_, n)| n).collect();
    let ids: Vec<&String> = entries.iter().map(|e| &e.id).collect();
    parameters.insert("name".into(), json!(name));
    parameters.insert("event_class".into(), json!(class));
    parameters.insert("start_time".into(), json!(episode.start));
    parameters.insert("end_time".into(), json!(episode.end));
    parameters.insert("participants".into(), json!(episode.participants));
    parameters.insert("content_summary".into(), json!(episode.summary));
    parameters.insert("key_concepts".into(), json!(names));
    if let Some(outcome) = &r.outcome {
        parameters.insert("outcome".into(), json!(outcome));
    }
    parameters.insert("entries".into(), json!(ids));
    (text, parameters)
}

/// The Event's id from the UPSERT's response, or its KIP error as an
/// `ApiError` with the same code.
fn written_event(response: &Json) -> Result<String, ApiError> {
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
    Ok(response["result"]["upsert_concept_nodes"]
        .as_array()
        .and_then(|ids| ids.last())
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_owned())
}

//! Appending entries in a write transaction: a command's TRACE entry
//! with the entries that accompany it, a failure's, Genesis's, and
//! retention.

use std::time::Duration;

use kip_lang::KipError;
use kip_store::{ElementId, RwTxn, Store};
use serde_json::{Map, Value as Json, json};

use crate::graph::{OrInternal as _, Result};
use crate::kml::ElementChange;
use crate::stats::Stats;

use super::entry::{
    Entry, EntryType, MAX_COMMAND_TEXT, TraceNote, TraceSettings, check_message, to_body,
};
use super::text::{summary, truncated};

/// The store-level writer of entries: everything that appends in a write
/// transaction goes through here.
pub(crate) struct Append<'a> {
    pub store: &'a Store,
    pub settings: &'a TraceSettings,
    pub at: String,
}

/// A new entry before it has its numbers.
pub(crate) struct Draft {
    pub originator: String,
    pub kind: EntryType,
    pub message: String,
    pub tag: Vec<String>,
    pub flags: Vec<String>,
    pub data: Option<Json>,
    pub elements: Vec<ElementId>,
}

impl Append<'_> {
    /// Appends `draft` in `txn` and applies retention; returns the entry.
    pub fn append(&self, txn: &mut RwTxn<'_>, draft: Draft) -> Result<Entry> {
        let entry = self.put(txn, draft)?;
        self.retain(txn)?;
        Ok(entry)
    }

    pub(super) fn put(&self, txn: &mut RwTxn<'_>, draft: Draft) -> Result<Entry> {
        self.put_ranged(txn, draft, &[])
    }

    /// [`Append::put`] with ranges of elements the entry's write created.
    pub(super) fn put_ranged(
        &self,
        txn: &mut RwTxn<'_>,
        draft: Draft,
        created: &[(ElementId, ElementId)],
    ) -> Result<Entry> {
        let slot = self.store.next_trace_slot(txn, &draft.originator).kip()?;
        let entry = Entry {
            id: format!("T:{}", slot.id),
            originator: draft.originator,
            kind: draft.kind,
            seq: slot.seq.to_string(),
            message: draft.message,
            tag: draft.tag,
            flags: draft.flags,
            at: self.at.clone(),
            data: draft.data,
        };
        let body = to_body(&entry);
        self.store
            .put_trace_with_ranges(txn, slot.id, &body, &draft.elements, created)
            .kip()?;
        Ok(entry)
    }

    pub(super) fn retain(&self, txn: &mut RwTxn<'_>) -> Result<()> {
        let keep = self.settings.max_entries.max(2);
        let cutoff = self.settings.max_age.and_then(|age| {
            let t = time::OffsetDateTime::now_utc() - age;
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        });
        let expired = |v: &Json| {
            let at = v.get("at").and_then(Json::as_str).unwrap_or_default();
            cutoff.as_deref().is_some_and(|c| at < c)
        };
        let len = self.store.trace_len(txn).kip()?;
        if len <= keep && cutoff.is_none() {
            return Ok(());
        }
        // Room for the SPACE entry that reports the drop.
        let dropped = self
            .store
            .trim_trace(
                txn,
                keep - 1,
                cutoff.as_ref().map(|_| &expired as &dyn Fn(&Json) -> bool),
            )
            .kip()?;
        if dropped > 0 {
            self.put(
                txn,
                Draft {
                    originator: "system".into(),
                    kind: EntryType::Space,
                    message: format!("Retention dropped the {dropped} oldest trace entries."),
                    tag: vec!["SystemEvent".into()],
                    flags: Vec::new(),
                    data: Some(json!({"dropped": dropped})),
                    elements: Vec::new(),
                },
            )?;
        }
        Ok(())
    }
}

/// What a committed command's entry says about it.
pub(crate) struct CommandRecord<'a> {
    pub originator: &'a str,
    pub note: &'a TraceNote,
    pub verbs: String,
    pub text: &'a str,
    pub stats: Stats,
    pub changes: Vec<ElementChange>,
    /// Ranges `(first, last)` of elements a bulk write created (see
    /// [`crate::kml::changes::BULK_CREATIONS`]); they are in neither `changes` nor
    /// `elements`.
    pub created: Vec<(ElementId, ElementId)>,
    pub change_seq: Option<u64>,
    pub duration: Duration,
}

/// Whether an element change defines schema (a `$ConceptType` or
/// `$PropositionType` concept).
pub(super) fn is_schema(c: &ElementChange) -> bool {
    matches!(
        c.type_name.as_deref(),
        Some(crate::graph::CONCEPT_TYPE | crate::graph::PROPOSITION_TYPE)
    )
}

/// The message of a write's SPACE `MetaDataChange` entry: a Genesis
/// upgrade names its versions.
fn schema_message(note: &TraceNote) -> String {
    match note.data.get("genesis_upgrade") {
        Some(v) => format!(
            "Genesis was upgraded from version {} to {}: the bundled definitions and domains were applied again with the engine's authority.",
            v["from"], v["to"]
        ),
        None => "The schema changed: type or predicate definitions were written.".into(),
    }
}

/// How many low-confidence elements an `Uncertain` reason names.
const MAX_UNCERTAIN_NAMED: usize = 5;

/// "Drug Aspirin (C:12) at 0.4", for an `Uncertain` reason.
fn uncertain_item(c: &ElementChange) -> String {
    let confidence = c
        .after
        .as_ref()
        .and_then(|s| s.metadata.get("confidence"))
        .map(Json::to_string)
        .unwrap_or_default();
    let what = match (&c.type_name, &c.name, &c.predicate) {
        (Some(t), Some(n), _) => format!("{t} {n} ({})", c.id),
        (_, _, Some(p)) => format!("a {p} link ({})", c.id),
        _ => c.id.clone(),
    };
    format!("{what} at {confidence}")
}

pub(super) fn low_confidence(c: &ElementChange) -> bool {
    c.after
        .as_ref()
        .and_then(|s| s.metadata.get("confidence"))
        .and_then(Json::as_f64)
        .is_some_and(|x| x < 0.5)
}

impl Append<'_> {
    /// The TRACE entry of a committed write (and its THINK reason, SPACE
    /// schema and import entries), in the write's transaction.
    pub fn command(&self, txn: &mut RwTxn<'_>, r: CommandRecord<'_>) -> Result<Entry> {
        let (text, cut) = truncated(r.text, MAX_COMMAND_TEXT);
        let elements: Vec<ElementId> = r.changes.iter().filter_map(|c| c.id.parse().ok()).collect();
        let mut flags = Vec::new();
        // Why the engine set each flag, in words (`data.flag_reasons`).
        let mut reasons = Map::new();
        if r.note.agent && self.settings.flag_agent_writes && r.stats.changed() {
            flags.push("Unverified".to_owned());
            reasons.insert(
                "Unverified".into(),
                Json::from("An agent wrote this; no person has reviewed it yet."),
            );
        }
        let uncertain: Vec<String> = r
            .changes
            .iter()
            .filter(|c| low_confidence(c))
            .take(MAX_UNCERTAIN_NAMED)
            .map(uncertain_item)
            .collect();
        if !uncertain.is_empty() {
            flags.push("Uncertain".to_owned());
            reasons.insert(
                "Uncertain".into(),
                Json::from(format!(
                    "Written with confidence below 0.5: {}.",
                    uncertain.join(", ")
                )),
            );
        }
        let schema = r.changes.iter().any(is_schema);
        let mut data = command_data(&r, text, cut, &elements);
        if !reasons.is_empty() {
            data.insert("flag_reasons".into(), Json::Object(reasons));
        }
        let mut tag = vec!["ToolOutput".to_owned()];
        tag.extend(r.note.tags.iter().cloned());
        let entry = self.put_ranged(
            txn,
            Draft {
                originator: r.originator.to_owned(),
                kind: EntryType::Trace,
                message: summary(&r.verbs, &r.stats),
                tag,
                flags,
                data: Some(Json::Object(data)),
                elements,
            },
            &r.created,
        )?;
        if let Some(reason) = &r.note.reason {
            check_message(reason)?;
            self.put(
                txn,
                Draft {
                    originator: r.originator.to_owned(),
                    kind: EntryType::Think,
                    message: reason.clone(),
                    tag: vec!["DecisionRationale".into()],
                    flags: Vec::new(),
                    data: Some(json!({"entry": entry.id})),
                    elements: Vec::new(),
                },
            )?;
        }
        if schema {
            self.put(
                txn,
                Draft {
                    originator: r.originator.to_owned(),
                    kind: EntryType::Space,
                    message: schema_message(r.note),
                    tag: vec!["MetaDataChange".into()],
                    flags: Vec::new(),
                    data: Some(json!({
                        "entry": entry.id,
                        "definitions": r.changes.iter().filter(|c| is_schema(c)).filter_map(|c| c.name.clone()).collect::<Vec<_>>(),
                    })),
                    elements: Vec::new(),
                },
            )?;
        }
        if let Some(file) = &r.note.import {
            self.put(
                txn,
                Draft {
                    originator: r.originator.to_owned(),
                    kind: EntryType::Space,
                    message: format!("Imported {file}."),
                    tag: vec!["SystemEvent".into()],
                    flags: Vec::new(),
                    data: Some(json!({"entry": entry.id, "file": file})),
                    elements: Vec::new(),
                },
            )?;
        }
        self.retain(txn)?;
        Ok(entry)
    }

    /// The TRACE entry of a command that failed (nothing was written).
    pub fn failure(
        &self,
        txn: &mut RwTxn<'_>,
        originator: &str,
        note: &TraceNote,
        verbs: &str,
        text: &str,
        error: &KipError,
    ) -> Result<Entry> {
        let (text, cut) = truncated(text, MAX_COMMAND_TEXT);
        let mut data = json!({
            "command": text,
            "outcome": {"error": error.code},
            "error": error.message,
        });
        if cut {
            data["command_truncated"] = json!(true);
        }
        if let Some(p) = &note.parameters {
            data["parameters"] = p.clone();
        }
        self.append(
            txn,
            Draft {
                originator: originator.to_owned(),
                kind: EntryType::Trace,
                message: format!("{verbs}: failed with {}", error.code.as_str()),
                tag: vec!["TraceError".into()],
                flags: Vec::new(),
                data: Some(data),
                elements: Vec::new(),
            },
        )
    }
}

/// The `data` of a command's TRACE entry: its text (`text`, cut if
/// `cut`), outcome, timing, the elements it touched with their
/// before-images, and what the caller's note adds.
fn command_data(
    r: &CommandRecord<'_>,
    text: String,
    cut: bool,
    elements: &[ElementId],
) -> Map<String, Json> {
    let mut data = Map::new();
    data.insert("command".into(), json!(text));
    if cut {
        data.insert("command_truncated".into(), json!(true));
    }
    if let Some(p) = &r.note.parameters {
        data.insert("parameters".into(), p.clone());
    }
    data.insert("outcome".into(), json!(r.stats));
    data.insert(
        "duration_ms".into(),
        json!((r.duration.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0),
    );
    if let Some(seq) = r.change_seq {
        data.insert("change_seq".into(), json!([seq]));
    }
    data.insert(
        "elements".into(),
        json!(elements.iter().map(ToString::to_string).collect::<Vec<_>>()),
    );
    data.insert("changes".into(), json!(r.changes));
    if !r.created.is_empty() {
        data.insert(
            "created".into(),
            json!(
                r.created
                    .iter()
                    .map(|(a, b)| [a.to_string(), b.to_string()])
                    .collect::<Vec<_>>()
            ),
        );
    }
    for (k, v) in &r.note.data {
        data.insert(k.clone(), v.clone());
    }
    data
}

/// The SPACE `Declare` entry of a new nexus, in Genesis's transaction.
pub(crate) fn declare_genesis(store: &Store, txn: &mut RwTxn<'_>, at: String) -> Result<()> {
    let settings = TraceSettings::default();
    let append = Append {
        store,
        settings: &settings,
        at,
    };
    append.append(
        txn,
        Draft {
            originator: "system".into(),
            kind: EntryType::Space,
            message: "The nexus was created and Genesis applied.".into(),
            tag: vec!["Declare".into()],
            flags: Vec::new(),
            data: None,
            elements: Vec::new(),
        },
    )?;
    Ok(())
}

/// `t` as ISO 8601, UTC, whole seconds.
pub(super) fn rfc3339(t: std::time::SystemTime) -> String {
    time::OffsetDateTime::from(t)
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

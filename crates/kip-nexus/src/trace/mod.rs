//! The cognitive trace (BRIEF §7, seed 003): who changed the memory, when,
//! why, and what exactly changed — and the way back.
//!
//! Entries have exactly the seed's fields (`originator`, `type`, `seq`,
//! `message`, `tag`, `flags`) plus what the engine adds (`id`, `at`, and for
//! commands `data`). The engine writes a command's `TRACE` entry in the same
//! write transaction as the command (`run.rs`), with the command's
//! before-image (`data.changes`, the [`ElementChange`] list a preview
//! shows), so an entry exists exactly when its write was committed and
//! [`Nexus::revert`] can put every element back.
//!
//! Reads are folded, not written: the same text from the same originator
//! within [`FOLD_WINDOW_SECS`] is one entry with a count. The folder lives in
//! memory and is flushed inside the next write transaction of this process,
//! by a small write of its own once a window has closed, or when the nexus
//! is dropped — a read never waits for a write.
//!
//! Retention ([`TraceSettings`]) drops the oldest entries first, and a
//! `SPACE` entry says how many went.

mod ops;
mod revert_to;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kip_lang::{ErrorCode, KipError};
use kip_store::{ElementId, RwTxn, Store};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json, json};

use crate::graph::{OrInternal as _, Result};
use crate::kml::ElementChange;
use crate::stats::Stats;

pub use ops::{DEFAULT_TRACE_PAGE, MAX_TRACE_PAGE, Reverted, TracePage};
pub use revert_to::RevertedTo;

/// The longest `message`, in bytes.
pub const MAX_MESSAGE: usize = 64 * 1024;
/// The longest command text kept in an entry's `data.command`, in bytes
/// (a bulk import's text is in its file; the entry keeps its beginning).
pub const MAX_COMMAND_TEXT: usize = 16 * 1024;
/// Reads of the same text by the same originator within this many seconds
/// are one entry.
pub const FOLD_WINDOW_SECS: u64 = 60;

/// The four kinds of entry of seed 003.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "TraceEntryType"))]
#[serde(rename_all = "UPPERCASE")]
pub enum EntryType {
    Trace,
    Think,
    Say,
    Space,
}

impl EntryType {
    pub fn parse(s: &str) -> Option<EntryType> {
        match s {
            "TRACE" => Some(EntryType::Trace),
            "THINK" => Some(EntryType::Think),
            "SAY" => Some(EntryType::Say),
            "SPACE" => Some(EntryType::Space),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            EntryType::Trace => "TRACE",
            EntryType::Think => "THINK",
            EntryType::Say => "SAY",
            EntryType::Space => "SPACE",
        }
    }
}

/// One entry, as every face shows it and as `kip trace export` writes it
/// (one JSON object per line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "TraceEntry"))]
pub struct Entry {
    /// `T:{n}`.
    pub id: String,
    pub originator: String,
    #[serde(rename = "type")]
    pub kind: EntryType,
    /// The entry's decimal sequence number within its originator.
    pub seq: String,
    pub message: String,
    #[serde(default)]
    pub tag: Vec<String>,
    #[serde(default)]
    pub flags: Vec<String>,
    /// ISO 8601, UTC.
    pub at: String,
    /// For commands: `command`, `parameters`, `outcome` (the change counts
    /// or the error code), `duration_ms`, `change_seq`, `elements` and the
    /// before-image `changes` (plus, for a bulk write, `created`: the
    /// ranges `[first, last]` of the ids it created, which `changes` and
    /// `elements` then leave out); for folded reads `count` and `last_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "Record<string, unknown>"))]
    pub data: Option<Json>,
}

/// Retention and recording settings.
#[derive(Clone, Debug)]
pub struct TraceSettings {
    /// Record at all (off only to measure what tracing costs).
    pub enabled: bool,
    /// Keep at most this many entries.
    pub max_entries: u64,
    /// Drop entries older than this, if set.
    pub max_age: Option<Duration>,
    /// Flag an agent's writes `Unverified`.
    pub flag_agent_writes: bool,
}

impl Default for TraceSettings {
    fn default() -> TraceSettings {
        TraceSettings {
            enabled: true,
            max_entries: 1_000_000,
            max_age: None,
            flag_agent_writes: true,
        }
    }
}

/// What a caller adds to a command's trace entry.
#[derive(Clone, Debug, Default)]
pub struct TraceNote {
    /// Who acted (else the origin's name).
    pub originator: Option<String>,
    /// The parameters the text was bound with.
    pub parameters: Option<Json>,
    /// The caller is an agent: its writes are flagged `Unverified`.
    pub agent: bool,
    /// Why, in the agent's words: a THINK `DecisionRationale` entry linked
    /// to the command's entry.
    pub reason: Option<String>,
    /// The write imports this file: a SPACE `SystemEvent` entry says so.
    pub import: Option<String>,
    /// Extra tags of the command's entry (a revert's `SelfCorrection`).
    pub tags: Vec<String>,
    /// Extra `data` fields of the command's entry (a revert's `reverts`).
    pub data: Map<String, Json>,
}

/// A new entry written by a face (`record_trace`, `kip trace add`).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct NewEntry {
    pub originator: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
    #[serde(default)]
    pub tag: Vec<String>,
    #[serde(default)]
    pub flags: Vec<String>,
    #[serde(default)]
    pub data: Option<Json>,
}

/// Which entries to list.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default, deny_unknown_fields)]
pub struct TraceFilter {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub originator: Option<String>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub tag: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub flag: Option<String>,
    /// ISO 8601; entries at or after.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub since: Option<String>,
    /// ISO 8601; entries at or before.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub until: Option<String>,
    /// Free text, case-insensitive, over the message, the command and the
    /// originator.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub text: Option<String>,
    /// Only entries that touched this element (`C:…` / `P:…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub element: Option<String>,
    /// Paging: entries older than this id (`T:…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub before: Option<String>,
    /// Entries newer than this id, oldest first (for live updates).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub after: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub limit: Option<usize>,
}

/// The in-memory state of one nexus's trace: settings and the read folder.
#[derive(Debug, Default)]
pub(crate) struct Tracer {
    pub settings: Mutex<TraceSettings>,
    folder: Mutex<Folder>,
}

#[derive(Debug, Default)]
struct Folder {
    /// Open folds by originator, then by text (looked up without
    /// allocating: a read that folds costs a lock and two hash lookups).
    open: HashMap<String, HashMap<String, Fold>>,
    /// Folds whose window closed, waiting for a write.
    ready: Vec<Fold>,
    since_flush: Option<Instant>,
}

#[derive(Clone, Debug)]
pub(crate) struct Fold {
    originator: String,
    text: String,
    first_at: String,
    last: std::time::SystemTime,
    started: Instant,
    count: u64,
    error: Option<String>,
}

fn invalid(message: impl Into<String>, hint: &str) -> KipError {
    KipError::new(ErrorCode::InvalidSyntax, message).with_hint(hint)
}

/// `T:12` → 12.
pub fn parse_entry_id(id: &str) -> Result<u64> {
    id.strip_prefix("T:")
        .and_then(|n| n.parse::<u64>().ok())
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            KipError::new(
                ErrorCode::InvalidSyntax,
                format!("`{id}` is not a trace entry id"),
            )
            .with_hint("Trace entry ids look like T:42; `kip trace list` shows them.")
        })
}

fn is_word(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s.len() <= 64
}

/// Checks tags or flags: words of `[A-Za-z][A-Za-z0-9_]*`.
pub fn check_words(what: &str, words: &[String]) -> Result<()> {
    if let Some(bad) = words.iter().find(|w| !is_word(w)) {
        return Err(invalid(
            format!("the {what} `{bad}` is not a word of letters, digits and `_`"),
            "Tags and flags match [A-Za-z][A-Za-z0-9_]* (at most 64 characters), e.g. DecisionRationale or Unverified.",
        ));
    }
    Ok(())
}

fn check_message(message: &str) -> Result<()> {
    if message.trim().is_empty() {
        return Err(invalid(
            "a trace entry's message cannot be empty",
            "Say in a sentence what happened or why.",
        ));
    }
    if message.len() > MAX_MESSAGE {
        return Err(invalid(
            format!(
                "a trace entry's message holds {} bytes; at most {MAX_MESSAGE} are kept",
                message.len()
            ),
            "Shorten the message; put long material in the nexus itself.",
        ));
    }
    Ok(())
}

fn check_originator(originator: &str) -> Result<()> {
    if originator.trim().is_empty() || originator.len() > kip_store::MAX_ORIGINATOR_LEN {
        return Err(invalid(
            format!(
                "an originator must hold 1 to {} bytes",
                kip_store::MAX_ORIGINATOR_LEN
            ),
            "Name who acts, e.g. claude-desktop or curator.",
        ));
    }
    Ok(())
}

impl NewEntry {
    /// Checks a face's entry: a known type, a message of 1 byte to 64 KiB,
    /// words for tags and flags. `TRACE` entries are the engine's.
    pub fn check(&self) -> Result<EntryType> {
        let kind = EntryType::parse(&self.kind).ok_or_else(|| {
            invalid(
                format!("`{}` is not a trace entry type", self.kind),
                "Use THINK (your reasoning) or SAY (a note to others); TRACE and SPACE entries are the engine's.",
            )
        })?;
        check_originator(&self.originator)?;
        check_message(&self.message)?;
        check_words("tag", &self.tag)?;
        check_words("flag", &self.flags)?;
        if self.data.as_ref().is_some_and(|d| !d.is_object()) {
            return Err(invalid(
                "a trace entry's data must be an object",
                "Send data as {\"key\": value, …} or leave it out.",
            ));
        }
        Ok(kind)
    }
}

/// The start of `text` that the trace keeps of it (what [`truncated`] to
/// [`MAX_COMMAND_TEXT`] cuts it to, one character more so that the cut
/// still shows): all a write that drops its text early needs to keep.
pub(crate) fn kept_head(text: &str) -> &str {
    if text.len() <= MAX_COMMAND_TEXT {
        return text;
    }
    let mut end = MAX_COMMAND_TEXT + 1;
    while !text.is_char_boundary(end) {
        end += 1;
    }
    &text[..end]
}

fn truncated(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_owned(), false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_owned(), true)
}

/// "UPSERT: created 2 concepts, 1 link; deleted 1 link".
pub(crate) fn summary(verb: &str, s: &Stats) -> String {
    let count = |n: u64, one: &str, many: &str| {
        (n > 0).then(|| format!("{n} {}", if n == 1 { one } else { many }))
    };
    let mut parts = Vec::new();
    for (what, concepts, links) in [
        ("created", s.concepts_created, s.propositions_created),
        ("updated", s.concepts_updated, s.propositions_updated),
        ("deleted", s.concepts_deleted, s.propositions_deleted),
    ] {
        let items: Vec<String> = [
            count(concepts, "concept", "concepts"),
            count(links, "link", "links"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !items.is_empty() {
            parts.push(format!("{what} {}", items.join(", ")));
        }
    }
    if parts.is_empty() {
        format!("{verb}: changed nothing")
    } else {
        format!("{verb}: {}", parts.join("; "))
    }
}

/// The verbs of a text's commands, e.g. "UPSERT" or "UPSERT, DELETE".
pub(crate) fn verbs(commands: &[kip_lang::ast::Command]) -> String {
    let mut out: Vec<&str> = Vec::new();
    for c in commands {
        add_verb(&mut out, c);
    }
    join_verbs(&out)
}

/// Adds `c`'s verb to `verbs` unless it is there already.
pub(crate) fn add_verb(verbs: &mut Vec<&'static str>, c: &kip_lang::ast::Command) {
    use kip_lang::ast::Command as C;
    let v = match c {
        C::Find(_) => "FIND",
        C::Describe(_) => "DESCRIBE",
        C::Search(_) => "SEARCH",
        C::Export(_) => "EXPORT",
        C::Upsert(_) => "UPSERT",
        C::Delete(_) => "DELETE",
        C::Update(_) => "UPDATE",
        C::Merge(_) => "MERGE",
    };
    if !verbs.contains(&v) {
        verbs.push(v);
    }
}

/// The verbs as a trace entry names them.
pub(crate) fn join_verbs(verbs: &[&str]) -> String {
    if verbs.is_empty() {
        "KIP".to_owned()
    } else {
        verbs.join(", ")
    }
}

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

    fn put(&self, txn: &mut RwTxn<'_>, draft: Draft) -> Result<Entry> {
        self.put_ranged(txn, draft, &[])
    }

    /// [`Append::put`] with ranges of elements the entry's write created.
    fn put_ranged(
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

    fn retain(&self, txn: &mut RwTxn<'_>) -> Result<()> {
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

/// The stored body: the entry without its id (the key is the id).
fn to_body(entry: &Entry) -> Json {
    let mut v = serde_json::to_value(entry).unwrap_or(Json::Null);
    if let Some(o) = v.as_object_mut() {
        o.remove("id");
    }
    v
}

pub(crate) fn from_body(id: u64, mut body: Json) -> Result<Entry> {
    if let Some(o) = body.as_object_mut() {
        o.insert("id".into(), json!(format!("T:{id}")));
    }
    serde_json::from_value(body).map_err(|e| {
        KipError::new(
            ErrorCode::InternalError,
            format!("trace entry T:{id} cannot be read: {e}"),
        )
    })
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
fn is_schema(c: &ElementChange) -> bool {
    matches!(
        c.type_name.as_deref(),
        Some(crate::CONCEPT_TYPE | crate::PROPOSITION_TYPE)
    )
}

fn low_confidence(c: &ElementChange) -> bool {
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
        if r.note.agent && self.settings.flag_agent_writes && r.stats.changed() {
            flags.push("Unverified".to_owned());
        }
        if r.changes.iter().any(low_confidence) {
            flags.push("Uncertain".to_owned());
        }
        let schema = r.changes.iter().any(is_schema);
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
                    message: "The schema changed: type or predicate definitions were written."
                        .into(),
                    tag: vec!["MetaDataChange".into()],
                    flags: Vec::new(),
                    data: Some(json!({"entry": entry.id})),
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

impl Tracer {
    pub fn settings(&self) -> TraceSettings {
        self.settings.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Counts a read in the folder; `true` if a closed window waits long
    /// enough that the caller should flush it with a small write.
    pub fn fold_read(&self, originator: &str, text: &str, error: Option<String>) -> bool {
        let Ok(mut f) = self.folder.lock() else {
            return false;
        };
        let now = Instant::now();
        let window = Duration::from_secs(FOLD_WINDOW_SECS);
        if let Some(open) = f.open.get_mut(originator).and_then(|m| m.get_mut(text))
            && now.duration_since(open.started) < window
        {
            open.count += 1;
            open.last = std::time::SystemTime::now();
            if error.is_some() {
                open.error = error;
            }
            return false;
        }
        // A new window: close every window that ended (this one included).
        let mut closed = Vec::new();
        for texts in f.open.values_mut() {
            texts.retain(|_, v| {
                let ended = now.duration_since(v.started) >= window;
                if ended {
                    closed.push(v.clone());
                }
                !ended
            });
        }
        f.open.retain(|_, m| !m.is_empty());
        f.ready.extend(closed);
        f.open.entry(originator.to_owned()).or_default().insert(
            text.to_owned(),
            Fold {
                originator: originator.to_owned(),
                text: text.to_owned(),
                first_at: crate::clock::now(),
                last: std::time::SystemTime::now(),
                started: now,
                count: 1,
                error,
            },
        );
        let due = !f.ready.is_empty()
            && f.since_flush
                .is_none_or(|t| now.duration_since(t) >= window);
        if due {
            f.since_flush = Some(now);
        }
        due
    }

    /// Takes the folds to write: the closed ones, or all of them (`all`,
    /// when the nexus closes or a write goes by). A write closure may run
    /// twice, so folds are taken before it and put back if it fails.
    pub(crate) fn take_folds(&self, all: bool) -> Vec<Fold> {
        let Ok(mut f) = self.folder.lock() else {
            return Vec::new();
        };
        let mut out = std::mem::take(&mut f.ready);
        if all {
            out.extend(f.open.drain().flat_map(|(_, m)| m.into_values()));
        }
        out
    }

    /// Writes `folds` (taken by [`Tracer::take_folds`]) in `txn`.
    pub(crate) fn write_folds(
        append: &Append<'_>,
        txn: &mut RwTxn<'_>,
        folds: &[Fold],
    ) -> Result<()> {
        for fold in folds {
            append.append(txn, fold_draft(fold))?;
        }
        Ok(())
    }

    pub(crate) fn restore_folds(&self, folds: Vec<Fold>) {
        if let Ok(mut f) = self.folder.lock() {
            f.ready.extend(folds);
        }
    }

    pub(crate) fn has_folds(&self) -> bool {
        self.folder
            .lock()
            .is_ok_and(|f| !f.ready.is_empty() || !f.open.is_empty())
    }
}

fn fold_draft(f: &Fold) -> Draft {
    let verb = f
        .text
        .split_whitespace()
        .next()
        .map(|w| {
            w.split(|c: char| !c.is_ascii_alphabetic())
                .next()
                .unwrap_or_default()
                .to_ascii_uppercase()
        })
        .filter(|w| !w.is_empty())
        .unwrap_or_else(|| "KIP".into());
    let (text, _) = truncated(&f.text, MAX_COMMAND_TEXT);
    let times = if f.count == 1 {
        "once".to_owned()
    } else {
        format!("{} times", f.count)
    };
    let mut data = json!({
        "command": text,
        "read_only": true,
        "count": f.count,
        "first_at": f.first_at,
        "last_at": rfc3339(f.last),
    });
    let mut tag = vec!["ToolOutput".to_owned()];
    if let Some(code) = &f.error {
        data["outcome"] = json!({"error": code});
        tag = vec!["TraceError".into()];
    }
    Draft {
        originator: f.originator.clone(),
        kind: EntryType::Trace,
        message: format!("{verb}: read {times}"),
        tag,
        flags: Vec::new(),
        data: Some(data),
        elements: Vec::new(),
    }
}

/// Whether `entry` matches `filter` (everything but the id range and the
/// element, which the caller's scan handles).
pub(crate) fn matches(entry: &Entry, filter: &TraceFilter) -> bool {
    if filter
        .originator
        .as_ref()
        .is_some_and(|o| &entry.originator != o)
    {
        return false;
    }
    if filter
        .kind
        .as_ref()
        .is_some_and(|k| !k.eq_ignore_ascii_case(entry.kind.as_str()))
    {
        return false;
    }
    if filter.tag.as_ref().is_some_and(|t| !entry.tag.contains(t)) {
        return false;
    }
    if filter
        .flag
        .as_ref()
        .is_some_and(|t| !entry.flags.contains(t))
    {
        return false;
    }
    if filter
        .since
        .as_ref()
        .is_some_and(|s| entry.at.as_str() < s.as_str())
    {
        return false;
    }
    if filter
        .until
        .as_ref()
        .is_some_and(|u| entry.at.as_str() > u.as_str())
    {
        return false;
    }
    if let Some(text) = &filter.text {
        let needle = text.to_lowercase();
        let command = entry
            .data
            .as_ref()
            .and_then(|d| d.get("command"))
            .and_then(Json::as_str)
            .unwrap_or_default();
        let hay = [entry.message.as_str(), command, entry.originator.as_str()];
        if !hay.iter().any(|h| h.to_lowercase().contains(&needle)) {
            return false;
        }
    }
    true
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
fn rfc3339(t: std::time::SystemTime) -> String {
    time::OffsetDateTime::from(t)
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

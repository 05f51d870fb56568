//! What an entry is: its kinds and fields, the settings and filters over
//! entries, the checks of a new entry, and its stored body.

use std::time::Duration;

use kip_lang::{ErrorCode, KipError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json, json};

use crate::graph::Result;

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

/// A new entry written by a face (`record_trace`, `kip trace add`, the
/// `trace_add` operation: `TraceAddRequest` on the wire).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "TraceAddRequest"))]
#[serde(deny_unknown_fields)]
pub struct NewEntry {
    /// Who acted; a host fills in its own originator when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
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
    #[cfg_attr(feature = "ts", ts(optional, type = "Record<string, unknown>"))]
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
    /// `true`: only folded reads (with the ids they returned in
    /// `data.returned`); `false`: everything but them.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reads: Option<bool>,
    /// Paging: entries older than this id (`T:…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub before: Option<String>,
    /// Entries newer than this id, oldest first (for live updates; `T:0`,
    /// the `last_id` of an empty trace: from the first entry).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub after: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub limit: Option<usize>,
}

pub(super) fn invalid(message: impl Into<String>, hint: &str) -> KipError {
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

pub(super) fn is_word(s: &str) -> bool {
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

pub(super) fn check_message(message: &str) -> Result<()> {
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

pub(super) fn check_originator(originator: &str) -> Result<()> {
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
        check_originator(self.originator.as_deref().unwrap_or_default())?;
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

/// The stored body: the entry without its id (the key is the id).
pub(super) fn to_body(entry: &Entry) -> Json {
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
    if let Some(reads) = filter.reads {
        let read = entry
            .data
            .as_ref()
            .and_then(|d| d.get("read_only"))
            .and_then(Json::as_bool)
            == Some(true);
        if read != reads {
            return false;
        }
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

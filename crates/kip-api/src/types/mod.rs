//! The request and response types of every operation, as they travel as
//! JSON. TypeScript declarations are generated from these types (see
//! `bindings.rs`); JSON values that KIP defines (results, attributes) are
//! `JsonValue` there.
//!
//! Counts and sequence numbers are `u64` in Rust and `number` in
//! TypeScript: they stay far below 2^53.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::error::ApiError;

pub use kip_logic::{
    Identity, MissingInputs, MissingParam, ParamsFrom, PropertyDebug, ResolveDebug, ResolveOptions,
    ResolveRequest, ResolveResponse,
};

/// The arguments of `execute_kip` (seed 001 §6.1): exactly one of `command`
/// and `commands`, optional `parameters` and `dry_run` — the engine's own
/// request type.
pub use kip_nexus::{BatchItem, ExecuteKip as ExecuteRequest};

/// Whether a KIP response carries an error: its own, or (for a batch,
/// whose `result` lists one response per command) any command's. A
/// single FIND's `result` is an array of values, never of responses.
pub fn response_failed(response: &Json, batch: bool) -> bool {
    response.get("error").is_some()
        || (batch
            && response["result"]
                .as_array()
                .is_some_and(|items| items.iter().any(|r| r.get("error").is_some())))
}

/// A KIP response (seed 001 §6.2): `result` on success, `error` on failure,
/// `next_cursor` when more rows exist. A batch's `result` is an array of
/// such objects, one per executed command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KipResponse {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "JsonValue"))]
    pub result: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub error: Option<ApiError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub next_cursor: Option<String>,
    /// With `explain: true` on a FIND: the plan, rows per step and, for an
    /// empty result (or a refused query), why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "Explain"))]
    pub explain: Option<Json>,
}

/// Check KIP text for an editor.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ValidateRequest {
    /// The editor's whole text (one or more commands).
    pub text: String,
    /// The parameters panel's values. When absent, placeholders are not
    /// checked (the editor may not know them yet); when present, a missing
    /// one is a `KIP_3001` diagnostic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "{ [key in string]?: JsonValue }"))]
    pub parameters: Option<Map<String, Json>>,
}

/// All problems found in a text, each with its exact range.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ValidateResponse {
    /// No diagnostics.
    pub ok: bool,
    /// Commands in the text (0 when it does not parse).
    pub commands: u32,
    /// Whether the text was also checked against the live schema (defined
    /// types and predicates). That check runs for KQL and META when the
    /// text parses and binds; KML is only checked for syntax, because a
    /// schema check of a write would take the nexus's write lock on every
    /// keystroke.
    pub schema_checked: bool,
    /// In source order.
    pub diagnostics: Vec<Diagnostic>,
    /// The WHERE block of a single FIND, DELETE, UPDATE, MERGE or EXPORT as a diagram, when the
    /// text parses (drawn by the console's query debugger as the user types).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "Pattern"))]
    pub pattern: Option<Json>,
    /// Each command of the text, in source order: what it is, whether it
    /// writes and its placeholders. Empty when the text does not parse (the
    /// engine would then refuse to run it, so nothing can be written).
    pub outline: Vec<CommandOutline>,
}

/// One command of a text, as the engine parsed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CommandOutline {
    pub kind: CommandKind,
    /// Whether running the command changes the nexus (UPSERT, DELETE): an
    /// editor previews such a text with a dry run before it applies it.
    pub writes: bool,
    /// Where the command starts.
    pub from: TextPosition,
    /// Where it ends (exclusive).
    pub to: TextPosition,
    /// Every `:name` of the command, in source order, repeats included.
    pub placeholders: Vec<Placeholder>,
}

/// What a command does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum CommandKind {
    /// KQL: `FIND`.
    Query,
    /// KML: `UPSERT`, `DELETE`.
    Write,
    /// META: `DESCRIBE`, `SEARCH`.
    Meta,
}

/// One `:name` placeholder, whose value comes from `parameters`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Placeholder {
    /// The name without the `:`.
    pub name: String,
    /// Where the `:` is.
    pub from: TextPosition,
    /// The end of the name (exclusive).
    pub to: TextPosition,
}

/// One problem in a text, with the range an editor underlines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Diagnostic {
    #[cfg_attr(feature = "ts", ts(type = "ErrorCode"))]
    pub code: crate::ErrorCode,
    pub message: String,
    pub hint: String,
    /// Where the problem starts.
    pub from: TextPosition,
    /// Where it ends (exclusive); equal to `from` for a point.
    pub to: TextPosition,
    /// "Did you mean" candidates, best first.
    pub suggestions: Vec<String>,
}

/// A position in a text in every unit an editor may need.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TextPosition {
    /// 1-based line.
    pub line: u32,
    /// 1-based column in Unicode scalar values (`阿司匹林` is 4 columns).
    pub column: u32,
    /// Byte offset in the UTF-8 text.
    pub offset: u32,
    /// Offset in UTF-16 code units: what JavaScript strings and CodeMirror count.
    pub utf16: u32,
}

/// An element, by id or by its concept identity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(untagged)]
pub enum ElementRef {
    /// `{"id": "C:12"}` or `{"id": "P:7"}`.
    Id { id: String },
    /// `{"type": "Drug", "name": "Aspirin"}`.
    Concept {
        #[serde(rename = "type")]
        #[cfg_attr(feature = "ts", ts(rename = "type"))]
        ty: String,
        name: String,
    },
}

/// Which end of a link the element is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The element is the subject: `(element, predicate, ?neighbour)`.
    Outgoing,
    /// The element is the object: `(?neighbour, predicate, element)`.
    Incoming,
}

/// An element's neighbourhood: its links counted by predicate and
/// direction, and, when `predicate` is given, one page of those links.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct NeighbourhoodRequest {
    pub element: ElementRef,
    /// The predicate whose links to page through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub predicate: Option<String>,
    /// With `predicate`: which direction (default `outgoing`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub direction: Option<Direction>,
    /// Links to skip (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub offset: Option<u64>,
    /// Page size (default 50, at most 1,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub limit: Option<u32>,
    /// The neighbourhood as of a past time (ISO 8601) or trace entry
    /// (`T:n`), rebuilt from the trace (see `Nexus::as_of`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub as_of: Option<String>,
}

/// The answer to a [`NeighbourhoodRequest`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct NeighbourhoodResponse {
    /// The element's full object (as FIND returns it for a bare `?x`).
    #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
    pub element: Json,
    /// Links where the element is the subject, counted per predicate
    /// (largest count first, then by name).
    pub outgoing: Vec<PredicateCount>,
    /// Links where the element is the object, counted per predicate.
    pub incoming: Vec<PredicateCount>,
    pub total_outgoing: u64,
    pub total_incoming: u64,
    /// The requested page, when a predicate was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub page: Option<LinkPage>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PredicateCount {
    pub predicate: String,
    pub count: u64,
}

/// One page of an element's links with one predicate in one direction:
/// "showing `links.length` of `total`".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LinkPage {
    pub predicate: String,
    pub direction: Direction,
    pub offset: u64,
    pub limit: u32,
    /// All links with this predicate in this direction.
    pub total: u64,
    /// In a stable order (by the neighbour's id), so pages neither repeat
    /// nor skip while nothing is written.
    pub links: Vec<Link>,
    /// The `offset` of the next page, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub next_offset: Option<u64>,
}

/// A link and the element at its other end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Link {
    /// The proposition object (`_type: "PropositionLink"`).
    #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
    pub proposition: Json,
    /// The concept or proposition at the other end.
    #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
    pub neighbour: Json,
}

/// Poll the change log.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ChangesRequest {
    /// The last sequence number already seen (0 for "from the start of the log").
    #[serde(default)]
    pub since: u64,
    /// At most this many entries (default and maximum 1,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub limit: Option<u32>,
}

/// New change-log entries, oldest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ChangesResponse {
    /// The sequence number of the last committed change.
    pub last_seq: u64,
    pub changes: Vec<Change>,
    /// Entries after `since` were already dropped from the log (it keeps the
    /// last 10,000), or the nexus was replaced: reload everything.
    pub reset: bool,
    /// More entries exist after the last one returned (ask again from its `seq`).
    pub more: bool,
}

/// One committed write, as the engine logged it in the same transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Change {
    pub seq: u64,
    /// Which program wrote: `kip-cli`, `kip-serve`, `kip-mcp`, `kip-explorer`, …
    pub origin: String,
    /// Who the trace names as acting (`cli`, `curator`, an agent's name);
    /// absent in entries an earlier version logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub originator: Option<String>,
    /// The write's trace entry (`T:…`), when it was traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub trace: Option<String>,
    /// The writing process.
    pub pid: u32,
    /// When (ISO 8601, UTC).
    pub at: String,
    /// Whether the writing process is the one answering this request:
    /// `false` marks another process's write (an agent, `kip exec`, …).
    pub own_process: bool,
    pub stats: ChangeStats,
}

/// What a write changed: the engine's one change-statistics type.
pub use kip_nexus::Stats as ChangeStats;

/// Import one file's contents (a `.kip` capsule or a YAML knowledge bundle).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    /// The file's name; its extension (`.kip`, `.yaml`, `.yml`) picks the
    /// format, and it names the file in error locations.
    pub file_name: String,
    /// The file's text.
    pub text: String,
    /// Check everything and run the import in a transaction that is then
    /// aborted: the report says exactly what an import would do, and
    /// nothing is written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub dry_run: Option<bool>,
}

/// What a host serves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct NexusInfo {
    /// The nexus folder.
    pub path: String,
    /// Writes are refused with `KIP_3004`.
    pub read_only: bool,
    /// The origin this host writes under.
    pub origin: String,
    pub pid: u32,
    pub concepts: u64,
    pub propositions: u64,
    pub last_change_seq: u64,
    /// The version of KIP Explorer.
    pub version: String,
}

/// Format KIP text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct FormatRequest {
    pub text: String,
}

/// The canonical form of a text (comments kept).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FormatResponse {
    pub formatted: String,
    /// The text was not already canonical.
    pub changed: bool,
}

mod host;
pub use host::*;

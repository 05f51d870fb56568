//! The types of the operations around the knowledge: the watched folder,
//! the store's check and backups, paths between elements, and the settings
//! and preferences hosts keep.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use super::ElementRef;

/// The watched capsule folder as a host sees it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WatchStatus {
    /// The folder, or `null` when this host watches none.
    pub folder: Option<String>,
    /// The files present when watching started have all been taken up.
    pub ready: bool,
    /// By path.
    pub files: Vec<WatchedFile>,
    /// Why the folder is not watched, or the last trouble watching it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub note: Option<String>,
}

/// One file of the watched folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct WatchedFile {
    pub path: String,
    pub status: FileStatus,
    /// The last import's errors (`{code, message, path?, line?, column?, hint, suggestions?}`).
    #[cfg_attr(feature = "ts", ts(type = "Array<JsonValue>"))]
    pub errors: Vec<Json>,
    /// The last import report, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "JsonValue"))]
    pub report: Option<Json>,
    /// How far the import under way is (large files, while `importing`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub progress: Option<ImportProgress>,
}

/// How far a file's import is: the importer's latest report (a few a
/// second at most).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportProgress {
    /// `parsing`, `validating` or `applying`.
    pub phase: String,
    /// Items of the phase done and in all (checked, then written).
    pub items: u64,
    pub total_items: u64,
    /// Bytes of the file taken in, and its size.
    pub bytes: u64,
    pub total_bytes: u64,
    /// Since the file's import started, in milliseconds.
    pub elapsed_ms: u64,
}

impl From<&kip_capsule::Progress> for ImportProgress {
    fn from(p: &kip_capsule::Progress) -> ImportProgress {
        ImportProgress {
            phase: serde_json::to_value(p.phase)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            items: p.done,
            total_items: p.total,
            bytes: p.bytes,
            total_bytes: p.total_bytes,
            elapsed_ms: p.elapsed_ms,
        }
    }
}

/// Where a watched file stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// Seen, not yet imported.
    Pending,
    /// Being imported.
    Importing,
    /// Its knowledge is in the nexus (now or from an earlier, identical import).
    Imported,
    /// Refused; `errors` says why. Nothing of it was applied.
    Failed,
    /// Deleted or moved away; its knowledge stays.
    Removed,
}

/// What `check_store` found: the store's invariants (every index entry has
/// its record and vice versa, counters equal counts, text postings match
/// documents, the change log is gapless), as the store reports them.
pub use kip_nexus::{
    CheckCounts as StoreCounts, CheckReport as StoreCheck, Violation as StoreViolation,
};

/// `backup`: copy the nexus now and/or set the scheduled backup. With no
/// field, backs up now into the scheduled folder.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct BackupRequest {
    /// The folder that receives the backups (each one in a new subfolder
    /// `kip-backup-<seq>-<unix seconds>`); default: the scheduled folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub dest: Option<String>,
    /// Back up now (default `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub now: Option<bool>,
    /// Set the schedule: back up into `dest` every this many hours (the
    /// host runs it while it is open); `0` turns the schedule off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub every_hours: Option<u32>,
}

/// One backup written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BackupDone {
    /// The copy's data file.
    pub path: String,
    pub bytes: u64,
    /// The last change the copy may include.
    pub last_change_seq: u64,
    /// When, in seconds since the Unix epoch.
    pub at: u64,
}

/// The scheduled backup, as the nexus's host state remembers it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BackupSchedule {
    pub dest: String,
    pub every_hours: u32,
    /// The last scheduled or manual backup into `dest`.
    pub last: Option<BackupDone>,
}

/// What `backup` did, and the schedule now in force.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct BackupResponse {
    pub backup: Option<BackupDone>,
    pub schedule: Option<BackupSchedule>,
}

/// Find the shortest paths between two elements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct PathsRequest {
    pub from: ElementRef,
    pub to: ElementRef,
    /// The longest path looked for, in links (default 4, at most 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub max_hops: Option<u32>,
    /// Walk only links with these predicates (default: every predicate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub predicates: Option<Vec<String>>,
    /// Follow links only from subject to object (default `false`: a path
    /// may walk a link either way, as a curator reads "connected").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub directed: Option<bool>,
    /// At most this many paths (default 10, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub limit: Option<u32>,
}

/// The shortest paths found: all of the same, smallest length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PathsResponse {
    /// The length in links of every path returned; `null` when no path of
    /// at most `max_hops` links exists (or none was found within the budget).
    pub hops: Option<u32>,
    /// In a stable order (the index order of the links walked).
    pub paths: Vec<GraphPath>,
    /// Every element on the returned paths (concepts and links), each once,
    /// as FIND returns it for a bare `?x`.
    #[cfg_attr(feature = "ts", ts(type = "Array<JsonValue>"))]
    pub elements: Vec<Json>,
    /// More paths may exist: the path limit was reached, or the search
    /// stopped at its budget of links examined.
    pub truncated: bool,
    /// Links examined.
    pub examined: u64,
}

/// One path: `nodes[i]` and `nodes[i + 1]` are joined by `links[i]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GraphPath {
    /// Element ids from `from` to `to`.
    pub nodes: Vec<String>,
    /// Proposition ids, one per hop.
    pub links: Vec<String>,
}

/// Read a client's settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct SettingsGetRequest {
    /// Only keys starting with this (default: every key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub prefix: Option<String>,
}

/// Store one setting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct SettingsPutRequest {
    /// Letters, digits and `._-/`, at most 200 bytes (e.g. `ui.styles`).
    pub key: String,
    /// Any JSON of at most 1 MiB; `null` forgets the key.
    #[cfg_attr(feature = "ts", ts(type = "JsonValue"))]
    pub value: Json,
}

/// Settings by key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SettingsResponse {
    #[cfg_attr(feature = "ts", ts(type = "{ [key in string]?: JsonValue }"))]
    pub values: Map<String, Json>,
}

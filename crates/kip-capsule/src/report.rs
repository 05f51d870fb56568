//! What an import says about one file: [`ImportReport`], its
//! [`ImportError`]s and the [`Progress`] of a long import.
//!
//! Reports are plain data (serde both ways) because they travel: to the
//! command line as JSON, to the app's UI through the watcher's events, into
//! the nexus's state (the watcher's memory of each file's last result), and
//! to agents through `import_knowledge_bundle`.

use kip_lang::{ErrorCode, KipError};
use kip_nexus::Stats;
use serde::{Deserialize, Serialize};
use serde_json::{Value as Json, json};

/// How many errors a report lists; the rest are only counted
/// ([`ImportReport::errors_omitted`]), so a file with an error in every
/// line of a million still yields a readable report.
pub const MAX_ERRORS: usize = 500;

/// The kind of file, chosen by its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// A `.kip` capsule: KIP commands.
    Kip,
    /// A `.yaml` / `.yml` knowledge bundle.
    Yaml,
}

impl Format {
    /// The format of a file name (`None` for anything but `.kip`, `.yaml`
    /// and `.yml`, in any letter case).
    pub fn of(file_name: &str) -> Option<Format> {
        let ext = std::path::Path::new(file_name)
            .extension()?
            .to_str()?
            .to_ascii_lowercase();
        match ext.as_str() {
            "kip" => Some(Format::Kip),
            "yaml" | "yml" => Some(Format::Yaml),
            _ => None,
        }
    }
}

/// Whether a file landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Everything in the file was applied in one transaction (or, for a dry
    /// run, would have been).
    Imported,
    /// Nothing was applied; `errors` says why.
    Failed,
}

/// One problem in a file, with where it is and how to fix it.
///
/// On the wire it is a KIP error object like every other error of KIP
/// Explorer: `{code, message, hint, data: {path?, line?, column?,
/// suggestions?}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "KipError", from = "KipError")]
pub struct ImportError {
    pub code: ErrorCode,
    pub message: String,
    /// Where in a bundle: `[4].source.name` (the item's index in the list,
    /// then keys). `None` for `.kip` capsules and whole-file problems.
    pub path: Option<String>,
    /// 1-based line.
    pub line: Option<usize>,
    /// 1-based column, in Unicode scalar values.
    pub column: Option<usize>,
    /// What to do about it.
    pub hint: String,
    /// "Did you mean" candidates, best first.
    pub suggestions: Vec<String>,
}

impl ImportError {
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> ImportError {
        ImportError {
            code,
            message: message.into(),
            path: None,
            line: None,
            column: None,
            hint: code.default_hint().to_owned(),
            suggestions: Vec::new(),
        }
    }

    pub(crate) fn hint(mut self, hint: impl Into<String>) -> ImportError {
        self.hint = hint.into();
        self
    }

    pub(crate) fn suggestions(mut self, suggestions: Vec<String>) -> ImportError {
        self.suggestions = suggestions;
        self
    }

    /// The errors a KIP error object carries: itself, or the list in its
    /// `data.errors` when it collapsed several.
    pub(crate) fn from_kip(e: &KipError) -> Vec<ImportError> {
        if let Some(Json::Array(all)) = e.data.get("errors") {
            let parsed: Vec<ImportError> = all
                .iter()
                .filter_map(|v| serde_json::from_value::<KipError>(v.clone()).ok())
                .map(|k| ImportError::from_one(&k))
                .collect();
            if !parsed.is_empty() {
                return parsed;
            }
        }
        vec![ImportError::from_one(e)]
    }

    fn from_one(e: &KipError) -> ImportError {
        let number = |k: &str| {
            e.data
                .get(k)
                .and_then(Json::as_u64)
                .and_then(|n| usize::try_from(n).ok())
        };
        let suggestions = e
            .data
            .get("suggestions")
            .and_then(Json::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        ImportError {
            code: e.code,
            message: e.message.clone(),
            path: e.data.get("path").and_then(Json::as_str).map(str::to_owned),
            line: number("line"),
            column: number("column"),
            hint: e.hint.clone(),
            suggestions,
        }
    }

    /// The error as a KIP error object (`data.path`, `data.line`,
    /// `data.column`, `data.suggestions`).
    pub fn to_kip_error(&self) -> KipError {
        self.clone().into()
    }
}

impl From<KipError> for ImportError {
    fn from(e: KipError) -> ImportError {
        ImportError::from_one(&e)
    }
}

impl From<ImportError> for KipError {
    fn from(e: ImportError) -> KipError {
        let mut k = KipError::new(e.code, e.message).with_hint(e.hint);
        if let Some(p) = e.path {
            k = k.with_data("path", p);
        }
        if let Some(l) = e.line {
            k = k.with_data("line", l);
        }
        if let Some(c) = e.column {
            k = k.with_data("column", c);
        }
        k.with_suggestions(&e.suggestions)
    }
}

/// The outcome of importing one file.
//
// The TypeScript declaration marks the fields serde leaves out when empty
// as possibly `undefined`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportReport {
    /// The file as it was named to the importer.
    pub file: String,
    /// `None` when the extension is not a capsule's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub format: Option<Format>,
    pub status: Status,
    /// A validation and an aborted transaction: nothing was written.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(type = "boolean | undefined"))]
    pub dry_run: bool,
    /// `sha256:<hex>` of the file's bytes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(feature = "ts", ts(type = "string | undefined"))]
    pub hash: String,
    /// Items of a bundle, or commands of a capsule.
    pub items: usize,
    /// What changed (all zero when the file failed, or repeated knowledge
    /// the nexus already held).
    pub stats: Stats,
    /// Wall-clock time of the whole import, reading to commit.
    pub duration_ms: f64,
    /// Every problem found (at most [`MAX_ERRORS`]); empty when imported.
    /// Each is a KIP error object (`ApiError` in the bindings).
    #[cfg_attr(feature = "ts", ts(type = "Array<ApiError>"))]
    pub errors: Vec<ImportError>,
    /// Errors found beyond the first [`MAX_ERRORS`].
    #[serde(default, skip_serializing_if = "is_zero")]
    #[cfg_attr(feature = "ts", ts(type = "number | undefined"))]
    pub errors_omitted: usize,
    /// A dry run's diff, the engine's own: each element the import would
    /// change, before → after (the first [`MAX_PREVIEW_CHANGES`]). Empty
    /// for a committed import (the trace keeps its before-image) and for
    /// a capsule imported part by part.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(type = "Array<ElementChange> | undefined"))]
    pub changes: Vec<kip_nexus::ElementChange>,
    /// Changes of a dry run beyond the first [`MAX_PREVIEW_CHANGES`].
    #[serde(default, skip_serializing_if = "is_zero")]
    #[cfg_attr(feature = "ts", ts(type = "number | undefined"))]
    pub changes_omitted: usize,
}

/// The most changes a dry run's report lists (see [`ImportReport::changes`]).
pub const MAX_PREVIEW_CHANGES: usize = 1_000;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl ImportReport {
    pub(crate) fn new(file: &str, format: Option<Format>) -> ImportReport {
        ImportReport {
            file: file.to_owned(),
            format,
            status: Status::Failed,
            dry_run: false,
            hash: String::new(),
            items: 0,
            stats: Stats::default(),
            duration_ms: 0.0,
            errors: Vec::new(),
            errors_omitted: 0,
            changes: Vec::new(),
            changes_omitted: 0,
        }
    }

    /// Keeps a dry run's diff from the engine's `result` (one command's
    /// object with `changes`, or a list of `{result}` for several).
    pub(crate) fn keep_preview(&mut self, result: &serde_json::Value) {
        let one = |r: &serde_json::Value| {
            r.get("changes")
                .and_then(serde_json::Value::as_array)
                .cloned()
        };
        let lists: Vec<Vec<serde_json::Value>> = match result {
            serde_json::Value::Array(items) => items
                .iter()
                .filter_map(|i| i.get("result").and_then(one))
                .collect(),
            other => one(other).into_iter().collect(),
        };
        for change in lists.into_iter().flatten() {
            if self.changes.len() >= MAX_PREVIEW_CHANGES {
                self.changes_omitted += 1;
            } else if let Ok(change) = serde_json::from_value(change) {
                self.changes.push(change);
            }
        }
    }

    /// Whether the file landed.
    pub fn is_imported(&self) -> bool {
        self.status == Status::Imported
    }

    /// One line per error, `file:line:column: KIP_xxxx message (at path)`,
    /// the form editors and terminals link to.
    pub fn error_lines(&self) -> Vec<String> {
        self.errors
            .iter()
            .map(|e| {
                let mut place = self.file.clone();
                if let Some(l) = e.line {
                    place.push_str(&format!(":{l}"));
                    if let Some(c) = e.column {
                        place.push_str(&format!(":{c}"));
                    }
                }
                let at = e
                    .path
                    .as_ref()
                    .map(|p| format!(" (at {p})"))
                    .unwrap_or_default();
                format!("{place}: {} {}{at}. {}", e.code, e.message, e.hint)
            })
            .collect()
    }

    /// A failed report as one KIP error object: the first error, with all
    /// of them in `data.errors` and the file in `data.file` (the shape
    /// `execute_kip` clients already read). `None` when imported.
    pub fn to_kip_error(&self) -> Option<KipError> {
        let first = self.errors.first()?;
        let mut e = first.to_kip_error().with_data("file", self.file.clone());
        if self.errors.len() > 1 || self.errors_omitted > 0 {
            let more = self.errors.len() - 1 + self.errors_omitted;
            let noun = if more == 1 { "error" } else { "errors" };
            e.message = format!("{} (and {more} more {noun})", e.message);
            let all: Vec<Json> = self
                .errors
                .iter()
                .map(|x| x.to_kip_error().to_json())
                .collect();
            e = e.with_data("errors", Json::Array(all));
        }
        Some(e)
    }

    /// The report as JSON.
    pub fn to_json(&self) -> Json {
        serde_json::to_value(self).unwrap_or_else(|_| json!({"file": self.file}))
    }

    /// Adds errors in file order (by line, then column), keeping at most
    /// [`MAX_ERRORS`].
    pub(crate) fn add_errors_sorted(&mut self, mut errors: Vec<ImportError>) {
        errors.sort_by_key(|e| (e.line.unwrap_or(0), e.column.unwrap_or(0)));
        self.add_errors(errors);
    }

    /// Adds errors, keeping at most [`MAX_ERRORS`].
    pub(crate) fn add_errors(&mut self, errors: impl IntoIterator<Item = ImportError>) {
        for e in errors {
            if self.errors.len() < MAX_ERRORS {
                self.errors.push(e);
            } else {
                self.errors_omitted += 1;
            }
        }
    }
}

/// The stage an import is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Reading the file and parsing its syntax.
    Parsing,
    /// Checking structure and meaning; `done` / `total` count items.
    Validating,
    /// Writing, in one transaction; `done` / `total` count items.
    Applying,
}

/// Where a long import is: the phase, its items done out of `total`, and
/// how far into the file's bytes it has got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    pub phase: Phase,
    /// Items of the phase done (checked while validating, written while
    /// applying); bytes while parsing. A capsule streamed part by part
    /// reports parts applied, of a `total` of 0 (unknown), and `bytes`; a
    /// large bundle applied while it is read reports items written, of a
    /// `total` of 0 until the whole file is read, and the bytes they came
    /// from.
    pub done: u64,
    pub total: u64,
    /// Bytes of the file read and taken in so far (parsed, then checked up
    /// to the item being checked).
    #[serde(default)]
    pub bytes: u64,
    /// The file's size in bytes.
    #[serde(default)]
    pub total_bytes: u64,
    /// Since the import started, in milliseconds.
    #[serde(default)]
    pub elapsed_ms: u64,
    /// Which file of an import of several ([`crate::import_paths_with`])
    /// this is about: its position among the paths given. Reports of
    /// files applied together in one write interleave, and a file's
    /// progress comes before the reports of the files ahead of it. `None`
    /// for an import of one file or text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<usize>,
}

impl Progress {
    /// Items of `phase` done out of `total`; the bytes and time are the
    /// importer's to fill in.
    pub fn items(phase: Phase, done: u64, total: u64) -> Progress {
        Progress {
            phase,
            done,
            total,
            bytes: 0,
            total_bytes: 0,
            elapsed_ms: 0,
            file: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_shape_of_a_failed_report_is_stable() {
        let mut r = ImportReport::new("bundle.yaml", Some(Format::Yaml));
        r.hash = "sha256:00".into();
        r.items = 3;
        r.add_errors([ImportError {
            code: ErrorCode::TypeMismatch,
            message: "Entity type 'Human' is not defined".into(),
            path: Some("[1].type".into()),
            line: Some(4),
            column: Some(9),
            hint: "Did you mean 'Person'?".into(),
            suggestions: vec!["Person".into()],
        }]);
        assert_eq!(
            r.to_json(),
            json!({
                "file": "bundle.yaml",
                "format": "yaml",
                "status": "failed",
                "hash": "sha256:00",
                "items": 3,
                "stats": {
                    "concepts_created": 0, "concepts_updated": 0, "concepts_deleted": 0,
                    "propositions_created": 0, "propositions_updated": 0, "propositions_deleted": 0
                },
                "duration_ms": 0.0,
                "errors": [{
                    "code": "KIP_2001",
                    "message": "Entity type 'Human' is not defined",
                    "hint": "Did you mean 'Person'?",
                    "data": {"path": "[1].type", "line": 4, "column": 9, "suggestions": ["Person"]}
                }]
            })
        );
        let back: ImportReport = serde_json::from_value(r.to_json()).expect("round trip");
        assert_eq!(back, r);
        assert_eq!(
            r.error_lines(),
            [
                "bundle.yaml:4:9: KIP_2001 Entity type 'Human' is not defined (at [1].type). Did you mean 'Person'?"
            ]
        );
        let k = r.to_kip_error().expect("failed");
        assert_eq!(k.data["file"], "bundle.yaml");
        assert_eq!(k.data["path"], "[1].type");
    }

    #[test]
    fn keeps_at_most_max_errors_and_counts_the_rest() {
        let mut r = ImportReport::new("x.kip", Some(Format::Kip));
        r.add_errors(
            (0..MAX_ERRORS + 7).map(|i| ImportError::new(ErrorCode::NotFound, format!("{i}"))),
        );
        assert_eq!(r.errors.len(), MAX_ERRORS);
        assert_eq!(r.errors_omitted, 7);
        let k = r.to_kip_error().expect("failed");
        assert!(
            k.message
                .ends_with(&format!("(and {} more errors)", MAX_ERRORS + 6))
        );
    }

    #[test]
    fn formats_come_from_extensions() {
        assert_eq!(Format::of("a/b.KIP"), Some(Format::Kip));
        assert_eq!(Format::of("b.yml"), Some(Format::Yaml));
        assert_eq!(Format::of("b.Yaml"), Some(Format::Yaml));
        assert_eq!(Format::of("b.yaml.swp"), None);
        assert_eq!(Format::of("b"), None);
    }
}

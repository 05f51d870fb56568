//! The watched capsule folder's status, as every host reports it: a board
//! that the host feeds with the capsule watcher's events and that the
//! `watch_status` operation reads.
//!
//! The watcher itself (debounced file events, content hashes, the atomic
//! import of each file) is `kip_capsule::Watcher`; hosts own its thread and
//! its folder. This module only keeps the latest state of each file.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use kip_capsule::WatchEvent;
use serde_json::Value as Json;

use crate::types::{FileStatus, WatchStatus, WatchedFile};

/// The latest state of every file of a watched folder. Cheap to clone;
/// clones share the board.
#[derive(Clone, Debug, Default)]
pub struct WatchBoard {
    inner: Arc<Mutex<WatchStatus>>,
}

impl WatchBoard {
    /// A board for `folder`, with no file seen yet.
    pub fn new(folder: &Path) -> WatchBoard {
        WatchBoard {
            inner: Arc::new(Mutex::new(WatchStatus {
                folder: Some(folder.display().to_string()),
                ..WatchStatus::default()
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, WatchStatus> {
        // A panic while holding the lock leaves a consistent value (every
        // update is one assignment), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records one watcher event.
    pub fn apply(&self, event: &WatchEvent) {
        let mut board = self.lock();
        let set =
            |board: &mut WatchStatus, file: &Path, status: FileStatus, report: Option<Json>| {
                let path = file.display().to_string();
                let errors = report
                    .as_ref()
                    .and_then(|r| r.get("errors"))
                    .and_then(Json::as_array)
                    .cloned()
                    .unwrap_or_default();
                let entry = WatchedFile {
                    path: path.clone(),
                    status,
                    errors,
                    report,
                };
                match board.files.binary_search_by(|f| f.path.cmp(&path)) {
                    Ok(i) => {
                        // Progress and queueing keep the last report visible.
                        let old = &board.files[i];
                        let keep_report = entry.report.is_none() && status != FileStatus::Removed;
                        let merged = WatchedFile {
                            errors: if keep_report {
                                old.errors.clone()
                            } else {
                                entry.errors
                            },
                            report: if keep_report {
                                old.report.clone()
                            } else {
                                entry.report
                            },
                            ..entry
                        };
                        board.files[i] = merged;
                    }
                    Err(i) => board.files.insert(i, entry),
                }
            };
        let json = |r: &kip_capsule::ImportReport| serde_json::to_value(r).ok();
        match event {
            WatchEvent::Queued { file } => set(&mut board, file, FileStatus::Pending, None),
            WatchEvent::Importing { file } | WatchEvent::Progress { file, .. } => {
                set(&mut board, file, FileStatus::Importing, None)
            }
            WatchEvent::Imported { file, report } => {
                set(&mut board, file, FileStatus::Imported, json(report))
            }
            WatchEvent::Failed { file, report } => {
                set(&mut board, file, FileStatus::Failed, json(report))
            }
            WatchEvent::Unchanged { file, report } => {
                let failed = report
                    .as_ref()
                    .is_some_and(|r| r.status == kip_capsule::Status::Failed);
                let status = if failed {
                    FileStatus::Failed
                } else {
                    FileStatus::Imported
                };
                set(&mut board, file, status, report.as_ref().and_then(json))
            }
            WatchEvent::Removed { file } => set(&mut board, file, FileStatus::Removed, None),
            WatchEvent::Ready { .. } => board.ready = true,
            WatchEvent::Error { message } => board.note = Some(message.clone()),
        }
    }

    /// The files by path.
    pub fn status(&self) -> WatchStatus {
        self.lock().clone()
    }
}

/// What a host that watches no folder reports.
pub(crate) fn unwatched() -> WatchStatus {
    WatchStatus {
        folder: None,
        ready: true,
        files: Vec::new(),
        note: Some(
            "this host does not watch a capsule folder (the desktop app and `kip watch DIR` do); import files with the import operation".to_owned(),
        ),
    }
}

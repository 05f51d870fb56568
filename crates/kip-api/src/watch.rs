//! The watched capsule folder's status, as every host reports it: a board
//! that the host feeds with the capsule watcher's events and that the
//! `watch_status` operation reads.
//!
//! The watcher itself (debounced file events, content hashes, the atomic
//! import of each file) is `kip_capsule::Watcher`; hosts own it (and so
//! how long the folder is watched). [`Api::watch_folder`] is the glue every
//! host shares: it starts the watcher on a folder, feeds a new board and
//! returns the API that reports it. This module keeps only the latest state
//! of each file.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use kip_capsule::{WatchEvent, WatchOptions, Watcher};
use kip_nexus::Origin;
use serde_json::Value as Json;

use crate::Api;
use crate::types::{FileStatus, ImportProgress, WatchStatus, WatchedFile};

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
        let set = |board: &mut WatchStatus,
                   file: &Path,
                   status: FileStatus,
                   report: Option<Json>,
                   progress: Option<ImportProgress>| {
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
                progress,
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
            WatchEvent::Queued { file } => set(&mut board, file, FileStatus::Pending, None, None),
            WatchEvent::Importing { file } => {
                set(&mut board, file, FileStatus::Importing, None, None)
            }
            WatchEvent::Progress { file, progress } => set(
                &mut board,
                file,
                FileStatus::Importing,
                None,
                Some(progress.into()),
            ),
            WatchEvent::Imported { file, report } => {
                set(&mut board, file, FileStatus::Imported, json(report), None)
            }
            WatchEvent::Failed { file, report } => {
                set(&mut board, file, FileStatus::Failed, json(report), None)
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
                set(
                    &mut board,
                    file,
                    status,
                    report.as_ref().and_then(json),
                    None,
                )
            }
            WatchEvent::Removed { file } => set(&mut board, file, FileStatus::Removed, None, None),
            WatchEvent::Ready { .. } => board.ready = true,
            WatchEvent::Error { message } => board.note = Some(message.clone()),
        }
    }

    /// The files by path.
    pub fn status(&self) -> WatchStatus {
        self.lock().clone()
    }
}

impl Api {
    /// The watched folder's options for this host, recording its writes as
    /// `origin` and naming `--originator` (else `watcher`) in the trace.
    pub(crate) fn watch_options(&self, origin: Origin) -> WatchOptions {
        let defaults = WatchOptions::default();
        WatchOptions {
            origin,
            originator: self
                .watch_originator
                .clone()
                .unwrap_or_else(|| defaults.originator.clone()),
            ..defaults
        }
    }

    /// Watches the capsule folder `dir` for this host: a
    /// [`kip_capsule::Watcher`] imports the files it holds, then every file
    /// written or moved into it, recording the writes as `<origin>/watch`,
    /// and feeds a new [`WatchBoard`] that the returned API's
    /// `watch_status` reports.
    ///
    /// `on_change` runs on the watcher's thread after each event is on the
    /// board, with the event and the board's new status (hosts tell their
    /// UI). A folder that cannot be watched, or a read-only host (importing
    /// writes), gives no watcher and a status whose `note` says why.
    ///
    /// Watching lasts as long as the returned watcher: dropping it (or
    /// [`Watcher::stop`]) stops it, after an import under way.
    pub fn watch_folder(
        &self,
        dir: &Path,
        mut on_change: impl FnMut(&WatchEvent, WatchStatus) + Send + 'static,
    ) -> (Api, Option<Watcher>) {
        let board = WatchBoard::new(&dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()));
        let api = self.clone().with_watch(board.clone());
        if self.read_only {
            board.apply(&WatchEvent::Error {
                message: "this host is read-only and imports nothing, so the folder is not watched"
                    .to_owned(),
            });
            return (api, None);
        }
        let options = self.watch_options(Origin {
            name: format!("{}/watch", self.origin.name),
        });
        let feed = board.clone();
        let started = Watcher::start(self.nexus.clone(), dir, options, move |event| {
            feed.apply(&event);
            on_change(&event, feed.status());
        });
        match started {
            Ok(watcher) => (api, Some(watcher)),
            Err(e) => {
                board.apply(&WatchEvent::Error {
                    message: e.to_string(),
                });
                (api, None)
            }
        }
    }
}

/// What a host that watches no folder reports.
pub(crate) fn unwatched() -> WatchStatus {
    WatchStatus {
        folder: None,
        ready: true,
        files: Vec::new(),
        note: Some(
            "this host does not watch a capsule folder (the desktop app, `kip serve --capsules DIR` and `kip watch DIR` do); import files with the import operation".to_owned(),
        ),
    }
}

//! The watched capsule folder: one [`kip_capsule::Watcher`] at a time, the
//! status of each file it reported, and a `kip://watch` event to the UI
//! whenever that status changes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use kip_capsule::{ImportReport, WatchEvent, WatchOptions, Watcher};
use kip_nexus::{Nexus, Origin};
use serde::Serialize;
use serde_json::Value as Json;
use tauri::{AppHandle, Emitter as _};

/// What the Import view shows (`WatchStatus` in `ui/src/transport/types.ts`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct WatchStatus {
    pub folder: Option<String>,
    pub files: Vec<WatchedFile>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct WatchedFile {
    pub path: String,
    /// `pending`, `imported`, `failed` or `removed`.
    pub status: &'static str,
    /// The failed import's errors, as `kip-capsule` reports them.
    pub errors: Vec<Json>,
    /// Milliseconds since the Unix epoch.
    pub at: u64,
}

#[derive(Default)]
struct Inner {
    folder: Option<PathBuf>,
    files: BTreeMap<PathBuf, WatchedFile>,
    note: Option<String>,
    watcher: Option<Watcher>,
    /// Bumped on every (re)start, so a stopped watcher's late events are dropped.
    generation: u64,
}

/// Shared handle on the watcher and its status.
#[derive(Clone)]
pub struct WatchHandle {
    app: AppHandle,
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for WatchHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchHandle")
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn errors_of(report: &ImportReport) -> Vec<Json> {
    report
        .errors
        .iter()
        .map(|e| serde_json::to_value(e).unwrap_or(Json::Null))
        .collect()
}

impl WatchHandle {
    pub fn new(app: AppHandle) -> WatchHandle {
        WatchHandle {
            app,
            inner: Arc::new(Mutex::new(Inner::default())),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves plain data behind: keep going.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn status(&self) -> WatchStatus {
        let inner = self.lock();
        WatchStatus {
            folder: inner.folder.as_ref().map(|f| f.display().to_string()),
            files: inner.files.values().cloned().collect(),
            note: inner.note.clone(),
        }
    }

    fn emit(&self) {
        let _ = self.app.emit("kip://watch", self.status());
    }

    pub fn set_note(&self, note: String) {
        self.lock().note = Some(note);
        self.emit();
    }

    /// Stops the current watcher (an import under way finishes) and watches `dir`.
    pub fn start(&self, nexus: Arc<Nexus>, dir: &Path) {
        let (old, generation) = {
            let mut inner = self.lock();
            inner.generation += 1;
            inner.files.clear();
            inner.note = None;
            inner.folder = Some(dir.to_path_buf());
            (inner.watcher.take(), inner.generation)
        };
        if let Some(w) = old {
            w.stop();
        }
        let options = WatchOptions {
            origin: Origin {
                name: "kip-explorer/watch".into(),
            },
            ..WatchOptions::default()
        };
        let me = self.clone();
        match Watcher::start(nexus, dir, options, move |event| {
            me.on_event(generation, event)
        }) {
            Ok(watcher) => {
                let mut inner = self.lock();
                if inner.generation == generation {
                    inner.folder = Some(watcher.dir().to_path_buf());
                    inner.watcher = Some(watcher);
                } else {
                    drop(inner);
                    watcher.stop();
                }
            }
            Err(e) => self.lock().note = Some(e.to_string()),
        }
        self.emit();
    }

    fn on_event(&self, generation: u64, event: WatchEvent) {
        {
            let mut inner = self.lock();
            if inner.generation != generation {
                return;
            }
            let entry = |file: &Path, status: &'static str, errors: Vec<Json>| WatchedFile {
                path: file.display().to_string(),
                status,
                errors,
                at: now_ms(),
            };
            match &event {
                WatchEvent::Queued { file }
                | WatchEvent::Importing { file }
                | WatchEvent::Progress { file, .. } => {
                    let e = entry(file, "pending", Vec::new());
                    inner.files.insert(file.clone(), e);
                }
                WatchEvent::Imported { file, .. } => {
                    let e = entry(file, "imported", Vec::new());
                    inner.files.insert(file.clone(), e);
                }
                WatchEvent::Failed { file, report } => {
                    let e = entry(file, "failed", errors_of(report));
                    inner.files.insert(file.clone(), e);
                }
                WatchEvent::Unchanged { file, report } => {
                    let e = match report {
                        Some(r) if !r.is_imported() => entry(file, "failed", errors_of(r)),
                        _ => entry(file, "imported", Vec::new()),
                    };
                    inner.files.insert(file.clone(), e);
                }
                WatchEvent::Removed { file } => {
                    let e = entry(file, "removed", Vec::new());
                    inner.files.insert(file.clone(), e);
                }
                WatchEvent::Ready { .. } => inner.note = None,
                WatchEvent::Error { message } => inner.note = Some(message.clone()),
                // `WatchEvent` may grow: a new kind changes no file's status.
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
        self.emit();
    }
}

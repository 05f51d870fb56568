//! The watched folder: imports the capsule files a folder holds, then every
//! file created, modified or moved into it, and tells a UI what happens
//! through a stream of [`WatchEvent`]s.
//!
//! - File-system events come from `notify` through `notify-debouncer-full`,
//!   which merges an editor's burst of writes, renames and creates into one
//!   event per file once the folder has been quiet for
//!   [`WatchOptions::debounce`]. Before reading, the watcher also waits for
//!   the file's size and modification time to hold still for
//!   [`WatchOptions::settle`], so a slowly written file is read once it is
//!   complete (or read again when its last write arrives).
//! - Hidden, temporary and editor swap files are ignored
//!   ([`crate::is_capsule_file`]).
//! - Each file's content hash and last report are kept in the nexus's
//!   `state` database (key `capsule/watch/<absolute path>`), so after a
//!   restart an unchanged file is not imported again; it is reported as
//!   [`WatchEvent::Unchanged`] with its last report. A file whose last
//!   import failed is tried again at start and whenever another import
//!   changed the graph (it may have been waiting for a type another file
//!   defines).
//! - A deleted file's knowledge stays in the graph; the file is reported
//!   [`WatchEvent::Removed`] and forgotten.
//!
//! Every file the watcher takes up gets [`WatchEvent::Queued`] and then
//! exactly one of `Imported`, `Failed`, `Unchanged` or `Removed` (with
//! `Importing` and, for large files, `Progress` in between).
//!
//! The state write follows the import's transaction rather than sharing
//! it (`Nexus::run` owns its transaction): if the process dies between the
//! two, the file is imported again at the next start, which imports are
//! idempotent enough for (the repeat changes nothing).

use std::cell::RefCell;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use kip_nexus::{Nexus, Origin};
use notify::RecursiveMode;
use notify::event::{AccessKind, AccessMode, EventKind};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};
use serde::Serialize;
use serde_json::{Value as Json, json};

use crate::apply::ImportOptions;
use crate::files::{capsule_files, is_capsule_file};
use crate::import::import_read;
use crate::report::{ImportReport, Progress, Status};
use crate::source::{Read, Source};

/// Where the watcher keeps what it knows about a file.
const STATE_PREFIX: &str = "capsule/watch/";
/// Files at least this large report [`WatchEvent::Progress`].
const PROGRESS_MIN_BYTES: usize = 256 * 1024;
/// How many times a file is re-checked for stillness before it is read
/// anyway (a file written continuously for longer is read as it is, and
/// read again when its writes stop).
const SETTLE_ROUNDS: u32 = 50;

/// How the folder is watched.
#[derive(Clone, Debug)]
pub struct WatchOptions {
    /// How long the folder must be quiet before changes are taken up.
    pub debounce: Duration,
    /// How long a file's size and modification time must stay the same
    /// before it is read.
    pub settle: Duration,
    /// Who the imports are recorded as.
    pub origin: Origin,
    /// Who the cognitive trace names for the imports (BRIEF §7: `watcher`).
    pub originator: String,
}

impl Default for WatchOptions {
    fn default() -> WatchOptions {
        WatchOptions {
            debounce: Duration::from_millis(500),
            settle: Duration::from_millis(200),
            origin: Origin {
                name: "watcher".into(),
            },
            originator: "watcher".into(),
        }
    }
}

/// What the watcher tells a UI.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum WatchEvent {
    /// The file will be looked at.
    Queued { file: PathBuf },
    /// The file is being imported.
    Importing { file: PathBuf },
    /// How far a large file's import is.
    Progress { file: PathBuf, progress: Progress },
    /// The file landed.
    Imported { file: PathBuf, report: ImportReport },
    /// The file was refused; its report lists every error.
    Failed { file: PathBuf, report: ImportReport },
    /// The file is as it was when last imported; `report` is that import's.
    Unchanged {
        file: PathBuf,
        report: Option<ImportReport>,
    },
    /// The file is gone (deleted or moved away); its knowledge stays.
    Removed { file: PathBuf },
    /// The folder's files at start have all been taken up.
    Ready { files: usize },
    /// Watching itself ran into trouble (the folder vanished, the system's
    /// watch limit, an unreadable file).
    Error { message: String },
}

impl WatchEvent {
    /// The file the event is about.
    pub fn file(&self) -> Option<&Path> {
        match self {
            WatchEvent::Queued { file }
            | WatchEvent::Importing { file }
            | WatchEvent::Progress { file, .. }
            | WatchEvent::Imported { file, .. }
            | WatchEvent::Failed { file, .. }
            | WatchEvent::Unchanged { file, .. }
            | WatchEvent::Removed { file } => Some(file),
            WatchEvent::Ready { .. } | WatchEvent::Error { .. } => None,
        }
    }

    /// The event as JSON (for `kip watch` and UIs).
    pub fn to_json(&self) -> Json {
        serde_json::to_value(self).unwrap_or(Json::Null)
    }
}

/// Why a folder cannot be watched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WatchError {
    #[error("cannot watch {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot watch {}: {source}", path.display())]
    Notify {
        path: PathBuf,
        source: notify::Error,
    },
}

enum Msg {
    Fs(DebounceEventResult),
    Stop,
}

/// A folder being watched. Dropping it (or [`Watcher::stop`]) stops the
/// watching; an import under way finishes first.
pub struct Watcher {
    dir: PathBuf,
    tx: mpsc::Sender<Msg>,
    thread: Option<JoinHandle<()>>,
    debouncer: Option<Debouncer<notify::RecommendedWatcher, RecommendedCache>>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Watcher {
    /// Watches `dir` (recursively), calling `on_event` from the watcher's
    /// own thread. The files already there are taken up first, then
    /// changes; [`WatchEvent::Ready`] marks the end of the first pass.
    pub fn start(
        nexus: Arc<Nexus>,
        dir: &Path,
        options: WatchOptions,
        on_event: impl FnMut(WatchEvent) + Send + 'static,
    ) -> Result<Watcher, WatchError> {
        let root = dir.canonicalize().map_err(|source| WatchError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let (tx, rx) = mpsc::channel();
        let fs_tx = tx.clone();
        // Watch before the first pass, so nothing written meanwhile is missed
        // (a file seen twice is recognised by its hash).
        let mut debouncer = new_debouncer(
            options.debounce,
            None,
            move |result: DebounceEventResult| {
                let _ = fs_tx.send(Msg::Fs(result));
            },
        )
        .map_err(|source| WatchError::Notify {
            path: root.clone(),
            source,
        })?;
        debouncer
            .watch(&root, RecursiveMode::Recursive)
            .map_err(|source| WatchError::Notify {
                path: root.clone(),
                source,
            })?;
        let worker_root = root.clone();
        let thread = std::thread::Builder::new()
            .name("kip-capsule-watch".into())
            .spawn(move || {
                let work = Work {
                    nexus,
                    root: worker_root,
                    options,
                    sink: RefCell::new(Box::new(on_event)),
                };
                work.first_pass();
                while let Ok(msg) = rx.recv() {
                    match msg {
                        Msg::Fs(Ok(events)) => {
                            let mut paths = Vec::new();
                            for e in events {
                                if let EventKind::Access(a) = e.event.kind
                                    && a != AccessKind::Close(AccessMode::Write)
                                {
                                    continue;
                                }
                                paths.extend(e.event.paths.iter().cloned());
                            }
                            work.changed(paths);
                        }
                        Msg::Fs(Err(errors)) => {
                            for e in errors {
                                work.emit(WatchEvent::Error {
                                    message: e.to_string(),
                                });
                            }
                        }
                        Msg::Stop => break,
                    }
                }
            })
            .map_err(|source| WatchError::Io {
                path: root.clone(),
                source,
            })?;
        Ok(Watcher {
            dir: root,
            tx,
            thread: Some(thread),
            debouncer: Some(debouncer),
        })
    }

    /// [`Watcher::start`] with the events on a channel.
    pub fn with_channel(
        nexus: Arc<Nexus>,
        dir: &Path,
        options: WatchOptions,
    ) -> Result<(Watcher, mpsc::Receiver<WatchEvent>), WatchError> {
        let (tx, rx) = mpsc::channel();
        let watcher = Watcher::start(nexus, dir, options, move |e| {
            let _ = tx.send(e);
        })?;
        Ok((watcher, rx))
    }

    /// The watched folder (canonical).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stops watching and waits for the watcher's thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(d) = self.debouncer.take() {
            d.stop();
        }
        let _ = self.tx.send(Msg::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// What the watcher remembers of a file.
struct Known {
    hash: String,
    status: Option<Status>,
    report: Option<ImportReport>,
}

type Sink = Box<dyn FnMut(WatchEvent) + Send>;

struct Work {
    nexus: Arc<Nexus>,
    root: PathBuf,
    options: WatchOptions,
    sink: RefCell<Sink>,
}

impl Work {
    fn emit(&self, e: WatchEvent) {
        (self.sink.borrow_mut())(e);
    }

    fn key(file: &Path) -> String {
        format!("{STATE_PREFIX}{}", file.display())
    }

    fn known(&self, file: &Path) -> Option<Known> {
        let value = self.nexus.state(&Work::key(file)).ok()??;
        Some(Known {
            hash: value["hash"].as_str().unwrap_or_default().to_owned(),
            status: serde_json::from_value(value["status"].clone()).ok(),
            report: serde_json::from_value(value["report"].clone()).ok(),
        })
    }

    /// Every remembered file under the root.
    fn remembered(&self) -> Vec<(PathBuf, Option<Status>)> {
        let prefix = format!("{STATE_PREFIX}{}", self.root.display());
        let entries = self.nexus.states_with_prefix(&prefix).unwrap_or_default();
        entries
            .into_iter()
            .filter_map(|(k, v)| {
                let path = PathBuf::from(k.strip_prefix(STATE_PREFIX)?);
                path.starts_with(&self.root)
                    .then(|| (path, serde_json::from_value(v["status"].clone()).ok()))
            })
            .collect()
    }

    fn remember(&self, file: &Path, report: &ImportReport) {
        let value = json!({"hash": report.hash, "status": report.status, "report": report});
        if let Err(e) = self.nexus.set_state(&Work::key(file), &value) {
            self.emit(WatchEvent::Error {
                message: format!("cannot remember {}: {e}", file.display()),
            });
        }
    }

    fn forget(&self, file: &Path) {
        // Forgetting is best effort: a file whose memory stays is re-checked
        // by hash the next time it appears.
        let _ = self.nexus.remove_state(&Work::key(file));
    }

    /// Waits until the file's size and modification time hold still;
    /// `false` if it disappears.
    fn settled(&self, file: &Path) -> bool {
        let stamp = |p: &Path| -> Option<(u64, Option<SystemTime>)> {
            let m = std::fs::metadata(p).ok()?;
            m.is_file().then(|| (m.len(), m.modified().ok()))
        };
        let Some(mut before) = stamp(file) else {
            return false;
        };
        for _ in 0..SETTLE_ROUNDS {
            std::thread::sleep(self.options.settle);
            let Some(now) = stamp(file) else {
                return false;
            };
            if now == before {
                break;
            }
            before = now;
        }
        true
    }

    fn removed(&self, file: &Path) -> bool {
        self.forget(file);
        self.emit(WatchEvent::Removed {
            file: file.to_path_buf(),
        });
        false
    }

    /// Whether `file` needs importing, once it has settled: `Some(large)`
    /// (large: its progress is worth showing) unless it is gone, cannot be
    /// imported at all (a bundle above the size limit: reported here), or
    /// holds what was already imported (reported as unchanged). The text
    /// read to hash it is not kept: the import reads it again, so a folder
    /// of many files never holds them all.
    fn due(&self, file: &Path) -> Option<bool> {
        if !self.settled(file) {
            self.removed(file);
            return None;
        }
        let read = crate::source::read(&Source::Path(file));
        let (hash, large) = match &read {
            Read::Text { report, text } => (report.hash.clone(), text.len() >= PROGRESS_MIN_BYTES),
            // Not UTF-8: it fails like any other import, once per content.
            Read::Failed(report) if !report.hash.is_empty() => (report.hash.clone(), false),
            // Unread: too large (a bundle), or gone since it settled.
            Read::Failed(_) if !file.is_file() => {
                self.removed(file);
                return None;
            }
            Read::Failed(_) => {
                let report = import_read(
                    &self.nexus,
                    read,
                    &self.options.origin,
                    &ImportOptions::default(),
                    Instant::now(),
                );
                self.remember(file, &report);
                self.emit(WatchEvent::Failed {
                    file: file.to_path_buf(),
                    report,
                });
                return None;
            }
            // A capsule is read part by part.
            Read::Stream(_) => match crate::stream::file_hash(file) {
                Ok(hash) => (hash, true),
                Err(_) => {
                    self.removed(file);
                    return None;
                }
            },
        };
        let known = self.known(file);
        if let Some(k) = &known
            && k.hash == hash
            && k.status == Some(Status::Imported)
        {
            self.emit(WatchEvent::Unchanged {
                file: file.to_path_buf(),
                report: k.report.clone(),
            });
            return None;
        }
        Some(large)
    }

    /// Imports the files that are due, in order, each whole or not at all,
    /// as `kip import` does (`import_paths_with`: the next file is parsed
    /// while the current one is applied, additive capsules are written in
    /// one group). Each file's events come in its order: `Importing`, its
    /// progress if it is large, then `Imported` or `Failed`. Answers, per
    /// file, whether its import changed the graph.
    fn import_due(&self, files: &[(PathBuf, bool)]) -> Vec<bool> {
        let Some((first, _)) = files.first() else {
            return Vec::new();
        };
        let paths: Vec<PathBuf> = files.iter().map(|(f, _)| f.clone()).collect();
        let current = std::cell::Cell::new(0usize);
        let on_progress = |p: Progress| {
            let i = p.file.unwrap_or(current.get());
            // Only the file whose import is under way: the reader checks
            // the next one ahead, before that one is announced.
            if i == current.get() && files[i].1 {
                self.emit(WatchEvent::Progress {
                    file: paths[i].clone(),
                    progress: p,
                });
            }
        };
        let options = ImportOptions {
            dry_run: false,
            progress: Some(&on_progress),
            originator: Some(&self.options.originator),
            owner: false,
        };
        let mut changed = Vec::with_capacity(paths.len());
        self.emit(WatchEvent::Importing {
            file: first.clone(),
        });
        crate::import::import_paths_with(
            &self.nexus,
            &paths,
            &self.options.origin,
            &options,
            |report| {
                let i = current.get();
                changed.push(self.finish(&paths[i], report));
                current.set(i + 1);
                if let Some(next) = paths.get(i + 1) {
                    self.emit(WatchEvent::Importing { file: next.clone() });
                }
            },
        );
        changed
    }

    /// Remembers a file's import and reports it; answers whether it changed
    /// the graph.
    fn finish(&self, file: &Path, report: ImportReport) -> bool {
        self.remember(file, &report);
        let changed = report.is_imported() && report.stats.changed();
        let event = if report.is_imported() {
            WatchEvent::Imported {
                file: file.to_path_buf(),
                report,
            }
        } else {
            WatchEvent::Failed {
                file: file.to_path_buf(),
                report,
            }
        };
        self.emit(event);
        changed
    }

    /// Takes up `files` in order: those that are due are imported together
    /// ([`Work::import_due`]). Answers the files tried since the graph last
    /// changed, and whether it changed.
    fn take_up_once(&self, files: &[PathBuf], tried: &mut HashSet<PathBuf>) -> bool {
        let mut due = Vec::new();
        let mut order = Vec::new();
        for f in files {
            match self.due(f) {
                Some(large) => {
                    order.push(Some(due.len()));
                    due.push((f.clone(), large));
                }
                None => order.push(None),
            }
        }
        let changes = self.import_due(&due);
        let mut changed = false;
        for (f, slot) in files.iter().zip(order) {
            if slot.is_some_and(|i| changes.get(i).copied().unwrap_or(false)) {
                changed = true;
                tried.clear();
            }
            tried.insert(f.clone());
        }
        changed
    }

    /// Takes up files in order, then retries the folder's failed files
    /// that have not been tried since the graph last changed (one may have
    /// been waiting for a type another file defines).
    fn take_up(&self, files: &[PathBuf]) {
        for f in files {
            self.emit(WatchEvent::Queued { file: f.clone() });
        }
        let mut tried: HashSet<PathBuf> = HashSet::new();
        let mut changed = self.take_up_once(files, &mut tried);
        // Every round either turns a failed file into an imported one (the
        // graph changed) or ends the retries, so this terminates.
        while changed {
            let failed: Vec<PathBuf> = self
                .remembered()
                .into_iter()
                .filter(|(p, s)| *s == Some(Status::Failed) && p.is_file() && !tried.contains(p))
                .map(|(p, _)| p)
                .collect();
            for f in &failed {
                self.emit(WatchEvent::Queued { file: f.clone() });
            }
            changed = self.take_up_once(&failed, &mut tried);
        }
    }

    fn first_pass(&self) {
        let files = match capsule_files(&self.root) {
            Ok(f) => f,
            Err(e) => {
                self.emit(WatchEvent::Error {
                    message: format!("cannot list {}: {e}", self.root.display()),
                });
                Vec::new()
            }
        };
        let present: HashSet<&PathBuf> = files.iter().collect();
        for (gone, _) in self.remembered() {
            if !present.contains(&gone) && !gone.exists() {
                self.forget(&gone);
                self.emit(WatchEvent::Removed { file: gone });
            }
        }
        self.take_up(&files);
        self.emit(WatchEvent::Ready { files: files.len() });
    }

    fn changed(&self, paths: Vec<PathBuf>) {
        let mut seen = HashSet::new();
        let mut files = Vec::new();
        let mut add = |p: PathBuf, files: &mut Vec<PathBuf>| {
            if seen.insert(p.clone()) {
                files.push(p);
            }
        };
        for p in paths {
            if !p.starts_with(&self.root) {
                continue;
            }
            if p == self.root && !p.exists() {
                self.emit(WatchEvent::Error {
                    message: format!("the watched folder {} is gone", self.root.display()),
                });
            }
            if p.is_dir() {
                let hidden = p
                    .strip_prefix(&self.root)
                    .map(|rel| {
                        rel.components()
                            .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
                    })
                    .unwrap_or(false);
                if !hidden && let Ok(found) = capsule_files(&p) {
                    for f in found {
                        add(f, &mut files);
                    }
                }
            } else if is_capsule_file(&self.root, &p) {
                add(p, &mut files);
            } else if !p.exists() {
                // A folder moved away or deleted: its remembered files.
                for (f, _) in self.remembered() {
                    if f.starts_with(&p) && f != p {
                        add(f, &mut files);
                    }
                }
            }
        }
        if !files.is_empty() {
            self.take_up(&files);
        }
    }
}

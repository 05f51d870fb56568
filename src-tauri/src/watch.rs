//! The watched capsule folder: one [`kip_capsule::Watcher`] at a time,
//! started by [`Api::watch_folder`] (which feeds the [`kip_api::WatchBoard`]
//! that the `watch_status` operation reports), telling the UI through a
//! `kip://watch` event whenever a file's status changes. Changing the
//! folder swaps the watcher and the [`kip_api::Api`] that reports it.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use kip_api::{Api, WatchStatus};
use kip_capsule::Watcher;
use tauri::{AppHandle, Emitter as _};

struct Current {
    watcher: Option<Watcher>,
    /// Bumped on every (re)start, so a replaced watcher's late events are dropped.
    generation: u64,
}

/// The API the commands use, and the watcher behind its `watch_status`.
#[derive(Clone)]
pub struct Host {
    app: AppHandle,
    /// The API before any folder is watched: each watch starts from it.
    base: Api,
    api: Arc<RwLock<Api>>,
    current: Arc<Mutex<Current>>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("api", &self.api())
            .finish_non_exhaustive()
    }
}

impl Host {
    pub fn new(app: AppHandle, api: Api) -> Host {
        Host {
            app,
            api: Arc::new(RwLock::new(api.clone())),
            base: api,
            current: Arc::new(Mutex::new(Current {
                watcher: None,
                generation: 0,
            })),
        }
    }

    /// The API as it stands (cheap: an `Api` is a few `Arc`s).
    pub fn api(&self) -> Api {
        self.api.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn lock(&self) -> MutexGuard<'_, Current> {
        // Plain data behind the lock: a panic elsewhere leaves it usable.
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn emit(&self, status: WatchStatus) {
        let _ = self.app.emit("kip://watch", status);
    }

    /// Stops the current watcher (an import under way finishes first) and
    /// watches `dir`. A folder that cannot be watched is reported in the
    /// status's `note`.
    pub fn watch(&self, dir: &Path) {
        let (old, generation) = {
            let mut current = self.lock();
            current.generation += 1;
            (current.watcher.take(), current.generation)
        };
        if let Some(w) = old {
            w.stop();
        }
        let me = self.clone();
        let (api, started) = self.base.watch_folder(dir, move |_, status| {
            if me.lock().generation == generation {
                me.emit(status);
            }
        });
        let mut current = self.lock();
        if current.generation == generation {
            *self.api.write().unwrap_or_else(|e| e.into_inner()) = api;
            current.watcher = started;
            drop(current);
            // Also when nothing happened yet (an empty or unwatchable folder).
            self.emit(self.api().watch_status());
        } else {
            // Another folder was chosen meanwhile: this one is already replaced.
            drop(current);
            if let Some(watcher) = started {
                watcher.stop();
            }
        }
    }
}

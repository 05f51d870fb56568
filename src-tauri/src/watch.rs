//! The watched capsule folder: one [`kip_capsule::Watcher`] at a time,
//! feeding a [`kip_api::WatchBoard`] (what the `watch_status` operation
//! reports) and telling the UI through a `kip://watch` event whenever a
//! file's status changes. Changing the folder swaps the watcher, the board
//! and the [`kip_api::Api`] that reports it.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use kip_api::{Api, WatchBoard};
use kip_capsule::{WatchOptions, Watcher};
use kip_nexus::{Nexus, Origin};
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
    nexus: Arc<Nexus>,
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

fn api_for(nexus: &Arc<Nexus>, board: Option<WatchBoard>) -> Api {
    let api = Api::new(nexus.clone(), "kip-explorer");
    match board {
        Some(b) => api.with_watch(b),
        None => api,
    }
}

impl Host {
    pub fn new(app: AppHandle, nexus: Arc<Nexus>) -> Host {
        Host {
            app,
            api: Arc::new(RwLock::new(api_for(&nexus, None))),
            nexus,
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

    fn emit_status(&self) {
        let _ = self.app.emit("kip://watch", self.api().watch_status());
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
        let board = WatchBoard::new(&dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()));
        *self.api.write().unwrap_or_else(|e| e.into_inner()) =
            api_for(&self.nexus, Some(board.clone()));
        let options = WatchOptions {
            origin: Origin {
                name: "kip-explorer/watch".into(),
            },
            ..WatchOptions::default()
        };
        let me = self.clone();
        let feed = board.clone();
        let started = Watcher::start(self.nexus.clone(), dir, options, move |event| {
            if me.lock().generation != generation {
                return;
            }
            feed.apply(&event);
            me.emit_status();
        });
        match started {
            Ok(watcher) => {
                let mut current = self.lock();
                if current.generation == generation {
                    current.watcher = Some(watcher);
                } else {
                    drop(current);
                    watcher.stop();
                }
            }
            Err(e) => board.apply(&kip_capsule::WatchEvent::Error {
                message: e.to_string(),
            }),
        }
        self.emit_status();
    }
}

//! What every host does around the operations, written once: opening the
//! nexus ([`Api::open`], [`Api::open_existing`]), saying in the cognitive
//! trace when it holds the nexus ([`Session`]: SPACE `SpaceAcquire` /
//! `SpaceRelease`), and the chores it runs in the background for as long
//! as it lives ([`Chores`]: the scheduled backup, change polling).
//!
//! Hosts (`kip serve`, `kip mcp`, the command line, the desktop shell)
//! never see the engine: they hold an [`Api`]. What this module does not
//! own is a runtime: a chore is a plain thread, so an async host wraps
//! nothing and a blocking host needs nothing.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kip_nexus::Nexus;

use crate::{Api, ApiError, StoreCheck};

/// How often the scheduled backup is looked at (it is due at most hourly).
const BACKUP_CHECK: Duration = Duration::from_secs(60);
/// Concepts the vector chore embeds per step: a SEARCH that needs the
/// catch-up lock waits at most for one step (a fraction of a second).
const VECTOR_CHORE_BATCH: usize = 16;

/// A host's message sink for what goes wrong in the background (a log line;
/// nothing a chore does stops the host).
pub type Log = fn(&str);

impl Api {
    /// Opens (creating if need be) the nexus in `dir`; the API writes under
    /// `origin` (`kip-cli`, `kip-serve`, …).
    pub fn open(dir: &Path, origin: impl Into<String>) -> Result<Api, ApiError> {
        Ok(Api::new(Arc::new(Nexus::open(dir)?), origin))
    }

    /// Opens the nexus in `dir` only if one is there (a folder without one
    /// is refused, naming it): for maintenance, which must not create one.
    pub fn open_existing(dir: &Path, origin: impl Into<String>) -> Result<Api, ApiError> {
        Ok(Api::new(Arc::new(Nexus::open_existing(dir)?), origin))
    }

    /// The nexus's folder.
    pub fn path(&self) -> &Path {
        self.nexus.path()
    }

    /// Records SPACE `SpaceAcquire` now (named by `originator`, else this
    /// API's) and `SpaceRelease` when the session is dropped. A read-only
    /// host records neither; a failure goes to `log`, never stops the host.
    pub fn open_session(
        &self,
        originator: Option<&str>,
        acquired: &str,
        released: impl Into<String>,
        log: Log,
    ) -> Session {
        let session = Session {
            api: self.clone(),
            originator: originator.unwrap_or(self.originator()).to_owned(),
            released: released.into(),
            log,
        };
        session.record("SpaceAcquire", acquired);
        session
    }

    /// Starts the host's background chores on a thread of their own: the
    /// scheduled backup when it is due and the expired idempotency keys
    /// forgotten (checked every minute; no backup on a read-only host) and, every `poll`, a look at the change log's
    /// sequence number. When it moved, `on_change(since, current)` is
    /// called and answers how far the host has consumed the log (the next
    /// call's `since`). They stop when the returned [`Chores`] is dropped.
    pub fn start_chores(
        &self,
        poll: Duration,
        mut on_change: impl FnMut(&Api, u64, u64) -> u64 + Send + 'static,
        log: Log,
    ) -> std::io::Result<Chores> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let api = self.clone();
        // Read here, not on the thread: a write committed before the thread
        // first runs must still be reported.
        let mut since = api.last_change_seq().unwrap_or(0);
        std::thread::Builder::new()
            .name("kip-host-chores".into())
            .spawn(move || {
                let mut backup_due = Instant::now() + BACKUP_CHECK;
                while !stopped.load(Ordering::Relaxed) {
                    std::thread::sleep(poll);
                    match api.last_change_seq() {
                        Ok(current) if current != since => since = on_change(&api, since, current),
                        Ok(_) => {}
                        Err(e) => log(&format!("polling the change log failed: {}", e.message)),
                    }
                    if Instant::now() >= backup_due {
                        backup_due = Instant::now() + BACKUP_CHECK;
                        if let Err(e) = api.forget_expired_idempotency_keys() {
                            log(&format!(
                                "forgetting expired idempotency keys failed: {}",
                                e.message
                            ));
                        }
                        match api.run_scheduled_backup() {
                            Ok(Some(done)) => {
                                log(&format!("scheduled backup written to {}", done.path));
                            }
                            Ok(None) => {}
                            Err(e) => log(&format!("the scheduled backup failed: {}", e.message)),
                        }
                    }
                }
            })?;
        if !self.is_read_only() && self.nexus.searches_by_meaning() {
            self.start_vector_chore(poll, stop.clone(), log)?;
        }
        Ok(Chores { stop })
    }

    /// The vector chore: embeds the concepts writes left waiting, a batch
    /// at a time, on a thread of its own (embedding takes CPU seconds for a
    /// large import; the writers never wait for it), resting `poll` when
    /// nothing waits.
    fn start_vector_chore(
        &self,
        poll: Duration,
        stop: Arc<AtomicBool>,
        log: Log,
    ) -> std::io::Result<()> {
        let api = self.clone();
        std::thread::Builder::new()
            .name("kip-host-vectors".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match api.nexus.catch_up_vectors(VECTOR_CHORE_BATCH) {
                        Ok(0) => std::thread::sleep(poll),
                        Ok(_) => {}
                        Err(e) => {
                            log(&format!("embedding waiting concepts failed: {}", e.message));
                            std::thread::sleep(poll.max(Duration::from_secs(5)));
                        }
                    }
                }
            })?;
        Ok(())
    }

    /// Where the store's bytes go, per database (`kip check-store --sizes`).
    pub fn store_sizes(&self) -> Result<kip_nexus::StoreSizes, ApiError> {
        Ok(self.nexus.store_sizes()?)
    }

    /// Rewrites the nexus without LMDB's free pages: a packed copy into
    /// `staging`, for [`install_staged`].
    pub fn packed_copy(&self, staging: &Path) -> Result<u64, ApiError> {
        Ok(self.nexus.packed_copy(staging)?)
    }
}

/// A host's hold on the nexus, as the trace tells it (see
/// [`Api::open_session`]).
#[derive(Debug)]
pub struct Session {
    api: Api,
    originator: String,
    released: String,
    log: Log,
}

impl Session {
    fn record(&self, tag: &str, message: &str) {
        if self.api.is_read_only() {
            return;
        }
        if let Err(e) = self.api.nexus.trace_space(&self.originator, tag, message) {
            (self.log)(&format!("cannot record {tag} in the trace: {}", e.message));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let released = std::mem::take(&mut self.released);
        self.record("SpaceRelease", &released);
    }
}

/// The background chores of a host; dropping it stops them (within one
/// poll interval).
#[derive(Debug)]
pub struct Chores {
    stop: Arc<AtomicBool>,
}

impl Drop for Chores {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The process that has the nexus in `dir` open, other than this one.
pub fn opened_elsewhere(dir: &Path) -> Result<Option<u32>, ApiError> {
    Ok(kip_nexus::opened_elsewhere(dir)?)
}

/// Puts the backup `src` in place of the nexus in `dest` (checked first;
/// refused while a process has it open unless `force`), answering the
/// restored store's check.
pub fn restore(src: &Path, dest: &Path, force: bool) -> Result<StoreCheck, ApiError> {
    Ok(kip_nexus::restore(src, dest, force)?)
}

/// Checks the store staged in `staging` (its file `source`) and renames it
/// into place in `dest`, answering its check.
pub fn install_staged(staging: &Path, dest: &Path, source: &Path) -> Result<StoreCheck, ApiError> {
    Ok(kip_nexus::install_staged(staging, dest, source)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spaces(api: &Api) -> Vec<String> {
        let page = api
            .call_named("trace_list", serde_json::json!({"type": "SPACE"}))
            .expect("trace_list");
        page["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .filter_map(|e| e["tag"][0].as_str().map(str::to_owned))
            .collect()
    }

    #[test]
    fn a_session_records_its_acquire_and_release_and_a_read_only_one_neither() {
        let dir = tempfile::tempdir().expect("tempdir");
        let api = Api::open(dir.path(), "test").expect("open");
        let before = spaces(&api).len();
        drop(api.open_session(Some("agent-1"), "opened", "closed", |_| {}));
        let after = spaces(&api);
        assert_eq!(after.len(), before + 2);
        // Newest first.
        assert_eq!(after[0], "SpaceRelease");
        assert_eq!(after[1], "SpaceAcquire");
        let read_only = api.clone().read_only(true);
        drop(read_only.open_session(None, "opened", "closed", |_| {}));
        assert_eq!(spaces(&api).len(), before + 2);
    }

    /// Regression: the chores read the change log's number on their own
    /// thread, so a write committed before that thread first ran (a loaded
    /// machine) was never reported.
    #[test]
    fn chores_report_a_write_by_its_sequence_numbers_even_one_made_before_they_first_run() {
        let dir = tempfile::tempdir().expect("tempdir");
        let api = Api::open(dir.path(), "test").expect("open");
        let (tx, rx) = std::sync::mpsc::channel();
        let chores = api
            .start_chores(
                Duration::from_millis(10),
                move |_, since, current| {
                    let _ = tx.send((since, current));
                    current
                },
                |_| {},
            )
            .expect("chores");
        let before = api.last_change_seq().expect("seq");
        let response = api.execute(crate::ExecuteRequest {
            command: Some(
                r#"UPSERT { CONCEPT ?d { {type: "Domain", name: "Chores"} } }"#.to_owned(),
            ),
            ..crate::ExecuteRequest::default()
        });
        assert!(response.get("error").is_none(), "{response}");
        let (since, current) = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("a change notice");
        assert_eq!(since, before);
        assert_eq!(current, api.last_change_seq().expect("seq"));
        drop(chores);
    }

    /// The vector chore embeds what a write left waiting, with no SEARCH
    /// asking for it (the write itself never waits for the model).
    #[test]
    fn the_vector_chore_embeds_written_concepts_in_the_background() {
        let dir = tempfile::tempdir().expect("tempdir");
        let api = Api::open(dir.path(), "test").expect("open");
        if !api.nexus.searches_by_meaning() {
            assert_ne!(
                std::env::var("KIP_EMBED_REQUIRED").as_deref(),
                Ok("1"),
                "KIP_EMBED_REQUIRED=1 but no embedding model (scripts/setup-model.sh)"
            );
            return;
        }
        let response = api.execute(crate::ExecuteRequest {
            command: Some(r#"UPSERT { CONCEPT ?d { {type: "Domain", name: "Gardening"} SET ATTRIBUTES { description: "Tomatoes on the balcony." } } }"#.to_owned()),
            ..crate::ExecuteRequest::default()
        });
        assert!(response.get("error").is_none(), "{response}");
        assert!(api.nexus.vector_backlog().expect("backlog") > 0);
        let chores = api
            .start_chores(Duration::from_millis(10), |_, _, current| current, |_| {})
            .expect("chores");
        let deadline = Instant::now() + Duration::from_secs(120);
        while api.nexus.vector_backlog().expect("backlog") > 0 {
            assert!(Instant::now() < deadline, "the chore left concepts waiting");
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(chores);
    }
}

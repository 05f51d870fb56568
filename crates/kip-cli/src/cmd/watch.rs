//! `kip watch DIR`: a watched folder through
//! [`kip_api::Api::watch_events`], one JSON event per line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use kip_capsule::WatchEvent;

use crate::stdio::out;

/// Prints every event until interrupted or, with `once`, until the files
/// already there are taken up (then exit 1 if any failed). The imports are
/// recorded as `kip-watch` in the change log; the trace names `watcher`,
/// or `--originator` when given.
pub fn run(
    db: Option<PathBuf>,
    dir: &Path,
    debounce: Duration,
    once: bool,
) -> anyhow::Result<ExitCode> {
    let api = crate::db::open_api(db, "kip-watch")?;
    let (watcher, events) = api.watch_events(dir, debounce)?;
    eprintln!("kip watch: watching {}", watcher.dir().display());
    let mut failed = false;
    for event in events {
        if let WatchEvent::Failed { report, .. } = &event {
            failed = true;
            for line in report.error_lines() {
                eprintln!("{line}");
            }
        }
        out(&format!("{}\n", event.to_json()));
        if once && matches!(event, WatchEvent::Ready { .. }) {
            watcher.stop();
            return Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            });
        }
    }
    anyhow::bail!("the watcher stopped unexpectedly")
}

//! Many files imported in order, two cores busy: a reader thread reads,
//! parses and checks the next file while the nexus applies the current
//! one, alone or in a group write ([`super::group`]). It owns the
//! hand-over between the two threads and the sequence numbers that say
//! whether checks made ahead still hold; it does not import a file itself.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use kip_nexus::{Nexus, Origin};

use crate::apply::{ImportOptions, about_file};
use crate::report::ImportReport;

use super::ahead::Ahead;
use super::group::import_group;
use super::prepared::{Prepared, complete, distrust_older_checks, groupable, prepare};

/// Imports the files at `paths` in order, each whole or not at all,
/// exactly as [`crate::import_path_with`] one after the other would, handing each
/// report to `each` as soon as its file is done. Reading, parsing and the
/// checks run ahead on a second thread while the nexus applies the
/// current file (one transaction per file, or one for a group of additive
/// files), so a bulk import keeps two cores busy. At most one checked
/// file waits, and the reader checks the one after it meanwhile: memory
/// holds three parsed files at most (applied, waiting, being checked),
/// whatever the number of files.
pub fn import_paths_with(
    nexus: &Nexus,
    paths: &[PathBuf],
    origin: &Origin,
    options: &ImportOptions<'_>,
    mut each: impl FnMut(ImportReport),
) {
    if let [path] = paths {
        // One file gains nothing from a pipeline, and alone it is applied
        // command by command, which is what its progress counts (a group
        // write reports no items).
        each(about_file(options, 0, |options| {
            super::file::import_path_with(nexus, path, origin, options)
        }));
        return;
    }
    let (dry_run, owner) = (options.dry_run, options.owner);
    // The writer's `clean_since` (below), which the reader's memory of
    // found concepts must not predate (see `FoundConcepts`).
    let shared_clean_since = &AtomicU64::new(0);
    std::thread::scope(|scope| {
        // A channel of one: one checked file waits while the reader
        // checks the next (a third file, checked, may wait in `send`). A
        // rendezvous kept the reader idle while the writer finished a
        // group: the 1M import ran ~8% slower. The third file costs ~20 MB
        // (a 20,000-link capsule's text, syntax tree and known concepts;
        // its checks lower it 2,048 items at a time, not whole), which the
        // smaller dirty-page cap (kip-store's Cargo.toml) pays for.
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        // The syntax trees the writer is done with, freed here (see
        // `GroupText::retire`).
        let (retire, retired) = std::sync::mpsc::channel();
        scope.spawn(move || {
            let mut ahead = Ahead::new(nexus, shared_clean_since, owner);
            for (index, path) in paths.iter().enumerate() {
                retired.try_iter().for_each(drop);
                if tx
                    .send((index, prepare(path, dry_run, Some(&mut ahead))))
                    .is_err()
                {
                    break; // the importer stopped
                }
            }
        });
        // Every change-log entry after `clean_since` was written by an
        // additive file of this import: checks that passed ahead against a
        // snapshot at or after it still pass (additions cannot make them
        // fail), so the writer skips them. Anything else — another
        // process's write, a file that defines schema or deletes — moves
        // it forward, and the files checked before are checked again.
        // `seen` is the sequence number after the previous file, so a
        // change another process made between two files counts against
        // the next one (reading it again before each file would miss it).
        let seq = || nexus.last_change_seq().unwrap_or(u64::MAX);
        let mut seen = seq();
        let mut clean_since = seen;
        shared_clean_since.store(clean_since, Ordering::Relaxed);
        // A file taken from the reader that a group could not take: the
        // next one to import.
        let mut held: Option<(usize, Prepared)> = None;
        while let Some((index, mut prepared)) = held.take().or_else(|| rx.recv().ok()) {
            let mut additive_file = false;
            distrust_older_checks(&mut prepared, clean_since);
            if let Prepared::Ready {
                parsed: Some(p), ..
            } = &mut prepared
            {
                additive_file = p.additive;
                p.write_seq = (seen != u64::MAX).then_some(seen);
            }
            // The files applied now, whether they only add, how many
            // change-log entries they wrote, and the report of a file
            // applied on its own.
            let (additive, changed, report) = if !dry_run && groupable(&prepared) {
                let changed = import_group(
                    nexus,
                    (index, prepared),
                    &rx,
                    &mut held,
                    origin,
                    options,
                    &mut each,
                    seen,
                    clean_since,
                    &retire,
                );
                (true, changed, None)
            } else {
                let report = about_file(options, index, |options| {
                    complete(nexus, prepared, origin, options)
                });
                let wrote = report.is_imported() && !report.dry_run && report.stats.changed();
                (additive_file, u64::from(wrote), Some(report))
            };
            let after = seq();
            if !(additive && seen != u64::MAX && after == seen + changed) {
                clean_since = after;
                shared_clean_since.store(clean_since, Ordering::Relaxed);
            }
            seen = after;
            if let Some(report) = report {
                each(report);
            }
        }
    });
}

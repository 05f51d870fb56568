//! What every way of importing a file shares to apply it: the caller's
//! [`ImportOptions`], the progress [`Reporter`] that hands them reports,
//! the nexus's [`RunOptions`] an import writes with, and the write of a
//! whole file's commands ([`apply`]).
//!
//! A leaf: the whole-file import ([`crate::import`]), the piped bundle
//! import ([`crate::piped`]) and the streamed capsule import
//! ([`crate::stream`]) all use it, and it names none of them. It reads no
//! file and checks nothing; it does not decide what a file means.

use std::cell::Cell;
use std::time::{Duration, Instant};

use kip_lang::KipError;
use kip_nexus::{Mode, Nexus, Origin, RunOptions};

use crate::ops::Op;
use crate::report::{ImportReport, Phase, Progress};

/// How to import.
#[derive(Default)]
pub struct ImportOptions<'a> {
    /// Check everything and run the transaction, then abort it: the report
    /// says exactly what an import would do, and nothing is written.
    pub dry_run: bool,
    /// Called as the import moves through its phases, and in between as
    /// it checks items (bytes and items so far), at most a few times a
    /// second: see [`PROGRESS_EVERY`].
    pub progress: Option<&'a dyn Fn(Progress)>,
    /// Who the cognitive trace names for the import (else the origin's
    /// name): `watcher` for the watched folder, the host's originator.
    pub originator: Option<&'a str>,
    /// Apply with the owner's authority over the protected scope (see
    /// `kip_nexus::RunOptions::owner`): set only by `kip import --owner`.
    pub owner: bool,
}

/// Runs `then` with `options` whose progress reports name file `index` of
/// an import of several (see [`Progress::file`]).
pub(crate) fn about_file<R>(
    options: &ImportOptions<'_>,
    index: usize,
    then: impl FnOnce(&ImportOptions<'_>) -> R,
) -> R {
    let stamp = |p: Progress| {
        if let Some(to) = options.progress {
            to(Progress {
                file: Some(index),
                ..p
            });
        }
    };
    then(&ImportOptions {
        dry_run: options.dry_run,
        progress: options.progress.map(|_| &stamp as &dyn Fn(Progress)),
        originator: options.originator,
        owner: options.owner,
    })
}

impl std::fmt::Debug for ImportOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportOptions")
            .field("dry_run", &self.dry_run)
            .field("progress", &self.progress.is_some())
            .field("originator", &self.originator)
            .field("owner", &self.owner)
            .finish()
    }
}

/// The least time between two progress reports within one phase (a
/// phase's first and last reports are always made).
pub const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// Hands an import's progress to [`ImportOptions::progress`], with the
/// bytes and the time, at most once per [`PROGRESS_EVERY`] within a phase
/// (a phase's first report and its last, `done == total`, always pass), so
/// a host can forward every report as it comes.
pub(crate) struct Reporter<'a> {
    /// The import's options (the callback is theirs).
    pub(crate) options: &'a ImportOptions<'a>,
    started: Instant,
    total_bytes: u64,
    /// The last report made: its phase, items done, and when.
    last: Cell<Option<(Phase, u64, Instant)>>,
}

impl<'a> Reporter<'a> {
    pub(crate) fn new(
        options: &'a ImportOptions<'a>,
        started: Instant,
        total_bytes: usize,
    ) -> Reporter<'a> {
        Reporter {
            options,
            started,
            total_bytes: total_bytes as u64,
            last: Cell::new(None),
        }
    }

    /// `done` of `total` items of `phase`, `bytes` of the file taken in.
    pub(crate) fn report(&self, phase: Phase, done: u64, total: u64, bytes: usize) {
        let Some(to) = self.options.progress else {
            return;
        };
        let now = Instant::now();
        let due = match self.last.get() {
            None => true,
            // Said already (a phase's end is reported by the writer and again
            // by the pipeline).
            Some((last_phase, last_done, _)) if last_phase == phase && last_done == done => false,
            // A total of 0 is unknown: no report of it ends the phase.
            Some((last_phase, _, at)) => {
                last_phase != phase
                    || (total > 0 && done >= total)
                    || now.duration_since(at) >= PROGRESS_EVERY
            }
        };
        if !due {
            return;
        }
        self.last.set(Some((phase, done, now)));
        to(Progress {
            phase,
            done,
            total,
            bytes: (bytes as u64).min(self.total_bytes),
            total_bytes: self.total_bytes,
            elapsed_ms: now.duration_since(self.started).as_millis() as u64,
            file: None,
        });
    }

    /// A report from the bundle reader, which counts items only.
    pub(crate) fn forward(&self, p: Progress, bytes: usize) {
        self.report(p.phase, p.done, p.total, bytes);
    }
}

/// Where an op ends in the file's text: how far checking it has got.
pub(crate) fn op_end(op: &Op) -> usize {
    match op {
        Op::Concept { loc, .. }
        | Op::ById { loc, .. }
        | Op::Link { loc, .. }
        | Op::Placeholder { loc, .. } => loc.end,
    }
}

/// How an import runs its write: for `origin`, previewed or committed as
/// `options` say, traced as importing `file` (a SPACE `SystemEvent`).
pub(crate) fn run_options(origin: &Origin, file: &str, options: &ImportOptions<'_>) -> RunOptions {
    let mut run = RunOptions::new(origin.clone()).with_mode(Mode::dry_run_if(options.dry_run));
    run.trace.import = Some(file.to_owned());
    run.trace.originator = options.originator.map(str::to_owned);
    if options.owner {
        run.owner = true;
        // The trace says whose authority changed the protected scope.
        run.trace.tags.push("OwnerAuthority".to_owned());
    }
    run
}

/// Applies a whole file's `commands` in one nexus write, reporting how
/// many of its `items` are written as it goes.
pub(crate) fn apply(
    nexus: &Nexus,
    text: &str,
    commands: &[kip_lang::ast::Command],
    items: usize,
    run: &RunOptions,
    report: &mut ImportReport,
    progress: &Reporter<'_>,
) -> Result<(), KipError> {
    if commands.is_empty() {
        return Ok(());
    }
    progress.report(Phase::Applying, 0, items as u64, text.len());
    // Items written so far: commands done, scaled to the items they carry
    // (a bundle's items need not be one command each).
    let per = items as f64 / commands.len() as f64;
    let applied = |done: usize| {
        let written = ((done as f64 * per).round() as u64).min(items as u64);
        progress.report(Phase::Applying, written, items as u64, text.len());
    };
    let outcome = nexus.bulk().run(text, commands, run, &applied)?;
    report.stats = outcome.stats;
    if run.mode == Mode::DryRun {
        report.keep_preview(&outcome.result);
    }
    progress.report(Phase::Applying, items as u64, items as u64, text.len());
    Ok(())
}

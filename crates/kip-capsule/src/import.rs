//! The one import pipeline, for every face (command line, watcher,
//! drag-and-drop, agents): read → parse → check the whole file → apply in
//! one nexus transaction → report.
//!
//! A file with any error applies nothing: the checks run before anything
//! is written, and the writes of a file are one [`Nexus::run`] call
//! ([`Nexus::run_parts`] for a file applied in parts; a group of files
//! shares one [`Nexus::run_group`] call and is imported again file by file
//! if it fails), one LMDB transaction that also updates the search index
//! and the counters, so a failure at any point (the nexus refusing
//! something the checks let through, a full disk) leaves the graph as it
//! was.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::TryRecvError;
use std::time::{Duration, Instant};

use kip_lang::{ErrorCode, KipError};
use kip_nexus::{Nexus, Origin};
use serde_json::Map;

use crate::apply::{Reporter, about_file, apply, op_end, run_options};
use crate::bundle;
use crate::model::Model;
use crate::ops::{self, Op};
use crate::report::{Format, ImportError, ImportReport, Phase, Progress, Status};
use crate::semantic::{BUNDLE_ROLES, Checker, KIP_ROLES};
use crate::source::{Read, Source};
use crate::text::LineIndex;
use kip_nexus::bulk::FoundConcepts;

pub use crate::apply::{ImportOptions, PROGRESS_EVERY};

/// Imports `text`, whose format the extension of `file_name` decides
/// (`.kip`, `.yaml`, `.yml`). Never panics and never applies part of a
/// file.
pub fn import_text(nexus: &Nexus, file_name: &str, text: &str, origin: &Origin) -> ImportReport {
    import_text_with(nexus, file_name, text, origin, &ImportOptions::default())
}

/// [`import_text`] with options.
pub fn import_text_with(
    nexus: &Nexus,
    file_name: &str,
    text: &str,
    origin: &Origin,
    options: &ImportOptions<'_>,
) -> ImportReport {
    import_source(
        nexus,
        &Source::Text {
            name: file_name,
            text,
        },
        origin,
        options,
    )
}

/// Reads `source` ([`crate::source`]) and imports it: every error in the
/// report, nothing of the file applied unless all of it is.
pub fn import_source(
    nexus: &Nexus,
    source: &Source<'_>,
    origin: &Origin,
    options: &ImportOptions<'_>,
) -> ImportReport {
    import_read(
        nexus,
        crate::source::read(source),
        origin,
        options,
        Instant::now(),
    )
}

/// The rest of [`import_source`] once the source is read (`started`: when
/// the import began, reading included).
pub(crate) fn import_read(
    nexus: &Nexus,
    read: Read<'_>,
    origin: &Origin,
    options: &ImportOptions<'_>,
    started: Instant,
) -> ImportReport {
    match read {
        Read::Text { mut report, text } => {
            run(nexus, &text, origin, options, &mut report, None, started);
            finish(report, started, options)
        }
        Read::Stream(path) => import_streamed(
            nexus,
            &path,
            origin,
            options,
            crate::stream::PART_BYTES,
            started,
        ),
        Read::Failed(report) => finish(report, started, options),
    }
}

/// Reads and imports the file at `path`.
pub fn import_path(nexus: &Nexus, path: &Path, origin: &Origin) -> ImportReport {
    import_path_with(nexus, path, origin, &ImportOptions::default())
}

/// [`import_path`] with options.
pub fn import_path_with(
    nexus: &Nexus,
    path: &Path,
    origin: &Origin,
    options: &ImportOptions<'_>,
) -> ImportReport {
    import_source(nexus, &Source::Path(path), origin, options)
}

/// Imports the capsule at `path` part by part, cut into parts of about
/// `part_bytes` (what a capsule above the whole-file limit gets; see
/// [`crate::stream`]). Exposed for tests, which cut small files.
#[doc(hidden)]
pub fn import_streamed(
    nexus: &Nexus,
    path: &Path,
    origin: &Origin,
    options: &ImportOptions<'_>,
    part_bytes: usize,
    started: Instant,
) -> ImportReport {
    let name = path.display().to_string();
    let mut report = ImportReport::new(&name, Some(Format::Kip));
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let progress = Reporter::new(
        options,
        started,
        usize::try_from(size).unwrap_or(usize::MAX),
    );
    crate::stream::import(nexus, path, &mut report, origin, &progress, part_bytes);
    finish(report, started, options)
}

/// A file read and decoded (and, ahead of its turn, parsed), or its report
/// when it could not be read.
enum Prepared {
    Done(ImportReport),
    /// A capsule above the whole-file limit: imported part by part
    /// ([`crate::stream`]) when its turn comes.
    Stream {
        path: PathBuf,
        started: Instant,
    },
    Ready {
        path: PathBuf,
        report: ImportReport,
        text: String,
        parsed: Option<Parsed>,
        /// When its import started (reading included).
        started: Instant,
    },
}

/// Reads the file at `path` and, with `parse_ahead`, parses, binds and
/// checks it ahead against that nexus if it is a capsule (see
/// [`parse_and_check_kip`]): the steps that write nothing.
fn prepare(path: &Path, dry_run: bool, parse_ahead: Option<&mut Ahead<'_>>) -> Prepared {
    let started = Instant::now();
    let (report, text) = match crate::source::read(&Source::Path(path)) {
        Read::Text { report, text } => (report, text.into_owned()),
        Read::Stream(path) => return Prepared::Stream { path, started },
        Read::Failed(report) => return Prepared::Done(finish_run(report, started, dry_run)),
    };
    let parsed = match parse_ahead {
        Some(ahead) if report.format == Some(Format::Kip) => {
            Some(parse_and_check_kip(ahead, &text))
        }
        _ => None,
    };
    Prepared::Ready {
        path: path.to_owned(),
        report,
        text,
        parsed,
        started,
    }
}

/// The rest of a prepared file's import: check and apply.
fn complete(
    nexus: &Nexus,
    prepared: Prepared,
    origin: &Origin,
    options: &ImportOptions<'_>,
) -> ImportReport {
    match prepared {
        Prepared::Done(report) => report,
        Prepared::Stream { path, started } => import_streamed(
            nexus,
            &path,
            origin,
            options,
            crate::stream::PART_BYTES,
            started,
        ),
        Prepared::Ready {
            mut report,
            text,
            parsed,
            started,
            ..
        } => {
            run(nexus, &text, origin, options, &mut report, parsed, started);
            finish(report, started, options)
        }
    }
}

/// Imports the files at `paths` in order, each whole or not at all,
/// exactly as [`import_path_with`] one after the other would, handing each
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
    let dry_run = options.dry_run;
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
            let mut ahead = Ahead::new(nexus, shared_clean_since);
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

/// Forgets that `prepared` passed its checks ahead if they were made
/// before `clean_since`: something other than an additive file of this
/// import has been written since, so they are made again.
fn distrust_older_checks(prepared: &mut Prepared, clean_since: u64) {
    if let Prepared::Ready {
        parsed: Some(p), ..
    } = prepared
        && p.checked_at.is_some_and(|at| at < clean_since)
    {
        p.checked_at = None;
    }
}

/// A group write stops taking files once this many links and concepts'
/// search documents wait to be written (their ends, names and terms are
/// held until then: at 60,000 links the 1M import peaks at 174–193 MB of
/// its 200 MB budget, at 100,000 at 201–203 MB; counting the documents
/// too keeps a run of concept files from holding 260,000 of them, which
/// took the 10M bench to 265 MB)...
const GROUP_PENDING: usize = 60_000;
/// ...or once its files hold this many bytes of text (three of the 1M
/// bench's 20,000-link capsules: a group that writes its links while it
/// waits for the next file no longer reaches `GROUP_PENDING`, and a
/// longer one only spills more of LMDB's dirty pages; at 32 MiB the 1M
/// import peaked at 178–194 MB, at 8 MiB at 156–161)...
const GROUP_BYTES: usize = 8 << 20;
/// ...or when the reader has not handed the next file over within this
/// time (the group holds the nexus's write lock meanwhile).
const GROUP_WAIT: Duration = Duration::from_secs(1);

/// Whether a prepared file can join a group write: a capsule of UPSERTs
/// that only add, parsed and checked ahead against a state nothing but
/// additive files of this import has changed since.
fn groupable(prepared: &Prepared) -> bool {
    matches!(
        prepared,
        Prepared::Ready {
            parsed: Some(Parsed {
                commands: Ok(commands),
                checked_at: Some(_),
                additive: true,
                ..
            }),
            report,
            ..
        } if report.errors.is_empty() && !commands.is_empty()
    )
}

/// Imports `first` and the groupable files that follow it from the reader
/// in one write ([`kip_nexus::bulk::Bulk::group`]): each file gets its own change-log
/// and trace entries and its own report, but their links are written in
/// one sorted batch. A file that cannot join is left in `held`. If the
/// group write fails, its files are imported again one by one (from their
/// paths), so each still lands whole or not at all with its own errors.
/// Returns the number of files that changed the nexus (one change-log
/// entry each).
#[allow(clippy::too_many_arguments)]
fn import_group(
    nexus: &Nexus,
    first: (usize, Prepared),
    rx: &std::sync::mpsc::Receiver<(usize, Prepared)>,
    held: &mut Option<(usize, Prepared)>,
    origin: &Origin,
    options: &ImportOptions<'_>,
    each: &mut impl FnMut(ImportReport),
    seen: u64,
    clean_since: u64,
    retire: &std::sync::mpsc::Sender<Vec<kip_lang::ast::Command>>,
) -> u64 {
    // Room in the map for the whole group first: one that fills the map
    // cannot grow it and go on (its files are dropped as it goes), so it
    // would be undone and redone file by file.
    nexus.reserve((GROUP_BYTES * 6) as u64);
    // Each file's path, report, start, size and position in the import.
    let mut members: Vec<(PathBuf, ImportReport, Instant, usize, usize)> = Vec::new();
    let mut first = Some(first);
    let mut bytes = 0;
    // The file the group last wrote while waiting for, and how many times.
    let mut paused = (0, 0);
    let outcome = nexus.bulk().group(&mut |n, pending| {
        let (index, prepared) = if n == 0 {
            first.take()?
        } else {
            if pending >= GROUP_PENDING || bytes >= GROUP_BYTES {
                return None;
            }
            let mut next = match rx.try_recv() {
                Ok(next) => next,
                // Still being checked: the group writes the links it has
                // decided meanwhile, then their search documents, then
                // waits.
                Err(TryRecvError::Empty) if pending > 0 && paused < (n, 2) => {
                    paused = (n, if paused.0 == n { paused.1 + 1 } else { 1 });
                    return Some(kip_nexus::bulk::GroupStep::NotReady);
                }
                // Bounded: the reader may itself be waiting (a map another
                // thread of this process grows waits for this write to end).
                Err(TryRecvError::Empty) => rx.recv_timeout(GROUP_WAIT).ok()?,
                Err(TryRecvError::Disconnected) => return None,
            };
            distrust_older_checks(&mut next.1, clean_since);
            if !groupable(&next.1) {
                *held = Some(next);
                return None;
            }
            next
        };
        let Prepared::Ready {
            path,
            mut report,
            text,
            parsed: Some(parsed),
            started,
        } = prepared
        else {
            return None;
        };
        let Ok(commands) = parsed.commands else {
            return None;
        };
        report.items = commands.len();
        let n = commands.len() as u64;
        about_file(options, index, |options| {
            let progress = Reporter::new(options, started, text.len());
            let len = text.len() as u64;
            progress.report(Phase::Parsing, len, len, text.len());
            progress.report(Phase::Validating, n, n, text.len());
            progress.report(Phase::Applying, 0, n, text.len());
        });
        bytes += text.len();
        let mut run = run_options(origin, &report.file, options);
        if let Some(known) = parsed.known {
            // No entry is appended before the group's end.
            run = run.with_known(known, seen);
        }
        members.push((path, report, started, text.len(), index));
        Some(kip_nexus::bulk::GroupStep::Text(Box::new(
            kip_nexus::bulk::GroupText {
                text,
                commands,
                options: run,
                retire: Some(retire.clone()),
            },
        )))
    });
    match outcome {
        Ok(stats) => {
            let mut changed = 0;
            for ((_, mut report, started, len, index), stats) in members.into_iter().zip(stats) {
                report.stats = stats;
                changed += u64::from(stats.changed());
                let n = report.items as u64;
                about_file(options, index, |options| {
                    Reporter::new(options, started, len).report(Phase::Applying, n, n, len);
                });
                each(finish(report, started, options));
            }
            changed
        }
        Err(_) => {
            // Applied one by one instead: each lands or fails on its own.
            let before = nexus.last_change_seq().unwrap_or(0);
            for (path, .., index) in members {
                each(about_file(options, index, |options| {
                    import_path_with(nexus, &path, origin, options)
                }));
            }
            nexus.last_change_seq().unwrap_or(0).saturating_sub(before)
        }
    }
}

fn finish(report: ImportReport, started: Instant, options: &ImportOptions<'_>) -> ImportReport {
    finish_run(report, started, options.dry_run)
}

fn finish_run(mut report: ImportReport, started: Instant, dry_run: bool) -> ImportReport {
    report.dry_run = dry_run;
    report.status = if report.errors.is_empty() {
        Status::Imported
    } else {
        report.stats = Default::default();
        Status::Failed
    };
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    report.duration_ms = (ms * 10.0).round() / 10.0;
    report
}

/// Adds errors in file order.
fn add_sorted(report: &mut ImportReport, mut errors: Vec<ImportError>) {
    errors.sort_by_key(|e| (e.line.unwrap_or(0), e.column.unwrap_or(0)));
    report.add_errors(errors);
}

fn run(
    nexus: &Nexus,
    text: &str,
    origin: &Origin,
    options: &ImportOptions<'_>,
    report: &mut ImportReport,
    parsed: Option<Parsed>,
    started: Instant,
) {
    let progress = Reporter::new(options, started, text.len());
    let Some(format) = report.format else {
        let ext = Path::new(&report.file)
            .extension()
            .map(|e| format!("'.{}'", e.to_string_lossy()))
            .unwrap_or_else(|| "no extension".to_owned());
        report.add_errors([ImportError::new(
            ErrorCode::InvalidSyntax,
            format!(
                "unsupported file type ({ext}): capsules are .kip files, bundles .yaml or .yml"
            ),
        )
        .hint("Rename the file with the extension of its format.")]);
        return;
    };
    progress.report(Phase::Parsing, 0, text.len() as u64, 0);
    let lines = LineIndex::new(text);
    let applied = match format {
        Format::Kip => run_kip(nexus, text, &lines, origin, report, parsed, &progress),
        Format::Yaml => run_yaml(nexus, text, &lines, origin, report, &progress),
    };
    if let Err(e) = applied {
        report.add_errors(ImportError::from_kip(&e));
    }
}

/// A capsule's commands, parsed and bound, or every error found doing so;
/// `items` is the number of commands when parsing succeeded.
struct Parsed {
    items: Option<usize>,
    commands: Result<Vec<kip_lang::ast::Command>, Vec<ImportError>>,
    /// Checked ahead (see [`import_paths_with`]): the change-log sequence
    /// number of the snapshot the capsule checks passed against.
    checked_at: Option<u64>,
    /// The file only adds (UPSERTs of concepts and links, no schema
    /// definition, no `{id}` block, no delete): what it writes cannot turn
    /// a later file's passing checks into failing ones.
    additive: bool,
    /// The stored concepts the checks ahead found, when they passed and the
    /// file is additive: the writer takes their ids instead of looking
    /// them up again while `checked_at` is trusted.
    known: Option<std::sync::Arc<kip_nexus::bulk::KnownConcepts>>,
    /// The change-log sequence number the write should find (the one after
    /// the previous file): `known` holds only if it does, so another
    /// process's write in between is caught inside the write's transaction.
    write_seq: Option<u64>,
}

/// Parses and binds a capsule: the part of an import that needs no nexus,
/// so [`import_paths_with`] runs it for the next file while the nexus
/// applies the current one.
fn parse_kip(text: &str) -> Parsed {
    let commands = match kip_lang::parse(text) {
        Ok(c) => c,
        Err(errors) => {
            return Parsed {
                items: None,
                commands: Err(errors.0.iter().flat_map(ImportError::from_kip).collect()),
                checked_at: None,
                additive: false,
                known: None,
                write_seq: None,
            };
        }
    };
    let items = Some(commands.len());
    let commands = kip_lang::bind(text, commands, &Map::new())
        .map_err(|errors| errors.0.iter().flat_map(ImportError::from_kip).collect());
    Parsed {
        items,
        commands,
        checked_at: None,
        additive: false,
        known: None,
        write_seq: None,
    }
}

/// What the reader of a pipelined import keeps from one file to the
/// next: the concepts its checks found stored (see [`FoundConcepts`]),
/// and the writer's `clean_since`, before which they are forgotten.
struct Ahead<'n> {
    nexus: &'n Nexus,
    found: FoundConcepts,
    clean_since: &'n AtomicU64,
}

impl<'n> Ahead<'n> {
    fn new(nexus: &'n Nexus, clean_since: &'n AtomicU64) -> Ahead<'n> {
        Ahead {
            nexus,
            found: FoundConcepts::default(),
            clean_since,
        }
    }
}

/// [`parse_kip`], then the capsule checks against the nexus as it is now,
/// on the reader's thread: when they pass, the writer can skip them if
/// nothing but additive files of the same import was written since
/// (`checked_at`; see [`import_paths_with`]). Failing checks are left for
/// the writer to run again against the state the file will meet.
fn parse_and_check_kip(ahead: &mut Ahead<'_>, text: &str) -> Parsed {
    let nexus = ahead.nexus;
    let mut parsed = parse_kip(text);
    if let Ok(commands) = &parsed.commands {
        let lines = LineIndex::new(text);
        let upserts_only = commands
            .iter()
            .all(|c| matches!(c, kip_lang::ast::Command::Upsert(_)));
        // A capsule that defines no schema is lowered and checked a few
        // thousand items at a time (see `ops::Lowering`).
        let (all_ops, mut lowering) = if ops::defines_schema(commands) {
            (Some(ops::lower_kip(commands)), None)
        } else {
            (None, Some(ops::Lowering::new(commands)))
        };
        let mut additive_ops = all_ops.as_deref().is_none_or(additive);
        let found = &mut ahead.found;
        let clean_since = ahead.clean_since.load(Ordering::Relaxed);
        let checked = nexus.read(|g| {
            let at = g.change_seq()?;
            found.start(at, clean_since);
            let since = found.since();
            let model = Model::from_graph(g)?;
            let definitions = all_ops.as_deref().unwrap_or_default();
            let mut checker = Checker::new(g, &model, text, &lines, KIP_ROLES, false, definitions)
                .with_found(found);
            for op in definitions {
                checker.op(op)?;
            }
            if let Some(lowering) = &mut lowering {
                let mut ops = Vec::new();
                while lowering.next(CHECK_ITEMS, &mut ops) {
                    additive_ops &= additive(&ops);
                    for op in &ops {
                        checker.op(op)?;
                    }
                }
            }
            let additive = upserts_only && additive_ops;
            if !checker.errors.is_empty() {
                return Ok(None);
            }
            let known = additive.then(|| {
                let mut known = checker.known_concepts();
                if let Some(links) = checker.checked_links() {
                    known.set_links(at, links.iter().copied());
                }
                std::sync::Arc::new(known)
            });
            Ok(Some((since, known)))
        });
        // A check that took concepts earlier files found counts as made
        // in the oldest snapshot they were found in.
        if let Ok(Some((since, known))) = checked {
            parsed.checked_at = Some(since);
            parsed.known = known;
        }
        // Known once every item is lowered (the checks ran to the end).
        parsed.additive = upserts_only && additive_ops && lowering.is_none_or(|l| l.done());
    }
    parsed
}

/// How many items of a capsule are lowered and checked at a time (see
/// `ops::Lowering`).
const CHECK_ITEMS: usize = 2_048;

/// Whether an UPSERT-only file's ops only add concepts and links that are
/// not schema: writing them cannot make a passing check of a later file
/// fail (names stay, types and signatures stay). Other commands lower to
/// no ops; the caller requires every command to be an UPSERT.
fn additive(ops: &[Op]) -> bool {
    ops.iter().all(|op| match op {
        Op::Concept { ty, action, .. } => {
            *action == ops::Action::Upsert
                && ty != kip_nexus::CONCEPT_TYPE
                && ty != kip_nexus::PROPOSITION_TYPE
        }
        Op::Link { action, .. } => *action == ops::Action::Upsert,
        Op::ById { .. } | Op::Placeholder { .. } => false,
    })
}

fn run_kip(
    nexus: &Nexus,
    text: &str,
    lines: &LineIndex,
    origin: &Origin,
    report: &mut ImportReport,
    parsed: Option<Parsed>,
    progress: &Reporter<'_>,
) -> Result<(), KipError> {
    let parsed = parsed.unwrap_or_else(|| parse_kip(text));
    progress.report(
        Phase::Parsing,
        text.len() as u64,
        text.len() as u64,
        text.len(),
    );
    if let Some(items) = parsed.items {
        report.items = items;
    }
    let commands = match parsed.commands {
        Ok(c) => c,
        Err(errors) => {
            add_sorted(report, errors);
            return Ok(());
        }
    };
    // Checked ahead against a snapshot nothing has changed since but
    // additive files of the same import (see `import_paths_with`), or
    // checked now. The ops and the checker's tables are dropped before the
    // writer starts: they are needed only to report every problem at once,
    // and apply's transaction is where memory peaks.
    let known = if parsed.checked_at.is_some() {
        let n = commands.len() as u64;
        progress.report(Phase::Validating, n, n, text.len());
        parsed.known.zip(parsed.write_seq)
    } else {
        let ops = ops::lower_kip(&commands);
        let total = ops.len() as u64;
        let errors = nexus.read(|g| {
            let model = Model::from_graph(g)?;
            let mut checker = Checker::new(g, &model, text, lines, KIP_ROLES, false, &ops);
            for (i, op) in ops.iter().enumerate() {
                progress.report(Phase::Validating, i as u64, total, op_end(op));
                checker.op(op)?;
            }
            Ok(checker.errors)
        })?;
        if !errors.is_empty() {
            add_sorted(report, errors);
            return Ok(());
        }
        progress.report(Phase::Validating, total, total, text.len());
        None
    };
    let mut run = run_options(origin, &report.file, progress.options);
    if let Some((known, seq)) = known {
        run = run.with_known(known, seq);
    }
    apply(
        nexus,
        text,
        &commands,
        commands.len(),
        &run,
        report,
        progress,
    )
}

fn run_yaml(
    nexus: &Nexus,
    text: &str,
    lines: &LineIndex,
    origin: &Origin,
    report: &mut ImportReport,
    progress: &Reporter<'_>,
) -> Result<(), KipError> {
    let live = Model::load(nexus)?;
    if crate::piped::run(nexus, text, lines, &live, origin, report, progress).is_some() {
        return Ok(());
    }
    let mut errors = Vec::new();
    // The YAML is parsed before its items are read, so the bytes are in.
    let mut on_progress = |p: Progress| progress.forward(p, text.len());
    let stored = |ty: &str, name: &str, key: &str| {
        nexus
            .read(|g| bundle::stored_attribute(g, ty, name, key))
            .unwrap_or(false)
    };
    let read = bundle::read(text, lines, &live, &stored, &mut errors, &mut on_progress);
    report.items = read.items;
    // The reader reported the items as it checked them; this pass is
    // quick next to it.
    let semantic = nexus.read(|g| {
        let mut checker = Checker::new(g, &live, text, lines, BUNDLE_ROLES, true, &read.ops);
        for op in &read.ops {
            checker.op(op)?;
        }
        Ok(checker.errors)
    })?;
    errors.extend(semantic);
    if !errors.is_empty() {
        add_sorted(report, errors);
        return Ok(());
    }
    progress.report(
        Phase::Validating,
        read.items as u64,
        read.items as u64,
        text.len(),
    );
    let commands = ops::to_commands(&read.ops);
    let run = run_options(origin, &report.file, progress.options);
    apply(nexus, text, &commands, read.items, &run, report, progress)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use kip_nexus::bulk::LinkKey;
    use kip_nexus::{ElementId, Nexus, Origin};

    use super::{Ahead, Parsed};

    /// The checks ahead of a file, as the reader of a pipelined import
    /// makes them when nothing else was written since the import began.
    fn parse_and_check_kip(nexus: &Nexus, text: &str) -> Parsed {
        let clean_since = AtomicU64::new(0);
        super::parse_and_check_kip(&mut Ahead::new(nexus, &clean_since), text)
    }

    fn medical() -> (tempfile::TempDir, Nexus) {
        let dir = tempfile::tempdir().expect("temp dir");
        let nexus = Nexus::open(dir.path()).expect("nexus opens");
        let examples =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../capsules/examples");
        for f in ["10_medical_schema.kip", "11_medical_data.kip"] {
            let report = super::import_path(&nexus, &examples.join(f), &Origin::new("test"));
            assert!(report.is_imported(), "{f}: {:?}", report.errors);
        }
        (dir, nexus)
    }

    fn key(nexus: &Nexus, drug: &str, predicate: &str, symptom: &str) -> LinkKey {
        nexus
            .read(|g| {
                let s = g.find_concept_by_names("Drug", drug)?.expect("drug");
                let o = g
                    .find_concept_by_names("Symptom", symptom)?
                    .expect("symptom");
                let p = g.predicate_id(predicate)?.expect("predicate");
                Ok((ElementId::Concept(s), p, ElementId::Concept(o)))
            })
            .expect("read")
    }

    /// The checks ahead look every upserted link up in their snapshot and
    /// hand over the ones they found stored: a link between stored
    /// concepts that is stored, one that is not, one to a concept the file
    /// creates.
    #[test]
    fn the_checks_ahead_list_the_upserted_links_they_found_stored() {
        let (_dir, nexus) = medical();
        let text = r#"UPSERT {
  CONCEPT { {type: "Symptom", name: "Vertigo"} }
  CONCEPT { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headache"}) ("has_side_effect", {type: "Symptom", name: "Headache"}) ("has_side_effect", {type: "Symptom", name: "Vertigo"}) } }
}"#;
        let parsed = parse_and_check_kip(&nexus, text);
        let known = parsed
            .known
            .expect("an additive file that passed its checks");
        let at = nexus.last_change_seq().expect("seq");
        assert_eq!(known.links_checked_at(), Some(at));
        assert!(known.link_was_stored(&key(&nexus, "Aspirin", "treats", "Headache")));
        assert!(!known.link_was_stored(&key(&nexus, "Aspirin", "has_side_effect", "Headache")));
    }

    /// The checks follow a handle to its concept; an end they cannot
    /// follow (a handle the file never defines) leaves no claim about the
    /// file's links, so the write looks each one up itself.
    #[test]
    fn handles_are_followed_and_an_unknown_end_leaves_the_links_unchecked() {
        let (_dir, nexus) = medical();
        let handle = r#"UPSERT {
  CONCEPT ?h { {type: "Symptom", name: "Headache"} }
  CONCEPT { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("treats", ?h) } }
}"#;
        let known = parse_and_check_kip(&nexus, handle).known.expect("checked");
        assert!(known.links_checked_at().is_some());
        assert!(known.link_was_stored(&key(&nexus, "Aspirin", "treats", "Headache")));
        let unknown = r#"UPSERT {
  CONCEPT { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headache"}) ("treats", ?nowhere) } }
}"#;
        let parsed = parse_and_check_kip(&nexus, unknown);
        assert_eq!(parsed.known.and_then(|k| k.links_checked_at()), None);
    }

    /// The reader remembers the concepts its checks found from one file to
    /// the next, and a check that used them counts as made in the snapshot
    /// they were found in; once something other than the import's additive
    /// files is written (the writer moves `clean_since`), it forgets them.
    #[test]
    fn the_checks_ahead_remember_found_concepts_until_another_write_comes_in() {
        let (_dir, nexus) = medical();
        let text = r#"UPSERT {
  CONCEPT { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headache"}) } }
}"#;
        let first = nexus.last_change_seq().expect("seq");
        let clean_since = AtomicU64::new(first);
        let mut ahead = Ahead::new(&nexus, &clean_since);
        let parsed = super::parse_and_check_kip(&mut ahead, text);
        assert_eq!(parsed.checked_at, Some(first));
        let aspirin = key(&nexus, "Aspirin", "treats", "Headache").0;
        let found = |parsed: &Parsed| {
            let known = parsed.known.as_ref().expect("an additive file that passed");
            known.rewind();
            let id = known.get_in_order("Drug", "Aspirin").expect("listed");
            id.map(ElementId::Concept)
        };
        assert_eq!(found(&parsed), Some(aspirin));
        // An additive write of the import: what was found still holds.
        let added = r#"UPSERT { CONCEPT { {type: "Drug", name: "Zinc"} } }"#;
        let report = super::import_text(&nexus, "added.kip", added, &Origin::new("test"));
        assert!(report.is_imported(), "{:?}", report.errors);
        let second = nexus.last_change_seq().expect("seq");
        assert!(second > first);
        let parsed = super::parse_and_check_kip(&mut ahead, text);
        assert_eq!(parsed.checked_at, Some(first));
        assert_eq!(found(&parsed), Some(aspirin));
        // Another write came in: the checks start afresh.
        clean_since.store(second, Ordering::Relaxed);
        let parsed = super::parse_and_check_kip(&mut ahead, text);
        assert_eq!(parsed.checked_at, Some(second));
        assert_eq!(found(&parsed), Some(aspirin));
    }
}

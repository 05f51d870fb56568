//! The one import pipeline, for every face (command line, watcher,
//! drag-and-drop, agents): read → parse → check the whole file → apply in
//! one nexus transaction → report.
//!
//! A file with any error applies nothing: the checks run before anything
//! is written, and the writes of a file are one [`Nexus::run_commands`]
//! call, one LMDB transaction that also updates the search index and the
//! counters, so a failure at any point (the nexus refusing something the
//! checks let through, a full disk) leaves the graph as it was.

use std::path::Path;
use std::time::Instant;

use kip_lang::{ErrorCode, KipError};
use kip_nexus::{Mode, Nexus, Origin, RunOptions};
use serde_json::Map;
use sha2::{Digest as _, Sha256};

use crate::bundle;
use crate::model::Model;
use crate::ops;
use crate::report::{Format, ImportError, ImportReport, Phase, Progress, Status};
use crate::semantic::{BUNDLE_ROLES, Checker, KIP_ROLES};
use crate::text::LineIndex;

/// How to import.
#[derive(Default)]
pub struct ImportOptions<'a> {
    /// Check everything and run the transaction, then abort it: the report
    /// says exactly what an import would do, and nothing is written.
    pub dry_run: bool,
    /// Called as the import moves through its phases (and every thousand
    /// items while checking a bundle).
    pub progress: Option<&'a dyn Fn(Progress)>,
    /// Who the cognitive trace names for the import (else the origin's
    /// name): `watcher` for the watched folder, the host's originator.
    pub originator: Option<&'a str>,
}

impl std::fmt::Debug for ImportOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportOptions")
            .field("dry_run", &self.dry_run)
            .field("progress", &self.progress.is_some())
            .field("originator", &self.originator)
            .finish()
    }
}

/// `sha256:<hex>` of a file's bytes: how the watcher recognises content it
/// has already imported.
pub fn content_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

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
    let started = Instant::now();
    let mut report = ImportReport::new(file_name, Format::of(file_name));
    report.hash = content_hash(text.as_bytes());
    run(nexus, text, origin, options, &mut report);
    finish(report, started, options)
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
    let name = path.display().to_string();
    let limit = crate::files::max_file_bytes();
    match crate::files::read_limited(path, limit) {
        Ok(Ok(bytes)) => import_bytes(nexus, &name, &bytes, origin, options),
        Ok(Err(size)) => too_large(&name, size, limit, options),
        Err(e) => {
            let started = Instant::now();
            let mut report = ImportReport::new(&name, Format::of(&name));
            report.add_errors([ImportError::new(
                ErrorCode::InternalError,
                format!("cannot read the file: {e}"),
            )
            .hint("Check that the file exists and is readable.")]);
            finish(report, started, options)
        }
    }
}

/// The report of a file refused for its size (it was not read).
pub(crate) fn too_large(
    name: &str,
    size: u64,
    limit: u64,
    options: &ImportOptions<'_>,
) -> ImportReport {
    let started = Instant::now();
    let mut report = ImportReport::new(name, Format::of(name));
    report.add_errors([ImportError::new(
        ErrorCode::ResourceExhausted,
        format!(
            "{name} is {size} bytes, larger than the import limit of {limit} bytes; it was not read"
        ),
    )
    .hint(format!(
        "Split it into several capsules, or raise the limit with {}=<MiB>.",
        crate::files::MAX_FILE_VAR
    ))]);
    finish(report, started, options)
}

/// Imports a file's bytes (UTF-8, an initial byte-order mark allowed).
pub(crate) fn import_bytes(
    nexus: &Nexus,
    file_name: &str,
    bytes: &[u8],
    origin: &Origin,
    options: &ImportOptions<'_>,
) -> ImportReport {
    let started = Instant::now();
    let mut report = ImportReport::new(file_name, Format::of(file_name));
    report.hash = content_hash(bytes);
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(body) {
        Ok(text) => run(nexus, text, origin, options, &mut report),
        Err(e) => {
            let valid = &body[..e.valid_up_to()];
            let prefix = std::str::from_utf8(valid).unwrap_or_default();
            let pos = kip_lang::Position::of(prefix, prefix.len());
            report.add_errors([ImportError {
                line: Some(pos.line),
                column: Some(pos.column),
                ..ImportError::new(
                    ErrorCode::InvalidSyntax,
                    format!(
                        "the file is not UTF-8 text: invalid byte at offset {}",
                        e.valid_up_to()
                    ),
                )
                .hint("Save the file as UTF-8.")
            }]);
        }
    }
    finish(report, started, options)
}

fn finish(mut report: ImportReport, started: Instant, options: &ImportOptions<'_>) -> ImportReport {
    report.dry_run = options.dry_run;
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

fn progress(options: &ImportOptions<'_>, phase: Phase, done: u64, total: u64) {
    if let Some(f) = options.progress {
        f(Progress { phase, done, total });
    }
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
) {
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
    progress(options, Phase::Parsing, 0, text.len() as u64);
    let lines = LineIndex::new(text);
    let applied = match format {
        Format::Kip => run_kip(nexus, text, &lines, origin, options, report),
        Format::Yaml => run_yaml(nexus, text, &lines, origin, options, report),
    };
    if let Err(e) = applied {
        report.add_errors(ImportError::from_kip(&e));
    }
}

fn apply(
    nexus: &Nexus,
    text: &str,
    commands: &[kip_lang::ast::Command],
    items: usize,
    origin: &Origin,
    options: &ImportOptions<'_>,
    report: &mut ImportReport,
) -> Result<(), KipError> {
    if commands.is_empty() {
        return Ok(());
    }
    progress(options, Phase::Applying, 0, items as u64);
    let mut run = RunOptions::new(origin.clone()).with_mode(Mode::dry_run_if(options.dry_run));
    // The trace says which file the write imports (a SPACE `SystemEvent`).
    run.trace.import = Some(report.file.clone());
    run.trace.originator = options.originator.map(str::to_owned);
    let outcome = nexus.run(text, commands, &run)?;
    report.stats = outcome.stats;
    progress(options, Phase::Applying, items as u64, items as u64);
    Ok(())
}

fn run_kip(
    nexus: &Nexus,
    text: &str,
    lines: &LineIndex,
    origin: &Origin,
    options: &ImportOptions<'_>,
    report: &mut ImportReport,
) -> Result<(), KipError> {
    let commands = match kip_lang::parse(text) {
        Ok(c) => c,
        Err(errors) => {
            add_sorted(
                report,
                errors.0.iter().flat_map(ImportError::from_kip).collect(),
            );
            return Ok(());
        }
    };
    report.items = commands.len();
    let commands = match kip_lang::bind(text, commands, &Map::new()) {
        Ok(c) => c,
        Err(errors) => {
            add_sorted(
                report,
                errors.0.iter().flat_map(ImportError::from_kip).collect(),
            );
            return Ok(());
        }
    };
    progress(options, Phase::Validating, 0, commands.len() as u64);
    let ops = ops::lower_kip(&commands);
    let errors = nexus.read(|g| {
        let model = Model::from_graph(g)?;
        let mut checker = Checker::new(g, &model, text, lines, KIP_ROLES, false, &ops);
        for op in &ops {
            checker.op(op)?;
        }
        Ok(checker.errors)
    })?;
    if !errors.is_empty() {
        add_sorted(report, errors);
        return Ok(());
    }
    progress(
        options,
        Phase::Validating,
        commands.len() as u64,
        commands.len() as u64,
    );
    apply(
        nexus,
        text,
        &commands,
        commands.len(),
        origin,
        options,
        report,
    )
}

fn run_yaml(
    nexus: &Nexus,
    text: &str,
    lines: &LineIndex,
    origin: &Origin,
    options: &ImportOptions<'_>,
    report: &mut ImportReport,
) -> Result<(), KipError> {
    let live = Model::load(nexus)?;
    let mut errors = Vec::new();
    let mut on_progress = |p: Progress| {
        if let Some(f) = options.progress {
            f(p);
        }
    };
    let stored = |ty: &str, name: &str, key: &str| {
        nexus
            .read(|g| {
                Ok(match g.find_concept_by_names(ty, name)? {
                    Some(c) => g
                        .concept(c)?
                        .is_some_and(|r| r.attributes.contains_key(key)),
                    None => false,
                })
            })
            .unwrap_or(false)
    };
    let read = bundle::read(text, lines, &live, &stored, &mut errors, &mut on_progress);
    report.items = read.items;
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
    progress(
        options,
        Phase::Validating,
        read.items as u64,
        read.items as u64,
    );
    let commands = ops::to_commands(&read.ops);
    apply(nexus, text, &commands, read.items, origin, options, report)
}

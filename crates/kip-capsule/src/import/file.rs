//! One file's import, from its text, its path or a [`Source`]: read →
//! parse → check → apply in one nexus transaction → report, each format
//! handed to its own module ([`super::kip`], [`super::yaml`]). A capsule
//! above the whole-file limit goes to [`crate::stream`]. It does not
//! import several files at once ([`super::pipeline`] does).

use std::path::Path;
use std::time::Instant;

use kip_lang::ErrorCode;
use kip_nexus::{Nexus, Origin};

use crate::apply::{ImportOptions, Reporter};
use crate::report::{Format, ImportError, ImportReport, Phase, Status};
use crate::source::{Read, Source};
use crate::text::LineIndex;

use super::kip::{Parsed, run_kip};
use super::yaml::run_yaml;

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

/// Ends a report: marks it dry run as `options` say, imported or failed,
/// and times it from `started`.
pub(super) fn finish(
    report: ImportReport,
    started: Instant,
    options: &ImportOptions<'_>,
) -> ImportReport {
    finish_run(report, started, options.dry_run)
}

/// [`finish`] with only the dry-run flag of the options (a file read on
/// the pipelined reader's thread has no options there).
pub(super) fn finish_run(
    mut report: ImportReport,
    started: Instant,
    dry_run: bool,
) -> ImportReport {
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

/// Checks and applies a read file's `text` by its format (`parsed`: a
/// capsule parsed ahead), every error into `report`.
pub(super) fn run(
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

//! A file of a pipelined import between the reader and the writer: read
//! (and, for a capsule, checked ahead) by [`prepare`] on the reader's
//! thread, then imported by [`complete`] or joined to a group write
//! ([`groupable`]). It owns when checks made ahead stop being trusted
//! ([`distrust_older_checks`]), not the order files are written in.

use std::path::{Path, PathBuf};
use std::time::Instant;

use kip_nexus::{Nexus, Origin};

use crate::apply::ImportOptions;
use crate::report::{Format, ImportReport};
use crate::source::{Read, Source};

use super::ahead::{Ahead, parse_and_check_kip};
use super::file::{finish, finish_run, import_streamed, run};
use super::kip::Parsed;

/// A file read and decoded (and, ahead of its turn, parsed), or its report
/// when it could not be read.
pub(super) enum Prepared {
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
pub(super) fn prepare(path: &Path, dry_run: bool, parse_ahead: Option<&mut Ahead<'_>>) -> Prepared {
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
pub(super) fn complete(
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

/// Forgets that `prepared` passed its checks ahead if they were made
/// before `clean_since`: something other than an additive file of this
/// import has been written since, so they are made again.
pub(super) fn distrust_older_checks(prepared: &mut Prepared, clean_since: u64) {
    if let Prepared::Ready {
        parsed: Some(p), ..
    } = prepared
        && p.checked_at.is_some_and(|at| at < clean_since)
    {
        p.checked_at = None;
    }
}

/// Whether a prepared file can join a group write: a capsule of UPSERTs
/// that only add, parsed and checked ahead against a state nothing but
/// additive files of this import has changed since.
pub(super) fn groupable(prepared: &Prepared) -> bool {
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

//! Capsules too large to hold at once: read, parsed, checked and applied
//! part by part, still in one transaction (all or nothing).
//!
//! A `.kip` file above the whole-file limit ([`crate::files::max_file_bytes`])
//! is cut into parts of about [`PART_BYTES`] on the way in, by a scanner
//! that knows only KIP's lexical shape (strings, `//` comments, brackets,
//! command keywords): between two top-level commands, or inside a long
//! UPSERT between two of its blocks. Each part is a text of its own: an
//! UPSERT cut in two is closed at the cut (with its `WITH METADATA`, which
//! a first pass over the file found) and re-opened in the next part, whose
//! text keeps every line where it was (blank padding before the first
//! block) so that positions map back to the file line for line. The nexus
//! applies the parts in one write ([`kip_nexus::bulk::Bulk::parts`]), carrying the
//! UPSERT's handles across the cut; each part is parsed, bound and checked
//! against the write's state just before it is applied. Memory holds one
//! part, its tree and what the first pass keeps (the suffixes of long
//! UPSERTs), whatever the file's size.
//!
//! What a streamed file loses against a whole one: errors are those of the
//! first part that has any (the import stops there, nothing applied), and
//! the checks that compare blocks with each other (a concept given two
//! types, a link written then deleted) see one part at a time; the nexus
//! still refuses what would break its invariants.

mod lex;
mod split;
#[cfg(test)]
mod tests;

use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;

use kip_lang::{ErrorCode, KipError};
use kip_nexus::bulk::Part;
use kip_nexus::{Graph, Nexus, Origin};
use serde_json::Map;

use crate::model::Model;
use crate::ops;
use crate::report::{ImportError, ImportReport, Phase};
use crate::semantic::{Checker, KIP_ROLES};
use crate::source::cannot_read;
use crate::text::LineIndex;

pub(crate) use lex::file_hash;
use lex::{At, Suffix, first_pass};
use split::{PartText, Segment, SplitError, Splitter, open_text};

/// The size a streamed capsule is cut into, in bytes (a part's tree takes
/// about ten times its text).
pub const PART_BYTES: usize = 4 << 20;

/// What the parts seen so far left for the report.
#[derive(Default)]
struct Seen {
    splitter: Option<Splitter<std::fs::File>>,
    /// The handles of the UPSERT that may go on in the next part.
    handles: BTreeSet<String>,
    /// Commands (an UPSERT cut in parts counts once).
    items: usize,
    /// The problems that stopped the import, placed in the file.
    errors: Vec<ImportError>,
    /// How the last part handed over maps to the file (for the nexus's
    /// own errors while it applies it).
    segments: Vec<Segment>,
}

/// The error that stops the write when a part has problems (the report
/// lists them; this one only stops the write: `Bulk::parts` does not
/// trace a stop asked for by its caller).
fn stopped(errors: &[ImportError]) -> KipError {
    let first = errors.first();
    let place = match first.and_then(|e| e.line) {
        Some(line) => format!(" at line {line}"),
        None => String::new(),
    };
    KipError::new(
        first.map_or(ErrorCode::InvalidSyntax, |e| e.code),
        format!(
            "the capsule was not imported: {} problem(s), the first{place}: {}",
            errors.len(),
            first.map_or("", |e| e.message.as_str())
        ),
    )
}

impl Seen {
    fn stop(&mut self, errors: impl IntoIterator<Item = ImportError>) -> KipError {
        self.errors.extend(errors);
        stopped(&self.errors)
    }
}

/// Imports the capsule at `path` part by part (see the module doc), cut
/// into parts of about `part_bytes`.
pub(crate) fn import(
    nexus: &Nexus,
    path: &Path,
    report: &mut ImportReport,
    origin: &Origin,
    progress: &crate::apply::Reporter<'_>,
    part_bytes: usize,
) {
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    progress.report(Phase::Parsing, 0, size, 0);
    let (hash, suffixes) = match std::fs::File::open(path).and_then(|f| first_pass(f, part_bytes)) {
        Ok(found) => found,
        Err(e) => return report.add_errors([cannot_read(&e)]),
    };
    report.hash = hash;
    // A capsule's store takes a few times its text: room up front, so the
    // write does not run again after the map fills.
    nexus.reserve(size.saturating_mul(6));
    let head = {
        let mut head = Vec::new();
        let _ = open_text(path).and_then(|f| f.take(4096).read_to_end(&mut head));
        String::from_utf8_lossy(&head).into_owned()
    };
    let run = crate::apply::run_options(origin, &report.file, progress.options);
    let cuttable: BTreeSet<usize> = suffixes.keys().copied().collect();
    let max_bytes = usize::try_from(crate::files::max_file_bytes())
        .unwrap_or(usize::MAX)
        .max(part_bytes);
    let source = Source {
        path,
        part_bytes,
        max_bytes,
        cuttable: &cuttable,
        suffixes: &suffixes,
        progress,
    };
    let mut seen = Seen::default();
    let outcome = {
        let mut next = |g: &Graph<'_>, n: usize| next_part(&source, &mut seen, g, n);
        nexus.bulk().parts(&head, &run, &mut next)
    };
    report.items = seen.items;
    match outcome {
        Ok(outcome) => {
            report.stats = outcome.stats;
        }
        Err(_) if !seen.errors.is_empty() => report.add_errors(seen.errors),
        Err(e) => {
            let segments = PartText {
                text: String::new(),
                segments: seen.segments,
            };
            report.add_errors(
                ImportError::from_kip(&e)
                    .into_iter()
                    .map(|e| segments.place(e)),
            );
        }
    }
}

/// What [`next_part`] reads the parts with.
struct Source<'a> {
    path: &'a Path,
    part_bytes: usize,
    max_bytes: usize,
    cuttable: &'a BTreeSet<usize>,
    suffixes: &'a HashMap<usize, Suffix>,
    progress: &'a crate::apply::Reporter<'a>,
}

/// Reads, parses, binds and checks part `n` for the nexus to apply
/// (`None` after the last); the first part opens the file afresh, since
/// the nexus runs the whole write again when the store's map grows.
fn next_part(
    source: &Source<'_>,
    seen: &mut Seen,
    g: &Graph<'_>,
    n: usize,
) -> Result<Option<Part>, KipError> {
    if n == 0 {
        let file = open_text(source.path).map_err(|e| seen.stop([cannot_read(&e)]))?;
        let splitter = Splitter::new(
            file,
            source.part_bytes,
            source.max_bytes,
            source.cuttable.clone(),
        );
        *seen = Seen {
            splitter: Some(splitter),
            ..Seen::default()
        };
    }
    let Some(splitter) = seen.splitter.as_mut() else {
        return Ok(None);
    };
    let raw = match splitter.next_piece() {
        Ok(Some(raw)) => raw,
        Ok(None) => return Ok(None),
        Err(SplitError::Io(e)) => return Err(seen.stop([cannot_read(&e)])),
        Err(SplitError::TooLarge(at)) => return Err(seen.stop([too_large(at, source.max_bytes)])),
    };
    let read = splitter.offset;
    let continues = raw.reopens.is_some();
    let part = PartText::of(raw, source.suffixes).map_err(|e| seen.stop([e]))?;
    seen.segments = part.segments.clone();
    if !continues {
        seen.handles.clear();
    }
    let placed = |errors: Vec<KipError>, part: &PartText| -> Vec<ImportError> {
        errors
            .iter()
            .flat_map(ImportError::from_kip)
            .map(|e| part.place(e))
            .collect()
    };
    let commands = kip_lang::parse_part(&part.text, Some(&mut seen.handles)).map_err(|e| {
        let errors = placed(e.0, &part);
        seen.stop(errors)
    })?;
    seen.items += commands.len() - usize::from(continues && !commands.is_empty());
    let commands = kip_lang::bind(&part.text, commands, &Map::new()).map_err(|e| {
        let errors = placed(e.0, &part);
        seen.stop(errors)
    })?;
    let errors = check_part(g, &part, &commands, source.progress.options.owner)?;
    if !errors.is_empty() {
        return Err(seen.stop(errors));
    }
    // Items are not known ahead: parts done, of an unknown total (0); the
    // bytes read say how far.
    source
        .progress
        .report(Phase::Applying, n as u64 + 1, 0, read);
    Ok(Some(Part {
        text: part.text.into(),
        commands,
        continues,
    }))
}

/// The error of a command or block larger than the file limit.
fn too_large(at: At, limit: usize) -> ImportError {
    ImportError {
        line: usize::try_from(at.line).ok(),
        column: usize::try_from(at.column + 1).ok(),
        ..ImportError::new(
            ErrorCode::ResourceExhausted,
            format!("one command or UPSERT block starting here is larger than {limit} bytes"),
        )
        .hint(format!(
            "Split it into smaller commands or blocks (a large capsule is read block by block), or raise the limit with {}=<MiB>.",
            crate::files::MAX_FILE_VAR
        ))
    }
}

/// The meaning checks of a part against the write's state (with the
/// owner's authority when `owner`), its errors placed in the file and in
/// file order.
fn check_part(
    g: &Graph<'_>,
    part: &PartText,
    commands: &[kip_lang::ast::Command],
    owner: bool,
) -> Result<Vec<ImportError>, KipError> {
    let lines = LineIndex::new(&part.text);
    let ops = ops::lower_kip(commands);
    let model = Model::from_graph(g)?;
    let mut checker =
        Checker::new(g, &model, &part.text, &lines, KIP_ROLES, false, &ops).with_owner(owner);
    for op in &ops {
        checker.op(op)?;
    }
    let mut errors: Vec<ImportError> = checker.errors.into_iter().map(|e| part.place(e)).collect();
    errors.sort_by_key(|e| (e.line.unwrap_or(0), e.column.unwrap_or(0)));
    Ok(errors)
}

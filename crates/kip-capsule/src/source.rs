//! Where an import's text comes from, read once ([`read`]): the size
//! limit, the byte-order mark, UTF-8 and the content hash are decided here
//! for every way in — text an agent or a browser sent, a file's bytes the
//! watcher took up, a file by its path for `kip import` and a dropped file.
//! What happens to the text afterwards is the import's
//! ([`crate::import`]).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use kip_lang::ErrorCode;
use sha2::{Digest as _, Sha256};

use crate::report::{Format, ImportError, ImportReport};

/// What an import reads.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// Text already decoded, named `name` (its extension picks the format).
    Text { name: &'a str, text: &'a str },
    /// A file's bytes (UTF-8, an initial byte-order mark allowed).
    Bytes { name: &'a str, bytes: &'a [u8] },
    /// A file, read here unless it is larger than the import limit
    /// ([`crate::files::max_file_bytes`]).
    Path(&'a Path),
}

impl Source<'_> {
    /// The name reports give the file.
    pub fn name(&self) -> Cow<'_, str> {
        match self {
            Source::Text { name, .. } | Source::Bytes { name, .. } => Cow::Borrowed(name),
            Source::Path(path) => Cow::Owned(path.display().to_string()),
        }
    }
}

/// A source, read.
#[derive(Debug)]
pub(crate) enum Read<'a> {
    /// The text to import, and its report so far (name, format, hash).
    Text {
        report: ImportReport,
        text: Cow<'a, str>,
    },
    /// A capsule above the whole-file limit: imported part by part
    /// (`stream.rs`), which reads it itself.
    Stream(PathBuf),
    /// It cannot be imported: the report says why (unreadable, too large,
    /// not UTF-8).
    Failed(ImportReport),
}

/// Reads `source`: the one place an import decides the size limit, the
/// byte-order mark, UTF-8 and the content hash (taken over the bytes as
/// given, mark included, so the watcher recognises a file it has seen).
pub(crate) fn read<'a>(source: &Source<'a>) -> Read<'a> {
    let name = source.name().into_owned();
    let mut report = ImportReport::new(&name, Format::of(&name));
    match *source {
        Source::Text { text, .. } => {
            report.hash = content_hash(text.as_bytes());
            Read::Text {
                report,
                text: Cow::Borrowed(text),
            }
        }
        Source::Bytes { bytes, .. } => {
            report.hash = content_hash(bytes);
            let body = bytes.strip_prefix(BOM).unwrap_or(bytes);
            match std::str::from_utf8(body) {
                Ok(text) => Read::Text {
                    report,
                    text: Cow::Borrowed(text),
                },
                Err(e) => {
                    not_utf8(&mut report, body, e.valid_up_to());
                    Read::Failed(report)
                }
            }
        }
        Source::Path(path) => {
            let limit = crate::files::max_file_bytes();
            let mut bytes = match crate::files::read_limited(path, limit) {
                Ok(Ok(bytes)) => bytes,
                Ok(Err(_)) if report.format == Some(Format::Kip) => {
                    return Read::Stream(path.to_owned());
                }
                Ok(Err(size)) => return Read::Failed(too_large_report(&name, size, limit)),
                Err(e) => {
                    report.add_errors([cannot_read(&e)]);
                    return Read::Failed(report);
                }
            };
            report.hash = content_hash(&bytes);
            if bytes.starts_with(BOM) {
                bytes.drain(..BOM.len());
            }
            match String::from_utf8(bytes) {
                Ok(text) => Read::Text {
                    report,
                    text: Cow::Owned(text),
                },
                Err(e) => {
                    let valid = e.utf8_error().valid_up_to();
                    not_utf8(&mut report, e.as_bytes(), valid);
                    Read::Failed(report)
                }
            }
        }
    }
}

/// UTF-8's byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `sha256:<hex>` of a file's bytes: how the watcher recognises content it
/// has already imported.
pub fn content_hash(bytes: &[u8]) -> String {
    hash_text(Sha256::new_with_prefix(bytes))
}

/// `sha256:<hex>` of what `hasher` took in (a file's bytes, whole or in
/// blocks).
pub(crate) fn hash_text(hasher: Sha256) -> String {
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hasher.finalize() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The error of a file that could not be read.
pub(crate) fn cannot_read(e: &std::io::Error) -> ImportError {
    ImportError::new(
        ErrorCode::InternalError,
        format!("cannot read the file: {e}"),
    )
    .hint("Check that the file exists and is readable.")
}

/// The report of a file refused for its size (it was not read).
pub(crate) fn too_large_report(name: &str, size: u64, limit: u64) -> ImportReport {
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
    report
}

/// The error of a file that is not UTF-8: where its first invalid byte is.
fn not_utf8(report: &mut ImportReport, body: &[u8], valid_up_to: usize) {
    let prefix = std::str::from_utf8(&body[..valid_up_to]).unwrap_or_default();
    let pos = kip_lang::Position::of(prefix, prefix.len());
    report.add_errors([ImportError {
        line: Some(pos.line),
        column: Some(pos.column),
        ..ImportError::new(
            ErrorCode::InvalidSyntax,
            format!("the file is not UTF-8 text: invalid byte at offset {valid_up_to}"),
        )
        .hint("Save the file as UTF-8.")
    }]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(read: Read<'_>) -> ImportReport {
        match read {
            Read::Failed(report) => report,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    #[test]
    fn bytes_and_paths_read_alike_mark_and_hash_included() {
        let dir = tempfile::tempdir().expect("tempdir");
        let bytes = b"\xEF\xBB\xBFDESCRIBE PRIMER";
        let file = dir.path().join("a.kip");
        std::fs::write(&file, bytes).expect("write");
        let Read::Text {
            report: by_bytes,
            text,
        } = read(&Source::Bytes {
            name: "a.kip",
            bytes,
        })
        else {
            panic!("bytes")
        };
        assert_eq!(text, "DESCRIBE PRIMER");
        let Read::Text {
            report: by_path,
            text,
        } = read(&Source::Path(&file))
        else {
            panic!("path")
        };
        assert_eq!(text, "DESCRIBE PRIMER");
        assert_eq!(by_bytes.hash, by_path.hash);
        assert_eq!(by_bytes.hash, content_hash(bytes));
        assert_eq!(by_bytes.format, Some(Format::Kip));
    }

    #[test]
    fn bad_bytes_are_placed_and_a_missing_file_is_named() {
        let report = failed(read(&Source::Bytes {
            name: "b.yaml",
            bytes: b"- a\n- \xff",
        }));
        assert_eq!(report.errors[0].line, Some(2));
        assert_eq!(report.errors[0].column, Some(3));
        let report = failed(read(&Source::Path(Path::new("/nonexistent/c.kip"))));
        assert!(
            report.errors[0].message.contains("cannot read"),
            "{report:?}"
        );
    }
}

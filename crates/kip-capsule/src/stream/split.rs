//! Cutting a capsule into parts as it is read, and the text of each part:
//! an UPSERT cut in two closed at the cut and re-opened in the next part,
//! every line kept where it was.

use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;

use kip_lang::ErrorCode;

use crate::report::ImportError;

use super::lex::{At, Event, Lexer, Raw, Suffix, next_at};

/// Cuts a capsule into [`Raw`] pieces of about `part_bytes` as it reads it.
pub(super) struct Splitter<R> {
    pub(super) reader: R,
    /// Read in blocks of 1 MiB; `pos` of `len` taken.
    pub(super) buf: Vec<u8>,
    pub(super) pos: usize,
    pub(super) len: usize,
    pub(super) lexer: Lexer,
    /// The offset of the next byte to read.
    pub(super) offset: usize,
    /// The bytes since the last cut, from `start` (offset `start_offset`).
    pub(super) pending: Vec<u8>,
    pub(super) start: At,
    pub(super) start_offset: usize,
    pub(super) reopens: Option<(usize, At)>,
    /// Where the command or block being read started, and its offset (a
    /// single one larger than `max_bytes` is refused, blamed on it).
    pub(super) unit: At,
    pub(super) unit_offset: usize,
    pub(super) part_bytes: usize,
    /// The largest command or block: a larger one is refused (a piece is
    /// at most a part and one of them).
    pub(super) max_bytes: usize,
    /// The UPSERTs that may be cut (the first pass found their suffix).
    pub(super) cuttable: BTreeSet<usize>,
    pub(super) done: bool,
}

/// Why no next piece.
#[derive(Debug)]
pub(super) enum SplitError {
    Io(std::io::Error),
    /// One command or block is larger than the limit; it starts at `At`.
    TooLarge(At),
}

impl<R: Read> Splitter<R> {
    pub(super) fn new(
        reader: R,
        part_bytes: usize,
        max_bytes: usize,
        cuttable: BTreeSet<usize>,
    ) -> Self {
        Splitter {
            reader,
            buf: vec![0; 1 << 20],
            pos: 0,
            len: 0,
            lexer: Lexer::new(),
            offset: 0,
            pending: Vec::new(),
            start: At { line: 1, column: 0 },
            start_offset: 0,
            reopens: None,
            unit: At { line: 1, column: 0 },
            unit_offset: 0,
            part_bytes,
            max_bytes,
            cuttable,
            done: false,
        }
    }

    /// The next piece, or `None` after the last.
    pub(super) fn next_piece(&mut self) -> Result<Option<Raw>, SplitError> {
        if self.done {
            return Ok(None);
        }
        loop {
            if self.pos == self.len {
                self.len = self.reader.read(&mut self.buf).map_err(SplitError::Io)?;
                self.pos = 0;
                if self.len == 0 {
                    self.done = true;
                    self.lexer.finish();
                    let bytes = std::mem::take(&mut self.pending);
                    return Ok(Some(Raw {
                        bytes,
                        start: self.start,
                        reopens: self.reopens.take(),
                        closes: None,
                    }));
                }
            }
            let b = self.buf[self.pos];
            self.pos += 1;
            let at = self.lexer.at;
            let offset = self.offset;
            self.offset += 1;
            let event = self.lexer.feed(offset, b);
            match event {
                Event::Command(start, at) => (self.unit, self.unit_offset) = (at, start),
                Event::BlockStart(at) => (self.unit, self.unit_offset) = (at, offset),
                _ => {}
            }
            let piece = match event {
                Event::Command(start, keyword_at)
                    if start > self.start_offset
                        && start - self.start_offset >= self.part_bytes =>
                {
                    let rest = self.pending.split_off(start - self.start_offset);
                    let bytes = std::mem::replace(&mut self.pending, rest);
                    let piece = Raw {
                        bytes,
                        start: self.start,
                        reopens: self.reopens.take(),
                        closes: None,
                    };
                    self.start = keyword_at;
                    self.start_offset = start;
                    self.pending.push(b);
                    Some(piece)
                }
                Event::BlockEnd(n)
                    if self.pending.len() + 1 >= self.part_bytes && self.cuttable.contains(&n) =>
                {
                    self.pending.push(b);
                    let upsert = self.lexer.in_upsert.map_or(at, |(_, a)| a);
                    let piece = Raw {
                        bytes: std::mem::take(&mut self.pending),
                        start: self.start,
                        reopens: self.reopens.replace((n, upsert)),
                        closes: Some((n, upsert)),
                    };
                    self.start = next_at(at, b);
                    self.start_offset = offset + 1;
                    Some(piece)
                }
                _ => {
                    self.pending.push(b);
                    None
                }
            };
            if piece.is_some() {
                return Ok(piece);
            }
            if self.offset - self.unit_offset > self.max_bytes {
                return Err(SplitError::TooLarge(self.unit));
            }
        }
    }
}

/// One line range of a part's text and the file line it shows (a part is
/// made of the file's text, shifted by whole lines, and of a few lines of
/// glue that re-open or close a cut UPSERT).
#[derive(Clone, Copy, Debug)]
pub(super) struct Segment {
    /// The part's line (1-based) where the segment starts.
    pub(super) part_line: usize,
    /// The file's line shown there.
    pub(super) file_line: u64,
    /// For glue: the column reported (that of the UPSERT it stands for).
    pub(super) column: Option<u64>,
}

/// A part's text and how its lines map back to the file.
#[derive(Debug)]
pub(super) struct PartText {
    pub(super) text: String,
    pub(super) segments: Vec<Segment>,
}

impl PartText {
    /// Builds the text of `raw`: the re-opened UPSERT's head, the bytes
    /// (after blanks standing for what came before them on their first
    /// line), and the closing brace and suffix of a cut UPSERT.
    pub(super) fn of(raw: Raw, suffixes: &HashMap<usize, Suffix>) -> Result<PartText, ImportError> {
        let mut text = String::new();
        let mut segments = Vec::new();
        let mut line = 1;
        if let Some((_, upsert)) = raw.reopens {
            text.push_str("UPSERT {\n");
            segments.push(Segment {
                part_line: 1,
                file_line: upsert.line,
                column: Some(upsert.column + 1),
            });
            line = 2;
        }
        segments.push(Segment {
            part_line: line,
            file_line: raw.start.line,
            column: None,
        });
        let body = match String::from_utf8(raw.bytes) {
            Ok(body) => body,
            Err(e) => {
                return Err(not_utf8(
                    raw.start,
                    e.as_bytes(),
                    e.utf8_error().valid_up_to(),
                ));
            }
        };
        pad(&mut text, raw.start.column);
        line += body.matches('\n').count();
        text.push_str(&body);
        drop(body);
        if let Some((n, upsert)) = raw.closes {
            text.push_str("\n}");
            line += 1;
            segments.push(Segment {
                part_line: line,
                file_line: upsert.line,
                column: Some(upsert.column + 1),
            });
            if let Some(suffix) = suffixes.get(&n) {
                text.push('\n');
                line += 1;
                segments.push(Segment {
                    part_line: line,
                    file_line: suffix.at.line,
                    column: None,
                });
                pad(&mut text, suffix.at.column);
                text.push_str(&suffix.text);
            }
        }
        Ok(PartText { text, segments })
    }

    /// Moves an error's position from the part's text to the file's.
    pub(super) fn place(&self, mut e: ImportError) -> ImportError {
        let Some(line) = e.line else { return e };
        if let Some(seg) = self.segments.iter().rev().find(|s| s.part_line <= line) {
            let shown = seg.file_line + (line - seg.part_line) as u64;
            e.line = usize::try_from(shown).ok();
            if let Some(column) = seg.column {
                e.column = usize::try_from(column).ok();
            }
        }
        e
    }
}

/// `n` blanks: a part's first line starts where its bytes did.
pub(super) fn pad(text: &mut String, n: u64) {
    text.extend(std::iter::repeat_n(' ', usize::try_from(n).unwrap_or(0)));
}

/// The error of bytes that are not UTF-8, at the first invalid one.
pub(super) fn not_utf8(start: At, bytes: &[u8], valid_up_to: usize) -> ImportError {
    let valid = &bytes[..valid_up_to];
    let lines = valid.iter().filter(|&&b| b == b'\n').count() as u64;
    let tail = match valid.iter().rposition(|&b| b == b'\n') {
        Some(i) => &valid[i + 1..],
        None => valid,
    };
    let chars = tail.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64;
    let column = if lines == 0 {
        start.column + chars
    } else {
        chars
    };
    ImportError {
        line: usize::try_from(start.line + lines).ok(),
        column: usize::try_from(column + 1).ok(),
        ..ImportError::new(
            ErrorCode::InvalidSyntax,
            "the file is not UTF-8 text: invalid byte here",
        )
        .hint("Save the file as UTF-8.")
    }
}

/// Opens `path` for reading after its byte-order mark, if any.
pub(super) fn open_text(path: &Path) -> std::io::Result<std::fs::File> {
    use std::io::{Seek as _, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let mut head = [0u8; 3];
    let n = file.read(&mut head)?;
    if n < 3 || head != *b"\xEF\xBB\xBF" {
        file.seek(SeekFrom::Start(0))?;
    }
    Ok(file)
}

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
//! applies the parts in one write ([`Nexus::run_parts`]), carrying the
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

use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;

use kip_lang::{ErrorCode, KipError};
use kip_nexus::{Graph, Nexus, Origin, Part};
use serde_json::Map;
use sha2::{Digest as _, Sha256};

use crate::import::{cannot_read, hash_text};
use crate::model::Model;
use crate::ops;
use crate::report::{ImportError, ImportReport, Phase};
use crate::semantic::{Checker, KIP_ROLES};
use crate::text::LineIndex;

/// The size a streamed capsule is cut into, in bytes (a part's tree takes
/// about ten times its text).
pub const PART_BYTES: usize = 4 << 20;

/// The commands a top-level keyword starts: a cut between commands goes
/// before one of them.
const COMMAND_KEYWORDS: [&[u8]; 8] = [
    b"UPSERT",
    b"FIND",
    b"DELETE",
    b"DESCRIBE",
    b"SEARCH",
    b"UPDATE",
    b"MERGE",
    b"EXPORT",
];

/// The longest text after an UPSERT's body that can be its suffix (a
/// `WITH METADATA` block and comments); an UPSERT followed by more before
/// the next command is not cut.
const MAX_SUFFIX: usize = 1 << 20;

/// Where a byte of the file is: 1-based line, and characters (Unicode
/// scalar values) before it on its line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct At {
    line: u64,
    column: u64,
}

/// A piece of the file cut off by the [`Splitter`]: its bytes, where they
/// start, and how the cut relates to an UPSERT.
#[derive(Debug)]
struct Raw {
    bytes: Vec<u8>,
    start: At,
    /// The piece starts inside UPSERT number `n` (counted from 0 in file
    /// order), which began at `At`: the part re-opens it.
    reopens: Option<(usize, At)>,
    /// The piece ends inside UPSERT number `n`, which began at `At`: the
    /// part closes it.
    closes: Option<(usize, At)>,
}

/// What the first pass learns of a long UPSERT: the text after its body up
/// to the next command (its `WITH METADATA`, if any) and where it starts.
#[derive(Clone, Debug)]
struct Suffix {
    text: String,
    at: At,
}

/// The lexical scan of a capsule, one byte at a time: strings, comments,
/// bracket depth, identifiers, and the UPSERTs with their blocks.
#[derive(Debug, Default)]
struct Lexer {
    at: At,
    depth: u32,
    in_string: bool,
    escaped: bool,
    in_comment: bool,
    /// The previous byte was `/` outside strings and comments.
    slash: bool,
    /// The identifier being read (ASCII letters, digits, `_`), and where.
    ident: Vec<u8>,
    ident_at: (usize, At),
    /// The byte before the identifier started (`?`, `:`, `.`, `$` make it
    /// a name, not a keyword).
    before_ident: u8,
    last: u8,
    /// UPSERTs seen so far.
    upserts: usize,
    /// An `UPSERT` keyword was read at depth 0; its `{` is expected.
    upsert_keyword: Option<At>,
    /// Inside the body of UPSERT `n` (at depth ≥ 1), which began at `At`.
    in_upsert: Option<(usize, At)>,
}

/// What one byte meant to the scan.
#[derive(Debug, PartialEq, Eq)]
enum Event {
    None,
    /// A command keyword at depth 0 starts at this offset (of the bytes
    /// fed so far), at `At`.
    Command(usize, At),
    /// A block of an UPSERT starts at `At` (its keyword).
    BlockStart(At),
    /// A block of UPSERT `n` ended with this byte.
    BlockEnd(usize),
    /// The body of UPSERT `n` ended with this byte.
    UpsertEnd(usize),
}

impl Lexer {
    fn new() -> Lexer {
        Lexer {
            at: At { line: 1, column: 0 },
            ..Lexer::default()
        }
    }

    /// Feeds the byte at `offset`; returns what it meant (a keyword is
    /// known only once the byte after it is read).
    fn feed(&mut self, offset: usize, b: u8) -> Event {
        let mut event = Event::None;
        let is_ident = b.is_ascii_alphanumeric() || b == b'_';
        if !is_ident && !self.ident.is_empty() {
            event = self.end_ident();
        }
        let here = self.at;
        if self.in_comment {
            if b == b'\n' {
                self.in_comment = false;
            }
        } else if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' || b == b'\n' {
                self.in_string = false;
            }
        } else {
            let slash = std::mem::take(&mut self.slash);
            match b {
                b'/' if slash => self.in_comment = true,
                b'/' => self.slash = true,
                b'"' => self.in_string = true,
                b'{' | b'(' | b'[' => {
                    if b == b'{'
                        && self.depth == 0
                        && let Some(start) = self.upsert_keyword.take()
                    {
                        self.in_upsert = Some((self.upserts, start));
                        self.upserts += 1;
                    }
                    self.depth += 1;
                }
                b'}' | b')' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if b == b'}'
                        && let Some((n, _)) = self.in_upsert
                    {
                        match self.depth {
                            0 => {
                                self.in_upsert = None;
                                event = Event::UpsertEnd(n);
                            }
                            1 => event = Event::BlockEnd(n),
                            _ => {}
                        }
                    }
                }
                _ if is_ident => {
                    if self.ident.is_empty() {
                        self.ident_at = (offset, here);
                        self.before_ident = self.last;
                    }
                    self.ident.push(b);
                }
                _ => {}
            }
            if !b.is_ascii_whitespace() && b != b'{' && self.upsert_keyword.is_some() && !is_ident {
                // `UPSERT` followed by anything but its body.
                self.upsert_keyword = None;
            }
        }
        if b == b'\n' {
            self.at.line += 1;
            self.at.column = 0;
        } else if b & 0xC0 != 0x80 {
            self.at.column += 1;
        }
        self.last = b;
        event
    }

    /// The end of the file: an identifier still being read ends.
    fn finish(&mut self) -> Event {
        if self.ident.is_empty() {
            Event::None
        } else {
            self.end_ident()
        }
    }

    fn end_ident(&mut self) -> Event {
        let word = std::mem::take(&mut self.ident);
        let named = matches!(self.before_ident, b'?' | b':' | b'.' | b'$')
            || self.before_ident.is_ascii_alphanumeric();
        let (offset, at) = self.ident_at;
        if self.depth == 1
            && self.in_upsert.is_some()
            && !named
            && (word == b"CONCEPT" || word == b"PROPOSITION")
        {
            return Event::BlockStart(at);
        }
        if self.depth != 0 || named || !COMMAND_KEYWORDS.contains(&word.as_slice()) {
            return Event::None;
        }
        if word == b"UPSERT" {
            self.upsert_keyword = Some(at);
        }
        Event::Command(offset, at)
    }
}

/// The first pass: the file's hash, and the suffix of every UPSERT whose
/// body is long enough to be cut (at least a quarter of a part).
fn first_pass(
    mut reader: impl Read,
    part_bytes: usize,
) -> std::io::Result<(String, HashMap<usize, Suffix>)> {
    let mut hasher = Sha256::new();
    let mut lexer = Lexer::new();
    let mut suffixes = HashMap::new();
    // The suffix being read: its UPSERT, its first byte's offset, its
    // bytes so far and where it starts.
    let mut suffix: Option<(usize, usize, Vec<u8>, At)> = None;
    // The body being read: its UPSERT and its first byte's offset.
    let mut body: Option<(usize, usize)> = None;
    let mut offset = 0usize;
    let mut buf = vec![0u8; 1 << 20];
    let long = part_bytes / 4;
    let keep = |suffixes: &mut HashMap<usize, Suffix>,
                (k, _, text, at): (usize, usize, Vec<u8>, At)| {
        let text = String::from_utf8_lossy(&text).into_owned();
        suffixes.insert(k, Suffix { text, at });
    };
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        // A byte-order mark is not text (see `open_text`).
        let from = if offset == 0 && buf[..n].starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            0
        };
        for &b in &buf[from..n] {
            let at = lexer.at;
            match lexer.feed(offset, b) {
                Event::Command(start, _) => {
                    if let Some((k, first, mut text, at)) = suffix.take() {
                        // The keyword's bytes were taken in before it was
                        // known to be one.
                        text.truncate(start.saturating_sub(first));
                        keep(&mut suffixes, (k, first, text, at));
                    }
                }
                Event::UpsertEnd(k) => {
                    if let Some((_, first)) = body.take()
                        && offset - first >= long
                    {
                        suffix = Some((k, offset + 1, Vec::new(), next_at(at, b)));
                        offset += 1;
                        continue;
                    }
                }
                _ => {}
            }
            if body.is_none()
                && let Some((k, _)) = lexer.in_upsert
            {
                body = Some((k, offset));
            }
            if let Some((_, _, text, _)) = &mut suffix {
                text.push(b);
                if text.len() > MAX_SUFFIX {
                    // Not a `WITH METADATA`: that UPSERT is not cut.
                    suffix = None;
                }
            }
            offset += 1;
        }
    }
    if let Event::Command(start, _) = lexer.finish()
        && let Some((_, first, text, _)) = &mut suffix
    {
        text.truncate(start.saturating_sub(*first));
    }
    if let Some(s) = suffix.take() {
        keep(&mut suffixes, s);
    }
    Ok((hash_text(hasher), suffixes))
}

/// `sha256:<hex>` of the file at `path`, read in blocks (the hash
/// [`crate::content_hash`] gives its bytes).
pub(crate) fn file_hash(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hash_text(hasher))
}

/// The position after byte `b` read at `at`.
fn next_at(at: At, b: u8) -> At {
    if b == b'\n' {
        At {
            line: at.line + 1,
            column: 0,
        }
    } else {
        At {
            line: at.line,
            column: at.column + u64::from(b & 0xC0 != 0x80),
        }
    }
}

/// Cuts a capsule into [`Raw`] pieces of about `part_bytes` as it reads it.
struct Splitter<R> {
    reader: R,
    /// Read in blocks of 1 MiB; `pos` of `len` taken.
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    lexer: Lexer,
    /// The offset of the next byte to read.
    offset: usize,
    /// The bytes since the last cut, from `start` (offset `start_offset`).
    pending: Vec<u8>,
    start: At,
    start_offset: usize,
    reopens: Option<(usize, At)>,
    /// Where the command or block being read started, and its offset (a
    /// single one larger than `max_bytes` is refused, blamed on it).
    unit: At,
    unit_offset: usize,
    part_bytes: usize,
    /// The largest command or block: a larger one is refused (a piece is
    /// at most a part and one of them).
    max_bytes: usize,
    /// The UPSERTs that may be cut (the first pass found their suffix).
    cuttable: BTreeSet<usize>,
    done: bool,
}

/// Why no next piece.
#[derive(Debug)]
enum SplitError {
    Io(std::io::Error),
    /// One command or block is larger than the limit; it starts at `At`.
    TooLarge(At),
}

impl<R: Read> Splitter<R> {
    fn new(reader: R, part_bytes: usize, max_bytes: usize, cuttable: BTreeSet<usize>) -> Self {
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
    fn next_piece(&mut self) -> Result<Option<Raw>, SplitError> {
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
struct Segment {
    /// The part's line (1-based) where the segment starts.
    part_line: usize,
    /// The file's line shown there.
    file_line: u64,
    /// For glue: the column reported (that of the UPSERT it stands for).
    column: Option<u64>,
}

/// A part's text and how its lines map back to the file.
#[derive(Debug)]
struct PartText {
    text: String,
    segments: Vec<Segment>,
}

impl PartText {
    /// Builds the text of `raw`: the re-opened UPSERT's head, the bytes
    /// (after blanks standing for what came before them on their first
    /// line), and the closing brace and suffix of a cut UPSERT.
    fn of(raw: Raw, suffixes: &HashMap<usize, Suffix>) -> Result<PartText, ImportError> {
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
    fn place(&self, mut e: ImportError) -> ImportError {
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
fn pad(text: &mut String, n: u64) {
    text.extend(std::iter::repeat_n(' ', usize::try_from(n).unwrap_or(0)));
}

/// The error of bytes that are not UTF-8, at the first invalid one.
fn not_utf8(start: At, bytes: &[u8], valid_up_to: usize) -> ImportError {
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
fn open_text(path: &Path) -> std::io::Result<std::fs::File> {
    use std::io::{Seek as _, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let mut head = [0u8; 3];
    let n = file.read(&mut head)?;
    if n < 3 || head != *b"\xEF\xBB\xBF" {
        file.seek(SeekFrom::Start(0))?;
    }
    Ok(file)
}

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
/// lists them; this one only stops the write: `Nexus::run_parts` does not
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
    progress: &crate::import::Reporter<'_>,
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
    let run = crate::import::run_options(origin, &report.file, progress.options);
    let cuttable: BTreeSet<usize> = suffixes.keys().copied().collect();
    let max_bytes = usize::try_from(crate::files::max_file_bytes())
        .unwrap_or(usize::MAX)
        .max(part_bytes);
    let mut seen = Seen::default();
    let outcome = {
        let mut next = |g: &Graph<'_>, n: usize| -> Result<Option<Part>, KipError> {
            if n == 0 {
                let file = open_text(path).map_err(|e| seen.stop([cannot_read(&e)]))?;
                seen = Seen {
                    splitter: Some(Splitter::new(file, part_bytes, max_bytes, cuttable.clone())),
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
                Err(SplitError::TooLarge(at)) => {
                    let limit = max_bytes;
                    let e = ImportError {
                        line: usize::try_from(at.line).ok(),
                        column: usize::try_from(at.column + 1).ok(),
                        ..ImportError::new(
                            ErrorCode::ResourceExhausted,
                            format!(
                                "one command or UPSERT block starting here is larger than {limit} bytes"
                            ),
                        )
                        .hint(format!(
                            "Split it into smaller commands or blocks (a large capsule is read block by block), or raise the limit with {}=<MiB>.",
                            crate::files::MAX_FILE_VAR
                        ))
                    };
                    return Err(seen.stop([e]));
                }
            };
            let read = splitter.offset;
            let continues = raw.reopens.is_some();
            let part = PartText::of(raw, &suffixes).map_err(|e| seen.stop([e]))?;
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
            let commands =
                kip_lang::parse_part(&part.text, Some(&mut seen.handles)).map_err(|e| {
                    let errors = placed(e.0, &part);
                    seen.stop(errors)
                })?;
            seen.items += commands.len() - usize::from(continues && !commands.is_empty());
            let commands = kip_lang::bind(&part.text, commands, &Map::new()).map_err(|e| {
                let errors = placed(e.0, &part);
                seen.stop(errors)
            })?;
            let lines = LineIndex::new(&part.text);
            let ops = ops::lower_kip(&commands);
            let model = Model::from_graph(g)?;
            let mut checker = Checker::new(g, &model, &part.text, &lines, KIP_ROLES, false, &ops);
            for op in &ops {
                checker.op(op)?;
            }
            if !checker.errors.is_empty() {
                let mut errors: Vec<ImportError> =
                    checker.errors.into_iter().map(|e| part.place(e)).collect();
                errors.sort_by_key(|e| (e.line.unwrap_or(0), e.column.unwrap_or(0)));
                return Err(seen.stop(errors));
            }
            // Items are not known ahead: parts done, of an unknown total
            // (0); the bytes read say how far.
            progress.report(Phase::Applying, n as u64 + 1, 0, read);
            Ok(Some(Part {
                text: part.text.into(),
                commands,
                continues,
            }))
        };
        nexus.run_parts(&head, &run, &mut next)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str, part_bytes: usize) -> Vec<Raw> {
        let (_, suffixes) = first_pass(text.as_bytes(), part_bytes).expect("first pass");
        let cuttable = suffixes.keys().copied().collect();
        let mut splitter = Splitter::new(text.as_bytes(), part_bytes, usize::MAX, cuttable);
        let mut out = Vec::new();
        while let Some(raw) = splitter.next_piece().expect("piece") {
            out.push(raw);
        }
        out
    }

    const TEXT: &str = "// UPSERT { FIND\nUPSERT {\n  CONCEPT ?a { {type: \"T\", name: \"}{\\\" UPSERT\"} }\n  CONCEPT ?b { {type: \"T\", name: \"b\"} SET PROPOSITIONS { (\"p\", ?a) } }\n}\nWITH METADATA { source: \"s\" }\nFIND(?x) WHERE { ?x {type: \"T\"} }\nUPSERT { CONCEPT { {type: \"T\", name: \"c\"} } }";

    #[test]
    fn the_pieces_are_the_file_cut_at_command_keywords_and_block_ends() {
        let all = pieces(TEXT, 1);
        let joined: Vec<u8> = all.iter().flat_map(|r| r.bytes.clone()).collect();
        assert_eq!(String::from_utf8(joined).expect("utf8"), TEXT);
        let starts: Vec<String> = all
            .iter()
            .map(|r| String::from_utf8_lossy(&r.bytes).chars().take(12).collect())
            .collect();
        assert_eq!(
            starts,
            [
                "// UPSERT { ",
                "UPSERT {\n  C",
                "\n  CONCEPT ?",
                "\n}\nWITH META",
                "FIND(?x) WHE",
                "UPSERT { CON",
                " }",
            ]
        );
        // Part size 1 makes every command keyword and every block end a
        // cut (the first pass finds the suffix of any body at least a
        // quarter of a part long): the first UPSERT is cut after each of
        // its blocks and re-opened, and so is the second.
        let closes: Vec<Option<usize>> = all.iter().map(|r| r.closes.map(|c| c.0)).collect();
        let reopens: Vec<Option<usize>> = all.iter().map(|r| r.reopens.map(|c| c.0)).collect();
        assert_eq!(closes, [None, Some(0), Some(0), None, None, Some(1), None]);
        assert_eq!(reopens, [None, None, Some(0), Some(0), None, None, Some(1)]);
        assert_eq!(
            all[2].start,
            At {
                line: 3,
                column: 49
            }
        );
    }

    #[test]
    fn only_a_single_command_or_block_above_the_limit_is_refused() {
        let mut text = String::from("UPSERT {\n");
        for i in 0..100 {
            text.push_str(&format!(
                "  CONCEPT {{ {{type: \"T\", name: \"n{i:03}\"}} }}\n"
            ));
        }
        text.push_str("}\n");
        // Blocks of 42 bytes, parts of 100, nothing above 60: every cut
        // comes after the part size, and no block is too large.
        let (_, suffixes) = first_pass(text.as_bytes(), 100).expect("first pass");
        let cuttable = suffixes.keys().copied().collect();
        let mut splitter = Splitter::new(text.as_bytes(), 100, 60, cuttable);
        let mut n = 0;
        while let Some(raw) = splitter.next_piece().expect("no block is too large") {
            assert!(raw.bytes.len() < 100 + 60, "{}", raw.bytes.len());
            n += 1;
        }
        assert!(n > 30, "{n} pieces");
        // A block of 80 bytes is.
        text.insert_str(
            9,
            "  CONCEPT { {type: \"T\", name: \"a long, long, long, long, long, long name\"} }\n",
        );
        let mut splitter = Splitter::new(text.as_bytes(), 100, 60, BTreeSet::new());
        let err = loop {
            match splitter.next_piece() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("the long block was let through"),
                Err(e) => break e,
            }
        };
        assert!(
            matches!(err, SplitError::TooLarge(At { line: 2, column: 2 })),
            "{err:?}"
        );
    }

    #[test]
    fn a_part_keeps_every_line_where_it_was_and_closes_with_the_suffix() {
        let (_, suffixes) = first_pass(TEXT.as_bytes(), 1).expect("first pass");
        assert_eq!(suffixes[&0].text, "\nWITH METADATA { source: \"s\" }\n");
        let mut all = pieces(TEXT, 1).into_iter().skip(1);
        let first = PartText::of(all.next().expect("piece"), &suffixes).expect("text");
        let second = PartText::of(all.next().expect("piece"), &suffixes).expect("text");
        assert!(
            first
                .text
                .ends_with("} }\n}\n \nWITH METADATA { source: \"s\" }\n"),
            "{}",
            first.text
        );
        assert!(second.text.starts_with("UPSERT {\n"), "{}", second.text);
        // Line 2 of the second part is line 4 of the file, at its column.
        let e = ImportError {
            line: Some(3),
            column: Some(60),
            ..ImportError::new(ErrorCode::InvalidSyntax, "x")
        };
        let placed = second.place(e);
        assert_eq!((placed.line, placed.column), (Some(4), Some(60)));
        assert_eq!(
            kip_lang::parse_part(&first.text, Some(&mut BTreeSet::new())).map(|c| c.len()),
            Ok(1)
        );
    }
}

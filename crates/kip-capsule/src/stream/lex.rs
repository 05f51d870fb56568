//! The first pass over a capsule: a lexer that knows only KIP's lexical
//! shape (strings, `//` comments, brackets, command keywords), the file's
//! hash, and the places it may be cut with what an UPSERT cut there must
//! carry over.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use sha2::{Digest as _, Sha256};

use crate::source::hash_text;

/// The commands a top-level keyword starts: a cut between commands goes
/// before one of them.
pub(super) const COMMAND_KEYWORDS: [&[u8]; 8] = [
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
pub(super) const MAX_SUFFIX: usize = 1 << 20;

/// Where a byte of the file is: 1-based line, and characters (Unicode
/// scalar values) before it on its line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct At {
    pub(super) line: u64,
    pub(super) column: u64,
}

/// A piece of the file cut off by the [`Splitter`]: its bytes, where they
/// start, and how the cut relates to an UPSERT.
#[derive(Debug)]
pub(super) struct Raw {
    pub(super) bytes: Vec<u8>,
    pub(super) start: At,
    /// The piece starts inside UPSERT number `n` (counted from 0 in file
    /// order), which began at `At`: the part re-opens it.
    pub(super) reopens: Option<(usize, At)>,
    /// The piece ends inside UPSERT number `n`, which began at `At`: the
    /// part closes it.
    pub(super) closes: Option<(usize, At)>,
}

/// What the first pass learns of a long UPSERT: the text after its body up
/// to the next command (its `WITH METADATA`, if any) and where it starts.
#[derive(Clone, Debug)]
pub(super) struct Suffix {
    pub(super) text: String,
    pub(super) at: At,
}

/// The lexical scan of a capsule, one byte at a time: strings, comments,
/// bracket depth, identifiers, and the UPSERTs with their blocks.
#[derive(Debug, Default)]
pub(super) struct Lexer {
    pub(super) at: At,
    pub(super) depth: u32,
    pub(super) in_string: bool,
    pub(super) escaped: bool,
    pub(super) in_comment: bool,
    /// The previous byte was `/` outside strings and comments.
    pub(super) slash: bool,
    /// The identifier being read (ASCII letters, digits, `_`), and where.
    pub(super) ident: Vec<u8>,
    pub(super) ident_at: (usize, At),
    /// The byte before the identifier started (`?`, `:`, `.`, `$` make it
    /// a name, not a keyword).
    pub(super) before_ident: u8,
    pub(super) last: u8,
    /// UPSERTs seen so far.
    pub(super) upserts: usize,
    /// An `UPSERT` keyword was read at depth 0; its `{` is expected.
    pub(super) upsert_keyword: Option<At>,
    /// Inside the body of UPSERT `n` (at depth ≥ 1), which began at `At`.
    pub(super) in_upsert: Option<(usize, At)>,
}

/// What one byte meant to the scan.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Event {
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
    pub(super) fn new() -> Lexer {
        Lexer {
            at: At { line: 1, column: 0 },
            ..Lexer::default()
        }
    }

    /// Feeds the byte at `offset`; returns what it meant (a keyword is
    /// known only once the byte after it is read).
    pub(super) fn feed(&mut self, offset: usize, b: u8) -> Event {
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
    pub(super) fn finish(&mut self) -> Event {
        if self.ident.is_empty() {
            Event::None
        } else {
            self.end_ident()
        }
    }

    pub(super) fn end_ident(&mut self) -> Event {
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
pub(super) fn first_pass(
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
pub(super) fn next_at(at: At, b: u8) -> At {
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

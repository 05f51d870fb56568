//! A hand-written fast path for the common KML shapes: scripts made only of
//! `UPSERT` commands with CONCEPT / PROPOSITION blocks, `{type, name}` and
//! `{id}` matchers, `SET ATTRIBUTES`, `SET PROPOSITIONS`, `EXPECT VERSION`,
//! `WITH METADATA` and JSON-like values — what capsules and `kip bench` write.
//!
//! pest stays the reference. This parser builds exactly the tree that
//! pest plus lowering (`crate::parser`) builds, spans included, or gives up
//! (`None`) on anything it does not recognise and on anything that
//! lowering would report (an invalid identifier, a duplicate key, a bad
//! escape, a number out of range, a malformed pattern …). A text it gives up
//! on is parsed again by pest, so every error keeps its exact message and
//! position. The differential tests (`tests/fast_differential.rs`) and the
//! `parse_differential` fuzz target check that the two agree.
//!
//! Spans: a pest rule's span, trimmed of trailing trivia by
//! `parser::span_of`, runs from its first token's start to its last token's
//! end; here every node records exactly that (`last_end` is the end of the
//! last token read).
//!
//! Nesting: every `(`, `[` and `{` counts a level, as in
//! `crate::nesting::check_text`; past [`MAX_DEPTH`] this parser gives up
//! before recursing further, and pest's path reports the text.

use crate::ast::*;
use crate::lexeme::{is_identifier, is_type_name, unescape};
use crate::nesting::MAX_DEPTH;

/// Parses `source` if it is made only of the shapes this module knows.
pub(crate) fn parse_script(source: &str) -> Option<Vec<Command>> {
    let mut p = Fast {
        src: source,
        b: source.as_bytes(),
        pos: 0,
        last_end: 0,
        depth: 0,
    };
    let mut commands = Vec::new();
    p.skip();
    while p.pos < p.b.len() {
        commands.push(Command::Upsert(p.upsert()?));
        p.skip();
    }
    Some(commands)
}

struct Fast<'s> {
    src: &'s str,
    b: &'s [u8],
    pos: usize,
    /// The end of the last token read.
    last_end: usize,
    /// Brackets open around `pos`.
    depth: usize,
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl<'s> Fast<'s> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    /// Skips whitespace (with U+FEFF) and `//` comments, as pest does
    /// between the tokens of a non-atomic rule.
    fn skip(&mut self) {
        let b = self.b;
        loop {
            match b.get(self.pos) {
                Some(b' ' | b'\t' | b'\r' | b'\n') => self.pos += 1,
                Some(0xEF) if b.get(self.pos + 1..self.pos + 3) == Some(&[0xBB, 0xBF]) => {
                    self.pos += 3;
                }
                Some(b'/') if b.get(self.pos + 1) == Some(&b'/') => {
                    self.pos += 2;
                    while let Some(&c) = b.get(self.pos) {
                        if c == b'\n' || c == b'\r' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    /// Reads the byte `c` (after trivia).
    fn punct(&mut self, c: u8) -> Option<()> {
        self.skip();
        if self.peek() == Some(c) {
            self.pos += 1;
            self.last_end = self.pos;
            Some(())
        } else {
            None
        }
    }

    /// Whether the byte `c` comes next (after trivia); reads it if so.
    fn eat(&mut self, c: u8) -> bool {
        self.punct(c).is_some()
    }

    /// Opens a bracket level, giving up past [`MAX_DEPTH`].
    fn open(&mut self, c: u8) -> Option<usize> {
        self.skip();
        let start = self.pos;
        self.punct(c)?;
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(start)
    }

    fn close(&mut self, c: u8) -> Option<()> {
        self.punct(c)?;
        self.depth -= 1;
        Some(())
    }

    /// Whether the keyword `kw` comes next (after trivia), not running into
    /// an identifier; reads it if so.
    fn keyword(&mut self, kw: &str) -> bool {
        self.skip();
        let end = self.pos + kw.len();
        if self.b.get(self.pos..end) == Some(kw.as_bytes())
            && !self.b.get(end).copied().is_some_and(is_ident_byte)
        {
            self.pos = end;
            self.last_end = end;
            true
        } else {
            false
        }
    }

    /// A `?name` variable whose name is a valid identifier.
    fn variable(&mut self) -> Option<Var> {
        self.skip();
        let start = self.pos;
        if self.peek() != Some(b'?') {
            return None;
        }
        let mut end = start + 1;
        while self.b.get(end).copied().is_some_and(is_ident_byte) {
            end += 1;
        }
        let name = &self.src[start + 1..end];
        if !is_identifier(name) {
            return None;
        }
        self.pos = end;
        self.last_end = end;
        Some(Var {
            name: name.to_owned(),
            span: Span::new(start, end),
        })
    }

    /// A string literal, decoded, with its span (quotes included).
    fn string(&mut self) -> Option<(String, Span)> {
        self.skip();
        let start = self.pos;
        if self.peek() != Some(b'"') {
            return None;
        }
        let mut i = start + 1;
        let mut escaped = false;
        loop {
            match *self.b.get(i)? {
                b'"' => break,
                b'\n' | b'\r' => return None,
                b'\\' => {
                    escaped = true;
                    match *self.b.get(i + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                        b'u' => {
                            let hex = self.b.get(i + 2..i + 6)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            i += 6;
                        }
                        _ => return None,
                    }
                }
                _ => i += 1,
            }
        }
        let body = &self.src[start + 1..i];
        let text = if escaped {
            unescape(body).ok()?
        } else {
            body.to_owned()
        };
        self.pos = i + 1;
        self.last_end = self.pos;
        Some((text, Span::new(start, self.pos)))
    }

    /// A string literal as an [`Arg`] (placeholders are left to pest).
    fn text(&mut self) -> Option<Arg<String>> {
        let (text, span) = self.string()?;
        Some(Arg::Lit(text, span))
    }

    /// An object key: a string, or a bare identifier (`$` allowed first).
    fn key(&mut self) -> Option<String> {
        self.skip();
        if self.peek() == Some(b'"') {
            return Some(self.string()?.0);
        }
        let start = self.pos;
        let mut end = start;
        if self.b.get(end) == Some(&b'$') {
            end += 1;
        }
        while self.b.get(end).copied().is_some_and(is_ident_byte) {
            end += 1;
        }
        let name = &self.src[start..end];
        if !is_type_name(name) {
            return None;
        }
        self.pos = end;
        self.last_end = end;
        Some(name.to_owned())
    }

    fn number(&mut self) -> Option<Value> {
        let b = self.b;
        let start = self.pos;
        let mut i = start;
        let digits = |mut i: usize| {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits(i + 1),
            _ => return None,
        }
        if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i = digits(i + 1);
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if b.get(j).is_some_and(u8::is_ascii_digit) {
                i = digits(j);
            }
        }
        let n = self.src[start..i].parse::<serde_json::Number>().ok()?;
        self.pos = i;
        self.last_end = i;
        Some(Value::Number(n))
    }

    /// A literal word (`true`, `false`, `null`) not running into an identifier.
    fn word(&mut self, word: &str, value: Value) -> Option<Value> {
        self.keyword(word).then_some(value)
    }

    fn value(&mut self) -> Option<Value> {
        self.skip();
        match self.peek()? {
            b'{' => Some(Value::Object(self.object()?)),
            b'[' => self.array(),
            b'"' => Some(Value::String(self.string()?.0)),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.word("true", Value::Bool(true)),
            b'f' => self.word("false", Value::Bool(false)),
            b'n' => self.word("null", Value::Null),
            _ => None,
        }
    }

    fn array(&mut self) -> Option<Value> {
        self.open(b'[')?;
        let mut items = Vec::new();
        loop {
            if self.eat(b']') {
                break;
            }
            items.push(self.value()?);
            if !self.eat(b',') {
                self.punct(b']')?;
                break;
            }
        }
        self.depth -= 1;
        items.shrink_to_fit();
        Some(Value::Array(items))
    }

    /// `{ key: value, … }` with unique keys and an optional trailing comma.
    fn object(&mut self) -> Option<Object> {
        let start = self.open(b'{')?;
        let mut members: Vec<(String, Value)> = Vec::new();
        loop {
            if self.eat(b'}') {
                break;
            }
            let key = self.key()?;
            self.punct(b':')?;
            let value = self.value()?;
            if members.iter().any(|(k, _)| *k == key) {
                return None;
            }
            members.push((key, value));
            if !self.eat(b',') {
                self.punct(b'}')?;
                break;
            }
        }
        self.depth -= 1;
        members.shrink_to_fit();
        Some(Object {
            members,
            span: Span::new(start, self.last_end),
        })
    }

    /// A concept pattern in a write: `{type: …, name: …}` or `{id: …}`.
    fn concept_pattern(&mut self) -> Option<(ConceptMatcher, Span)> {
        let start = self.open(b'{')?;
        let mut id = None;
        let mut ty = None;
        let mut name = None;
        loop {
            if self.eat(b'}') {
                break;
            }
            let key = self.key()?;
            self.punct(b':')?;
            let value = self.text()?;
            let slot = match key.as_str() {
                "id" => &mut id,
                "type" => &mut ty,
                "name" => &mut name,
                _ => return None,
            };
            if slot.is_some() {
                return None;
            }
            *slot = Some(value);
            if !self.eat(b',') {
                self.punct(b'}')?;
                break;
            }
        }
        self.depth -= 1;
        let span = Span::new(start, self.last_end);
        let matcher = match (id, ty, name) {
            (Some(id), None, None) => ConceptMatcher::Id(id),
            (None, Some(Arg::Lit(t, s)), Some(name)) if is_type_name(&t) => {
                ConceptMatcher::TypeName {
                    ty: Arg::Lit(t, s),
                    name,
                }
            }
            _ => return None,
        };
        Some((matcher, span))
    }

    /// A proposition pattern in a write: `(id: "…")` or `(s, "p", o)`.
    fn proposition_pattern(&mut self) -> Option<(PropositionMatcher, Span)> {
        let start = self.open(b'(')?;
        self.skip();
        let matcher = match self.peek()? {
            b'?' | b'{' | b'(' => {
                let subject = self.term()?;
                self.punct(b',')?;
                let (name, span) = self.string()?;
                if !is_identifier(&name) {
                    return None;
                }
                self.punct(b',')?;
                let object = self.term()?;
                PropositionMatcher::Triple(Box::new(Triple {
                    subject,
                    predicate: PredicateExpr::Names {
                        names: vec![Arg::Lit(name, span)],
                        hops: None,
                        span,
                    },
                    object,
                }))
            }
            _ => {
                if self.key()? != "id" {
                    return None;
                }
                self.punct(b':')?;
                PropositionMatcher::Id(self.text()?)
            }
        };
        self.close(b')')?;
        Some((matcher, Span::new(start, self.last_end)))
    }

    /// A subject, object or target: a variable, `{…}` or `(…)`.
    fn term(&mut self) -> Option<Term> {
        self.skip();
        match self.peek()? {
            b'?' => Some(Term::Var(self.variable()?)),
            b'{' => {
                let (m, span) = self.concept_pattern()?;
                Some(Term::Concept(m, span))
            }
            b'(' => {
                let (m, span) = self.proposition_pattern()?;
                Some(Term::Proposition(m, span))
            }
            _ => None,
        }
    }

    /// `WITH METADATA {…}`, if it comes next.
    fn with_metadata(&mut self) -> Option<Option<Object>> {
        if !self.keyword("WITH") {
            return Some(None);
        }
        if !self.keyword("METADATA") {
            return None;
        }
        Some(Some(self.object()?))
    }

    /// `EXPECT VERSION n`, if it comes next.
    fn expect_version(&mut self) -> Option<Option<Arg<u64>>> {
        if !self.keyword("EXPECT") {
            return Some(None);
        }
        if !self.keyword("VERSION") {
            return None;
        }
        self.skip();
        let start = self.pos;
        let mut end = start;
        while self.b.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        let n = self.src[start..end].parse::<u64>().ok()?;
        self.pos = end;
        self.last_end = end;
        Some(Some(Arg::Lit(n, Span::new(start, end))))
    }

    fn upsert(&mut self) -> Option<Upsert> {
        self.skip();
        let start = self.pos;
        if !self.keyword("UPSERT") {
            return None;
        }
        let body_start = self.open(b'{')?;
        let mut items = Vec::new();
        loop {
            if self.keyword("CONCEPT") {
                items.push(UpsertItem::Concept(self.concept_block()?));
            } else if self.keyword("PROPOSITION") {
                items.push(UpsertItem::Proposition(self.proposition_block()?));
            } else {
                self.close(b'}')?;
                break;
            }
        }
        let body = Span::new(body_start, self.last_end);
        let metadata = self.with_metadata()?;
        // A capsule's tree waits for the writer while the previous one is
        // applied: no spare capacity (a growing Vec keeps up to half).
        items.shrink_to_fit();
        Some(Upsert {
            items,
            metadata,
            body,
            span: Span::new(start, self.last_end),
        })
    }

    /// A CONCEPT block; its keyword has been read.
    fn concept_block(&mut self) -> Option<ConceptBlock> {
        let start = self.last_end - "CONCEPT".len();
        self.skip();
        let handle = match self.peek()? {
            b'?' => Some(self.variable()?),
            _ => None,
        };
        let body_start = self.open(b'{')?;
        let (matcher, _) = self.concept_pattern()?;
        let expect_version = self.expect_version()?;
        let mut attributes = None;
        let mut propositions = None;
        while self.keyword("SET") {
            if self.keyword("ATTRIBUTES") {
                if attributes.is_some() {
                    return None;
                }
                attributes = Some(self.object()?);
            } else if self.keyword("PROPOSITIONS") {
                if propositions.is_some() {
                    return None;
                }
                propositions = Some(self.set_propositions()?);
            } else {
                return None;
            }
        }
        self.close(b'}')?;
        let body = Span::new(body_start, self.last_end);
        let metadata = self.with_metadata()?;
        Some(ConceptBlock {
            handle,
            matcher,
            expect_version,
            attributes,
            propositions,
            metadata,
            body,
            span: Span::new(start, self.last_end),
        })
    }

    /// `{ ("predicate", target) [WITH METADATA {…}] [,] … }`.
    fn set_propositions(&mut self) -> Option<Vec<SetProposition>> {
        self.open(b'{')?;
        let mut entries = Vec::new();
        loop {
            if self.eat(b'}') {
                break;
            }
            let start = self.open(b'(')?;
            let (name, span) = self.string()?;
            if !is_identifier(&name) {
                return None;
            }
            self.punct(b',')?;
            let target = self.term()?;
            self.close(b')')?;
            let metadata = self.with_metadata()?;
            entries.push(SetProposition {
                predicate: Arg::Lit(name, span),
                target,
                metadata,
                span: Span::new(start, self.last_end),
            });
            self.eat(b',');
        }
        self.depth -= 1;
        // Most blocks hold one proposition; `push` reserves four.
        entries.shrink_to_fit();
        Some(entries)
    }

    /// A PROPOSITION block; its keyword has been read.
    fn proposition_block(&mut self) -> Option<PropositionBlock> {
        let start = self.last_end - "PROPOSITION".len();
        self.skip();
        let handle = match self.peek()? {
            b'?' => Some(self.variable()?),
            _ => None,
        };
        let body_start = self.open(b'{')?;
        let (matcher, _) = self.proposition_pattern()?;
        let expect_version = self.expect_version()?;
        let mut attributes = None;
        while self.keyword("SET") {
            if !self.keyword("ATTRIBUTES") || attributes.is_some() {
                return None;
            }
            attributes = Some(self.object()?);
        }
        self.close(b'}')?;
        let body = Span::new(body_start, self.last_end);
        let metadata = self.with_metadata()?;
        Some(PropositionBlock {
            handle,
            matcher,
            expect_version,
            attributes,
            metadata,
            body,
            span: Span::new(start, self.last_end),
        })
    }
}

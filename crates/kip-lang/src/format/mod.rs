//! The formatter: canonical KIP text for any tree, with the source's
//! comments kept.
//!
//! Canonical means: upper-case keywords, two-space indentation, one WHERE
//! item or UPSERT block per line, values on one line when they fit in
//! [`WIDTH`] columns and expanded one member per line otherwise, bare keys
//! where they are identifiers, explicit `ASC`/`DESC`, one blank line
//! between commands. `parse(format(x)) == x` and `format(format(x)) ==
//! format(x)` hold for every valid text.
//!
//! Comments are not part of the tree. [`format_source`] scans them from the
//! text and prints each one before the first line-level element (a command,
//! a WHERE item, a block, a `SET` member, a closing brace) that ends after
//! it; so a comment between clauses stays there, and one inside a value
//! moves to just above the clause holding that value. None is lost.

mod text;

use std::fmt::{self, Write as _};

use crate::ast::*;
use crate::error::Errors;
use text::{
    concept_matcher, count, expr, key_list, projection, proposition_matcher, term, text,
    update_object_text, value_inline, value_text,
};

/// The line width that decides whether a value stays on one line.
pub const WIDTH: usize = 100;

const INDENT: &str = "  ";

/// Formats `source` canonically, keeping its comments. Fails with the parse
/// errors of an invalid text.
pub fn format_source(source: &str) -> Result<String, Errors> {
    let commands = crate::parse(source)?;
    let comments = scan_comments(source);
    let mut printer = Printer::new(&comments);
    printer.source = source;
    printer.script(&commands);
    Ok(printer.out)
}

/// Formats commands without comments.
pub fn format_commands(commands: &[Command]) -> String {
    let mut printer = Printer::new(&[]);
    printer.script(commands);
    printer.out
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut printer = Printer::new(&[]);
        printer.command(self);
        f.write_str(printer.out.trim_end())
    }
}

/// A `//` comment of the source: its byte offset and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    pub offset: usize,
    pub text: String,
}

/// Finds every `//` comment outside string literals.
pub fn scan_comments(source: &str) -> Vec<Comment> {
    let bytes = source.as_bytes();
    let mut comments = Vec::new();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' | b'\n' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            let end = source[i..]
                .find(['\n', '\r'])
                .map_or(source.len(), |n| i + n);
            comments.push(Comment {
                offset: i,
                text: source[i..end].trim_end().to_owned(),
            });
            i = end;
            continue;
        }
        i += 1;
    }
    comments
}

struct Printer<'c> {
    out: String,
    depth: usize,
    comments: &'c [Comment],
    next_comment: usize,
    /// The source the comments come from (empty when there are none).
    source: &'c str,
    /// Where the element printed on the last line ends in the source: a
    /// comment on the same source line after it stays at the end of that line.
    last_end: Option<usize>,
}

impl<'c> Printer<'c> {
    fn new(comments: &'c [Comment]) -> Printer<'c> {
        Printer {
            out: String::new(),
            depth: 0,
            comments,
            next_comment: 0,
            source: "",
            last_end: None,
        }
    }

    /// Records that the line just printed shows the element ending at `end`.
    fn printed(&mut self, end: usize) {
        self.last_end = Some(end);
    }

    /// Prints, at the current indentation, the comments that start before `offset`.
    fn flush(&mut self, offset: usize) {
        while let Some(c) = self.comments.get(self.next_comment) {
            if c.offset >= offset {
                break;
            }
            self.next_comment += 1;
            let text = c.text.clone();
            let trailing = self.last_end.is_some_and(|end| {
                end <= c.offset
                    && self
                        .source
                        .get(end..c.offset)
                        .is_some_and(|gap| !gap.contains(['\n', '\r']))
            });
            if trailing && self.out.ends_with('\n') {
                self.out.pop();
                self.out.push(' ');
                self.out.push_str(&text);
                self.out.push('\n');
            } else {
                self.line(&text);
            }
            self.last_end = None;
        }
    }

    /// Prints the next comment if it sits on the line of the last printed
    /// element (and before `offset`).
    fn flush_trailing(&mut self, offset: usize) {
        let Some(c) = self.comments.get(self.next_comment) else {
            return;
        };
        let on_last_line = self.last_end.is_some_and(|end| {
            end <= c.offset
                && self
                    .source
                    .get(end..c.offset)
                    .is_some_and(|gap| !gap.contains(['\n', '\r']))
        });
        if c.offset < offset && on_last_line {
            self.flush(c.offset + 1);
        }
    }

    fn line(&mut self, text: &str) {
        self.last_end = None;
        for _ in 0..self.depth {
            self.out.push_str(INDENT);
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn width_left(&self) -> usize {
        WIDTH.saturating_sub(self.depth * INDENT.len())
    }

    fn script(&mut self, commands: &[Command]) {
        for (i, command) in commands.iter().enumerate() {
            if i > 0 {
                // A comment at the end of the previous command's last line
                // stays there, before the blank line between commands.
                self.flush_trailing(command.span().start);
                self.out.push('\n');
                // Nothing after the blank line can trail the previous command.
                self.last_end = None;
            }
            self.flush(command.span().start);
            self.command(command);
        }
        self.flush(usize::MAX);
    }

    fn command(&mut self, command: &Command) {
        match command {
            Command::Find(q) => self.find(q),
            Command::Upsert(u) => self.upsert(u),
            Command::Update(u) => self.update(u),
            Command::Merge(m) => {
                self.line(&format!(
                    "MERGE CONCEPT ?{} INTO ?{}",
                    m.source.name, m.target.name
                ));
                self.block("WHERE", &m.where_);
            }
            Command::Export(e) => {
                self.line(&format!("EXPORT ?{}", e.target.name));
                self.block("WHERE", &e.where_);
                self.limit_cursor(e.limit.as_ref(), e.cursor.as_ref());
            }
            Command::Delete(d) => self.delete(d),
            Command::Describe(d) => {
                self.flush(d.span.end);
                let mut s = String::from("DESCRIBE ");
                match &d.target {
                    DescribeTarget::Primer => s.push_str("PRIMER"),
                    DescribeTarget::Domains => s.push_str("DOMAINS"),
                    DescribeTarget::ConceptTypes => s.push_str("CONCEPT TYPES"),
                    DescribeTarget::PropositionTypes => s.push_str("PROPOSITION TYPES"),
                    DescribeTarget::ConceptType(name) => {
                        let _ = write!(s, "CONCEPT TYPE {}", text(name));
                    }
                    DescribeTarget::PropositionType(name) => {
                        let _ = write!(s, "PROPOSITION TYPE {}", text(name));
                    }
                }
                if let Some(limit) = &d.limit {
                    let _ = write!(s, " LIMIT {}", count(limit));
                }
                if let Some(cursor) = &d.cursor {
                    let _ = write!(s, " CURSOR {}", text(cursor));
                }
                self.line(&s);
                self.printed(d.span.end);
            }
            Command::Search(search) => {
                self.flush(search.span.end);
                let target = match search.target {
                    SearchTarget::Concept => "CONCEPT",
                    SearchTarget::Proposition => "PROPOSITION",
                };
                let mut s = format!("SEARCH {target} {}", text(&search.term));
                if let Some(t) = &search.with_type {
                    let _ = write!(s, " WITH TYPE {}", text(t));
                }
                if let Some(m) = &search.mode {
                    let _ = write!(s, " MODE {}", text(m));
                }
                if let Some(t) = &search.threshold {
                    let _ = write!(s, " THRESHOLD {}", value_inline(t));
                }
                if let Some(limit) = &search.limit {
                    let _ = write!(s, " LIMIT {}", count(limit));
                }
                self.line(&s);
                self.printed(search.span.end);
            }
        }
    }

    fn find(&mut self, q: &FindQuery) {
        if let Some(last) = q.find.last() {
            self.flush(last.span().end);
        }
        let items: Vec<String> = q.find.iter().map(projection).collect();
        let one_line = format!("FIND({})", items.join(", "));
        if one_line.len() <= self.width_left() {
            self.line(&one_line);
        } else {
            self.line("FIND(");
            self.depth += 1;
            let n = items.len();
            for (i, item) in items.iter().enumerate() {
                let sep = if i + 1 < n { "," } else { "" };
                self.line(&format!("{item}{sep}"));
            }
            self.depth -= 1;
            self.line(")");
        }
        self.block("WHERE", &q.where_);
        if !q.order_by.is_empty() {
            if let Some(last) = q.order_by.last() {
                self.flush(last.span.end);
            }
            let keys: Vec<String> = q
                .order_by
                .iter()
                .map(|k| {
                    let dir = if k.descending { "DESC" } else { "ASC" };
                    format!("{} {dir}", projection(&k.expr))
                })
                .collect();
            self.line(&format!("ORDER BY {}", keys.join(", ")));
        }
        self.limit_cursor(q.limit.as_ref(), q.cursor.as_ref());
    }

    /// `LIMIT n` and `CURSOR "…"` lines, each when present.
    fn limit_cursor(&mut self, limit: Option<&Arg<u64>>, cursor: Option<&Arg<String>>) {
        if let Some(limit) = limit {
            self.flush(limit.span().end);
            self.line(&format!("LIMIT {}", count(limit)));
            self.printed(limit.span().end);
        }
        if let Some(cursor) = cursor {
            self.flush(cursor.span().end);
            self.line(&format!("CURSOR {}", text(cursor)));
            self.printed(cursor.span().end);
        }
    }

    /// `UPDATE ?t`, its SETs (attributes first), the WHERE block, `LIMIT`.
    fn update(&mut self, u: &Update) {
        self.line(&format!("UPDATE ?{}", u.target.name));
        for (head, object) in [
            ("SET ATTRIBUTES ", &u.attributes),
            ("SET METADATA ", &u.metadata),
        ] {
            if let Some(o) = object {
                self.flush(o.span.end);
                let value = update_object_text(o, self.width_left().saturating_sub(head.len()));
                self.lines(&format!("{head}{value}"));
                self.printed(o.span.end);
            }
        }
        self.block("WHERE", &u.where_);
        self.limit_cursor(u.limit.as_ref(), None);
    }

    /// `<head> {`, the group's items, `}`.
    fn block(&mut self, head: &str, group: &Group) {
        self.flush(group.span.start);
        self.line(&format!("{head} {{"));
        self.depth += 1;
        for item in &group.items {
            self.pattern(item);
        }
        self.flush(group.span.end);
        self.depth -= 1;
        self.line("}");
        self.printed(group.span.end);
    }

    fn pattern(&mut self, item: &Pattern) {
        match item {
            Pattern::Concept(c) => {
                self.flush(c.span.end);
                let var = c
                    .var
                    .as_ref()
                    .map(|v| format!("?{} ", v.name))
                    .unwrap_or_default();
                self.line(&format!("{var}{}", concept_matcher(&c.matcher)));
                self.printed(c.span.end);
            }
            Pattern::Proposition(p) => {
                self.flush(p.span.end);
                let var = p
                    .var
                    .as_ref()
                    .map(|v| format!("?{} ", v.name))
                    .unwrap_or_default();
                self.line(&format!("{var}{}", proposition_matcher(&p.matcher)));
                self.printed(p.span.end);
            }
            Pattern::Filter(f) => {
                self.flush(f.span.end);
                self.line(&format!("FILTER({})", expr(&f.expr, 0)));
                self.printed(f.span.end);
            }
            Pattern::Not(g) => self.block("NOT", g),
            Pattern::Optional(g) => self.block("OPTIONAL", g),
            Pattern::Union(g) => self.block("UNION", g),
        }
    }

    fn upsert(&mut self, u: &Upsert) {
        self.line("UPSERT {");
        self.depth += 1;
        for item in &u.items {
            match item {
                UpsertItem::Concept(c) => self.concept_block(c),
                UpsertItem::Proposition(p) => self.proposition_block(p),
            }
        }
        self.flush(u.body.end);
        self.depth -= 1;
        self.line("}");
        self.printed(u.body.end);
        self.with_metadata(u.metadata.as_ref());
    }

    fn with_metadata(&mut self, metadata: Option<&Object>) {
        if let Some(m) = metadata {
            self.flush(m.span.end);
            let value = self.object_text(m, "WITH METADATA ".len());
            self.lines(&format!("WITH METADATA {value}"));
            self.printed(m.span.end);
        }
    }

    /// Prints possibly multi-line text at the current indentation.
    fn lines(&mut self, text: &str) {
        for line in text.lines() {
            self.line(line);
        }
    }

    fn concept_block(&mut self, c: &ConceptBlock) {
        self.flush(c.span.start);
        let handle = c
            .handle
            .as_ref()
            .map(|h| format!(" ?{}", h.name))
            .unwrap_or_default();
        self.line(&format!("CONCEPT{handle} {{"));
        self.depth += 1;
        self.line(&concept_matcher(&c.matcher));
        self.expect_version(c.expect_version.as_ref());
        if let Some(attrs) = &c.attributes {
            self.set_attributes(attrs);
        }
        if let Some(entries) = &c.propositions {
            self.line("SET PROPOSITIONS {");
            self.depth += 1;
            for entry in entries {
                self.flush(entry.span.end);
                let mut s = format!("({}, {})", text(&entry.predicate), term(&entry.target));
                if let Some(m) = &entry.metadata {
                    let value = self.object_text(m, s.len() + " WITH METADATA ".len());
                    let _ = write!(s, " WITH METADATA {value}");
                }
                self.lines(&s);
                self.printed(entry.span.end);
            }
            self.depth -= 1;
            self.line("}");
        }
        self.flush(c.body.end);
        self.depth -= 1;
        self.line("}");
        self.printed(c.body.end);
        self.with_metadata(c.metadata.as_ref());
    }

    fn proposition_block(&mut self, p: &PropositionBlock) {
        self.flush(p.span.start);
        let handle = p
            .handle
            .as_ref()
            .map(|h| format!(" ?{}", h.name))
            .unwrap_or_default();
        self.line(&format!("PROPOSITION{handle} {{"));
        self.depth += 1;
        self.line(&proposition_matcher(&p.matcher));
        self.expect_version(p.expect_version.as_ref());
        if let Some(attrs) = &p.attributes {
            self.set_attributes(attrs);
        }
        self.flush(p.body.end);
        self.depth -= 1;
        self.line("}");
        self.printed(p.body.end);
        self.with_metadata(p.metadata.as_ref());
    }

    fn expect_version(&mut self, version: Option<&Arg<u64>>) {
        if let Some(v) = version {
            self.flush(v.span().end);
            self.line(&format!("EXPECT VERSION {}", count(v)));
            self.printed(v.span().end);
        }
    }

    fn set_attributes(&mut self, attrs: &Object) {
        self.flush(attrs.span.end);
        let value = self.object_text(attrs, "SET ATTRIBUTES ".len());
        self.lines(&format!("SET ATTRIBUTES {value}"));
        self.printed(attrs.span.end);
    }

    /// An object as text: one line if it fits after `prefix` columns, else
    /// expanded (lines after the first are relative to the current indentation).
    fn object_text(&self, object: &Object, prefix: usize) -> String {
        value_text(
            &Value::Object(object.clone()),
            self.width_left().saturating_sub(prefix),
            0,
        )
    }

    fn delete(&mut self, d: &Delete) {
        let head = match &d.target {
            DeleteTarget::Attributes(keys) => {
                format!("DELETE ATTRIBUTES {} FROM ?{}", key_list(keys), d.var.name)
            }
            DeleteTarget::Metadata(keys) => {
                format!("DELETE METADATA {} FROM ?{}", key_list(keys), d.var.name)
            }
            DeleteTarget::Propositions => format!("DELETE PROPOSITIONS ?{}", d.var.name),
            DeleteTarget::Concept => format!("DELETE CONCEPT ?{} DETACH", d.var.name),
        };
        self.line(&head);
        self.block("WHERE", &d.where_);
    }
}

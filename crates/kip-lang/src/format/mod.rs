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

use std::fmt::{self, Write as _};

use crate::ast::*;
use crate::error::Errors;
use crate::parser::is_identifier;

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

fn key_list(keys: &[Arg<String>]) -> String {
    let keys: Vec<String> = keys.iter().map(text).collect();
    format!("{{{}}}", keys.join(", "))
}

fn string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

fn text(arg: &Arg<String>) -> String {
    match arg {
        Arg::Lit(s, _) => string(s),
        Arg::Param(p) => format!(":{}", p.name),
    }
}

fn count(arg: &Arg<u64>) -> String {
    match arg {
        Arg::Lit(n, _) => n.to_string(),
        Arg::Param(p) => format!(":{}", p.name),
    }
}

fn key(k: &str) -> String {
    if is_identifier(k) {
        k.to_owned()
    } else {
        string(k)
    }
}

fn concept_matcher(m: &ConceptMatcher) -> String {
    match m {
        ConceptMatcher::Id(id) => format!("{{id: {}}}", text(id)),
        ConceptMatcher::TypeName { ty, name } => {
            format!("{{type: {}, name: {}}}", text(ty), text(name))
        }
        ConceptMatcher::Type(ty) => format!("{{type: {}}}", text(ty)),
        ConceptMatcher::Name(name) => format!("{{name: {}}}", text(name)),
    }
}

fn proposition_matcher(m: &PropositionMatcher) -> String {
    match m {
        PropositionMatcher::Id(id) => format!("(id: {})", text(id)),
        PropositionMatcher::Triple(t) => format!(
            "({}, {}, {})",
            term(&t.subject),
            predicate(&t.predicate),
            term(&t.object)
        ),
    }
}

fn term(t: &Term) -> String {
    match t {
        Term::Var(v) => format!("?{}", v.name),
        Term::Concept(m, _) => concept_matcher(m),
        Term::Proposition(m, _) => proposition_matcher(m),
    }
}

fn predicate(p: &PredicateExpr) -> String {
    match p {
        PredicateExpr::Var(v) => format!("?{}", v.name),
        PredicateExpr::Names { names, hops, .. } => {
            let names: Vec<String> = names.iter().map(text).collect();
            let mut s = names.join(" | ");
            if let Some(h) = hops {
                match h.max {
                    Some(max) if max == h.min => {
                        let _ = write!(s, "{{{}}}", h.min);
                    }
                    Some(max) => {
                        let _ = write!(s, "{{{},{max}}}", h.min);
                    }
                    None => {
                        let _ = write!(s, "{{{},}}", h.min);
                    }
                }
            }
            s
        }
    }
}

fn dot_path(p: &DotPath) -> String {
    let mut s = format!("?{}", p.var.name);
    let (head, rest): (&str, &[String]) = match &p.field {
        Field::Whole => return s,
        Field::Id => ("id", &[]),
        Field::Type => ("type", &[]),
        Field::Name => ("name", &[]),
        Field::Subject => ("subject", &[]),
        Field::Predicate => ("predicate", &[]),
        Field::Object => ("object", &[]),
        Field::Attributes(path) => ("attributes", path),
        Field::Metadata(path) => ("metadata", path),
    };
    s.push('.');
    s.push_str(head);
    for segment in rest {
        s.push('.');
        s.push_str(segment);
    }
    s
}

fn projection(p: &Projection) -> String {
    match p {
        Projection::Path(path) => dot_path(path),
        Projection::Aggregate(a) => format!(
            "{}({}{})",
            a.func.keyword(),
            if a.distinct { "DISTINCT " } else { "" },
            dot_path(&a.arg)
        ),
    }
}

/// Binding strength of an expression: 1 `||`, 2 `&&`, 3 `!`, 4 comparison, 5 operand.
fn precedence(e: &Expr) -> u8 {
    match e {
        Expr::Or(..) => 1,
        Expr::And(..) => 2,
        Expr::Not(_) => 3,
        Expr::Compare(..) => 4,
        Expr::Call(_) | Expr::Path(_) | Expr::Value(..) => 5,
    }
}

/// Prints `e`, in parentheses if it binds less tightly than `min`.
fn expr(e: &Expr, min: u8) -> String {
    let s = match e {
        // `||` and `&&` fold to the left, so a right operand of the same
        // strength needs parentheses to keep its shape.
        Expr::Or(l, r) => format!("{} || {}", expr(l, 1), expr(r, 2)),
        Expr::And(l, r) => format!("{} && {}", expr(l, 2), expr(r, 3)),
        Expr::Not(inner) => format!("!{}", expr(inner, 3)),
        Expr::Compare(op, l, r) => format!("{} {} {}", expr(l, 5), op.symbol(), expr(r, 5)),
        Expr::Call(c) => {
            let args: Vec<String> = c.args.iter().map(|a| expr(a, 0)).collect();
            format!("{}({})", c.func.keyword(), args.join(", "))
        }
        Expr::Path(p) => dot_path(p),
        Expr::Value(v, _) => value_text(v, usize::MAX, 0),
    };
    if precedence(e) < min {
        format!("({s})")
    } else {
        s
    }
}

/// A value: on one line if it fits in `width`, else expanded, with nested
/// lines indented `depth + 1` levels relative to the first line's indentation.
fn value_text(v: &Value, width: usize, depth: usize) -> String {
    let inline = value_inline(v);
    if inline.len() <= width {
        return inline;
    }
    let pad = INDENT.repeat(depth + 1);
    let close = INDENT.repeat(depth);
    let inner_width = width.saturating_sub(INDENT.len());
    match v {
        Value::Object(obj) if !obj.members.is_empty() => {
            let mut s = String::from("{\n");
            let n = obj.members.len();
            for (i, (k, val)) in obj.members.iter().enumerate() {
                let k = key(k);
                let val = value_text(val, inner_width.saturating_sub(k.len() + 3), depth + 1);
                let sep = if i + 1 < n { "," } else { "" };
                let _ = writeln!(s, "{pad}{k}: {val}{sep}");
            }
            s.push_str(&close);
            s.push('}');
            s
        }
        Value::Array(items) if !items.is_empty() => {
            let mut s = String::from("[\n");
            let n = items.len();
            for (i, val) in items.iter().enumerate() {
                let val = value_text(val, inner_width.saturating_sub(1), depth + 1);
                let sep = if i + 1 < n { "," } else { "" };
                let _ = writeln!(s, "{pad}{val}{sep}");
            }
            s.push_str(&close);
            s.push(']');
            s
        }
        _ => inline,
    }
}

/// The object of an UPDATE's SET: on one line if it fits in `width`, else
/// one member per line (plain values expanded as [`value_text`] does).
fn update_object_text(object: &UpdateObject, width: usize) -> String {
    let members: Vec<String> = object
        .members
        .iter()
        .map(|(k, v)| format!("{}: {}", key(k), update_value_inline(v)))
        .collect();
    let inline = if members.is_empty() {
        "{}".to_owned()
    } else {
        format!("{{{}}}", members.join(", "))
    };
    if inline.len() <= width || object.members.is_empty() {
        return inline;
    }
    let inner_width = width.saturating_sub(INDENT.len());
    let mut s = String::from("{\n");
    let n = object.members.len();
    for (i, (k, v)) in object.members.iter().enumerate() {
        let k = key(k);
        let v = match v {
            UpdateValue::Value(value, _) => {
                value_text(value, inner_width.saturating_sub(k.len() + 3), 1)
            }
            other => update_value_inline(other),
        };
        let sep = if i + 1 < n { "," } else { "" };
        let _ = writeln!(s, "{INDENT}{k}: {v}{sep}");
    }
    s.push('}');
    s
}

fn update_value_inline(v: &UpdateValue) -> String {
    match v {
        UpdateValue::Value(value, _) => value_inline(value),
        UpdateValue::Path(p) => dot_path(p),
        UpdateValue::Call(c) => {
            let args: Vec<String> = c.args.iter().map(update_value_inline).collect();
            format!("{}({})", c.func.keyword(), args.join(", "))
        }
    }
}

fn value_inline(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(value_inline).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(obj) => {
            if obj.members.is_empty() {
                return "{}".into();
            }
            let members: Vec<String> = obj
                .members
                .iter()
                .map(|(k, v)| format!("{}: {}", key(k), value_inline(v)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        Value::Param(p) => format!(":{}", p.name),
    }
}

//! From text to the AST: the only module that sees `pest::Pair`.
//!
//! Parsing runs in two steps. pest matches the grammar (`grammar.pest`); a
//! failure there becomes one positioned `KIP_1001` that names what was
//! expected and what was found, with "did you mean" for misspelt keywords.
//! Then [`Lower`] turns the pairs into the public AST, checking what the
//! grammar deliberately leaves loose (the shape of concept patterns, known
//! function names, identifier syntax, hop ranges) and *collecting* every
//! problem rather than stopping at the first one.

mod expr;
mod kml;
mod meta;
mod query;
mod syntax;
mod values;

use pest::Parser as _;
use pest::iterators::Pair;

use crate::ast::*;
use crate::error::{ErrorCode, Errors, KipError};
use crate::lexeme::{is_identifier, is_type_name};
use syntax::syntax_error;

#[derive(pest_derive::Parser)]
#[grammar = "grammar.pest"]
struct KipParser;

/// Parses a text holding any number of KIP commands. A grammar failure is
/// fatal (`Err`); problems found while lowering come back beside a tree in
/// which each faulty node is replaced by a harmless stand-in, so that the
/// checks of [`crate::validate`] can still run and report theirs too.
///
/// The common KML shapes take the hand-written fast path ([`crate::fast`]);
/// anything else, and every text it gives up on, goes through pest.
pub(crate) fn parse_script(source: &str) -> Result<(Vec<Command>, Vec<KipError>), Errors> {
    if let Some(commands) = crate::fast::parse_script(source) {
        return Ok((commands, Vec::new()));
    }
    parse_script_pest(source)
}

/// [`parse_script`] through pest alone: the reference the fast path is
/// tested against.
pub(crate) fn parse_script_pest(source: &str) -> Result<(Vec<Command>, Vec<KipError>), Errors> {
    // pest recurses once per bracket: bound the depth before it starts.
    crate::nesting::check_text(source).map_err(|e| Errors(vec![e]))?;
    let pairs = KipParser::parse(Rule::script, source)
        .map_err(|e| Errors(vec![syntax_error(source, &e)]))?;
    let mut lower = Lower::new(source);
    let mut commands = Vec::new();
    for pair in pairs.flat_map(children) {
        if pair.as_rule() != Rule::EOI {
            commands.push(lower.command(pair));
        }
    }
    Ok((commands, lower.errors))
}

/// Parses the body of a WHERE block (used to test clause fragments).
pub(crate) fn parse_where_items(source: &str) -> Result<Group, Errors> {
    crate::nesting::check_text(source).map_err(|e| Errors(vec![e]))?;
    let pairs = KipParser::parse(Rule::where_items, source)
        .map_err(|e| Errors(vec![syntax_error(source, &e)]))?;
    let mut lower = Lower::new(source);
    let mut items = Vec::new();
    for pair in pairs.flat_map(children) {
        if pair.as_rule() != Rule::EOI {
            items.push(lower.pattern(pair));
        }
    }
    let group = Group {
        items,
        span: Span::new(0, source.len()),
    };
    lower.finish(group)
}

// ---------------------------------------------------------------- lowering

/// Whether a rule is punctuation, named only so that errors can name it.
fn is_punctuation(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::open_paren
            | Rule::close_paren
            | Rule::comma
            | Rule::close_bracket
            | Rule::close_brace
    )
}

/// The children of a pair that carry meaning (punctuation left out).
fn children(pair: Pair<'_, Rule>) -> impl Iterator<Item = Pair<'_, Rule>> {
    pair.into_inner().filter(|p| !is_punctuation(p.as_rule()))
}

/// The span of a pair, without the whitespace and comments that pest's
/// implicit skipping lets a rule ending in an optional part swallow.
fn span_of(pair: &Pair<'_, Rule>) -> Span {
    let s = pair.as_span();
    Span::new(s.start(), trim_trivia(s.get_input(), s.start(), s.end()))
}

fn trim_trivia(source: &str, start: usize, mut end: usize) -> usize {
    loop {
        end = start
            + source[start..end]
                .trim_end_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
                .len();
        // A comment inside the span starts with a `/` inside it: without
        // one, there is nothing more to trim (the common case, checked
        // without scanning back to the start of the line).
        if !source.as_bytes()[start..end].contains(&b'/') {
            return end;
        }
        // Strings never span lines, so a line always starts outside one.
        let line_start = source[..end].rfind(['\n', '\r']).map_or(0, |i| i + 1);
        match comment_start(&source[line_start..end]) {
            Some(c) if line_start + c >= start => end = line_start + c,
            _ => return end,
        }
    }
}

/// Where a `//` comment starts in one line of source, if it has one.
fn comment_start(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The operand that an expression level holds alone: `(x)`, an `||` or
/// `&&` level with one operand, a comparison without an operator, an operand
/// without `!`. Such levels add nothing to the tree, so lowering steps
/// through them in a loop rather than recursing: redundant parentheses
/// cost no stack.
fn skip_single_operands(mut pair: Pair<'_, Rule>) -> Pair<'_, Rule> {
    while matches!(
        pair.as_rule(),
        Rule::expr | Rule::and_expr | Rule::unary_expr | Rule::comparison
    ) {
        let mut inner = children(pair.clone());
        match (inner.next(), inner.next()) {
            (Some(only), None) if only.as_rule() != Rule::not_op => pair = only,
            _ => break,
        }
    }
    pair
}
/// Where a concept pattern appears; it decides which forms are allowed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PatternPlace {
    /// A KQL clause or inline term: all four forms.
    Query,
    /// A KML block or target: `{type, name}` or `{id}` only.
    Write,
}

struct Lower<'s> {
    source: &'s str,
    errors: Vec<KipError>,
    /// Set while lowering the arguments of an aggregate, where another
    /// aggregate is a nesting error rather than an aggregate in FILTER.
    in_aggregate: bool,
}

impl<'s> Lower<'s> {
    fn new(source: &'s str) -> Lower<'s> {
        Lower {
            source,
            errors: Vec::new(),
            in_aggregate: false,
        }
    }

    fn finish<T>(mut self, value: T) -> Result<T, Errors> {
        if self.errors.is_empty() {
            Ok(value)
        } else {
            self.errors.sort_by_key(|e| e.offset().unwrap_or(0));
            Err(Errors(self.errors))
        }
    }

    fn error(&mut self, code: ErrorCode, span: Span, message: String, hint: Option<String>) {
        let mut error = KipError::new(code, message).at(self.source, span);
        if let Some(hint) = hint {
            error = error.with_hint(hint);
        }
        self.errors.push(error);
    }

    fn check_identifier(&mut self, what: &str, name: &str, span: Span, allow_dollar: bool) {
        let ok = if allow_dollar {
            is_type_name(name)
        } else {
            is_identifier(name)
        };
        if !ok {
            self.error(
                ErrorCode::InvalidIdentifier,
                span,
                format!("`{name}` is not a valid {what}"),
                Some(format!(
                    "A {what} must start with a letter or underscore and continue with letters, digits or underscores ([a-zA-Z_][a-zA-Z0-9_]*){}.",
                    if allow_dollar { "; meta-types may start with `$`" } else { "" }
                )),
            );
        }
    }
}

fn empty_text() -> Arg<String> {
    Arg::Lit(String::new(), Span::default())
}

fn empty_matcher() -> ConceptMatcher {
    ConceptMatcher::Name(empty_text())
}

fn placeholder_path(span: Span) -> DotPath {
    DotPath {
        var: Var {
            name: String::new(),
            span,
        },
        field: Field::Whole,
        span,
    }
}

pub(crate) fn expr_span(expr: &Expr) -> Span {
    match expr {
        Expr::Or(l, r) | Expr::And(l, r) | Expr::Compare(_, l, r) => {
            Span::new(expr_span(l).start, expr_span(r).end)
        }
        Expr::Not(e) => expr_span(e),
        Expr::Call(c) => c.span,
        Expr::Path(p) => p.span,
        Expr::Value(_, span) => *span,
    }
}

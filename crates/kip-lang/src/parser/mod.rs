//! From text to the AST: the only module that sees `pest::Pair`.
//!
//! Parsing runs in two steps. pest matches the grammar (`grammar.pest`); a
//! failure there becomes one positioned `KIP_1001` that names what was
//! expected and what was found, with "did you mean" for misspelt keywords.
//! Then [`Lower`] turns the pairs into the public AST, checking what the
//! grammar deliberately leaves loose (the shape of concept patterns, known
//! function names, identifier syntax, hop ranges) and *collecting* every
//! problem rather than stopping at the first one.

use pest::Parser as _;
use pest::error::{ErrorVariant, InputLocation};
use pest::iterators::Pair;

use crate::ast::*;
use crate::error::{ErrorCode, Errors, KipError};
use crate::nesting::MAX_DEPTH;
use crate::suggest;

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

// ---------------------------------------------------------------- syntax errors

/// The phrase an error message uses for a grammar rule. Exhaustive on
/// purpose: a new rule cannot be added without saying how errors name it.
/// (Long because the grammar has that many rules: one line each is the
/// point, so it stays one table rather than being split.)
fn rule_phrase(rule: Rule) -> &'static str {
    match rule {
        Rule::EOI => "end of input",
        Rule::WHITESPACE | Rule::COMMENT => "whitespace",
        Rule::script | Rule::command => {
            "a command (FIND, UPSERT, UPDATE, MERGE, DELETE, DESCRIBE, SEARCH or EXPORT)"
        }
        Rule::where_items | Rule::where_item => "a pattern clause",
        Rule::ident_char => "a letter, digit or underscore",
        Rule::kw_find => "`FIND`",
        Rule::kw_where => "`WHERE`",
        Rule::kw_filter => "`FILTER`",
        Rule::kw_not => "`NOT`",
        Rule::kw_optional => "`OPTIONAL`",
        Rule::kw_union => "`UNION`",
        Rule::kw_order => "`ORDER BY`",
        Rule::kw_by => "`BY`",
        Rule::kw_asc => "`ASC`",
        Rule::kw_desc => "`DESC`",
        Rule::kw_limit => "`LIMIT`",
        Rule::kw_cursor => "`CURSOR`",
        Rule::kw_distinct => "`DISTINCT`",
        Rule::kw_upsert => "`UPSERT`",
        Rule::kw_concept => "`CONCEPT`",
        Rule::kw_proposition => "`PROPOSITION`",
        Rule::kw_set => "`SET`",
        Rule::kw_attributes => "`ATTRIBUTES`",
        Rule::kw_propositions => "`PROPOSITIONS`",
        Rule::kw_with => "`WITH`",
        Rule::kw_metadata => "`METADATA`",
        Rule::kw_delete => "`DELETE`",
        Rule::kw_from => "`FROM`",
        Rule::kw_detach => "`DETACH`",
        Rule::kw_describe => "`DESCRIBE`",
        Rule::kw_primer => "`PRIMER`",
        Rule::kw_domains => "`DOMAINS`",
        Rule::kw_types => "`TYPES`",
        Rule::kw_type => "`TYPE`",
        Rule::kw_search => "`SEARCH`",
        Rule::kw_update => "`UPDATE`",
        Rule::kw_merge => "`MERGE`",
        Rule::kw_into => "`INTO`",
        Rule::kw_expect => "`EXPECT`",
        Rule::kw_version => "`VERSION`",
        Rule::kw_mode => "`MODE`",
        Rule::kw_threshold => "`THRESHOLD`",
        Rule::kw_export => "`EXPORT`",
        Rule::ident => "an identifier",
        Rule::variable => "a variable (`?name`)",
        Rule::param => "a placeholder (`:name`)",
        Rule::string => "a string",
        Rule::string_inner | Rule::escape => "a string character",
        Rule::number => "a number",
        Rule::uint => "a non-negative integer",
        Rule::lit_true | Rule::lit_false => "a boolean",
        Rule::lit_null => "`null`",
        Rule::func_name => "a function name",
        Rule::value => "a value",
        Rule::object => "an object `{…}`",
        Rule::pair => "a `key: value` pair",
        Rule::key => "a key",
        Rule::array => "an array `[…]`",
        Rule::text => "a string",
        Rule::count => "a number",
        Rule::find_query => "a FIND query",
        Rule::find_clause => "`FIND(…)`",
        Rule::find_expr => "a variable or an aggregate",
        Rule::dot_path => "a variable (`?name`)",
        Rule::path_segment => "a field name",
        Rule::call => "a function call",
        Rule::where_clause => "`WHERE {…}`",
        Rule::group => "`{`",
        Rule::close_brace => "`}`",
        Rule::open_paren => "`(`",
        Rule::close_paren => "`)`",
        Rule::comma => "`,`",
        Rule::close_bracket => "`]`",
        Rule::concept_clause => "a concept clause",
        Rule::concept_pattern => "a concept pattern `{…}`",
        Rule::pattern_field => "a field such as `type: \"…\"`",
        Rule::proposition_clause => "a proposition clause",
        Rule::proposition_pattern => "a proposition pattern `(…)`",
        Rule::id_pattern => "`id: \"…\"`",
        Rule::triple => "`subject, \"predicate\", object`",
        Rule::term => "a subject or object (a variable, `{…}` or `(…)`)",
        Rule::predicate => "a predicate (a string or a variable)",
        Rule::predicate_names => "a predicate string",
        Rule::hops => "a hop range `{m,n}`",
        Rule::hop_comma => "`,`",
        Rule::filter_clause => "`FILTER(…)`",
        Rule::not_clause => "`NOT {…}`",
        Rule::optional_clause => "`OPTIONAL {…}`",
        Rule::union_clause => "`UNION {…}`",
        Rule::expr | Rule::and_expr | Rule::unary_expr | Rule::comparison | Rule::operand => {
            "an expression"
        }
        Rule::or_op => "`||`",
        Rule::and_op => "`&&`",
        Rule::not_op => "`!`",
        Rule::cmp_op => "a comparison operator",
        Rule::order_by => "`ORDER BY`",
        Rule::order_key => "a sort key",
        Rule::limit_clause => "`LIMIT`",
        Rule::cursor_clause => "`CURSOR`",
        Rule::upsert => "`UPSERT {…}`",
        Rule::upsert_item => "`CONCEPT` or `PROPOSITION`",
        Rule::upsert_body => "`{` with CONCEPT and PROPOSITION blocks",
        Rule::concept_body => "`{` with a concept pattern",
        Rule::proposition_body => "`{` with a proposition pattern",
        Rule::concept_block => "`CONCEPT`",
        Rule::proposition_block => "`PROPOSITION`",
        Rule::set_attributes => "`SET ATTRIBUTES`",
        Rule::set_propositions => "`SET PROPOSITIONS`",
        Rule::set_proposition => "`(\"predicate\", target)`",
        Rule::with_metadata => "`WITH METADATA`",
        Rule::delete_attributes
        | Rule::delete_metadata
        | Rule::delete_propositions
        | Rule::delete_concept => "`DELETE`",
        Rule::key_list => "a key list `{\"key\", …}`",
        Rule::describe => "`DESCRIBE`",
        Rule::describe_target => {
            "PRIMER, DOMAINS, CONCEPT TYPES, CONCEPT TYPE, PROPOSITION TYPES or PROPOSITION TYPE"
        }
        Rule::concept_types => "`CONCEPT TYPES`",
        Rule::concept_type => "`CONCEPT TYPE \"…\"`",
        Rule::proposition_types => "`PROPOSITION TYPES`",
        Rule::proposition_type => "`PROPOSITION TYPE \"…\"`",
        Rule::search => "`SEARCH`",
        Rule::search_type => "`WITH TYPE`",
        Rule::search_mode => "`MODE`",
        Rule::search_threshold => "`THRESHOLD`",
        Rule::expect_version => "`EXPECT VERSION`",
        Rule::update => "`UPDATE`",
        Rule::update_set => "`SET ATTRIBUTES` or `SET METADATA`",
        Rule::update_object => "an object `{…}`",
        Rule::update_pair => "a `key: value` pair",
        Rule::update_value | Rule::update_operand => "a value or an update expression",
        Rule::update_call => "an update expression (ADD, MUL, CLAMP or COALESCE)",
        Rule::merge => "`MERGE`",
        Rule::export => "`EXPORT`",
    }
}

/// The spelling of a keyword rule, for "did you mean".
fn keyword_text(rule: Rule) -> Option<&'static str> {
    let phrase = rule_phrase(rule);
    let word = phrase.strip_prefix('`')?.strip_suffix('`')?;
    let is_keyword = word.chars().all(|c| c.is_ascii_uppercase() || c == ' ');
    is_keyword.then(|| word.split(' ').next().unwrap_or(word))
}

/// Every keyword of the language, for suggestions when the expected set
/// holds none.
const KEYWORDS: &[&str] = &[
    "FIND",
    "WHERE",
    "FILTER",
    "NOT",
    "OPTIONAL",
    "UNION",
    "ORDER",
    "BY",
    "ASC",
    "DESC",
    "LIMIT",
    "CURSOR",
    "DISTINCT",
    "UPSERT",
    "CONCEPT",
    "PROPOSITION",
    "SET",
    "ATTRIBUTES",
    "PROPOSITIONS",
    "WITH",
    "METADATA",
    "DELETE",
    "FROM",
    "DETACH",
    "DESCRIBE",
    "PRIMER",
    "DOMAINS",
    "TYPES",
    "TYPE",
    "SEARCH",
    "UPDATE",
    "MERGE",
    "INTO",
    "EXPECT",
    "VERSION",
    "MODE",
    "THRESHOLD",
    "EXPORT",
];

/// What the text holds at `offset`, as an error message names it.
fn found_at(source: &str, offset: usize) -> (String, Span) {
    let rest = &source[offset..];
    let Some(first) = rest.chars().next() else {
        return ("end of input".into(), Span::new(offset, offset));
    };
    let word_len = rest
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .map_or(rest.len(), |(i, _)| i);
    if word_len > 0 {
        let word = &rest[..word_len];
        return (format!("`{word}`"), Span::new(offset, offset + word_len));
    }
    let len = first.len_utf8();
    let what = match first {
        '"' => "a string".to_owned(),
        '\'' => "`'` (KIP strings use double quotes)".to_owned(),
        c => format!("`{c}`"),
    };
    (what, Span::new(offset, offset + len))
}

/// What is wrong with a string literal that starts at `offset` and did
/// not match the grammar: (message, where, hint). `None` if it is fine.
fn bad_string(source: &str, offset: usize) -> Option<(String, Span, String)> {
    let unterminated = || {
        (
            "unterminated string: a string must be closed on the line where it starts".to_owned(),
            Span::new(offset, offset + 1),
            "Close the string with `\"`, or write a line break inside it as \\n.".to_owned(),
        )
    };
    let body = offset + 1;
    let mut chars = source.get(body..)?.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return None,
            '\n' | '\r' => return Some(unterminated()),
            '\\' => match bad_escape(source, body, body + i, &mut chars) {
                Escape::Valid => {}
                Escape::Invalid(problem) => return Some(problem),
                Escape::Unterminated => return Some(unterminated()),
            },
            _ => {}
        }
    }
    Some(unterminated())
}

/// What follows a backslash in a string literal.
enum Escape {
    Valid,
    Invalid((String, Span, String)),
    Unterminated,
}

/// Reads the escape after the backslash at `start` (`chars` yields offsets
/// relative to `body`, the first byte after the opening quote).
fn bad_escape(
    source: &str,
    body: usize,
    start: usize,
    chars: &mut std::str::CharIndices<'_>,
) -> Escape {
    let bad = |end: usize| {
        let written = &source[start..end];
        Escape::Invalid((
            format!("invalid escape `{written}` in a string"),
            Span::new(start, end),
            "Valid escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX (four hex digits); write a backslash itself as \\\\.".to_owned(),
        ))
    };
    match chars.next() {
        Some((_, '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't')) => Escape::Valid,
        Some((j, 'u')) => {
            let mut end = body + j + 1;
            for _ in 0..4 {
                match chars.next() {
                    Some((k, h)) if h.is_ascii_hexdigit() => end = body + k + 1,
                    Some((k, h)) if h != '"' && h != '\n' => return bad(body + k + h.len_utf8()),
                    _ => return bad(end),
                }
            }
            Escape::Valid
        }
        Some((j, other)) => bad(body + j + other.len_utf8()),
        None => Escape::Unterminated,
    }
}

fn syntax_error(source: &str, err: &pest::error::Error<Rule>) -> KipError {
    let offset = match err.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    };
    if source[offset..].starts_with('"')
        && let Some((message, span, hint)) = bad_string(source, offset)
    {
        return KipError::new(ErrorCode::InvalidSyntax, message)
            .with_hint(hint)
            .at(source, span);
    }
    let (found, span) = found_at(source, offset);
    let mut expected: Vec<Rule> = match &err.variant {
        ErrorVariant::ParsingError { positives, .. } => positives.clone(),
        ErrorVariant::CustomError { .. } => Vec::new(),
    };
    expected.retain(|r| !matches!(r, Rule::WHITESPACE | Rule::COMMENT));
    let mut phrases: Vec<&str> = Vec::new();
    for rule in &expected {
        let phrase = rule_phrase(*rule);
        if !phrases.contains(&phrase) {
            phrases.push(phrase);
        }
    }
    let expected_text = match phrases.as_slice() {
        [] => "something else".to_owned(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    };
    let mut error = KipError::new(
        ErrorCode::InvalidSyntax,
        format!("expected {expected_text}, found {found}"),
    );

    // "Did you mean": compare the word found with the keywords expected here,
    // then with every keyword.
    let word = &source[span.start..span.end];
    let is_word = word.chars().next().is_some_and(char::is_alphabetic);
    let expected_keywords: Vec<&str> = expected.iter().filter_map(|r| keyword_text(*r)).collect();
    let mut suggestions = Vec::new();
    if is_word {
        suggestions = suggest::similar(word, expected_keywords.iter().copied());
        if suggestions.is_empty() && !KEYWORDS.contains(&word) {
            suggestions = suggest::similar(word, KEYWORDS.iter().copied());
        }
    }
    let hint = if let Some(best) = suggestions.first() {
        if best.eq_ignore_ascii_case(word) {
            format!("KIP keywords are upper case: write `{best}` instead of `{word}`.")
        } else {
            format!("Did you mean `{best}`?")
        }
    } else if word.starts_with('\'') {
        "Write strings in double quotes, e.g. \"Aspirin\".".to_owned()
    } else if expected.contains(&Rule::EOI) && !expected_keywords.is_empty() {
        format!(
            "A command ends here; the only things that may follow are {expected_text}. Remove or fix the text from here on."
        )
    } else {
        format!(
            "Insert {expected_text} here, or fix the text before it. {}",
            ErrorCode::InvalidSyntax.default_hint()
        )
    };
    error = error
        .with_hint(hint)
        .at(source, span)
        .with_data("expected", phrases);
    error.with_suggestions(&suggestions)
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

/// Whether `s` matches `[a-zA-Z_][a-zA-Z0-9_]*`.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `s` is a valid concept type name: an identifier, optionally with
/// the `$` prefix of meta-types.
pub fn is_type_name(s: &str) -> bool {
    is_identifier(s.strip_prefix('$').unwrap_or(s))
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

    // ------------------------------------------------------------ commands

    fn command(&mut self, pair: Pair<'_, Rule>) -> Command {
        match pair.as_rule() {
            Rule::find_query => Command::Find(self.find_query(pair)),
            Rule::upsert => Command::Upsert(self.upsert(pair)),
            Rule::delete_attributes
            | Rule::delete_metadata
            | Rule::delete_propositions
            | Rule::delete_concept => Command::Delete(self.delete(pair)),
            Rule::describe => Command::Describe(self.describe(pair)),
            Rule::search => Command::Search(self.search(pair)),
            Rule::update => Command::Update(self.update(pair)),
            Rule::merge => Command::Merge(self.merge(pair)),
            Rule::export => Command::Export(self.export(pair)),
            other => unreachable!("grammar: unexpected command rule {other:?}"),
        }
    }

    fn find_query(&mut self, pair: Pair<'_, Rule>) -> FindQuery {
        let span = span_of(&pair);
        let mut query = FindQuery {
            find: Vec::new(),
            where_: Group::default(),
            order_by: Vec::new(),
            limit: None,
            cursor: None,
            span,
        };
        for part in children(pair) {
            match part.as_rule() {
                Rule::find_clause => {
                    for expr in children(part).filter(|p| p.as_rule() != Rule::kw_find) {
                        query.find.push(self.projection(expr));
                    }
                }
                Rule::where_clause => query.where_ = self.where_clause(part),
                Rule::order_by => {
                    for key in children(part).filter(|p| p.as_rule() == Rule::order_key) {
                        query.order_by.push(self.order_key(key));
                    }
                }
                Rule::limit_clause => query.limit = Some(self.limit(part)),
                Rule::cursor_clause => query.cursor = Some(self.cursor(part)),
                other => unreachable!("grammar: unexpected {other:?} in find_query"),
            }
        }
        query
    }

    fn where_clause(&mut self, pair: Pair<'_, Rule>) -> Group {
        let group = pair
            .into_inner()
            .find(|p| p.as_rule() == Rule::group)
            .map(|g| self.group(g));
        group.unwrap_or_default()
    }

    // Blocks nest through `group`, `pattern` and `inner_group`: plain loops
    // rather than iterator adapters, whose closures would add frames to
    // every level of recursion in a debug build.
    fn group(&mut self, pair: Pair<'_, Rule>) -> Group {
        let span = span_of(&pair);
        let mut items = Vec::new();
        for p in pair.into_inner() {
            if p.as_rule() != Rule::close_brace {
                items.push(self.pattern(p));
            }
        }
        Group { items, span }
    }

    fn inner_group(&mut self, pair: Pair<'_, Rule>) -> Group {
        for p in children(pair) {
            if p.as_rule() == Rule::group {
                return self.group(p);
            }
        }
        Group::default()
    }

    /// A WHERE item. A dispatcher only, like [`Lower::expr_at`]: NOT /
    /// OPTIONAL / UNION blocks recurse through here, so each kind is
    /// lowered by its own function to keep a level's frame small.
    fn pattern(&mut self, pair: Pair<'_, Rule>) -> Pattern {
        match pair.as_rule() {
            Rule::concept_clause => self.concept_clause(pair),
            Rule::proposition_clause => self.proposition_clause(pair),
            Rule::filter_clause => self.filter_clause(pair),
            Rule::not_clause => Pattern::Not(self.inner_group(pair)),
            Rule::optional_clause => Pattern::Optional(self.inner_group(pair)),
            Rule::union_clause => Pattern::Union(self.inner_group(pair)),
            other => unreachable!("grammar: unexpected where item {other:?}"),
        }
    }

    fn concept_clause(&mut self, pair: Pair<'_, Rule>) -> Pattern {
        let span = span_of(&pair);
        let mut var = None;
        let mut matcher = None;
        for part in children(pair) {
            match part.as_rule() {
                Rule::variable => var = Some(self.variable(&part)),
                _ => matcher = Some(self.concept_pattern(part, PatternPlace::Query)),
            }
        }
        Pattern::Concept(ConceptClause {
            var,
            matcher: matcher.unwrap_or_else(empty_matcher),
            span,
        })
    }

    fn proposition_clause(&mut self, pair: Pair<'_, Rule>) -> Pattern {
        let span = span_of(&pair);
        let mut var = None;
        let mut matcher = None;
        for part in children(pair) {
            match part.as_rule() {
                Rule::variable => var = Some(self.variable(&part)),
                _ => matcher = Some(self.proposition_pattern(part, PatternPlace::Query)),
            }
        }
        Pattern::Proposition(PropositionClause {
            var,
            matcher: matcher.unwrap_or_else(|| PropositionMatcher::Id(empty_text())),
            span,
        })
    }

    fn filter_clause(&mut self, pair: Pair<'_, Rule>) -> Pattern {
        let span = span_of(&pair);
        let expr = pair
            .into_inner()
            .find(|p| p.as_rule() == Rule::expr)
            .map(|e| self.expr(e))
            .unwrap_or(Expr::Value(Value::Bool(true), span));
        Pattern::Filter(Filter { expr, span })
    }

    // ------------------------------------------------------------ patterns

    fn concept_pattern(&mut self, pair: Pair<'_, Rule>, place: PatternPlace) -> ConceptMatcher {
        let span = span_of(&pair);
        let mut id = None;
        let mut ty = None;
        let mut name = None;
        for field in children(pair) {
            let field_span = span_of(&field);
            let (key, value) = self.pattern_field(field);
            let slot = match key.as_str() {
                "id" => &mut id,
                "type" => &mut ty,
                "name" => &mut name,
                _ => {
                    let suggestions = suggest::similar(&key, ["id", "type", "name"]);
                    let hint = match suggestions.first() {
                        Some(s) => format!(
                            "Did you mean `{s}`? A concept pattern has only `id`, `type` and `name`; match attributes with FILTER(?x.attributes.{key} == …)."
                        ),
                        None => format!(
                            "A concept pattern has only `id`, `type` and `name`; match attributes with FILTER(?x.attributes.{key} == …)."
                        ),
                    };
                    self.error(
                        ErrorCode::InvalidSyntax,
                        field_span,
                        format!("unknown field `{key}` in a concept pattern; expected `id`, `type` or `name`"),
                        Some(hint),
                    );
                    continue;
                }
            };
            if slot.is_some() {
                self.error(
                    ErrorCode::InvalidSyntax,
                    field_span,
                    format!("field `{key}` appears twice in a concept pattern"),
                    Some("Give each of `id`, `type` and `name` at most once.".into()),
                );
            }
            *slot = Some(value);
        }
        if let Some(Arg::Lit(t, s)) = &ty {
            let (t, s) = (t.clone(), *s);
            self.check_identifier("concept type name", &t, s, true);
        }
        let forms = match place {
            PatternPlace::Query => "`{id: …}`, `{type: …, name: …}`, `{type: …}` or `{name: …}`",
            PatternPlace::Write => {
                "`{type: …, name: …}` (match or create) or `{id: …}` (match only)"
            }
        };
        match (id, ty, name, place) {
            (Some(id), None, None, _) => ConceptMatcher::Id(id),
            (None, Some(ty), Some(name), _) => ConceptMatcher::TypeName { ty, name },
            (None, Some(ty), None, PatternPlace::Query) => ConceptMatcher::Type(ty),
            (None, None, Some(name), PatternPlace::Query) => ConceptMatcher::Name(name),
            (Some(_), _, _, _) => {
                self.error(
                    ErrorCode::InvalidSyntax,
                    span,
                    "`id` identifies a concept on its own and cannot be combined with `type` or `name`".into(),
                    Some(format!("Use {forms}.")),
                );
                empty_matcher()
            }
            (None, None, None, _) => {
                self.error(
                    ErrorCode::InvalidSyntax,
                    span,
                    "empty concept pattern".into(),
                    Some(format!("Use {forms}.")),
                );
                empty_matcher()
            }
            (None, ty, _, PatternPlace::Write) => {
                let missing = if ty.is_none() { "type" } else { "name" };
                self.error(
                    ErrorCode::InvalidSyntax,
                    span,
                    format!("this concept pattern lacks `{missing}`: writing needs both `type` and `name`, or `id`"),
                    Some(format!("Use {forms}.")),
                );
                empty_matcher()
            }
        }
    }

    fn pattern_field(&mut self, pair: Pair<'_, Rule>) -> (String, Arg<String>) {
        let mut inner = children(pair);
        let key = inner.next().map(|k| self.key(k)).unwrap_or_default();
        let value = inner
            .next()
            .map(|v| self.text(v))
            .unwrap_or_else(empty_text);
        (key, value)
    }

    fn proposition_pattern(
        &mut self,
        pair: Pair<'_, Rule>,
        place: PatternPlace,
    ) -> PropositionMatcher {
        let Some(inner) = children(pair).next() else {
            return PropositionMatcher::Id(empty_text());
        };
        match inner.as_rule() {
            Rule::id_pattern => {
                let field = children(inner).next();
                let Some(field) = field else {
                    return PropositionMatcher::Id(empty_text());
                };
                let field_span = span_of(&field);
                let (key, value) = self.pattern_field(field);
                if key != "id" {
                    self.error(
                        ErrorCode::InvalidSyntax,
                        field_span,
                        format!("expected `id: \"…\"` in a proposition pattern, found field `{key}`"),
                        Some("Write `(id: \"P:…\")` to match a proposition by id, or `(?subject, \"predicate\", ?object)` to match by structure.".into()),
                    );
                }
                PropositionMatcher::Id(value)
            }
            Rule::triple => {
                let mut parts = children(inner);
                let subject = parts.next().map(|p| self.term(p, place));
                let predicate = parts.next().map(|p| self.predicate(p, place));
                let object = parts.next().map(|p| self.term(p, place));
                match (subject, predicate, object) {
                    (Some(subject), Some(predicate), Some(object)) => {
                        PropositionMatcher::Triple(Box::new(Triple {
                            subject,
                            predicate,
                            object,
                        }))
                    }
                    _ => unreachable!("grammar: a triple has three parts"),
                }
            }
            other => unreachable!("grammar: unexpected {other:?} in proposition pattern"),
        }
    }

    fn term(&mut self, pair: Pair<'_, Rule>, place: PatternPlace) -> Term {
        let span = span_of(&pair);
        let Some(inner) = children(pair).next() else {
            unreachable!("grammar: a term has one child");
        };
        match inner.as_rule() {
            Rule::variable => Term::Var(self.variable(&inner)),
            Rule::concept_pattern => Term::Concept(self.concept_pattern(inner, place), span),
            Rule::proposition_pattern => {
                Term::Proposition(self.proposition_pattern(inner, place), span)
            }
            other => unreachable!("grammar: unexpected {other:?} in term"),
        }
    }

    fn predicate(&mut self, pair: Pair<'_, Rule>, place: PatternPlace) -> PredicateExpr {
        let span = span_of(&pair);
        let mut names = Vec::new();
        let mut hops = None;
        for part in children(pair) {
            match part.as_rule() {
                Rule::variable => {
                    let var = self.variable(&part);
                    if place == PatternPlace::Write {
                        self.error(
                            ErrorCode::InvalidSyntax,
                            var.span,
                            format!("a predicate variable (`?{}`) cannot be written", var.name),
                            Some(
                                "In UPSERT, name the predicate as a string, e.g. \"treats\"."
                                    .into(),
                            ),
                        );
                    }
                    return PredicateExpr::Var(var);
                }
                Rule::predicate_names => {
                    for text in children(part) {
                        let text = self.text(text);
                        if let Arg::Lit(name, span) = &text {
                            let (name, span) = (name.clone(), *span);
                            self.check_identifier("predicate name", &name, span, false);
                        }
                        names.push(text);
                    }
                }
                Rule::hops => hops = Some(self.hops(part)),
                other => unreachable!("grammar: unexpected {other:?} in predicate"),
            }
        }
        if place == PatternPlace::Write && (names.len() != 1 || hops.is_some()) {
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                "a written proposition needs exactly one predicate, without alternatives or hop ranges".into(),
                Some("Write one predicate string, e.g. (?a, \"treats\", ?b).".into()),
            );
        }
        PredicateExpr::Names { names, hops, span }
    }

    fn hops(&mut self, pair: Pair<'_, Rule>) -> Hops {
        let span = span_of(&pair);
        let mut min = None;
        let mut max = None;
        let mut comma = false;
        for part in children(pair) {
            match part.as_rule() {
                Rule::uint => {
                    let n = self.u32_of(&part);
                    if comma {
                        max = Some(n);
                    } else {
                        min = Some(n);
                    }
                }
                Rule::hop_comma => comma = true,
                other => unreachable!("grammar: unexpected {other:?} in hops"),
            }
        }
        let min = min.unwrap_or(0);
        let max = if comma { max } else { Some(min) };
        if let Some(max) = max
            && min > max
        {
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                format!(
                    "hop range {{{min},{max}}} is empty: the minimum is larger than the maximum"
                ),
                Some(format!(
                    "Write {{{max},{min}}}, or {{{min},}} for no upper bound."
                )),
            );
        }
        Hops { min, max, span }
    }

    fn u32_of(&mut self, pair: &Pair<'_, Rule>) -> u32 {
        match pair.as_str().parse::<u32>() {
            Ok(n) => n,
            Err(_) => {
                self.error(
                    ErrorCode::InvalidSyntax,
                    span_of(pair),
                    format!("the number {} is too large here", pair.as_str()),
                    Some("Use a number below 4294967296.".into()),
                );
                0
            }
        }
    }

    // ------------------------------------------------------------ expressions

    fn projection(&mut self, pair: Pair<'_, Rule>) -> Projection {
        match pair.as_rule() {
            Rule::dot_path => Projection::Path(self.dot_path(pair)),
            Rule::call => {
                let span = span_of(&pair);
                match self.call(pair).0 {
                    CallOrAggregate::Aggregate(agg) => Projection::Aggregate(agg),
                    CallOrAggregate::Call(call) => {
                        self.error(
                            ErrorCode::InvalidSyntax,
                            span,
                            format!("`{}` is a FILTER function, not an aggregate", call.func.keyword()),
                            Some("FIND and ORDER BY take variables, dot paths and the aggregates COUNT, SUM, AVG, MIN, MAX; move the test into FILTER(…).".into()),
                        );
                        Projection::Path(placeholder_path(span))
                    }
                    CallOrAggregate::Invalid => Projection::Path(placeholder_path(span)),
                }
            }
            other => unreachable!("grammar: unexpected {other:?} in FIND"),
        }
    }

    fn order_key(&mut self, pair: Pair<'_, Rule>) -> OrderKey {
        let span = span_of(&pair);
        let mut expr = None;
        let mut descending = false;
        for part in children(pair) {
            match part.as_rule() {
                Rule::kw_asc => descending = false,
                Rule::kw_desc => descending = true,
                _ => expr = Some(self.projection(part)),
            }
        }
        OrderKey {
            expr: expr.unwrap_or_else(|| Projection::Path(placeholder_path(span))),
            descending,
            span,
        }
    }

    fn dot_path(&mut self, pair: Pair<'_, Rule>) -> DotPath {
        let span = span_of(&pair);
        let mut inner = children(pair);
        let var = match inner.next() {
            Some(v) => self.variable(&v),
            None => unreachable!("grammar: a dot path starts with a variable"),
        };
        let segments: Vec<Pair<'_, Rule>> = inner.collect();
        for seg in &segments {
            self.check_identifier("field name", seg.as_str(), span_of(seg), false);
        }
        let field = match segments.split_first() {
            None => Field::Whole,
            Some((first, rest)) => {
                let rest_names: Vec<String> = rest.iter().map(|p| p.as_str().to_owned()).collect();
                let top = first.as_str();
                let simple = |field: Field, lower: &mut Self| {
                    if let Some(extra) = rest.first() {
                        lower.error(
                            ErrorCode::InvalidSyntax,
                            span_of(extra),
                            format!(
                                "`.{top}` has no fields; `.{}` cannot follow it",
                                extra.as_str()
                            ),
                            Some(format!("Use ?{}.{top} on its own.", var.name)),
                        );
                    }
                    field
                };
                match top {
                    "id" => simple(Field::Id, self),
                    "type" => simple(Field::Type, self),
                    "name" => simple(Field::Name, self),
                    "subject" => simple(Field::Subject, self),
                    "predicate" => simple(Field::Predicate, self),
                    "object" => simple(Field::Object, self),
                    "attributes" => Field::Attributes(rest_names),
                    "metadata" => Field::Metadata(rest_names),
                    other => {
                        let suggestions = suggest::similar(other, Field::TOP_LEVEL);
                        let hint = match suggestions.first() {
                            Some(s) => format!(
                                "Did you mean ?{}.{s}? Attributes are read as ?{}.attributes.{other}.",
                                var.name, var.name
                            ),
                            None => format!(
                                "Attributes are read as ?{0}.attributes.{other} and metadata as ?{0}.metadata.{other}.",
                                var.name
                            ),
                        };
                        self.error(
                            ErrorCode::InvalidSyntax,
                            span_of(first),
                            format!("unknown field `.{other}`; expected one of id, type, name, subject, predicate, object, attributes, metadata"),
                            Some(hint),
                        );
                        Field::Attributes(vec![other.to_owned()])
                    }
                }
            }
        };
        DotPath { var, field, span }
    }

    fn expr(&mut self, pair: Pair<'_, Rule>) -> Expr {
        self.expr_at(pair).0
    }

    /// An expression and the depth of its tree. Brackets bound how deep
    /// lowering recurses, but not how deep the tree it builds is: a chain
    /// of `||` / `&&` operands or of `!` adds a level per operator without
    /// a bracket. Every node built here is checked against [`MAX_DEPTH`],
    /// so the passes that recurse over expressions later (validation, the
    /// formatter, the engine) never meet a deeper one; an expression past
    /// the limit is reported once and replaced by a stand-in.
    fn expr_at(&mut self, pair: Pair<'_, Rule>) -> (Expr, usize) {
        let pair = skip_single_operands(pair);
        // A dispatcher only: every kind has its own function, so that the
        // frame of each level of recursion holds one kind's locals (a
        // debug build gives every local of a function its own slot).
        match pair.as_rule() {
            Rule::expr => self.fold(pair, Rule::and_expr, |l, r| {
                Expr::Or(Box::new(l), Box::new(r))
            }),
            Rule::and_expr => self.fold(pair, Rule::unary_expr, |l, r| {
                Expr::And(Box::new(l), Box::new(r))
            }),
            Rule::unary_expr => self.negation(pair),
            Rule::comparison => self.comparison(pair),
            Rule::call => self.call_expr(pair),
            Rule::dot_path => (Expr::Path(self.dot_path(pair)), 1),
            Rule::value => {
                let span = span_of(&pair);
                (Expr::Value(self.value(pair), span), 1)
            }
            other => unreachable!("grammar: unexpected {other:?} in expression"),
        }
    }

    /// An operand with its `!`s.
    fn negation(&mut self, pair: Pair<'_, Rule>) -> (Expr, usize) {
        let span = span_of(&pair);
        let mut nots = Vec::new();
        let mut operand = None;
        for part in children(pair) {
            match part.as_rule() {
                Rule::not_op => nots.push(span_of(&part)),
                _ => operand = Some(self.expr_at(part)),
            }
        }
        let (mut e, mut depth) = operand.unwrap_or((Expr::Value(Value::Null, span), 1));
        // The `!` nearest the operand applies first.
        for not in nots.into_iter().rev() {
            depth += 1;
            if self.too_deep(depth, not) {
                return (Expr::Value(Value::Null, span), 1);
            }
            e = Expr::Not(Box::new(e));
        }
        (e, depth)
    }

    fn comparison(&mut self, pair: Pair<'_, Rule>) -> (Expr, usize) {
        let span = span_of(&pair);
        let mut inner = children(pair);
        let left = inner.next().map(|p| self.expr_at(p));
        let op = inner.next().map(|p| match p.as_str() {
            "==" => CompareOp::Eq,
            "!=" => CompareOp::Ne,
            "<=" => CompareOp::Le,
            ">=" => CompareOp::Ge,
            "<" => CompareOp::Lt,
            _ => CompareOp::Gt,
        });
        let right = inner.next().map(|p| self.expr_at(p));
        match (left, op, right) {
            (Some((l, ld)), Some(op), Some((r, rd))) => {
                let depth = ld.max(rd) + 1;
                if self.too_deep(depth, span) {
                    return (Expr::Value(Value::Null, span), 1);
                }
                (Expr::Compare(op, Box::new(l), Box::new(r)), depth)
            }
            (Some(l), _, _) => l,
            _ => unreachable!("grammar: a comparison has an operand"),
        }
    }

    /// A call inside FILTER: a function (an aggregate is an error here).
    fn call_expr(&mut self, pair: Pair<'_, Rule>) -> (Expr, usize) {
        let span = span_of(&pair);
        let (call, args_depth) = self.call(pair);
        let depth = args_depth + 1;
        if self.too_deep(depth, span) {
            return (Expr::Value(Value::Null, span), 1);
        }
        let expr = match call {
            CallOrAggregate::Call(call) => Expr::Call(call),
            CallOrAggregate::Aggregate(agg) => {
                self.misplaced_aggregate(&agg, span);
                Expr::Value(Value::Null, span)
            }
            CallOrAggregate::Invalid => Expr::Value(Value::Null, span),
        };
        (expr, depth)
    }

    /// An aggregate inside FILTER, or inside another aggregate.
    #[inline(never)]
    fn misplaced_aggregate(&mut self, agg: &Aggregate, span: Span) {
        if self.in_aggregate {
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                format!(
                    "the aggregate `{}` cannot be nested inside another aggregate",
                    agg.func.keyword()
                ),
                Some("Aggregate a variable or dot path directly, e.g. COUNT(?x).".into()),
            );
        } else {
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                format!(
                    "the aggregate `{}` cannot be used inside FILTER",
                    agg.func.keyword()
                ),
                Some(
                    "FILTER tests one row at a time; aggregates belong in FIND(…) or ORDER BY."
                        .into(),
                ),
            );
        }
    }

    /// Whether an expression tree `depth` deep is past [`MAX_DEPTH`]; if so,
    /// reports it at `span`.
    fn too_deep(&mut self, depth: usize, span: Span) -> bool {
        if depth <= MAX_DEPTH {
            return false;
        }
        self.report_too_deep(span);
        true
    }

    #[inline(never)]
    fn report_too_deep(&mut self, span: Span) {
        self.errors.push(crate::nesting::too_deep(
            self.source,
            span,
            "this expression",
            &format!(
                "A FILTER expression may nest at most {MAX_DEPTH} levels (each `!`, `&&`, `||`, comparison and function call adds one). Split a long `&&` chain into several FILTER clauses (all must hold), and write a long `||` chain of equalities as IN(?x, [...])."
            ),
        ));
    }

    fn fold(
        &mut self,
        pair: Pair<'_, Rule>,
        operand_rule: Rule,
        combine: impl Fn(Expr, Expr) -> Expr,
    ) -> (Expr, usize) {
        let span = span_of(&pair);
        let mut acc: Option<(Expr, usize)> = None;
        for part in children(pair).filter(|p| p.as_rule() == operand_rule) {
            let part_span = span_of(&part);
            let (e, d) = self.expr_at(part);
            acc = Some(match acc {
                None => (e, d),
                Some((l, ld)) => {
                    let depth = ld.max(d) + 1;
                    if self.too_deep(depth, part_span) {
                        // The rest of the chain is not lowered: one error
                        // for the chain, not one per operand past the limit.
                        return (Expr::Value(Value::Null, span), 1);
                    }
                    (combine(l, e), depth)
                }
            });
        }
        acc.unwrap_or((Expr::Value(Value::Null, Span::default()), 1))
    }

    /// A call, and the depth of its deepest argument's tree.
    fn call(&mut self, pair: Pair<'_, Rule>) -> (CallOrAggregate, usize) {
        let span = span_of(&pair);
        let mut inner = children(pair);
        let Some(name_pair) = inner.next() else {
            unreachable!("grammar: a call starts with its name");
        };
        let name = name_pair.as_str();
        let mut distinct = false;
        let mut args = Vec::new();
        let mut args_depth = 0;
        let errors_before = self.errors.len();
        let outer = std::mem::replace(
            &mut self.in_aggregate,
            AggregateFunc::from_keyword(name).is_some(),
        );
        for part in inner {
            match part.as_rule() {
                Rule::kw_distinct => distinct = true,
                _ => {
                    let (arg, depth) = self.expr_at(part);
                    args_depth = args_depth.max(depth);
                    args.push(arg);
                }
            }
        }
        self.in_aggregate = outer;
        if let Some(func) = AggregateFunc::from_keyword(name) {
            let aggregate = self.aggregate(func, name, distinct, &args, span, errors_before);
            return (aggregate, args_depth);
        }
        (self.function(&name_pair, distinct, args, span), args_depth)
    }

    /// An aggregate: exactly one argument, a variable or dot path. An
    /// argument that was itself wrong (errors since `errors_before`) has
    /// been reported already.
    fn aggregate(
        &mut self,
        func: AggregateFunc,
        name: &str,
        distinct: bool,
        args: &[Expr],
        span: Span,
        errors_before: usize,
    ) -> CallOrAggregate {
        let arg = match args {
            [Expr::Path(path)] => path.clone(),
            [other] => {
                let found = match other {
                    Expr::Value(..) => "a value",
                    Expr::Call(_) => "a function call",
                    _ => "an expression",
                };
                // An argument that was itself wrong has been reported already.
                if self.errors.len() == errors_before {
                    self.error(
                        ErrorCode::InvalidSyntax,
                        expr_span(other),
                        format!("`{name}` aggregates a variable or dot path, found {found}"),
                        Some(format!("Write {name}(?x) or {name}(?x.attributes.key).")),
                    );
                }
                return CallOrAggregate::Invalid;
            }
            _ => {
                self.error(
                    ErrorCode::InvalidSyntax,
                    span,
                    format!("`{name}` takes exactly one argument, found {}", args.len()),
                    Some(format!("Write {name}(?x) or {name}(?x.attributes.key).")),
                );
                return CallOrAggregate::Invalid;
            }
        };
        CallOrAggregate::Aggregate(Aggregate {
            func,
            distinct,
            arg,
            span,
        })
    }

    /// A FILTER function: known name (else "did you mean"), no DISTINCT,
    /// its arity, `IN`'s array.
    fn function(
        &mut self,
        name_pair: &Pair<'_, Rule>,
        distinct: bool,
        args: Vec<Expr>,
        span: Span,
    ) -> CallOrAggregate {
        let name = name_pair.as_str();
        let Some(func) = Func::from_keyword(name) else {
            let names = Func::ALL
                .iter()
                .map(|f| f.keyword())
                .chain(AggregateFunc::ALL.iter().map(|f| f.keyword()));
            let suggestions = suggest::similar(name, names);
            let hint = match suggestions.first() {
                Some(s) => format!("Did you mean `{s}`?"),
                None => "FILTER functions are CONTAINS, STARTS_WITH, ENDS_WITH, REGEX, IN, IS_NULL and IS_NOT_NULL; aggregates are COUNT, SUM, AVG, MIN and MAX.".into(),
            };
            let error = KipError::new(
                ErrorCode::InvalidSyntax,
                format!("unknown function `{name}`"),
            )
            .with_hint(hint)
            .at(self.source, span_of(name_pair))
            .with_suggestions(&suggestions);
            self.errors.push(error);
            return CallOrAggregate::Invalid;
        };
        if distinct {
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                format!("`DISTINCT` only applies to aggregates, not to `{name}`"),
                Some("Remove DISTINCT.".into()),
            );
        }
        if args.len() != func.arity() {
            let usage = match func {
                Func::IsNull | Func::IsNotNull => format!("{name}(?x.attributes.key)"),
                Func::In => "IN(?x.attributes.key, [\"a\", \"b\"])".to_owned(),
                _ => format!("{name}(?x.name, \"text\")"),
            };
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                format!(
                    "`{name}` takes {} argument{}, found {}",
                    func.arity(),
                    if func.arity() == 1 { "" } else { "s" },
                    args.len()
                ),
                Some(format!("Write {usage}.")),
            );
        } else if func == Func::In
            && !matches!(
                args.get(1),
                Some(Expr::Value(Value::Array(_) | Value::Param(_), _))
            )
        {
            self.error(
                ErrorCode::InvalidSyntax,
                args.get(1).map_or(span, expr_span),
                "the second argument of `IN` must be an array literal".into(),
                Some("Write IN(?x.attributes.key, [\"a\", \"b\"]).".into()),
            );
        }
        CallOrAggregate::Call(Call { func, args, span })
    }

    // ------------------------------------------------------------ values

    fn variable(&mut self, pair: &Pair<'_, Rule>) -> Var {
        let span = span_of(pair);
        let name = pair.as_str().trim_start_matches('?').to_owned();
        self.check_identifier("variable name", &name, span, false);
        Var { name, span }
    }

    fn param(&mut self, pair: &Pair<'_, Rule>) -> Param {
        let span = span_of(pair);
        let name = pair.as_str().trim_start_matches(':').to_owned();
        self.check_identifier("parameter name", &name, span, false);
        Param { name, span }
    }

    fn text(&mut self, pair: Pair<'_, Rule>) -> Arg<String> {
        let span = span_of(&pair);
        let inner = if pair.as_rule() == Rule::text {
            children(pair).next()
        } else {
            Some(pair)
        };
        match inner {
            Some(p) if p.as_rule() == Rule::param => Arg::Param(self.param(&p)),
            Some(p) => Arg::Lit(self.string(&p), span),
            None => empty_text(),
        }
    }

    fn count(&mut self, pair: Pair<'_, Rule>) -> Arg<u64> {
        let span = span_of(&pair);
        match children(pair).next() {
            Some(p) if p.as_rule() == Rule::param => Arg::Param(self.param(&p)),
            Some(p) => match p.as_str().parse::<u64>() {
                Ok(n) => Arg::Lit(n, span),
                Err(_) => {
                    self.error(
                        ErrorCode::InvalidSyntax,
                        span,
                        format!("the number {} is too large", p.as_str()),
                        Some("Use a smaller LIMIT.".into()),
                    );
                    Arg::Lit(0, span)
                }
            },
            None => Arg::Lit(0, span),
        }
    }

    fn limit(&mut self, pair: Pair<'_, Rule>) -> Arg<u64> {
        let count = children(pair).find(|p| p.as_rule() == Rule::count);
        match count {
            Some(c) => self.count(c),
            None => unreachable!("grammar: LIMIT has a count"),
        }
    }

    fn cursor(&mut self, pair: Pair<'_, Rule>) -> Arg<String> {
        let text = children(pair).find(|p| p.as_rule() == Rule::text);
        match text {
            Some(t) => self.text(t),
            None => unreachable!("grammar: CURSOR has a token"),
        }
    }

    /// Decodes a string literal (the grammar has already checked its escapes).
    fn string(&mut self, pair: &Pair<'_, Rule>) -> String {
        let raw = pair.as_str();
        let body = raw
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(raw);
        match unescape(body) {
            Ok(s) => s,
            Err(message) => {
                self.error(
                    ErrorCode::InvalidSyntax,
                    span_of(pair),
                    message,
                    Some("Escape a character outside the Basic Multilingual Plane as a surrogate pair, e.g. \\ud83d\\ude00, or write it directly.".into()),
                );
                String::new()
            }
        }
    }

    fn key(&mut self, pair: Pair<'_, Rule>) -> String {
        let Some(inner) = children(pair).next() else {
            return String::new();
        };
        if inner.as_rule() == Rule::string {
            self.string(&inner)
        } else {
            let name = inner.as_str().to_owned();
            self.check_identifier("key", &name, span_of(&inner), true);
            name
        }
    }

    fn object(&mut self, pair: Pair<'_, Rule>) -> Object {
        let span = span_of(&pair);
        let mut members: Vec<(String, Value)> = Vec::new();
        for member in children(pair) {
            let member_span = span_of(&member);
            let mut inner = children(member);
            let key = inner.next().map(|k| self.key(k)).unwrap_or_default();
            let value = inner.next().map(|v| self.value(v)).unwrap_or(Value::Null);
            if members.iter().any(|(k, _)| *k == key) {
                self.error(
                    ErrorCode::InvalidSyntax,
                    member_span,
                    format!("key `{key}` appears twice in this object"),
                    Some(
                        "Give each key once; to change a value, edit the first occurrence.".into(),
                    ),
                );
                continue;
            }
            members.push((key, value));
        }
        Object { members, span }
    }

    fn value(&mut self, pair: Pair<'_, Rule>) -> Value {
        let pair = if pair.as_rule() == Rule::value {
            match children(pair).next() {
                Some(p) => p,
                None => return Value::Null,
            }
        } else {
            pair
        };
        match pair.as_rule() {
            Rule::object => Value::Object(self.object(pair)),
            Rule::array => Value::Array(children(pair).map(|v| self.value(v)).collect()),
            Rule::string => Value::String(self.string(&pair)),
            Rule::number => match pair.as_str().parse::<serde_json::Number>() {
                Ok(n) => Value::Number(n),
                Err(_) => {
                    self.error(
                        ErrorCode::InvalidSyntax,
                        span_of(&pair),
                        format!("the number {} cannot be represented", pair.as_str()),
                        Some("Use a number within the range of a 64-bit float.".into()),
                    );
                    Value::Null
                }
            },
            Rule::lit_true => Value::Bool(true),
            Rule::lit_false => Value::Bool(false),
            Rule::lit_null => Value::Null,
            Rule::param => Value::Param(self.param(&pair)),
            other => unreachable!("grammar: unexpected {other:?} in value"),
        }
    }

    fn with_metadata(&mut self, pair: Pair<'_, Rule>) -> Option<Object> {
        children(pair)
            .find(|p| p.as_rule() == Rule::object)
            .map(|o| self.object(o))
    }

    fn set_attributes(&mut self, pair: Pair<'_, Rule>, slot: &mut Option<Object>, span: Span) {
        let object = pair
            .into_inner()
            .find(|p| p.as_rule() == Rule::object)
            .map(|o| self.object(o));
        if slot.is_some() {
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                "`SET ATTRIBUTES` appears twice in this block".into(),
                Some("Merge both into one SET ATTRIBUTES { … }.".into()),
            );
        }
        *slot = object;
    }

    // ------------------------------------------------------------ KML

    fn upsert(&mut self, pair: Pair<'_, Rule>) -> Upsert {
        let span = span_of(&pair);
        let mut items = Vec::new();
        let mut metadata = None;
        let mut body = span;
        for part in children(pair).flat_map(|p| {
            if p.as_rule() == Rule::upsert_body {
                body = span_of(&p);
                children(p).collect::<Vec<_>>()
            } else {
                vec![p]
            }
        }) {
            match part.as_rule() {
                Rule::kw_upsert => {}
                Rule::concept_block => items.push(UpsertItem::Concept(self.concept_block(part))),
                Rule::proposition_block => {
                    items.push(UpsertItem::Proposition(self.proposition_block(part)));
                }
                Rule::with_metadata => metadata = self.with_metadata(part),
                other => unreachable!("grammar: unexpected {other:?} in UPSERT"),
            }
        }
        Upsert {
            items,
            metadata,
            body,
            span,
        }
    }

    fn concept_block(&mut self, pair: Pair<'_, Rule>) -> ConceptBlock {
        let span = span_of(&pair);
        let mut block = ConceptBlock {
            handle: None,
            matcher: empty_matcher(),
            expect_version: None,
            attributes: None,
            propositions: None,
            metadata: None,
            body: span,
            span,
        };
        for part in children(pair).flat_map(|p| {
            if p.as_rule() == Rule::concept_body {
                block.body = span_of(&p);
                children(p).collect::<Vec<_>>()
            } else {
                vec![p]
            }
        }) {
            let part_span = span_of(&part);
            match part.as_rule() {
                Rule::kw_concept => {}
                Rule::variable => block.handle = Some(self.variable(&part)),
                Rule::concept_pattern => {
                    block.matcher = self.concept_pattern(part, PatternPlace::Write);
                }
                Rule::expect_version => block.expect_version = Some(self.expect_version(part)),
                Rule::set_attributes => self.set_attributes(part, &mut block.attributes, part_span),
                Rule::set_propositions => {
                    if block.propositions.is_some() {
                        self.error(
                            ErrorCode::InvalidSyntax,
                            part_span,
                            "`SET PROPOSITIONS` appears twice in this block".into(),
                            Some("Merge both into one SET PROPOSITIONS { … }.".into()),
                        );
                    }
                    let entries = part
                        .into_inner()
                        .filter(|p| p.as_rule() == Rule::set_proposition)
                        .map(|p| self.set_proposition(p))
                        .collect();
                    block.propositions = Some(entries);
                }
                Rule::with_metadata => block.metadata = self.with_metadata(part),
                other => unreachable!("grammar: unexpected {other:?} in CONCEPT"),
            }
        }
        block
    }

    fn set_proposition(&mut self, pair: Pair<'_, Rule>) -> SetProposition {
        let span = span_of(&pair);
        let mut predicate = empty_text();
        let mut target = None;
        let mut metadata = None;
        for part in children(pair) {
            match part.as_rule() {
                Rule::text => {
                    predicate = self.text(part);
                    if let Arg::Lit(name, s) = &predicate {
                        let (name, s) = (name.clone(), *s);
                        self.check_identifier("predicate name", &name, s, false);
                    }
                }
                Rule::term => target = Some(self.term(part, PatternPlace::Write)),
                Rule::with_metadata => metadata = self.with_metadata(part),
                other => unreachable!("grammar: unexpected {other:?} in SET PROPOSITIONS"),
            }
        }
        SetProposition {
            predicate,
            target: target.unwrap_or_else(|| Term::Concept(empty_matcher(), span)),
            metadata,
            span,
        }
    }

    fn proposition_block(&mut self, pair: Pair<'_, Rule>) -> PropositionBlock {
        let span = span_of(&pair);
        let mut block = PropositionBlock {
            handle: None,
            matcher: PropositionMatcher::Id(empty_text()),
            expect_version: None,
            attributes: None,
            metadata: None,
            body: span,
            span,
        };
        for part in children(pair).flat_map(|p| {
            if p.as_rule() == Rule::proposition_body {
                block.body = span_of(&p);
                children(p).collect::<Vec<_>>()
            } else {
                vec![p]
            }
        }) {
            let part_span = span_of(&part);
            match part.as_rule() {
                Rule::kw_proposition => {}
                Rule::variable => block.handle = Some(self.variable(&part)),
                Rule::proposition_pattern => {
                    block.matcher = self.proposition_pattern(part, PatternPlace::Write);
                }
                Rule::expect_version => block.expect_version = Some(self.expect_version(part)),
                Rule::set_attributes => self.set_attributes(part, &mut block.attributes, part_span),
                Rule::with_metadata => block.metadata = self.with_metadata(part),
                other => unreachable!("grammar: unexpected {other:?} in PROPOSITION"),
            }
        }
        block
    }

    fn delete(&mut self, pair: Pair<'_, Rule>) -> Delete {
        let span = span_of(&pair);
        let rule = pair.as_rule();
        let mut keys = Vec::new();
        let mut var = None;
        let mut where_ = Group::default();
        let mut detach = false;
        let mut target_span = span;
        for part in children(pair) {
            match part.as_rule() {
                Rule::key_list => {
                    keys = children(part).map(|t| self.text(t)).collect();
                }
                Rule::variable => {
                    target_span = span_of(&part);
                    var = Some(self.variable(&part));
                }
                Rule::kw_detach => detach = true,
                Rule::where_clause => where_ = self.where_clause(part),
                _ => {}
            }
        }
        let target = match rule {
            Rule::delete_attributes => DeleteTarget::Attributes(keys),
            Rule::delete_metadata => DeleteTarget::Metadata(keys),
            Rule::delete_propositions => DeleteTarget::Propositions,
            _ => {
                if !detach {
                    let name = var.as_ref().map_or("", |v| v.name.as_str());
                    self.error(
                        ErrorCode::InvalidSyntax,
                        Span::new(target_span.end, target_span.end),
                        "`DELETE CONCEPT` requires `DETACH`".into(),
                        Some(format!("Write DELETE CONCEPT ?{name} DETACH WHERE {{ … }} to confirm that the concept and all its propositions are removed.")),
                    );
                }
                DeleteTarget::Concept
            }
        };
        Delete {
            target,
            var: var.unwrap_or(Var {
                name: String::new(),
                span,
            }),
            where_,
            span,
        }
    }

    fn expect_version(&mut self, pair: Pair<'_, Rule>) -> Arg<u64> {
        let count = children(pair).find(|p| p.as_rule() == Rule::count);
        match count {
            Some(c) => self.count(c),
            None => unreachable!("grammar: EXPECT VERSION has a count"),
        }
    }

    fn update(&mut self, pair: Pair<'_, Rule>) -> Update {
        let span = span_of(&pair);
        let mut update = Update {
            target: Var {
                name: String::new(),
                span,
            },
            attributes: None,
            metadata: None,
            where_: Group::default(),
            limit: None,
            span,
        };
        for part in children(pair) {
            let part_span = span_of(&part);
            match part.as_rule() {
                Rule::kw_update => {}
                Rule::variable => update.target = self.variable(&part),
                Rule::update_set => {
                    let mut is_attributes = true;
                    let mut object = UpdateObject::default();
                    for p in children(part) {
                        match p.as_rule() {
                            Rule::kw_attributes => is_attributes = true,
                            Rule::kw_metadata => is_attributes = false,
                            Rule::update_object => object = self.update_object(p),
                            _ => {}
                        }
                    }
                    let (slot, what) = if is_attributes {
                        (&mut update.attributes, "ATTRIBUTES")
                    } else {
                        (&mut update.metadata, "METADATA")
                    };
                    if slot.is_some() {
                        self.error(
                            ErrorCode::InvalidSyntax,
                            part_span,
                            format!("`SET {what}` appears twice in this UPDATE"),
                            Some(format!("Merge both into one SET {what} {{ … }}.")),
                        );
                    }
                    *slot = Some(object);
                }
                Rule::where_clause => update.where_ = self.where_clause(part),
                Rule::limit_clause => update.limit = Some(self.limit(part)),
                other => unreachable!("grammar: unexpected {other:?} in UPDATE"),
            }
        }
        update
    }

    fn update_object(&mut self, pair: Pair<'_, Rule>) -> UpdateObject {
        let span = span_of(&pair);
        let mut members: Vec<(String, UpdateValue)> = Vec::new();
        for member in children(pair) {
            let member_span = span_of(&member);
            let mut inner = children(member);
            let key = inner.next().map(|k| self.key(k)).unwrap_or_default();
            let value = inner
                .next()
                .map(|v| self.update_value(v))
                .unwrap_or(UpdateValue::Value(Value::Null, member_span));
            if members.iter().any(|(k, _)| *k == key) {
                self.error(
                    ErrorCode::InvalidSyntax,
                    member_span,
                    format!("key `{key}` appears twice in this object"),
                    Some(
                        "Give each key once; to change a value, edit the first occurrence.".into(),
                    ),
                );
                continue;
            }
            members.push((key, value));
        }
        UpdateObject { members, span }
    }

    /// A value of an UPDATE's SET or an operand of an update expression.
    fn update_value(&mut self, pair: Pair<'_, Rule>) -> UpdateValue {
        let pair = if pair.as_rule() == Rule::update_value {
            match children(pair).next() {
                Some(p) => p,
                None => unreachable!("grammar: an update value has one child"),
            }
        } else {
            pair
        };
        let span = span_of(&pair);
        match pair.as_rule() {
            Rule::update_call => self.update_call(pair),
            Rule::dot_path => UpdateValue::Path(self.dot_path(pair)),
            Rule::value => UpdateValue::Value(self.value(pair), span),
            other => unreachable!("grammar: unexpected {other:?} in an update value"),
        }
    }

    fn update_call(&mut self, pair: Pair<'_, Rule>) -> UpdateValue {
        let span = span_of(&pair);
        let mut inner = children(pair);
        let Some(name_pair) = inner.next() else {
            unreachable!("grammar: an update expression starts with its name");
        };
        let name = name_pair.as_str().to_owned();
        let args: Vec<UpdateValue> = inner.map(|p| self.update_value(p)).collect();
        let Some(func) = UpdateFunc::from_keyword(&name) else {
            let names = UpdateFunc::ALL.iter().map(|f| f.keyword());
            let suggestions = suggest::similar(&name, names);
            let hint = match suggestions.first() {
                Some(s) => format!("Did you mean `{s}`?"),
                None => "Update expressions are ADD(a, b), MUL(a, b), CLAMP(x, lo, hi) and COALESCE(x, default).".into(),
            };
            let error = KipError::new(
                ErrorCode::InvalidSyntax,
                format!("unknown update expression `{name}`"),
            )
            .with_hint(hint)
            .at(self.source, span_of(&name_pair))
            .with_suggestions(&suggestions);
            self.errors.push(error);
            return UpdateValue::Value(Value::Null, span);
        };
        if args.len() != func.arity() {
            let usage = match func {
                UpdateFunc::Add => "ADD(?x.attributes.count, 1)",
                UpdateFunc::Mul => "MUL(?x.metadata.confidence, 0.9)",
                UpdateFunc::Clamp => "CLAMP(?x.metadata.confidence, 0.0, 1.0)",
                UpdateFunc::Coalesce => "COALESCE(?x.attributes.count, 0)",
            };
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                format!(
                    "`{name}` takes {} arguments, found {}",
                    func.arity(),
                    args.len()
                ),
                Some(format!("Write {usage}.")),
            );
        }
        UpdateValue::Call(UpdateCall { func, args, span })
    }

    fn merge(&mut self, pair: Pair<'_, Rule>) -> Merge {
        let span = span_of(&pair);
        let mut vars = Vec::new();
        let mut where_ = Group::default();
        for part in children(pair) {
            match part.as_rule() {
                Rule::variable => vars.push(self.variable(&part)),
                Rule::where_clause => where_ = self.where_clause(part),
                _ => {}
            }
        }
        let mut vars = vars.into_iter();
        let mut next = || {
            vars.next().unwrap_or(Var {
                name: String::new(),
                span,
            })
        };
        let source = next();
        let target = next();
        Merge {
            source,
            target,
            where_,
            span,
        }
    }

    fn export(&mut self, pair: Pair<'_, Rule>) -> Export {
        let span = span_of(&pair);
        let mut export = Export {
            target: Var {
                name: String::new(),
                span,
            },
            where_: Group::default(),
            limit: None,
            cursor: None,
            span,
        };
        for part in children(pair) {
            match part.as_rule() {
                Rule::kw_export => {}
                Rule::variable => export.target = self.variable(&part),
                Rule::where_clause => export.where_ = self.where_clause(part),
                Rule::limit_clause => export.limit = Some(self.limit(part)),
                Rule::cursor_clause => export.cursor = Some(self.cursor(part)),
                other => unreachable!("grammar: unexpected {other:?} in EXPORT"),
            }
        }
        export
    }

    // ------------------------------------------------------------ META

    fn describe(&mut self, pair: Pair<'_, Rule>) -> Describe {
        let span = span_of(&pair);
        let mut describe = Describe {
            target: DescribeTarget::Primer,
            limit: None,
            cursor: None,
            span,
        };
        for part in children(pair) {
            match part.as_rule() {
                Rule::kw_describe => {}
                Rule::kw_primer => describe.target = DescribeTarget::Primer,
                Rule::kw_domains => describe.target = DescribeTarget::Domains,
                Rule::concept_types => describe.target = DescribeTarget::ConceptTypes,
                Rule::proposition_types => describe.target = DescribeTarget::PropositionTypes,
                Rule::concept_type | Rule::proposition_type => {
                    let is_concept = part.as_rule() == Rule::concept_type;
                    let name = children(part).find(|p| p.as_rule() == Rule::text);
                    let name = name.map(|t| self.text(t)).unwrap_or_else(empty_text);
                    if let Arg::Lit(n, s) = &name {
                        let (n, s) = (n.clone(), *s);
                        if is_concept {
                            self.check_identifier("concept type name", &n, s, true);
                        } else {
                            self.check_identifier("predicate name", &n, s, false);
                        }
                    }
                    describe.target = if is_concept {
                        DescribeTarget::ConceptType(name)
                    } else {
                        DescribeTarget::PropositionType(name)
                    };
                }
                Rule::limit_clause => describe.limit = Some(self.limit(part)),
                Rule::cursor_clause => describe.cursor = Some(self.cursor(part)),
                other => unreachable!("grammar: unexpected {other:?} in DESCRIBE"),
            }
        }
        describe
    }

    fn search(&mut self, pair: Pair<'_, Rule>) -> Search {
        let span = span_of(&pair);
        let mut search = Search {
            target: SearchTarget::Concept,
            term: empty_text(),
            with_type: None,
            mode: None,
            threshold: None,
            limit: None,
            span,
        };
        for part in children(pair) {
            match part.as_rule() {
                Rule::kw_search => {}
                Rule::search_mode => {
                    let t = children(part).find(|p| p.as_rule() == Rule::text);
                    let mode = t.map(|t| self.text(t)).unwrap_or_else(empty_text);
                    if let Arg::Lit(m, span) = &mode
                        && !SEARCH_MODES.contains(&m.as_str())
                    {
                        let suggestions = suggest::similar(m, SEARCH_MODES);
                        let hint = match suggestions.first() {
                            Some(s) => format!(
                                "Did you mean \"{s}\"? MODE is \"keyword\", \"semantic\" or \"hybrid\"."
                            ),
                            None => "MODE is \"keyword\", \"semantic\" or \"hybrid\".".to_owned(),
                        };
                        let error = KipError::new(
                            ErrorCode::InvalidSyntax,
                            format!("unknown search mode {m:?}; expected \"keyword\", \"semantic\" or \"hybrid\""),
                        )
                        .with_hint(hint)
                        .at(self.source, *span)
                        .with_suggestions(&suggestions);
                        self.errors.push(error);
                    }
                    search.mode = Some(mode);
                }
                Rule::search_threshold => {
                    let v = children(part).find(|p| p.as_rule() != Rule::kw_threshold);
                    if let Some(v) = v {
                        let span = span_of(&v);
                        let value = self.value(v);
                        if let Value::Number(n) = &value
                            && !n.as_f64().is_some_and(|x| (0.0..=1.0).contains(&x))
                        {
                            self.error(
                                ErrorCode::InvalidSyntax,
                                span,
                                format!("THRESHOLD {n} is outside [0, 1]"),
                                Some("A threshold is a minimum normalised _score, between 0.0 and 1.0, e.g. THRESHOLD 0.75.".into()),
                            );
                        }
                        search.threshold = Some(value);
                    }
                }
                Rule::kw_concept => search.target = SearchTarget::Concept,
                Rule::kw_proposition => search.target = SearchTarget::Proposition,
                Rule::text => search.term = self.text(part),
                Rule::search_type => {
                    let t = children(part).find(|p| p.as_rule() == Rule::text);
                    search.with_type = t.map(|t| self.text(t));
                }
                Rule::limit_clause => search.limit = Some(self.limit(part)),
                other => unreachable!("grammar: unexpected {other:?} in SEARCH"),
            }
        }
        search
    }
}

enum CallOrAggregate {
    Call(Call),
    Aggregate(Aggregate),
    Invalid,
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

/// Decodes the JSON escapes of a string literal's body.
pub(crate) fn unescape(body: &str) -> Result<String, String> {
    if !body.contains('\\') {
        return Ok(body.to_owned());
    }
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('/') => out.push('/'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('u') => {
                let hi = hex4(&mut chars)?;
                let code = if (0xD800..0xDC00).contains(&hi) {
                    let low = match (chars.next(), chars.next()) {
                        (Some('\\'), Some('u')) => hex4(&mut chars)?,
                        _ => return Err(format!("unpaired surrogate \\u{hi:04x} in string")),
                    };
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(format!("unpaired surrogate \\u{hi:04x} in string"));
                    }
                    0x10000 + ((hi - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    hi
                };
                match char::from_u32(code) {
                    Some(ch) => out.push(ch),
                    None => return Err(format!("\\u{code:04x} is not a character")),
                }
            }
            _ => return Err("invalid escape in string".into()),
        }
    }
    Ok(out)
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Result<u32, String> {
    let digits: String = chars.take(4).collect();
    u32::from_str_radix(&digits, 16).map_err(|_| format!("invalid escape \\u{digits}"))
}

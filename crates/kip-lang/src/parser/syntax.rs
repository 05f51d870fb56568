//! Grammar failures as errors: a positioned `KIP_1001` naming what was
//! expected and what was found, with "did you mean" for misspelt keywords.

use pest::error::{ErrorVariant, InputLocation};

use super::Rule;
use crate::ast::Span;
use crate::error::{ErrorCode, KipError};
use crate::suggest;

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

pub(super) fn syntax_error(source: &str, err: &pest::error::Error<Rule>) -> KipError {
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

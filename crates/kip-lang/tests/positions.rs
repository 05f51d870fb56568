//! Where errors point: `data.line` and `data.column` are 1-based, columns
//! count Unicode scalar values, `data.offset` and `data.length` are bytes
//! (BRIEF §3 "Errors"). The expected numbers below are worked out by hand
//! from the texts, and cross-checked against an independent count where one
//! is easy to write.

use kip_lang::{ErrorCode, KipError, Position, parse};
use serde_json::json;

/// The errors of a text that must not parse.
fn errors(source: &str) -> Vec<KipError> {
    match parse(source) {
        Ok(commands) => panic!("expected errors for {source:?}, got {commands:#?}"),
        Err(errors) => errors.0,
    }
}

/// The only error of a text with one mistake.
fn only_error(source: &str) -> KipError {
    let mut errors = errors(source);
    assert_eq!(errors.len(), 1, "{source:?}: {errors:#?}");
    errors.remove(0)
}

#[track_caller]
fn assert_at(error: &KipError, line: usize, column: usize, offset: usize, length: usize) {
    let got = (
        error.data.get("line"),
        error.data.get("column"),
        error.data.get("offset"),
        error.data.get("length"),
    );
    let want = (
        Some(&json!(line)),
        Some(&json!(column)),
        Some(&json!(offset)),
        Some(&json!(length)),
    );
    assert_eq!(got, want, "(line, column, offset, length) of {error:#?}");
}

/// A misspelt keyword on line 4 of a four-line WHERE, with `eol` as the line
/// ending.
fn misspelt_on_line_four(eol: &str) -> String {
    [
        "FIND(?d.name)",
        "WHERE {",
        "  ?d {type: \"Drug\"}",
        "  FILTR(?d.name == \"x\")",
        "}",
        "",
    ]
    .join(eol)
}

#[test]
fn an_error_on_line_four_with_lf() {
    let source = misspelt_on_line_four("\n");
    let error = only_error(&source);
    assert_eq!(error.code, ErrorCode::InvalidSyntax);
    // Lines 1-3 are 13, 7 and 19 characters long, plus one byte each for `\n`.
    assert_at(&error, 4, 3, 14 + 8 + 20 + 2, 5);
    assert_eq!(source.find("FILTR"), Some(44));
}

#[test]
fn crlf_counts_as_one_line_break_but_two_bytes() {
    let source = misspelt_on_line_four("\r\n");
    let error = only_error(&source);
    assert_at(&error, 4, 3, 15 + 9 + 21 + 2, 5);
    assert_eq!(source.find("FILTR"), Some(47));
}

#[test]
fn a_lone_cr_is_a_line_break() {
    let source = misspelt_on_line_four("\r");
    let error = only_error(&source);
    assert_at(&error, 4, 3, 44, 5);
}

#[test]
fn mixed_line_endings_each_count_once() {
    // `\n`, `\r\n`, `\r`: three line breaks, so the error is on line 4.
    let source = "FIND(?d.name)\nWHERE {\r\n  ?d {type: \"Drug\"}\r  FILTR(?d.name == \"x\")\n}";
    let error = only_error(source);
    assert_at(&error, 4, 3, 14 + 9 + 20 + 2, 5);
}

#[test]
fn cjk_text_before_the_error_counts_one_column_per_character() {
    // `阿司匹林` is 4 characters and 12 bytes.
    let source = "FIND(?d.name) WHERE { ?d {name: \"阿司匹林\"} FILTR(?d.name == \"x\") }";
    let error = only_error(source);
    assert_at(&error, 1, 41, 48, 5);
    let offset = source.find("FILTR").expect("the mistake is in the text");
    assert_eq!(offset, 48);
    assert_eq!(source[..offset].chars().count() + 1, 41);
}

#[test]
fn cjk_text_before_an_unbound_variable_on_line_two() {
    // A validation error (not a grammar error) after `头痛` (2 characters, 6 bytes).
    let source = "FIND(?d.name)\nWHERE { ?d {name: \"头痛\"} FILTER(?e.name == \"x\") }";
    let error = only_error(source);
    assert_eq!(error.code, ErrorCode::ReferenceError);
    assert_at(&error, 2, 32, 14 + 31 + 4, 2);
    assert_eq!(source.find("?e"), Some(49));
}

#[test]
fn an_error_spanning_cjk_text_has_its_length_in_bytes() {
    // The concept type `1药` is invalid; its literal `"1药"` is 4 characters and 6 bytes.
    let source = "FIND(?d) WHERE { ?d {type: \"1药\"} }";
    let error = only_error(source);
    assert_eq!(error.code, ErrorCode::InvalidIdentifier);
    assert_at(&error, 1, 28, 27, 6);
}

#[test]
fn emoji_count_as_their_scalar_values() {
    // `👍🏽` is 2 scalar values (8 bytes); `👨‍👩‍👧` is 5 (3 emoji joined by
    // 2 zero-width joiners: 4 + 3 + 4 + 3 + 4 = 18 bytes).
    let source = "FIND(?d.name) WHERE { ?d {name: \"👍🏽👨‍👩‍👧\"} FILTR(?d.name == \"x\") }";
    let error = only_error(source);
    assert_at(&error, 1, 44, 62, 5);
    assert_eq!(source.find("FILTR"), Some(62));
}

#[test]
fn a_tab_is_one_column() {
    let source = "FIND(?d.name)\tWHERE\t{\t?d\t{type:\t\"Drug\"}\tFILTR(?d.name == \"x\")\t}";
    let error = only_error(source);
    assert_at(&error, 1, 41, 40, 5);
}

#[test]
fn an_error_at_the_end_of_a_multi_line_text_points_after_the_last_line() {
    let source = "FIND(?d) WHERE {\n  ?d {type: \"Drug\"}\n";
    let error = only_error(source);
    assert_at(&error, 3, 1, source.len(), 0);
}

#[test]
fn several_errors_each_have_their_own_position() {
    let source = "FIND(?a.name, ?b.name)\r\nWHERE {\r\n  ?c {name: \"中\"}\r\n}";
    let errors = errors(source);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_at(&errors[0], 1, 6, 5, 2);
    assert_at(&errors[1], 1, 15, 14, 2);
}

#[test]
fn position_of_counts_lines_and_columns() {
    let source = "ab\ncd";
    let at = |offset| Position::of(source, offset);
    assert_eq!(
        at(0),
        Position {
            line: 1,
            column: 1,
            offset: 0
        }
    );
    assert_eq!(
        at(2),
        Position {
            line: 1,
            column: 3,
            offset: 2
        }
    );
    assert_eq!(
        at(3),
        Position {
            line: 2,
            column: 1,
            offset: 3
        }
    );
    assert_eq!(
        at(5),
        Position {
            line: 2,
            column: 3,
            offset: 5
        }
    );
}

#[test]
fn position_of_treats_crlf_as_one_break_and_lone_cr_as_one() {
    let crlf = "a\r\nb";
    assert_eq!(
        (Position::of(crlf, 1).line, Position::of(crlf, 1).column),
        (1, 2)
    );
    // The `\n` of `\r\n` is still on line 1: the break is counted once, at the `\n`.
    assert_eq!(
        (Position::of(crlf, 2).line, Position::of(crlf, 2).column),
        (1, 2)
    );
    assert_eq!(
        (Position::of(crlf, 3).line, Position::of(crlf, 3).column),
        (2, 1)
    );
    let cr = "a\rb\r\rc";
    assert_eq!(
        (Position::of(cr, 2).line, Position::of(cr, 2).column),
        (2, 1)
    );
    assert_eq!(
        (Position::of(cr, 5).line, Position::of(cr, 5).column),
        (4, 1)
    );
    // `\n`, `\r\n`, `\r\n`: three breaks.
    let mixed = "\n\r\n\r\n";
    assert_eq!(Position::of(mixed, mixed.len()).line, 4);
}

#[test]
fn position_of_counts_columns_in_scalar_values() {
    let source = "阿司b👍🏽c";
    // Byte offsets: 阿 0..3, 司 3..6, b 6, 👍 7..11, 🏽 11..15, c 15.
    let column = |offset| Position::of(source, offset).column;
    assert_eq!(column(3), 2);
    assert_eq!(column(6), 3);
    assert_eq!(column(7), 4);
    assert_eq!(column(11), 5);
    assert_eq!(column(15), 6);
    assert_eq!(column(16), 7);
}

#[test]
fn position_of_clamps_to_a_character_boundary_and_to_the_end() {
    let source = "阿b";
    // Offsets 1 and 2 fall inside `阿`: they are moved back to its start.
    assert_eq!(
        Position::of(source, 1),
        Position {
            line: 1,
            column: 1,
            offset: 0
        }
    );
    assert_eq!(Position::of(source, 2).offset, 0);
    // Past the end: clamped to the length.
    assert_eq!(
        Position::of(source, 100),
        Position {
            line: 1,
            column: 3,
            offset: 4
        }
    );
    assert_eq!(
        Position::of("", 7),
        Position {
            line: 1,
            column: 1,
            offset: 0
        }
    );
}

#[test]
fn position_of_counts_a_tab_as_one_column() {
    assert_eq!(Position::of("\t\tx", 2).column, 3);
}

//! One test per bug found in the parser and the formatter, named after what
//! broke. These tests describe the intended behaviour; each one failed when
//! it was written (see the report that introduced this file), and passes
//! once its bug is fixed. Do not weaken them to make them pass.

use kip_lang::{KipError, format_source, parse, scan_comments};

fn errors(source: &str) -> Vec<KipError> {
    match parse(source) {
        Ok(commands) => panic!("expected errors for {source:?}, got {commands:#?}"),
        Err(errors) => errors.0,
    }
}

/// Formats `source` and checks the three promises of the formatter.
fn format_checked(source: &str) -> String {
    let ast = parse(source).unwrap_or_else(|e| panic!("{source}\n{e:#?}"));
    let formatted = format_source(source).expect("a valid text formats");
    let reparsed = parse(&formatted).unwrap_or_else(|e| panic!("{formatted}\n{e:#?}"));
    assert_eq!(ast, reparsed, "formatting changed the tree:\n{formatted}");
    let again = format_source(&formatted).expect("the formatted text formats");
    assert_eq!(
        formatted, again,
        "formatting is not idempotent:\n{source:?}\n---\n{formatted}"
    );
    let mut before: Vec<String> = scan_comments(source).into_iter().map(|c| c.text).collect();
    let mut after: Vec<String> = scan_comments(&formatted)
        .into_iter()
        .map(|c| c.text)
        .collect();
    before.sort();
    after.sort();
    assert_eq!(before, after, "comments changed");
    formatted
}

// ------------------------------------------------------------------ formatter

/// A comment at the end of a command's last line, with another command after
/// it, was printed on a line of its own with a leading space, in place of
/// the blank line between the commands; formatting again moved it again.
#[test]
fn a_trailing_comment_between_commands_stays_at_the_end_of_its_line() {
    let cases = [
        (
            "FIND(?x) WHERE { ?x {name: \"a\"} } LIMIT 5 // c\nDESCRIBE PRIMER\n",
            "FIND(?x)\nWHERE {\n  ?x {name: \"a\"}\n}\nLIMIT 5 // c\n\nDESCRIBE PRIMER\n",
        ),
        (
            "DESCRIBE PRIMER // c\nDESCRIBE DOMAINS\n",
            "DESCRIBE PRIMER // c\n\nDESCRIBE DOMAINS\n",
        ),
        (
            "UPSERT { CONCEPT { {type: \"A\", name: \"a\"} } } // c\nDESCRIBE PRIMER\n",
            "UPSERT {\n  CONCEPT {\n    {type: \"A\", name: \"a\"}\n  }\n} // c\n\nDESCRIBE PRIMER\n",
        ),
        (
            "DELETE CONCEPT ?x DETACH WHERE { ?x {name: \"a\"} } // c\nDESCRIBE PRIMER\n",
            "DELETE CONCEPT ?x DETACH\nWHERE {\n  ?x {name: \"a\"}\n} // c\n\nDESCRIBE PRIMER\n",
        ),
        (
            "SEARCH CONCEPT \"x\" LIMIT 3 // c\nDESCRIBE PRIMER\n",
            "SEARCH CONCEPT \"x\" LIMIT 3 // c\n\nDESCRIBE PRIMER\n",
        ),
    ];
    for (source, expected) in cases {
        assert_eq!(
            format_source(source).expect("valid"),
            expected,
            "{source:?}"
        );
        format_checked(source);
    }
}

/// U+FEFF is whitespace to the grammar but not to the span trimming, so a
/// byte-order mark at the start of the second command made the first
/// command's span reach into the second's line, and the comment of that
/// line was taken for a trailing comment of the first command.
#[test]
fn a_byte_order_mark_between_commands_does_not_move_comments() {
    format_checked("DESCRIBE PRIMER\n\u{feff}DESCRIBE PRIMER LIMIT // c\n16");
}

// ------------------------------------------------------------------ numbers

/// Numbers were parsed with serde_json's default (not correctly rounded)
/// float parser, so some literals became a neighbouring double: the value
/// stored differed from the one written, and formatting it produced a text
/// that parsed to yet another double.
#[test]
fn a_float_literal_is_parsed_to_the_nearest_double() {
    for literal in [
        "-4.155847363481752e149",
        "-42e+23",
        "9.5e22",
        "0.944732E+35",
    ] {
        let source =
            format!("FIND(?x) WHERE {{ ?x {{name: \"a\"}} FILTER(?x.attributes.v == {literal}) }}");
        let commands = parse(&source).expect("valid");
        let kip_lang::ast::Command::Find(query) = &commands[0] else {
            panic!("a FIND")
        };
        let kip_lang::ast::Pattern::Filter(filter) = &query.where_.items[1] else {
            panic!("a FILTER")
        };
        let kip_lang::ast::Expr::Compare(_, _, right) = &filter.expr else {
            panic!("a comparison")
        };
        let kip_lang::ast::Expr::Value(kip_lang::ast::Value::Number(n), _) = right.as_ref() else {
            panic!("a number")
        };
        let nearest: f64 = literal.parse().expect("Rust parses floats exactly");
        assert_eq!(n.as_f64(), Some(nearest), "{literal}");
        format_checked(&source);
    }
}

// ------------------------------------------------------------------ syntax errors

/// Punctuation (`,` `)` `]` `}` of values) is matched as anonymous literals,
/// which pest neither names in its expected set nor uses to place the error:
/// a missing comma or closing bracket was reported at the start of the
/// enclosing construct, or named other tokens only ("expected a string,
/// found `type`" with the suggestion `TYPE`).
#[test]
fn missing_punctuation_is_named_where_it_is_missing() {
    // (text, what is missing, the text the error must point at)
    let cases = [
        ("FIND(?d.name WHERE { ?d {type: \"Drug\"} }", "`)`", "WHERE"),
        (
            "FIND(?a ?b) WHERE { ?a {type: \"Drug\"} ?b {type: \"Drug\"} }",
            "`,`",
            "?b)",
        ),
        (
            "FIND(?d) WHERE { ?d {type: \"Drug\" name: \"A\"} }",
            "`,`",
            "name",
        ),
        (
            "FIND(?d.name) WHERE { (?d \"treats\", ?s) }",
            "`,`",
            "\"treats\"",
        ),
        (
            "FIND(?drug.name) WHERE { (?drug, \"treats\" ?symptom) }",
            "`,`",
            "?symptom",
        ),
        (
            "FIND(?d) WHERE { ?d {type: \"Drug\"} (?d, \"p\", ?x }",
            "`)`",
            "}",
        ),
        (
            "FIND(?d) WHERE { ?d {type: \"Drug\"} FILTER(?d.name == \"a\" }",
            "`)`",
            "}",
        ),
        (
            "FIND(?d) WHERE { ?d {type: \"Drug\"} FILTER(IN(?d.name [\"a\"])) }",
            "`,`",
            "[\"a\"]",
        ),
        (
            "FIND(?d) WHERE { ?d {type: \"Drug\"} FILTER(CONTAINS(?d.name \"a\")) }",
            "`,`",
            "\"a\"))",
        ),
        (
            "FIND(?d) WHERE { ?d {type: \"Drug\"} FILTER(IN(?d.name, [\"a\" \"b\"])) }",
            "`,`",
            "\"b\"",
        ),
        (
            "FIND(?d.name, COUNT(?d) WHERE { ?d {type: \"Drug\"} }",
            "`)`",
            "WHERE",
        ),
        (
            "DELETE ATTRIBUTES {\"a\" \"b\"} FROM ?d WHERE { ?d {type: \"Drug\"} }",
            "`,`",
            "\"b\"",
        ),
        (
            "UPSERT { CONCEPT ?d { {type: \"Drug\", name: \"A\"} SET PROPOSITIONS { (\"treats\" ?x) } } }",
            "`,`",
            "?x",
        ),
        (
            "UPSERT { CONCEPT ?d { {type: \"Drug\", name: \"A\"} SET ATTRIBUTES {risk: 2 dose: \"5mg\"} } }",
            "`,`",
            "dose",
        ),
        (
            "UPSERT { CONCEPT ?d { {type: \"Drug\", name: \"A\"} SET ATTRIBUTES {a: [1, 2} } }",
            "`]`",
            "} } }",
        ),
    ];
    let mut wrong = Vec::new();
    for (source, missing, at) in cases {
        let errors = errors(source);
        let first = &errors[0];
        let want = source.rfind(at).expect("the marker is in the text");
        let want = if at == "}" {
            want
        } else {
            source.find(at).unwrap_or(want)
        };
        if first.offset() != Some(want) || !first.message.contains(missing) {
            wrong.push(format!(
                "{source}\n  want {missing} at offset {want}; got offset {:?}: {}",
                first.offset(),
                first.message
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A bad string literal was reported as "expected a string, found a string"
/// at its opening quote, whatever the problem was.
#[test]
fn a_bad_string_literal_says_what_is_wrong_with_it() {
    let unterminated = "FIND(?d) WHERE { ?d {type: \"Drug\", name: \"A} }";
    let error = &errors(unterminated)[0];
    let message = error.message.to_lowercase();
    assert!(
        message.contains("unterminated") || message.contains("not closed"),
        "{error:#?}"
    );
    assert_eq!(error.offset(), unterminated.rfind('"'));

    for (source, escape) in [
        (
            "FIND(?d) WHERE { ?d {type: \"Drug\", name: \"Asp\\qirin\"} }",
            "\\q",
        ),
        (
            "FIND(?d) WHERE { ?d {type: \"Drug\", name: \"\\u12G4\"} }",
            "\\u12G4",
        ),
    ] {
        let error = &errors(source)[0];
        assert!(error.message.contains("escape"), "{source}\n{error:#?}");
        assert_eq!(error.offset(), source.find(escape), "{source}\n{error:#?}");
    }

    let newline = "FIND(?d) WHERE { ?d {type: \"Drug\", name: \"A\nB\"} }";
    let error = &errors(newline)[0];
    assert!(
        !error.message.contains("found a string") && error.message.contains("line"),
        "{error:#?}"
    );
}

/// `COUNT("x")` was reported as "takes one variable or dot path, found 1
/// arguments": the count was right, the complaint was about its kind.
#[test]
fn an_aggregate_of_a_value_says_it_needs_a_variable() {
    let error = &errors("FIND(COUNT(\"x\")) WHERE { ?d {type: \"Drug\"} }")[0];
    assert!(!error.message.contains("1 arguments"), "{error:#?}");
}

/// `COUNT(COUNT(?x))` in FIND was reported as an aggregate "inside FILTER".
#[test]
fn a_nested_aggregate_is_not_said_to_be_inside_filter() {
    let errors = errors("FIND(COUNT(COUNT(?x))) WHERE { ?x {name: \"a\"} }");
    for error in &errors {
        assert!(!error.message.contains("FILTER"), "{errors:#?}");
    }
}

/// `FILTER ?x…` (no parenthesis) was reported as "expected …, `FILTER(…)`,
/// found `FILTER`": the keyword was right, the `(` after it was missing.
#[test]
fn filter_without_its_parenthesis_asks_for_the_parenthesis() {
    let source = "FIND(?d) WHERE { ?d {type: \"Drug\"} FILTER ?d.name == \"a\") }";
    let error = &errors(source)[0];
    assert!(error.message.contains("`(`"), "{error:#?}");
    assert_eq!(error.offset(), source.find("?d.name"), "{error:#?}");
}

//! Golden corpora: every file of `tests/data/ok/` is a valid KIP text whose
//! canonical formatting is snapshotted; every file of `tests/data/err/` is an
//! invalid text (one mistake each, unless its name says otherwise) whose
//! complete error list is snapshotted.
//!
//! Snapshots are named after the files (`golden__ok@<file>.snap`,
//! `golden__err@<file>.snap`). To review a change, run
//! `INSTA_UPDATE=always cargo test -p kip-lang --test golden` and read the
//! `.snap` files under `tests/snapshots/` before committing them.

use std::path::Path;

use kip_lang::{KipError, format_source, parse, scan_comments};
use serde_json::{Value, json};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The comment texts of a source, sorted (the formatter may move a comment
/// to another line, but it must keep every one).
fn comment_texts(source: &str) -> Vec<String> {
    let mut texts: Vec<String> = scan_comments(source).into_iter().map(|c| c.text).collect();
    texts.sort();
    texts
}

#[test]
fn ok() {
    insta::glob!("data/ok/*.kip", |path| {
        let source = read(path);
        let name = path.display();
        let ast = parse(&source).unwrap_or_else(|e| panic!("{name} must parse:\n{e:#?}"));
        assert!(!ast.is_empty(), "{name} holds no command");
        let formatted =
            format_source(&source).unwrap_or_else(|e| panic!("{name} must format:\n{e:#?}"));
        let reparsed = parse(&formatted).unwrap_or_else(|e| {
            panic!("{name}: the formatted text must parse:\n{formatted}\n{e:#?}")
        });
        assert_eq!(
            ast, reparsed,
            "{name}: formatting changed the meaning:\n{formatted}"
        );
        let again = format_source(&formatted).expect("the formatted text formats");
        assert_eq!(formatted, again, "{name}: formatting is not idempotent");
        assert_eq!(
            comment_texts(&source),
            comment_texts(&formatted),
            "{name}: formatting lost or changed a comment"
        );
        insta::assert_snapshot!(formatted);
    });
}

/// One error as the snapshot shows it: the fields a client relies on.
fn error_json(error: &KipError) -> Value {
    let data = &error.data;
    let field = |key: &str| data.get(key).cloned().unwrap_or(Value::Null);
    json!({
        "code": error.code,
        "message": error.message,
        "hint": error.hint,
        "line": field("line"),
        "column": field("column"),
        "offset": field("offset"),
        "length": field("length"),
        "suggestions": data.get("suggestions").cloned().unwrap_or_else(|| json!([])),
    })
}

/// A JSON array with one compact error object per line.
fn render(errors: &[KipError]) -> String {
    let lines: Vec<String> = errors
        .iter()
        .map(|e| format!("  {}", error_json(e)))
        .collect();
    format!("[\n{}\n]", lines.join(",\n"))
}

#[test]
fn err() {
    insta::glob!("data/err/*.kip", |path| {
        let source = read(path);
        let name = path.display();
        let errors = match parse(&source) {
            Ok(commands) => panic!("{name} must be rejected, but parsed as:\n{commands:#?}"),
            Err(errors) => errors.0,
        };
        assert!(!errors.is_empty(), "{name}: an empty error list");
        for error in &errors {
            // Every error of a text points somewhere in it, and its line and
            // column agree with its offset.
            let offset = error
                .offset()
                .unwrap_or_else(|| panic!("{name}: {error:?} has no offset"));
            assert!(
                offset <= source.len(),
                "{name}: {error:?} points past the end"
            );
            let pos = kip_lang::Position::of(&source, offset);
            assert_eq!(error.data.get("line"), Some(&json!(pos.line)), "{name}");
            assert_eq!(error.data.get("column"), Some(&json!(pos.column)), "{name}");
            assert!(
                !error.message.is_empty() && !error.hint.is_empty(),
                "{name}"
            );
        }
        let offsets: Vec<usize> = errors.iter().filter_map(KipError::offset).collect();
        assert!(
            offsets.windows(2).all(|w| w[0] <= w[1]),
            "{name}: errors are not in source order"
        );
        // The formatter refuses an invalid text with the same errors.
        let format_errors = format_source(&source).expect_err("an invalid text does not format");
        assert_eq!(format_errors.0, errors, "{name}");
        insta::assert_snapshot!(render(&errors));
    });
}

/// Both corpora are big enough to mean something; a glob that silently
/// matched nothing would pass vacuously.
#[test]
fn corpora_are_not_empty() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for (sub, min) in [("ok", 40), ("err", 40)] {
        let count = std::fs::read_dir(dir.join(sub))
            .expect("corpus directory")
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "kip"))
            .count();
        assert!(count >= min, "tests/data/{sub} holds {count} files");
    }
}

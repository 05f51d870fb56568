//! The property every input must satisfy: whatever the text, parsing and
//! formatting never panic, and a text that parses formats to a text that
//! parses to the same tree and formats to itself.
//!
//! This file is compiled twice: by the `kip-fuzz` crate for libFuzzer, and
//! by `crates/kip-lang/tests/fuzz_corpus.rs` (through `#[path]`) to replay the
//! corpus on stable Rust. It depends on nothing but `kip_lang` and `serde_json`.

/// Panics (which libFuzzer reports as a crash) if `source` breaks a promise
/// of the parser or the formatter.
pub fn parse_roundtrip(source: &str) {
    let parsed = kip_lang::parse(source);
    // The formatter must not panic on any text, valid or not, and must agree
    // with the parser about which texts are valid.
    let formatted = kip_lang::format_source(source);
    match (parsed, formatted) {
        (Ok(ast), Ok(formatted)) => {
            let reparsed = match kip_lang::parse(&formatted) {
                Ok(reparsed) => reparsed,
                Err(errors) => panic!(
                    "the formatted text does not parse:\n{source:?}\n---\n{formatted}\n{errors:#?}"
                ),
            };
            assert!(
                ast == reparsed,
                "formatting changed the tree:\n{source:?}\n---\n{formatted}"
            );
            let again = kip_lang::format_source(&formatted);
            assert!(
                again.as_ref() == Ok(&formatted),
                "formatting is not idempotent:\n{source:?}\n---\n{formatted}\n---\n{again:?}"
            );
            // Binding with no parameters never panics either: it binds, or it
            // reports the missing placeholders.
            let _ = kip_lang::bind(source, ast, &serde_json::Map::new());
        }
        (Err(parse_errors), Err(format_errors)) => {
            assert!(
                parse_errors == format_errors,
                "the formatter reports other errors than the parser:\n{source:?}"
            );
            assert!(
                !parse_errors.0.is_empty(),
                "an empty error list:\n{source:?}"
            );
            for error in &parse_errors.0 {
                let offset = error.offset().unwrap_or(0);
                assert!(
                    offset <= source.len(),
                    "an error points past the end:\n{source:?}\n{error:#?}"
                );
            }
            // The response form of the errors never panics.
            let _ = parse_errors.into_response_error().to_json();
        }
        (parsed, formatted) => panic!(
            "the parser and the formatter disagree on validity:\n{source:?}\nparse: {:?}\nformat: {:?}",
            parsed.is_ok(),
            formatted.is_ok()
        ),
    }
}

//! The checks of the `parse_differential` fuzz target, shared with
//! `crates/kip-lang/tests/fast_differential.rs` (which replays the corpus
//! on stable Rust): the fast path for common KML shapes agrees with pest.
//!
//! - `kip_lang::parse` (fast path first) and `kip_lang::parse_reference`
//!   (pest alone) give the same tree with the same spans, or the same errors
//!   with the same messages and positions;
//! - wherever the fast path answers, pest and lowering accept the text
//!   without a problem and build the same tree, spans included.
//!
//! Spans compare equal under `==`, so trees are compared by `Debug` text,
//! which prints every span.

/// Panics if the two parsers disagree on `source`.
pub fn check(source: &str) {
    let fast_first = format!("{:?}", kip_lang::parse(source));
    let reference = format!("{:?}", kip_lang::parse_reference(source));
    assert_eq!(
        fast_first, reference,
        "parse and parse_reference disagree on {source:?}"
    );
    if let Some(fast) = kip_lang::parse_fast_only(source) {
        match kip_lang::parse_pest_only(source) {
            Ok(pest) => assert_eq!(
                format!("{fast:?}"),
                format!("{pest:?}"),
                "the fast path's tree differs from pest's on {source:?}"
            ),
            Err(errors) => {
                panic!("the fast path accepted {source:?}, which pest refuses: {errors:?}")
            }
        }
    }
}

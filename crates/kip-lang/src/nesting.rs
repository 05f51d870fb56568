//! The one nesting limit of KIP Explorer, [`MAX_DEPTH`], and the checks that
//! enforce it before anything recurses.
//!
//! Every pass over KIP is recursive: pest while it matches the grammar, then
//! lowering, validation, binding, the formatter, the engine's compiler,
//! executor and pattern diagram, the value codecs. A text nested deep enough
//! would overflow the stack of any of them, so the depth is checked once, up
//! front, and the later passes rely on that proof:
//!
//! - the text: [`check_text`] is a linear scan (no recursion, strings and
//!   comments skipped) run before pest sees the text; every `(`, `[` and `{`
//!   opens a level, whichever construct it belongs to (NOT / OPTIONAL /
//!   UNION blocks, parentheses and calls in FILTER, arrays, objects, nested
//!   propositions, inline concepts, UPSERT blocks);
//! - FILTER expressions: a chain of `||` / `&&` operands or of `!` builds a
//!   tree deeper than its brackets, so lowering also bounds the depth of
//!   every expression tree it builds (one level per operator, comparison or
//!   call);
//! - parameters: a JSON value bound to a `:name` placeholder counts as if it
//!   were written in place of the placeholder ([`json_depth`] measures it
//!   without recursing);
//! - outside this crate, the YAML bundle reader (`kip-capsule`) bounds its
//!   collections by this constant, and the store's value codec (`kip-store`,
//!   which sits below this crate and cannot name it) holds the same number,
//!   pinned equal by a test of `kip-nexus`.
//!
//! Each refusal is a `KIP_1001` whose message says "nested deeper than
//! 256 levels" and whose data holds the position (`line`, `column`,
//! `offset`, `length`) and `max_depth`.

use serde_json::Value as Json;

use crate::ast::Span;
use crate::error::{ErrorCode, KipError};

/// How deep anything may nest: brackets in a KIP text, the tree of a FILTER
/// expression, a parameter's JSON value with the brackets around its
/// placeholder, collections of a YAML bundle, stored values. 256 is far
/// beyond any hand-written query (the deepest example capsule nests 6) and
/// small enough that every recursive pass stays well inside a 2 MiB thread
/// stack, the smallest that any face runs KIP on (test threads, async
/// workers).
pub const MAX_DEPTH: usize = 256;

/// The refusal of something nested deeper than [`MAX_DEPTH`], pointing at
/// `span` of `source`. `what` names what is nested ("this `{`", "this
/// expression").
pub fn too_deep(source: &str, span: Span, what: &str, hint: &str) -> KipError {
    KipError::new(
        ErrorCode::InvalidSyntax,
        format!("{what} is nested deeper than {MAX_DEPTH} levels"),
    )
    .with_hint(hint)
    .at(source, span)
    .with_data("max_depth", MAX_DEPTH)
}

fn text_hint() -> String {
    format!(
        "KIP Explorer accepts at most {MAX_DEPTH} levels of nesting (blocks, parentheses, arrays, objects, nested propositions). Flatten the text: merge nested NOT / OPTIONAL / UNION blocks, drop redundant parentheses, or store a deep value as a string."
    )
}

/// A bracket of the text outside strings and comments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bracket {
    Open,
    Close,
}

/// Calls `f(offset, bracket)` for every bracket of `source` that is not
/// inside a string literal or a `//` comment, in order, until `f` says stop.
/// Strings end at a line break, as the grammar has them (pest reports an
/// unterminated one; this scan only has to agree on where brackets are).
fn brackets(source: &str, mut f: impl FnMut(usize, Bracket) -> bool) {
    let bytes = source.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' | b'\n' | b'\r' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    // A comment runs to the end of its line.
                    while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                        i += 1;
                    }
                    continue;
                }
                b'(' | b'[' | b'{' if !f(i, Bracket::Open) => return,
                b')' | b']' | b'}' if !f(i, Bracket::Close) => return,
                _ => {}
            }
        }
        i += 1;
    }
}

/// Checks that no bracket of `source` opens a level deeper than
/// [`MAX_DEPTH`]; the error points at the first one that does. Linear in the
/// text and recursion-free, so it is safe on any input; run before pest.
pub(crate) fn check_text(source: &str) -> Result<(), KipError> {
    let mut depth = 0usize;
    let mut deepest = None;
    brackets(source, |offset, bracket| {
        match bracket {
            Bracket::Open => {
                depth += 1;
                if depth > MAX_DEPTH {
                    deepest = Some(offset);
                    return false;
                }
            }
            // A stray closer is pest's to report; it cannot make the
            // depth negative here.
            Bracket::Close => depth = depth.saturating_sub(1),
        }
        true
    });
    match deepest {
        Some(offset) => {
            let c = &source[offset..=offset];
            Err(too_deep(
                source,
                Span::new(offset, offset + 1),
                &format!("this `{c}`"),
                &text_hint(),
            ))
        }
        None => Ok(()),
    }
}

/// The bracket depth of a text at any offset, for binding parameters "as if
/// written in place" (built once per text, in one scan).
pub(crate) struct DepthIndex {
    /// `(offset, depth after the bracket at offset)`, in text order.
    changes: Vec<(usize, usize)>,
}

impl DepthIndex {
    pub(crate) fn new(source: &str) -> DepthIndex {
        let mut depth = 0usize;
        let mut changes = Vec::new();
        brackets(source, |offset, bracket| {
            depth = match bracket {
                Bracket::Open => depth + 1,
                Bracket::Close => depth.saturating_sub(1),
            };
            changes.push((offset, depth));
            true
        });
        DepthIndex { changes }
    }

    /// How many brackets are open at `offset` (0 beyond the text).
    pub(crate) fn at(&self, offset: usize) -> usize {
        let before = self.changes.partition_point(|&(o, _)| o < offset);
        before.checked_sub(1).map_or(0, |i| self.changes[i].1)
    }
}

/// How deep a JSON value nests: 0 for a scalar, 1 for `[]` or `{}`, 2 for
/// `[[]]`. Iterative, so it measures any value a caller could build, however
/// deep.
pub fn json_depth(value: &Json) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            Json::Array(items) => {
                deepest = deepest.max(depth + 1);
                stack.extend(items.iter().map(|i| (i, depth + 1)));
            }
            Json::Object(members) => {
                deepest = deepest.max(depth + 1);
                stack.extend(members.values().map(|i| (i, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_of(text: &str) -> Result<(), usize> {
        check_text(text).map_err(|e| e.offset().unwrap_or(usize::MAX))
    }

    #[test]
    fn counts_every_bracket_kind_and_points_at_the_first_too_deep() {
        let ok = format!(
            "{}{}",
            "([{".repeat(MAX_DEPTH / 3),
            "}])".repeat(MAX_DEPTH / 3)
        );
        assert_eq!(depth_of(&ok), Ok(()));
        let at_limit = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(depth_of(&at_limit), Ok(()));
        let over = format!(
            "x {}{}",
            "{".repeat(MAX_DEPTH + 3),
            "}".repeat(MAX_DEPTH + 3)
        );
        assert_eq!(depth_of(&over), Err(2 + MAX_DEPTH));
        // Siblings do not add up.
        assert_eq!(depth_of(&"[[]]".repeat(1000)), Ok(()));
    }

    #[test]
    fn skips_strings_and_comments() {
        let deep = "(".repeat(MAX_DEPTH + 1);
        assert_eq!(depth_of(&format!("\"{deep}\"")), Ok(()));
        assert_eq!(depth_of(&format!("\"\\\"{deep}\"")), Ok(()));
        assert_eq!(depth_of(&format!("// {deep}\n")), Ok(()));
        assert_eq!(depth_of(&format!("// x\r{deep}")), Err(5 + MAX_DEPTH));
        // A string ends at its line; what follows counts again.
        assert_eq!(depth_of(&format!("\"open\n{deep}")), Err(6 + MAX_DEPTH));
        // Stray closers never make the depth negative.
        assert_eq!(
            depth_of(&format!("{}{deep}", ")".repeat(10))),
            Err(10 + MAX_DEPTH)
        );
    }

    #[test]
    fn reports_line_and_column() {
        let text = format!("FIND(?x)\nWHERE {{\n  {}", "NOT {".repeat(MAX_DEPTH));
        let e = check_text(&text).expect_err("too deep");
        assert_eq!(e.code, ErrorCode::InvalidSyntax);
        assert!(
            e.message.contains("nested deeper than 256"),
            "{}",
            e.message
        );
        assert_eq!(e.data["line"], 3);
        // WHERE's brace is level 1, so the 256th `NOT {` opens level 257.
        assert_eq!(e.data["column"], 3 + 5 * (MAX_DEPTH - 1) + 4);
        assert_eq!(e.data["max_depth"], MAX_DEPTH);
    }

    #[test]
    fn depth_index_answers_the_depth_at_an_offset() {
        let text = "a ( b [ c ] d ) e";
        let index = DepthIndex::new(text);
        let at = |needle: &str| index.at(text.find(needle).unwrap_or(0));
        assert_eq!(
            (at("a"), at("b"), at("c"), at("d"), at("e")),
            (0, 1, 2, 1, 0)
        );
        assert_eq!(index.at(1000), 0);
    }

    #[test]
    fn measures_json_without_recursing() {
        assert_eq!(json_depth(&serde_json::json!(1)), 0);
        assert_eq!(json_depth(&serde_json::json!([])), 1);
        assert_eq!(json_depth(&serde_json::json!({"a": [1, {"b": []}]})), 4);
        let mut deep = Json::Null;
        for _ in 0..100_000 {
            deep = Json::Array(vec![deep]);
        }
        let depth = std::thread::spawn(move || {
            let d = json_depth(&deep);
            // serde_json drops a value recursively: take it apart first.
            let mut v = deep;
            while let Json::Array(mut items) = v {
                v = items.pop().unwrap_or(Json::Null);
            }
            d
        })
        .join()
        .expect("no overflow");
        assert_eq!(depth, 100_000);
    }
}

//! `kip-lang`: the KIP v1.0-RC2 language, with the RC9–RC10 additions accepted
//! as a compatible superset (UPDATE, MERGE, EXPECT VERSION, EXPORT, SEARCH …
//! MODE / THRESHOLD) — grammar, spanned AST, checks that need no store,
//! parameter binding and the canonical formatter.
//!
//! ```
//! let commands = kip_lang::parse(r#"FIND(?d.name) WHERE { ?d {type: "Drug"} } LIMIT :n"#).unwrap();
//! let params = serde_json::json!({"n": 5});
//! let bound = kip_lang::bind("", commands, params.as_object().unwrap()).unwrap();
//! assert_eq!(bound[0].to_string(), "FIND(?d.name)\nWHERE {\n  ?d {type: \"Drug\"}\n}\nLIMIT 5");
//! ```
//!
//! This crate owns the text of KIP and nothing else: it does not touch
//! storage or I/O, and it does not know which types or predicates exist (the
//! engine checks those against the store). Entry points: [`parse`],
//! [`bind`], [`format_source`], [`parse_where_items`].
//!
//! Nothing nests deeper than [`MAX_DEPTH`] (256) levels: a deeper text,
//! FILTER expression or bound parameter is a positioned `KIP_1001` found
//! before anything recurses, so no input can overflow a stack here or in
//! the engine (see the `nesting` module).

pub mod ast;
mod bind;
mod error;
mod fast;
mod format;
mod lexeme;
mod nesting;
mod parser;
mod position;
pub mod suggest;
mod validate;

pub use bind::{bind, placeholders, placeholders_of};
pub use error::{ErrorCode, Errors, KipError};
pub use format::{Comment, WIDTH, format_commands, format_source, scan_comments};
pub use lexeme::{is_identifier, is_type_name};
pub use nesting::{MAX_DEPTH, json_depth};
pub use position::Position;
pub use validate::{bound_vars, expr_vars};

use ast::{Command, Group};

/// Parses a text of one or more KIP commands and runs every check that
/// needs no store. All errors found are returned, in source order.
pub fn parse(source: &str) -> Result<Vec<Command>, Errors> {
    finish(source, parser::parse_script(source)?, None)
}

/// [`parse`] for one part of a text cut between two blocks of an UPSERT
/// (a streamed import: a capsule too large to hold is read part by part,
/// each part a text of whole commands whose last UPSERT may go on in the
/// next part, and whose first may go on from the previous one). With
/// `handles`, the first command continues an UPSERT whose earlier parts
/// defined those handles (they count as defined, and cannot be defined
/// again); on return `handles` holds the handles the text's last UPSERT
/// has defined so far, for the next part.
pub fn parse_part(
    source: &str,
    handles: Option<&mut std::collections::BTreeSet<String>>,
) -> Result<Vec<Command>, Errors> {
    finish(source, parser::parse_script(source)?, handles)
}

/// [`parse`] through the pest grammar alone, without the fast path for
/// common KML shapes: the reference that path is tested against (the
/// differential tests and the `parse_differential` fuzz target).
#[doc(hidden)]
pub fn parse_reference(source: &str) -> Result<Vec<Command>, Errors> {
    finish(source, parser::parse_script_pest(source)?, None)
}

/// The fast path alone: `Some` with the commands (before the checks of
/// validation) if it recognised the whole text, `None` where [`parse`]
/// falls back to pest. For the differential tests.
#[doc(hidden)]
pub fn parse_fast_only(source: &str) -> Option<Vec<Command>> {
    fast::parse_script(source)
}

/// pest and lowering alone, without validation: `Ok` only if lowering
/// reported nothing. For the differential tests.
#[doc(hidden)]
pub fn parse_pest_only(source: &str) -> Result<Vec<Command>, Errors> {
    let (commands, errors) = parser::parse_script_pest(source)?;
    if errors.is_empty() {
        Ok(commands)
    } else {
        Err(Errors(errors))
    }
}

fn finish(
    source: &str,
    (commands, mut errors): (Vec<Command>, Vec<KipError>),
    handles: Option<&mut std::collections::BTreeSet<String>>,
) -> Result<Vec<Command>, Errors> {
    errors.extend(validate::check_part(source, &commands, handles));
    errors.sort_by_key(|e| e.offset().unwrap_or(0));
    if errors.is_empty() {
        Ok(commands)
    } else {
        Err(Errors(errors))
    }
}

/// Parses the body of a WHERE block: a sequence of pattern clauses, FILTERs
/// and NOT / OPTIONAL / UNION blocks (used to check clause fragments, e.g.
/// the examples of the specification, and by editors).
pub fn parse_where_items(source: &str) -> Result<Group, Errors> {
    parser::parse_where_items(source)
}

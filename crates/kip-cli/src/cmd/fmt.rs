//! `kip fmt`: KIP text in canonical form, comments kept, without a nexus.
//!
//! `Api::format` answers the same, but an API needs an open nexus, which
//! formatting text must not create.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::stdio::{out, print_error, read_input};

/// Prints the canonical text, or rewrites `file` (`write`), or only tells
/// whether the text is canonical already (`check`: exit 1 if not). Text
/// that does not parse prints its KIP error (exit 1).
pub fn run(file: Option<PathBuf>, check: bool, write: bool) -> anyhow::Result<ExitCode> {
    let source = read_input(file.as_ref())?;
    let formatted = match kip_lang::format_source(&source) {
        Ok(f) => f,
        Err(errors) => return print_error(&errors.into_response_error()),
    };
    if check {
        if formatted == source {
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!("kip fmt: the text is not in canonical form");
        return Ok(ExitCode::from(1));
    }
    match (write, file) {
        (true, Some(path)) if path.as_os_str() != "-" => {
            std::fs::write(&path, formatted)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        }
        _ => out(&formatted),
    }
    Ok(ExitCode::SUCCESS)
}

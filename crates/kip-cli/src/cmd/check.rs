//! `kip check`: parse and validate KIP text, without a nexus.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use crate::stdio::{out, print_error, read_input};

/// Prints `{"ok": true, "commands": N}`, or the KIP error (exit 1).
pub fn run(file: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let source = read_input(file.as_ref())?;
    match kip_lang::parse(&source) {
        Ok(commands) => {
            out(&format!(
                "{}\n",
                json!({"ok": true, "commands": commands.len()})
            ));
            Ok(ExitCode::SUCCESS)
        }
        Err(errors) => print_error(&errors.into_response_error()),
    }
}

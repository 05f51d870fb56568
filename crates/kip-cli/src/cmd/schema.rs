//! `kip schema`: `get_knowledge_schema` through
//! [`kip_api::Api::knowledge_schema`].

use std::path::PathBuf;
use std::process::ExitCode;

use crate::stdio::{out, print_error};

/// Prints `{full_bundle_schema, example_yaml}`, or the error (exit 1).
pub fn run(db: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    match crate::db::open_api(db, "kip-cli")?.knowledge_schema() {
        Ok(s) => {
            out(&format!("{}\n", serde_json::to_string_pretty(&s)?));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

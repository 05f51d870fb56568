//! `kip schema`: `get_knowledge_schema` through
//! [`kip_api::Api::knowledge_schema`]; `kip schema --map`: the `schema_map`
//! operation (the memory's shape).

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

/// Prints the schema map (`--map`), or the error (exit 1).
pub fn map(db: Option<PathBuf>, hubs: Option<u32>) -> anyhow::Result<ExitCode> {
    let api = crate::db::open_api(db, "kip-cli")?;
    let request = kip_api::SchemaMapRequest { hubs };
    match api.call(
        kip_api::Operation::SchemaMap,
        serde_json::to_value(request)?,
    ) {
        Ok(value) => {
            out(&format!("{value:#}\n"));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

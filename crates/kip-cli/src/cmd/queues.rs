//! The curator's queues on the command line. `kip health`: the memory's
//! health as JSON. `kip duplicates [--type T]… [--limit N]`: the duplicate candidates as
//! JSON Lines (`a`, `b`, `score`, `reasons`), best first; `kip duplicates
//! dismiss ID ID`: the pair is not the same and does not come back.
//! `kip diff --since ISO [--until ISO]`: what changed between two times, as
//! JSON (`added`, `changed`, `removed`, each element with `before` and
//! `after`).

use std::path::PathBuf;
use std::process::ExitCode;

use kip_api::{DiffRequest, DismissRequest, DuplicatesRequest, Operation};

use crate::stdio::{out, print_error};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    /// Only concepts of this type (repeatable).
    #[arg(long = "type", value_name = "TYPE")]
    types: Vec<String>,
    /// At most this many candidates, best first.
    #[arg(long, default_value_t = kip_api::DEFAULT_DUPLICATES)]
    limit: u32,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Remember that two concepts (`C:…`) are not the same.
    Dismiss { a: String, b: String },
}

pub fn run(db: Option<PathBuf>, args: Args) -> anyhow::Result<ExitCode> {
    let api = crate::db::open_api(db, "kip-cli")?;
    let answer = match args.action {
        Some(Action::Dismiss { a, b }) => api.call(
            Operation::DuplicatesDismiss,
            serde_json::to_value(DismissRequest { a, b })?,
        ),
        None => api.call(
            Operation::Duplicates,
            serde_json::to_value(DuplicatesRequest {
                types: (!args.types.is_empty()).then_some(args.types),
                limit: Some(args.limit),
            })?,
        ),
    };
    match answer {
        Ok(value) => {
            match value.get("candidates").and_then(|c| c.as_array()) {
                Some(list) => {
                    let mut text = String::new();
                    for c in list {
                        text += &serde_json::to_string(c)?;
                        text.push('\n');
                    }
                    out(&text);
                }
                None => out(&format!("{value}\n")),
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

/// The arguments of `kip diff`.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// From this time (ISO 8601, or a date, or a trace entry T:42).
    #[arg(long, value_name = "ISO")]
    since: String,
    /// Up to this time (default: now).
    #[arg(long, value_name = "ISO")]
    until: Option<String>,
    /// At most this many elements per list.
    #[arg(long)]
    limit: Option<u32>,
}

/// `kip diff`: the `diff` operation's answer, as JSON.
pub fn diff(db: Option<PathBuf>, args: DiffArgs) -> anyhow::Result<ExitCode> {
    let api = crate::db::open_api(db, "kip-cli")?;
    let request = DiffRequest {
        since: args.since,
        until: args.until,
        limit: args.limit,
    };
    match api.call(Operation::Diff, serde_json::to_value(request)?) {
        Ok(value) => {
            out(&format!("{value:#}\n"));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

/// `kip health`: the `health` operation's answer, as JSON.
pub fn health(db: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let api = crate::db::open_api(db, "kip-cli")?;
    match api.call(Operation::Health, serde_json::Value::Null) {
        Ok(value) => {
            out(&format!("{value:#}\n"));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

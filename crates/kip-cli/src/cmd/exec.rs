//! `kip exec`: an `execute_kip` request through [`kip_api::Api::execute`]
//! (`--as-of`: its reads on the nexus as of a past time).

use std::path::PathBuf;
use std::process::ExitCode;

use kip_api::ExecuteRequest;
use serde_json::Value as Json;

use crate::stdio::{out, read_input};

/// The arguments of `kip exec`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The command text, or `-` for standard input.
    pub command: Option<String>,
    /// Parameters for `:name` placeholders, as a JSON object.
    #[arg(long, value_name = "JSON")]
    pub params: Option<String>,
    /// Validate (KQL/META) or preview in an aborted transaction (KML).
    #[arg(long)]
    pub dry_run: bool,
    /// Also print how a FIND was evaluated and, if it found nothing, why.
    #[arg(long)]
    pub explain: bool,
    /// Read the nexus as of a past time (ISO 8601, e.g. 2026-11-28T09:30:00Z, or a date) or trace entry (T:42), rebuilt from the trace's before-images; writes are refused.
    #[arg(long, value_name = "ISO")]
    pub as_of: Option<String>,
    /// A full execute_kip arguments object from FILE, or `-` for standard input.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["command", "params", "dry_run", "explain", "as_of"])]
    pub request: Option<PathBuf>,
    /// Apply this write at most once: repeated with the same key and request, it prints the first response without applying again (keys are kept 24 hours, KIP_IDEMPOTENCY_HOURS).
    #[arg(long, value_name = "KEY")]
    pub idempotency_key: Option<String>,
}

/// Prints the KIP response; exit 1 when it carries an error (for a batch:
/// when any of its results does).
pub fn run(db: Option<PathBuf>, mut args: Args) -> anyhow::Result<ExitCode> {
    let key = args.idempotency_key.take();
    let request = request(args)?;
    let batch = request.commands.is_some();
    let api = crate::db::open_api(db, "kip-cli")?;
    let response = match key {
        Some(key) => match api.execute_once(request, &key) {
            Ok(response) => response,
            Err(e) => return crate::stdio::print_error(&e),
        },
        None => api.execute(request),
    };
    out(&format!("{}\n", serde_json::to_string_pretty(&response)?));
    Ok(if kip_api::response_failed(&response, batch) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The request: the `--request` file as it is, or one command with its
/// flags.
fn request(args: Args) -> anyhow::Result<ExecuteRequest> {
    if let Some(file) = args.request {
        let text = read_input(Some(&file))?;
        return serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("invalid execute_kip request: {e}"));
    }
    let text = match args.command.as_deref() {
        None | Some("-") => read_input(None)?,
        Some(t) => t.to_owned(),
    };
    let parameters = match args.params {
        Some(p) => match serde_json::from_str::<Json>(&p) {
            Ok(Json::Object(map)) => Some(map),
            Ok(_) => anyhow::bail!("--params must be a JSON object"),
            Err(e) => anyhow::bail!("--params is not valid JSON: {e}"),
        },
        None => None,
    };
    Ok(ExecuteRequest {
        command: Some(text),
        commands: None,
        parameters,
        dry_run: args.dry_run.then_some(true),
        explain: args.explain.then_some(true),
        reason: None,
        as_of: args.as_of,
    })
}

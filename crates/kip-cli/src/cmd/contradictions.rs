//! `kip contradictions [--type T]… [--limit N]`: the contradictions queue
//! as a JSON array (subjects with more than one live object of a
//! functional predicate, each side with its provenance). `kip
//! contradictions resolve --keep P:… --retire P:… [--reason R]
//! [--dry-run]`: keeps one side and marks the others superseded, one
//! traced write (its KIP text and the engine's result printed as JSON).

use std::path::PathBuf;
use std::process::ExitCode;

use kip_api::{ContradictionResolveRequest, ContradictionsRequest, Operation};

use crate::stdio::{out, print_error};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    /// Only subjects of this concept type (repeatable).
    #[arg(long = "type", value_name = "TYPE")]
    types: Vec<String>,
    /// At most this many contradictions.
    #[arg(long, default_value_t = kip_api::DEFAULT_CONTRADICTIONS)]
    limit: u32,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Keep one link (`P:…`) and mark the others of its subject and
    /// predicate superseded; or keep one side of an attribute
    /// contradiction (`attribute:C:…/KEY#earlier` or `#current`) and
    /// record the other in the element's `superseded_values`.
    Resolve {
        /// The link (or attribute side) kept.
        #[arg(long)]
        keep: String,
        /// A link (or the other attribute side) retired (repeatable).
        #[arg(long, required = true)]
        retire: Vec<String>,
        /// Why (recorded as `superseded_reason` and in the trace).
        #[arg(long)]
        reason: Option<String>,
        /// Print what would change, and change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

pub fn run(db: Option<PathBuf>, args: Args) -> anyhow::Result<ExitCode> {
    let api = crate::db::open_api(db, "kip-cli")?;
    let answer = match args.action {
        Some(Action::Resolve {
            keep,
            retire,
            reason,
            dry_run,
        }) => api.call(
            Operation::ContradictionResolve,
            serde_json::to_value(ContradictionResolveRequest {
                keep,
                retire,
                reason,
                dry_run: Some(dry_run),
            })?,
        ),
        None => api
            .call(
                Operation::Contradictions,
                serde_json::to_value(ContradictionsRequest {
                    types: (!args.types.is_empty()).then_some(args.types),
                    limit: Some(args.limit),
                })?,
            )
            .map(|mut v| v["contradictions"].take()),
    };
    match answer {
        Ok(value) => {
            out(&format!("{value:#}\n"));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

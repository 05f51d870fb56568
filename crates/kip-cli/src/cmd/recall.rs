//! `kip recall TEXT [--mode M] [--limit N]`: what an agent's SEARCH for
//! TEXT would recall, as JSON (`results`, each with its score's `parts`
//! and its one-hop `context`); `kip recall --pin ID` / `--demote ID
//! [--factor F]` act on a recalled concept as a traced, revertible write
//! (`--dry-run` previews it). Everything goes through [`kip_api::Api`]'s
//! `recall` and `recall_action` operations.

use std::path::PathBuf;
use std::process::ExitCode;

use kip_api::Operation;
use serde_json::json;

use crate::stdio::{out, print_error};

/// The arguments of `kip recall`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What the agent would search for.
    #[arg(required_unless_present_any = ["pin", "demote"])]
    pub text: Option<String>,
    /// keyword, semantic or hybrid (default: SEARCH's, hybrid where the nexus searches by meaning, else keyword).
    #[arg(long, value_parser = ["keyword", "semantic", "hybrid"])]
    pub mode: Option<String>,
    /// At most this many results.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Pin a concept (metadata pinned: true) as a traced write.
    #[arg(long, value_name = "ID", conflicts_with_all = ["text", "demote"])]
    pub pin: Option<String>,
    /// Demote a concept (memory_strength times --factor) as a traced write.
    #[arg(long, value_name = "ID", conflicts_with = "text")]
    pub demote: Option<String>,
    /// Demote's factor, above 0 and below 1.
    #[arg(long, requires = "demote")]
    pub factor: Option<f64>,
    /// Preview the pin or demote: nothing changes.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(db: Option<PathBuf>, args: Args) -> anyhow::Result<ExitCode> {
    let api = crate::db::open_api(db, "kip-cli")?;
    let action = match (&args.pin, &args.demote) {
        (Some(id), _) => Some(("pin", id)),
        (None, Some(id)) => Some(("demote", id)),
        (None, None) => None,
    };
    let answer = match action {
        Some((action, id)) => {
            let mut body = json!({"action": action, "id": id, "dry_run": args.dry_run});
            if let Some(f) = args.factor {
                body["factor"] = json!(f);
            }
            api.call(Operation::RecallAction, body)
        }
        None => {
            let mut body = json!({"text": args.text.unwrap_or_default()});
            if let Some(m) = args.mode {
                body["mode"] = json!(m);
            }
            if let Some(l) = args.limit {
                body["limit"] = json!(l);
            }
            api.call(Operation::Recall, body)
        }
    };
    match answer {
        Ok(value) => {
            out(&format!("{value:#}\n"));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

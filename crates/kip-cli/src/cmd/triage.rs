//! `kip triage`: decay triage on the command line (issue 31 §5).
//! `kip triage [expired|fading|untouched] [--below X] [--days N] [--offset N]
//! [--limit N]` prints one page of a list as JSON; `kip triage
//! pin|renew|archive|delete ID… [--all-of LIST] [--dry-run]` runs a bulk
//! action (or its preview) as one traced write and prints what it did, with
//! the trace entry that reverts it.

use std::path::PathBuf;
use std::process::ExitCode;

use kip_api::Operation;
use serde_json::{Map, Value as Json, json};

use crate::stdio::{out, print_error};

const LISTS: [&str; 3] = ["expired", "fading", "untouched"];
const ACTIONS: [&str; 4] = ["pin", "renew", "archive", "delete"];

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A list (expired, fading, untouched; default expired) or an action
    /// (pin, renew, archive, delete) followed by the ids it acts on.
    what: Option<String>,
    /// The memories an action takes (`C:…`, `P:…`).
    ids: Vec<String>,
    /// Fading: memory_strength below this (default 0.2).
    #[arg(long)]
    below: Option<f64>,
    /// Untouched: not written for this many days (default 90; reads do not count).
    #[arg(long)]
    days: Option<u32>,
    /// Also list (or, with --all-of, act on) pinned memories.
    #[arg(long)]
    include_pinned: bool,
    /// Skip this many memories of the list.
    #[arg(long)]
    offset: Option<usize>,
    /// At most this many memories of the list (default 50, at most 1000).
    #[arg(long)]
    limit: Option<usize>,
    /// An action: also every memory of this list (with --below / --days).
    #[arg(long, value_name = "LIST", value_parser = LISTS)]
    all_of: Option<String>,
    /// Preview the action: the counts and the diff, nothing changed.
    #[arg(long)]
    dry_run: bool,
    /// Renew: the new memory_strength (default 1.0).
    #[arg(long)]
    strength: Option<f64>,
    /// Renew: expires_at this many days from now (default: expires_at removed).
    #[arg(long, value_name = "DAYS")]
    expires_in_days: Option<f64>,
    /// Why, for the trace.
    #[arg(long)]
    message: Option<String>,
}

/// The list request's body: `list` and the settings given.
fn query(args: &Args, list: &str) -> Json {
    let mut q = Map::new();
    q.insert("list".into(), json!(list));
    let mut put = |k: &str, v: Option<Json>| {
        if let Some(v) = v {
            q.insert(k.into(), v);
        }
    };
    put("below", args.below.map(|b| json!(b)));
    put("days", args.days.map(|d| json!(d)));
    put("include_pinned", args.include_pinned.then_some(json!(true)));
    Json::Object(q)
}

pub fn run(db: Option<PathBuf>, args: Args) -> anyhow::Result<ExitCode> {
    let what = args.what.clone().unwrap_or_else(|| "expired".to_owned());
    let (operation, body) = if LISTS.contains(&what.as_str()) {
        if !args.ids.is_empty() {
            anyhow::bail!(
                "`kip triage {what}` lists and takes no ids; act on them with `kip triage pin|renew|archive|delete ID…`"
            );
        }
        let mut q = query(&args, &what);
        q["offset"] = json!(args.offset.unwrap_or(0));
        q["limit"] = json!(args.limit.unwrap_or(50));
        (Operation::Triage, q)
    } else if ACTIONS.contains(&what.as_str()) {
        if args.ids.is_empty() && args.all_of.is_none() {
            anyhow::bail!("`kip triage {what}` needs ids (C:… / P:…) or --all-of LIST");
        }
        let mut body = json!({
            "action": what,
            "ids": args.ids,
            "dry_run": args.dry_run,
        });
        if let Some(list) = &args.all_of {
            body["all_of"] = query(&args, list);
        }
        for (k, v) in [
            ("strength", args.strength.map(|s| json!(s))),
            ("expires_in_days", args.expires_in_days.map(|d| json!(d))),
            ("message", args.message.as_ref().map(|m| json!(m))),
        ] {
            if let Some(v) = v {
                body[k] = v;
            }
        }
        (Operation::TriageApply, body)
    } else {
        anyhow::bail!(
            "`{what}` is neither a list ({}) nor an action ({})",
            LISTS.join(", "),
            ACTIONS.join(", ")
        );
    };
    let api = crate::db::open_api(db, "kip-cli")?;
    match api.call(operation, body) {
        Ok(value) => {
            out(&format!("{value:#}\n"));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

//! `kip search TEXT`: a `SEARCH CONCEPT` request through
//! [`kip_api::Api::execute`], the text passed as a parameter (never spliced
//! into the command), printed as the KIP response.

use std::path::PathBuf;
use std::process::ExitCode;

use kip_api::ExecuteRequest;
use serde_json::{Map, Value as Json, json};

use crate::stdio::out;

/// The arguments of `kip search`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to look for: a name, a paraphrase, a question, in any language.
    pub text: String,
    /// keyword, semantic or hybrid (default: hybrid where the nexus searches by meaning, else keyword).
    #[arg(long, value_parser = ["keyword", "semantic", "hybrid"])]
    pub mode: Option<String>,
    /// Only concepts of this type (SEARCH … WITH TYPE).
    #[arg(long = "type", value_name = "TYPE")]
    pub with_type: Option<String>,
    /// Drop hits whose _score is below this (0 to 1).
    #[arg(long)]
    pub threshold: Option<f64>,
    /// At most this many hits.
    #[arg(long, default_value_t = 10)]
    pub limit: u64,
    /// Search propositions instead of concepts (by keyword).
    #[arg(long)]
    pub propositions: bool,
}

/// Prints the response; exit 1 when it carries an error.
pub fn run(db: Option<PathBuf>, args: Args) -> anyhow::Result<ExitCode> {
    let mut command = String::from(if args.propositions {
        "SEARCH PROPOSITION :text"
    } else {
        "SEARCH CONCEPT :text"
    });
    let mut parameters = Map::new();
    parameters.insert("text".into(), json!(args.text));
    let mut clause = |keyword: &str, name: &str, value: Json| {
        command.push_str(&format!(" {keyword} :{name}"));
        parameters.insert(name.into(), value);
    };
    if let Some(t) = args.with_type {
        clause("WITH TYPE", "type", json!(t));
    }
    if let Some(m) = args.mode {
        clause("MODE", "mode", json!(m));
    }
    if let Some(t) = args.threshold {
        clause("THRESHOLD", "threshold", json!(t));
    }
    clause("LIMIT", "limit", json!(args.limit));
    let api = crate::db::open_api(db, "kip-cli")?;
    let response = api.execute(ExecuteRequest {
        command: Some(command),
        parameters: Some(parameters),
        ..ExecuteRequest::default()
    });
    out(&format!("{}\n", serde_json::to_string_pretty(&response)?));
    Ok(if kip_api::response_failed(&response, false) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

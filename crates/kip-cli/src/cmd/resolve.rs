//! `kip resolve`: a concept type's logic properties (BRIEF §8) computed for
//! some of its instances, through [`kip_api::Api::resolve_logic_properties`].
//! Parameters come from `--params`, else from the LLM of `KIP_LLM_URL`
//! (with `KIP_LLM_MODEL`, `KIP_LLM_API_KEY`), else the answer lists what is
//! missing (`MISSING_INPUT_PARAMS`, exit 1).

use std::path::PathBuf;
use std::process::ExitCode;

use kip_api::{ApiError, Identity, ResolveOptions, ResolveRequest};

use crate::stdio::{out, print_error};

/// The arguments of `kip resolve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The concept type.
    #[arg(long = "type", value_name = "TYPE")]
    pub ty: String,
    /// An instance by name (or id, C:12); repeatable.
    #[arg(long = "instance", value_name = "NAME", required = true)]
    pub instances: Vec<String>,
    /// A logic property of the type; repeatable.
    #[arg(long = "property", value_name = "P", required = true)]
    pub properties: Vec<String>,
    /// Parameters per property: {"<property>": {"<param>": value}}.
    #[arg(long, value_name = "JSON")]
    pub params: Option<String>,
    /// The question, for the LLM.
    #[arg(long, value_name = "TEXT")]
    pub query: Option<String>,
    /// Additional context for the LLM (facts, constraints, time hints).
    #[arg(long, value_name = "TEXT")]
    pub context: Option<String>,
    /// "Now" in ms since the epoch (default: the clock).
    #[arg(long, value_name = "MS")]
    pub now_ms: Option<i64>,
    /// Also print debug: the parameters used, timings, span ids.
    #[arg(long)]
    pub debug: bool,
}

/// Prints `{"datas": […], "debug"?}`, or `{"error": …}` (exit 1).
pub fn run(db: Option<PathBuf>, args: Args) -> anyhow::Result<ExitCode> {
    let dynamic_params = match &args.params {
        None => None,
        Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(map)) => Some(map),
            Ok(_) | Err(_) => anyhow::bail!(
                "--params must be a JSON object of parameters per property, e.g. '{{\"indications_added\": {{\"instant\": true, \"start\": 1704067200000, \"end\": 1735689600000}}}}'"
            ),
        },
    };
    let request = ResolveRequest {
        kn_id: String::new(),
        ot_id: args.ty,
        query: args.query.unwrap_or_default(),
        unique_identities: args
            .instances
            .into_iter()
            .map(|i| {
                // `C:12` is an id; anything else a name.
                if i.strip_prefix("C:")
                    .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                {
                    Identity {
                        id: Some(i),
                        name: None,
                    }
                } else {
                    Identity::named(i)
                }
            })
            .collect(),
        properties: args.properties,
        additional_context: args.context.unwrap_or_default(),
        dynamic_params,
        now_ms: args.now_ms,
        options: ResolveOptions {
            return_debug: args.debug,
            ..ResolveOptions::default()
        },
    };
    let api = crate::db::open_api(db, "kip-cli")?;
    match api.resolve_logic_properties(request) {
        Ok(answer) => {
            out(&format!("{}\n", serde_json::to_string_pretty(&answer)?));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&ApiError::from(e)),
    }
}

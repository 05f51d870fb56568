//! `kip bench`: where the benchmark nexus lives and where the report goes;
//! the generated graph and the workloads are [`crate::bench`]'s.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::stdio::out;

/// Builds the graph (once per `db`), measures, prints the table and, with
/// `json`, writes the JSON report.
pub fn run(
    db: Option<PathBuf>,
    concepts: u64,
    propositions: u64,
    iterations: usize,
    json: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let dir = match db {
        Some(d) => d,
        None => std::env::temp_dir().join(format!("kip-bench-{concepts}-{propositions}")),
    };
    eprintln!("bench: nexus at {}", dir.display());
    let report = crate::bench::bench(&dir, concepts, propositions, iterations)?;
    out(&crate::bench::table(&report));
    if let Some(file) = json {
        std::fs::write(&file, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

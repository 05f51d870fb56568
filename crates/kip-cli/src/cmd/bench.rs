//! `kip bench`: where the benchmark nexus lives and where the report goes;
//! the generated graph and the workloads are [`crate::bench`]'s, the runs at
//! several sizes (`--scale`) [`crate::bench::scale`]'s.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::stdio::out;

/// `kip bench`'s arguments.
pub struct Args {
    pub concepts: u64,
    pub propositions: u64,
    pub iterations: usize,
    pub json: Option<PathBuf>,
    /// Sizes in propositions: run at each, in child processes.
    pub scale: Vec<u64>,
    /// With `scale`: the folder of the stores, one per size.
    pub db_root: Option<PathBuf>,
    /// Only time opening the nexus of `--db` (bench's own child process).
    pub measure_open: bool,
}

/// Builds the graph (once per `db`), measures, prints the table and, with
/// `json`, writes the JSON report; with `scale`, does so at each size and
/// prints how each cost grows.
pub fn run(db: Option<PathBuf>, args: Args) -> anyhow::Result<ExitCode> {
    if args.measure_open {
        let dir = db.ok_or_else(|| anyhow::anyhow!("--measure-open needs --db"))?;
        let probe = crate::bench::measure_open(&dir)?;
        out(&format!("{probe}\n"));
        return Ok(ExitCode::SUCCESS);
    }
    let report = if args.scale.is_empty() {
        let dir = match db {
            Some(d) => d,
            None => std::env::temp_dir()
                .join(format!("kip-bench-{}-{}", args.concepts, args.propositions)),
        };
        eprintln!("bench: nexus at {}", dir.display());
        let report = crate::bench::bench(&dir, args.concepts, args.propositions, args.iterations)?;
        out(&crate::bench::table(&report));
        report
    } else {
        anyhow::ensure!(
            db.is_none(),
            "--scale puts one store per size under --db-root, not --db"
        );
        let root = args
            .db_root
            .unwrap_or_else(|| std::env::temp_dir().join("kip-bench-scale"));
        eprintln!("bench: stores under {}", root.display());
        let report = crate::bench::scale::run(&args.scale, &root, args.iterations)?;
        out(&format!(
            "== how cost grows ==\n{}",
            crate::bench::scale::table(&report)
        ));
        report
    };
    if let Some(file) = args.json {
        std::fs::write(&file, serde_json::to_string_pretty(&report)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

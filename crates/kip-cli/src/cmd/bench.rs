//! `kip bench`: where the benchmark nexus lives and where the report goes;
//! the generated graph and the workloads are [`crate::bench`]'s, the runs at
//! several sizes (`--scale`) [`crate::bench::scale`]'s.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::stdio::out;

/// `kip bench`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Concepts in the generated graph.
    #[arg(long, default_value_t = 200_000)]
    pub concepts: u64,
    /// Propositions in the generated graph.
    #[arg(long, default_value_t = 1_000_000)]
    pub propositions: u64,
    /// Runs of each workload.
    #[arg(long, default_value_t = 200)]
    pub iterations: usize,
    /// Also write the JSON report to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Run at each size (propositions, over a fifth as many concepts), each in a child process, and print how every cost grows.
    #[arg(long, value_name = "P,P,…", value_delimiter = ',', conflicts_with_all = ["concepts", "propositions"])]
    pub scale: Vec<u64>,
    /// With --scale: the folder holding one store per size (built once, reused after; default: the temporary folder's kip-bench-scale).
    #[arg(long, value_name = "DIR", requires = "scale")]
    pub db_root: Option<PathBuf>,
    /// Run only the decay sweep on the existing nexus of --db (it writes: run it on a copy of a built store).
    #[arg(long, conflicts_with_all = ["scale"])]
    pub sweep_only: bool,
    /// Time opening the nexus of --db and print it as JSON (run by bench itself in a child process).
    #[arg(long, hide = true, conflicts_with_all = ["scale", "json"])]
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
    if args.sweep_only {
        let dir = db.ok_or_else(|| anyhow::anyhow!("--sweep-only needs --db"))?;
        let report = crate::bench::sweep_only(&dir)?;
        out(&crate::bench::table(&report));
        if let Some(file) = args.json {
            std::fs::write(&file, serde_json::to_string_pretty(&report)?)?;
        }
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

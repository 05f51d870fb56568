//! `kip bench`: a deterministic generated graph and the workloads of BRIEF §6,
//! measured through the public `execute_kip` path (parse, bind, plan,
//! execute, shape), printing a table and JSON with p50 / p95, the import's
//! rate and memory, the store's size on disk and the time to open it.
//!
//! This file is the part that drives the engine (the one place besides
//! `db.rs` that names `Nexus`); the graph is [`graph`]'s, the queries
//! [`workloads`]'s, the decay sweep [`sweep`]'s, the printed table [`report`]'s, and `--scale` (one run
//! per size, each in a child `kip`, and how cost grows) [`scale`]'s.

mod graph;
mod report;
pub mod scale;
mod sweep;
mod workloads;

use std::path::{Path, PathBuf};
use std::time::Instant;

use kip_capsule::ImportOptions;
use kip_nexus::{Context, ExecuteKip, Nexus, Origin};
use serde_json::{Value as Json, json};

use graph::{Rng, TYPES};
use workloads::{DRY_RUN_WRITE, MakeQuery};

pub use report::table;

/// How many fresh `kip` processes open the store to time the opening.
const OPEN_RUNS: usize = 3;

/// `<dir><suffix>` beside the nexus folder `dir` (the generated capsules,
/// the import's recorded figures).
fn beside(dir: &Path, suffix: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map_or_else(|| "nexus".into(), |n| n.to_string_lossy().into_owned());
    dir.with_file_name(format!("{name}{suffix}"))
}

/// Where a build records its import figures, so a later run that reuses
/// the store (and `--scale`) still reports them.
fn import_record(dir: &Path) -> PathBuf {
    beside(dir, ".bench-import.json")
}

/// Builds (or reuses) the generated graph in `dir` and measures: the import
/// (when it builds), the store's size, the time to open it, the workloads.
pub fn bench(
    dir: &Path,
    concepts: u64,
    propositions: u64,
    iterations: usize,
) -> anyhow::Result<Json> {
    let per_type = (concepts / TYPES.len() as u64).max(1);
    let mut report = serde_json::Map::new();
    if dir.join("data.mdb").exists() {
        match std::fs::read(import_record(dir)) {
            Ok(bytes) => {
                let mut import: Json = serde_json::from_slice(&bytes)?;
                if import["propositions"] != propositions
                    || import["concepts"] != per_type * TYPES.len() as u64
                {
                    eprintln!(
                        "bench: {} was built with {} concepts and {} propositions; its workloads draw from --concepts {concepts}",
                        dir.display(),
                        import["concepts"],
                        import["propositions"]
                    );
                }
                import["reused"] = json!(true);
                report.insert("import".into(), import);
            }
            Err(_) => eprintln!(
                "bench: reusing {} (no import figures recorded for it)",
                dir.display()
            ),
        }
    } else {
        let nexus = Nexus::open(dir).map_err(|e| anyhow::anyhow!("{}", e.message))?;
        let import = import(&nexus, dir, per_type, propositions)?;
        // Closed before the store is measured and opened again.
        drop(nexus);
        std::fs::write(import_record(dir), serde_json::to_vec_pretty(&import)?)?;
        report.insert("import".into(), import);
    }
    let mut store = store_size(dir)?;
    store["packed_bytes"] = json!(packed_size(dir)?);
    report.insert("store".into(), store);
    let mut open = open_in_children(dir)?;
    let started = Instant::now();
    let nexus = Nexus::open(dir).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    open["in_process_open_ms"] = json!(round3(started.elapsed().as_secs_f64() * 1000.0));
    report.insert("open".into(), open);
    let memory = MemoryWatch::start();
    let table = measure(&nexus, workloads::workloads(per_type), iterations)?;
    let (peak_anon, _) = memory.stop();
    report.insert("workloads".into(), Json::Array(table));
    if let Some(mb) = peak_anon {
        report.insert("workloads_peak_rss_anon_mb".into(), json!(mb));
    }
    if let Some(mb) = engine_memory_mb() {
        report.insert("engine_memory_mb".into(), json!(mb));
    }
    // Last: it writes every link (the read workloads saw the graph as built).
    report.insert("decay_sweep".into(), sweep::run(&nexus)?);
    report.insert(
        "graph".into(),
        json!({"concepts": per_type * TYPES.len() as u64, "propositions_requested": propositions}),
    );
    Ok(Json::Object(report))
}

/// Runs the decay sweep alone on the existing nexus in `dir` (to measure
/// it again on a copy of a built store without the rest of the run).
pub fn sweep_only(dir: &Path) -> anyhow::Result<Json> {
    let nexus = Nexus::open_existing(dir).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    Ok(json!({"decay_sweep": sweep::run(&nexus)?}))
}

/// Imports the generated graph (schema, concepts, then links) and says how
/// fast and with how much memory. The capsules are written to files in
/// `<dir>-capsules` first (one at a time, so the benchmark never holds them
/// all) and imported as `kip import` would, then removed (kept when
/// `KIP_BENCH_KEEP_CAPSULES` is set).
fn import(nexus: &Nexus, dir: &Path, per_type: u64, propositions: u64) -> anyhow::Result<Json> {
    let folder = beside(dir, "-capsules");
    std::fs::create_dir_all(&folder)?;
    let memory = MemoryWatch::start();
    let mut schema = Vec::new();
    graph::to_files(&folder, "0-schema", &mut schema)(graph::schema_capsule())?;
    import_files(nexus, &schema, "schema")?;
    let mut concepts = Vec::new();
    graph::concept_capsules(
        per_type,
        20_000,
        &mut graph::to_files(&folder, "1-concepts", &mut concepts),
    )?;
    let started = Instant::now();
    import_files(nexus, &concepts, "concept")?;
    let concept_secs = started.elapsed().as_secs_f64();
    let mut rng = Rng(0x5EED_CAFE);
    let mut links = Vec::new();
    graph::link_capsules(
        per_type,
        propositions,
        20_000,
        &mut rng,
        &mut graph::to_files(&folder, "2-links", &mut links),
    )?;
    let started = Instant::now();
    import_files(nexus, &links, "link")?;
    let secs = started.elapsed().as_secs_f64();
    let (peak_anon, hwm) = memory.stop();
    // `KIP_BENCH_KEEP_CAPSULES=1` keeps the files, to time `kip import`
    // on them or to compare builds on the same input.
    if std::env::var_os("KIP_BENCH_KEEP_CAPSULES").is_none() {
        std::fs::remove_dir_all(&folder)?;
    }
    Ok(json!({
        "concepts": per_type * TYPES.len() as u64,
        "concept_seconds": concept_secs,
        "propositions": propositions,
        "proposition_seconds": secs,
        "propositions_per_second": propositions as f64 / secs,
        "peak_rss_anon_mb": peak_anon,
        "vm_hwm_mb": hwm,
    }))
}

/// Imports capsule files through the import pipeline every face uses
/// (`kip import`: read, parse, check, apply; traced), stopping at the first
/// file that fails.
fn import_files(nexus: &Nexus, paths: &[PathBuf], label: &str) -> anyhow::Result<()> {
    let origin = Origin::new("bench");
    let options = ImportOptions {
        originator: Some("bench"),
        ..ImportOptions::default()
    };
    let mut failed = None;
    let mut done = 0;
    kip_capsule::import_paths_with(nexus, paths, &origin, &options, |report| {
        done += 1;
        if !report.is_imported() && failed.is_none() {
            failed = Some(report.error_lines().join("\n"));
        }
        if done % 5 == 0 {
            eprintln!("bench: imported {done} of {} {label} capsules", paths.len());
        }
    });
    match failed {
        Some(e) => anyhow::bail!("bench: a generated capsule failed to import: {e}"),
        None => Ok(()),
    }
}

/// The store's size on disk: `data.mdb`'s length and the bytes the file
/// system allocated for it (`st_blocks * 512`; the two differ when the file
/// is sparse, as a map grown ahead of its data is).
fn store_size(dir: &Path) -> anyhow::Result<Json> {
    let meta = std::fs::metadata(dir.join("data.mdb"))?;
    #[cfg(unix)]
    let allocated = {
        use std::os::unix::fs::MetadataExt as _;
        json!(meta.blocks() * 512)
    };
    #[cfg(not(unix))]
    let allocated = Json::Null;
    Ok(json!({"file_bytes": meta.len(), "allocated_bytes": allocated}))
}

/// The size of the packed copy `kip compact` would put in place (every
/// database in key order, full pages, no free pages): written beside the
/// store, measured, removed.
fn packed_size(dir: &Path) -> anyhow::Result<u64> {
    let probe = beside(dir, ".packed");
    let _ = std::fs::remove_dir_all(&probe);
    let bytes = Nexus::open(dir)
        .and_then(|nexus| nexus.packed_copy(&probe))
        .map_err(|e| anyhow::anyhow!("{}", e.message));
    let _ = std::fs::remove_dir_all(&probe);
    bytes
}

/// Times opening the store in fresh `kip` processes (`kip bench --db DIR
/// --measure-open`), after the importing nexus is closed: what every
/// `kip exec`, `kip serve` or the app pays to start, without the benchmark
/// process's own state (the importer's heap, the environment LMDB already
/// holds open in this process). The page cache is as the import left it.
fn open_in_children(dir: &Path) -> anyhow::Result<Json> {
    let exe = std::env::current_exe()?;
    let mut runs = Vec::with_capacity(OPEN_RUNS);
    let mut rss = Vec::with_capacity(OPEN_RUNS);
    for _ in 0..OPEN_RUNS {
        let out = std::process::Command::new(&exe)
            .arg("--db")
            .arg(dir)
            .args(["bench", "--measure-open"])
            .stderr(std::process::Stdio::inherit())
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "bench: opening {} in a child process failed ({})",
            dir.display(),
            out.status
        );
        let probe: Json = serde_json::from_slice(&out.stdout)?;
        runs.push(probe["open_ms"].as_f64().unwrap_or(f64::NAN));
        if let Some(mb) = probe["rss_anon_mb"].as_f64() {
            rss.push(mb);
        }
    }
    let mut sorted = runs.clone();
    sorted.sort_by(f64::total_cmp);
    rss.sort_by(f64::total_cmp);
    Ok(json!({
        "open_ms": percentile(&sorted, 0.5),
        "open_runs_ms": runs,
        "rss_anon_after_open_mb": rss.get(rss.len() / 2),
    }))
}

/// The child side of [`open_in_children`]: opens the existing nexus in
/// `dir`, timed, and answers `{"open_ms", "rss_anon_mb"}` (the memory the
/// opened nexus holds).
pub fn measure_open(dir: &Path) -> anyhow::Result<Json> {
    let started = Instant::now();
    let nexus = Nexus::open_existing(dir).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let rss = engine_memory_mb();
    drop(nexus);
    Ok(json!({"open_ms": round3(ms), "rss_anon_mb": rss}))
}

/// Runs one command through `execute_kip`, optionally as a dry run
/// (executed exactly, then aborted: no commit, so no disk sync).
fn run_with(nexus: &Nexus, text: &str, dry_run: bool) -> anyhow::Result<Json> {
    let mut request = ExecuteKip::command(text);
    if dry_run {
        request.dry_run = Some(true);
    }
    let r = nexus.execute(&request, &Context::new("bench"));
    if let Some(e) = r.get("error") {
        anyhow::bail!("{text:.200}: {e}");
    }
    Ok(r)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn round3(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

/// Samples the process's anonymous memory while an import runs (LMDB's
/// pages are file-backed and are not counted) and keeps the peak.
struct MemoryWatch {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    sampler: std::thread::JoinHandle<Option<f64>>,
}

impl MemoryWatch {
    fn start() -> MemoryWatch {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let sampler = std::thread::spawn(move || {
            let mut peak: Option<f64> = None;
            loop {
                if let Some(mb) = status_mb("RssAnon:") {
                    peak = Some(peak.map_or(mb, |p| p.max(mb)));
                }
                if flag.load(std::sync::atomic::Ordering::Relaxed) {
                    return peak;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        });
        MemoryWatch { stop, sampler }
    }

    /// The peak RssAnon seen and the kernel's peak resident set (`VmHWM`,
    /// LMDB's mapped pages included), in MB.
    fn stop(self) -> (Option<f64>, Option<f64>) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let peak = self.sampler.join().ok().flatten();
        (peak, status_mb("VmHWM:"))
    }
}

/// Runs each workload `iterations` times and reports p50 / p95 against its
/// budget.
fn measure(
    nexus: &Nexus,
    mut workloads: Vec<(&'static str, MakeQuery, f64)>,
    iterations: usize,
) -> anyhow::Result<Vec<Json>> {
    let mut rng = Rng(42);
    let mut table = Vec::new();
    for (label, make, budget) in &mut workloads {
        let mut times = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            let text = make(&mut rng);
            let started = Instant::now();
            run_with(nexus, &text, *label == DRY_RUN_WRITE)?;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(f64::total_cmp);
        let (p50, p95) = (percentile(&times, 0.5), percentile(&times, 0.95));
        table.push(json!({
            "workload": label,
            "iterations": iterations,
            "p50_ms": round3(p50),
            "p95_ms": round3(p95),
            "budget_p50_ms": if budget.is_nan() { Json::Null } else { json!(budget) },
            "within_budget": if budget.is_nan() { Json::Null } else { json!(p50 <= *budget) },
        }));
    }
    Ok(table)
}

/// Anonymous memory is what the engine itself holds; LMDB's pages are
/// file-backed and are not counted. `None` off Linux.
fn engine_memory_mb() -> Option<f64> {
    status_mb("RssAnon:")
}

/// A `kB` line of `/proc/self/status`, in MB. `None` off Linux.
fn status_mb(key: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = status.lines().find_map(|l| l.strip_prefix(key))?;
    let kb: f64 = kb.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some((kb / 1024.0).round())
}

//! `kip bench`: a deterministic generated graph and the workloads of BRIEF §6,
//! measured through the public `execute_kip` path (parse, bind, plan,
//! execute, shape), printing a table and JSON with p50 / p95.
//!
//! The graph: four concept types (Drug, Symptom, Gene, Disease) of
//! `concepts / 4` instances each, half of them with Chinese names, and
//! `propositions` links over six predicates drawn from a fixed-seed
//! generator, so two runs build the same graph.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use kip_capsule::ImportOptions;
use kip_nexus::{Context, ExecuteKip, Nexus, Origin};
use serde_json::{Value as Json, json};

/// A small deterministic generator (xorshift64*), so runs are comparable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const TYPES: [&str; 4] = ["Drug", "Symptom", "Gene", "Disease"];
const CJK: [&str; 4] = ["药物", "症状", "基因", "疾病"];
/// (predicate, subject type index, object type index)
const PREDICATES: [(&str, usize, usize); 6] = [
    ("treats", 0, 3),
    ("has_side_effect", 0, 1),
    ("interacts_with", 0, 0),
    ("associated_with", 2, 3),
    ("presents_with", 3, 1),
    ("related_to", 3, 3),
];

fn name(type_index: usize, i: u64) -> String {
    if i.is_multiple_of(2) {
        format!("{} {i}", TYPES[type_index])
    } else {
        format!("{}{i}号", CJK[type_index])
    }
}

fn schema_capsule() -> String {
    let mut s = String::from(
        "UPSERT {\n  CONCEPT ?bench { {type: \"Domain\", name: \"Bench\"} SET ATTRIBUTES { description: \"Generated benchmark graph\" } }\n",
    );
    for t in TYPES {
        let _ = writeln!(
            s,
            "  CONCEPT {{ {{type: \"$ConceptType\", name: \"{t}\"}} SET ATTRIBUTES {{ description: \"{t}s of the benchmark\" }} SET PROPOSITIONS {{ (\"belongs_to_domain\", ?bench) }} }}"
        );
    }
    for (p, s_t, o_t) in PREDICATES {
        let _ = writeln!(
            s,
            "  CONCEPT {{ {{type: \"$PropositionType\", name: \"{p}\"}} SET ATTRIBUTES {{ description: \"{p}\", subject_types: [\"{}\"], object_types: [\"{}\"] }} SET PROPOSITIONS {{ (\"belongs_to_domain\", ?bench) }} }}",
            TYPES[s_t], TYPES[o_t]
        );
    }
    s.push('}');
    s
}

/// Emits the capsules that create `per_type` concepts of each type, in
/// chunks, one at a time (so they need not all be in memory).
fn concept_capsules(
    per_type: u64,
    chunk: u64,
    emit: &mut impl FnMut(String) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut s = String::new();
    let mut n = 0;
    for (t, ty) in TYPES.iter().enumerate() {
        for i in 0..per_type {
            if n == 0 {
                s.push_str("UPSERT {\n");
            }
            let _ = writeln!(
                s,
                "CONCEPT {{ {{type: \"{ty}\", name: \"{}\"}} SET ATTRIBUTES {{ description: \"generated {ty} number {i}\", score: {} }} }}",
                name(t, i),
                i % 100
            );
            n += 1;
            if n == chunk {
                s.push('}');
                emit(std::mem::take(&mut s))?;
                n = 0;
            }
        }
    }
    if n > 0 {
        s.push('}');
        emit(s)?;
    }
    Ok(())
}

/// Emits the capsules that create `count` links, in chunks, one at a time.
fn link_capsules(
    per_type: u64,
    count: u64,
    chunk: u64,
    rng: &mut Rng,
    emit: &mut impl FnMut(String) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut s = String::new();
    let mut n = 0;
    for _ in 0..count {
        if n == 0 {
            s.push_str("UPSERT {\n");
        }
        let (p, st, ot) = PREDICATES[rng.below(PREDICATES.len() as u64) as usize];
        let a = rng.below(per_type);
        let b = rng.below(per_type);
        let _ = writeln!(
            s,
            "CONCEPT {{ {{type: \"{}\", name: \"{}\"}} SET PROPOSITIONS {{ (\"{p}\", {{type: \"{}\", name: \"{}\"}}) }} }}",
            TYPES[st],
            name(st, a),
            TYPES[ot],
            name(ot, b)
        );
        n += 1;
        if n == chunk {
            s.push('}');
            emit(std::mem::take(&mut s))?;
            n = 0;
        }
    }
    if n > 0 {
        s.push('}');
        emit(s)?;
    }
    Ok(())
}

/// Writes capsules to numbered files in `folder` as they are generated;
/// `paths` collects the files in order.
fn to_files<'p>(
    folder: &'p Path,
    prefix: &'p str,
    paths: &'p mut Vec<PathBuf>,
) -> impl FnMut(String) -> anyhow::Result<()> + 'p {
    move |text| {
        let path = folder.join(format!("{prefix}-{:05}.kip", paths.len()));
        std::fs::write(&path, text)?;
        paths.push(path);
        Ok(())
    }
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

/// Makes the next query text of a workload.
type MakeQuery = Box<dyn FnMut(&mut Rng) -> String>;

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

/// Builds (or reuses) the generated graph in `dir` and measures the workloads.
pub fn bench(
    dir: &Path,
    concepts: u64,
    propositions: u64,
    iterations: usize,
) -> anyhow::Result<Json> {
    let per_type = (concepts / TYPES.len() as u64).max(1);
    let fresh = !dir.join("data.mdb").exists();
    let nexus = Nexus::open(dir).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let mut report = serde_json::Map::new();
    if fresh {
        report.insert(
            "import".into(),
            import(&nexus, dir, per_type, propositions)?,
        );
    }
    let memory = MemoryWatch::start();
    let table = measure(&nexus, workloads(per_type), iterations)?;
    let (peak_anon, _) = memory.stop();
    report.insert("workloads".into(), Json::Array(table));
    if let Some(mb) = peak_anon {
        report.insert("workloads_peak_rss_anon_mb".into(), json!(mb));
    }
    if let Some(mb) = engine_memory_mb() {
        report.insert("engine_memory_mb".into(), json!(mb));
    }
    report.insert(
        "graph".into(),
        json!({"concepts": per_type * TYPES.len() as u64, "propositions_requested": propositions}),
    );
    Ok(Json::Object(report))
}

/// Imports the generated graph (schema, concepts, then links) and says how
/// fast and with how much memory. The capsules are written to files in
/// `<dir>-capsules` first (one at a time, so the benchmark never holds them
/// all) and imported as `kip import` would, then removed (kept when
/// `KIP_BENCH_KEEP_CAPSULES` is set).
fn import(nexus: &Nexus, dir: &Path, per_type: u64, propositions: u64) -> anyhow::Result<Json> {
    let folder = PathBuf::from(format!("{}-capsules", dir.display()));
    std::fs::create_dir_all(&folder)?;
    let memory = MemoryWatch::start();
    let mut schema = Vec::new();
    to_files(&folder, "0-schema", &mut schema)(schema_capsule())?;
    import_files(nexus, &schema, "schema")?;
    let mut concepts = Vec::new();
    concept_capsules(
        per_type,
        20_000,
        &mut to_files(&folder, "1-concepts", &mut concepts),
    )?;
    let started = Instant::now();
    import_files(nexus, &concepts, "concept")?;
    let concept_secs = started.elapsed().as_secs_f64();
    let mut rng = Rng(0x5EED_CAFE);
    let mut links = Vec::new();
    link_capsules(
        per_type,
        propositions,
        20_000,
        &mut rng,
        &mut to_files(&folder, "2-links", &mut links),
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

/// The measured workloads: a label, the query maker and the p50 budget in
/// milliseconds (NaN where BRIEF §6 sets none).
fn workloads(per_type: u64) -> Vec<(&'static str, MakeQuery, f64)> {
    vec![
        (
            "one-hop FIND from a named concept",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?s.name) WHERE {{ ({{type: \"Drug\", name: \"{}\"}}, \"has_side_effect\", ?s) }}",
                    name(0, r.below(per_type))
                )
            }),
            0.2,
        ),
        (
            "two-hop FIND",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?s.name) WHERE {{ ({{type: \"Drug\", name: \"{}\"}}, \"treats\", ?d) (?d, \"presents_with\", ?s) }}",
                    name(0, r.below(per_type))
                )
            }),
            2.0,
        ),
        (
            "{1,3} path",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?x.name) WHERE {{ ({{type: \"Disease\", name: \"{}\"}}, \"related_to\"{{1,3}}, ?x) }}",
                    name(3, r.below(per_type))
                )
            }),
            10.0,
        ),
        (
            "SEARCH CONCEPT top-10 (English)",
            Box::new(move |r: &mut Rng| {
                format!(
                    "SEARCH CONCEPT \"Gene {}\" LIMIT 10",
                    2 * r.below(per_type / 2)
                )
            }),
            5.0,
        ),
        (
            "SEARCH CONCEPT top-10 (Chinese)",
            Box::new(move |r: &mut Rng| {
                format!(
                    "SEARCH CONCEPT \"基因{}号\" LIMIT 10",
                    2 * r.below(per_type / 2) + 1
                )
            }),
            5.0,
        ),
        (
            "DESCRIBE PRIMER",
            Box::new(|_: &mut Rng| "DESCRIBE PRIMER".to_owned()),
            20.0,
        ),
        (
            "COUNT over a type",
            Box::new(|_: &mut Rng| "FIND(COUNT(?d)) WHERE { ?d {type: \"Drug\"} }".to_owned()),
            5.0,
        ),
        (
            "FILTER scan over a type (LIMIT 10)",
            Box::new(|r: &mut Rng| {
                format!(
                    "FIND(?d.name) WHERE {{ ?d {{type: \"Symptom\"}} FILTER(?d.attributes.score == {}) }} LIMIT 10",
                    r.below(100)
                )
            }),
            f64::NAN,
        ),
        (
            "FILTER ==, 1 match (index)",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?d.name) WHERE {{ ?d {{type: \"Symptom\"}} FILTER(?d.attributes.description == \"generated Symptom number {}\") }}",
                    r.below(per_type)
                )
            }),
            1.0,
        ),
        (
            "FILTER STARTS_WITH, <=11 matches (index)",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?d.name) WHERE {{ ?d {{type: \"Symptom\"}} FILTER(STARTS_WITH(?d.attributes.description, \"generated Symptom number {}\")) }}",
                    r.below(per_type.max(10) / 10) + 1
                )
            }),
            1.0,
        ),
        (
            "FILTER range, 90% match, LIMIT 10",
            Box::new(|r: &mut Rng| {
                format!(
                    "FIND(?d.name) WHERE {{ ?d {{type: \"Symptom\"}} FILTER(?d.attributes.score >= {}) }} LIMIT 10",
                    r.below(10)
                )
            }),
            1.0,
        ),
        (
            "FILTER CONTAINS, full scan of a type",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?d.name) WHERE {{ ?d {{type: \"Symptom\"}} FILTER(CONTAINS(?d.attributes.description, \"number {}\")) }}",
                    r.below(per_type)
                )
            }),
            20.0,
        ),
        (
            "FILTER ==, 1 match, forced scan",
            Box::new(move |r: &mut Rng| {
                format!(
                    "FIND(?d.name) WHERE {{ ?d {{type: \"Symptom\"}} FILTER(!(!(?d.attributes.description == \"generated Symptom number {}\"))) }}",
                    r.below(per_type)
                )
            }),
            f64::NAN,
        ),
        (
            "single small UPSERT, durable commit",
            Box::new(|r: &mut Rng| {
                format!(
                    "UPSERT {{ CONCEPT {{ {{type: \"Symptom\", name: \"bench write target\"}} SET ATTRIBUTES {{ bench_write: {} }} }} }}",
                    r.next() % 1_000_000_000
                )
            }),
            1.0,
        ),
        (
            DRY_RUN_WRITE,
            Box::new(|r: &mut Rng| {
                format!(
                    "UPSERT {{ CONCEPT {{ {{type: \"Symptom\", name: \"bench write target\"}} SET ATTRIBUTES {{ bench_write: {} }} }} }}",
                    r.next() % 1_000_000_000
                )
            }),
            f64::NAN,
        ),
    ]
}

/// The write workload run as a dry run: everything a durable write does but
/// the commit, so the difference between the two is the commit's cost.
const DRY_RUN_WRITE: &str = "same UPSERT, dry run (no commit)";

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
            "p50_ms": (p50 * 1000.0).round() / 1000.0,
            "p95_ms": (p95 * 1000.0).round() / 1000.0,
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

/// The report as a plain-text table.
pub fn table(report: &Json) -> String {
    let mut s = String::new();
    if let Some(import) = report.get("import") {
        let _ = writeln!(
            s,
            "import: {} concepts in {:.1} s; {} propositions in {:.1} s = {:.0} propositions/s (budget 200000)",
            import["concepts"],
            import["concept_seconds"].as_f64().unwrap_or(0.0),
            import["propositions"],
            import["proposition_seconds"].as_f64().unwrap_or(0.0),
            import["propositions_per_second"].as_f64().unwrap_or(0.0)
        );
        if let Some(peak) = import["peak_rss_anon_mb"].as_f64() {
            let _ = writeln!(
                s,
                "import memory: peak RssAnon {peak:.0} MB (budget 200), VmHWM {:.0} MB",
                import["vm_hwm_mb"].as_f64().unwrap_or(0.0)
            );
        }
    }
    if let Some(peak) = report["workloads_peak_rss_anon_mb"].as_f64() {
        let _ = writeln!(
            s,
            "workloads memory: peak RssAnon {peak:.0} MB (budget 200; after a fresh import this includes the pages LMDB keeps from it)"
        );
    }
    let _ = writeln!(
        s,
        "{:<40} {:>10} {:>10} {:>10}",
        "workload", "p50 ms", "p95 ms", "budget"
    );
    for w in report["workloads"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "{:<40} {:>10.3} {:>10.3} {:>10}",
            w["workload"].as_str().unwrap_or(""),
            w["p50_ms"].as_f64().unwrap_or(0.0),
            w["p95_ms"].as_f64().unwrap_or(0.0),
            w["budget_p50_ms"]
                .as_f64()
                .map_or("-".to_owned(), |b| format!("{b}"))
        );
    }
    s
}

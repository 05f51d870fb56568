//! The "decay sweep" workload (issue 29 §7, BRIEF §6): the spec's own
//! sleep-cycle decay (RC11 §4.3 UPDATE, the unconstrained `?link (?s, ?p,
//! ?o)` example with its marker guard) run as the spec says to iterate it:
//! `:cycle_start` bound once, the statement re-run with LIMIT
//! [`LIMIT`] until a cycle updates fewer than that. It writes every link
//! of the graph, so `kip bench` runs it after the read workloads.
//!
//! Measured: the cycles, the whole sweep's time, each cycle's (max and
//! p50; wall time, and the CPU time of the thread that ran it), the links
//! decayed and whether a cycle failed; and, while it runs,
//! another writer's single UPSERTs (how long a writer waits for a cycle).
//! Checked after: the links that carry this sweep's marker are exactly the
//! eligible ones counted before it, and as many as the cycles updated
//! (so none was decayed twice).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::{Value as Json, json};

use super::{percentile, round3};

/// The sweep's LIMIT per cycle (issue 29 §7).
pub const LIMIT: u64 = 10_000;
/// Budgets: the whole sweep and one cycle, in seconds (BRIEF §6).
const BUDGET_TOTAL_S: f64 = 60.0;
const BUDGET_CYCLE_S: f64 = 1.0;
/// Cycles at most before the workload gives up (a sweep that does not
/// converge is a failure to report, not a loop to wait on).
const MAX_CYCLES: usize = 10_000;
/// How often the other writer writes while the sweep runs.
const OTHER_WRITER_EVERY: Duration = Duration::from_millis(50);

/// The spec's example (RC11 §4.3), with LIMIT [`LIMIT`].
fn statement() -> String {
    kip_nexus::profile::decay_sweep(LIMIT)
}

/// Now, or `days` before now, as the sweep's timestamps (ISO 8601, UTC,
/// milliseconds: every timestamp of the sweep in one format, so that they
/// compare as their strings do).
fn timestamp(days_before: i64) -> String {
    let t = time::OffsetDateTime::now_utc() - time::Duration::days(days_before);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

fn execute(nexus: &Nexus, text: &str, params: &Json, who: &str) -> Json {
    let mut request = ExecuteKip::command(text);
    request.parameters = params.as_object().cloned();
    nexus.execute(&request, &Context::new(who))
}

/// Runs the whole sweep and reports it (see the module's doc).
pub fn run(nexus: &Nexus) -> anyhow::Result<Json> {
    let cycle_start = timestamp(0);
    let stale_cutoff = timestamp(14);
    let predicates = predicates(nexus)?;
    let eligible = count_links(nexus, &predicates, &eligible_filter(), &stale_cutoff)?;
    let text = statement();
    let stop = AtomicBool::new(false);
    let (cycles, other) = std::thread::scope(|scope| {
        let other = scope.spawn(|| other_writer(nexus, &stop));
        let cycles = cycles(nexus, &text, &cycle_start, &stale_cutoff);
        stop.store(true, Ordering::Relaxed);
        (cycles, other.join())
    });
    let (times, cpu, updated, failure) = cycles;
    let mut waits = other.map_err(|_| anyhow::anyhow!("the other writer panicked"))??;
    let marked = count_links(nexus, &predicates, MARKED, &cycle_start)?;
    let marked_structural = count_links(
        nexus,
        &["belongs_to_domain".to_owned()],
        MARKED,
        &cycle_start,
    )?;
    let total: f64 = times.iter().sum();
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    waits.sort_by(f64::total_cmp);
    let max = sorted.last().copied().unwrap_or(0.0);
    let mut cpu_sorted = cpu.clone();
    cpu_sorted.sort_by(f64::total_cmp);
    let exact = failure.is_none() && marked == eligible && updated == eligible;
    Ok(json!({
        "limit": LIMIT,
        "cycles": times.len(),
        "total_seconds": round3(total),
        "max_cycle_seconds": round3(max),
        "p50_cycle_seconds": round3(percentile(&sorted, 0.5)),
        "cycle_seconds": times.iter().map(|t| round3(*t)).collect::<Vec<_>>(),
        "cpu_total_seconds": round3(cpu.iter().sum()),
        "cpu_max_cycle_seconds": round3(cpu_sorted.last().copied().unwrap_or(0.0)),
        "cpu_p50_cycle_seconds": round3(percentile(&cpu_sorted, 0.5)),
        "cycle_cpu_seconds": cpu.iter().map(|t| round3(*t)).collect::<Vec<_>>(),
        "links_decayed": updated,
        "eligible_links": eligible,
        "marked_links": marked,
        "marked_belongs_to_domain": marked_structural,
        "each_eligible_link_decayed_once": exact && marked_structural == 0,
        "failed_cycle": failure,
        "other_writer_upserts": waits.len(),
        "other_writer_max_ms": round3(waits.last().copied().unwrap_or(0.0)),
        "other_writer_p50_ms": round3(percentile(&waits, 0.5)),
        // Above 1: a writer waited longer than the longest cycle, i.e. for
        // more than one cycle.
        "other_writer_max_per_max_cycle": round3(
            waits.last().copied().unwrap_or(0.0) / 1000.0 / max.max(f64::MIN_POSITIVE)
        ),
        "budget_total_seconds": BUDGET_TOTAL_S,
        "budget_cycle_seconds": BUDGET_CYCLE_S,
        "within_budget": failure.is_none() && total <= BUDGET_TOTAL_S && max <= BUDGET_CYCLE_S,
    }))
}

/// The CPU time this thread has used, in seconds (Linux's
/// `/proc/thread-self/schedstat`; `None` elsewhere): on a shared machine a
/// cycle's wall time includes the time others held the cores.
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

/// Runs the cycles: each one's seconds (wall and CPU), the links updated
/// in all, and the first failure (its cycle and error), if any.
fn cycles(
    nexus: &Nexus,
    text: &str,
    cycle_start: &str,
    stale_cutoff: &str,
) -> (Vec<f64>, Vec<f64>, u64, Option<Json>) {
    let mut times = Vec::new();
    let mut cpu = Vec::new();
    let mut updated = 0;
    for cycle in 1..=MAX_CYCLES {
        let params = json!({
            "decay_factor": 0.95,
            "timestamp": timestamp(0),
            "cycle_start": cycle_start,
            "stale_cutoff": stale_cutoff,
        });
        let (started, cpu_started) = (Instant::now(), thread_cpu_seconds());
        let r = execute(nexus, text, &params, "bench-sweep");
        times.push(started.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (cpu_started, thread_cpu_seconds()) {
            cpu.push(b - a);
        }
        if let Some(e) = r.get("error") {
            return (
                times,
                cpu,
                updated,
                Some(json!({"cycle": cycle, "error": e})),
            );
        }
        let n = r["result"]["updated"].as_u64().unwrap_or(0);
        updated += n;
        if n < LIMIT {
            return (times, cpu, updated, None);
        }
    }
    let e = json!({"cycle": MAX_CYCLES, "error": "the sweep did not converge"});
    (times, cpu, updated, Some(e))
}

/// Another writer: a small UPSERT every [`OTHER_WRITER_EVERY`] until
/// `stop`, each one's milliseconds (the time it waited for a cycle's
/// write lock included).
fn other_writer(nexus: &Nexus, stop: &AtomicBool) -> anyhow::Result<Vec<f64>> {
    let mut waits = Vec::new();
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let text = format!(
            "UPSERT {{ CONCEPT {{ {{type: \"Symptom\", name: \"bench sweep neighbour\"}} SET ATTRIBUTES {{ bench_write: {n} }} }} }}"
        );
        let started = Instant::now();
        let r = execute(nexus, &text, &json!({}), "bench-other-writer");
        waits.push(started.elapsed().as_secs_f64() * 1000.0);
        if let Some(e) = r.get("error") {
            anyhow::bail!("the other writer's UPSERT failed: {e}");
        }
        std::thread::sleep(OTHER_WRITER_EVERY);
    }
    Ok(waits)
}

/// The FILTERs that make a link eligible, but for the marker guard (and
/// the predicate, which [`count_links`] takes one at a time).
fn eligible_filter() -> String {
    "FILTER(IS_NULL(?l.metadata.superseded) || ?l.metadata.superseded != true) \
     FILTER(IS_NULL(?l.metadata.pinned) || ?l.metadata.pinned != true) \
     FILTER(IS_NULL(?l.metadata.observed_at) || ?l.metadata.observed_at < :at) \
     FILTER(IS_NULL(?l.metadata.memory_strength) || ?l.metadata.memory_strength > 0.05)"
        .to_owned()
}

/// The FILTER of a link this sweep marked.
const MARKED: &str = "FILTER(?l.metadata.strength_decay_applied_at >= :at)";

/// Every predicate but `belongs_to_domain` (which the sweep spares).
fn predicates(nexus: &Nexus) -> anyhow::Result<Vec<String>> {
    let r = execute(
        nexus,
        "FIND(?p.name) WHERE { ?p {type: \"$PropositionType\"} } LIMIT 1000",
        &json!({}),
        "bench",
    );
    let names = r["result"]
        .as_array()
        .ok_or_else(|| anyhow::anyhow!("bench: listing the predicates failed: {r}"))?;
    Ok(names
        .iter()
        .filter_map(Json::as_str)
        .filter(|p| *p != "belongs_to_domain")
        .map(str::to_owned)
        .collect())
}

/// The links of the given predicates (counted one predicate at a time, so
/// that no count passes the engine's row budget) that pass `filters`,
/// `:at` bound to `at`.
fn count_links(
    nexus: &Nexus,
    predicates: &[String],
    filters: &str,
    at: &str,
) -> anyhow::Result<u64> {
    let mut total = 0;
    for p in predicates {
        let text = format!("FIND(COUNT(?l)) WHERE {{ ?l (?s, {p:?}, ?o) {filters} }}");
        let r = execute(nexus, &text, &json!({"at": at}), "bench");
        total += r["result"]
            .as_u64()
            .ok_or_else(|| anyhow::anyhow!("bench: {text}: {r}"))?;
    }
    Ok(total)
}

//! One run's report as a plain-text table.

use std::fmt::Write as _;

use serde_json::Value as Json;

const MB: f64 = 1_000_000.0;

/// The report as a plain-text table.
pub fn table(report: &Json) -> String {
    let mut s = String::new();
    if let Some(import) = report.get("import") {
        let reused = if import["reused"] == Json::Bool(true) {
            " (recorded when the store was built)"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "import: {} concepts in {:.1} s; {} propositions in {:.1} s = {:.0} propositions/s (budget 200000){reused}",
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
    if let Some(store) = report.get("store") {
        let file = store["file_bytes"].as_f64().unwrap_or(0.0);
        let _ = write!(s, "store: data.mdb {:.1} MB", file / MB);
        if let Some(allocated) = store["allocated_bytes"].as_f64() {
            let _ = write!(s, ", {:.1} MB allocated on disk", allocated / MB);
            // The size the store was built with (recorded), else the one asked.
            let built = report["import"]["propositions"].as_f64();
            if let Some(p) = built
                .or_else(|| report["graph"]["propositions_requested"].as_f64())
                .filter(|p| *p > 0.0)
            {
                let _ = write!(s, " ({:.0} bytes per proposition)", allocated / p);
            }
        }
        if let Some(packed) = store["packed_bytes"].as_f64() {
            let _ = write!(
                s,
                "; after `kip compact` {:.1} MB (budget 400 at 1M)",
                packed / MB
            );
        }
        s.push('\n');
    }
    if let Some(open) = report.get("open") {
        let _ = write!(
            s,
            "open: {:.1} ms in a fresh kip process (median of {})",
            open["open_ms"].as_f64().unwrap_or(0.0),
            open["open_runs_ms"].as_array().map_or(0, Vec::len)
        );
        if let Some(mb) = open["rss_anon_after_open_mb"].as_f64() {
            let _ = write!(s, ", RssAnon {mb:.0} MB once open");
        }
        if let Some(ms) = open["in_process_open_ms"].as_f64() {
            let _ = write!(s, "; {ms:.1} ms reopened in this process");
        }
        s.push('\n');
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
    if let Some(sweep) = report.get("decay_sweep") {
        s.push_str(&sweep_line(sweep));
    }
    s
}

/// The decay sweep's lines: its cycles, times and checks against budget.
fn sweep_line(w: &Json) -> String {
    let f = |k: &str| w[k].as_f64().unwrap_or(0.0);
    let mut s = format!(
        "decay sweep (LIMIT {} a cycle): {} cycles, {:.2} s in all (budget {}), max {:.3} s / p50 {:.3} s a cycle (budget {}); {} links decayed of {} eligible, {} marked ({} belongs_to_domain); each decayed once: {}; within budget: {}\n",
        w["limit"],
        w["cycles"],
        f("total_seconds"),
        w["budget_total_seconds"],
        f("max_cycle_seconds"),
        f("p50_cycle_seconds"),
        w["budget_cycle_seconds"],
        w["links_decayed"],
        w["eligible_links"],
        w["marked_links"],
        w["marked_belongs_to_domain"],
        w["each_eligible_link_decayed_once"],
        w["within_budget"],
    );
    let _ = writeln!(
        s,
        "  CPU of the sweep's thread: {:.2} s in all, max {:.3} s / p50 {:.3} s a cycle",
        f("cpu_total_seconds"),
        f("cpu_max_cycle_seconds"),
        f("cpu_p50_cycle_seconds"),
    );
    let _ = writeln!(
        s,
        "  another writer meanwhile: {} UPSERTs, max {:.1} ms ({:.2} × the longest cycle), p50 {:.3} ms",
        w["other_writer_upserts"],
        f("other_writer_max_ms"),
        f("other_writer_max_per_max_cycle"),
        f("other_writer_p50_ms"),
    );
    if !w["failed_cycle"].is_null() {
        let _ = writeln!(s, "  FAILED: {}", w["failed_cycle"]);
    }
    s
}

//! `kip bench --scale`: at tiny sizes, every metric is in the table and the
//! JSON for every size, and each size has its store. Correctness only: no
//! timing is asserted.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as Json;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// Runs `kip bench --scale 200,1000` and answers its standard output.
fn scale(root: &Path, json: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kip"))
        .args(["bench", "--scale", "200,1000", "--iterations", "2"])
        .arg("--db-root")
        .arg(root)
        .arg("--json")
        .arg(json)
        .output()
        .expect("kip runs");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn read_json(file: &Path) -> Json {
    let bytes = std::fs::read(file).expect("the JSON report");
    serde_json::from_slice(&bytes).expect("JSON")
}

fn array(j: &Json) -> &Vec<Json> {
    j.as_array().unwrap_or_else(|| panic!("an array: {j}"))
}

fn number(j: &Json) -> f64 {
    j.as_f64().unwrap_or_else(|| panic!("a number: {j}"))
}

#[test]
fn scale_reports_every_metric_at_every_size() {
    let dir = scratch("bench-scale");
    let (root, json_file) = (dir.join("stores"), dir.join("scale.json"));
    let text = scale(&root, &json_file);

    for p in [200, 1000] {
        let store = root.join(format!("{p}-propositions"));
        assert!(store.join("data.mdb").is_file(), "{}", store.display());
    }
    let report = read_json(&json_file);
    assert_eq!(report["sizes"], serde_json::json!([200, 1000]));

    // Every run measured the import, the store, the opening and each workload.
    let runs = array(&report["runs"]);
    assert_eq!(runs.len(), 2);
    for (run, (p, c)) in runs.iter().zip([(200, 40), (1000, 200)]) {
        assert_eq!(run["propositions"], p);
        assert_eq!(run["concepts"], c);
        let r = &run["report"];
        assert_eq!(r["import"]["propositions"], p);
        assert!(number(&r["import"]["propositions_per_second"]) > 0.0);
        assert!(number(&r["import"]["peak_rss_anon_mb"]) > 0.0);
        assert!(number(&r["store"]["file_bytes"]) > 0.0);
        assert!(number(&r["store"]["allocated_bytes"]) > 0.0);
        // What `kip compact` would leave: a packed copy, never larger.
        let packed = number(&r["store"]["packed_bytes"]);
        assert!(
            packed > 0.0 && packed <= number(&r["store"]["file_bytes"]),
            "{r}"
        );
        assert!(number(&r["open"]["open_ms"]) > 0.0);
        assert_eq!(array(&r["open"]["open_runs_ms"]).len(), 3);
        assert!(number(&r["workloads_peak_rss_anon_mb"]) > 0.0);
        let workloads = array(&r["workloads"]);
        assert!(workloads.len() >= 10);
        assert!(workloads.iter().any(|w| w["workload"] == "DESCRIBE PRIMER"));
        // The decay sweep ran to the end, every eligible link decayed once.
        let sweep = &r["decay_sweep"];
        assert_eq!(sweep["each_eligible_link_decayed_once"], true, "{sweep}");
        assert!(sweep["failed_cycle"].is_null(), "{sweep}");
        assert!(number(&sweep["cycles"]) >= 1.0);
    }

    // The table: every metric has a value at both sizes and a growth step.
    let rows = array(&report["table"]);
    let workloads = array(&runs[0]["report"]["workloads"]).len();
    // Eleven metrics of the whole run (import, store, open, memory, the
    // decay sweep), then each workload's p50 and p95.
    assert_eq!(rows.len(), 11 + 2 * workloads);
    for row in rows {
        let metric = row["metric"].as_str().expect("a metric name");
        let values = array(&row["values"]);
        assert_eq!(values.len(), 2, "{metric}");
        assert!(values.iter().all(Json::is_number), "{metric}: {values:?}");
        let growth = array(&row["growth"]);
        assert_eq!(growth.len(), 1, "{metric}");
        assert_eq!(growth[0]["data_ratio"], 5.0, "{metric}");
        assert_eq!(
            growth[0]["faster_than_data"].is_boolean(),
            growth[0]["cost_ratio"].is_number(),
            "{metric}"
        );
        // …and a line in the printed table: the name, two values, a growth.
        let line = text
            .lines()
            .find(|l| l.starts_with(metric))
            .unwrap_or_else(|| panic!("no line for {metric} in\n{text}"));
        let cells = line[metric.len()..].split_whitespace().count();
        assert!(cells >= 3, "{line}");
    }
    for metric in [
        "import propositions/s",
        "store data.mdb MB",
        "store allocated MB",
        "store after kip compact MB",
        "open ms (fresh process)",
        "peak RssAnon import MB",
        "peak RssAnon workloads MB",
        "DESCRIBE PRIMER p50 ms",
        "DESCRIBE PRIMER p95 ms",
    ] {
        assert!(
            rows.iter().any(|r| r["metric"] == metric),
            "{metric} missing"
        );
    }
    let header = text
        .lines()
        .find(|l| l.starts_with("metric"))
        .expect("a header");
    assert!(header.contains("200") && header.contains("1k"), "{header}");
    assert!(text.contains("growth:"), "{text}");

    // A second run reuses both stores and still reports the import figures
    // recorded when they were built.
    let again = dir.join("again.json");
    scale(&root, &again);
    let report = read_json(&again);
    for run in array(&report["runs"]) {
        assert_eq!(run["report"]["import"]["reused"], true);
    }
    let rate = array(&report["table"])
        .iter()
        .find(|r| r["metric"] == "import propositions/s")
        .expect("the import row");
    assert!(array(&rate["values"]).iter().all(Json::is_number));
}

//! `kip bench --scale 100000,1000000,10000000 --db-root DIR`: the same
//! benchmark at several sizes and how each cost grows with the data.
//!
//! Each size P is a graph of P propositions over P/5 concepts in its own
//! folder `DIR/<P>-propositions` (built once, reused after, as `--db` is),
//! measured by a child `kip bench --db … --json …` so that each size's
//! memory peaks are its own. The table's rows are the metrics, its columns
//! the sizes, and between two sizes a growth column: how many times the
//! cost grew while the data grew N times, marked `!` where it grew more
//! than [`FASTER`] times faster than the data.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value as Json, json};

/// A cost that grows more than this many times faster than the data is
/// marked (a little room for a shared machine's noise; quadratic growth
/// over a ×10 step shows as ×100 against ×10).
pub const FASTER: f64 = 1.25;

/// Concepts per proposition in a scale run (10M propositions over 2M
/// concepts, as issue 17 §6 asks).
const PROPOSITIONS_PER_CONCEPT: u64 = 5;

/// One size's folder under the root.
pub fn store_dir(root: &Path, propositions: u64) -> PathBuf {
    root.join(format!("{propositions}-propositions"))
}

/// Runs the benchmark at each size (ascending) in a child process and
/// answers every run's report, the table and its growth.
pub fn run(sizes: &[u64], root: &Path, iterations: usize) -> anyhow::Result<Json> {
    let mut sizes = sizes.to_vec();
    sizes.sort_unstable();
    sizes.dedup();
    anyhow::ensure!(
        !sizes.is_empty() && sizes[0] > 0,
        "--scale needs sizes above zero"
    );
    std::fs::create_dir_all(root)?;
    let exe = std::env::current_exe()?;
    let mut runs = Vec::new();
    for &propositions in &sizes {
        let concepts = (propositions / PROPOSITIONS_PER_CONCEPT).max(4);
        let dir = store_dir(root, propositions);
        let report_file = root.join(format!("{propositions}-propositions.report.json"));
        let _ = std::fs::remove_file(&report_file);
        eprintln!(
            "bench: {propositions} propositions over {concepts} concepts in {}",
            dir.display()
        );
        crate::out(&format!(
            "== {} propositions over {} concepts ==\n",
            human(propositions),
            human(concepts)
        ));
        let status = std::process::Command::new(&exe)
            .arg("--db")
            .arg(&dir)
            .arg("bench")
            .args(["--concepts", &concepts.to_string()])
            .args(["--propositions", &propositions.to_string()])
            .args(["--iterations", &iterations.to_string()])
            .arg("--json")
            .arg(&report_file)
            .status()?;
        anyhow::ensure!(
            status.success(),
            "bench: the run at {propositions} propositions failed ({status})"
        );
        let report: Json = serde_json::from_slice(&std::fs::read(&report_file)?)?;
        runs.push(json!({
            "propositions": propositions,
            "concepts": concepts,
            "db": dir,
            "report": report,
        }));
    }
    let reports: Vec<&Json> = runs.iter().map(|r| &r["report"]).collect();
    let rows: Vec<Json> = metrics(&reports)
        .into_iter()
        .map(|m| m.to_json(&sizes))
        .collect();
    Ok(json!({
        "sizes": sizes,
        "db_root": root,
        "faster_than_data_above": FASTER,
        "runs": runs,
        "table": rows,
    }))
}

/// Whether a bigger number is a bigger cost (a time, bytes) or a smaller
/// one (a rate: its cost is the time per item).
#[derive(Clone, Copy, PartialEq)]
enum Cost {
    Direct,
    Inverse,
}

/// One row: a metric's value at each size.
struct Metric {
    name: String,
    unit: &'static str,
    cost: Cost,
    values: Vec<Option<f64>>,
}

impl Metric {
    fn new(
        name: impl Into<String>,
        unit: &'static str,
        cost: Cost,
        reports: &[&Json],
        get: impl Fn(&Json) -> Option<f64>,
    ) -> Metric {
        Metric {
            name: name.into(),
            unit,
            cost,
            values: reports.iter().map(|r| get(r)).collect(),
        }
    }

    /// Each step's growth: the cost's ratio, the data's, and whether the
    /// cost grew faster (`None` where a value is missing or zero).
    fn growth(&self, sizes: &[u64]) -> Vec<Option<(f64, f64, bool)>> {
        (1..sizes.len())
            .map(|i| {
                let (a, b) = (self.values[i - 1]?, self.values[i]?);
                if a <= 0.0 || b <= 0.0 {
                    return None;
                }
                let cost = match self.cost {
                    Cost::Direct => b / a,
                    Cost::Inverse => a / b,
                };
                let data = data_ratio(sizes, i);
                Some((cost, data, cost > data * FASTER))
            })
            .collect()
    }

    fn to_json(&self, sizes: &[u64]) -> Json {
        let growth: Vec<Json> = self
            .growth(sizes)
            .into_iter()
            .enumerate()
            .map(|(i, g)| {
                let (cost, faster) =
                    g.map_or((None, None), |(c, _, f)| (Some(round(c, 1000.0)), Some(f)));
                json!({
                    "from": sizes[i],
                    "to": sizes[i + 1],
                    "data_ratio": data_ratio(sizes, i + 1),
                    "cost_ratio": cost,
                    "faster_than_data": faster,
                })
            })
            .collect();
        json!({
            "metric": self.name,
            "unit": self.unit,
            "cost": if self.cost == Cost::Inverse { "inverse (a rate)" } else { "direct" },
            "values": self.values,
            "growth": growth,
        })
    }
}

/// How many times the data grew from size `i - 1` to size `i`.
fn data_ratio(sizes: &[u64], i: usize) -> f64 {
    sizes[i] as f64 / sizes[i - 1] as f64
}

fn round(x: f64, by: f64) -> f64 {
    (x * by).round() / by
}

/// The metrics of the table, in order, from each size's report.
fn metrics(reports: &[&Json]) -> Vec<Metric> {
    use Cost::{Direct, Inverse};
    let f = |j: &Json| j.as_f64();
    let mut rows = vec![
        Metric::new("import propositions/s", "1/s", Inverse, reports, |r| {
            f(&r["import"]["propositions_per_second"])
        }),
        Metric::new("import concepts/s", "1/s", Inverse, reports, |r| {
            Some(f(&r["import"]["concepts"])? / f(&r["import"]["concept_seconds"])?)
        }),
        Metric::new("store data.mdb MB", "MB", Direct, reports, |r| {
            f(&r["store"]["file_bytes"]).map(|b| b / 1e6)
        }),
        Metric::new("store allocated MB", "MB", Direct, reports, |r| {
            f(&r["store"]["allocated_bytes"]).map(|b| b / 1e6)
        }),
        Metric::new("store after kip compact MB", "MB", Direct, reports, |r| {
            f(&r["store"]["packed_bytes"]).map(|b| b / 1e6)
        }),
        Metric::new("open ms (fresh process)", "ms", Direct, reports, |r| {
            f(&r["open"]["open_ms"])
        }),
        Metric::new("RssAnon once open MB", "MB", Direct, reports, |r| {
            f(&r["open"]["rss_anon_after_open_mb"])
        }),
        Metric::new("peak RssAnon import MB", "MB", Direct, reports, |r| {
            f(&r["import"]["peak_rss_anon_mb"])
        }),
        Metric::new("peak RssAnon workloads MB", "MB", Direct, reports, |r| {
            f(&r["workloads_peak_rss_anon_mb"])
        }),
        Metric::new("decay sweep total s", "s", Direct, reports, |r| {
            f(&r["decay_sweep"]["total_seconds"])
        }),
        Metric::new("decay sweep max cycle s", "s", Direct, reports, |r| {
            f(&r["decay_sweep"]["max_cycle_seconds"])
        }),
    ];
    // The workloads by label, in the order of the first report that has them.
    let mut labels: Vec<String> = Vec::new();
    for r in reports {
        for w in r["workloads"].as_array().into_iter().flatten() {
            if let Some(l) = w["workload"].as_str()
                && !labels.iter().any(|x| x == l)
            {
                labels.push(l.to_owned());
            }
        }
    }
    for label in &labels {
        for (p, key) in [("p50", "p50_ms"), ("p95", "p95_ms")] {
            rows.push(Metric::new(
                format!("{label} {p} ms"),
                "ms",
                Direct,
                reports,
                |r| {
                    r["workloads"]
                        .as_array()?
                        .iter()
                        .find(|w| w["workload"] == label.as_str())
                        .and_then(|w| w[key].as_f64())
                },
            ));
        }
    }
    rows
}

/// 100000 → 100k, 2000000 → 2M.
fn human(n: u64) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1_000 && n.is_multiple_of(1_000) {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

fn cell(value: Option<f64>, unit: &str) -> String {
    match value {
        None => "-".to_owned(),
        Some(v) if unit == "1/s" => format!("{v:.0}"),
        Some(v) if unit == "ms" && v < 100.0 => format!("{v:.3}"),
        Some(v) => format!("{v:.1}"),
    }
}

/// The scale report as a plain-text table: a row per metric, a column per
/// size, and a growth column between each two sizes.
pub fn table(scale: &Json) -> String {
    let sizes: Vec<u64> = scale["sizes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_u64)
        .collect();
    let rows = scale["table"].as_array().cloned().unwrap_or_default();
    let width = rows
        .iter()
        .filter_map(|r| r["metric"].as_str())
        .map(|m| m.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut s = String::new();
    let _ = write!(s, "{:<width$}", "metric");
    for (i, p) in sizes.iter().enumerate() {
        if i > 0 {
            let step = format!("{}→{}", human(sizes[i - 1]), human(*p));
            let _ = write!(s, " {step:>14}");
        }
        let _ = write!(s, " {:>11}", human(*p));
    }
    s.push('\n');
    for row in &rows {
        let unit = row["unit"].as_str().unwrap_or("");
        let _ = write!(s, "{:<width$}", row["metric"].as_str().unwrap_or(""));
        let values = row["values"].as_array().cloned().unwrap_or_default();
        let growth = row["growth"].as_array().cloned().unwrap_or_default();
        for i in 0..sizes.len() {
            if i > 0 {
                let g = &growth[i - 1];
                let text = match g["cost_ratio"].as_f64() {
                    None => "-".to_owned(),
                    Some(c) => {
                        let mark = if g["faster_than_data"] == Json::Bool(true) {
                            " !"
                        } else {
                            "  "
                        };
                        format!("×{c:.2}{mark}")
                    }
                };
                let _ = write!(s, " {text:>14}");
            }
            let v = values.get(i).and_then(Json::as_f64);
            let _ = write!(s, " {:>11}", cell(v, unit));
        }
        s.push('\n');
    }
    let steps: Vec<String> = (1..sizes.len())
        .map(|i| {
            format!(
                "{}→{} ×{}",
                human(sizes[i - 1]),
                human(sizes[i]),
                round(data_ratio(&sizes, i), 100.0)
            )
        })
        .collect();
    let marked = rows
        .iter()
        .filter(|r| {
            r["growth"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|g| g["faster_than_data"] == Json::Bool(true))
        })
        .count();
    let _ = writeln!(
        s,
        "growth: how many times the cost grew per step (for propositions/s: the time per proposition) while the data grew {}; ! = more than {FASTER}× faster than the data ({marked} rows marked)",
        if steps.is_empty() {
            "-".to_owned()
        } else {
            steps.join(", ")
        }
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(rate: f64, p50: f64) -> Json {
        json!({
            "import": {"propositions_per_second": rate, "concepts": 10, "concept_seconds": 1.0, "peak_rss_anon_mb": 50.0},
            "store": {"file_bytes": 1e6, "allocated_bytes": 2e6},
            "open": {"open_ms": 1.0, "rss_anon_after_open_mb": 5.0},
            "workloads_peak_rss_anon_mb": 60.0,
            "workloads": [{"workload": "w", "p50_ms": p50, "p95_ms": p50}],
        })
    }

    /// A rate that halves is a cost that doubles; a time that grows 100×
    /// over 10× the data is marked, one that grows 10× is not.
    #[test]
    fn growth_is_cost_against_data() {
        let (a, b) = (report(1000.0, 1.0), report(500.0, 100.0));
        let rows = metrics(&[&a, &b]);
        let sizes = [100, 1000];
        let rate = rows[0].growth(&sizes)[0].expect("a rate step");
        assert_eq!((rate.0, rate.1, rate.2), (2.0, 10.0, false));
        let p50 = rows
            .iter()
            .find(|m| m.name == "w p50 ms")
            .expect("a p50 row");
        assert!(p50.growth(&sizes)[0].expect("a p50 step").2);
        let store = rows
            .iter()
            .find(|m| m.name == "store data.mdb MB")
            .expect("a store row");
        assert!(!store.growth(&sizes)[0].expect("a store step").2);
        let text = table(&json!({
            "sizes": sizes,
            "table": rows.iter().map(|m| m.to_json(&sizes)).collect::<Vec<_>>(),
        }));
        assert!(text.contains("×100.00 !"), "{text}");
        assert!(text.contains("(2 rows marked)"), "{text}");
    }

    #[test]
    fn sizes_read_short() {
        assert_eq!(human(100_000), "100k");
        assert_eq!(human(10_000_000), "10M");
        assert_eq!(human(1_500), "1500");
        assert_eq!(human(200), "200");
    }
}

//! What the cognitive trace costs (issue 13, BENCHMARKS.md): the same
//! workloads with tracing on and off, alternated so machine noise hits both.
//!
//! `cargo run --release -p kip-nexus --example trace_cost`

use std::time::Instant;

use kip_nexus::{Context, ExecuteKip, Nexus, TraceSettings};

const SCHEMA: &str = r#"
UPSERT {
  CONCEPT ?t { {type: "$ConceptType", name: "Thing"} SET ATTRIBUTES { instance_schema: {} } }
  CONCEPT ?p { {type: "$PropositionType", name: "knows"} SET ATTRIBUTES { subject_types: ["Thing"], object_types: ["Thing"] } }
}
"#;

fn nexus(traced: bool) -> (tempfile::TempDir, Nexus) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("open");
    nexus.set_trace_settings(TraceSettings {
        enabled: traced,
        ..TraceSettings::default()
    });
    run(&nexus, SCHEMA);
    (dir, nexus)
}

fn run(nexus: &Nexus, text: &str) {
    let r = nexus.execute(&ExecuteKip::command(text), &Context::new("bench"));
    assert!(r.get("error").is_none(), "{r}");
}

/// Capsules of `chunk` concepts each, every concept linked to the previous.
fn capsules(count: usize, chunk: usize) -> Vec<String> {
    (0..count / chunk)
        .map(|c| {
            let mut s = String::from("UPSERT {\n");
            for i in c * chunk..(c + 1) * chunk {
                s += &format!(
                    "CONCEPT ?c{i} {{ {{type: \"Thing\", name: \"thing {i}\"}} SET ATTRIBUTES {{ n: {i}, note: \"a generated thing\" }}"
                );
                if i > c * chunk {
                    s += &format!(" SET PROPOSITIONS {{ (\"knows\", ?c{}) }}", i - 1);
                }
                s += " }\n";
            }
            s + "}\n"
        })
        .collect()
}

fn bulk(traced: bool, caps: &[String]) -> f64 {
    let (_dir, nexus) = nexus(traced);
    let t = Instant::now();
    for c in caps {
        run(&nexus, c);
    }
    t.elapsed().as_secs_f64()
}

fn single(traced: bool, n: usize) -> f64 {
    let (_dir, nexus) = nexus(traced);
    run(
        &nexus,
        r#"UPSERT { CONCEPT ?a { {type: "Thing", name: "a"} } }"#,
    );
    let t = Instant::now();
    for i in 0..n {
        run(
            &nexus,
            &format!(
                r#"UPSERT {{ CONCEPT ?a {{ {{type: "Thing", name: "a"}} SET ATTRIBUTES {{ n: {i} }} }} }}"#
            ),
        );
    }
    t.elapsed().as_secs_f64() / n as f64
}

fn reads(traced: bool, n: usize) -> f64 {
    let (_dir, nexus) = nexus(traced);
    run(
        &nexus,
        r#"UPSERT { CONCEPT ?a { {type: "Thing", name: "a"} } }"#,
    );
    let t = Instant::now();
    for i in 0..n {
        // Ten distinct texts, so folding has real work.
        run(
            &nexus,
            &format!(
                r#"FIND(?a) WHERE {{ ?a {{type: "Thing", name: "a"}} }} LIMIT {}"#,
                1 + i % 10
            ),
        );
    }
    t.elapsed().as_secs_f64() / n as f64
}

fn main() {
    let caps = capsules(20_000, 2_000);
    let rounds = 3;
    let (mut b_on, mut b_off, mut s_on, mut s_off, mut r_on, mut r_off) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for _ in 0..rounds {
        b_off.push(bulk(false, &caps));
        b_on.push(bulk(true, &caps));
        s_off.push(single(false, 500));
        s_on.push(single(true, 500));
        r_off.push(reads(false, 20_000));
        r_on.push(reads(true, 20_000));
    }
    let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let pct = |on: f64, off: f64| (on / off - 1.0) * 100.0;
    println!("workload | tracing off | tracing on | cost");
    println!(
        "bulk import, 20,000 concepts + 19,990 links in 10 capsules | {:.2} s | {:.2} s | {:+.1}%",
        best(&b_off),
        best(&b_on),
        pct(best(&b_on), best(&b_off))
    );
    println!(
        "single small UPSERT (own transaction) | {:.3} ms | {:.3} ms | {:+.1}%",
        best(&s_off) * 1e3,
        best(&s_on) * 1e3,
        pct(best(&s_on), best(&s_off))
    );
    println!(
        "read-heavy: one-concept FIND | {:.4} ms | {:.4} ms | {:+.1}%",
        best(&r_off) * 1e3,
        best(&r_on) * 1e3,
        pct(best(&r_on), best(&r_off))
    );
    println!("(best of {rounds} alternated rounds)");
}

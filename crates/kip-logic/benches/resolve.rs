//! The resolver's two budgets (BRIEF §6, §8), measured with Criterion (see
//! BENCHMARKS.md, "Logic properties"):
//!
//! - `overhead/one_property_one_instance`: one `kip` metric for one
//!   instance of the medical example, parameters supplied — the resolver's
//!   own cost (read the type, check, one FIND, shape the answer).
//! - `batch/5x1000x12`: 5 metrics × 1,000 instances × 12 monthly buckets
//!   (60,000 FINDs in one read snapshot) on a generated graph of 1,000
//!   drugs with 20 dated links each (20,000 propositions; see BENCHMARKS.md
//!   for why the per-FIND cost carries over to the 1M graph).
//!
//! `cargo bench -p kip-logic` (`-- overhead` or `-- batch` for one).

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use kip_logic::{Identity, ResolveRequest, Resolver};
use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::{Map, Value as Json, json};

const Y2024: i64 = 1_704_067_200_000;
const Y2025: i64 = 1_735_689_600_000;

fn run(nexus: &Nexus, text: &str, params: Map<String, Json>) {
    let mut request = ExecuteKip::command(text);
    request.parameters = Some(params);
    let r = nexus.execute(&request, &Context::default());
    assert!(r.get("error").is_none(), "{r:#}");
}

fn medical() -> (tempfile::TempDir, Arc<Nexus>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let nexus = Nexus::open(dir.path()).expect("nexus");
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../capsules/examples");
    for f in [
        "10_medical_schema.kip",
        "11_medical_data.kip",
        "12_medical_logic.kip",
    ] {
        let text = std::fs::read_to_string(examples.join(f)).expect("example");
        run(&nexus, &text, Map::new());
    }
    (dir, Arc::new(nexus))
}

fn overhead(c: &mut Criterion) {
    let (_dir, nexus) = medical();
    let resolver = Resolver::new(nexus, None);
    let request = ResolveRequest {
        ot_id: "Drug".into(),
        unique_identities: vec![Identity::named("Aspirin")],
        properties: vec!["indications_added".into()],
        dynamic_params: json!({"indications_added": {"instant": true, "start": Y2024 - 4 * 31_622_400_000, "end": Y2025}})
            .as_object()
            .cloned(),
        ..ResolveRequest::default()
    };
    c.bench_function("overhead/one_property_one_instance", |b| {
        b.iter(|| {
            resolver
                .resolve_blocking(request.clone())
                .expect("resolved")
        })
    });
}

const PREDICATES: [&str; 5] = [
    "treats",
    "has_side_effect",
    "interacts_with",
    "studied_in",
    "marketed_in",
];

/// 1,000 drugs, 20 targets, 5 predicates, 20 dated links per drug (4 per
/// predicate, dates spread over 2024), and 5 metrics, one per predicate.
fn generated() -> (tempfile::TempDir, Arc<Nexus>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let nexus = Nexus::open(dir.path()).expect("nexus");
    let mut metrics = Vec::new();
    let mut schema = vec![
        r#"CONCEPT ?t { {type: "$ConceptType", name: "Target"} SET ATTRIBUTES { description: "A target." } }"#.to_owned(),
    ];
    for (i, p) in PREDICATES.iter().enumerate() {
        schema.push(format!(
            r#"CONCEPT ?p{i} {{ {{type: "$PropositionType", name: "{p}"}} SET ATTRIBUTES {{ description: "{p}", subject_types: ["Drug"], object_types: ["Target"] }} }}"#
        ));
        metrics.push(format!(
            r#"m_{p}: {{type: "metric", parameters: [
                {{name: "instant", type: "BOOLEAN", if_system_generate: true}},
                {{name: "start", type: "INTEGER", if_system_generate: true}},
                {{name: "end", type: "INTEGER", if_system_generate: true}},
                {{name: "step", type: "STRING", if_system_generate: true, required: false}}],
              data_source: {{kind: "kip", query: "FIND(COUNT(?l)) WHERE {{ ?d {{id: :self}} ?l (?d, \"{p}\", ?o) FILTER(?l.metadata.at >= :start_iso && ?l.metadata.at < :end_iso) }}"}}}}"#
        ));
    }
    schema.insert(
        0,
        format!(
            r#"CONCEPT ?drug {{ {{type: "$ConceptType", name: "Drug"}} SET ATTRIBUTES {{ description: "A drug.", logic_properties: {{ {} }} }} }}"#,
            metrics.join(", ")
        ),
    );
    // Definitions first (the metrics' query names predicates defined after
    // the type in the same text, so define the type's metrics last).
    let defs: Vec<String> = schema.iter().skip(1).cloned().collect();
    run(
        &nexus,
        &format!("UPSERT {{ {} }}", defs.join("\n")),
        Map::new(),
    );
    run(&nexus, &format!("UPSERT {{ {} }}", schema[0]), Map::new());
    let targets: Vec<String> = (0..20)
        .map(|t| format!(r#"CONCEPT ?t{t} {{ {{type: "Target", name: "T{t}"}} }}"#))
        .collect();
    run(
        &nexus,
        &format!("UPSERT {{ {} }}", targets.join("\n")),
        Map::new(),
    );
    for chunk in 0..10 {
        let mut blocks = Vec::new();
        for d in chunk * 100..(chunk + 1) * 100 {
            let mut links = Vec::new();
            for (pi, p) in PREDICATES.iter().enumerate() {
                for k in 0..4 {
                    let month = (d + pi * 3 + k * 5) % 12 + 1;
                    let target = (d + pi * 4 + k) % 20;
                    links.push(format!(
                        r#"("{p}", {{type: "Target", name: "T{target}"}}) WITH METADATA {{ at: "2024-{month:02}-15T00:00:00Z" }}"#
                    ));
                }
            }
            blocks.push(format!(
                r#"CONCEPT ?d{d} {{ {{type: "Drug", name: "D{d}"}} SET PROPOSITIONS {{ {} }} }}"#,
                links.join("\n")
            ));
        }
        run(
            &nexus,
            &format!("UPSERT {{ {} }}", blocks.join("\n")),
            Map::new(),
        );
    }
    (dir, Arc::new(nexus))
}

fn batch(c: &mut Criterion) {
    let (_dir, nexus) = generated();
    let resolver = Resolver::new(nexus, None);
    let window = json!({"instant": false, "start": Y2024, "end": Y2025 - 1, "step": "month"});
    let mut params = Map::new();
    for p in PREDICATES {
        params.insert(format!("m_{p}"), window.clone());
    }
    let request = ResolveRequest {
        ot_id: "Drug".into(),
        unique_identities: (0..1000)
            .map(|d| Identity::named(format!("D{d}")))
            .collect(),
        properties: PREDICATES.iter().map(|p| format!("m_{p}")).collect(),
        dynamic_params: Some(params),
        ..ResolveRequest::default()
    };
    // Every drug has 4 links per predicate, each in one month of 2024.
    let answer = resolver
        .resolve_blocking(request.clone())
        .expect("resolved");
    let total: i64 = answer.datas[0]["m_treats"]
        .as_array()
        .expect("series")
        .iter()
        .filter_map(|p| p["value"].as_i64())
        .sum();
    assert_eq!(total, 4);
    let mut group = c.benchmark_group("batch");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.bench_function("5x1000x12", |b| {
        b.iter(|| {
            resolver
                .resolve_blocking(request.clone())
                .expect("resolved")
        })
    });
    group.finish();
}

criterion_group!(benches, overhead, batch);
criterion_main!(benches);

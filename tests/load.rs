//! Load: `kip serve` under concurrent readers and writers, and several MCP
//! sessions (`kip mcp` processes) on one nexus at once — a fixed number of
//! requests each, zero failed requests, and every acknowledged write found
//! afterwards, with the store's invariants intact (`kip check-store`).
//!
//! Throughput and latency are printed (`-- --nocapture`), never asserted;
//! BENCHMARKS.md records a release-build run:
//! `cargo test --release -p kip-e2e --test e2e load:: -- --nocapture`.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Server, kip_run};
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Map, Value as Json, json};

const READERS: usize = 4;
const WRITERS: usize = 4;
const REQUESTS_EACH: usize = 150;

fn count_persons(db: &Path, prefix: &str) -> u64 {
    let out = kip_run(
        db,
        &[
            "exec",
            "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} FILTER(STARTS_WITH(?p.name, :prefix)) }",
            "--params",
            &json!({"prefix": prefix}).to_string(),
        ],
    );
    let answer: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    answer["result"]
        .as_u64()
        .unwrap_or_else(|| panic!("no count: {answer:#}"))
}

fn check_store(db: &Path) {
    let out = kip_run(db, &["check-store"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn summary(what: &str, mut latencies: Vec<Duration>, elapsed: Duration) {
    latencies.sort();
    eprintln!(
        "{what}: {} requests in {elapsed:.2?} = {:.0}/s; latency p50 {:.2?}, p95 {:.2?}, p99 {:.2?}, max {:.2?}",
        latencies.len(),
        latencies.len() as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.95),
        percentile(&latencies, 0.99),
        latencies[latencies.len() - 1],
    );
}

#[test]
fn serve_under_concurrent_readers_and_writers_fails_nothing_and_loses_nothing() {
    let db = tempfile::tempdir().expect("tempdir");
    let server = Arc::new(Server::start(db.path(), &["--addr", "127.0.0.1:0"]));
    let started = Instant::now();
    let mut threads = Vec::new();
    for w in 0..WRITERS {
        let server = Arc::clone(&server);
        threads.push(std::thread::spawn(move || {
            let mut latencies = Vec::new();
            let mut acknowledged = Vec::new();
            for i in 0..REQUESTS_EACH {
                let name = format!("load-w{w}-{i:04}");
                let body = json!({
                    "command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: :name} SET ATTRIBUTES { person_class: \"Human\" } } }",
                    "parameters": {"name": name},
                });
                let t = Instant::now();
                let (status, answer) = server.post("/api/kip", &body);
                latencies.push(t.elapsed());
                assert_eq!(status, 200, "{answer:#}");
                assert!(answer.get("error").is_none(), "{answer:#}");
                acknowledged.push(name);
            }
            (latencies, acknowledged)
        }));
    }
    for r in 0..READERS {
        let server = Arc::clone(&server);
        threads.push(std::thread::spawn(move || {
            let mut latencies = Vec::new();
            for i in 0..REQUESTS_EACH {
                let t = Instant::now();
                let (status, answer) = if i % 3 == 0 {
                    server.get("/api/info")
                } else {
                    server.post(
                        "/api/kip",
                        &json!({"command": "FIND(?p.name) WHERE { ?p {type: \"Person\"} } LIMIT 20"}),
                    )
                };
                latencies.push(t.elapsed());
                assert_eq!(status, 200, "reader {r}: {answer:#}");
                assert!(answer.get("error").is_none(), "reader {r}: {answer:#}");
            }
            (latencies, Vec::new())
        }));
    }
    let (mut reads, mut writes, mut acknowledged) = (Vec::new(), Vec::new(), Vec::new());
    for (i, t) in threads.into_iter().enumerate() {
        let (latencies, acked) = t.join().expect("a client thread failed");
        if i < WRITERS {
            writes.extend(latencies);
        } else {
            reads.extend(latencies);
        }
        acknowledged.extend(acked);
    }
    let elapsed = started.elapsed();
    let all: Vec<Duration> = reads.iter().chain(&writes).copied().collect();
    summary("kip serve, all requests", all, elapsed);
    summary("kip serve, writes", writes, elapsed);
    summary("kip serve, reads", reads, elapsed);

    assert_eq!(acknowledged.len(), WRITERS * REQUESTS_EACH);
    assert_eq!(
        count_persons(db.path(), "load-w"),
        acknowledged.len() as u64
    );
    check_store(db.path());
}

#[tokio::test(flavor = "current_thread")]
async fn several_mcp_sessions_at_once_fail_nothing_and_lose_nothing() {
    const SESSIONS: usize = 4;
    const CALLS: usize = 60;
    let db = tempfile::tempdir().expect("tempdir");
    // Create the nexus first so the sessions do not race to bootstrap it.
    count_persons(db.path(), "mcp-");
    let started = Instant::now();
    let mut tasks = Vec::new();
    for s in 0..SESSIONS {
        let dir = db.path().to_path_buf();
        tasks.push(tokio::spawn(async move {
            let mut command = tokio::process::Command::new(kip_e2e::kip_bin());
            command.arg("--db").arg(&dir).arg("mcp");
            let (transport, _stderr) = TokioChildProcess::builder(command)
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("kip mcp starts");
            let client = ().serve(transport).await.expect("the session initializes");
            let mut latencies = Vec::new();
            let mut written = 0u64;
            for i in 0..CALLS {
                let (tool, arguments) = if i % 2 == 0 {
                    written += 1;
                    (
                        "execute_kip",
                        json!({
                            "command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: :name} SET ATTRIBUTES { person_class: \"AI\" } } }",
                            "parameters": {"name": format!("mcp-s{s}-{i:04}")},
                        }),
                    )
                } else {
                    (
                        "execute_kip_readonly",
                        json!({"command": "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} }"}),
                    )
                };
                let arguments: Map<String, Json> = match arguments {
                    Json::Object(m) => m,
                    _ => Map::new(),
                };
                let t = Instant::now();
                let result = client
                    .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
                    .await
                    .expect("the tool call completes");
                latencies.push(t.elapsed());
                assert_ne!(result.is_error, Some(true), "session {s}, call {i}: {result:?}");
            }
            let _ = client.cancel().await;
            (latencies, written)
        }));
    }
    let mut latencies = Vec::new();
    let mut written = 0;
    for t in tasks {
        let (l, w) = t.await.expect("a session failed");
        latencies.extend(l);
        written += w;
    }
    summary("kip mcp, 4 sessions", latencies, started.elapsed());
    assert_eq!(count_persons(db.path(), "mcp-s"), written);
    check_store(db.path());
}

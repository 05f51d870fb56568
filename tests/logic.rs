//! Logic properties (BRIEF §8) through every face, as real processes:
//! `kip resolve`, `POST /api/kn/logic-property-resolver` of `kip serve` and
//! the MCP tool `resolve_logic_properties` of `kip mcp`, against the medical
//! example with its metrics and operator, a fake LLM and the example
//! interactions service on loopback (started here; never the internet).
//! Also: the declaration survives export and re-import, and
//! `get_knowledge_schema` carries it.

use crate::common;

#[path = "../crates/kip-logic/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};

use common::{Server, kip, kip_run};
use serde_json::{Value as Json, json};
use support::{Reply, fake_llm, interactions_service};

const Y2020: i64 = 1_577_836_800_000;
const Y2025: i64 = 1_735_689_600_000;
const EXAMPLE_URL: &str = "http://127.0.0.1:8730/interactions";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn examples() -> PathBuf {
    kip_e2e::workspace().join("capsules/examples")
}

/// Imports the medical example with its logic properties into `db`, the
/// operator pointing at `operator_url`.
fn medical(db: &Path, operator_url: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    for f in [
        "10_medical_schema.kip",
        "11_medical_data.kip",
        "12_medical_logic.kip",
    ] {
        let text = std::fs::read_to_string(examples().join(f)).expect("example");
        let path = dir.path().join(f);
        std::fs::write(&path, text.replace(EXAMPLE_URL, operator_url)).expect("write");
        files.push(path);
    }
    for f in files {
        let out = kip_run(db, &["import", &f.to_string_lossy()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

fn stdout_json(out: &std::process::Output) -> Json {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn params() -> String {
    json!({"indications_added": {"instant": true, "start": Y2020, "end": Y2025}}).to_string()
}

#[test]
fn kip_resolve_computes_with_params_and_lists_what_is_missing_without() {
    let db = tempfile::tempdir().expect("db");
    medical(db.path(), EXAMPLE_URL);
    let p = params();
    let out = kip_run(
        db.path(),
        &[
            "resolve",
            "--type",
            "Drug",
            "--instance",
            "Aspirin",
            "--instance",
            "Vitamin C",
            "--property",
            "indications_added",
            "--params",
            &p,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let r = stdout_json(&out);
    assert_eq!(r["datas"][0]["indications_added"], json!(2));
    assert_eq!(r["datas"][1]["name"], "Vitamin C");
    assert_eq!(r["datas"][1]["indications_added"], json!(0));

    let out = kip()
        .env_remove("KIP_LLM_URL")
        .arg("--db")
        .arg(db.path())
        .args([
            "resolve",
            "--type",
            "Drug",
            "--instance",
            "Aspirin",
            "--property",
            "side_effect_reports",
        ])
        .output()
        .expect("kip runs");
    assert_eq!(out.status.code(), Some(1));
    let e = stdout_json(&out);
    assert_eq!(e["error"]["code"], "MISSING_INPUT_PARAMS");
    let names: Vec<&str> = e["error"]["data"]["missing"][0]["params"]
        .as_array()
        .expect("params")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["instant", "start", "end", "min_confidence"]);
    assert_eq!(
        e["error"]["data"]["trace_id"].as_str().map(str::len),
        Some(16)
    );

    // A misconfigured LLM is named.
    let out = kip()
        .env("KIP_LLM_URL", "http://127.0.0.1:9/v1")
        .env_remove("KIP_LLM_MODEL")
        .arg("--db")
        .arg(db.path())
        .args([
            "resolve",
            "--type",
            "Drug",
            "--instance",
            "Aspirin",
            "--property",
            "indications_added",
        ])
        .output()
        .expect("kip runs");
    let e = stdout_json(&out);
    assert_eq!(e["error"]["code"], "LOGIC_LLM_UNAVAILABLE");
    assert_eq!(e["error"]["data"]["setting"], "KIP_LLM_MODEL");
}

#[test]
fn kip_resolve_asks_the_configured_llm() {
    let rt = runtime();
    let fake = rt.block_on(fake_llm());
    fake.script(
        "indications_added",
        vec![
            Reply::Status(503),
            Reply::json(
                json!({"indications_added": {"instant": true, "start": Y2020, "end": Y2025}}),
            ),
        ],
    );
    let db = tempfile::tempdir().expect("db");
    medical(db.path(), EXAMPLE_URL);
    let out = kip()
        .env("KIP_LLM_URL", fake.url())
        .env("KIP_LLM_MODEL", "test-model")
        .arg("--db")
        .arg(db.path())
        .args([
            "resolve",
            "--type",
            "Drug",
            "--instance",
            "Aspirin",
            "--property",
            "indications_added",
            "--query",
            "indications added since 2020",
            "--debug",
        ])
        .output()
        .expect("kip runs");
    let r = stdout_json(&out);
    assert_eq!(r["datas"][0]["indications_added"], json!(2), "{r:#}");
    assert_eq!(r["debug"]["properties"][0]["llm_calls"], json!(2));
    assert_eq!(r["debug"]["properties"][0]["params_from"], "llm");
    assert_eq!(fake.calls().len(), 2);
}

#[test]
fn the_http_resolver_answers_the_seeds_path_and_shapes() {
    let rt = runtime();
    let service = rt.block_on(interactions_service(None));
    let fake = rt.block_on(fake_llm());
    fake.script(
        "interaction_check",
        vec![Reply::json(
            json!({"interaction_check": {"other_drug": "Aspirin"}}),
        )],
    );
    let db = tempfile::tempdir().expect("db");
    medical(db.path(), &service.url());
    let server = Server::start_with_env(
        db.path(),
        &["--addr", "127.0.0.1:0"],
        &[
            ("KIP_LLM_URL", &fake.url()),
            ("KIP_LLM_MODEL", "test-model"),
        ],
    );
    let body = json!({
        "kn_id": "",
        "ot_id": "Drug",
        "query": "Is it risky to take these with aspirin?",
        "unique_identities": [{"name": "Ibuprofen"}, {"name": "Paracetamol"}],
        "properties": ["interaction_check", "indications_added"],
        "additional_context": "the other drug is Aspirin",
        "dynamic_params": {"indications_added": {"instant": true, "start": Y2020, "end": Y2025}},
        "options": {"return_debug": true, "max_repair_rounds": 1}
    });
    let (status, r) = server.post("/api/kn/logic-property-resolver", &body);
    assert_eq!(status, 200, "{r:#}");
    assert_eq!(r["datas"][0]["interaction_check"]["risk"], "high");
    assert_eq!(r["datas"][1]["interaction_check"]["risk"], "low");
    assert_eq!(r["datas"][1]["indications_added"], json!(2));
    assert_eq!(r["debug"]["properties"][0]["params_from"], "llm");
    assert_eq!(r["debug"]["properties"][1]["params_from"], "request");
    assert_eq!(service.calls(), 1);

    // Missing inputs: 422 and the seed's error shape.
    let (status, e) = server.post(
        "/api/kn/logic-property-resolver",
        &json!({"ot_id": "Drug", "unique_identities": [{"name": "Aspirin"}], "properties": ["side_effect_reports"],
                "dynamic_params": {"side_effect_reports": {"instant": true, "start": Y2020, "end": Y2025}}}),
    );
    assert_eq!(status, 422, "{e:#}");
    assert_eq!(e["error_code"], "MISSING_INPUT_PARAMS");
    assert_eq!(e["missing"][0]["property"], "side_effect_reports");
    assert_eq!(e["missing"][0]["params"][0]["name"], "min_confidence");
    assert_eq!(e["missing"][0]["params"][0]["type"], "NUMBER");
    assert!(e["trace_id"].as_str().is_some_and(|t| !t.is_empty()));

    // Unknown instances are named; the same operation under /api/<name>
    // answers KIP's error object.
    let (status, e) = server.post(
        "/api/resolve_logic_properties",
        &json!({"ot_id": "Drug", "unique_identities": [{"name": "Aspirine"}], "properties": ["indications_added"]}),
    );
    assert_eq!(status, 404, "{e:#}");
    assert_eq!(e["error"]["code"], "KIP_3002");
    assert_eq!(e["error"]["data"]["instances"], json!(["\"Aspirine\""]));
    let (status, e) = server.post("/api/kn/logic-property-resolver", &json!({"ot_id": 3}));
    assert_eq!(status, 400);
    assert_eq!(e["error_code"], "API_BAD_REQUEST");
}

#[test]
fn the_declaration_survives_export_and_the_schema_carries_it() {
    let db = tempfile::tempdir().expect("db");
    medical(db.path(), EXAMPLE_URL);
    let describe = |db: &Path| {
        let out = kip_run(db, &["exec", r#"DESCRIBE CONCEPT TYPE "Drug""#]);
        stdout_json(&out)["result"]["attributes"]["logic_properties"].clone()
    };
    let declared = describe(db.path());
    assert_eq!(
        declared["interaction_check"]["data_source"]["url"],
        EXAMPLE_URL
    );
    for format in ["kip", "yaml"] {
        let out = kip_run(db.path(), &["export", "--format", format]);
        assert!(out.status.success());
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join(format!("export.{format}"));
        std::fs::write(&file, &out.stdout).expect("write");
        let fresh = tempfile::tempdir().expect("fresh");
        let imported = kip_run(fresh.path(), &["import", &file.to_string_lossy()]);
        assert!(
            imported.status.success(),
            "{}",
            String::from_utf8_lossy(&imported.stdout)
        );
        assert_eq!(describe(fresh.path()), declared, "{format}");
    }
    let schema = stdout_json(&kip_run(db.path(), &["schema"]));
    let branches = schema["full_bundle_schema"]["items"]["oneOf"]
        .as_array()
        .expect("branches")
        .clone();
    let drug = branches
        .iter()
        .find(|b| b["properties"]["type"]["const"] == "Drug")
        .expect("Drug");
    let names: Vec<&str> = drug["x-logic-properties"]
        .as_array()
        .expect("x-logic-properties")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "indications_added",
            "side_effect_reports",
            "interaction_check"
        ]
    );
    assert!(schema["full_bundle_schema"]["definitions"]["logic_properties"].is_object());
    // A bundle that declares a bad logic property is refused whole.
    let dir = tempfile::tempdir().expect("dir");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "- type: $ConceptType\n  name: Symptom\n  logic_properties:\n    lookup:\n      type: operator\n      data_source: {kind: http, url: 'file:///etc/passwd'}\n",
    )
    .expect("write");
    let out = kip_run(db.path(), &["import", &bad.to_string_lossy()]);
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("KIP_2003") && text.contains("logic_properties.lookup.data_source.url"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_mcp_tool_resolves_and_reports_missing_inputs_for_the_agent_to_ask() {
    use rmcp::ServiceExt as _;
    use rmcp::model::CallToolRequestParams;
    let db = tempfile::tempdir().expect("db");
    let path = db.path().to_path_buf();
    tokio::task::spawn_blocking(move || medical(&path, EXAMPLE_URL))
        .await
        .expect("imported");
    let mut command = tokio::process::Command::new(kip_e2e::kip_bin());
    command
        .env_remove("KIP_LLM_URL")
        .arg("--db")
        .arg(db.path())
        .arg("mcp");
    let (transport, _stderr) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("kip mcp starts");
    let client = ().serve(transport).await.expect("initialized");
    let tools = client.list_all_tools().await.expect("tools");
    let tool = tools
        .iter()
        .find(|t| t.name == "resolve_logic_properties")
        .expect("the tool");
    let description = tool.description.as_deref().unwrap_or_default();
    assert!(
        description.contains("YOU are the LLM") && description.contains("ASK THE USER"),
        "{description}"
    );

    let call = |args: Json| {
        let args = args.as_object().cloned().unwrap_or_default();
        client
            .call_tool(CallToolRequestParams::new("resolve_logic_properties").with_arguments(args))
    };
    let r = call(json!({"ot_id": "Drug", "unique_identities": [{"name": "Aspirin"}], "properties": ["indications_added"]})).await.expect("called");
    assert_eq!(r.is_error, Some(true));
    let e = r.structured_content.clone().expect("structured");
    assert_eq!(e["error_code"], "MISSING_INPUT_PARAMS");
    assert_eq!(e["missing"][0]["params"].as_array().map(Vec::len), Some(3));
    assert!(
        e["hint"]
            .as_str()
            .is_some_and(|h| h.contains("No LLM is configured"))
    );

    let r = call(json!({"ot_id": "Drug", "unique_identities": [{"name": "Aspirin"}], "properties": ["indications_added"],
                        "dynamic_params": {"indications_added": {"instant": true, "start": Y2020, "end": Y2025}}}))
        .await
        .expect("called");
    assert_ne!(r.is_error, Some(true));
    assert_eq!(
        r.structured_content.expect("structured")["datas"][0]["indications_added"],
        json!(2)
    );
    client.cancel().await.expect("closed");
}

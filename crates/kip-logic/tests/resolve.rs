//! The resolver against the medical example (with its logic properties),
//! a fake LLM and the example interactions service, all on loopback.

mod support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kip_logic::{Code, Identity, LlmConfig, ResolveError, ResolveRequest, Resolver};
use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::{Value as Json, json};
use support::{Reply, fake_llm, interactions_service};

const Y2020: i64 = 1_577_836_800_000; // 2020-01-01T00:00:00Z
const Y2025: i64 = 1_735_689_600_000; // 2025-01-01T00:00:00Z
const Y2024: i64 = 1_704_067_200_000; // 2024-01-01T00:00:00Z
const EXAMPLE_URL: &str = "http://127.0.0.1:8730/interactions";

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../capsules/examples")
}

fn run(nexus: &Nexus, text: &str) -> Json {
    nexus.execute(&ExecuteKip::command(text), &Context::default())
}

/// The medical example with its logic properties; the operator's URL
/// points at `operator_url`.
fn medical(operator_url: &str) -> (tempfile::TempDir, Arc<Nexus>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let nexus = Nexus::open(dir.path()).expect("nexus");
    for f in [
        "10_medical_schema.kip",
        "11_medical_data.kip",
        "12_medical_logic.kip",
    ] {
        let text = std::fs::read_to_string(examples().join(f)).expect("example");
        let text = text.replace(EXAMPLE_URL, operator_url);
        let r = run(&nexus, &text);
        assert!(r.get("error").is_none(), "{f}: {r:#}");
    }
    (dir, Arc::new(nexus))
}

fn request(properties: &[&str], names: &[&str]) -> ResolveRequest {
    ResolveRequest {
        ot_id: "Drug".into(),
        unique_identities: names.iter().map(|n| Identity::named(*n)).collect(),
        properties: properties.iter().map(|p| (*p).to_owned()).collect(),
        ..ResolveRequest::default()
    }
}

fn with_params(mut r: ResolveRequest, params: Json) -> ResolveRequest {
    r.dynamic_params = params.as_object().cloned();
    r
}

fn llm(url: String) -> LlmConfig {
    let mut c = LlmConfig::new(url, "test-model");
    c.timeout = Duration::from_millis(500);
    c
}

fn window(instant: bool) -> Json {
    if instant {
        json!({"instant": true, "start": Y2020, "end": Y2025})
    } else {
        json!({"instant": false, "start": Y2020, "end": Y2025 - 1, "step": "year"})
    }
}

fn code(e: &ResolveError) -> &'static str {
    e.code.as_str()
}

#[tokio::test(flavor = "multi_thread")]
async fn supplied_parameters_compute_values_and_series_aligned_with_the_identities() {
    let (_d, nexus) = medical(EXAMPLE_URL);
    let resolver = Resolver::new(nexus, None);
    let names = ["Aspirin", "Ibuprofen", "Paracetamol", "Vitamin C"];
    let r = resolver
        .resolve(with_params(
            request(&["indications_added"], &names),
            json!({"indications_added": window(true)}),
        ))
        .await
        .expect("resolved");
    let counts: Vec<&Json> = r.datas.iter().map(|d| &d["indications_added"]).collect();
    assert_eq!(counts, [&json!(2), &json!(1), &json!(2), &json!(0)]);
    let got: Vec<&str> = r
        .datas
        .iter()
        .map(|d| d["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(got, names);

    let r = resolver
        .resolve(with_params(
            request(&["indications_added", "side_effect_reports"], &["Aspirin", "Ibuprofen"]),
            json!({
                "indications_added": window(false),
                "side_effect_reports": {"instant": true, "start": Y2024, "end": Y2025, "min_confidence": 0.8},
            }),
        ))
        .await
        .expect("resolved");
    let series = &r.datas[0]["indications_added"];
    let values: Vec<i64> = series
        .as_array()
        .expect("series")
        .iter()
        .map(|p| p["value"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(values, [0, 1, 0, 1, 0], "{series}");
    assert_eq!(series[0]["t"], json!(Y2020));
    assert_eq!(r.datas[0]["side_effect_reports"], json!(1));
    assert_eq!(
        r.datas[1]["side_effect_reports"],
        json!(0),
        "confidence 0.6 < 0.8"
    );
    assert!(r.debug.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn without_an_llm_missing_inputs_answer_the_seeds_exact_shape() {
    let (_d, nexus) = medical(EXAMPLE_URL);
    let resolver = Resolver::new(nexus, None);
    let e = resolver
        .resolve(with_params(
            request(&["indications_added", "side_effect_reports"], &["Aspirin"]),
            json!({"side_effect_reports": {"instant": true, "start": Y2024, "end": Y2025}}),
        ))
        .await
        .expect_err("missing");
    let mut wire = e.to_seed_json();
    let trace_id = wire["trace_id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(trace_id.len(), 16, "{wire:#}");
    wire.as_object_mut().map(|o| o.remove("hint"));
    assert_eq!(
        wire,
        json!({
            "error_code": "MISSING_INPUT_PARAMS",
            "message": "dynamic_params lacks required input parameters",
            "missing": [
                {"property": "side_effect_reports", "params": [
                    {"name": "min_confidence", "type": "NUMBER", "hint": "The lowest confidence (0 to 1) of a report that counts.; supply it in dynamic_params or additional_context"}
                ]},
                {"property": "indications_added", "params": [
                    {"name": "instant", "type": "BOOLEAN", "hint": "true: one count over [start, end]; false: a series per step.; supply it in dynamic_params or additional_context"},
                    {"name": "start", "type": "INTEGER", "hint": "The window's start, ms since the epoch.; supply it in dynamic_params or additional_context"},
                    {"name": "end", "type": "INTEGER", "hint": "The window's end, ms since the epoch.; supply it in dynamic_params or additional_context"}
                ]}
            ],
            "trace_id": trace_id,
        })
    );
    assert!(e.hint.contains("No LLM is configured"), "{}", e.hint);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_llm_fills_each_property_in_its_own_call_and_debug_names_the_spans() {
    let (_d, nexus) = medical(EXAMPLE_URL);
    let fake = fake_llm().await;
    fake.script(
        "indications_added",
        vec![Reply::json(json!({"indications_added": window(true)}))],
    );
    fake.script(
        "side_effect_reports",
        vec![Reply::json(json!({"side_effect_reports": {"instant": true, "start": Y2024, "end": Y2025, "min_confidence": 0.5}}))],
    );
    let resolver = Resolver::new(nexus, Some(llm(fake.url())));
    let mut req = request(
        &["indications_added", "side_effect_reports"],
        &["Aspirin", "Ibuprofen"],
    );
    req.query =
        "How many indications were added since 2020, and side effects reported this year?".into();
    req.now_ms = Some(Y2025 - 1);
    req.options.return_debug = true;
    let r = resolver.resolve(req).await.expect("resolved");
    assert_eq!(r.datas[0]["indications_added"], json!(2));
    assert_eq!(r.datas[1]["side_effect_reports"], json!(1));
    let debug = r.debug.expect("debug");
    assert_eq!(debug.now_ms, Y2025 - 1);
    assert_eq!(
        debug.dynamic_params["side_effect_reports"]["min_confidence"],
        json!(0.5)
    );
    for p in &debug.properties {
        assert_eq!(p.llm_calls, 1, "{p:?}");
        assert_eq!(p.span_id.len(), 16);
        assert_eq!(p.params_from, kip_logic::ParamsFrom::Llm);
    }
    assert_ne!(debug.properties[0].span_id, debug.properties[1].span_id);
    assert_eq!(fake.calls().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_error_answer_becomes_missing_input_params_without_a_retry() {
    let (_d, nexus) = medical(EXAMPLE_URL);
    let fake = fake_llm().await;
    fake.script(
        "side_effect_reports",
        vec![Reply::json(json!({"_error": "missing required parameters: min_confidence (the lowest confidence)"}))],
    );
    let resolver = Resolver::new(nexus, Some(llm(fake.url())));
    let e = resolver
        .resolve(request(&["side_effect_reports"], &["Aspirin"]))
        .await
        .expect_err("missing");
    assert_eq!(code(&e), "MISSING_INPUT_PARAMS");
    assert_eq!(e.missing.len(), 1);
    assert_eq!(e.missing[0].property, "side_effect_reports");
    let names: Vec<&str> = e.missing[0]
        .params
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(names, ["min_confidence"]);
    assert_eq!(e.missing[0].params[0].ty, "NUMBER");
    assert_eq!(fake.calls().len(), 1, "a missing parameter is not retried");
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_json_is_repaired_once_and_fails_without_repairs() {
    let (_d, nexus) = medical(EXAMPLE_URL);
    let fake = fake_llm().await;
    fake.script(
        "indications_added",
        vec![
            Reply::Content("```json\n{indications_added: {instant: true}}\n```".into()),
            Reply::json(json!({"indications_added": window(true)})),
        ],
    );
    let resolver = Resolver::new(nexus.clone(), Some(llm(fake.url())));
    let mut req = request(&["indications_added"], &["Aspirin"]);
    req.options.return_debug = true;
    let r = resolver.resolve(req.clone()).await.expect("repaired");
    assert_eq!(r.datas[0]["indications_added"], json!(2));
    let p = &r.debug.expect("debug").properties[0];
    assert_eq!((p.llm_calls, p.repair_rounds), (2, 1));
    let calls = fake.calls();
    assert_eq!(
        calls[1].messages, 4,
        "the repair call carries the bad answer and the problem"
    );

    // A bad step is not valid either: repaired, else refused.
    fake.script(
        "indications_added",
        vec![Reply::json(json!({"indications_added": {"instant": false, "start": Y2020, "end": Y2025, "step": "fortnight"}}))],
    );
    req.options.max_repair_rounds = 0;
    let e = resolver.resolve(req).await.expect_err("no repair allowed");
    assert_eq!(e.code, Code::LlmInvalidOutput);
    assert!(e.message.contains("step"), "{e}");
    assert_eq!(e.data["property"], "indications_added");
    assert_eq!(e.data["span_id"].as_str().map(str::len), Some(16));
    assert_eq!(e.trace_id.len(), 16);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_429_is_retried_after_100_ms() {
    let (_d, nexus) = medical(EXAMPLE_URL);
    let fake = fake_llm().await;
    fake.script(
        "indications_added",
        vec![
            Reply::Status(429),
            Reply::json(json!({"indications_added": window(true)})),
        ],
    );
    let resolver = Resolver::new(nexus, Some(llm(fake.url())));
    let r = resolver
        .resolve(request(&["indications_added"], &["Aspirin"]))
        .await
        .expect("retried");
    assert_eq!(r.datas[0]["indications_added"], json!(2));
    let calls = fake.calls();
    assert_eq!(calls.len(), 2);
    assert!(calls[1].at - calls[0].at >= Duration::from_millis(100));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_500_three_times_fails_after_two_retries_backing_off_100_then_200_ms() {
    let (_d, nexus) = medical(EXAMPLE_URL);
    let fake = fake_llm().await;
    fake.script("indications_added", vec![Reply::Status(500)]);
    let resolver = Resolver::new(nexus, Some(llm(fake.url())));
    let e = resolver
        .resolve(request(&["indications_added"], &["Aspirin"]))
        .await
        .expect_err("fails");
    assert_eq!(e.code, Code::LlmUnavailable);
    assert_eq!(e.data["calls"], json!(3));
    assert_eq!(e.data["setting"], "KIP_LLM_URL");
    let calls = fake.calls();
    assert_eq!(calls.len(), 3);
    assert!(calls[1].at - calls[0].at >= Duration::from_millis(100));
    assert!(calls[2].at - calls[1].at >= Duration::from_millis(200));
    assert!(!e.trace_id.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn other_4xx_are_not_retried_and_name_the_setting() {
    let (_d, nexus) = medical(EXAMPLE_URL);
    let fake = fake_llm().await;
    fake.script("indications_added", vec![Reply::Status(401)]);
    let resolver = Resolver::new(nexus, Some(llm(fake.url())));
    let e = resolver
        .resolve(request(&["indications_added"], &["Aspirin"]))
        .await
        .expect_err("fails");
    assert_eq!(e.code, Code::LlmUnavailable);
    assert_eq!(e.data["setting"], "KIP_LLM_API_KEY");
    assert_eq!(fake.calls().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_answers_time_out_and_are_retried() {
    let (_d, nexus) = medical(EXAMPLE_URL);
    let fake = fake_llm().await;
    fake.script(
        "indications_added",
        vec![
            Reply::Slow(Duration::from_secs(2), "{}".into()),
            Reply::json(json!({"indications_added": window(true)})),
        ],
    );
    let mut config = llm(fake.url());
    config.timeout = Duration::from_millis(300);
    let resolver = Resolver::new(nexus, Some(config));
    let r = resolver
        .resolve(request(&["indications_added"], &["Aspirin"]))
        .await
        .expect("retried");
    assert_eq!(r.datas[0]["indications_added"], json!(2));
    assert_eq!(fake.calls().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_llm_is_a_clear_error_naming_the_setting() {
    let (_d, nexus) = medical(EXAMPLE_URL);
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let resolver = Resolver::new(
        nexus.clone(),
        Some(llm(format!("http://127.0.0.1:{port}/v1"))),
    );
    let e = resolver
        .resolve(request(&["indications_added"], &["Aspirin"]))
        .await
        .expect_err("unreachable");
    assert_eq!(e.code, Code::LlmUnavailable);
    assert_eq!(e.data["setting"], "KIP_LLM_URL");
    assert!(e.message.contains("KIP_LLM_URL"), "{e}");
    // A URL that is not http(s) is refused before any call.
    let bad = Resolver::new(nexus, Some(llm("localhost:1234".into())));
    let e = bad
        .resolve(request(&["indications_added"], &["Aspirin"]))
        .await
        .expect_err("bad url");
    assert_eq!(e.data["setting"], "KIP_LLM_URL");
}

/// A type with eight metrics, to watch the semaphore.
fn many_metrics(nexus: &Nexus) {
    let mut props = Vec::new();
    for i in 0..8 {
        props.push(format!(
            r#"m{i}: {{type: "metric", parameters: [
                {{name: "instant", type: "BOOLEAN", if_system_generate: true}},
                {{name: "start", type: "INTEGER", if_system_generate: true}},
                {{name: "end", type: "INTEGER", if_system_generate: true}},
                {{name: "step", type: "STRING", if_system_generate: true, required: false}}],
              data_source: {{kind: "kip", query: "FIND(COUNT(?s)) WHERE {{ ?d {{id: :self}} (?d, \"treats\", ?s) }}"}}}}"#
        ));
    }
    let text = format!(
        r#"UPSERT {{ CONCEPT ?t {{ {{type: "$ConceptType", name: "Drug"}} SET ATTRIBUTES {{ logic_properties: {{ {} }} }} }} }}"#,
        props.join(", ")
    );
    let r = run(nexus, &text);
    assert!(r.get("error").is_none(), "{r:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_more_than_max_concurrency_llm_calls_are_ever_in_flight() {
    for (limit, expected) in [(Some(2), 2), (None, 4)] {
        let (_d, nexus) = medical(EXAMPLE_URL);
        many_metrics(&nexus);
        let fake = fake_llm().await;
        for i in 0..8 {
            let name = format!("m{i}");
            let mut answer = serde_json::Map::new();
            answer.insert(name.clone(), window(true));
            fake.script(
                &name,
                vec![Reply::Slow(
                    Duration::from_millis(150),
                    Json::Object(answer).to_string(),
                )],
            );
        }
        let resolver = Resolver::new(nexus, Some(llm(fake.url())));
        let names: Vec<String> = (0..8).map(|i| format!("m{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut req = request(&refs, &["Aspirin"]);
        req.options.max_concurrency = limit;
        let r = resolver.resolve(req).await.expect("resolved");
        assert_eq!(r.datas[0]["m7"], json!(2));
        assert_eq!(fake.calls().len(), 8);
        assert_eq!(fake.max_in_flight(), expected, "limit {limit:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operator_is_called_once_per_request_with_the_seeds_body_and_headers() {
    let service = interactions_service(None).await;
    let (_d, nexus) = medical(&service.url());
    let resolver = Resolver::new(nexus, None).with_account("tester", "user");
    let r = resolver
        .resolve(with_params(
            request(&["interaction_check", "indications_added"], &["Aspirin", "Paracetamol"]),
            json!({"interaction_check": {"other_drug": "Ibuprofen"}, "indications_added": window(true)}),
        ))
        .await
        .expect("resolved");
    assert_eq!(service.calls(), 1);
    assert_eq!(r.datas[0]["interaction_check"]["risk"], "high");
    assert_eq!(
        r.datas[0]["interaction_check"]["formula"], "C9H8O4",
        "value_from property"
    );
    assert_eq!(
        r.datas[0]["interaction_check"]["source"], "kip-explorer example",
        "value_from const"
    );
    assert_eq!(r.datas[1]["interaction_check"]["risk"], "low");
    assert_eq!(r.datas[1]["indications_added"], json!(2));

    let failing = interactions_service(Some(503)).await;
    let (_d2, nexus) = medical(&failing.url());
    let e = Resolver::new(nexus, None)
        .resolve(with_params(
            request(&["interaction_check"], &["Aspirin"]),
            json!({"interaction_check": {"other_drug": "Ibuprofen"}}),
        ))
        .await
        .expect_err("passed through");
    assert_eq!(e.code, Code::OperatorFailed);
    assert_eq!(e.data["status"], json!(503));
    assert_eq!(e.data["body"], "the interactions database is down");
    assert_eq!(failing.calls(), 1, "operator failures are not retried");
}

#[test]
fn bad_input_gets_a_coded_error_and_writes_nothing() {
    let (_d, nexus) = medical(EXAMPLE_URL);
    let before = nexus.last_change_seq().expect("seq");
    let resolver = Resolver::new(nexus.clone(), None);
    let resolve = |r: ResolveRequest| resolver.resolve_blocking(r).expect_err("refused");
    let ok = |p: &str| with_params(request(&[p], &["Aspirin"]), json!({p: window(true)}));

    let mut r = ok("indications_added");
    r.ot_id = "Drugs".into();
    let e = resolve(r);
    assert_eq!(code(&e), "KIP_2001");
    assert_eq!(e.data["suggestions"], json!(["Drug"]));

    let e = resolve(request(&["popularity"], &["Aspirin"]));
    assert_eq!(code(&e), "KIP_2002");
    assert_eq!(
        e.data["available"],
        json!([
            "indications_added",
            "side_effect_reports",
            "interaction_check"
        ])
    );

    let mut r = ok("indications_added");
    r.unique_identities = vec![
        Identity::named("Aspirin"),
        Identity::named("Aspirine"),
        Identity {
            id: Some("C:999999".into()),
            name: None,
        },
    ];
    let e = resolve(r);
    assert_eq!(code(&e), "KIP_3002");
    assert_eq!(e.data["instances"], json!(["\"Aspirine\"", "C:999999"]));

    let e = resolve(with_params(
        request(&["indications_added"], &["Aspirin"]),
        json!({"indications_added": {"instant": "yes", "start": Y2020, "end": Y2025}}),
    ));
    assert_eq!(code(&e), "KIP_2004");
    assert_eq!(e.data["path"], "dynamic_params.indications_added.instant");

    let e = resolve(with_params(
        request(&["indications_added"], &["Aspirin"]),
        json!({"indications_added": {"instant": false, "start": 0, "end": Y2025, "step": "day"}}),
    ));
    assert_eq!(code(&e), "KIP_4002");
    assert!(e.hint.contains("larger step"), "{}", e.hint);

    let e = resolve(with_params(
        request(&["indications_added"], &["Aspirin"]),
        json!({"indications_added": {"instant": true, "start": Y2025, "end": Y2020}}),
    ));
    assert_eq!(code(&e), "KIP_2003");

    let e = resolve(with_params(
        request(&["indications_added"], &["Aspirin"]),
        json!({"indications_added": {"instant": false, "start": Y2020, "end": Y2025, "step": "hour"}}),
    ));
    assert_eq!(code(&e), "KIP_2003");

    let e = resolve(with_params(
        request(&["indications_added"], &["Aspirin"]),
        json!({"indications_added": {"instant": false, "start": Y2020, "end": Y2025}}),
    ));
    assert_eq!(code(&e), "MISSING_INPUT_PARAMS", "a series needs a step");
    assert_eq!(e.missing[0].params[0].name, "step");

    assert_eq!(e.trace_id.len(), 16);
    assert_eq!(
        nexus.last_change_seq().expect("seq"),
        before,
        "the resolver writes nothing"
    );
}

#[test]
fn declarations_are_checked_when_written_and_a_bad_one_writes_nothing() {
    let (_d, nexus) = medical(EXAMPLE_URL);
    let before = nexus.last_change_seq().expect("seq");
    let r = run(
        &nexus,
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Symptom"} SET ATTRIBUTES { logic_properties: { lookup: {type: "operator", parameters: [], data_source: {kind: "http", url: "ftp://example.org/x"}} } } } }"#,
    );
    assert_eq!(r["error"]["code"], "KIP_2003", "{r:#}");
    assert_eq!(
        r["error"]["data"]["path"],
        "logic_properties.lookup.data_source.url"
    );
    assert!(r["error"]["data"]["line"].is_number());
    assert_eq!(nexus.last_change_seq().expect("seq"), before);
    // Removing an attribute a declared parameter reads is refused too.
    let r = run(
        &nexus,
        r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: "Drug"} SET ATTRIBUTES { instance_schema: { description: {type: "string"} } } } }"#,
    );
    assert_eq!(r["error"]["code"], "KIP_2003", "{r:#}");
    assert_eq!(
        r["error"]["data"]["path"],
        "logic_properties.interaction_check.parameters[1].property"
    );
    // DESCRIBE shows the declared properties in short.
    let d = run(&nexus, r#"DESCRIBE CONCEPT TYPE "Drug""#);
    let names: Vec<&str> = d["result"]["logic_properties"]
        .as_array()
        .expect("summary")
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
}

#[test]
fn the_blocking_entry_point_works_from_a_runtimes_blocking_pool() {
    let (_d, nexus) = medical(EXAMPLE_URL);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let fake = fake_llm().await;
        fake.script(
            "indications_added",
            vec![Reply::json(json!({"indications_added": window(true)}))],
        );
        let resolver = Resolver::new(nexus, Some(llm(fake.url())));
        let r = tokio::task::spawn_blocking(move || {
            resolver.resolve_blocking(request(&["indications_added"], &["Aspirin"]))
        })
        .await
        .expect("joined")
        .expect("resolved");
        assert_eq!(r.datas[0]["indications_added"], json!(2));
    });
}

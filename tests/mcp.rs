//! `kip mcp` driven by a real MCP client (the official Rust SDK's client,
//! over stdio, as desktop MCP clients launch it): the tool, resource and
//! prompt lists, every tool with successes and errors, and read-only mode.

use std::path::Path;

use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, GetPromptRequestParams,
    ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Map, Value as Json, json};

type Client = RunningService<RoleClient, ()>;

async fn connect(db: &Path, extra: &[&str]) -> Client {
    let mut command = tokio::process::Command::new(kip_e2e::kip_bin());
    command.arg("--db").arg(db).arg("mcp").args(extra);
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kip mcp starts");
    // Shown only when the test fails (see `kip_e2e::forward_log`).
    if let Some(stderr) = stderr {
        tokio::spawn(async move {
            use tokio::io::AsyncBufReadExt as _;
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("[kip mcp] {line}");
            }
        });
    }
    ().serve(transport)
        .await
        .expect("the MCP session initializes")
}

async fn call(client: &Client, tool: &'static str, arguments: Json) -> CallToolResult {
    let arguments: Map<String, Json> = match arguments {
        Json::Object(m) => m,
        _ => Map::new(),
    };
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .expect("the tool call completes")
}

/// The structured content, checked to be the same JSON as the text block.
fn structured(result: &CallToolResult) -> Json {
    let value = result
        .structured_content
        .clone()
        .expect("structured content");
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .expect("a text block");
    let from_text: Json = serde_json::from_str(&text).expect("the text is JSON");
    assert_eq!(
        from_text, value,
        "text and structured content carry the same response"
    );
    value
}

fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}

#[tokio::test(flavor = "current_thread")]
async fn an_mcp_client_lists_the_tools_and_resources_and_reads_both_resources() {
    let db = tempfile::tempdir().expect("temp dir");
    let client = connect(db.path(), &[]).await;

    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("kip-explorer")
    );
    assert!(
        info.instructions
            .as_deref()
            .is_some_and(|i| i.contains("DESCRIBE PRIMER"))
    );

    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "execute_kip",
            "execute_kip_readonly",
            "get_knowledge_schema",
            "import_knowledge_bundle",
            "resolve_logic_properties",
            "record_trace",
            "memory_health",
            "duplicate_candidates",
            "decay_triage",
            "contradictions",
            "memory_changes",
            "recall_heat"
        ]
    );
    let execute = &tools[0];
    let params: Vec<&String> = execute.input_schema["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .collect();
    // The spec's four, then KIP Explorer's `reason` (BRIEF §7) and
    // `idempotency_key` (BRIEF §5).
    assert_eq!(
        params,
        [
            "command",
            "commands",
            "parameters",
            "dry_run",
            "reason",
            "idempotency_key"
        ]
    );
    assert!(
        execute
            .description
            .as_deref()
            .is_some_and(|d| d.contains("DESCRIBE PRIMER"))
    );
    assert_eq!(
        tools[1].annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );

    let resources = client.list_all_resources().await.expect("resources/list");
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "kip://docs/agent-guide",
            "kip://docs/syntax-reference",
            "kip://nexus/primer",
            "kip://trace/recent"
        ]
    );

    let text_of = |contents: &[ResourceContents]| match contents.first() {
        Some(ResourceContents::TextResourceContents { text, .. }) => text.clone(),
        other => panic!("expected text contents, got {other:?}"),
    };
    let reference = client
        .read_resource(ReadResourceRequestParams::new(
            "kip://docs/syntax-reference",
        ))
        .await
        .expect("read the reference");
    let reference = text_of(&reference.contents);
    assert!(reference.contains("KIP_1001") && reference.contains("upsert_concept_nodes"));
    let guide = client
        .read_resource(ReadResourceRequestParams::new("kip://docs/agent-guide"))
        .await
        .expect("read the guide");
    let guide = text_of(&guide.contents);
    assert!(guide.contains("DESCRIBE PRIMER") && guide.contains("MERGE CONCEPT"));

    // Every tool says whether it reads only, may destroy, and may be repeated.
    for tool in &tools {
        let a = tool.annotations.as_ref().expect("annotations");
        assert!(
            a.read_only_hint.is_some()
                && a.destructive_hint.is_some()
                && a.idempotent_hint.is_some(),
            "{}: {a:?}",
            tool.name
        );
        assert_eq!(a.idempotent_hint, a.read_only_hint, "{}", tool.name);
    }

    // The bootstrap prompt of the official KIP MCP bridge: the guide, then
    // the reference, ready to inject.
    let prompts = client.list_all_prompts().await.expect("prompts/list");
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["kip_bootstrap"]);
    let prompt = client
        .get_prompt(GetPromptRequestParams::new("kip_bootstrap"))
        .await
        .expect("prompts/get");
    let text = match &prompt.messages[0].content {
        ContentBlock::Text(t) => t.text.clone(),
        other => panic!("expected text, got {other:?}"),
    };
    assert!(
        text.contains("DESCRIBE PRIMER") && text.contains("KIP_1001"),
        "{text}"
    );
    assert!(
        client
            .get_prompt(GetPromptRequestParams::new("kip_nothing"))
            .await
            .is_err()
    );

    // The Primer is live: a write shows up in the next read.
    call(
        &client,
        "execute_kip",
        json!({"command": "UPSERT { CONCEPT ?d { {type: \"Domain\", name: \"Travel\"} SET ATTRIBUTES { description: \"Trips.\" } } }"}),
    )
    .await;
    let primer = client
        .read_resource(ReadResourceRequestParams::new("kip://nexus/primer"))
        .await
        .expect("read the primer");
    let primer: Json = serde_json::from_str(&text_of(&primer.contents)).expect("primer JSON");
    assert_eq!(primer["result"]["identity"]["name"], "$self");
    let domains: Vec<&str> = primer["result"]["domain_map"]
        .as_array()
        .expect("domain map")
        .iter()
        .filter_map(|d| d["domain"].as_str())
        .collect();
    assert!(domains.contains(&"Travel"), "{domains:?}");

    let missing = client
        .read_resource(ReadResourceRequestParams::new("kip://nowhere"))
        .await;
    assert!(missing.is_err(), "an unknown resource is a protocol error");
    client.cancel().await.expect("close the session");
}

#[tokio::test(flavor = "current_thread")]
async fn execute_kip_reads_and_writes_and_reports_errors_an_agent_can_fix() {
    let db = tempfile::tempdir().expect("temp dir");
    let client = connect(db.path(), &[]).await;

    let r = call(
        &client,
        "execute_kip",
        json!({"command": "DESCRIBE PRIMER"}),
    )
    .await;
    assert!(!is_error(&r));
    assert_eq!(structured(&r)["result"]["identity"]["name"], "$self");

    let upsert = "UPSERT { CONCEPT ?p { {type: \"Person\", name: :name} SET ATTRIBUTES { person_class: \"Human\", handle: :handle } } } WITH METADATA { source: \"conversation\", confidence: 0.9 }";
    let preview = call(&client, "execute_kip", json!({"command": upsert, "parameters": {"name": "Alice", "handle": "alice"}, "dry_run": true})).await;
    assert_eq!(structured(&preview)["result"]["dry_run"], true);
    let r = call(
        &client,
        "execute_kip",
        json!({"command": upsert, "parameters": {"name": "Alice", "handle": "alice"}}),
    )
    .await;
    assert!(!is_error(&r), "{:?}", r.structured_content);

    let r = call(
        &client,
        "execute_kip",
        json!({"commands": [
            "SEARCH CONCEPT \"alice\" LIMIT 5",
            {"command": "FIND(?p.attributes.handle) WHERE { ?p {type: \"Person\", name: :n} }", "parameters": {"n": "Alice"}}
        ]}),
    )
    .await;
    let batch = structured(&r);
    assert!(!is_error(&r), "{batch}");
    assert_eq!(batch["result"][0]["result"][0]["name"], "Alice");
    assert_eq!(batch["result"][1]["result"], json!(["alice"]));

    // Bad syntax: KIP_1001 with the position, flagged as a tool error.
    let r = call(
        &client,
        "execute_kip",
        json!({"command": "FIND(?p.name)\nWHERE {\n  ?p {type: \"Person\"\n}"}),
    )
    .await;
    assert!(is_error(&r));
    let error = &structured(&r)["error"];
    assert_eq!(error["code"], "KIP_1001");
    assert!(
        error["data"]["line"].as_u64().is_some_and(|l| l >= 3),
        "{error}"
    );
    assert!(error["data"]["column"].as_u64().is_some());
    assert!(error["hint"].as_str().is_some_and(|h| !h.is_empty()));

    // An unknown type: KIP_2001 with suggestions.
    let r = call(
        &client,
        "execute_kip",
        json!({"command": "FIND(?p) WHERE { ?p {type: \"Persn\"} }"}),
    )
    .await;
    let error = &structured(&r)["error"];
    assert_eq!(error["code"], "KIP_2001");
    assert_eq!(error["data"]["suggestions"][0], "Person");

    // A batch that stops at its first error is flagged too.
    let r = call(
        &client,
        "execute_kip",
        json!({"commands": ["DESCRIBE PRIMER", "FIDN(?x)", "DESCRIBE DOMAINS"]}),
    )
    .await;
    assert!(is_error(&r));
    assert_eq!(structured(&r)["result"].as_array().map(Vec::len), Some(2));

    // Arguments that are not execute_kip's: a structured error, not a crash.
    let r = call(&client, "execute_kip", json!({"cmd": "DESCRIBE PRIMER"})).await;
    assert!(is_error(&r));
    assert_eq!(structured(&r)["error"]["code"], "API_BAD_REQUEST");
    let r = call(&client, "execute_kip", json!({})).await;
    assert_eq!(structured(&r)["error"]["code"], "KIP_1001");

    let unknown = client
        .call_tool(CallToolRequestParams::new("drop_database"))
        .await;
    assert!(unknown.is_err(), "an unknown tool is a protocol error");
    client.cancel().await.expect("close the session");
}

#[tokio::test(flavor = "current_thread")]
async fn execute_kip_readonly_refuses_kml_and_writes_nothing() {
    let db = tempfile::tempdir().expect("temp dir");
    let client = connect(db.path(), &[]).await;
    let upsert = json!({"command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Mallory\"} SET ATTRIBUTES { person_class: \"Human\" } } }"});
    let r = call(&client, "execute_kip_readonly", upsert.clone()).await;
    assert!(is_error(&r));
    assert_eq!(structured(&r)["error"]["code"], "KIP_3004");
    let r = call(
        &client,
        "execute_kip_readonly",
        json!({"commands": ["DESCRIBE PRIMER", upsert["command"]]}),
    )
    .await;
    assert_eq!(
        structured(&r)["error"]["code"],
        "KIP_3004",
        "nothing in the batch runs"
    );
    let count = call(
        &client,
        "execute_kip_readonly",
        json!({"command": "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\", name: \"Mallory\"} }"}),
    )
    .await;
    assert_eq!(structured(&count)["result"], 0);
    client.cancel().await.expect("close the session");

    // `kip mcp --read-only` refuses writes through execute_kip as well.
    let client = connect(db.path(), &["--read-only"]).await;
    let r = call(&client, "execute_kip", upsert).await;
    assert_eq!(structured(&r)["error"]["code"], "KIP_3004");
    client.cancel().await.expect("close the session");
}

#[tokio::test(flavor = "current_thread")]
async fn the_capsule_tools_give_the_schema_and_import_bundles_atomically() {
    let db = tempfile::tempdir().expect("temp dir");
    let client = connect(db.path(), &[]).await;
    let define = "UPSERT { CONCEPT ?t { {type: \"$ConceptType\", name: \"City\"} SET ATTRIBUTES { description: \"A city.\", instance_schema: { country: {type: \"string\", is_required: true, description: \"Its country.\"} } } } }";
    let r = call(&client, "execute_kip", json!({"command": define})).await;
    assert!(!is_error(&r), "{:?}", r.structured_content);

    let r = call(&client, "get_knowledge_schema", json!({})).await;
    assert!(!is_error(&r));
    let schema = structured(&r);
    assert!(schema["full_bundle_schema"].to_string().contains("City"));
    assert!(schema["example_yaml"].is_string());

    let good = "- type: City\n  name: Lyon\n  country: France\n";
    let r = call(
        &client,
        "import_knowledge_bundle",
        json!({"yaml": good, "dry_run": true}),
    )
    .await;
    assert!(!is_error(&r), "{:?}", r.structured_content);
    let r = call(&client, "import_knowledge_bundle", json!({"yaml": good})).await;
    assert!(!is_error(&r), "{:?}", r.structured_content);
    assert_eq!(structured(&r)["status"], "imported");

    // From a file, and a broken one: every error with its place, nothing applied.
    let dir = tempfile::tempdir().expect("temp dir");
    let broken = dir.path().join("broken.yaml");
    std::fs::write(&broken, "- type: City\n  name: Nice\n  country: France\n- type: Citty\n  name: Paris\n  country: France\n").expect("write");
    let r = call(
        &client,
        "import_knowledge_bundle",
        json!({"path": broken.to_str().expect("path")}),
    )
    .await;
    assert!(is_error(&r));
    let report = structured(&r);
    assert_eq!(report["status"], "failed");
    assert!(report["errors"].as_array().is_some_and(|e| !e.is_empty()));
    assert!(report.to_string().contains("Citty"), "{report}");
    let count = call(
        &client,
        "execute_kip_readonly",
        json!({"command": "FIND(?c.name) WHERE { ?c {type: \"City\"} }"}),
    )
    .await;
    assert_eq!(
        structured(&count)["result"],
        json!(["Lyon"]),
        "Nice was not applied"
    );

    let r = call(
        &client,
        "import_knowledge_bundle",
        json!({"yaml": good, "path": "/x.yaml"}),
    )
    .await;
    assert_eq!(structured(&r)["error"]["code"], "API_BAD_REQUEST");
    let missing = dir.path().join("missing.yaml");
    let r = call(
        &client,
        "import_knowledge_bundle",
        json!({"path": missing.to_str().expect("path")}),
    )
    .await;
    assert_eq!(structured(&r)["error"]["code"], "API_IO");
    client.cancel().await.expect("close the session");

    let client = connect(db.path(), &["--read-only"]).await;
    let r = call(&client, "import_knowledge_bundle", json!({"yaml": good})).await;
    assert_eq!(structured(&r)["error"]["code"], "KIP_3004");
    client.cancel().await.expect("close the session");
}

/// `kip mcp` as a client that names itself (`clientInfo.name`).
async fn connect_as(
    db: &Path,
    name: &str,
) -> RunningService<RoleClient, rmcp::model::ClientConfig> {
    let mut command = tokio::process::Command::new(kip_e2e::kip_bin());
    command.arg("--db").arg(db).arg("mcp");
    let transport = TokioChildProcess::new(command).expect("kip mcp starts");
    rmcp::model::ClientConfig::new(
        rmcp::model::ClientCapabilities::default(),
        rmcp::model::Implementation::new(name, "1.0.0"),
    )
    .serve(transport)
    .await
    .expect("the MCP session initializes")
}

/// The trace's entries, oldest first, read by the command line.
fn trace_of(db: &Path) -> Vec<Json> {
    let out = std::process::Command::new(kip_e2e::kip_bin())
        .arg("--db")
        .arg(db)
        .args(["trace", "export"])
        .output()
        .expect("kip trace export runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn an_agent_is_traced_under_its_client_name_and_records_its_reasoning() {
    let db = tempfile::tempdir().expect("temp dir");
    let client = connect_as(db.path(), "claude-test").await;
    let args = |v: Json| match v {
        Json::Object(m) => m,
        _ => Map::new(),
    };
    let thought = client
        .call_tool(
            CallToolRequestParams::new("record_trace").with_arguments(args(json!({
                "type": "THINK",
                "message": "I will remember that Alice likes tea.",
                "tag": ["DecisionRationale"],
                "flags": ["Uncertain"]
            }))),
        )
        .await
        .expect("record_trace completes");
    assert!(!is_error(&thought), "{thought:?}");
    let entry = structured(&thought);
    assert_eq!(entry["originator"], "claude-test");
    assert_eq!(entry["type"], "THINK");
    assert_eq!(entry["tag"], json!(["DecisionRationale"]));
    assert!(entry["id"].as_str().is_some_and(|id| id.starts_with("T:")));

    // An agent may not write engine entries, nor impersonate another.
    let refused = client
        .call_tool(
            CallToolRequestParams::new("record_trace").with_arguments(args(json!({
                "type": "TRACE", "message": "forged"
            }))),
        )
        .await
        .expect("record_trace completes");
    assert!(is_error(&refused));
    let empty = client
        .call_tool(
            CallToolRequestParams::new("record_trace").with_arguments(args(json!({
                "type": "SAY", "message": ""
            }))),
        )
        .await
        .expect("record_trace completes");
    assert!(is_error(&empty));

    let write = client
        .call_tool(CallToolRequestParams::new("execute_kip").with_arguments(args(json!({
            "command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Alice\"} SET ATTRIBUTES { person_class: \"Human\" } } }",
            "reason": "The user introduced Alice."
        }))))
        .await
        .expect("execute_kip completes");
    assert!(!is_error(&write), "{write:?}");

    let recent = client
        .read_resource(ReadResourceRequestParams::new("kip://trace/recent"))
        .await
        .expect("read the recent trace");
    let text = match recent.contents.first() {
        Some(ResourceContents::TextResourceContents { text, .. }) => text.clone(),
        other => panic!("expected text contents, got {other:?}"),
    };
    let recent: Vec<Json> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(
        recent
            .iter()
            .any(|e| e["message"] == "I will remember that Alice likes tea.")
    );
    client.cancel().await.expect("the session closes");

    // The server records its release after the session ends: wait for it.
    let mut entries = trace_of(db.path());
    for _ in 0..100 {
        if entries.iter().any(|e| e["tag"] == json!(["SpaceRelease"])) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        entries = trace_of(db.path());
    }
    let mine: Vec<&Json> = entries
        .iter()
        .filter(|e| e["originator"] == "claude-test")
        .collect();
    // The write: its TRACE entry, flagged Unverified (an agent's), with the
    // reason as a THINK DecisionRationale entry linked to it.
    let command = mine
        .iter()
        .find(|e| {
            e["type"] == "TRACE"
                && e["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("UPSERT"))
        })
        .expect("the write's entry");
    assert!(
        command["flags"]
            .as_array()
            .is_some_and(|f| f.contains(&json!("Unverified")))
    );
    assert!(mine.iter().any(|e| e["type"] == "THINK"
        && e["message"] == "The user introduced Alice."
        && e["data"]["entry"] == command["id"]));
    // The session's start and end.
    for tag in ["SpaceAcquire", "SpaceRelease"] {
        assert!(
            mine.iter()
                .any(|e| e["type"] == "SPACE" && e["tag"] == json!([tag])),
            "no {tag} entry in {mine:#?}"
        );
    }
    // seq counts up per originator without gaps.
    let seqs: Vec<u64> = mine
        .iter()
        .map(|e| {
            e["seq"]
                .as_str()
                .and_then(|s| s.parse().ok())
                .expect("a decimal seq")
        })
        .collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
}

/// BRIEF §5: `execute_kip`'s `idempotency_key` makes a retried write apply
/// once; the repeat answers the first response.
#[tokio::test(flavor = "current_thread")]
async fn a_retried_execute_kip_with_the_same_idempotency_key_applies_once() {
    let db = tempfile::tempdir().expect("temp dir");
    let client = connect(db.path(), &[]).await;
    let seed = call(
        &client,
        "execute_kip",
        json!({"command": "UPSERT { CONCEPT ?d { {type: \"Domain\", name: \"Visits\"} SET ATTRIBUTES { visits: 0 } } }"}),
    )
    .await;
    assert!(!is_error(&seed), "{seed:?}");
    let add = json!({
        "command": "UPDATE ?d SET ATTRIBUTES { visits: ADD(?d.attributes.visits, 1) } WHERE { ?d {type: \"Domain\", name: \"Visits\"} }",
        "idempotency_key": "mcp-1"
    });
    let first = structured(&call(&client, "execute_kip", add.clone()).await);
    let again = structured(&call(&client, "execute_kip", add).await);
    assert_eq!(first, again);
    let visits = structured(
        &call(
            &client,
            "execute_kip_readonly",
            json!({"command": "FIND(?d.attributes.visits) WHERE { ?d {type: \"Domain\", name: \"Visits\"} }", "idempotency_key": "ignored"}),
        )
        .await,
    );
    assert_eq!(visits["result"], json!([1]));
    client.cancel().await.expect("close the session");
}

/// Issue 31 §10: a `$system` maintenance agent reads the same health,
/// duplicates queue and decay-triage lists as the curator, over MCP, and cannot write through them.
/// duplicates and contradictions queues as the curator, over MCP, and cannot write through them.
#[tokio::test(flavor = "current_thread")]
async fn a_maintenance_agent_reads_the_memorys_health_and_duplicates_over_mcp() {
    let db = tempfile::tempdir().expect("temp dir");
    let client = connect(db.path(), &[]).await;
    let wrote = call(
        &client,
        "execute_kip",
        json!({"command": "UPSERT { CONCEPT ?t { {type: \"$ConceptType\", name: \"Drug\"} SET ATTRIBUTES { description: \"A medicine.\" } } CONCEPT ?a { {type: \"Drug\", name: \"Ibuprofen\"} } CONCEPT ?b { {type: \"Drug\", name: \"ibuprofen\"} } }"}),
    )
    .await;
    assert!(!is_error(&wrote), "{wrote:?}");
    let health = structured(&call(&client, "memory_health", json!({})).await);
    assert_eq!(health["by_type"]["Drug"], 2, "{health:#}");
    assert!(health["orphans"]["count"].as_u64().is_some_and(|n| n >= 2));
    let dupes =
        structured(&call(&client, "duplicate_candidates", json!({"types": ["Drug"]})).await);
    let candidates = dupes["candidates"].as_array().expect("candidates");
    assert_eq!(candidates.len(), 1, "{dupes:#}");
    assert_eq!(candidates[0]["a"]["name"], "Ibuprofen");
    // Decay triage: the same list the curator's panel shows.
    let wrote = call(
        &client,
        "execute_kip",
        json!({"command": "UPSERT { CONCEPT ?a { {type: \"Drug\", name: \"Old remedy\"} } WITH METADATA { expires_at: \"2001-01-01T00:00:00Z\" } }"}),
    )
    .await;
    assert!(!is_error(&wrote), "{wrote:?}");
    let expired = structured(&call(&client, "decay_triage", json!({"list": "expired"})).await);
    assert_eq!(expired["total"], 1, "{expired:#}");
    assert_eq!(expired["items"][0]["name"], "Old remedy");
    // Issue 31 §4: the contradictions queue, the curator's own.
    let wrote = call(
        &client,
        "execute_kip",
        json!({"command": "UPSERT { CONCEPT ?p { {type: \"$PropositionType\", name: \"made_by\"} SET ATTRIBUTES { description: \"Its maker.\", subject_types: [\"Drug\"], object_types: [\"Person\"], functional: true } } CONCEPT ?x { {type: \"Person\", name: \"Bayer\"} } CONCEPT ?y { {type: \"Person\", name: \"Boots\"} } CONCEPT ?a { {type: \"Drug\", name: \"Ibuprofen\"} SET PROPOSITIONS { (\"made_by\", ?x), (\"made_by\", ?y) } } }"}),
    )
    .await;
    assert!(!is_error(&wrote), "{wrote:?}");
    let found = structured(&call(&client, "contradictions", json!({})).await);
    assert_eq!(found["total"], 1, "{found:#}");
    assert_eq!(found["contradictions"][0]["subject"]["name"], "Ibuprofen");
    assert_eq!(
        found["contradictions"][0]["sides"].as_array().map(Vec::len),
        Some(2)
    );
    // What changed since before the write: both Drugs (and the type), added.
    let changes =
        structured(&call(&client, "memory_changes", json!({"since": "2001-01-01"})).await);
    let added: Vec<&str> = changes["added"]
        .as_array()
        .expect("added")
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert!(added.contains(&"ibuprofen"), "{changes:#}");
    // Recall heat: what a read returned is in the trace once the next
    // write has flushed the folded read.
    let read = structured(
        &call(
            &client,
            "execute_kip_readonly",
            json!({"command": "FIND(?d) WHERE { ?d {type: \"Drug\", name: \"Old remedy\"} }"}),
        )
        .await,
    );
    let remedy = read["result"][0]["id"].as_str().expect("an id").to_owned();
    let wrote = call(
        &client,
        "execute_kip",
        json!({"command": "UPSERT { CONCEPT ?a { {type: \"Drug\", name: \"Fresh remedy\"} } }"}),
    )
    .await;
    assert!(!is_error(&wrote), "{wrote:?}");
    let heat = structured(&call(&client, "recall_heat", json!({})).await);
    let hot = heat["elements"].as_array().expect("elements");
    assert!(
        hot.iter()
            .any(|e| e["id"] == remedy.as_str() && e["reads"].as_u64() >= Some(1)),
        "{heat:#}"
    );
    let tools = client.list_all_tools().await.expect("tools/list");
    for name in [
        "memory_health",
        "duplicate_candidates",
        "decay_triage",
        "contradictions",
        "memory_changes",
        "recall_heat",
    ] {
        let tool = tools.iter().find(|t| t.name == name).expect("listed");
        assert_eq!(
            tool.annotations.as_ref().and_then(|a| a.read_only_hint),
            Some(true),
            "{name}"
        );
    }
}

/// Issue 30: an agent's writes over MCP become searchable by meaning with
/// no SEARCH asking: `kip mcp` runs the host's vector chore, so the
/// PRIMER's count of concepts waiting for embedding falls to zero.
#[tokio::test(flavor = "current_thread")]
async fn kip_mcp_embeds_what_an_agent_writes_in_the_background() {
    let db = tempfile::tempdir().expect("temp dir");
    let client = connect(db.path(), &[]).await;
    let primer = || async {
        structured(
            &call(
                &client,
                "execute_kip_readonly",
                json!({"command": "DESCRIBE PRIMER"}),
            )
            .await,
        )["result"]["capabilities"]["embedding"]
            .clone()
    };
    if !primer().await["waiting"].is_u64() {
        assert_ne!(
            std::env::var("KIP_EMBED_REQUIRED").as_deref(),
            Ok("1"),
            "KIP_EMBED_REQUIRED=1 but kip mcp has no embedding model (scripts/setup-model.sh)"
        );
        return;
    }
    let wrote = call(
        &client,
        "execute_kip",
        json!({"command": "UPSERT { CONCEPT ?d { {type: \"Domain\", name: \"Gardening\"} SET ATTRIBUTES { description: \"Tomatoes on the balcony.\" } } }"}),
    )
    .await;
    assert!(!is_error(&wrote), "{wrote:?}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let embedding = primer().await;
        if embedding["waiting"] == 0 {
            assert!(
                embedding["vectors"].as_u64().is_some_and(|n| n > 0),
                "{embedding}"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still waiting: {embedding}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

//! `kip serve` as a real process on an ephemeral port: both KIP endpoints,
//! the other API operations, server-sent events that carry a write made by
//! a separate `kip exec` process, read-only mode, the token enforced when
//! binding off loopback, and the watched capsule folder (`--capsules`).

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{Server, Sse, http, kip_run};
use serde_json::{Value as Json, json};

#[test]
fn post_api_kip_answers_the_kip_response_with_200_also_for_kip_errors() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);

    let (status, r) = server.post("/api/kip", &json!({"command": "DESCRIBE PRIMER"}));
    assert_eq!(status, 200);
    assert_eq!(r["result"]["identity"]["name"], "$self");

    let (status, r) = server.post(
        "/api/kip",
        &json!({
            "command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: :n} SET ATTRIBUTES { person_class: \"Human\" } } }",
            "parameters": {"n": "Ada"}
        }),
    );
    assert_eq!(status, 200, "{r}");
    assert_eq!(
        r["result"]["upsert_concept_nodes"].as_array().map(Vec::len),
        Some(1)
    );

    let (status, r) = server.post(
        "/api/kip",
        &json!({"command": "FIND(?p.name) WHERE {\n  ?p {type: \"Person\"\n}"}),
    );
    assert_eq!(status, 200);
    assert_eq!(r["error"]["code"], "KIP_1001");
    assert!(r["error"]["data"]["line"].as_u64().is_some());
    assert!(r["error"]["data"]["column"].as_u64().is_some());

    // Not JSON, or not execute_kip arguments: the request never reached KIP.
    let (status, r) = server.post("/api/kip", &json!({"comand": "DESCRIBE PRIMER"}));
    assert_eq!(status, 400);
    assert_eq!(r["error"]["code"], "API_BAD_REQUEST");
}

#[test]
fn post_kip_accepts_the_method_envelope_of_existing_clients() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
    let upsert = "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Bo\"} SET ATTRIBUTES { person_class: \"Human\" } } }";

    let (status, r) = server.post(
        "/kip",
        &json!({"method": "execute_kip_readonly", "params": {"command": upsert}}),
    );
    assert_eq!(status, 200);
    assert_eq!(r["error"]["code"], "KIP_3004");

    let (status, r) = server.post(
        "/kip",
        &json!({"method": "execute_kip", "params": {"command": upsert}}),
    );
    assert_eq!(status, 200);
    assert!(r["result"].is_object(), "{r}");

    let (_, r) = server.post(
        "/kip",
        &json!({"method": "execute_kip_readonly", "params": {"commands": ["FIND(?p.name) WHERE { ?p {type: \"Person\", name: \"Bo\"} }"]}}),
    );
    assert_eq!(r["result"][0]["result"], json!(["Bo"]));

    let (status, r) = server.post("/kip", &json!({"method": "drop_everything", "params": {}}));
    assert_eq!(status, 404);
    assert_eq!(r["error"]["code"], "API_UNKNOWN_OPERATION");
}

#[test]
fn the_other_operations_are_served_under_api() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);

    let (status, info) = server.get("/api/info");
    assert_eq!(status, 200);
    assert_eq!(info["origin"], "kip-serve");
    assert_eq!(info["read_only"], false);

    let (status, v) = server.post(
        "/api/validate",
        &json!({"text": "FIND(?x) WHERE { ?x {type: \"Persn\"} }"}),
    );
    assert_eq!(status, 200);
    assert_eq!(v["diagnostics"][0]["code"], "KIP_2001");
    assert_eq!(v["diagnostics"][0]["suggestions"][0], "Person");

    let (status, n) = server.post("/api/neighbourhood", &json!({"element": {"type": "$ConceptType", "name": "Person"}, "predicate": "belongs_to_domain"}));
    assert_eq!(status, 200, "{n}");
    assert_eq!(n["element"]["name"], "Person");
    assert_eq!(n["outgoing"][0]["predicate"], "belongs_to_domain");
    assert_eq!(n["page"]["links"][0]["neighbour"]["type"], "Domain");

    let (status, e) = server.post(
        "/api/neighbourhood",
        &json!({"element": {"id": "C:424242"}}),
    );
    assert_eq!(status, 404);
    assert_eq!(e["error"]["code"], "KIP_3002");

    let (status, c) = server.get("/api/changes?since=0");
    assert_eq!(status, 200);
    assert!(c["last_seq"].as_u64().is_some());
    let (status, e) = server.get("/api/changes?since=soon");
    assert_eq!(status, 400);
    assert_eq!(e["error"]["code"], "API_BAD_REQUEST");

    let (status, schema) = server.get("/api/schema");
    assert_eq!(status, 200);
    assert!(schema["full_bundle_schema"].is_object());
    let bundle = "- type: Person\n  name: Gil\n  id: gil\n  person_class: Human\n";
    let (status, report) = server.post(
        "/api/import",
        &json!({"file_name": "people.yaml", "text": bundle}),
    );
    assert_eq!(status, 200);
    assert_eq!(report["status"], "imported", "{report}");
    let (_, found) = server.post(
        "/api/kip",
        &json!({"command": "FIND(?p.name) WHERE { ?p {type: \"Person\", name: \"Gil\"} }"}),
    );
    assert_eq!(found["result"], json!(["Gil"]));

    let (status, e) = server.post("/api/transmogrify", &json!({}));
    assert_eq!(status, 404);
    assert_eq!(e["error"]["code"], "API_UNKNOWN_OPERATION");
}

#[test]
fn events_carry_a_write_made_by_another_process() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
    let mut events = Sse::open(server.port, "/api/events", &[]);
    assert_eq!(events.status, 200);
    let ready: Json = serde_json::from_str(&events.next_named("ready").data).expect("ready JSON");

    let out = kip_run(
        db.path(),
        &[
            "exec",
            "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Cy\"} SET ATTRIBUTES { person_class: \"Human\" } } }",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let change = events.next_named("change");
    let data: Json = serde_json::from_str(&change.data).expect("change JSON");
    assert_eq!(data["origin"], "kip-cli");
    assert_eq!(
        data["own_process"], false,
        "written by kip exec, not by the server"
    );
    assert_eq!(data["stats"]["concepts_created"], 1);
    let seq = data["seq"].as_u64().expect("seq");
    assert!(seq > ready["last_seq"].as_u64().expect("last_seq"));
    assert_eq!(change.id, Some(seq.to_string()));

    // A client reconnecting with Last-Event-ID gets what it missed, in order.
    let out = kip_run(
        db.path(),
        &[
            "exec",
            "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Di\"} SET ATTRIBUTES { person_class: \"Human\" } } }",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let since = seq.to_string();
    let mut resumed = Sse::open(server.port, "/api/events", &[("Last-Event-ID", &since)]);
    let next = resumed.next_named("change");
    assert_eq!(next.id, Some((seq + 1).to_string()));

    // A write through the server itself is marked as its own.
    server.post(
        "/api/kip",
        &json!({"command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Ed\"} SET ATTRIBUTES { person_class: \"Human\" } } }"}),
    );
    let mine: Json = serde_json::from_str(&resumed.next_named("change").data).expect("JSON");
    assert_eq!(
        (mine["origin"].as_str(), mine["own_process"].as_bool()),
        (Some("kip-serve"), Some(true))
    );
}

#[test]
fn read_only_refuses_every_write() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0", "--read-only"]);
    let upsert = json!({"command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"Fay\"} SET ATTRIBUTES { person_class: \"Human\" } } }"});
    let (status, r) = server.post("/api/kip", &upsert);
    assert_eq!(status, 200);
    assert_eq!(r["error"]["code"], "KIP_3004");
    let (_, r) = server.post("/kip", &json!({"method": "execute_kip", "params": upsert}));
    assert_eq!(r["error"]["code"], "KIP_3004");
    let (status, r) = server.post(
        "/api/import",
        &json!({"file_name": "a.kip", "text": upsert["command"]}),
    );
    assert_eq!(status, 403);
    assert_eq!(r["error"]["code"], "KIP_3004");
    let (_, info) = server.get("/api/info");
    assert_eq!(info["read_only"], true);
    assert_eq!(info["last_change_seq"], 0, "nothing was written");
    let (_, r) = server.post(
        "/api/kip",
        &json!({"command": "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} }"}),
    );
    assert_eq!(r["result"], 2, "reads still work ($self and $system)");
}

#[test]
fn off_loopback_a_token_is_required_to_start_and_on_every_request() {
    let db = tempfile::tempdir().expect("temp dir");
    let refused = kip_run(db.path(), &["serve", "--addr", "0.0.0.0:0"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--token"));

    let server = Server::start(
        db.path(),
        &["--addr", "0.0.0.0:0", "--token", "s3cret-token"],
    );
    let body = json!({"command": "DESCRIBE DOMAINS"});
    let (status, r) = server.post("/api/kip", &body);
    assert_eq!(status, 401);
    assert_eq!(r["error"]["code"], "API_UNAUTHORIZED");
    let (status, _) = server.request(
        "POST",
        "/api/kip",
        &[("Authorization", "Bearer s3cret-tokeN")],
        Some(&body),
    );
    assert_eq!(status, 401);
    let (status, _) = server.request(
        "POST",
        "/kip",
        &[("Authorization", "Bearer wrong")],
        Some(&json!({"method": "execute_kip", "params": body})),
    );
    assert_eq!(status, 401);
    let (status, r) = server.request(
        "POST",
        "/api/kip",
        &[("Authorization", "Bearer s3cret-token")],
        Some(&body),
    );
    assert_eq!(status, 200);
    assert!(r["result"].is_array(), "{r}");
    let (status, _) = http(server.port, "GET", "/api/info", &[], None);
    assert_eq!(status, 401);

    let events = Sse::open(server.port, "/api/events", &[]);
    assert_eq!(events.status, 401);
    let mut events = Sse::open(server.port, "/api/events?access_token=s3cret-token", &[]);
    assert_eq!(events.status, 200);
    assert_eq!(events.next_event().event, "ready");
}

#[test]
fn the_web_ui_is_served_from_its_folder_with_the_api_beside_it() {
    let db = tempfile::tempdir().expect("temp dir");
    let ui = tempfile::tempdir().expect("ui dir");
    std::fs::write(
        ui.path().join("index.html"),
        "<!doctype html><title>KIP Explorer</title>",
    )
    .expect("index");
    std::fs::create_dir_all(ui.path().join("assets")).expect("assets");
    std::fs::write(ui.path().join("assets/app.js"), "console.log('kip')").expect("js");
    let ui_arg = ui.path().to_str().expect("UTF-8 path");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0", "--ui", ui_arg]);

    let (status, page) = server.get("/");
    assert_eq!(status, 200);
    assert!(
        page.as_str()
            .is_some_and(|p| p.contains("<title>KIP Explorer</title>"))
    );
    let (status, js) = server.get("/assets/app.js");
    assert_eq!((status, js.as_str()), (200, Some("console.log('kip')")));
    // A client-side route falls back to the app.
    let (status, page) = server.get("/graph/C:12");
    assert_eq!(status, 200);
    assert!(page.as_str().is_some_and(|p| p.contains("KIP Explorer")));
    // Nothing outside the folder is reachable.
    let (status, _) = server.get("/../../etc/passwd");
    assert_ne!(status, 500);
    let (_, page) = server.get("/../../etc/passwd");
    assert!(!page.to_string().contains("root:"));
    let (status, info) = server.get("/api/info");
    assert_eq!(status, 200);
    assert_eq!(info["origin"], "kip-serve");
}

/// How long the watcher may take to get to a file before a test fails (a
/// failure deadline, not a performance assertion).
const WATCH_DEADLINE: Duration = Duration::from_secs(60);

/// Asks `POST /api/watch_status` until `done` holds for the answer, and
/// returns that answer; fails with the last one after [`WATCH_DEADLINE`].
fn poll_watch_status(server: &Server, what: &str, done: impl Fn(&Json) -> bool) -> Json {
    let start = Instant::now();
    loop {
        let (status, answer) = server.post("/api/watch_status", &json!({}));
        assert_eq!(status, 200, "{answer}");
        if done(&answer) {
            return answer;
        }
        assert!(
            start.elapsed() < WATCH_DEADLINE,
            "waited {WATCH_DEADLINE:?} for {what}; the last status: {answer:#}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The file of a `watch_status` answer whose path ends with `name`.
fn watched<'a>(status: &'a Json, name: &str) -> Option<&'a Json> {
    status["files"].as_array()?.iter().find(|f| {
        f["path"]
            .as_str()
            .is_some_and(|p| Path::new(p).file_name().is_some_and(|n| n == name))
    })
}

fn has_status(status: &Json, name: &str, wanted: &str) -> bool {
    watched(status, name).is_some_and(|f| f["status"] == wanted)
}

#[test]
fn capsules_folder_is_watched_and_reported_by_watch_status() {
    let db = tempfile::tempdir().expect("temp dir");
    let folder = tempfile::tempdir().expect("capsule dir");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../capsules/examples");
    std::fs::copy(
        examples.join("10_medical_schema.kip"),
        folder.path().join("10_medical_schema.kip"),
    )
    .expect("copy the example");
    // Line 3 lacks the comma between the key's two fields.
    std::fs::write(
        folder.path().join("broken.kip"),
        "// Not KIP.\nUPSERT {\n  CONCEPT ?s { {type: \"Symptom\" name: \"Cough\"} }\n}\n",
    )
    .expect("broken capsule");
    let dir = folder.path().to_str().expect("UTF-8 path");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0", "--capsules", dir]);

    let status = poll_watch_status(
        &server,
        "the good capsule imported and the broken one failed",
        |s| {
            s["ready"] == true
                && has_status(s, "10_medical_schema.kip", "imported")
                && has_status(s, "broken.kip", "failed")
        },
    );
    let reported = Path::new(status["folder"].as_str().expect("a folder"));
    assert_eq!(
        reported.canonicalize().expect("the folder exists"),
        folder.path().canonicalize().expect("canonical"),
        "{status:#}"
    );
    assert!(status.get("note").is_none(), "{status:#}");
    let broken = watched(&status, "broken.kip").expect("broken.kip");
    let error = &broken["errors"][0];
    assert!(error["code"].is_string(), "{broken:#}");
    assert_eq!(error["data"]["line"], 3, "{broken:#}");
    assert!(error["data"]["column"].as_u64().is_some(), "{broken:#}");
    let good = watched(&status, "10_medical_schema.kip").expect("the schema capsule");
    assert_eq!(good["errors"], json!([]), "{good:#}");
    // What the good capsule defines is in the nexus.
    let (_, found) = server.post(
        "/api/kip",
        &json!({"command": "FIND(?t.name) WHERE { ?t {type: \"$ConceptType\", name: \"Symptom\"} }"}),
    );
    assert_eq!(found["result"], json!(["Symptom"]), "{found}");

    // A capsule written into the folder later is imported too.
    std::fs::write(
        folder.path().join("later.kip"),
        "UPSERT {\n  CONCEPT ?s {\n    {type: \"Symptom\", name: \"Watched Fever\"}\n    SET ATTRIBUTES { description: \"Dropped in after the server started.\" }\n  }\n}\n",
    )
    .expect("new capsule");
    let start = Instant::now();
    loop {
        let (status, found) = server.post(
            "/api/kip",
            &json!({"command": "FIND(?s.name) WHERE { ?s {type: \"Symptom\", name: \"Watched Fever\"} }"}),
        );
        assert_eq!(status, 200, "{found}");
        if found["result"] == json!(["Watched Fever"]) {
            break;
        }
        assert!(
            start.elapsed() < WATCH_DEADLINE,
            "later.kip was not imported within {WATCH_DEADLINE:?}: {found}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // A failed file is tried again after an import that changed the graph
    // (it may have been waiting for a type): broken.kip fails again.
    poll_watch_status(
        &server,
        "later.kip imported and broken.kip failed again",
        |s| has_status(s, "later.kip", "imported") && has_status(s, "broken.kip", "failed"),
    );
    // The watcher's writes are recorded as the server's watcher.
    let (_, changes) = server.get("/api/changes?since=0");
    let origins: Vec<&str> = changes["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .filter_map(|c| c["origin"].as_str())
        .collect();
    assert!(origins.contains(&"kip-serve/watch"), "{changes:#}");
}

#[test]
fn capsules_folder_is_created_when_missing() {
    let db = tempfile::tempdir().expect("temp dir");
    let parent = tempfile::tempdir().expect("parent dir");
    let folder = parent.path().join("new/capsules");
    let dir = folder.to_str().expect("UTF-8 path");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0", "--capsules", dir]);
    assert!(folder.is_dir());
    let status = poll_watch_status(&server, "the empty folder taken up", |s| s["ready"] == true);
    assert_eq!(status["files"], json!([]), "{status:#}");
    assert!(status["folder"].is_string(), "{status:#}");
}

#[test]
fn without_capsules_watch_status_says_no_folder_is_watched() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
    let (status, answer) = server.post("/api/watch_status", &json!({}));
    assert_eq!(status, 200);
    assert_eq!(answer["folder"], Json::Null);
    assert!(
        answer["note"]
            .as_str()
            .is_some_and(|n| n.contains("--capsules")),
        "{answer}"
    );
}

#[test]
fn read_only_refuses_capsules_with_a_usage_error() {
    let db = tempfile::tempdir().expect("temp dir");
    let parent = tempfile::tempdir().expect("parent dir");
    let folder = parent.path().join("capsules");
    let dir = folder.to_str().expect("UTF-8 path");
    let out = kip_run(
        db.path(),
        &[
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--read-only",
            "--capsules",
            dir,
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--capsules") && stderr.contains("--read-only"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "it never listened");
    assert!(!folder.exists(), "nothing was created");
}

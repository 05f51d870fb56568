//! `kip serve` as a real process on an ephemeral port: both KIP endpoints,
//! the other API operations, server-sent events that carry a write made by
//! a separate `kip exec` process, read-only mode, the token enforced when
//! binding off loopback (from `--token`, which warns, `--token-file` or
//! `KIP_SERVE_TOKEN`), the watched capsule folder (`--capsules`), and what
//! a web page could send through the curator's browser — a foreign
//! `Origin`, a foreign `Host` (DNS rebinding), a non-JSON body, a CORS
//! preflight — refused without writing anything, unless `--allow-origin` /
//! `--allow-host` let it in.

use crate::common;

use std::io::{Read as _, Write as _};
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

/// The official KIP MCP bridge's third tool (BRIEF §5): `list_logs` pages
/// the cognitive trace oldest first through `POST /kip`.
#[test]
fn list_logs_pages_the_trace_oldest_first_through_the_bridges_envelope() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
    for name in ["Ann", "Bo", "Cy"] {
        let upsert = format!(
            "UPSERT {{ CONCEPT ?p {{ {{type: \"Person\", name: \"{name}\"}} SET ATTRIBUTES {{ person_class: \"Human\" }} }} }}"
        );
        let (_, r) = server.post(
            "/kip",
            &json!({"method": "execute_kip", "params": {"command": upsert}}),
        );
        assert!(r["result"].is_object(), "{r}");
    }
    let logs =
        |params: Json| server.post("/kip", &json!({"method": "list_logs", "params": params}));

    // Every page, following the cursors, gives the whole trace once, in order.
    let (status, all) = server.get("/api/trace?limit=500");
    assert_eq!(status, 200);
    let mut expected: Vec<Json> = all["entries"].as_array().expect("entries").clone();
    expected.reverse();
    let mut seen: Vec<Json> = Vec::new();
    let mut cursor: Option<Json> = None;
    loop {
        let mut params = json!({"limit": 2});
        if let Some(c) = &cursor {
            params["cursor"] = c.clone();
        }
        let (status, page) = logs(params);
        assert_eq!(status, 200, "{page}");
        let result = page["result"].as_array().expect("result");
        assert!(result.len() <= 2, "{page}");
        seen.extend(result.iter().cloned());
        match page.get("next_cursor") {
            Some(c) => cursor = Some(c.clone()),
            None => break,
        }
    }
    let ids = |entries: &[Json]| -> Vec<String> {
        entries
            .iter()
            .map(|e| e["id"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert!(
        expected.len() >= 4,
        "the three writes and the server's start: {expected:?}"
    );
    assert_eq!(ids(&seen), ids(&expected));
    assert!(
        seen.iter()
            .any(|e| e["message"].as_str().is_some_and(|m| m.contains("UPSERT")))
    );

    // The default page is ten entries; a page never holds more than 100;
    // 0 asks for an empty page.
    let (_, page) = logs(json!({}));
    assert_eq!(
        page["result"].as_array().map(Vec::len),
        Some(expected.len().min(10))
    );
    let (_, page) = logs(json!({"limit": 1000}));
    assert_eq!(
        page["result"].as_array().map(Vec::len),
        Some(expected.len().min(100))
    );
    let (status, page) = logs(json!({"limit": 0}));
    assert_eq!(status, 200);
    assert_eq!(page["result"], json!([]));

    // A forged cursor is the client's mistake, with KIP's error shape.
    let (status, e) = logs(json!({"cursor": "T:1; DROP"}));
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["error"]["code"], "KIP_1001");
    let (status, e) = logs(json!({"limit": "ten"}));
    assert_eq!(status, 400, "{e}");
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
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../capsules/examples");
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

// What a web page in the curator's browser could send: the guard in front
// of every route (src/serve/guard.rs). Each refusal is checked to have
// written nothing.

/// An answer to [`raw`]: the status, the head (lowercased) and the body.
struct Raw {
    status: u16,
    head: String,
    body: Json,
}

impl Raw {
    /// The value of the response header `name` (lowercase), if present.
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == name).then(|| v.trim())
        })
    }

    /// Whether any `Access-Control-Allow-*` header came back.
    fn grants_cors(&self) -> bool {
        self.head
            .lines()
            .any(|l| l.starts_with("access-control-allow-"))
    }
}

/// One HTTP/1.1 request with exactly the given headers (no `Host` or
/// `Content-Type` added, unlike `common::http`), as a browser page or a
/// rebinding attack would send it.
fn raw(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Raw {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(common::READ_TIMEOUT))
        .expect("timeout");
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).expect("send");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read the response");
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    Raw {
        status,
        head: head.to_ascii_lowercase(),
        body: serde_json::from_str(body).unwrap_or_else(|_| Json::String(body.to_owned())),
    }
}

const EVIL: &str = "http://evil.example";

/// A write of the Person `name`, as the JSON text of `execute_kip` arguments.
fn upsert_text(name: &str) -> String {
    json!({"command": format!("UPSERT {{ CONCEPT ?p {{ {{type: \"Person\", name: \"{name}\"}} SET ATTRIBUTES {{ person_class: \"Human\" }} }} }}")})
        .to_string()
}

/// The change log's last sequence number, asked the way curl would.
fn last_seq(port: u16) -> u64 {
    let (status, info) = http(port, "GET", "/api/info", &[], None);
    assert_eq!(status, 200, "{info}");
    info["last_change_seq"].as_u64().expect("last_change_seq")
}

/// How many Persons named `name` the nexus holds, asked by `kip exec`.
fn persons_named(db: &Path, name: &str) -> u64 {
    let out = kip_run(
        db,
        &[
            "exec",
            &format!("FIND(COUNT(?p)) WHERE {{ ?p {{type: \"Person\", name: \"{name}\"}} }}"),
        ],
    );
    let r: Json = serde_json::from_slice(&out.stdout).expect("a KIP response");
    r["result"].as_u64().unwrap_or_else(|| panic!("{r}"))
}

/// Asserts that `refused` is a KIP-style refusal with `status` and `code`.
fn assert_refused(refused: &Raw, status: u16, code: &str, what: &str) {
    assert_eq!(refused.status, status, "{what}: {}", refused.body);
    assert_eq!(
        refused.body["error"]["code"], code,
        "{what}: {}",
        refused.body
    );
    assert!(refused.body["error"]["message"].is_string(), "{what}");
    assert!(refused.body["error"]["hint"].is_string(), "{what}");
    assert!(!refused.grants_cors(), "{what}: {}", refused.head);
}

#[test]
fn requests_from_a_foreign_origin_are_refused_and_write_nothing() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
    let host = format!("127.0.0.1:{}", server.port);
    let before = last_seq(server.port);
    let write = upsert_text("Evil Person");

    for (content_type, what) in [
        ("application/json", "JSON"),
        ("text/plain;charset=UTF-8", "a simple text/plain request"),
        ("application/x-www-form-urlencoded", "a form"),
    ] {
        for path in ["/api/kip", "/api/execute"] {
            let r = raw(
                server.port,
                "POST",
                path,
                &[
                    ("Host", &host),
                    ("Origin", EVIL),
                    ("Content-Type", content_type),
                ],
                &write,
            );
            assert_refused(&r, 403, "API_UNAUTHORIZED", &format!("{what} to {path}"));
        }
    }
    let envelope = json!({"method": "execute_kip", "params": serde_json::from_str::<Json>(&write).expect("JSON")});
    let r = raw(
        server.port,
        "POST",
        "/kip",
        &[
            ("Host", &host),
            ("Origin", EVIL),
            ("Content-Type", "application/json"),
        ],
        &envelope.to_string(),
    );
    assert_refused(&r, 403, "API_UNAUTHORIZED", "the /kip envelope");
    let bundle = json!({"file_name": "evil.yaml", "text": "- type: Person\n  name: Evil Person\n  id: evil\n  person_class: Human\n"});
    let r = raw(
        server.port,
        "POST",
        "/api/import",
        &[
            ("Host", &host),
            ("Origin", EVIL),
            ("Content-Type", "application/json"),
        ],
        &bundle.to_string(),
    );
    assert_refused(&r, 403, "API_UNAUTHORIZED", "an import");
    // A sandboxed frame or a file:// page sends `Origin: null`; a page on
    // the same host but another port is another origin.
    for origin in ["null", "http://127.0.0.1:1", "http://localhost"] {
        let r = raw(
            server.port,
            "POST",
            "/api/kip",
            &[
                ("Host", &host),
                ("Origin", origin),
                ("Content-Type", "application/json"),
            ],
            &write,
        );
        assert_refused(&r, 403, "API_UNAUTHORIZED", origin);
    }
    // Reading is refused too: the answers, the event stream, the UI.
    for path in ["/api/info", "/api/changes?since=0", "/api/events", "/"] {
        let r = raw(
            server.port,
            "GET",
            path,
            &[("Host", &host), ("Origin", EVIL)],
            "",
        );
        assert_refused(&r, 403, "API_UNAUTHORIZED", path);
    }

    assert_eq!(last_seq(server.port), before, "nothing was written");
    assert_eq!(persons_named(db.path(), "Evil Person"), 0);
}

#[test]
fn bodies_that_are_not_json_are_refused_also_without_an_origin() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
    let host = format!("127.0.0.1:{}", server.port);
    let before = last_seq(server.port);
    let write = upsert_text("Plain Person");

    for content_type in [
        Some("text/plain"),
        Some("text/plain;charset=UTF-8"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=kip"),
        Some("application/jsonp"),
        None,
    ] {
        let mut headers = vec![("Host", host.as_str())];
        headers.extend(content_type.map(|t| ("Content-Type", t)));
        for path in ["/api/kip", "/api/import", "/kip"] {
            let r = raw(server.port, "POST", path, &headers, &write);
            assert_refused(
                &r,
                415,
                "API_BAD_REQUEST",
                &format!("{content_type:?} to {path}"),
            );
        }
    }
    assert_eq!(last_seq(server.port), before, "nothing was written");
    assert_eq!(persons_named(db.path(), "Plain Person"), 0);

    // JSON with parameters, in any case, is JSON.
    let r = raw(
        server.port,
        "POST",
        "/api/kip",
        &[
            ("Host", &host),
            ("Content-Type", "Application/JSON; charset=utf-8"),
        ],
        &write,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["result"].is_object(), "{}", r.body);
    assert_eq!(persons_named(db.path(), "Plain Person"), 1);
}

#[test]
fn a_foreign_host_name_is_refused_against_dns_rebinding() {
    let db = tempfile::tempdir().expect("temp dir");
    let ui = tempfile::tempdir().expect("ui dir");
    std::fs::write(ui.path().join("index.html"), "<title>KIP Explorer</title>").expect("index");
    let ui_arg = ui.path().to_str().expect("UTF-8 path");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0", "--ui", ui_arg]);
    let port = server.port;
    let before = last_seq(port);
    let write = upsert_text("Rebound Person");

    // A page on evil.example whose name now resolves to 127.0.0.1: to the
    // browser its requests are same-origin, so only `Host` gives it away.
    let evil_host = format!("evil.example:{port}");
    let evil_origin = format!("http://evil.example:{port}");
    for (method, path) in [
        ("POST", "/api/kip"),
        ("POST", "/kip"),
        ("GET", "/api/info"),
        ("GET", "/api/events"),
        ("GET", "/"),
    ] {
        for origin in [None, Some(evil_origin.as_str())] {
            let mut headers = vec![("Host", evil_host.as_str())];
            headers.extend(origin.map(|o| ("Origin", o)));
            if method == "POST" {
                headers.push(("Content-Type", "application/json"));
            }
            let body = if method == "POST" { write.as_str() } else { "" };
            let r = raw(port, method, path, &headers, body);
            assert_refused(&r, 421, "API_UNAUTHORIZED", &format!("{method} {path}"));
        }
    }
    let wrong_port = format!("localhost:{}", port.wrapping_add(1));
    for host in [
        wrong_port.as_str(),
        "localhost",
        "127.0.0.1",
        "192.168.1.5",
        "evil.example",
    ] {
        let r = raw(port, "GET", "/api/info", &[("Host", host)], "");
        assert_refused(&r, 421, "API_UNAUTHORIZED", host);
    }
    let r = raw(port, "GET", "/api/info", &[], "");
    assert_eq!(r.status, 421, "no Host at all");
    // An absolute request target must name the server too.
    let own = format!("127.0.0.1:{port}");
    let absolute = format!("http://evil.example:{port}/api/info");
    let r = raw(port, "GET", &absolute, &[("Host", &own)], "");
    assert_refused(&r, 421, "API_UNAUTHORIZED", "an absolute target");
    let r = raw(
        port,
        "GET",
        "/api/info",
        &[("Host", &own), ("Host", &own)],
        "",
    );
    assert_eq!(r.status, 421, "two Host headers");
    assert_eq!(last_seq(port), before, "nothing was written");
    assert_eq!(persons_named(db.path(), "Rebound Person"), 0);

    // The server's own names with its port are answered.
    for host in [
        format!("localhost:{port}"),
        format!("LocalHost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("127.0.0.2:{port}"),
        format!("[::1]:{port}"),
    ] {
        let r = raw(port, "GET", "/", &[("Host", &host)], "");
        assert_eq!(r.status, 200, "{host}");
        let r = raw(port, "GET", "/api/info", &[("Host", &host)], "");
        assert_eq!(r.body["origin"], "kip-serve", "{host}");
    }
}

#[test]
fn cors_preflights_get_no_permissive_answer() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
    let host = format!("127.0.0.1:{}", server.port);
    let own = format!("http://{host}");
    let before = last_seq(server.port);
    for origin in [EVIL, own.as_str()] {
        for path in ["/api/kip", "/kip", "/api/events", "/"] {
            let r = raw(
                server.port,
                "OPTIONS",
                path,
                &[
                    ("Host", &host),
                    ("Origin", origin),
                    ("Access-Control-Request-Method", "POST"),
                    ("Access-Control-Request-Headers", "content-type"),
                ],
                "",
            );
            assert_refused(&r, 403, "API_UNAUTHORIZED", &format!("{origin} {path}"));
        }
    }
    assert_eq!(last_seq(server.port), before, "nothing was written");
}

#[test]
fn same_origin_pages_and_clients_without_an_origin_are_served() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
    let port = server.port;
    // The web UI's own requests: Origin is the page's, Host the same.
    for (i, host) in [format!("127.0.0.1:{port}"), format!("localhost:{port}")]
        .iter()
        .enumerate()
    {
        let origin = format!("http://{host}");
        let name = format!("Own Person {i}");
        let r = raw(
            port,
            "POST",
            "/api/kip",
            &[
                ("Host", host),
                ("Origin", &origin),
                ("Content-Type", "application/json"),
            ],
            &upsert_text(&name),
        );
        assert_eq!(r.status, 200, "{host}: {}", r.body);
        assert!(r.body["result"].is_object(), "{}", r.body);
        assert_eq!(r.header("access-control-allow-origin"), None);
        assert_eq!(persons_named(db.path(), &name), 1);
    }
    let own = format!("http://127.0.0.1:{port}");
    let mut events = Sse::open(port, "/api/events", &[("Origin", &own)]);
    assert_eq!(events.status, 200);
    assert_eq!(events.next_event().event, "ready");
    // curl and agents send no Origin.
    let r = raw(
        port,
        "POST",
        "/api/kip",
        &[
            ("Host", &format!("localhost:{port}")),
            ("Content-Type", "application/json"),
        ],
        &upsert_text("Curl Person"),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(persons_named(db.path(), "Curl Person"), 1);
    // A page of localhost is not one of 127.0.0.1: browsers call it
    // cross-origin, and so does the server.
    let r = raw(
        port,
        "POST",
        "/api/kip",
        &[
            ("Host", &format!("127.0.0.1:{port}")),
            ("Origin", &format!("http://localhost:{port}")),
            ("Content-Type", "application/json"),
        ],
        &upsert_text("Crossed Person"),
    );
    assert_refused(&r, 403, "API_UNAUTHORIZED", "localhost page to 127.0.0.1");
    assert_eq!(persons_named(db.path(), "Crossed Person"), 0);
}

#[test]
fn allow_origin_and_allow_host_let_the_named_pages_and_names_in() {
    let db = tempfile::tempdir().expect("temp dir");
    let dev = "http://localhost:5173";
    let server = Server::start(
        db.path(),
        &[
            "--addr",
            "127.0.0.1:0",
            "--allow-origin",
            "http://LOCALHOST:5173/",
            "--allow-origin",
            "https://kip.example",
            "--allow-host",
            "kip.test",
            "--allow-host",
            "Kip.Proxy",
        ],
    );
    let port = server.port;
    let host = format!("127.0.0.1:{port}");

    // The allowed page's preflight is answered for it alone.
    let r = raw(
        port,
        "OPTIONS",
        "/api/kip",
        &[
            ("Host", &host),
            ("Origin", dev),
            ("Access-Control-Request-Method", "POST"),
            ("Access-Control-Request-Headers", "content-type"),
        ],
        "",
    );
    assert_eq!(r.status, 204, "{}", r.head);
    assert_eq!(r.header("access-control-allow-origin"), Some(dev));
    let methods = r.header("access-control-allow-methods").expect("methods");
    assert!(methods.contains("post"), "{methods}");
    let headers = r.header("access-control-allow-headers").expect("headers");
    assert!(headers.contains("content-type"), "{headers}");
    assert!(!r.head.contains('*'), "{}", r.head);
    // Its requests are served, with the header that lets it read them.
    let r = raw(
        port,
        "POST",
        "/api/kip",
        &[
            ("Host", &host),
            ("Origin", dev),
            ("Content-Type", "application/json"),
        ],
        &upsert_text("Dev Person"),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("access-control-allow-origin"), Some(dev));
    assert!(
        r.header("vary").is_some_and(|v| v.contains("origin")),
        "{}",
        r.head
    );
    assert_eq!(persons_named(db.path(), "Dev Person"), 1);
    let r = raw(
        port,
        "GET",
        "/api/info",
        &[("Host", &host), ("Origin", "https://kip.example:443")],
        "",
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("https://kip.example")
    );
    // Another port of the same host is another origin.
    let before = last_seq(port);
    for origin in ["http://localhost:5174", "http://kip.example"] {
        let r = raw(
            port,
            "OPTIONS",
            "/api/kip",
            &[
                ("Host", &host),
                ("Origin", origin),
                ("Access-Control-Request-Method", "POST"),
            ],
            "",
        );
        assert_refused(&r, 403, "API_UNAUTHORIZED", origin);
        let r = raw(
            port,
            "POST",
            "/api/kip",
            &[
                ("Host", &host),
                ("Origin", origin),
                ("Content-Type", "application/json"),
            ],
            &upsert_text("Other Person"),
        );
        assert_refused(&r, 403, "API_UNAUTHORIZED", origin);
    }
    // A non-JSON body from an allowed origin is still refused, and the
    // page may read why.
    let r = raw(
        port,
        "POST",
        "/api/kip",
        &[
            ("Host", &host),
            ("Origin", dev),
            ("Content-Type", "text/plain"),
        ],
        &upsert_text("Other Person"),
    );
    assert_eq!(r.status, 415);
    assert_eq!(r.header("access-control-allow-origin"), Some(dev));
    assert_eq!(last_seq(port), before, "nothing was written");

    // Listed names are answered on any port (a reverse proxy in front),
    // and a page served under such a name is same-origin there.
    for listed in [
        format!("kip.test:{port}"),
        "kip.test".to_owned(),
        "kip.proxy:443".to_owned(),
    ] {
        let r = raw(port, "GET", "/api/info", &[("Host", &listed)], "");
        assert_eq!(r.status, 200, "{listed}: {}", r.body);
    }
    let r = raw(
        port,
        "POST",
        "/api/kip",
        &[
            ("Host", "kip.proxy"),
            ("Origin", "https://kip.proxy"),
            ("Content-Type", "application/json"),
        ],
        &upsert_text("Proxied Person"),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(persons_named(db.path(), "Proxied Person"), 1);
    let r = raw(
        port,
        "GET",
        "/api/info",
        &[("Host", &format!("kip.other:{port}"))],
        "",
    );
    assert_refused(&r, 421, "API_UNAUTHORIZED", "an unlisted name");
}

#[test]
fn allow_lists_that_would_open_the_server_to_any_page_are_usage_errors() {
    let db = tempfile::tempdir().expect("temp dir");
    for (flag, value) in [
        ("--allow-origin", "*"),
        ("--allow-origin", "null"),
        ("--allow-origin", "localhost:5173"),
        ("--allow-origin", "http://localhost:5173/app"),
        ("--allow-host", "kip.test:4840"),
        ("--allow-host", "http://kip.test"),
    ] {
        let out = kip_run(db.path(), &["serve", "--addr", "127.0.0.1:0", flag, value]);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(flag), "{flag} {value}: {stderr}");
        assert!(out.stdout.is_empty(), "it never listened");
    }
}

/// A `kip serve` started with extra environment variables and its standard
/// error captured up to the line that says it serves; killed when dropped.
struct Captured {
    child: std::process::Child,
    port: u16,
    /// Standard error up to and including "serving the nexus …".
    stderr: String,
}

impl Captured {
    fn start(db: &Path, args: &[&str], env: &[(&str, &str)]) -> Captured {
        use std::io::BufRead as _;
        let mut child = common::kip()
            .arg("--db")
            .arg(db)
            .arg("serve")
            .args(args)
            .env_remove("KIP_SERVE_TOKEN")
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kip serve starts");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the listening line");
        let port = line
            .trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        let mut stderr = String::new();
        let mut reader = std::io::BufReader::new(child.stderr.take().expect("stderr"));
        while !stderr.contains("serving the nexus") {
            let read = reader.read_line(&mut stderr).expect("standard error");
            assert!(read > 0, "standard error ended: {stderr}");
        }
        Captured {
            child,
            port,
            stderr,
        }
    }
}

impl Drop for Captured {
    fn drop(&mut self) {
        // Only the child this test started, by its handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The token is required, and accepted, on an API request of `port`.
fn assert_token_enforced(port: u16, token: &str) {
    let body = json!({"command": "DESCRIBE DOMAINS"});
    let (status, r) = http(port, "POST", "/api/kip", &[], Some(&body));
    assert_eq!(status, 401);
    assert_eq!(r["error"]["code"], "API_UNAUTHORIZED");
    let bearer = format!("Bearer {token}");
    let (status, r) = http(
        port,
        "POST",
        "/api/kip",
        &[("Authorization", &bearer)],
        Some(&body),
    );
    assert_eq!(status, 200, "{r}");
    assert!(r["result"].is_array(), "{r}");
}

#[test]
fn a_token_on_the_command_line_warns_that_the_process_list_shows_it() {
    let db = tempfile::tempdir().expect("temp dir");
    let token = "argv-visible-token";
    let server = Captured::start(db.path(), &["--addr", "0.0.0.0:0", "--token", token], &[]);
    assert!(server.stderr.contains("process list"), "{}", server.stderr);
    assert!(server.stderr.contains("--token-file"), "{}", server.stderr);
    assert!(
        !server.stderr.contains(token),
        "never logged: {}",
        server.stderr
    );
    assert_token_enforced(server.port, token);
}

#[test]
fn the_token_is_read_from_a_file_or_the_environment_without_a_warning() {
    let db = tempfile::tempdir().expect("temp dir");
    let dir = tempfile::tempdir().expect("token dir");
    let file = dir.path().join("token");
    std::fs::write(&file, "  file-token-1  \nignored second line\n").expect("token file");
    let file_arg = file.to_str().expect("UTF-8 path");

    let server = Captured::start(
        db.path(),
        &["--addr", "0.0.0.0:0", "--token-file", file_arg],
        &[],
    );
    assert!(!server.stderr.contains("process list"), "{}", server.stderr);
    assert!(!server.stderr.contains("file-token-1"), "{}", server.stderr);
    assert_token_enforced(server.port, "file-token-1");
    drop(server);

    let server = Captured::start(
        db.path(),
        &["--addr", "0.0.0.0:0"],
        &[("KIP_SERVE_TOKEN", "env-token-2")],
    );
    assert!(!server.stderr.contains("process list"), "{}", server.stderr);
    assert!(!server.stderr.contains("env-token-2"), "{}", server.stderr);
    assert_token_enforced(server.port, "env-token-2");
    // Bound to every interface, any IP literal is answered; a name is not,
    // token or no token.
    let bearer = "Bearer env-token-2";
    let ip_host = format!("10.1.2.3:{}", server.port);
    let r = raw(
        server.port,
        "GET",
        "/api/info",
        &[("Host", &ip_host), ("Authorization", bearer)],
        "",
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let name_host = format!("evil.example:{}", server.port);
    let r = raw(
        server.port,
        "GET",
        "/api/info",
        &[("Host", &name_host), ("Authorization", bearer)],
        "",
    );
    assert_refused(&r, 421, "API_UNAUTHORIZED", "a name on 0.0.0.0");
    drop(server);

    // The file wins over the environment.
    let server = Captured::start(
        db.path(),
        &["--addr", "0.0.0.0:0", "--token-file", file_arg],
        &[("KIP_SERVE_TOKEN", "env-token-2")],
    );
    assert_token_enforced(server.port, "file-token-1");
}

#[test]
fn a_token_file_that_is_missing_or_empty_is_a_clear_error() {
    let db = tempfile::tempdir().expect("temp dir");
    let dir = tempfile::tempdir().expect("token dir");
    let missing = dir.path().join("missing");
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "   \nsecond line is not the token\n").expect("empty token file");
    for (file, says) in [
        (&missing, "cannot read the token file"),
        (&empty, "is empty"),
    ] {
        let arg = file.to_str().expect("UTF-8 path");
        let out = kip_run(
            db.path(),
            &["serve", "--addr", "127.0.0.1:0", "--token-file", arg],
        );
        assert_eq!(out.status.code(), Some(2), "{arg}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says) && stderr.contains(arg), "{stderr}");
        assert!(out.stdout.is_empty(), "it never listened");
    }
    let out = kip_run(
        db.path(),
        &[
            "serve",
            "--token",
            "a",
            "--token-file",
            empty.to_str().expect("UTF-8"),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "--token and --token-file conflict"
    );
}

/// One request with a `Host` header and nothing else; the status, the head
/// (lower case) and the body's bytes.
fn fetch(port: u16, method: &str, path: &str) -> (u16, String, Vec<u8>) {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(common::READ_TIMEOUT))
        .expect("timeout");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read");
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&answer[..split]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    (
        status,
        head.to_ascii_lowercase(),
        answer[split + 4..].to_vec(),
    )
}

/// `kip` carries its web UI: a copy of the binary far from the repository,
/// run in an empty folder, serves the whole UI (issue 15: `cargo install`
/// or a release binary copied anywhere must not be UI-less).
#[test]
fn a_kip_binary_copied_anywhere_serves_its_built_in_web_ui() {
    let away = tempfile::tempdir().expect("temp dir");
    let program = away.path().join("kip");
    std::fs::copy(kip_e2e::kip_bin(), &program).expect("copy kip");
    let db = tempfile::tempdir().expect("temp dir");
    let server =
        common::Server::start_from(&program, away.path(), db.path(), &["--addr", "127.0.0.1:0"]);

    let (status, head, body) = fetch(server.port, "GET", "/");
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("content-type: text/html"), "{head}");
    assert!(head.contains("cache-control: no-cache"), "{head}");
    let index = String::from_utf8_lossy(&body).into_owned();
    assert!(index.contains("<script"), "{index}");

    // Every script and stylesheet the page names is served, with its type.
    let assets: Vec<String> = index
        .split(['"', '\''])
        .filter_map(|s| s.strip_prefix('.').unwrap_or(s).strip_prefix("/assets/"))
        .map(|name| format!("/assets/{name}"))
        .collect();
    assert!(!assets.is_empty(), "{index}");
    for asset in &assets {
        let (status, head, body) = fetch(server.port, "GET", asset);
        assert_eq!(status, 200, "{asset}: {head}");
        assert!(!body.is_empty(), "{asset}");
        let expected = if asset.ends_with(".css") {
            "text/css"
        } else {
            "text/javascript"
        };
        assert!(head.contains(expected), "{asset}: {head}");
        assert!(head.contains("immutable"), "{asset}: {head}");
    }

    // The UI's own routes are the single page; HEAD has no body; the API
    // is still the API; writes to the UI's files are refused.
    let (status, _, body) = fetch(server.port, "GET", "/console/some/route");
    assert_eq!(status, 200);
    assert_eq!(String::from_utf8_lossy(&body), index);
    let (status, head, body) = fetch(server.port, "HEAD", "/");
    assert_eq!(status, 200, "{head}");
    assert!(body.is_empty());
    let (status, _) = server.get("/api/info");
    assert_eq!(status, 200);
    // (The request guard already refuses a body-less DELETE with 415.)
    let (status, head, _) = fetch(server.port, "DELETE", "/index.html");
    assert!((400..500).contains(&status), "{head}");
}

#[test]
fn the_trace_is_listed_filtered_paged_added_to_flagged_and_reverted_over_http() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
    let agent = [("X-KIP-Originator", "agent-7")];
    for name in ["Ann", "Ben"] {
        let (status, _) = server.request(
            "POST",
            "/api/kip",
            &agent,
            Some(&serde_json::from_str(&upsert_text(name)).expect("JSON")),
        );
        assert_eq!(status, 200);
    }
    // Filters map onto trace_list; the header named the writer.
    let (status, page) = server.get("/api/trace?originator=agent-7&type=TRACE&limit=1");
    assert_eq!(status, 200, "{page}");
    let entries = page["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 1);
    assert!(
        entries[0]["data"]["command"]
            .as_str()
            .is_some_and(|c| c.contains("Ben"))
    );
    let before = page["next_before"].as_str().expect("a next page");
    let (_, older) = server.get(&format!(
        "/api/trace?originator=agent-7&type=TRACE&limit=1&before={before}"
    ));
    let ann = older["entries"][0].clone();
    assert!(
        ann["data"]["command"]
            .as_str()
            .is_some_and(|c| c.contains("Ann"))
    );
    let (status, e) = server.get("/api/trace?colour=red");
    assert_eq!(
        (status, &e["error"]["code"]),
        (400, &json!("API_BAD_REQUEST"))
    );
    let (status, e) = server.get("/api/trace?limit=many");
    assert_eq!(
        (status, &e["error"]["code"]),
        (400, &json!("API_BAD_REQUEST"))
    );

    // One entry by id.
    let id = ann["id"].as_str().expect("id");
    let (status, one) = server.get(&format!("/api/trace/{id}"));
    assert_eq!((status, &one["id"]), (200, &ann["id"]));

    // A curator's note, a review flag, a revert.
    let curator = [("X-KIP-Originator", "curator")];
    let (status, note) = server.request(
        "POST",
        "/api/trace",
        &curator,
        Some(&json!({"type": "SAY", "message": "Checking the agent's writes.", "tag": ["Annotation"]})),
    );
    assert_eq!(
        (status, &note["originator"]),
        (200, &json!("curator")),
        "{note}"
    );
    let (status, flagged) = server.request(
        "POST",
        "/api/trace/flag",
        &curator,
        Some(&json!({"id": id, "set": ["Rejected"]})),
    );
    assert_eq!(status, 200, "{flagged}");
    assert!(
        flagged["flags"]
            .as_array()
            .is_some_and(|f| f.contains(&json!("Rejected")))
    );
    let (status, reverted) = server.request(
        "POST",
        "/api/trace/revert",
        &curator,
        Some(&json!({"id": id})),
    );
    assert_eq!(status, 200, "{reverted}");
    assert_eq!(reverted["entry"]["originator"], "curator");
    assert_eq!(persons_named(db.path(), "Ann"), 0);
    assert_eq!(persons_named(db.path(), "Ben"), 1);
    let (status, e) = server.post("/api/trace/revert", &json!({"id": "T:999999"}));
    assert_eq!(
        (status, &e["error"]["code"]),
        (400, &json!("KIP_3001")),
        "{e}"
    );

    // The server's own start is a SPACE entry.
    let (_, space) = server.get("/api/trace?type=SPACE&tag=SpaceAcquire");
    assert_eq!(space["entries"][0]["originator"], "http");
}

/// BRIEF §5: a write retried with the same `Idempotency-Key` (after a
/// time-out, say) is applied once, over `POST /api/kip` and the bridge's
/// `POST /kip`, and across a restart of the server; the key with another
/// request is refused.
#[test]
fn a_write_retried_with_the_same_idempotency_key_is_applied_once() {
    let db = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
    let (_, r) = server.post(
        "/api/kip",
        &json!({"command": "UPSERT { CONCEPT ?d { {type: \"Domain\", name: \"Visits\"} SET ATTRIBUTES { visits: 0 } } }"}),
    );
    assert!(r["result"].is_object(), "{r}");
    let add = json!({"command": "UPDATE ?d SET ATTRIBUTES { visits: ADD(?d.attributes.visits, 1) } WHERE { ?d {type: \"Domain\", name: \"Visits\"} }"});
    let visits = |server: &Server| {
        server.post(
            "/api/kip",
            &json!({"command": "FIND(?d.attributes.visits) WHERE { ?d {type: \"Domain\", name: \"Visits\"} }"}),
        )
        .1["result"]
            .clone()
    };
    let keyed = |server: &Server, path: &str, key: &str, body: &Json| {
        server.request("POST", path, &[("Idempotency-Key", key)], Some(body))
    };
    let (status, first) = keyed(&server, "/api/kip", "retry-1", &add);
    assert_eq!(status, 200, "{first}");
    let (_, again) = keyed(&server, "/api/kip", "retry-1", &add);
    assert_eq!(again, first);
    assert_eq!(visits(&server), json!([1]));

    // The bridge's envelope honours the header too.
    let envelope = json!({"method": "execute_kip", "params": add});
    keyed(&server, "/kip", "retry-2", &envelope);
    keyed(&server, "/kip", "retry-2", &envelope);
    assert_eq!(visits(&server), json!([2]));

    // Keys are kept in the nexus: a restarted server still knows them.
    drop(server);
    server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
    let (_, after_restart) = keyed(&server, "/api/kip", "retry-1", &add);
    assert_eq!(after_restart, first);
    assert_eq!(visits(&server), json!([2]));

    let (status, e) = keyed(
        &server,
        "/api/kip",
        "retry-1",
        &json!({"command": "DESCRIBE PRIMER"}),
    );
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["error"]["code"], "API_BAD_REQUEST");
    assert!(
        e["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("retry-1")),
        "{e}"
    );
    // Without a key, the same request applies again, as it always did.
    server.post("/api/kip", &add);
    assert_eq!(visits(&server), json!([3]));
}

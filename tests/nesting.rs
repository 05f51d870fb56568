//! The nesting limit (`kip_lang::MAX_DEPTH`, 256) through the `kip` binary:
//! `kip exec` on texts nested 100,000 and 1,000,000 deep exits with a
//! positioned `KIP_1001`, not a signal; `kip import` refuses a deep `.kip`
//! capsule and a deep YAML bundle the same way; `kip serve` answers deep
//! commands and deep JSON parameters with a clean error and keeps serving.
//! (The per-construct cases, at 100,000 and at exactly the limit, are in
//! `crates/*/tests/nesting.rs`; here the processes prove that nothing in
//! between — argument and request parsing, threads, the async runtime —
//! recurses on its own.)

use crate::common;

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Output, Stdio};

use common::{Server, kip, kip_run};
use serde_json::{Value as Json, json};

/// Runs `kip --db DB args…` with `stdin` written to it.
fn kip_with_stdin(db: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = kip()
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kip runs");
    let mut input = child.stdin.take().expect("stdin");
    let text = stdin.to_owned();
    // Written from a thread: kip may answer (and exit) before it has read
    // all of a large input.
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(text.as_bytes());
    });
    let out = child.wait_with_output().expect("kip finishes");
    let _ = writer.join();
    out
}

/// Asserts that `out` is a process that exited (no signal) with code 1 and
/// printed a `KIP_1001` "nested deeper than 256" at `line`:`column`.
#[track_caller]
fn assert_exited_too_deep(out: &Output, line: u64, column: u64, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(1),
        "{what}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Json = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let e = &json["error"];
    assert_eq!(e["code"], "KIP_1001", "{what}: {e}");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("nested deeper than 256 levels")),
        "{what}: {e}"
    );
    assert_eq!(
        (e["data"]["line"].as_u64(), e["data"]["column"].as_u64()),
        (Some(line), Some(column)),
        "{what}"
    );
}

const HEAD: &str = "FIND(?x)\nWHERE {\n  ?x {type: \"Person\"}\n  ";

#[test]
fn kip_exec_refuses_texts_nested_100_000_and_1_000_000_deep() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("nexus");
    let persons = || {
        let out = kip_run(
            &db,
            &["exec", "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} }"],
        );
        let json: Json = serde_json::from_slice(&out.stdout).expect("JSON");
        json["result"].clone()
    };
    let before = persons();
    // WHERE's brace is level 1: the 256th `NOT {` opens level 257.
    let column = 3 + 6 * 255 + 4;
    for n in [100_000, 1_000_000 / 6] {
        let text = format!(
            "{HEAD}{}?x {{name: \"a\"}}{}\n}}",
            "NOT { ".repeat(n),
            " }".repeat(n)
        );
        let out = kip_with_stdin(&db, &["exec", "-"], &text);
        assert_exited_too_deep(&out, 4, column as u64, "NOT blocks");
    }
    for (what, unit, column) in [
        ("OPTIONAL blocks", "OPTIONAL { ", 3 + 11 * 255 + 9),
        ("UNION blocks", "UNION { ", 3 + 8 * 255 + 6),
    ] {
        let text = format!(
            "{HEAD}{}?x {{name: \"a\"}}{}\n}}",
            unit.repeat(100_000),
            " }".repeat(100_000)
        );
        let out = kip_with_stdin(&db, &["exec", "-"], &text);
        assert_exited_too_deep(&out, 4, column as u64, what);
    }
    // A million `[` in an attribute value: three levels are open before it.
    let text = format!(
        "UPSERT {{\n  CONCEPT ?p {{\n    {{type: \"Person\", name: \"a\"}}\n    SET ATTRIBUTES {{deep: {}",
        "[".repeat(1_000_000)
    );
    let out = kip_with_stdin(&db, &["exec", "-"], &text);
    // Line 4 is `    SET ATTRIBUTES {deep: [[[…`: the first `[` is column 27.
    assert_exited_too_deep(&out, 4, 27 + 253, "arrays");
    // A million `!`: the FILTER expression tree, not the brackets.
    let text = format!(
        "{HEAD}FILTER({}?x.name == \"a\")\n}}",
        "!".repeat(1_000_000)
    );
    let out = kip_with_stdin(&db, &["exec", "-"], &text);
    assert_exited_too_deep(&out, 4, 10 + 1_000_000 - 255, "negations");
    // Nothing was written.
    assert_eq!(persons(), before);
}

#[test]
fn kip_exec_refuses_deep_json_parameters_cleanly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("nexus");
    // 60,000 levels: a command-line argument may not exceed 128 KiB.
    let n = 60_000;
    let params = format!("{{\"v\": {}1{}}}", "[".repeat(n), "]".repeat(n));
    let out = kip_run(
        &db,
        &[
            "exec",
            "--params",
            &params,
            "FIND(?x) WHERE { ?x {type: :v} }",
        ],
    );
    assert!(
        out.status.code().is_some_and(|c| c != 0),
        "{:?}",
        out.status
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--params is not valid JSON"), "{stderr}");
    assert!(stderr.contains("recursion limit exceeded"), "{stderr}");

    // Within what JSON readers take, the parameter counts with the
    // brackets around its placeholder: three here, so 254 is too deep.
    let text = "UPSERT {\n  CONCEPT ?p {\n    {type: \"Person\", name: \"a\"}\n    SET ATTRIBUTES {deep: :v}\n  }\n}";
    let request = format!(
        "{{\"command\": {}, \"parameters\": {{\"v\": {}1{}}}}}",
        json!(text),
        "[".repeat(254),
        "]".repeat(254)
    );
    let file = dir.path().join("request.json");
    std::fs::write(&file, request).expect("write");
    let out = kip_run(&db, &["exec", "--request", file.to_str().expect("utf-8")]);
    // serde_json's own limit (128) refuses this request before KIP sees it.
    assert!(
        out.status.code().is_some_and(|c| c != 0),
        "{:?}",
        out.status
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("recursion limit exceeded"));
}

#[test]
fn kip_import_refuses_deep_capsules_and_bundles() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("nexus");
    let n = 100_000;
    let capsule = dir.path().join("deep.kip");
    std::fs::write(
        &capsule,
        format!(
            "{HEAD}{}?x {{name: \"a\"}}{}\n}}\n",
            "UNION { ".repeat(n),
            " }".repeat(n)
        ),
    )
    .expect("write");
    let bundle = dir.path().join("deep.yaml");
    let item = "- {type: Person, name: a, deep: ";
    std::fs::write(
        &bundle,
        format!("# deep\n{item}{}1{}}}\n", "[".repeat(n), "]".repeat(n)),
    )
    .expect("write");
    // The list and the item's mapping are two levels: the 255th `[` opens
    // level 257.
    let bundle_column = item.len() + 254 + 1;
    for (file, line, column) in [(&capsule, 4, 3 + 8 * 255 + 6), (&bundle, 2, bundle_column)] {
        let out = kip_run(&db, &["import", file.to_str().expect("utf-8")]);
        assert_eq!(out.status.code(), Some(1), "{}", file.display());
        let report: Json = serde_json::from_slice(&out.stdout).expect("a JSON report");
        assert_eq!(report["status"], "failed");
        let e = &report["errors"][0];
        assert_eq!(e["code"], "KIP_1001", "{e}");
        assert!(
            e["message"]
                .as_str()
                .is_some_and(|m| m.contains("nested deeper than 256")),
            "{e}"
        );
        assert_eq!(
            (e["data"]["line"].as_u64(), e["data"]["column"].as_u64()),
            (Some(line), Some(column as u64)),
            "{}",
            file.display()
        );
    }
}

/// A POST of a raw JSON text (the test cannot build a 100,000-deep
/// `serde_json::Value` to serialize: serde_json would recurse on it).
fn post_raw(port: u16, path: &str, body: &str) -> (u16, Json) {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(common::READ_TIMEOUT))
        .expect("timeout");
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut text = String::new();
    stream.read_to_string(&mut text).expect("read the response");
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    (
        status,
        serde_json::from_str(body).unwrap_or(Json::String(body.to_owned())),
    )
}

#[test]
fn kip_serve_answers_deep_commands_and_deep_parameters_and_keeps_serving() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
    let n = 100_000;
    let deep = format!(
        "{HEAD}{}?x {{name: \"a\"}}{}\n}}",
        "NOT { ".repeat(n),
        " }".repeat(n)
    );
    let (status, r) = server.post("/api/kip", &json!({"command": deep}));
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["error"]["code"], "KIP_1001", "{r}");
    assert_eq!(
        (
            r["error"]["data"]["line"].as_u64(),
            r["error"]["data"]["column"].as_u64()
        ),
        (Some(4), Some(3 + 6 * 255 + 4))
    );

    // Deep JSON parameters: refused by the request's JSON reader (its
    // recursion limit), with where in the body, before any KIP runs.
    let body = format!(
        "{{\"command\": \"FIND(?x) WHERE {{ ?x {{type: :v}} }}\", \"parameters\": {{\"v\": {}1{}}}}}",
        "[".repeat(n),
        "]".repeat(n)
    );
    let (status, r) = post_raw(server.port, "/api/kip", &body);
    assert_eq!(status, 400, "{r}");
    assert_eq!(r["error"]["code"], "API_BAD_REQUEST", "{r}");
    assert!(r.to_string().contains("recursion limit exceeded"), "{r}");

    // Parameters as deep as JSON readers allow (serde_json refuses a 128th
    // level in the whole body), where the text leaves room for them, are
    // bound; beyond the limit with the brackets around the placeholder,
    // they are a positioned KIP_1001 at the placeholder.
    let text = "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"a\"} SET ATTRIBUTES {person_class: \"Human\", avatar: :v} } }";
    let body = format!(
        "{{\"command\": {}, \"parameters\": {{\"v\": {}1{}}}}}",
        json!(text),
        "{\"a\": ".repeat(120),
        "}".repeat(120)
    );
    let (status, r) = post_raw(server.port, "/api/kip", &body);
    assert_eq!(status, 200, "{r}");
    assert!(r.get("error").is_none(), "{r}");
    let in_blocks = format!(
        "FIND(?x) WHERE {{ ?x {{type: \"Person\"}} {}FILTER(IN(?x.name, :v)){} }}",
        "NOT { ".repeat(130),
        " }".repeat(130)
    );
    let body = format!(
        "{{\"command\": {}, \"parameters\": {{\"v\": {}1{}}}}}",
        json!(in_blocks),
        "[".repeat(125),
        "]".repeat(125)
    );
    let (status, r) = post_raw(server.port, "/api/kip", &body);
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["error"]["code"], "KIP_1001", "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(":v is nested deeper than 256"))
    );
    assert_eq!(r["error"]["data"]["line"], 1);

    // The server is still there.
    let (status, r) = server.post("/api/kip", &json!({"command": "DESCRIBE PRIMER"}));
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["result"]["identity"]["name"], "$self");
}

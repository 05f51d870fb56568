//! The `kip` binary as a user runs it: arguments, stdin, stdout and exit codes.

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

fn kip(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(kip_e2e::kip_bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kip runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("kip finishes")
}

fn stdout_json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).expect("stdout is JSON")
}

#[test]
fn check_accepts_a_valid_text_and_counts_its_commands() {
    let out = kip(
        &["check"],
        "DESCRIBE PRIMER\nSEARCH CONCEPT \"aspirin\" LIMIT 5 // two commands",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout_json(&out),
        serde_json::json!({"ok": true, "commands": 2})
    );
}

#[test]
fn check_reports_the_first_error_with_position_and_lists_all() {
    let out = kip(
        &["check", "-"],
        "FIND(?x)\nWHERE {\n  ?x {type: \"Drug\"}\n  FILTER(?y.name == \"a\" && ?z.name == \"b\")\n}",
    );
    assert_eq!(out.status.code(), Some(1));
    let json = stdout_json(&out);
    let error = &json["error"];
    assert_eq!(error["code"], "KIP_3001");
    assert_eq!(error["data"]["line"], 4);
    assert_eq!(error["data"]["column"], 10);
    assert_eq!(error["data"]["errors"].as_array().map(Vec::len), Some(2));
    assert!(error["hint"].as_str().is_some_and(|h| !h.is_empty()));
}

#[test]
fn check_suggests_the_keyword_that_was_meant() {
    let out = kip(&["check"], "FIDN(?x) WHERE { ?x {type: \"Drug\"} }");
    assert_eq!(out.status.code(), Some(1));
    let json = stdout_json(&out);
    assert_eq!(json["error"]["data"]["suggestions"][0], "FIND");
}

#[test]
fn check_reads_files_and_fails_cleanly_on_a_missing_one() {
    let dir = std::env::temp_dir().join(format!("kip-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("q.kip");
    std::fs::write(&file, "DESCRIBE DOMAINS").expect("write");
    let out = kip(&["check", file.to_str().expect("utf-8 path")], "");
    assert_eq!(out.status.code(), Some(0));
    let missing = dir.join("missing.kip");
    let out = kip(&["check", missing.to_str().expect("utf-8 path")], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn fmt_prints_canonical_text_and_check_mode_tells_the_difference() {
    let messy = "find(?x) WHERE {?x {type:\"Drug\"}}";
    let out = kip(&["fmt"], messy);
    assert_eq!(
        out.status.code(),
        Some(1),
        "lower-case keywords are a syntax error"
    );

    let messy = "FIND(?x)   WHERE {?x {type:\"Drug\"}} // keep me";
    let out = kip(&["fmt"], messy);
    assert_eq!(out.status.code(), Some(0));
    let formatted = String::from_utf8(out.stdout).expect("utf-8");
    assert_eq!(
        formatted,
        "FIND(?x)\nWHERE {\n  ?x {type: \"Drug\"}\n} // keep me\n"
    );

    assert_eq!(kip(&["fmt", "--check"], messy).status.code(), Some(1));
    assert_eq!(kip(&["fmt", "--check"], &formatted).status.code(), Some(0));
}

#[test]
fn usage_errors_exit_with_2() {
    let out = kip(&["no-such-command"], "");
    assert_eq!(out.status.code(), Some(2));
}

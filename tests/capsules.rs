//! `kip import`, `kip schema`, `kip export` and `kip watch` as a user runs
//! them: reports on standard output, errors with `file:line:column` on
//! standard error, exit codes.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value as Json;

fn kip(db: &Path, args: &[&str]) -> Output {
    Command::new(kip_e2e::kip_bin())
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("kip runs")
}

fn lines(out: &Output) -> Vec<Json> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../capsules/examples")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn import_takes_kip_and_yaml_files_and_folders_and_reports_each() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("nexus");
    let out = kip(&db, &["import", s(&examples())]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reports = lines(&out);
    let names: Vec<&str> = reports
        .iter()
        .map(|r| r["file"].as_str().expect("file"))
        .collect();
    assert!(
        names.iter().any(|n| n.ends_with("20_medical.yaml")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.ends_with("30_tcm_zh.yaml")),
        "{names:?}"
    );
    assert!(
        reports.iter().all(|r| r["status"] == "imported"),
        "{reports:#?}"
    );

    let broken = dir.path().join("broken.yaml");
    std::fs::write(&broken, "- type: Drug\n  name: Naproxen\n- type: treats\n  source: {type: Drug, name: Naproxen}\n  target: {type: Symptom, name: Headach}\n").expect("write");
    let out = kip(&db, &["import", s(&broken)]);
    assert_eq!(out.status.code(), Some(1));
    let report = &lines(&out)[0];
    assert_eq!(report["status"], "failed");
    let errors = report["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(errors[0]["code"], "KIP_2003");
    assert_eq!(errors[0]["data"]["path"], "[0].description");
    assert_eq!(errors[1]["code"], "KIP_3002");
    assert_eq!(errors[1]["data"]["path"], "[1].target");
    assert_eq!(
        (
            errors[1]["data"]["line"].as_u64(),
            errors[1]["data"]["column"].as_u64()
        ),
        (Some(5), Some(11))
    );
    assert_eq!(errors[1]["data"]["suggestions"][0], "Headache");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{}:5:11: KIP_3002", broken.display())),
        "{stderr}"
    );

    let out = kip(&db, &["import", s(&dir.path().join("missing.yaml"))]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn schema_prints_a_schema_and_an_example_that_imports() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("nexus");
    assert_eq!(
        kip(&db, &["import", s(&examples().join("30_tcm_zh.yaml"))])
            .status
            .code(),
        Some(0)
    );
    let out = kip(&db, &["schema"]);
    assert_eq!(out.status.code(), Some(0));
    let schema: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        schema["full_bundle_schema"]["$schema"],
        "http://json-schema.org/draft-07/schema#"
    );
    let example = schema["example_yaml"].as_str().expect("example");
    let file = dir.path().join("example.yaml");
    std::fs::write(&file, example).expect("write");
    let out = kip(&db, &["import", s(&file)]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn export_writes_what_reimports_into_the_same_graph() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("nexus");
    assert_eq!(kip(&db, &["import", s(&examples())]).status.code(), Some(0));
    for format in ["kip", "yaml"] {
        let file = dir.path().join(format!("export.{format}"));
        let out = kip(&db, &["export", "--format", format, "--out", s(&file)]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let copy = dir.path().join(format!("copy-{format}"));
        let out = kip(&copy, &["import", s(&file)]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let again = kip(&copy, &["export", "--format", format]);
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            String::from_utf8_lossy(&again.stdout)
        );
    }
    let out = kip(
        &db,
        &[
            "export",
            "--format",
            "yaml",
            "--type",
            "Formula",
            "--domain",
            "中医药",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("- type: Formula\n  name: 麻黄汤\n") && !text.contains("- type: Herb\n"),
        "{text}"
    );
    let out = kip(&db, &["export", "--type", "Herbs"]);
    assert_eq!(out.status.code(), Some(1));
    let error: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(error["error"]["data"]["suggestions"][0], "Herb");
}

#[test]
fn watch_once_takes_up_the_folder_and_exits_by_outcome() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("nexus");
    let folder = dir.path().join("capsules");
    std::fs::create_dir(&folder).expect("mkdir");
    std::fs::copy(
        examples().join("30_tcm_zh.yaml"),
        folder.join("30_tcm_zh.yaml"),
    )
    .expect("copy");
    let out = kip(&db, &["watch", s(&folder), "--once"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = lines(&out);
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().expect("event"))
        .collect();
    assert_eq!(kinds, ["queued", "importing", "imported", "ready"]);
    // Remembered: a second run finds it unchanged.
    let out = kip(&db, &["watch", s(&folder), "--once"]);
    let kinds: Vec<String> = lines(&out)
        .iter()
        .map(|e| e["event"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(kinds, ["queued", "unchanged", "ready"]);
    std::fs::write(folder.join("bad.yaml"), "- {type: Herbb, name: x}\n").expect("write");
    let out = kip(&db, &["watch", s(&folder), "--once"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.yaml:1:10: KIP_2001"));
}

#[test]
fn watch_streams_events_for_files_dropped_in() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("nexus");
    let folder = dir.path().join("capsules");
    std::fs::create_dir(&folder).expect("mkdir");
    let mut child = Command::new(kip_e2e::kip_bin())
        .arg("--db")
        .arg(&db)
        .args(["watch", s(&folder), "--debounce-ms", "200"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kip watch starts");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let next = |what: &str| -> Json {
        loop {
            let line = rx
                .recv_timeout(Duration::from_secs(90))
                .unwrap_or_else(|_| panic!("no {what} event"));
            let event: Json = serde_json::from_str(&line).expect("JSON");
            if event["event"] == what {
                return event;
            }
        }
    };
    next("ready");
    std::fs::copy(examples().join("30_tcm_zh.yaml"), folder.join("tcm.yaml")).expect("copy");
    let imported = next("imported");
    assert!(
        imported["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("tcm.yaml"))
    );
    assert_eq!(imported["report"]["stats"]["concepts_created"], 21);
    child.kill().expect("kill");
    child.wait().expect("wait");
}

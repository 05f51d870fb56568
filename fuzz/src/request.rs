//! The properties of whole `execute_kip` requests and of `.kip` capsule
//! imports, for any input: nothing panics, every answer has the documented
//! shape (a KIP response with `result` or a coded `error`; an import report
//! that is `imported` exactly when it lists no error, every error with a
//! message and a hint), and nothing is written (requests run on a
//! read-only host and again as dry runs; imports are dry runs).
//!
//! Compiled twice: by the `kip-fuzz` crate for libFuzzer (targets
//! `execute_request` and `capsule_import`), and by
//! `crates/kip-api/tests/fuzz_corpus.rs` (through `#[path]`) to replay the
//! corpora on stable Rust. It depends on `kip_api`, `kip_capsule`,
//! `kip_nexus`, `serde_json` and `tempfile`.

use std::sync::Arc;

use kip_api::{Api, Operation};
use kip_nexus::{Nexus, Origin};
use serde_json::Value;

/// A nexus holding the medical example graph and the API over it.
pub struct Fixture {
    _dir: tempfile::TempDir,
    pub api: Api,
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let nexus = Nexus::open(dir.path()).expect("nexus");
        for (name, text) in [
            (
                "10.kip",
                include_str!("../../capsules/examples/10_medical_schema.kip"),
            ),
            (
                "11.kip",
                include_str!("../../capsules/examples/11_medical_data.kip"),
            ),
            (
                "12.kip",
                include_str!("../../capsules/examples/12_cognizine.kip"),
            ),
        ] {
            let r = kip_capsule::import_text(&nexus, name, text, &Origin::default());
            assert!(r.is_imported(), "{name}: {:?}", r.errors);
        }
        Fixture {
            _dir: dir,
            api: Api::new(Arc::new(nexus), "kip-fuzz"),
        }
    }
}

impl Default for Fixture {
    fn default() -> Self {
        Fixture::new()
    }
}

#[track_caller]
fn check_error(error: &Value, what: &str) {
    let code = error["code"].as_str().unwrap_or_default();
    assert!(
        code.starts_with("KIP_") || code.starts_with("API_"),
        "{what}: an error without a code: {error}"
    );
    for field in ["message", "hint"] {
        assert!(
            error[field].as_str().is_some_and(|s| !s.is_empty()),
            "{what}: an error without a {field}: {error}"
        );
    }
}

/// Any bytes as the JSON body of `execute` (the `execute_kip` arguments:
/// commands, batches, parameters, cursors, dry runs, explain), run twice:
/// as given on a read-only host (queries run in full, KML is refused before
/// it runs), and as a dry run on a read-write host (KML is previewed).
pub fn execute_request(api: &Api, data: &[u8]) {
    let Ok(body) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let before = api.last_change_seq().expect("seq");
    let what = String::from_utf8_lossy(&data[..data.len().min(300)]).into_owned();
    let read_only = api.clone().read_only(true);
    check_answer(read_only.call(Operation::Execute, body.clone()), &what);
    let mut preview = body;
    if let Value::Object(map) = &mut preview {
        map.insert("dry_run".to_owned(), Value::Bool(true));
    }
    check_answer(api.call(Operation::Execute, preview), &what);
    assert_eq!(
        api.last_change_seq().expect("seq"),
        before,
        "{what}: a read-only or dry run wrote"
    );
}

#[track_caller]
fn check_answer(answer: Result<Value, kip_api::ApiError>, what: &str) {
    match answer {
        Ok(answer) => {
            let result = answer.get("result").is_some();
            let error = answer.get("error");
            assert!(
                result != error.is_some(),
                "{what}: neither or both of result and error: {answer}"
            );
            if let Some(e) = error {
                check_error(e, what);
            }
        }
        Err(e) => {
            assert!(!e.message.is_empty() && !e.hint.is_empty(), "{what}: {e:?}");
        }
    }
}

/// Any UTF-8 text as a `.kip` capsule, imported as a dry run.
pub fn capsule_import(api: &Api, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let before = api.last_change_seq().expect("seq");
    let r = api
        .import(&kip_api::ImportRequest {
            file_name: "fuzz.kip".to_owned(),
            text: text.to_owned(),
            dry_run: Some(true),
        })
        .expect("a dry run is allowed");
    assert_eq!(r.is_imported(), r.errors.is_empty());
    let lines = text.split(['\n', '\r']).count() + 1;
    for e in &r.errors {
        assert!(!e.message.is_empty() && !e.hint.is_empty(), "{e:?}");
        if let Some(l) = e.line {
            assert!(l >= 1 && l <= lines, "line {l} of {lines}: {e:?}");
        }
    }
    assert_eq!(
        api.last_change_seq().expect("seq"),
        before,
        "a dry-run import wrote"
    );
}

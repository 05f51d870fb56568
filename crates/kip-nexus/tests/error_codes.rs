//! One case per error code a client can reach through `execute_kip`, with
//! the shape every error must have: code, message, hint, and a position
//! when the error is about a place in the text.

use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::{Value, json};

fn nexus() -> (tempfile::TempDir, Nexus) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("opens");
    (dir, nexus)
}

#[track_caller]
fn error(nexus: &Nexus, request: ExecuteKip) -> Value {
    let r = nexus.execute(&request, &Context::default());
    let e = r["error"].clone();
    assert!(e.is_object(), "expected an error, got {r}");
    assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()));
    assert!(e["hint"].as_str().is_some_and(|h| !h.is_empty()));
    e
}

#[track_caller]
fn positioned(e: &Value, line: u64, column: u64) {
    assert_eq!(
        (e["data"]["line"].as_u64(), e["data"]["column"].as_u64()),
        (Some(line), Some(column)),
        "{e}"
    );
}

#[test]
fn kip_1001_invalid_syntax() {
    let (_d, n) = nexus();
    let e = error(
        &n,
        ExecuteKip::command("FIND(?x) WHERE {\n  ?x {type: \"Person\"\n}"),
    );
    assert_eq!(e["code"], "KIP_1001");
    positioned(&e, 3, 2);
    assert!(
        e["message"].as_str().is_some_and(|m| m.contains("`}`")),
        "{e}"
    );
}

#[test]
fn kip_1002_invalid_identifier() {
    let (_d, n) = nexus();
    let e = error(
        &n,
        ExecuteKip::command("FIND(?1x) WHERE { ?1x {type: \"Person\"} }"),
    );
    assert_eq!(e["code"], "KIP_1002");
    positioned(&e, 1, 6);
}

#[test]
fn kip_2001_undefined_type() {
    let (_d, n) = nexus();
    let e = error(
        &n,
        ExecuteKip::command("FIND(?x) WHERE { ?x {type: \"person\"} }"),
    );
    assert_eq!(e["code"], "KIP_2001");
    assert_eq!(e["data"]["suggestions"], json!(["Person"]));
    positioned(&e, 1, 28);
}

#[test]
fn kip_2004_parameter_of_the_wrong_type() {
    let (_d, n) = nexus();
    let params = json!({"n": "ten"}).as_object().cloned().expect("object");
    let e = error(
        &n,
        ExecuteKip::command("DESCRIBE CONCEPT TYPES LIMIT :n").with_parameters(params),
    );
    assert_eq!(e["code"], "KIP_2004");
}

#[test]
fn kip_3001_reference_errors() {
    let (_d, n) = nexus();
    let e = error(
        &n,
        ExecuteKip::command("FIND(?y) WHERE { ?x {type: \"Person\"} }"),
    );
    assert_eq!(e["code"], "KIP_3001");
    let e = error(
        &n,
        ExecuteKip::command("FIND(?x) WHERE { ?x {name: :who} }"),
    );
    assert_eq!(e["code"], "KIP_3001");
    let e = error(
        &n,
        ExecuteKip::command(
            "UPSERT { CONCEPT { {type: \"Person\", name: \"a\"} SET PROPOSITIONS { (\"belongs_to_domain\", ?d) } } CONCEPT ?d { {type: \"Domain\", name: \"D\"} } }",
        ),
    );
    assert_eq!(e["code"], "KIP_3001");
}

#[test]
fn kip_3002_not_found() {
    let (_d, n) = nexus();
    let e = error(
        &n,
        ExecuteKip::command("DESCRIBE PROPOSITION TYPE \"belongs_to\""),
    );
    assert_eq!(e["code"], "KIP_3002");
    assert_eq!(e["data"]["suggestions"], json!(["belongs_to_domain"]));
}

#[test]
fn kip_3004_immutable_target() {
    let (_d, n) = nexus();
    let e = error(
        &n,
        ExecuteKip::command(
            "DELETE CONCEPT ?d DETACH WHERE { ?d {type: \"Domain\", name: \"CoreSchema\"} }",
        ),
    );
    assert_eq!(e["code"], "KIP_3004");
}

#[test]
fn a_bad_request_shape_is_kip_1001() {
    let (_d, n) = nexus();
    let e = error(&n, ExecuteKip::default());
    assert_eq!(e["code"], "KIP_1001");
}

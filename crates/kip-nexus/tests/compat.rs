//! KIP 1.0 compatibility (issue 18): the four places where the engine's
//! answer differed from what the spec family has since made explicit (one
//! regression test each, named after what broke), and the RC9–RC10
//! additions — `_version` / `EXPECT VERSION`, `UPDATE`, `MERGE`,
//! `SEARCH … MODE / THRESHOLD`, `EXPORT` — each example of the RC10
//! specification run against the medical example graph with its documented
//! result shape.

use std::path::PathBuf;

use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::{Value as Json, json};

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../capsules/examples")
}

fn fixture() -> (tempfile::TempDir, Nexus) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus opens");
    for name in [
        "10_medical_schema.kip",
        "11_medical_data.kip",
        "12_cognizine.kip",
    ] {
        let text = std::fs::read_to_string(examples_dir().join(name)).expect("example capsule");
        let r = nexus.execute(&ExecuteKip::command(text), &Context::default());
        assert!(r.get("error").is_none(), "{name}: {r:#}");
    }
    (dir, nexus)
}

fn exec_with(nexus: &Nexus, command: &str, params: Json) -> Json {
    let mut request = ExecuteKip::command(command);
    request.parameters = params.as_object().cloned();
    nexus.execute(&request, &Context::default())
}

fn exec(nexus: &Nexus, command: &str) -> Json {
    nexus.execute(&ExecuteKip::command(command), &Context::default())
}

#[track_caller]
fn ok(nexus: &Nexus, command: &str) -> Json {
    let r = exec(nexus, command);
    assert!(r.get("error").is_none(), "{command}\n{r:#}");
    r["result"].clone()
}

#[track_caller]
fn ok_with(nexus: &Nexus, command: &str, params: Json) -> Json {
    let r = exec_with(nexus, command, params);
    assert!(r.get("error").is_none(), "{command}\n{r:#}");
    r["result"].clone()
}

#[track_caller]
fn err(nexus: &Nexus, command: &str) -> Json {
    let r = exec(nexus, command);
    assert!(
        r.get("error").is_some(),
        "expected an error for {command}, got {r:#}"
    );
    r["error"].clone()
}

fn sorted(result: &Json) -> Vec<Json> {
    let mut v = result.as_array().expect("a column").clone();
    v.sort_by_key(Json::to_string);
    v
}

// ---------------------------------------------------------------- fix 1: deduplication

#[test]
fn find_of_a_predicate_variable_listed_treats_twice() {
    let (_dir, nexus) = fixture();
    let r = ok(
        &nexus,
        r#"FIND(?p) WHERE { ({type: "Drug", name: "Aspirin"}, ?p, ?o) }"#,
    );
    assert_eq!(
        sorted(&r),
        vec![
            json!("belongs_to_domain"),
            json!("has_side_effect"),
            json!("is_class_of"),
            json!("treats")
        ]
    );
}

#[test]
fn limit_counted_duplicate_solutions_instead_of_distinct_ones() {
    let (_dir, nexus) = fixture();
    // Four drugs treat Headache; LIMIT 2 must give two distinct symptoms.
    let r = ok(
        &nexus,
        r#"FIND(?s.name) WHERE { ?d {type: "Drug"} (?d, "treats", ?s) } ORDER BY ?s.name DESC LIMIT 2"#,
    );
    assert_eq!(r, json!(["Headache", "Fever"]));
}

#[test]
fn distinct_solutions_that_project_equal_values_are_kept() {
    let (_dir, nexus) = fixture();
    // The Drug and the Product are both named "Aspirin": two solutions.
    let r = ok(&nexus, r#"FIND(?x.name) WHERE { ?x {name: "Aspirin"} }"#);
    assert_eq!(r, json!(["Aspirin", "Aspirin"]));
    // Two symptoms of the same type stay two rows of ?o.type.
    let r = ok(
        &nexus,
        r#"FIND(?o.type) WHERE { ({type: "Drug", name: "Aspirin"}, "treats", ?o) }"#,
    );
    assert_eq!(r, json!(["Symptom", "Symptom"]));
}

#[test]
fn count_under_implicit_group_by_counts_distinct_solutions() {
    let (_dir, nexus) = fixture();
    let r = ok(
        &nexus,
        r#"FIND(?p, COUNT(?o)) WHERE { ({type: "Drug", name: "Aspirin"}, ?p, ?o) } ORDER BY ?p ASC"#,
    );
    assert_eq!(
        r,
        json!([
            [
                "belongs_to_domain",
                "has_side_effect",
                "is_class_of",
                "treats"
            ],
            [1, 1, 1, 2]
        ])
    );
}

// ---------------------------------------------------------------- fix 2: nulls last

#[test]
fn null_sorted_first_in_ascending_order() {
    let (_dir, nexus) = fixture();
    for dir in ["ASC", "DESC"] {
        let r = ok(
            &nexus,
            &format!(
                r#"FIND(?d.name, ?l.metadata.confidence) WHERE {{
                     ?d {{type: "Drug"}}
                     OPTIONAL {{ ?l (?d, "treats", {{type: "Symptom", name: "Fever"}}) }}
                   }} ORDER BY ?l.metadata.confidence {dir}, ?d.name ASC"#
            ),
        );
        let confidences = r[1].as_array().expect("a column").clone();
        let first_null = confidences.iter().position(Json::is_null).expect("a null");
        assert!(first_null > 0, "{dir}: {r}");
        assert!(
            confidences[first_null..].iter().all(Json::is_null),
            "{dir}: nulls must come last: {r}"
        );
        let numbers: Vec<f64> = confidences[..first_null]
            .iter()
            .map(|v| v.as_f64().expect("a number"))
            .collect();
        let mut expected = numbers.clone();
        expected.sort_by(f64::total_cmp);
        if dir == "DESC" {
            expected.reverse();
        }
        assert_eq!(numbers, expected, "{dir}");
    }
}

#[test]
fn null_padded_union_rows_sorted_before_bound_ones() {
    let (_dir, nexus) = fixture();
    let q = |dir: &str| {
        format!(
            r#"FIND(?d.name, ?c.name) WHERE {{
                 ?d {{type: "Drug", name: "Aspirin"}}
                 UNION {{ ?c {{type: "DrugClass", name: "NSAID"}} }}
               }} ORDER BY ?d.name {dir}, ?c.name {dir}"#
        )
    };
    for dir in ["ASC", "DESC"] {
        let r = ok(&nexus, &q(dir));
        assert_eq!(r, json!([["Aspirin", null], [null, "NSAID"]]), "{dir}");
    }
}

// ---------------------------------------------------------------- fix 4: empty command

#[test]
fn an_empty_command_answered_an_empty_result() {
    let (_dir, nexus) = fixture();
    for text in ["", "   \n\t", "// only a comment\n", "\u{FEFF}"] {
        let e = err(&nexus, text);
        assert_eq!(e["code"], "KIP_1001", "{text:?}");
        assert!(
            e["message"]
                .as_str()
                .unwrap_or_default()
                .contains("empty command"),
            "{e:#}"
        );
    }
    // In a batch, the empty item is an error and stops the batch.
    let r = nexus.execute(
        &ExecuteKip {
            commands: Some(vec![
                kip_nexus::BatchItem::Text("DESCRIBE DOMAINS".into()),
                kip_nexus::BatchItem::Text(" ".into()),
                kip_nexus::BatchItem::Text("DESCRIBE DOMAINS".into()),
            ]),
            ..ExecuteKip::default()
        },
        &Context::default(),
    );
    let items = r["result"].as_array().expect("batch");
    assert_eq!(items.len(), 2);
    assert_eq!(items[1]["error"]["code"], "KIP_1001");
}

#[test]
fn an_empty_capsule_still_runs_as_nothing() {
    let (_dir, nexus) = fixture();
    let out = nexus
        .run("", &[], &kip_nexus::RunOptions::default())
        .expect("an empty text runs");
    assert_eq!(out.result, json!([]));
}

// ---------------------------------------------------------------- fix 3: protected scope

#[test]
fn modifying_a_meta_type_was_allowed() {
    let (_dir, nexus) = fixture();
    for q in [
        r#"UPSERT { CONCEPT { {type: "$ConceptType", name: "$ConceptType"} SET ATTRIBUTES { status: "hijacked" } } }"#,
        r#"DELETE ATTRIBUTES {"description"} FROM ?t WHERE { ?t {type: "$ConceptType", name: "$ConceptType"} }"#,
        r#"UPSERT { CONCEPT { {type: "$ConceptType", name: "$PropositionType"} } WITH METADATA { source: "me" } }"#,
        r#"UPSERT { CONCEPT { {type: "$ConceptType", name: "Domain"} SET ATTRIBUTES { description: "x" } } }"#,
        r#"UPSERT { CONCEPT { {type: "$PropositionType", name: "belongs_to_domain"} SET ATTRIBUTES { subject_types: ["Drug"] } } }"#,
        r#"UPSERT { CONCEPT { {type: "Domain", name: "CoreSchema"} SET ATTRIBUTES { description: "mine" } } }"#,
        r#"DELETE METADATA {"source"} FROM ?d WHERE { ?d {type: "Domain", name: "CoreSchema"} }"#,
        r#"UPSERT { CONCEPT { {type: "Person", name: "$self"} SET ATTRIBUTES { core_directives: [] } } }"#,
        r#"DELETE ATTRIBUTES {"core_directives"} FROM ?s WHERE { ?s {type: "Person", name: "$system"} }"#,
        r#"DELETE CONCEPT ?t DETACH WHERE { ?t {type: "$ConceptType", name: "Domain"} }"#,
    ] {
        let e = err(&nexus, q);
        assert_eq!(e["code"], "KIP_3004", "{q}\n{e:#}");
    }
    let r = ok(
        &nexus,
        r#"FIND(?t.attributes.status) WHERE { ?t {type: "$ConceptType", name: "$ConceptType"} }"#,
    );
    assert_eq!(r, json!([null]), "nothing was written");
}

#[test]
fn ordinary_attributes_of_self_and_no_op_upserts_of_protected_nodes_stay_allowed() {
    let (_dir, nexus) = fixture();
    ok(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Person", name: "$self"} SET ATTRIBUTES { persona: "curious" } } }"#,
    );
    // Re-asserting a protected node as it is changes nothing, so it is no modification.
    ok(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Domain", name: "CoreSchema"} } }"#,
    );
    // Links to protected nodes are not modifications of them.
    ok(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "$ConceptType", name: "Gadget"} SET ATTRIBUTES { description: "g" } SET PROPOSITIONS { ("belongs_to_domain", {type: "Domain", name: "CoreSchema"}) } } }"#,
    );
}

#[test]
fn writing_or_deleting_a_reserved_metadata_key_was_not_a_constraint_violation() {
    let (_dir, nexus) = fixture();
    for q in [
        r#"UPSERT { CONCEPT { {type: "Drug", name: "Aspirin"} } WITH METADATA { _version: 9 } }"#,
        r#"UPSERT { CONCEPT { {type: "Drug", name: "Aspirin"} } WITH METADATA { _updated_at: "x" } }"#,
        r#"DELETE METADATA {"_version"} FROM ?d WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    ] {
        assert_eq!(err(&nexus, q)["code"], "KIP_2003", "{q}");
    }
}

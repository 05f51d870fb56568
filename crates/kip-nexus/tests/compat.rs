//! KIP 1.0 compatibility (issue 18): the four places where the engine's
//! answer differed from what the spec family has since made explicit (one
//! regression test each, named after what broke), and the RC9–RC10
//! additions — `_version` / `EXPECT VERSION`, `UPDATE`, `MERGE`,
//! `SEARCH … MODE / THRESHOLD`, `EXPORT` — each example of the RC10
//! specification run against the medical example graph with its documented
//! result shape.

use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::{Value as Json, json};

use crate::common;
use common::{examples_dir, fixture};

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

// ---------------------------------------------------------------- _version and EXPECT VERSION

fn version_of(nexus: &Nexus, ty: &str, name: &str) -> Json {
    let r = ok_with(
        nexus,
        "FIND(?x.metadata._version) WHERE { ?x {type: :ty, name: :name} }",
        json!({"ty": ty, "name": name}),
    );
    r[0].clone()
}

#[test]
fn version_starts_at_one_moves_on_every_change_and_not_on_a_no_op() {
    let (_dir, nexus) = fixture();
    ok(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Drug", name: "Naproxen"} SET ATTRIBUTES { risk_level: 2 } } }"#,
    );
    assert_eq!(version_of(&nexus, "Drug", "Naproxen"), json!(1));
    // A repeat changes nothing, so the version stays.
    ok(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Drug", name: "Naproxen"} SET ATTRIBUTES { risk_level: 2 } } }"#,
    );
    assert_eq!(version_of(&nexus, "Drug", "Naproxen"), json!(1));
    ok(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Drug", name: "Naproxen"} SET ATTRIBUTES { risk_level: 3 } } }"#,
    );
    assert_eq!(version_of(&nexus, "Drug", "Naproxen"), json!(2));
    ok(
        &nexus,
        r#"DELETE ATTRIBUTES {"risk_level"} FROM ?d WHERE { ?d {type: "Drug", name: "Naproxen"} }"#,
    );
    assert_eq!(version_of(&nexus, "Drug", "Naproxen"), json!(3));
    // Links are versioned too.
    let v = ok(
        &nexus,
        r#"FIND(?l.metadata._version) WHERE { ?l ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Fever"}) }"#,
    );
    assert_eq!(v, json!([1]));
}

/// RC10 §2.11.2, the specification's example.
#[test]
fn rc10_expect_version_guards_a_read_modify_write_of_self() {
    let (_dir, nexus) = fixture();
    let command = r#"UPSERT {
  CONCEPT ?self {
    {type: "Person", name: "$self"}
    EXPECT VERSION :v
    SET ATTRIBUTES { behavior_preferences: :merged_preferences }
  }
}"#;
    let v = version_of(&nexus, "Person", "$self");
    let r = ok_with(
        &nexus,
        command,
        json!({"v": v, "merged_preferences": ["concise"]}),
    );
    assert_eq!(r["blocks"], 1);
    assert_eq!(r["upsert_concept_nodes"].as_array().map(Vec::len), Some(1));
    let after = version_of(&nexus, "Person", "$self");
    assert_eq!(after.as_u64(), v.as_u64().map(|n| n + 1));
    // The documented idempotency exception: replaying the guarded write fails.
    let e = exec_with(
        &nexus,
        command,
        json!({"v": v, "merged_preferences": ["concise", "formal"]}),
    );
    assert_eq!(e["error"]["code"], "KIP_3005", "{e:#}");
    assert_eq!(e["error"]["data"]["expected"], v);
    assert_eq!(e["error"]["data"]["actual"], after);
    let prefs = ok(
        &nexus,
        r#"FIND(?s.attributes.behavior_preferences) WHERE { ?s {type: "Person", name: "$self"} }"#,
    );
    assert_eq!(
        prefs,
        json!([["concise"]]),
        "nothing of the refused write is kept"
    );
}

#[test]
fn expect_version_zero_only_creates_and_a_conflict_aborts_the_whole_upsert() {
    let (_dir, nexus) = fixture();
    ok(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Drug", name: "Naproxen"} EXPECT VERSION 0 } }"#,
    );
    let e = err(
        &nexus,
        r#"UPSERT {
             CONCEPT { {type: "Drug", name: "Celecoxib"} }
             CONCEPT { {type: "Drug", name: "Naproxen"} EXPECT VERSION 0 SET ATTRIBUTES { risk_level: 1 } }
           }"#,
    );
    assert_eq!(e["code"], "KIP_3005");
    let r = ok(
        &nexus,
        r#"FIND(?d) WHERE { ?d {type: "Drug", name: "Celecoxib"} }"#,
    );
    assert_eq!(r, json!([]), "the first block was rolled back");
    // Propositions too.
    let e = err(
        &nexus,
        r#"UPSERT { PROPOSITION { ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Fever"}) EXPECT VERSION 7 SET ATTRIBUTES { x: 1 } } }"#,
    );
    assert_eq!(e["code"], "KIP_3005");
    ok(
        &nexus,
        r#"UPSERT { PROPOSITION { ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Fever"}) EXPECT VERSION 1 SET ATTRIBUTES { x: 1 } } }"#,
    );
}

// ---------------------------------------------------------------- UPDATE

/// Puts author metadata on every `treats` link, as an agent's capsules would.
fn with_link_metadata(nexus: &Nexus) {
    let r = ok(
        nexus,
        r#"UPDATE ?l SET METADATA { created_at: "2024-01-01T00:00:00Z", confidence: 0.8 } WHERE { ?l (?d, "treats", ?s) }"#,
    );
    assert_eq!(r["matched"], r["updated"]);
}

/// RC10 §4.3, the specification's first example.
#[test]
fn rc10_update_decays_confidence_across_all_predicates() {
    let (_dir, nexus) = fixture();
    with_link_metadata(&nexus);
    let command = r#"// Sleep-cycle confidence decay across ALL predicates in one command
// (predicate variable + bulk update; spare structural links and axiomatic 1.0 truths)
UPDATE ?link
SET METADATA {
  confidence: CLAMP(MUL(?link.metadata.confidence, :decay_factor), 0.0, 1.0),
  decay_applied_at: :timestamp
}
WHERE {
  ?link (?s, ?p, ?o)
  FILTER(?p != "belongs_to_domain")
  FILTER(IS_NULL(?link.metadata.superseded) || ?link.metadata.superseded != true)
  FILTER(?link.metadata.created_at < :decay_threshold)
  FILTER(?link.metadata.confidence > 0.3 && ?link.metadata.confidence < 1.0)
}
LIMIT 500"#;
    let params = json!({"decay_factor": 0.5, "timestamp": "2025-06-01T00:00:00Z", "decay_threshold": "2025-01-01"});
    let treats = ok(&nexus, r#"FIND(COUNT(?l)) WHERE { ?l (?d, "treats", ?s) }"#);
    let r = ok_with(&nexus, command, params.clone());
    assert_eq!(r, json!({"updated": treats, "matched": treats}));
    let c = ok(
        &nexus,
        r#"FIND(?l.metadata.confidence, ?l.metadata.decay_applied_at) WHERE { ?l ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Fever"}) }"#,
    );
    assert_eq!(c, json!([[0.4], ["2025-06-01T00:00:00Z"]]));
    // Links without created_at (belongs_to_domain, the others) were not touched.
    let untouched = ok(
        &nexus,
        r#"FIND(?l.metadata.decay_applied_at) WHERE { ?l (?d, "belongs_to_domain", ?x) }"#,
    );
    assert!(
        untouched
            .as_array()
            .expect("a column")
            .iter()
            .all(Json::is_null)
    );
    // Applying it again decays again (0.4 → 0.2): a fresh pattern match.
    ok_with(&nexus, command, params.clone());
    // 0.2 is not above 0.3 any more: the links no longer match.
    let r = ok_with(&nexus, command, params);
    assert_eq!(r, json!({"updated": 0, "matched": 0}));
}

/// RC10 §4.3, the specification's second example.
#[test]
fn rc10_update_reinforces_a_preference_without_a_read() {
    let (_dir, nexus) = fixture();
    ok(
        &nexus,
        r#"UPSERT {
             CONCEPT { {type: "$ConceptType", name: "Preference"} SET ATTRIBUTES { description: "A stable preference." } }
             CONCEPT { {type: "Preference", name: "dark_mode"} SET ATTRIBUTES { description: "Prefers dark mode." } }
           }"#,
    );
    let command = r#"// Reinforcement on re-confirmation — no read-modify-write round-trip needed
UPDATE ?pref
SET ATTRIBUTES {
  evidence_count: ADD(COALESCE(?pref.attributes.evidence_count, 0), 1),
  last_observed: :timestamp
}
SET METADATA { observed_at: :timestamp }
WHERE {
  ?pref {type: "Preference", name: :pref_name}
}"#;
    let params = json!({"timestamp": "2025-06-01T00:00:00Z", "pref_name": "dark_mode"});
    assert_eq!(
        ok_with(&nexus, command, params.clone()),
        json!({"updated": 1, "matched": 1})
    );
    ok_with(&nexus, command, params);
    let r = ok(
        &nexus,
        r#"FIND(?p.attributes.evidence_count, ?p.attributes.last_observed, ?p.metadata.observed_at, ?p.metadata._version) WHERE { ?p {type: "Preference", name: "dark_mode"} }"#,
    );
    assert_eq!(
        r,
        json!([[2], ["2025-06-01T00:00:00Z"], ["2025-06-01T00:00:00Z"], [3]])
    );
}

#[test]
fn update_skips_null_expressions_counts_real_changes_and_caps_with_limit() {
    let (_dir, nexus) = fixture();
    // A path to a missing key makes ADD null: the key is skipped everywhere.
    let drugs = ok(&nexus, r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }"#);
    let r = ok(
        &nexus,
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: ADD(?d.attributes.missing, 1) } WHERE { ?d {type: "Drug"} }"#,
    );
    assert_eq!(r, json!({"updated": 0, "matched": drugs}));
    let r = ok(
        &nexus,
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: CLAMP(ADD(?d.attributes.risk_level, 2), 0, 4) } WHERE { ?d {type: "Drug"} } LIMIT 2"#,
    );
    assert_eq!(r["matched"], 2);
    let levels = ok(
        &nexus,
        r#"FIND(?d.attributes.risk_level) WHERE { ?d {type: "Drug"} } ORDER BY ?d.attributes.risk_level DESC"#,
    );
    assert!(
        levels
            .as_array()
            .expect("column")
            .iter()
            .all(|v| v.as_i64().is_some_and(|n| n <= 4))
    );
}

#[test]
fn update_refuses_protected_targets_and_reserved_keys_and_writes_nothing() {
    let (_dir, nexus) = fixture();
    let e = err(
        &nexus,
        r#"UPDATE ?t SET ATTRIBUTES { reviewed: true } WHERE { ?t {type: "$ConceptType"} }"#,
    );
    assert_eq!(e["code"], "KIP_3004");
    let reviewed = ok(
        &nexus,
        r#"FIND(?t.attributes.reviewed) WHERE { ?t {type: "$ConceptType", name: "Drug"} }"#,
    );
    assert_eq!(reviewed, json!([null]));
    let e = err(
        &nexus,
        r#"UPDATE ?s SET ATTRIBUTES { core_directives: [] } WHERE { ?s {type: "Person", name: "$self"} }"#,
    );
    assert_eq!(e["code"], "KIP_3004");
    ok(
        &nexus,
        r#"UPDATE ?s SET ATTRIBUTES { persona: "calm" } WHERE { ?s {type: "Person", name: "$self"} }"#,
    );
    let e = err(
        &nexus,
        r#"UPDATE ?d SET METADATA { _version: 1 } WHERE { ?d {type: "Drug"} }"#,
    );
    assert_eq!(e["code"], "KIP_2003");
}

#[test]
fn update_is_a_write_a_read_only_caller_cannot_send_and_a_dry_run_previews() {
    let (_dir, nexus) = fixture();
    let command = r#"UPDATE ?d SET ATTRIBUTES { reviewed: true } WHERE { ?d {type: "Drug"} }"#;
    let r = nexus.execute(
        &ExecuteKip::command(command),
        &Context::default().with_access(kip_nexus::Access::ReadOnly),
    );
    assert_eq!(r["error"]["code"], "KIP_3004");
    let r = nexus.execute(&ExecuteKip::command(command).dry_run(), &Context::default());
    let drugs = ok(&nexus, r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }"#);
    // A preview says what it would change, element by element, as every
    // KML preview does (`changes`, before → after).
    let mut result = r["result"].clone();
    let changes = result
        .as_object_mut()
        .and_then(|o| o.remove("changes"))
        .expect("a preview lists its changes");
    assert_eq!(
        result,
        json!({"updated": drugs, "matched": drugs, "dry_run": true})
    );
    let changes = changes.as_array().expect("a list");
    assert_eq!(json!(changes.len()), drugs);
    for c in changes {
        assert_eq!(c["op"], "updated", "{c:#}");
        assert_eq!(c["before"]["attributes"]["reviewed"], Json::Null, "{c:#}");
        assert_eq!(c["after"]["attributes"]["reviewed"], true, "{c:#}");
    }
    let reviewed = ok(
        &nexus,
        r#"FIND(?d.attributes.reviewed) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    assert_eq!(reviewed, json!([null]));
}

// ---------------------------------------------------------------- MERGE

fn skill_topics(nexus: &Nexus) {
    ok(
        nexus,
        r#"UPSERT {
  CONCEPT { {type: "$ConceptType", name: "SkillTopic"} SET ATTRIBUTES { description: "A skill." } }
  CONCEPT { {type: "$PropositionType", name: "related_to"} SET ATTRIBUTES { description: "r", subject_types: ["*"], object_types: ["*"] } }
  CONCEPT ?ts { {type: "SkillTopic", name: "TypeScript"} }
  CONCEPT ?js {
    {type: "SkillTopic", name: "JS"}
    SET ATTRIBUTES { aliases: ["ECMAScript"], level: "expert", description: "short" }
    SET PROPOSITIONS { ("related_to", ?ts) }
  }
  CONCEPT ?javascript {
    {type: "SkillTopic", name: "JavaScript"}
    SET ATTRIBUTES { description: "The language of the web." }
    SET PROPOSITIONS { ("related_to", ?ts) WITH METADATA { confidence: 0.9 } }
  }
  CONCEPT ?node {
    {type: "SkillTopic", name: "Node.js"}
    SET PROPOSITIONS { ("related_to", ?js) }
  }
}
WITH METADATA { source: "test" }"#,
    );
}

/// RC10 §4.4, the specification's example.
#[test]
fn rc10_merge_consolidates_js_into_javascript() {
    let (_dir, nexus) = fixture();
    skill_topics(&nexus);
    let link_id = ok(
        &nexus,
        r#"FIND(?l.id) WHERE { ?l ({type: "SkillTopic", name: "Node.js"}, "related_to", {type: "SkillTopic", name: "JS"}) }"#,
    );
    let command = r#"// "JS" and "JavaScript" are the same concept; keep the canonical one
MERGE CONCEPT ?dup INTO ?canonical
WHERE {
  ?dup {type: "SkillTopic", name: "JS"}
  ?canonical {type: "SkillTopic", name: "JavaScript"}
}"#;
    let r = ok(&nexus, command);
    assert_eq!(
        r,
        // `level` and `aliases` (new on the target) were filled.
        json!({"merged": true, "links_repointed": 1, "links_deduplicated": 1, "attributes_filled": 2})
    );
    // Node.js's link now points at JavaScript, with the same id.
    let moved = ok(
        &nexus,
        r#"FIND(?l.id) WHERE { ?l ({type: "SkillTopic", name: "Node.js"}, "related_to", {type: "SkillTopic", name: "JavaScript"}) }"#,
    );
    assert_eq!(moved, link_id);
    // The colliding link: the target's survives, its keys win.
    let c = ok(
        &nexus,
        r#"FIND(?l.metadata.confidence) WHERE { ?l ({type: "SkillTopic", name: "JavaScript"}, "related_to", {type: "SkillTopic", name: "TypeScript"}) }"#,
    );
    assert_eq!(c, json!([0.9]));
    let js = ok(
        &nexus,
        r#"FIND(?j.attributes, ?j.metadata._merged_from) WHERE { ?j {type: "SkillTopic", name: "JavaScript"} }"#,
    );
    assert_eq!(js[0][0]["description"], "The language of the web.");
    assert_eq!(js[0][0]["level"], "expert");
    assert_eq!(js[0][0]["aliases"], json!(["ECMAScript", "JS"]));
    assert_eq!(js[1], json!([["SkillTopic:JS"]]));
    assert_eq!(
        ok(
            &nexus,
            r#"FIND(?x) WHERE { ?x {type: "SkillTopic", name: "JS"} }"#
        ),
        json!([])
    );
    // A replay says the merge already happened.
    let e = err(&nexus, command);
    assert_eq!(e["code"], "KIP_3002");
    assert!(
        e["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("already merged"),
        "{e:#}"
    );
}

#[test]
fn merge_refuses_ambiguous_mismatched_and_protected_nodes() {
    let (_dir, nexus) = fixture();
    skill_topics(&nexus);
    let e = err(
        &nexus,
        r#"MERGE CONCEPT ?a INTO ?b WHERE { ?a {type: "SkillTopic"} ?b {type: "SkillTopic", name: "JavaScript"} }"#,
    );
    assert_eq!(e["code"], "KIP_3003");
    let e = err(
        &nexus,
        r#"MERGE CONCEPT ?a INTO ?b WHERE { ?a {type: "SkillTopic", name: "JS"} ?b {type: "Drug", name: "Aspirin"} }"#,
    );
    assert_eq!(e["code"], "KIP_2003");
    let e = err(
        &nexus,
        r#"MERGE CONCEPT ?a INTO ?b WHERE { ?a {type: "Person", name: "$system"} ?b {type: "Person", name: "$self"} }"#,
    );
    assert_eq!(e["code"], "KIP_3004");
    let same = ok(
        &nexus,
        r#"MERGE CONCEPT ?a INTO ?a WHERE { ?a {type: "SkillTopic", name: "JS"} }"#,
    );
    assert_eq!(same["merged"], true);
    assert_eq!(same["links_repointed"], 0);
}

// ---------------------------------------------------------------- SEARCH

/// RC10 §5.2.2, the specification's examples.
#[test]
fn rc10_search_scores_are_normalised_and_threshold_drops_weak_hits() {
    let (_dir, nexus) = fixture();
    for command in [
        r#"SEARCH CONCEPT "aspirin" LIMIT 5"#,
        r#"SEARCH CONCEPT "Aspirin" WITH TYPE "Drug""#,
        r#"SEARCH PROPOSITION "treats" LIMIT 10"#,
        r#"SEARCH CONCEPT "aspirin" MODE "keyword" THRESHOLD 0.1 LIMIT 5"#,
    ] {
        let hits = ok(&nexus, command);
        let scores: Vec<f64> = hits
            .as_array()
            .expect("hits")
            .iter()
            .map(|h| h["metadata"]["_score"].as_f64().expect("a score"))
            .collect();
        assert!(!scores.is_empty(), "{command}");
        assert!(
            scores.iter().all(|s| (0.0..=1.0).contains(s)),
            "{command}: {scores:?}"
        );
        assert!(
            scores.windows(2).all(|w| w[0] >= w[1]),
            "{command}: {scores:?}"
        );
    }
    let all = ok(&nexus, r#"SEARCH CONCEPT "pain reliever""#);
    let strong = ok(&nexus, r#"SEARCH CONCEPT "pain reliever" THRESHOLD 0.3"#);
    let kept: Vec<&Json> = all
        .as_array()
        .expect("hits")
        .iter()
        .filter(|h| h["metadata"]["_score"].as_f64().is_some_and(|s| s >= 0.3))
        .collect();
    assert_eq!(strong.as_array().map(Vec::len), Some(kept.len()));
    // A probe of words the nexus never saw is an honest miss under a threshold.
    let none = ok(
        &nexus,
        r#"SEARCH CONCEPT "aspirin quantum entanglement" THRESHOLD 0.75"#,
    );
    assert_eq!(none, json!([]));
}

/// RC10 §5.2.1: an engine without semantic capability MUST treat
/// `"semantic"` / `"hybrid"` as `"keyword"` rather than failing, and SHOULD
/// say what it serves (`DESCRIBE PRIMER`'s `search_modes`). The nexus here
/// has no embedding model (as where none is installed); `tests/semantic.rs`
/// covers the modes with one.
#[test]
fn semantic_and_hybrid_modes_are_served_by_keyword_with_a_warning_and_the_primer_says_so() {
    let (_dir, mut nexus) = fixture();
    nexus.set_embedder(None).expect("embeddings off");
    for (mode, rest) in [
        ("semantic", "THRESHOLD 0.1 LIMIT 10"),
        ("hybrid", "LIMIT 10"),
    ] {
        let asked = exec(
            &nexus,
            &format!(r#"SEARCH CONCEPT "aspirin headache" MODE "{mode}" {rest}"#),
        );
        let keyword = exec(
            &nexus,
            &format!(r#"SEARCH CONCEPT "aspirin headache" MODE "keyword" {rest}"#),
        );
        assert!(asked.get("error").is_none(), "{asked:#}");
        assert_eq!(asked["result"], keyword["result"], "{mode}");
        assert!(
            asked["result"]
                .as_array()
                .is_some_and(|hits| !hits.is_empty()),
            "{asked:#}"
        );
        let warnings = asked["warnings"].as_array().expect("a warning");
        assert!(
            warnings[0]
                .as_str()
                .is_some_and(|w| w.contains(mode) && w.contains("keyword")),
            "{warnings:?}"
        );
        assert!(keyword.get("warnings").is_none(), "{keyword:#}");
    }
    // A mode bound from a parameter is checked too.
    let e = exec_with(
        &nexus,
        r#"SEARCH CONCEPT "aspirin" MODE :mode"#,
        json!({"mode": "telepathic"}),
    );
    assert_eq!(e["error"]["code"], "KIP_2004", "{e:#}");
    let primer = ok(&nexus, "DESCRIBE PRIMER");
    assert_eq!(primer["search_modes"], json!(["keyword"]));
    assert_eq!(primer["capabilities"]["semantic_search"], json!(false));
    assert!(
        primer["capabilities"]["statements"]
            .as_array()
            .is_some_and(|s| s.contains(&json!("MERGE")))
    );
    assert_eq!(
        primer["capabilities"]["limits"]["find_rows_without_limit"],
        json!(1000)
    );
    // The request limits it states are the ones it keeps: one command
    // more than a batch may hold is refused whole, before anything runs.
    let most = primer["capabilities"]["limits"]["batch_commands"]
        .as_u64()
        .expect("the batch limit is stated");
    let over = ExecuteKip {
        commands: Some(vec![
            kip_nexus::BatchItem::Text("DESCRIBE PRIMER".into());
            usize::try_from(most).expect("fits") + 1
        ]),
        ..ExecuteKip::default()
    };
    let refused = nexus.execute(&over, &Context::default());
    assert_eq!(refused["error"]["code"], "KIP_4002", "{refused:#}");
    assert!(primer["capabilities"]["limits"]["request_bytes"].is_u64());
}

// ---------------------------------------------------------------- EXPORT

/// RC10 §5.3, the specification's example.
#[test]
fn rc10_export_writes_the_medical_domain_as_a_capsule_that_imports_back() {
    let (_dir, nexus) = fixture();
    let command = r#"// Export everything in the "Medical" domain as a portable capsule
EXPORT ?n
WHERE {
  (?n, "belongs_to_domain", {type: "Domain", name: "Medical"})
}
LIMIT 500"#;
    let r = exec(&nexus, command);
    assert!(r.get("next_cursor").is_none());
    let result = &r["result"];
    let members = ok(
        &nexus,
        r#"FIND(COUNT(?n)) WHERE { (?n, "belongs_to_domain", {type: "Domain", name: "Medical"}) }"#,
    );
    assert_eq!(result["concepts"], members);
    assert_eq!(result["propositions"], 0);
    let capsule = result["capsule"].as_str().expect("a capsule");
    assert!(!capsule.contains("_version") && !capsule.contains("_created_at"));
    kip_lang::parse(capsule).expect("the capsule parses");
    // Importing it into a nexus holding the schema recreates the concepts.
    let dir = tempfile::tempdir().expect("temp dir");
    let fresh = Nexus::open(dir.path()).expect("opens");
    let schema =
        std::fs::read_to_string(examples_dir().join("10_medical_schema.kip")).expect("schema");
    ok(&fresh, &schema);
    ok(&fresh, capsule);
    let aspirin = ok(
        &fresh,
        r#"FIND(?d.attributes.risk_level) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    assert_eq!(aspirin, json!([2]));
    // Applying it again changes nothing: the capsule is idempotent.
    let before = ok(
        &fresh,
        r#"FIND(?d.metadata._version) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    ok(&fresh, capsule);
    let after = ok(
        &fresh,
        r#"FIND(?d.metadata._version) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    assert_eq!(before, after);
}

#[test]
fn export_pages_with_a_cursor_and_references_outside_endpoints() {
    let (_dir, nexus) = fixture();
    let mut cursor: Option<String> = None;
    let mut concepts = 0;
    let mut pages = 0;
    loop {
        let mut params = json!({});
        let command = match &cursor {
            Some(c) => {
                params["c"] = json!(c);
                r#"EXPORT ?d WHERE { ?d {type: "Drug"} } LIMIT 2 CURSOR :c"#
            }
            None => r#"EXPORT ?d WHERE { ?d {type: "Drug"} } LIMIT 2"#,
        };
        let r = exec_with(&nexus, command, params);
        assert!(r.get("error").is_none(), "{r:#}");
        concepts += r["result"]["concepts"].as_u64().expect("a count");
        pages += 1;
        cursor = r
            .get("next_cursor")
            .and_then(Json::as_str)
            .map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    let drugs = ok(&nexus, r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }"#);
    assert_eq!(json!(concepts), drugs);
    assert_eq!(pages, drugs.as_u64().map_or(0, |n| n.div_ceil(2)));
    // Links whose ends are outside the export are referenced by {type, name}
    // and, for a link about a link, by a nested (s, "p", o) clause.
    let r = ok(
        &nexus,
        r#"EXPORT ?l WHERE { ?l ({type: "User", name: "张三"}, "stated", ?x) }"#,
    );
    let capsule = r["capsule"].as_str().expect("capsule");
    assert!(
        capsule.contains(
            r#"({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Headache"})"#
        ),
        "{capsule}"
    );
    assert_eq!(r["propositions"], 1);
    // EXPORT is a read: a read-only caller may send it.
    let r = nexus.execute(
        &ExecuteKip::command(r#"EXPORT ?d WHERE { ?d {type: "Drug"} }"#),
        &Context::default().with_access(kip_nexus::Access::ReadOnly),
    );
    assert!(r.get("error").is_none(), "{r:#}");
}

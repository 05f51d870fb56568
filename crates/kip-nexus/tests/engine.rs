//! The engine against the medical example graph (capsules/examples): the
//! examples of seed 001 §3–§5 with their expected answers, one test per rule
//! of BRIEF §3's semantics and result shapes, and the reachable error codes.

use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::{Value as Json, json};

use crate::common;
use common::{examples_dir, fixture};

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
fn err(nexus: &Nexus, command: &str) -> Json {
    let r = exec(nexus, command);
    assert!(
        r.get("error").is_some(),
        "expected an error for {command}, got {r:#}"
    );
    r["error"].clone()
}

/// Sorts the rows of a columnar result, for order-insensitive comparison.
fn rows(result: &Json) -> Vec<Vec<Json>> {
    let columns = result.as_array().expect("columns");
    let n = columns.first().and_then(Json::as_array).map_or(0, Vec::len);
    let mut rows: Vec<Vec<Json>> = (0..n)
        .map(|i| columns.iter().map(|c| c[i].clone()).collect())
        .collect();
    rows.sort_by_key(|r| Json::Array(r.clone()).to_string());
    rows
}

fn sorted(result: &Json) -> Vec<Json> {
    let mut v = result.as_array().expect("a column").clone();
    v.sort_by_key(Json::to_string);
    v
}

// ---------------------------------------------------------------- Genesis and META

#[test]
fn a_new_nexus_is_bootstrapped_with_genesis_and_has_a_primer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("opens");
    let primer = ok(&nexus, "DESCRIBE PRIMER");
    assert_eq!(primer["identity"]["name"], "$self");
    assert_eq!(primer["identity"]["_type"], "ConceptNode");
    // RC11's Genesis: CoreSchema and the operational domains.
    assert_eq!(primer["total_domains"], 4);
    let domains: Vec<&Json> = primer["domain_map"]
        .as_array()
        .expect("map")
        .iter()
        .map(|d| &d["domain"])
        .collect();
    assert_eq!(domains, ["CoreSchema", "Unsorted", "Archived", "System"]);
    let core = &primer["domain_map"][0];
    assert_eq!(core["domain"], "CoreSchema");
    for t in [
        "$ConceptType",
        "$PropositionType",
        "Domain",
        "Person",
        "Event",
    ] {
        assert!(
            core["key_concept_types"]
                .as_array()
                .expect("list")
                .contains(&json!(t)),
            "{t} in {core}"
        );
    }
    assert_eq!(core["key_proposition_types"], json!(["belongs_to_domain"]));
    assert_eq!(
        sorted(&ok(&nexus, "DESCRIBE CONCEPT TYPES")),
        vec![
            json!("$ConceptType"),
            json!("$PropositionType"),
            json!("Domain"),
            json!("Event"),
            json!("Person")
        ]
    );
}

#[test]
fn reopening_never_reapplies_genesis() {
    let dir = tempfile::tempdir().expect("temp dir");
    let first = {
        let nexus = Nexus::open(dir.path()).expect("opens");
        ok(
            &nexus,
            r#"FIND(?s) WHERE { ?s {type: "Person", name: "$self"} }"#,
        )
    };
    let nexus = Nexus::open(dir.path()).expect("reopens");
    let second = ok(
        &nexus,
        r#"FIND(?s) WHERE { ?s {type: "Person", name: "$self"} }"#,
    );
    assert_eq!(first, second);
    assert_eq!(
        ok(&nexus, r#"FIND(COUNT(?p)) WHERE { ?p {type: "Person"} }"#),
        json!(2)
    );
}

#[test]
fn describe_shapes() {
    let (_d, nexus) = fixture();
    let drug = ok(&nexus, r#"DESCRIBE CONCEPT TYPE "Drug""#);
    assert_eq!(drug["type"], "$ConceptType");
    assert_eq!(drug["name"], "Drug");
    let treats = ok(&nexus, r#"DESCRIBE PROPOSITION TYPE "treats""#);
    assert_eq!(treats["attributes"]["subject_types"], json!(["Drug"]));
    let e = err(&nexus, r#"DESCRIBE CONCEPT TYPE "drug""#);
    assert_eq!(e["code"], "KIP_3002");
    assert_eq!(e["data"]["suggestions"][0], "Drug");
    let domains = ok(&nexus, "DESCRIBE DOMAINS");
    let names: Vec<&str> = domains
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|d| d["name"].as_str())
        .collect();
    assert!(names.contains(&"Medical") && names.contains(&"CoreSchema"));
    let primer = ok(&nexus, "DESCRIBE PRIMER");
    let medical = primer["domain_map"]
        .as_array()
        .expect("map")
        .iter()
        .find(|d| d["domain"] == "Medical")
        .expect("Medical")
        .clone();
    assert!(
        medical["key_concept_types"]
            .as_array()
            .expect("list")
            .contains(&json!("Drug"))
    );
    assert!(
        medical["key_proposition_types"]
            .as_array()
            .expect("list")
            .contains(&json!("treats"))
    );
    // Every Drug counts, as `FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }`
    // does: the five of the medical data and Cognizine (issue 15).
    assert_eq!(medical["counts"]["by_type"]["Drug"], 6, "{medical}");
}

#[test]
fn describe_types_pages_with_limit_and_cursor() {
    let (_d, nexus) = fixture();
    let all = ok(&nexus, "DESCRIBE PROPOSITION TYPES");
    let first = exec(&nexus, "DESCRIBE PROPOSITION TYPES LIMIT 3");
    assert_eq!(first["result"].as_array().map(Vec::len), Some(3));
    let cursor = first["next_cursor"].as_str().expect("a next cursor");
    let second = exec(
        &nexus,
        &format!("DESCRIBE PROPOSITION TYPES LIMIT 100 CURSOR \"{cursor}\""),
    );
    let mut joined = first["result"].as_array().expect("page").clone();
    joined.extend(second["result"].as_array().expect("page").iter().cloned());
    assert_eq!(Json::Array(joined), all);
    assert!(second.get("next_cursor").is_none());
}

/// An UPSERT writes its concepts' search documents together at its end: a
/// concept named in two blocks of one command is indexed as the last block
/// left it, updates replace the old document, and the store's check agrees.
#[test]
fn an_upsert_indexes_its_concepts_as_they_end_up() {
    let (_d, nexus) = fixture();
    ok(
        &nexus,
        r#"UPSERT {
            CONCEPT ?a { {type: "Drug", name: "Zylofen"} SET ATTRIBUTES { note: "quartzite" } }
            CONCEPT ?b { {type: "Drug", name: "Zylofen"} SET ATTRIBUTES { note: "basalt" } }
            CONCEPT ?c { {type: "Drug", name: "Quimbra"} SET ATTRIBUTES { note: "granite basalt" } }
        }"#,
    );
    let names = |query: &str| -> Vec<String> {
        let hits = ok(&nexus, query);
        let mut names: Vec<String> = hits
            .as_array()
            .expect("hits")
            .iter()
            .map(|h| h["name"].as_str().expect("name").to_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        names(r#"SEARCH CONCEPT "zylofen" MODE "keyword""#),
        ["Zylofen"]
    );
    assert_eq!(
        names(r#"SEARCH CONCEPT "basalt" MODE "keyword""#),
        ["Quimbra", "Zylofen"]
    );
    // The first block's word was replaced by the second's in the same command.
    assert!(names(r#"SEARCH CONCEPT "quartzite" MODE "keyword""#).is_empty());
    // A later command's update replaces the document again.
    ok(
        &nexus,
        r#"UPSERT { CONCEPT ?a { {type: "Drug", name: "Quimbra"} SET ATTRIBUTES { note: "obsidian" } } }"#,
    );
    assert_eq!(
        names(r#"SEARCH CONCEPT "obsidian" MODE "keyword""#),
        ["Quimbra"]
    );
    assert_eq!(
        names(r#"SEARCH CONCEPT "granite" MODE "keyword""#),
        Vec::<String>::new()
    );
    let report = nexus.check_store().expect("check");
    assert!(report.ok, "{report:#?}");
}

#[test]
fn search_ranks_names_handles_chinese_types_and_typos() {
    let (_d, nexus) = fixture();
    let hits = ok(&nexus, r#"SEARCH CONCEPT "aspirin" LIMIT 5"#);
    assert_eq!(hits[0]["name"], "Aspirin");
    assert!(
        hits[0]["metadata"]["_score"]
            .as_f64()
            .is_some_and(|s| s > 0.0)
    );
    let typed = ok(&nexus, r#"SEARCH CONCEPT "aspirin" WITH TYPE "Product""#);
    assert_eq!(typed.as_array().map(Vec::len), Some(1));
    assert_eq!(typed[0]["type"], "Product");
    let chinese = ok(&nexus, r#"SEARCH CONCEPT "张三""#);
    assert_eq!(chinese[0]["name"], "张三");
    // One character, as typed so far, finds the names that contain it.
    let typing = ok(&nexus, r#"SEARCH CONCEPT "张""#);
    assert_eq!(typing[0]["name"], "张三");
    let typo = ok(&nexus, r#"SEARCH CONCEPT "asprin""#);
    assert_eq!(typo[0]["name"], "Aspirin");
    // The seven `treats` links rank above links that merely mention "treats".
    let links = ok(&nexus, r#"SEARCH PROPOSITION "treats" LIMIT 10"#);
    let hits = links.as_array().expect("hits");
    assert!(hits.len() >= 7);
    assert!(
        hits[..7].iter().all(|l| l["predicate"] == "treats"),
        "{links:#}"
    );
    let typed = ok(
        &nexus,
        r#"SEARCH PROPOSITION "aspirin" WITH TYPE "has_side_effect""#,
    );
    assert_eq!(typed.as_array().map(Vec::len), Some(1));
    let limited = ok(&nexus, r#"SEARCH CONCEPT "acid" WITH TYPE "Drug" LIMIT 2"#);
    assert_eq!(limited.as_array().map(Vec::len), Some(2));
}

// ---------------------------------------------------------------- the spec's KQL examples

#[test]
fn spec_example_1_non_nsaid_headache_drugs_by_risk() {
    let (_d, nexus) = fixture();
    let r = ok(
        &nexus,
        r#"
        FIND(?drug.name, ?drug.attributes.risk_level)
        WHERE {
          ?drug {type: "Drug"}
          ?headache {name: "Headache"}
          (?drug, "treats", ?headache)
          NOT { (?drug, "is_class_of", {name: "NSAID"}) }
          FILTER(?drug.attributes.risk_level < 4)
        }
        ORDER BY ?drug.attributes.risk_level ASC
        LIMIT 20"#,
    );
    assert_eq!(r, json!([["Paracetamol"], [1]]));
}

#[test]
fn spec_example_2_optional_side_effects_and_sources() {
    let (_d, nexus) = fixture();
    let r = ok(
        &nexus,
        r#"
        FIND(?drug.name, ?side_effect.name, ?link.metadata.source)
        WHERE {
          (?drug, "is_class_of", {name: "NSAID"})
          OPTIONAL { ?link (?drug, "has_side_effect", ?side_effect) }
        }"#,
    );
    assert_eq!(
        rows(&r),
        vec![
            vec![json!("Aspirin"), json!("Stomach Upset"), json!("FDA label")],
            vec![
                json!("Ibuprofen"),
                json!("Stomach Upset"),
                json!("KIP Explorer examples")
            ],
            vec![json!("Mefenamic Acid"), Json::Null, Json::Null],
        ]
    );
}

#[test]
fn spec_example_3_higher_order_statement() {
    let (_d, nexus) = fixture();
    let r = ok(
        &nexus,
        r#"
        FIND(?statement.metadata.confidence)
        WHERE {
          ?fact ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Headache"})
          ?statement ({type: "User", name: "张三"}, "stated", ?fact)
        }"#,
    );
    assert_eq!(r, json!([0.8]));
}

#[test]
fn not_is_an_anti_join_that_leaves_other_variables_alone() {
    let (_d, nexus) = fixture();
    let r = ok(
        &nexus,
        r#"
        FIND(?drug.name)
        WHERE {
          ?drug {type: "Drug"}
          NOT {
            ?nsaid_class {name: "NSAID"}
            (?drug, "is_class_of", ?nsaid_class)
          }
        }"#,
    );
    assert_eq!(
        sorted(&r),
        vec![json!("Cognizine"), json!("Paracetamol"), json!("Vitamin C")]
    );
}

#[test]
fn union_adds_rows_from_its_own_scope_with_nulls() {
    let (_d, nexus) = fixture();
    let r = ok(
        &nexus,
        r#"
        FIND(?drug.name, ?product.name)
        WHERE {
          ?drug {type: "Drug"}
          (?drug, "treats", {name: "Fever"})
          UNION {
            ?product {type: "Product"}
            (?product, "manufactured_by", {name: "Bayer"})
          }
        }"#,
    );
    assert_eq!(
        rows(&r),
        vec![
            vec![json!("Aspirin"), Json::Null],
            vec![json!("Paracetamol"), Json::Null],
            vec![Json::Null, json!("Aspirin")],
        ]
    );
}

#[test]
fn paths_include_the_start_at_zero_hops_and_follow_either_end() {
    let (_d, nexus) = fixture();
    let up = ok(
        &nexus,
        r#"FIND(?parent.name) WHERE { (?c, "is_subclass_of"{0,5}, ?parent) ?c {type: "DrugClass", name: "NSAID"} }"#,
    );
    assert_eq!(sorted(&up), vec![json!("Analgesic"), json!("NSAID")]);
    let one = ok(
        &nexus,
        r#"FIND(?parent.name) WHERE { ({type: "DrugClass", name: "NSAID"}, "is_subclass_of"{1}, ?parent) }"#,
    );
    assert_eq!(one, json!(["Analgesic"]));
    let down = ok(
        &nexus,
        r#"FIND(?c.name) WHERE { (?c, "is_subclass_of"{1,}, {type: "DrugClass", name: "Analgesic"}) }"#,
    );
    assert_eq!(down, json!(["NSAID"]));
    let both = ok(
        &nexus,
        r#"FIND(?a.name, ?b.name) WHERE { (?a, "is_subclass_of"{1,3}, ?b) }"#,
    );
    assert_eq!(rows(&both), vec![vec![json!("NSAID"), json!("Analgesic")]]);
}

#[test]
fn cyclic_paths_terminate() {
    let (_d, nexus) = fixture();
    ok(
        &nexus,
        r#"UPSERT { CONCEPT ?a { {type: "DrugClass", name: "Analgesic"} SET PROPOSITIONS { ("is_subclass_of", {type: "DrugClass", name: "NSAID"}) } } }"#,
    );
    let r = ok(
        &nexus,
        r#"FIND(?p.name) WHERE { ({type: "DrugClass", name: "NSAID"}, "is_subclass_of"{1,}, ?p) }"#,
    );
    assert_eq!(sorted(&r), vec![json!("Analgesic"), json!("NSAID")]);
}

#[test]
fn predicate_alternatives_and_variables() {
    let (_d, nexus) = fixture();
    let r = ok(
        &nexus,
        r#"FIND(?s.name) WHERE { ({type: "Drug", name: "Aspirin"}, "treats" | "has_side_effect", ?s) }"#,
    );
    assert_eq!(
        sorted(&r),
        vec![json!("Fever"), json!("Headache"), json!("Stomach Upset")]
    );
    let r = ok(
        &nexus,
        r#"FIND(?p, ?o.name) WHERE { ({type: "Drug", name: "Ibuprofen"}, ?p, ?o) }"#,
    );
    assert_eq!(
        rows(&r),
        vec![
            vec![json!("belongs_to_domain"), json!("Medical")],
            vec![json!("has_side_effect"), json!("Stomach Upset")],
            vec![json!("is_class_of"), json!("NSAID")],
            vec![json!("treats"), json!("Headache")],
        ]
    );
}

#[test]
fn aggregates_group_by_the_plain_expressions() {
    let (_d, nexus) = fixture();
    let r = ok(
        &nexus,
        r#"FIND(?d.name, COUNT(?s)) WHERE { (?d, "treats", ?s) } ORDER BY COUNT(?s) DESC, ?d.name ASC"#,
    );
    assert_eq!(
        r,
        json!([
            [
                "Aspirin",
                "Paracetamol",
                "Cognizine",
                "Ibuprofen",
                "Mefenamic Acid"
            ],
            [2, 2, 1, 1, 1]
        ])
    );
    let scalar = ok(&nexus, r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }"#);
    assert_eq!(scalar, json!(6));
    let several = ok(
        &nexus,
        r#"FIND(COUNT(DISTINCT ?s), SUM(?d.attributes.risk_level), MIN(?d.attributes.risk_level), MAX(?d.attributes.risk_level)) WHERE { (?d, "treats", ?s) }"#,
    );
    assert_eq!(several, json!([3, 15, 1, 4]));
    let empty = ok(
        &nexus,
        r#"FIND(COUNT(?d), AVG(?d.attributes.risk_level)) WHERE { ?d {type: "Drug", name: "Nothing"} }"#,
    );
    assert_eq!(empty, json!([0, null]));
}

#[test]
fn filters_cover_every_operator_and_function() {
    let (_d, nexus) = fixture();
    let names = |filter: &str| {
        sorted(&ok(
            &nexus,
            &format!(r#"FIND(?d.name) WHERE {{ ?d {{type: "Drug"}} FILTER({filter}) }}"#),
        ))
    };
    assert_eq!(
        names(r#"CONTAINS(?d.name, "Acid")"#),
        vec![json!("Mefenamic Acid")]
    );
    assert_eq!(
        names(r#"STARTS_WITH(?d.name, "Ibu")"#),
        vec![json!("Ibuprofen")]
    );
    assert_eq!(
        names(r#"ENDS_WITH(?d.name, " C")"#),
        vec![json!("Vitamin C")]
    );
    assert_eq!(
        names(r#"REGEX(?d.name, "^(Asp|Par)")"#),
        vec![json!("Aspirin"), json!("Paracetamol")]
    );
    assert_eq!(
        names(r#"IN(?d.name, ["Aspirin", "Nope"])"#),
        vec![json!("Aspirin")]
    );
    assert_eq!(
        names(r#"IS_NULL(?d.attributes.risk_level)"#),
        Vec::<Json>::new()
    );
    assert_eq!(
        names(r#"IS_NULL(?d.attributes.molecular_formula) && ?d.attributes.risk_level == 3"#),
        vec![json!("Ibuprofen")]
    );
    assert_eq!(
        names(r#"IS_NOT_NULL(?d.attributes.molecular_formula)"#),
        vec![json!("Aspirin"), json!("Cognizine")]
    );
    assert_eq!(
        names(r#"?d.attributes.risk_level >= 3 && !(?d.name == "Ibuprofen")"#),
        vec![json!("Mefenamic Acid")]
    );
    assert_eq!(
        names(r#"?d.attributes.risk_level == 1 || ?d.attributes.risk_level > 3"#),
        vec![
            json!("Mefenamic Acid"),
            json!("Paracetamol"),
            json!("Vitamin C")
        ]
    );
    assert_eq!(
        names(r#"?d.attributes.missing < 3"#),
        Vec::<Json>::new(),
        "comparisons with null are false"
    );
    assert_eq!(
        names(r#"?d.attributes.risk_level != 2 && ?d.attributes.risk_level <= 1"#),
        vec![json!("Paracetamol"), json!("Vitamin C")]
    );
}

#[test]
fn results_do_not_depend_on_the_order_clauses_are_written_in() {
    let (_d, nexus) = fixture();
    let clauses = [
        r#"?drug {type: "Drug"}"#,
        r#"(?drug, "treats", ?s)"#,
        r#"?s {name: "Headache"}"#,
        r#"(?drug, "is_class_of", ?c)"#,
        r#"FILTER(?drug.attributes.risk_level > 1)"#,
    ];
    let mut expected = None;
    for perm in [
        [0, 1, 2, 3, 4],
        [4, 3, 2, 1, 0],
        [2, 0, 4, 1, 3],
        [3, 4, 1, 2, 0],
    ] {
        let body: Vec<&str> = perm.iter().map(|&i| clauses[i]).collect();
        let q = format!("FIND(?drug.name, ?c.name) WHERE {{ {} }}", body.join("\n"));
        let r = rows(&ok(&nexus, &q));
        match &expected {
            None => expected = Some(r),
            Some(e) => assert_eq!(&r, e, "{q}"),
        }
    }
    assert_eq!(expected.map(|e| e.len()), Some(3));
}

#[test]
fn bare_variables_project_full_objects() {
    let (_d, nexus) = fixture();
    let r = ok(
        &nexus,
        r#"FIND(?d, ?l) WHERE { ?d {type: "Drug", name: "Aspirin"} ?l (?d, "treats", {name: "Fever"}) }"#,
    );
    let concept = &r[0][0];
    assert_eq!(concept["_type"], "ConceptNode");
    assert!(
        concept["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("C:"))
    );
    assert_eq!(concept["type"], "Drug");
    assert!(concept["attributes"].is_object() && concept["metadata"].is_object());
    let link = &r[1][0];
    assert_eq!(link["_type"], "PropositionLink");
    assert!(link["id"].as_str().is_some_and(|id| id.starts_with("P:")));
    assert_eq!(link["predicate"], "treats");
    assert_eq!(link["subject"], concept["id"]);
    assert_eq!(link["metadata"]["confidence"], 0.9);
    let by_id = ok(
        &nexus,
        &format!(r#"FIND(?x.name) WHERE {{ ?x {{id: {}}} }}"#, concept["id"]),
    );
    assert_eq!(by_id, json!(["Aspirin"]));
    let link_by_id = ok(
        &nexus,
        &format!(
            r#"FIND(?l.predicate, ?l.subject) WHERE {{ ?l (id: {}) }}"#,
            link["id"]
        ),
    );
    assert_eq!(link_by_id, json!([["treats"], [concept["id"].clone()]]));
}

#[test]
fn cursor_pages_neither_repeat_nor_skip_and_refuse_foreign_tokens() {
    let (_d, nexus) = fixture();
    let q = r#"FIND(?c.name) WHERE { ?c {type: "$ConceptType"} } ORDER BY ?c.name ASC"#;
    let all = ok(&nexus, q);
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let text = match &cursor {
            None => format!("{q} LIMIT 4"),
            Some(c) => format!("{q} LIMIT 4 CURSOR \"{c}\""),
        };
        let r = exec(&nexus, &text);
        seen.extend(r["result"].as_array().expect("page").iter().cloned());
        match r.get("next_cursor").and_then(Json::as_str) {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(Json::Array(seen), all);
    let token = exec(&nexus, &format!("{q} LIMIT 1"))["next_cursor"]
        .as_str()
        .expect("cursor")
        .to_owned();
    let e = err(
        &nexus,
        &format!(r#"FIND(?c.name) WHERE {{ ?c {{type: "Drug"}} }} CURSOR "{token}""#),
    );
    assert_eq!(e["code"], "KIP_1001");
    let e = err(&nexus, &format!(r#"{q} CURSOR "forged{token}""#));
    assert_eq!(e["code"], "KIP_1001");
}

#[test]
fn parameters_bind_everywhere_a_value_may_stand() {
    let (_d, nexus) = fixture();
    let request = ExecuteKip::command(r#"FIND(?drug.name) WHERE { ?symptom {name: :symptom_name} (?drug, "treats", ?symptom) } ORDER BY ?drug.name ASC LIMIT :limit"#)
        .with_parameters(json!({"symptom_name": "Fever", "limit": 1}).as_object().cloned().expect("object"));
    let r = nexus.execute(&request, &Context::default());
    assert_eq!(r["result"], json!(["Aspirin"]));
    assert!(r["next_cursor"].is_string());
    let missing = nexus.execute(
        &ExecuteKip::command("SEARCH CONCEPT :term"),
        &Context::default(),
    );
    assert_eq!(missing["error"]["code"], "KIP_3001");
    assert!(
        missing["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(":term"))
    );
}

#[test]
fn batches_run_in_order_and_stop_at_the_first_error() {
    let (_d, nexus) = fixture();
    let request: ExecuteKip = serde_json::from_value(json!({
        "commands": [
            "DESCRIBE PRIMER",
            {"command": "FIND(?d.name) WHERE { ?d {type: \"Drug\", name: :n} }", "parameters": {"n": "Aspirin"}},
            "FIND(?x) WHERE { ?x {type: \"Nope\"} }",
            "DESCRIBE DOMAINS"
        ]
    }))
    .expect("request");
    let r = nexus.execute(&request, &Context::default());
    let results = r["result"].as_array().expect("batch");
    assert_eq!(results.len(), 3);
    assert_eq!(results[1]["result"], json!(["Aspirin"]));
    assert_eq!(results[2]["error"]["code"], "KIP_2001");
    let both = nexus.execute(
        &serde_json::from_value(
            json!({"command": "DESCRIBE PRIMER", "commands": ["DESCRIBE PRIMER"]}),
        )
        .expect("request"),
        &Context::default(),
    );
    assert_eq!(both["error"]["code"], "KIP_1001");
}

// ---------------------------------------------------------------- KML

#[test]
fn upsert_result_shape_and_strict_idempotency() {
    let (_d, nexus) = fixture();
    let capsule =
        std::fs::read_to_string(examples_dir().join("12_cognizine.kip")).expect("capsule");
    let before = ok(
        &nexus,
        r#"FIND(?d) WHERE { ?d {type: "Drug", name: "Cognizine"} }"#,
    );
    let again = ok(&nexus, &capsule);
    assert_eq!(again["blocks"], 2);
    assert_eq!(
        again["upsert_concept_nodes"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(again["upsert_proposition_links"], json!([]));
    let after = ok(
        &nexus,
        r#"FIND(?d) WHERE { ?d {type: "Drug", name: "Cognizine"} }"#,
    );
    assert_eq!(
        before, after,
        "a repeated capsule changes nothing, timestamps included"
    );
    assert_eq!(
        after[0]["metadata"]["source"],
        "KnowledgeCapsule:Nootropics_v1.0"
    );
    assert!(after[0]["metadata"]["_created_at"].is_string());
}

#[test]
fn set_attributes_is_a_shallow_merge_and_set_propositions_is_additive() {
    let (_d, nexus) = fixture();
    ok(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 3, extra: {a: 1} } SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Brain Fog"}) } } }"#,
    );
    let a = ok(
        &nexus,
        r#"FIND(?d) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    )[0]
    .clone();
    assert_eq!(a["attributes"]["risk_level"], 3);
    assert_eq!(a["attributes"]["molecular_formula"], "C9H8O4");
    assert_eq!(a["attributes"]["extra"], json!({"a": 1}));
    let treats = ok(
        &nexus,
        r#"FIND(?s.name) WHERE { ({type: "Drug", name: "Aspirin"}, "treats", ?s) }"#,
    );
    assert_eq!(
        sorted(&treats),
        vec![json!("Brain Fog"), json!("Fever"), json!("Headache")]
    );
}

#[test]
fn a_failing_command_changes_nothing() {
    let (_d, nexus) = fixture();
    let before = ok(&nexus, r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }"#);
    let e = err(
        &nexus,
        r#"UPSERT {
        CONCEPT ?n { {type: "Drug", name: "Newdrug"} SET ATTRIBUTES { risk_level: 1 } }
        CONCEPT ?m { {type: "Drug", name: "Otherdrug"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headach"}) } }
    }"#,
    );
    assert_eq!(e["code"], "KIP_3002");
    assert_eq!(e["data"]["suggestions"][0], "Headache");
    assert_eq!(e["data"]["line"], 3);
    assert_eq!(
        ok(&nexus, r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }"#),
        before
    );
    assert_eq!(
        ok(&nexus, r#"SEARCH CONCEPT "Newdrug" MODE "keyword""#),
        json!([])
    );
}

#[test]
fn unknown_types_and_predicates_are_kip_2001_with_suggestions() {
    let (_d, nexus) = fixture();
    let e = err(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Drugs", name: "X"} } }"#,
    );
    assert_eq!(e["code"], "KIP_2001");
    assert_eq!(e["data"]["suggestions"][0], "Drug");
    let e = err(&nexus, r#"FIND(?d) WHERE { (?d, "treat", ?s) }"#);
    assert_eq!(e["code"], "KIP_2001");
    assert_eq!(e["data"]["suggestions"][0], "treats");
    assert_eq!(e["data"]["column"], 23);
}

#[test]
fn predicate_signatures_are_enforced() {
    let (_d, nexus) = fixture();
    let e = err(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Symptom", name: "Headache"} SET PROPOSITIONS { ("treats", {type: "Drug", name: "Aspirin"}) } } }"#,
    );
    assert_eq!(e["code"], "KIP_2001");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("subject of type Drug"))
    );
}

#[test]
fn id_blocks_only_match() {
    let (_d, nexus) = fixture();
    let e = err(
        &nexus,
        r#"UPSERT { CONCEPT { {id: "C:999999"} SET ATTRIBUTES { a: 1 } } }"#,
    );
    assert_eq!(e["code"], "KIP_3002");
}

#[test]
fn dry_run_previews_exactly_and_writes_nothing() {
    let (_d, nexus) = fixture();
    let request = ExecuteKip::command(
        r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    )
    .dry_run();
    let preview = nexus.execute(&request, &Context::default());
    assert_eq!(preview["result"]["dry_run"], true);
    assert_eq!(preview["result"]["deleted_concepts"], 1);
    assert_eq!(
        preview["result"]["deleted_propositions"], 6,
        "5 links of Aspirin and the stated link about one of them"
    );
    assert_eq!(
        ok(
            &nexus,
            r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#
        ),
        json!(1)
    );
    let valid = nexus.execute(
        &ExecuteKip::command(r#"FIND(?d) WHERE { ?d {type: "Drug"} }"#).dry_run(),
        &Context::default(),
    );
    assert_eq!(valid["result"], json!({"valid": true}));
    let invalid = nexus.execute(
        &ExecuteKip::command(r#"FIND(?d) WHERE { ?d {type: "Drgu"} }"#).dry_run(),
        &Context::default(),
    );
    assert_eq!(invalid["error"]["code"], "KIP_2001");
}

#[test]
fn delete_forms_and_their_result_shapes() {
    let (_d, nexus) = fixture();
    let r = ok(
        &nexus,
        r#"DELETE ATTRIBUTES {"molecular_formula", "nope"} FROM ?d WHERE { ?d {type: "Drug"} }"#,
    );
    assert_eq!(r, json!({"updated_concepts": 2, "updated_propositions": 0}));
    let r = ok(
        &nexus,
        r#"DELETE METADATA {"source"} FROM ?l WHERE { ?l (?d, "has_side_effect", ?s) }"#,
    );
    assert_eq!(r, json!({"updated_concepts": 0, "updated_propositions": 3}));
    let r = ok(
        &nexus,
        r#"DELETE PROPOSITIONS ?l WHERE { ?l (?d, "treats", {name: "Fever"}) }"#,
    );
    assert_eq!(r, json!({"deleted_propositions": 2}));
    // DETACH cascades to the higher-order link that pointed at a removed link.
    let r = ok(
        &nexus,
        r#"DELETE CONCEPT ?h DETACH WHERE { ?h {type: "Symptom", name: "Headache"} }"#,
    );
    assert_eq!(r["deleted_concepts"], 1);
    assert_eq!(
        r["deleted_propositions"], 6,
        "4 treats + belongs_to_domain + the stated link about a treats link"
    );
    assert_eq!(
        ok(&nexus, r#"FIND(COUNT(?l)) WHERE { ?l (?u, "stated", ?f) }"#),
        json!(0)
    );
}

#[test]
fn the_protected_scope_answers_kip_3004() {
    let (_d, nexus) = fixture();
    for q in [
        r#"DELETE CONCEPT ?s DETACH WHERE { ?s {type: "Person", name: "$self"} }"#,
        r#"DELETE CONCEPT ?s DETACH WHERE { ?s {type: "Person", name: "$system"} }"#,
        r#"DELETE CONCEPT ?t DETACH WHERE { ?t {type: "$ConceptType", name: "$ConceptType"} }"#,
        r#"DELETE CONCEPT ?t DETACH WHERE { ?t {type: "$ConceptType", name: "$PropositionType"} }"#,
        r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Domain", name: "CoreSchema"} }"#,
        r#"DELETE CONCEPT ?p DETACH WHERE { ?p {type: "$PropositionType", name: "belongs_to_domain"} }"#,
        r#"UPSERT { CONCEPT { {type: "Person", name: "$self"} SET ATTRIBUTES { id: "someone-else" } } }"#,
        r#"DELETE ATTRIBUTES {"id"} FROM ?s WHERE { ?s {type: "Person", name: "$system"} }"#,
    ] {
        assert_eq!(err(&nexus, q)["code"], "KIP_3004", "{q}");
    }
    // Other attributes of $self may grow.
    ok(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Person", name: "$self"} SET ATTRIBUTES { name: "Ada" } } }"#,
    );
}

#[test]
fn reserved_metadata_keys_cannot_be_written() {
    let (_d, nexus) = fixture();
    let e = err(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Drug", name: "Aspirin"} } WITH METADATA { _created_at: "1999" } }"#,
    );
    // RC10 §2.11.1: a ConstraintViolation (KIP_2003 in RC2's numbering); it was KIP_3004.
    assert_eq!(e["code"], "KIP_2003");
}

#[test]
fn a_runaway_path_ends_with_a_budget_error_instead_of_hanging() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("opens");
    ok(
        &nexus,
        r#"UPSERT {
        CONCEPT { {type: "$ConceptType", name: "Node"} SET ATTRIBUTES { description: "n" } }
        CONCEPT { {type: "$PropositionType", name: "next"} SET ATTRIBUTES { description: "n", subject_types: ["*"], object_types: ["*"] } }
    }"#,
    );
    // A dense graph: 60 nodes, every node linked to every other.
    let mut capsule = String::from("UPSERT {\n");
    for i in 0..60 {
        capsule.push_str(&format!(
            "CONCEPT ?n{i} {{ {{type: \"Node\", name: \"n{i}\"}} }}\n"
        ));
    }
    for i in 0..60 {
        capsule.push_str(&format!(
            "CONCEPT {{ {{type: \"Node\", name: \"n{i}\"}} SET PROPOSITIONS {{"
        ));
        for j in 0..60 {
            if i != j {
                capsule.push_str(&format!(" (\"next\", ?n{j})"));
            }
        }
        capsule.push_str(" } }\n");
    }
    capsule.push('}');
    ok(&nexus, &capsule);
    let e = err(
        &nexus,
        r#"FIND(COUNT(?a)) WHERE { (?a, "next", ?b) (?b, "next", ?c) (?c, "next", ?d) (?d, "next", ?e) (?e, "next", ?f) }"#,
    );
    assert!(e["code"] == "KIP_4001" || e["code"] == "KIP_4002", "{e}");
}

#[test]
fn without_limit_a_find_returns_at_most_1000_rows_and_a_cursor() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("opens");
    let mut capsule = String::from(
        "UPSERT {\n  CONCEPT { {type: \"$ConceptType\", name: \"Item\"} SET ATTRIBUTES { description: \"i\" } }\n",
    );
    for i in 0..1_234 {
        capsule.push_str(&format!(
            "  CONCEPT {{ {{type: \"Item\", name: \"item {i:04}\"}} }}\n"
        ));
    }
    capsule.push('}');
    ok(&nexus, &capsule);
    let first = exec(
        &nexus,
        r#"FIND(?i.name) WHERE { ?i {type: "Item"} } ORDER BY ?i.name DESC"#,
    );
    assert_eq!(first["result"].as_array().map(Vec::len), Some(1_000));
    assert_eq!(first["result"][0], "item 1233");
    let cursor = first["next_cursor"]
        .as_str()
        .expect("a cursor for the rest");
    let rest = exec(
        &nexus,
        &format!(
            r#"FIND(?i.name) WHERE {{ ?i {{type: "Item"}} }} ORDER BY ?i.name DESC CURSOR "{cursor}""#
        ),
    );
    assert_eq!(rest["result"].as_array().map(Vec::len), Some(234));
    assert_eq!(rest["result"][233], "item 0000");
    assert!(rest.get("next_cursor").is_none());
}

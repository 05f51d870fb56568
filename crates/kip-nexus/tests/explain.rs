//! `explain`: the plan and rows of every step, and for a corpus of wrong
//! queries on the example graph, the clause that fails, why, and the fix.

use std::fmt::Write as _;

use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::Value;

mod common;
use common::fixture;

fn explain(nexus: &Nexus, query: &str) -> Value {
    let mut request = ExecuteKip::command(query);
    request.explain = Some(true);
    let r = nexus.execute(&request, &Context::default());
    assert!(r.get("error").is_none(), "{r:#}");
    r["explain"].clone()
}

/// The one cause of an empty result: (reason, clause text, fixed query).
#[track_caller]
fn why(nexus: &Nexus, query: &str) -> (String, String, Option<String>) {
    let e = explain(nexus, query);
    let causes = e["why_empty"]
        .as_array()
        .unwrap_or_else(|| panic!("no why_empty for {query}: {e:#}"));
    assert_eq!(causes.len(), 1, "{causes:#?}");
    let c = &causes[0];
    let offset = c["clause"]["offset"].as_u64().expect("offset") as usize;
    let length = c["clause"]["length"].as_u64().expect("length") as usize;
    assert_eq!(
        c["text"].as_str(),
        query.get(offset..offset + length),
        "the range points at the clause"
    );
    assert!(c["message"].as_str().is_some_and(|m| !m.is_empty()));
    let fixed = c.get("fix").map(|f| {
        let start = f["range"]["offset"].as_u64().expect("offset") as usize;
        let len = f["range"]["length"].as_u64().expect("length") as usize;
        format!(
            "{}{}{}",
            &query[..start],
            f["replacement"].as_str().expect("replacement"),
            &query[start + len..]
        )
    });
    (
        c["reason"].as_str().expect("reason").to_owned(),
        c["text"].as_str().expect("text").to_owned(),
        fixed,
    )
}

/// A fixed query must return rows.
#[track_caller]
fn finds_rows(nexus: &Nexus, query: &str) {
    let r = nexus.execute(&ExecuteKip::command(query), &Context::default());
    let rows = &r["result"];
    let non_empty = match rows {
        Value::Array(a) => {
            !a.is_empty() && a.iter().all(|c| c.as_array().is_none_or(|c| !c.is_empty()))
        }
        _ => false,
    };
    assert!(non_empty, "{query} still finds nothing: {r}");
}

#[test]
fn a_working_query_shows_its_plan_rows_indexes_and_samples() {
    let (_d, nexus) = fixture();
    let e = explain(
        &nexus,
        r#"FIND(?drug.name) WHERE { ?drug {type: "Drug"} (?drug, "treats", ?s) ?s {type: "Symptom", name: "Fever"} FILTER(?drug.attributes.risk_level < 3) }"#,
    );
    let plan = e["plan"].as_array().expect("plan");
    let kinds: Vec<&str> = plan.iter().filter_map(|s| s["kind"].as_str()).collect();
    // The FILTER runs as soon as ?drug is bound, before the type check.
    assert_eq!(kinds, ["concept", "proposition", "filter", "concept"]);
    // The planner starts from the one named concept, not from all drugs.
    assert_eq!(plan[0]["text"], r#"?s {type: "Symptom", name: "Fever"}"#);
    assert_eq!(plan[1]["index"], "osp");
    assert_eq!(
        (plan[1]["rows_in"].as_u64(), plan[1]["rows_out"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(plan[3]["rows_out"], 2);
    assert_eq!(plan[1]["sample"][0]["s"]["name"], "Fever");
    assert_eq!(e["rows"], 2);
    assert!(e.get("why_empty").is_none());
}

#[test]
fn not_optional_and_union_report_their_counts() {
    let (_d, nexus) = fixture();
    let e = explain(
        &nexus,
        r#"FIND(?d.name, ?e.name) WHERE { ?d {type: "Drug"} NOT { (?d, "is_class_of", {name: "NSAID"}) } OPTIONAL { (?d, "has_side_effect", ?e) } UNION { ?d {type: "Drug", name: "Aspirin"} } }"#,
    );
    let plan = e["plan"].as_array().expect("plan");
    let step = |kind: &str| {
        plan.iter()
            .find(|s| s["kind"] == kind)
            .unwrap_or_else(|| panic!("{kind} in {plan:#?}"))
            .clone()
    };
    assert_eq!(step("not")["detail"]["rows_removed"], 3);
    assert_eq!(step("optional")["detail"]["rows_extended"], 1);
    assert_eq!(step("optional")["detail"]["rows_padded"], 2);
    assert_eq!(step("union")["detail"]["branch_rows"], 1);
}

#[test]
fn wrong_case_is_named_with_a_fix() {
    let (_d, nexus) = fixture();
    let q = r#"FIND(?d.name) WHERE { (?d, "treats", {type: "Symptom", name: "headache"}) }"#;
    let (reason, text, fixed) = why(&nexus, q);
    assert_eq!(reason, "name_differs_in_case_or_spacing");
    assert_eq!(text, r#"{type: "Symptom", name: "headache"}"#);
    finds_rows(&nexus, &fixed.expect("a fix"));
}

#[test]
fn wrong_spacing_is_named_with_a_fix() {
    let (_d, nexus) = fixture();
    let q = r#"FIND(?d.name) WHERE { (?d, "has_side_effect", {type: "Symptom", name: "stomach  upset"}) }"#;
    let (reason, _, fixed) = why(&nexus, q);
    assert_eq!(reason, "name_differs_in_case_or_spacing");
    finds_rows(&nexus, &fixed.expect("a fix"));
}

#[test]
fn a_misspelt_name_gets_did_you_mean() {
    let (_d, nexus) = fixture();
    let q = r#"FIND(?s.name) WHERE { ({type: "Drug", name: "Ibuprofn"}, "treats", ?s) }"#;
    let (reason, _, fixed) = why(&nexus, q);
    assert_eq!(reason, "similar_name");
    finds_rows(&nexus, &fixed.expect("a fix"));
}

#[test]
fn a_name_under_another_type_is_named() {
    let (_d, nexus) = fixture();
    let q = r#"FIND(?d.name) WHERE { (?d, "treats", {type: "DrugClass", name: "Fever"}) }"#;
    let (reason, _, fixed) = why(&nexus, q);
    assert_eq!(reason, "name_under_other_type");
    finds_rows(&nexus, &fixed.expect("a fix"));
}

#[test]
fn a_link_in_the_opposite_direction_is_named() {
    let (_d, nexus) = fixture();
    let q = r#"FIND(?d.name) WHERE { ?d {type: "Drug"} ({type: "Symptom", name: "Headache"}, "treats", ?d) }"#;
    let (reason, text, fixed) = why(&nexus, q);
    assert_eq!(reason, "opposite_direction");
    assert_eq!(
        text,
        r#"({type: "Symptom", name: "Headache"}, "treats", ?d)"#
    );
    finds_rows(&nexus, &fixed.expect("a fix"));
}

#[test]
fn an_over_strict_filter_shows_the_values_it_saw() {
    let (_d, nexus) = fixture();
    let q = r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.risk_level > 5) }"#;
    let e = explain(&nexus, q);
    let cause = &e["why_empty"][0];
    assert_eq!(cause["reason"], "filter_removed_all");
    assert_eq!(cause["text"], "FILTER(?d.attributes.risk_level > 5)");
    assert!(
        cause["message"]
            .as_str()
            .is_some_and(|m| m.contains("?d.attributes.risk_level = ")),
        "{cause}"
    );
}

#[test]
fn a_filter_that_differs_in_case_from_a_value_gets_a_one_click_fix() {
    let (_d, nexus) = fixture();
    let q = r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.name == "aspirin") }"#;
    let (reason, text, fixed) = why(&nexus, q);
    assert_eq!(reason, "filter_removed_all");
    assert_eq!(text, r#"FILTER(?d.name == "aspirin")"#);
    let fixed = fixed.expect("a fix");
    assert_eq!(
        fixed,
        r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.name == "Aspirin") }"#
    );
    finds_rows(&nexus, &fixed);
    // The value on the left works the same; no near value, no fix.
    let (_, _, fixed) = why(
        &nexus,
        r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER("ASPIRIN" == ?d.name) }"#,
    );
    finds_rows(&nexus, &fixed.expect("a fix"));
    let (_, _, none) = why(
        &nexus,
        r#"FIND(?d.name) WHERE { ?d {type: "Drug"} FILTER(?d.name == "Quinine") }"#,
    );
    assert_eq!(none, None);
}

#[test]
fn a_not_that_removes_everything_is_named() {
    let (_d, nexus) = fixture();
    let q = r#"FIND(?d.name) WHERE { (?d, "is_class_of", {name: "NSAID"}) NOT { (?d, "treats", ?s) } }"#;
    let (reason, text, _) = why(&nexus, q);
    assert_eq!(reason, "not_removed_all");
    assert!(text.starts_with('{'), "{text}");
}

#[test]
fn a_path_too_short_gets_a_wider_range() {
    let (_d, nexus) = fixture();
    ok_upsert(
        &nexus,
        r#"UPSERT { CONCEPT ?p { {type: "DrugClass", name: "Painkiller"} } CONCEPT { {type: "DrugClass", name: "Analgesic"} SET PROPOSITIONS { ("is_subclass_of", ?p) } } }"#,
    );
    let q =
        r#"FIND(?p.name) WHERE { ({type: "DrugClass", name: "NSAID"}, "is_subclass_of"{3}, ?p) }"#;
    let (reason, _, fixed) = why(&nexus, q);
    assert_eq!(reason, "path_too_short");
    finds_rows(&nexus, &fixed.expect("a fix"));
}

#[test]
fn a_clause_that_joins_nothing_is_named() {
    let (_d, nexus) = fixture();
    let q = r#"FIND(?d.name) WHERE { (?d, "treats", {type: "Symptom", name: "Brain Fog"}) (?d, "is_class_of", {type: "DrugClass", name: "NSAID"}) }"#;
    let (reason, _, _) = why(&nexus, q);
    assert!(reason == "no_join", "{reason}");
}

fn ok_upsert(nexus: &Nexus, text: &str) {
    let r = nexus.execute(&ExecuteKip::command(text), &Context::default());
    assert!(r.get("error").is_none(), "{r}");
}

/// The why-empty corpus, `tests/data/why_empty/*.kip` (the console's
/// Playwright test replays the same files): each query's `explain` names
/// the failing clause and why. The snapshot pins the clause, the reason,
/// the message and the fix; a fix must make the query return rows.
#[test]
fn why_empty_corpus() {
    let (_d, nexus) = fixture();
    insta::glob!("data/why_empty/*.kip", |path| {
        let query = std::fs::read_to_string(path).expect("query");
        let mut request = ExecuteKip::command(&query);
        request.explain = Some(true);
        let r = nexus.execute(&request, &Context::default());
        let e = &r["explain"];
        let mut out = String::new();
        match r.get("error") {
            Some(err) => writeln!(out, "refused: {} {}", err["code"], err["message"]),
            None => writeln!(out, "rows: {}", e["rows"]),
        }
        .expect("write");
        let causes = e["why_empty"].as_array().cloned().unwrap_or_default();
        assert!(!causes.is_empty(), "{}: no cause in {r:#}", path.display());
        for c in &causes {
            let at = |v: &Value| v.as_u64().expect("number") as usize;
            let (offset, length) = (at(&c["clause"]["offset"]), at(&c["clause"]["length"]));
            assert_eq!(
                c["text"].as_str(),
                query.get(offset..offset + length),
                "range"
            );
            writeln!(
                out,
                "clause {}:{}: {}\nreason: {}\nmessage: {}",
                c["clause"]["line"],
                c["clause"]["column"],
                c["text"].as_str().expect("text"),
                c["reason"].as_str().expect("reason"),
                c["message"].as_str().expect("message"),
            )
            .expect("write");
            if let Some(fix) = c.get("fix") {
                let start = at(&fix["range"]["offset"]);
                let end = start + at(&fix["range"]["length"]);
                let fixed = format!(
                    "{}{}{}",
                    &query[..start],
                    fix["replacement"].as_str().expect("replacement"),
                    &query[end..]
                );
                writeln!(
                    out,
                    "fix: {} → {}",
                    fix["label"].as_str().expect("label"),
                    fix["replacement"].as_str().expect("replacement")
                )
                .expect("write");
                finds_rows(&nexus, &fixed);
            }
        }
        // The diagram is there too, so the console can mark the clause on it.
        assert!(
            e["pattern"]["nodes"]
                .as_array()
                .is_some_and(|n| !n.is_empty())
        );
        insta::assert_snapshot!(out);
    });
}

/// The diagram of a query: nodes per variable and inline term, an edge per
/// proposition clause, FILTER badges, nested blocks; every step of the plan
/// points at an element of the diagram.
#[test]
fn the_pattern_diagram_matches_the_plan() {
    let (_d, nexus) = fixture();
    let q = r#"FIND(?drug.name) WHERE { ?drug {type: "Drug"} (?drug, "treats", ?s) ?s {type: "Symptom", name: "Fever"} FILTER(?drug.attributes.risk_level < 3) OPTIONAL { (?drug, "has_side_effect", ?e) } }"#;
    let e = explain(&nexus, q);
    let p = &e["pattern"];
    let nodes = p["nodes"].as_array().expect("nodes");
    let labels: Vec<&str> = nodes.iter().filter_map(|n| n["label"].as_str()).collect();
    assert_eq!(labels, ["?drug", "?s", "?e"]);
    assert_eq!(nodes[0]["type"], "Drug");
    assert_eq!(
        (nodes[1]["type"].as_str(), nodes[1]["name"].as_str()),
        (Some("Symptom"), Some("Fever"))
    );
    let edges = p["edges"].as_array().expect("edges");
    assert_eq!(edges.len(), 2);
    assert_eq!(
        (edges[0]["from"].as_u64(), edges[0]["to"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(edges[0]["predicate"], "treats");
    assert_eq!(edges[1]["block"], 1);
    assert_eq!(p["blocks"][1]["kind"], "optional");
    assert_eq!(p["filters"][0]["nodes"], serde_json::json!([0]));
    // Every step's range is a clause, filter or block of the diagram.
    let mut ranges: Vec<Value> = Vec::new();
    for n in nodes {
        ranges.extend(n["clauses"].as_array().cloned().unwrap_or_default());
    }
    for edge in edges {
        ranges.push(edge["clause"].clone());
    }
    for f in p["filters"].as_array().expect("filters") {
        ranges.push(f["clause"].clone());
    }
    for b in p["blocks"].as_array().expect("blocks") {
        ranges.push(b["range"].clone());
    }
    for step in e["plan"].as_array().expect("plan") {
        assert!(
            ranges.contains(&step["clause"]),
            "{step:#} not in the diagram"
        );
    }
}

/// Inline terms, a link about a link, a predicate variable and a UNION in
/// its own scope.
#[test]
fn the_pattern_diagram_draws_inline_terms_links_about_links_and_union_scopes() {
    let (_d, nexus) = fixture();
    let q = r#"FIND(?x) WHERE { ?l (?d, "treats", {type: "Symptom", name: "Fever"}) (?l, ?p, ?x) UNION { ?d {type: "Drug"} } }"#;
    let mut request = ExecuteKip::command(q);
    request.explain = Some(true);
    let r = nexus.execute(&request, &Context::default());
    let p = &r["explain"]["pattern"];
    let nodes = p["nodes"].as_array().expect("nodes");
    let labels: Vec<&str> = nodes.iter().filter_map(|n| n["label"].as_str()).collect();
    // ?d in the UNION branch is another variable than the outer ?d.
    assert_eq!(labels, ["?d", "Symptom \"Fever\"", "?l", "?x", "?d"]);
    assert_eq!(nodes[2]["kind"], "proposition");
    let edges = p["edges"].as_array().expect("edges");
    assert_eq!(
        edges[0]["node"], 2,
        "the link ?l is the node other clauses are about"
    );
    assert_eq!(edges[1]["predicate"], "?p");
    assert_eq!(nodes[4]["block"], 1);
}

/// A path step reports how many nodes it expanded and how deep it got.
#[test]
fn a_path_reports_nodes_visited_and_depth_reached() {
    let (_d, nexus) = fixture();
    let e = explain(
        &nexus,
        r#"FIND(?c.name) WHERE { ({type: "DrugClass", name: "NSAID"}, "is_subclass_of"{1,5}, ?c) }"#,
    );
    let path = e["plan"]
        .as_array()
        .expect("plan")
        .iter()
        .find(|s| s["kind"] == "path")
        .cloned()
        .expect("a path step");
    assert_eq!(path["rows_out"], 1, "NSAID → Analgesic");
    assert_eq!(path["detail"]["depth_reached"], 1);
    assert!(
        path["detail"]["nodes_visited"]
            .as_u64()
            .is_some_and(|n| n >= 2),
        "{path:#}"
    );
}

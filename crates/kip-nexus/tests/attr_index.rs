//! The attribute index answers exactly what the scan answers: random graphs
//! (created, updated and deleted through KML) and random FILTERs, each run
//! as written (the planner may use the index) and as `!(!(…))` (the same
//! condition, which the planner cannot use), page by page; `explain` names
//! the index when it is used.

use kip_nexus::{Context, ExecuteKip, Nexus};
use proptest::prelude::*;
use serde_json::{Value as Json, json};

fn exec(nexus: &Nexus, text: &str) -> Json {
    let r = nexus.execute(&ExecuteKip::command(text), &Context::default());
    assert!(r.get("error").is_none(), "{text}\n{r:#}");
    r
}

const SCHEMA: &str = r#"UPSERT {
  CONCEPT ?d { {type: "Domain", name: "Test"} }
  CONCEPT { {type: "$ConceptType", name: "Item"} SET ATTRIBUTES { description: "items" } SET PROPOSITIONS { ("belongs_to_domain", ?d) } }
  CONCEPT { {type: "$ConceptType", name: "Other"} SET ATTRIBUTES { description: "others" } SET PROPOSITIONS { ("belongs_to_domain", ?d) } }
}"#;

fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        (-3i64..4).prop_map(|i| i.to_string()),
        (-2.0f64..2.0).prop_map(|f| format!("{:.1}", (f * 2.0).round() / 2.0)),
        prop::sample::select(vec![
            "\"\"",
            "\"a\"",
            "\"ab\"",
            "\"b\"",
            "\"阿\"",
            "\"2025-03-01\""
        ])
        .prop_map(str::to_owned),
        any::<bool>().prop_map(|b| b.to_string()),
    ]
}

fn attr_value() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        3 => literal().prop_map(Some),
        1 => Just(None),
        1 => Just(Some("null".to_owned())),
        1 => Just(Some("[1, \"a\"]".to_owned())),
    ]
}

fn item(n: usize, ty: &str, a: &Option<String>, b: &Option<String>) -> String {
    let mut attrs = Vec::new();
    if let Some(v) = a {
        attrs.push(format!("n: {v}"));
    }
    if let Some(v) = b {
        attrs.push(format!("s: {v}"));
    }
    format!(
        "CONCEPT {{ {{type: \"{ty}\", name: \"i{n}\"}} SET ATTRIBUTES {{ {} }} }}",
        attrs.join(", ")
    )
}

fn condition() -> impl Strategy<Value = String> {
    let path = prop::sample::select(vec![
        "?x.attributes.n",
        "?x.attributes.s",
        "?x.metadata.confidence",
        "?x.attributes.missing",
    ]);
    prop_oneof![
        (
            path.clone(),
            prop::sample::select(vec!["==", "<", "<=", ">", ">=", "!="]),
            literal()
        )
            .prop_map(|(p, op, v)| format!("{p} {op} {v}")),
        (
            literal(),
            prop::sample::select(vec!["==", "<", ">="]),
            path.clone()
        )
            .prop_map(|(v, op, p)| format!("{v} {op} {p}")),
        (path.clone(), prop::collection::vec(literal(), 0..3))
            .prop_map(|(p, vs)| format!("IN({p}, [{}])", vs.join(", "))),
        (
            path.clone(),
            prop::sample::select(vec!["", "a", "2025", "阿"])
        )
            .prop_map(|(p, s)| format!("STARTS_WITH({p}, \"{s}\")")),
    ]
}

fn filter() -> impl Strategy<Value = String> {
    prop_oneof![
        condition(),
        (condition(), condition()).prop_map(|(a, b)| format!("{a} && {b}")),
        (condition(), condition()).prop_map(|(a, b)| format!("{a} || {b}")),
    ]
}

/// Every page of a query, following cursors.
fn pages(nexus: &Nexus, query: &str, limit: Option<u64>) -> Vec<Json> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let text = match (&cursor, limit) {
            (_, None) => query.to_owned(),
            (None, Some(l)) => format!("{query} LIMIT {l}"),
            (Some(c), Some(l)) => format!("{query} LIMIT {l} CURSOR \"{c}\""),
        };
        let r = exec(nexus, &text);
        out.push(r["result"].clone());
        match r.get("next_cursor").and_then(Json::as_str) {
            Some(c) if out.len() < 50 => cursor = Some(c.to_owned()),
            _ => break,
        }
    }
    out
}

/// The rows of a two-column result, sorted.
fn rows(result: &Json) -> Vec<(Json, Json)> {
    let empty = Vec::new();
    let a = result[0].as_array().unwrap_or(&empty);
    let b = result[1].as_array().unwrap_or(&empty);
    let mut rows: Vec<(Json, Json)> = a.iter().cloned().zip(b.iter().cloned()).collect();
    rows.sort_by_key(|r| r.0.to_string() + &r.1.to_string());
    rows
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn the_index_answers_what_the_scan_answers(
        items in prop::collection::vec((any::<bool>(), attr_value(), attr_value()), 1..30),
        updates in prop::collection::vec((0usize..30, attr_value(), attr_value()), 0..8),
        deletes in prop::collection::vec(0usize..30, 0..4),
        filters in prop::collection::vec((filter(), prop::option::of(1u64..5)), 12),
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let nexus = Nexus::open(dir.path()).expect("open");
        exec(&nexus, SCHEMA);
        let blocks: Vec<String> = items
            .iter()
            .enumerate()
            .map(|(n, (other, a, b))| item(n, if *other { "Other" } else { "Item" }, a, b))
            .collect();
        exec(&nexus, &format!("UPSERT {{\n{}\n}}", blocks.join("\n")));
        for (n, a, b) in &updates {
            if let Some((other, _, _)) = items.get(*n) {
                let ty = if *other { "Other" } else { "Item" };
                exec(&nexus, &format!("UPSERT {{ {} }}", item(*n, ty, a, b)));
            }
        }
        for n in &deletes {
            exec(&nexus, &format!("DELETE CONCEPT ?x DETACH WHERE {{ ?x {{type: \"Item\", name: \"i{n}\"}} }}"));
        }
        for (f, limit) in &filters {
            let indexed = format!("FIND(?x.name, ?x.attributes.n) WHERE {{ ?x {{type: \"Item\"}} FILTER({f}) }}");
            let scanned = format!("FIND(?x.name, ?x.attributes.n) WHERE {{ ?x {{type: \"Item\"}} FILTER(!(!({f}))) }}");
            prop_assert_eq!(pages(&nexus, &indexed, *limit), pages(&nexus, &scanned, *limit), "{}", f);
            // Joined with another clause, so the general executor runs.
            let joined = format!("FIND(?x.name, ?y.name) WHERE {{ ?x {{type: \"Item\"}} ?y {{type: \"Other\"}} FILTER({f}) }}");
            let joined_scan = format!("FIND(?x.name, ?y.name) WHERE {{ ?x {{type: \"Item\"}} ?y {{type: \"Other\"}} FILTER(!(!({f}))) }}");
            // A join's row order is the plan's (the index changes the
            // estimates, so it may change the order): compare the rows.
            prop_assert_eq!(rows(&exec(&nexus, &joined)["result"]), rows(&exec(&nexus, &joined_scan)["result"]), "{}", f);
        }
        let report = nexus.check_store().expect("check");
        prop_assert!(report.ok, "{:#?}", report);
    }
}

#[test]
fn explain_names_the_index_and_limit_stops_early() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nexus = Nexus::open(dir.path()).expect("open");
    exec(&nexus, SCHEMA);
    let blocks: Vec<String> = (0..200)
        .map(|i| {
            item(
                i,
                "Item",
                &Some((i % 10).to_string()),
                &Some(format!("\"s{i:03}\"")),
            )
        })
        .collect();
    exec(&nexus, &format!("UPSERT {{\n{}\n}}", blocks.join("\n")));
    let mut request = ExecuteKip::command(
        r#"FIND(?x.name) WHERE { ?x {type: "Item"} FILTER(?x.attributes.n >= 3 && ?x.attributes.n < 5) }"#,
    );
    request.explain = Some(true);
    let r = nexus.execute(&request, &Context::default());
    let step = &r["explain"]["plan"][0];
    assert_eq!(
        step["index"],
        json!("attribute index (attributes.n >= 3 && attributes.n < 5)"),
        "{r:#}"
    );
    // The index reads both bounds inclusively (a superset); the FILTER,
    // which stays, keeps the 40 rows.
    assert_eq!(step["rows_out"], json!(60), "{r:#}");
    assert_eq!(r["explain"]["rows"], json!(40), "{r:#}");
    let r = exec(
        &nexus,
        r#"FIND(?x.name) WHERE { ?x {type: "Item"} FILTER(STARTS_WITH(?x.attributes.s, "s01")) } LIMIT 3"#,
    );
    assert_eq!(r["result"], json!(["i10", "i11", "i12"]));
    assert!(r["next_cursor"].is_string());
    let r = exec(
        &nexus,
        r#"FIND(?x.name) WHERE { ?x {type: "Item"} FILTER(?x.metadata._created_at >= "2000") } LIMIT 2"#,
    );
    assert_eq!(r["result"], json!(["i0", "i1"]));
}

/// `==` with more matches than the planner's probe, under LIMIT: the index
/// is read in id order only as far as the page needs, and every page and
/// cursor is the scan's.
#[test]
fn an_equality_with_thousands_of_matches_pages_like_the_scan() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nexus = Nexus::open(dir.path()).expect("open");
    exec(&nexus, SCHEMA);
    for chunk in 0..9 {
        let blocks: Vec<String> = (chunk * 1000..(chunk + 1) * 1000)
            .map(|i| {
                item(
                    i,
                    "Item",
                    &Some((i % 2).to_string()),
                    &Some(format!("\"s{:04}\"", i % 997)),
                )
            })
            .collect();
        exec(&nexus, &format!("UPSERT {{\n{}\n}}", blocks.join("\n")));
    }
    for (filter, scan) in [
        ("?x.attributes.n == 1", "!(!(?x.attributes.n == 1))"),
        (
            "?x.attributes.n == 0 && ?x.attributes.s >= \"s0990\"",
            "!(!(?x.attributes.n == 0 && ?x.attributes.s >= \"s0990\"))",
        ),
    ] {
        let page = |f: &str, cursor: Option<&str>| {
            let mut text =
                format!("FIND(?x.name) WHERE {{ ?x {{type: \"Item\"}} FILTER({f}) }} LIMIT 7");
            if let Some(c) = cursor {
                text.push_str(&format!(" CURSOR \"{c}\""));
            }
            exec(&nexus, &text)
        };
        let (mut a, mut b) = (page(filter, None), page(scan, None));
        for _ in 0..4 {
            assert_eq!(a["result"], b["result"], "{filter}");
            assert_eq!(a["result"].as_array().map(Vec::len), Some(7), "{a:#}");
            let (Some(ca), Some(cb)) = (a["next_cursor"].as_str(), b["next_cursor"].as_str())
            else {
                panic!("no next page: {a:#} {b:#}");
            };
            (a, b) = (page(filter, Some(ca)), page(scan, Some(cb)));
        }
    }
    let mut request = ExecuteKip::command(
        r#"FIND(?x.name) WHERE { ?x {type: "Item"} FILTER(?x.attributes.n == 1) } LIMIT 10"#,
    );
    request.explain = Some(true);
    let r = nexus.execute(&request, &Context::default());
    assert_eq!(
        r["explain"]["plan"][0]["index"],
        json!("attribute index (attributes.n == 1)"),
        "{r:#}"
    );
    assert_eq!(
        r["result"],
        json!([
            "i1", "i3", "i5", "i7", "i9", "i11", "i13", "i15", "i17", "i19"
        ])
    );
}

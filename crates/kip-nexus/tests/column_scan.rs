//! A FILTER scan over a type read as a column (`kql/column.rs`: the
//! attribute index's keys of one key, no record decoded) answers exactly
//! what the scan that decodes every record answers. Random graphs written
//! by every path that writes a concept — UPSERT, a group write (the
//! import's), UPDATE, DELETE ATTRIBUTES, DELETE, MERGE, a revert — with
//! values of every kind (strings long enough to be cut in the index,
//! strings holding NUL, arrays, objects, numbers, booleans, null, missing),
//! then random FILTERs (CONTAINS, STARTS_WITH, comparisons, IN, IS_NULL,
//! `!`, `&&`, `||`), each run as written and with `IS_NOT_NULL(?x.name)`
//! in front (a path the column does not hold: every record is read and
//! decoded, the scan as it was), page by page; `kip check-store` is clean.

use kip_nexus::bulk::{GroupStep, GroupText};
use kip_nexus::{Context, ExecuteKip, Nexus, Origin, RunOptions, TraceFilter};
use proptest::prelude::*;
use serde_json::Value as Json;

fn exec(nexus: &Nexus, text: &str) -> Json {
    nexus.execute(&ExecuteKip::command(text), &Context::new("test"))
}

#[track_caller]
fn ok(nexus: &Nexus, text: &str) -> Json {
    let r = exec(nexus, text);
    assert!(r.get("error").is_none(), "{text}\n{r:#}");
    r
}

const SCHEMA: &str = r#"UPSERT {
  CONCEPT ?d { {type: "Domain", name: "Test"} }
  CONCEPT { {type: "$ConceptType", name: "Item"} SET ATTRIBUTES { description: "items" } SET PROPOSITIONS { ("belongs_to_domain", ?d) } }
}"#;

/// A string cut by the index (its first 240 bytes are kept) with the
/// searched text after the cut.
fn long() -> String {
    format!("\"{}zz ab\"", "x".repeat(300))
}

fn value() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "\"\"", "\"a\"", "\"ab\"", "\"ba\"", "\"b\"", "\"number 12\"", "\"number 123\"",
            "\"阿b\"", "\"a\\u0000b\"", "1", "2.5", "-1", "0", "true", "false",
        ])
        .prop_map(|s| Some(s.to_owned())),
        1 => Just(Some(long())),
        1 => prop::sample::select(vec!["[\"a\", 1]", "[\"ab\"]", "[]", "{k: \"a\"}"])
            .prop_map(|s| Some(s.to_owned())),
        1 => Just(Some("null".to_owned())),
        2 => Just(None),
    ]
}

fn item(n: usize, s: &Option<String>, k: &Option<String>) -> String {
    let attrs: Vec<String> = [("s", s), ("k", k)]
        .iter()
        .filter_map(|(key, v)| v.as_ref().map(|v| format!("{key}: {v}")))
        .collect();
    format!(
        "CONCEPT {{ {{type: \"Item\", name: \"i{n}\"}} SET ATTRIBUTES {{ {} }} }}",
        attrs.join(", ")
    )
}

#[derive(Clone, Debug)]
enum Write {
    Upsert(usize, Option<String>, Option<String>),
    Group(Vec<(usize, Option<String>, Option<String>)>),
    Update(usize),
    DeleteAttribute(usize),
    Delete(usize),
    Merge(usize, usize),
    RevertLast,
}

fn write() -> impl Strategy<Value = Write> {
    let n = 0usize..24;
    prop_oneof![
        4 => (n.clone(), value(), value()).prop_map(|(n, s, k)| Write::Upsert(n, s, k)),
        1 => prop::collection::vec((n.clone(), value(), value()), 1..4).prop_map(Write::Group),
        1 => n.clone().prop_map(Write::Update),
        1 => n.clone().prop_map(Write::DeleteAttribute),
        1 => n.clone().prop_map(Write::Delete),
        1 => (n.clone(), n).prop_map(|(a, b)| Write::Merge(a, b)),
        1 => Just(Write::RevertLast),
    ]
}

fn where_item(n: usize) -> String {
    format!("WHERE {{ ?x {{type: \"Item\", name: \"i{n}\"}} }}")
}

/// The newest traced write's id.
fn newest(nexus: &Nexus) -> Option<String> {
    let filter = TraceFilter {
        kind: Some("TRACE".into()),
        limit: Some(1),
        ..TraceFilter::default()
    };
    let page = nexus.trace_list(&filter).expect("list");
    page.entries.first().map(|e| e.id.clone())
}

/// Applies one write; a write refused (a revert that later writes block,
/// a MERGE of a missing concept) changes nothing, which is fine here.
/// `schema` is the write that defined the type, never reverted.
fn apply(nexus: &Nexus, w: &Write, schema: &str) {
    match w {
        Write::Upsert(n, s, k) => {
            ok(nexus, &format!("UPSERT {{ {} }}", item(*n, s, k)));
        }
        Write::Group(items) => {
            let text = format!(
                "UPSERT {{\n{}\n}}",
                items
                    .iter()
                    .map(|(n, s, k)| item(*n, s, k))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            let mut given = false;
            nexus
                .bulk()
                .group(&mut |_, _| {
                    if std::mem::replace(&mut given, true) {
                        return None;
                    }
                    let commands = kip_lang::parse(&text).expect("parses");
                    let commands =
                        kip_lang::bind(&text, commands, &serde_json::Map::new()).expect("binds");
                    Some(GroupStep::Text(Box::new(GroupText {
                        text: text.clone(),
                        commands,
                        options: RunOptions::new(Origin::new("test")),
                        retire: None,
                    })))
                })
                .expect("group write");
        }
        Write::Update(n) => {
            exec(
                nexus,
                &format!(
                    "UPDATE ?x SET ATTRIBUTES {{ s: \"ab number 1\" }} {}",
                    where_item(*n)
                ),
            );
        }
        Write::DeleteAttribute(n) => {
            exec(
                nexus,
                &format!("DELETE ATTRIBUTES {{\"s\"}} FROM ?x {}", where_item(*n)),
            );
        }
        Write::Delete(n) => {
            exec(
                nexus,
                &format!("DELETE CONCEPT ?x DETACH {}", where_item(*n)),
            );
        }
        Write::Merge(a, b) => {
            exec(
                nexus,
                &format!(
                    "MERGE CONCEPT ?a INTO ?b WHERE {{ ?a {{type: \"Item\", name: \"i{a}\"}} ?b {{type: \"Item\", name: \"i{b}\"}} }}"
                ),
            );
        }
        Write::RevertLast => {
            if let Some(last) = newest(nexus).filter(|id| id != schema) {
                let _ = nexus.revert(&last, "curator", false);
            }
        }
    }
}

fn path() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "?x.attributes.s",
        "?x.attributes.s",
        "?x.attributes.k",
        "?x.attributes.missing",
        "?x.metadata._version",
    ])
}

fn literal() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "\"a\"",
        "\"ab\"",
        "\"b\"",
        "\"number 12\"",
        "\"\"",
        "\"阿\"",
        "\"zz\"",
        "\"\\u0000\"",
        "1",
        "2.5",
        "0",
        "true",
        "null",
    ])
}

fn condition() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (path(), literal()).prop_map(|(p, v)| format!("CONTAINS({p}, {v})")),
        1 => (path(), literal()).prop_map(|(p, v)| format!("STARTS_WITH({p}, {v})")),
        1 => (path(), literal()).prop_map(|(p, v)| format!("ENDS_WITH({p}, {v})")),
        2 => (path(), prop::sample::select(vec!["==", "!=", "<", "<=", ">", ">="]), literal())
            .prop_map(|(p, op, v)| format!("{p} {op} {v}")),
        1 => (literal(), prop::sample::select(vec!["==", "<"]), path())
            .prop_map(|(v, op, p)| format!("{v} {op} {p}")),
        1 => (path(), prop::collection::vec(literal(), 0..3))
            .prop_map(|(p, vs)| format!("IN({p}, [{}])", vs.join(", "))),
        1 => path().prop_map(|p| format!("IS_NULL({p})")),
        1 => path().prop_map(|p| format!("IS_NOT_NULL({p})")),
    ]
}

fn filter() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => condition(),
        1 => condition().prop_map(|c| format!("!({c})")),
        1 => (condition(), condition()).prop_map(|(a, b)| format!("{a} && {b}")),
        1 => (condition(), condition()).prop_map(|(a, b)| format!("{a} || !({b})")),
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
        let r = ok(nexus, &text);
        out.push(r["result"].clone());
        match r.get("next_cursor").and_then(Json::as_str) {
            Some(c) if out.len() < 40 => cursor = Some(c.to_owned()),
            _ => break,
        }
    }
    out
}

/// Items without the keys FILTERs read, so that a capped scan reads its
/// first instances one by one and only then the column.
fn fillers(nexus: &Nexus, from: usize, count: usize) {
    let blocks: Vec<String> = (from..from + count)
        .map(|n| {
            format!(
                "CONCEPT {{ {{type: \"Item\", name: \"f{n}\"}} SET ATTRIBUTES {{ other: {n} }} }}"
            )
        })
        .collect();
    ok(nexus, &format!("UPSERT {{\n{}\n}}", blocks.join("\n")));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_column_answers_what_decoding_every_record_answers(
        fill_first in prop::sample::select(vec![0usize, 0, 300]),
        writes in prop::collection::vec(write(), 1..24),
        fill_after in prop::sample::select(vec![0usize, 300]),
        filters in prop::collection::vec((filter(), prop::option::of(prop::sample::select(vec![1u64, 3, 20]))), 10),
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let nexus = Nexus::open(dir.path()).expect("open");
        ok(&nexus, SCHEMA);
        let schema = newest(&nexus).expect("the schema's entry");
        if fill_first > 0 {
            fillers(&nexus, 0, fill_first);
        }
        for w in &writes {
            apply(&nexus, w, &schema);
        }
        if fill_after > 0 {
            fillers(&nexus, 1000, fill_after);
            // More values after the fillers, so a capped scan finds rows
            // in the column too.
            for w in &writes {
                if let Write::Upsert(n, s, k) = w {
                    apply(&nexus, &Write::Upsert(n + 100, s.clone(), k.clone()), &schema);
                }
            }
        }
        for (f, limit) in &filters {
            let column = format!("FIND(?x.name, ?x.attributes.s) WHERE {{ ?x {{type: \"Item\"}} FILTER({f}) }}");
            let decoded = format!("FIND(?x.name, ?x.attributes.s) WHERE {{ ?x {{type: \"Item\"}} FILTER(IS_NOT_NULL(?x.name) && !(!({f}))) }}");
            prop_assert_eq!(pages(&nexus, &column, *limit), pages(&nexus, &decoded, *limit), "{}", f);
        }
        let report = nexus.check_store().expect("check");
        prop_assert!(report.ok, "{:#?}", report);
    }
}

/// The benchmark's shape: a substring of a description, over instances
/// that all have one; numbers, arrays and long strings beside them.
#[test]
fn contains_over_a_type_finds_substrings_arrays_and_long_strings_in_id_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nexus = Nexus::open(dir.path()).expect("open");
    ok(&nexus, SCHEMA);
    let mut blocks: Vec<String> = (0..400)
        .map(|i| item(i, &Some(format!("\"generated Item number {i}\"")), &None))
        .collect();
    blocks.push(item(400, &Some("[\"number 12\", 3]".into()), &None));
    blocks.push(item(401, &Some("12".into()), &None));
    blocks.push(item(
        402,
        &Some(format!("\"{} number 12\"", "y".repeat(250))),
        &None,
    ));
    blocks.push(item(403, &Some("{a: \"number 12\"}".into()), &None));
    ok(&nexus, &format!("UPSERT {{\n{}\n}}", blocks.join("\n")));
    let r = ok(
        &nexus,
        r#"FIND(?x.name) WHERE { ?x {type: "Item"} FILTER(CONTAINS(?x.attributes.s, "number 12")) }"#,
    );
    let expected: Vec<String> = [
        12, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 400, 402,
    ]
    .iter()
    .map(|i| format!("i{i}"))
    .collect();
    assert_eq!(r["result"], serde_json::json!(expected), "{r:#}");
    // Under LIMIT the page is the first rows in id order.
    let r = ok(
        &nexus,
        r#"FIND(?x.name) WHERE { ?x {type: "Item"} FILTER(CONTAINS(?x.attributes.s, "number 12")) } LIMIT 3"#,
    );
    assert_eq!(
        r["result"],
        serde_json::json!(["i12", "i120", "i121"]),
        "{r:#}"
    );
    // A case differs: CONTAINS is case-sensitive.
    let r = ok(
        &nexus,
        r#"FIND(COUNT(?x)) WHERE { ?x {type: "Item"} FILTER(CONTAINS(?x.attributes.s, "Number 12")) }"#,
    );
    assert_eq!(r["result"], serde_json::json!(0), "{r:#}");
}

//! Good and bad declarations, each problem named by its path.

use kip_lang::{ErrorCode, KipError};
use serde_json::{Map, Value as Json, json};

use super::check::declared;
use super::model::{LOGIC_PROPERTIES, LogicKind, LogicProperty};

fn check(decl: Json, schema: Json) -> std::result::Result<Vec<LogicProperty>, KipError> {
    let mut attrs = Map::new();
    attrs.insert(LOGIC_PROPERTIES.into(), decl);
    attrs.insert("instance_schema".into(), schema);
    declared(&attrs)
}

fn system() -> Vec<Json> {
    vec![
        json!({"name": "instant", "type": "BOOLEAN", "value_from": "input", "if_system_generate": true}),
        json!({"name": "start", "type": "INTEGER", "value_from": "input", "if_system_generate": true}),
        json!({"name": "end", "type": "INTEGER", "value_from": "input", "if_system_generate": true}),
        json!({"name": "step", "type": "STRING", "value_from": "input", "if_system_generate": true, "required": false}),
    ]
}

fn metric(query: &str, extra: Vec<Json>) -> Json {
    let mut params = system();
    params.extend(extra);
    json!({"m": {"type": "metric", "parameters": params, "data_source": {"kind": "kip", "query": query}}})
}

const Q: &str = r#"FIND(COUNT(?l)) WHERE { ?d {id: :self} ?l (?d, "treats", ?s) FILTER(?l.metadata.added_at >= :start_iso && ?l.metadata.added_at < :end_iso) }"#;

fn path(e: &KipError) -> &str {
    e.data["path"].as_str().unwrap_or_default()
}

#[test]
fn a_good_metric_and_operator_read_into_the_model() {
    let mut decl = metric(Q, vec![]);
    decl["op"] = json!({"type": "operator", "description": "d", "parameters": [
        {"name": "code", "type": "STRING", "value_from": "property", "property": "atc"},
        {"name": "k", "type": "INTEGER", "value_from": "const", "value": 3},
        {"name": "region", "type": "STRING", "value_from": "input"}
    ], "data_source": {"kind": "http", "url": "http://127.0.0.1:1/x"}});
    let props = check(decl, json!({"atc": {"type": "string"}})).expect("valid");
    assert_eq!(props.len(), 2);
    assert_eq!(props[1].kind, LogicKind::Operator);
    assert_eq!(props[1].inputs().count(), 1);
}

#[test]
fn each_bad_declaration_names_its_path() {
    let cases = [
        (
            metric(Q, vec![json!({"name": "x", "type": "DATE"})]),
            "logic_properties.m.parameters[4].type",
        ),
        (
            metric(
                Q,
                vec![
                    json!({"name": "x", "type": "STRING", "value_from": "property", "property": "nope"}),
                ],
            ),
            "logic_properties.m.parameters[4].property",
        ),
        (
            json!({"m": {"type": "metric", "parameters": [], "data_source": {"kind": "kip", "query": Q}}}),
            "logic_properties.m.parameters",
        ),
        (
            metric("FIND(?d.name) WHERE { ?d {id: :self} }", vec![]),
            "logic_properties.m.data_source.query",
        ),
        (
            metric("FIND(COUNT(?d) WHERE {", vec![]),
            "logic_properties.m.data_source.query",
        ),
        (
            metric("FIND(COUNT(?d)) WHERE { ?d {id: :other} }", vec![]),
            "logic_properties.m.data_source.query",
        ),
        (
            json!({"o": {"type": "operator", "parameters": [], "data_source": {"kind": "http"}}}),
            "logic_properties.o.data_source.url",
        ),
        (
            json!({"o": {"type": "operator", "parameters": [], "data_source": {"kind": "http", "url": "ftp://x/y"}}}),
            "logic_properties.o.data_source.url",
        ),
        (
            json!({"o": {"type": "gauge", "data_source": {"kind": "http", "url": "http://x"}}}),
            "logic_properties.o.type",
        ),
    ];
    for (decl, expected) in cases {
        let e =
            check(decl.clone(), json!({"atc": {"type": "string"}})).expect_err(&decl.to_string());
        assert_eq!(e.code, ErrorCode::ConstraintViolation, "{decl}");
        assert_eq!(path(&e), expected, "{decl}: {e}");
    }
}

#[test]
fn several_problems_are_all_listed() {
    let decl = json!({"o": {"type": "operator", "parameters": [{"name": "a", "type": "X"}], "data_source": {"kind": "http", "url": "file:///etc"}}});
    let e = check(decl, json!({})).expect_err("two problems");
    assert_eq!(e.data["errors"].as_array().map(Vec::len), Some(2));
}

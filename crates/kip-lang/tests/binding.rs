//! Parameter binding (BRIEF §3 "Parameters"): `:name` placeholders are
//! replaced on the tree, never in the text; a missing parameter is a
//! `KIP_3001` naming it; a parameter of the wrong JSON type where the
//! grammar needs a string or a count is a `KIP_2004`.

use kip_lang::{ErrorCode, Errors, KipError, ast::Command, bind, format_commands, parse};
use serde_json::{Map, Value, json};

fn params(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("parameters must be an object, not {other}"),
    }
}

fn parsed(source: &str) -> Vec<Command> {
    parse(source).unwrap_or_else(|e| panic!("{source}\n{e:#?}"))
}

fn bind_ok(source: &str, values: Value) -> Vec<Command> {
    bind(source, parsed(source), &params(values)).unwrap_or_else(|e| panic!("{source}\n{e:#?}"))
}

fn bind_err(source: &str, values: Value) -> Vec<KipError> {
    match bind(source, parsed(source), &params(values)) {
        Ok(commands) => panic!("binding {source} must fail, got:\n{commands:#?}"),
        Err(Errors(errors)) => errors,
    }
}

/// Binds `template` and checks that the result is exactly the tree of
/// `expected`, a text with the values written in place.
#[track_caller]
fn assert_binds_to(template: &str, values: Value, expected: &str) {
    let bound = bind_ok(template, values);
    assert!(
        kip_lang::placeholders(&bound).is_empty(),
        "placeholders left after binding:\n{}",
        format_commands(&bound)
    );
    let want = parsed(expected);
    assert_eq!(
        bound,
        want,
        "bound:\n{}\nexpected:\n{}",
        format_commands(&bound),
        format_commands(&want)
    );
}

#[test]
fn placeholders_are_bound_in_every_query_position() {
    assert_binds_to(
        r#"FIND(?d.name, ?l)
WHERE {
  ?d {type: :type, name: :name}
  ?e {id: :id}
  ?f {type: :other_type}
  ?g {name: :g_name}
  ?l (id: :link_id)
  (?d, :predicate | "treats" | :alt{1,2}, ?s)
  ({type: :t2, name: :n2}, "related_to", (id: :inner_link))
  FILTER(?d.attributes.risk < :max && IN(?d.attributes.form, :forms) && ?d.name != :object_param)
  FILTER(IN(?d.attributes.tag, [:tag_a, "fixed", {k: :nested}]))
  NOT { ?d {name: :not_name} }
  OPTIONAL { ?h {type: :opt_type} }
  UNION { ?u {type: :union_type} }
}
LIMIT :limit
CURSOR :cursor"#,
        json!({
            "type": "Drug", "name": "Aspirin", "id": "C:1", "other_type": "Symptom",
            "g_name": "Fever", "link_id": "P:1", "predicate": "treats", "alt": "cures",
            "t2": "Drug", "n2": "Ibuprofen", "inner_link": "P:2", "max": 3.5,
            "forms": ["tablet", "syrup"], "object_param": {"not": "a string"},
            "tag_a": null, "nested": [1, true], "not_name": "NSAID",
            "opt_type": "Event", "union_type": "Product", "limit": 10, "cursor": "abc"
        }),
        r#"FIND(?d.name, ?l)
WHERE {
  ?d {type: "Drug", name: "Aspirin"}
  ?e {id: "C:1"}
  ?f {type: "Symptom"}
  ?g {name: "Fever"}
  ?l (id: "P:1")
  (?d, "treats" | "treats" | "cures"{1,2}, ?s)
  ({type: "Drug", name: "Ibuprofen"}, "related_to", (id: "P:2"))
  FILTER(?d.attributes.risk < 3.5 && IN(?d.attributes.form, ["tablet", "syrup"]) && ?d.name != {not: "a string"})
  FILTER(IN(?d.attributes.tag, [null, "fixed", {k: [1, true]}]))
  NOT { ?d {name: "NSAID"} }
  OPTIONAL { ?h {type: "Event"} }
  UNION { ?u {type: "Product"} }
}
LIMIT 10
CURSOR "abc""#,
    );
}

#[test]
fn placeholders_are_bound_in_every_upsert_position() {
    assert_binds_to(
        r#"UPSERT {
  CONCEPT ?a {
    {type: :type, name: :name}
    SET ATTRIBUTES {plain: :attr, list: [:item, 2], obj: {deep: :deep}}
    SET PROPOSITIONS {
      (:pred, {type: :target_type, name: :target_name}) WITH METADATA {by: :who}
      ("cites", {id: :cited})
      ("supports", (id: :supported))
    }
  } WITH METADATA {source: :source}
  PROPOSITION {
    (?a, :prop_pred, {id: :object_id})
    SET ATTRIBUTES {weight: :weight}
  } WITH METADATA {confidence: :confidence}
  PROPOSITION { (id: :link) }
}
WITH METADATA {author: :author}"#,
        json!({
            "type": "Drug", "name": "Aspirin", "attr": "x", "item": {"a": [1]}, "deep": false,
            "pred": "treats", "target_type": "Symptom", "target_name": "Headache", "who": "me",
            "cited": "C:9", "supported": "P:9", "source": "test", "prop_pred": "related_to",
            "object_id": "C:10", "weight": 0.5, "confidence": 1, "link": "P:11", "author": "$self"
        }),
        r#"UPSERT {
  CONCEPT ?a {
    {type: "Drug", name: "Aspirin"}
    SET ATTRIBUTES {plain: "x", list: [{a: [1]}, 2], obj: {deep: false}}
    SET PROPOSITIONS {
      ("treats", {type: "Symptom", name: "Headache"}) WITH METADATA {by: "me"}
      ("cites", {id: "C:9"})
      ("supports", (id: "P:9"))
    }
  } WITH METADATA {source: "test"}
  PROPOSITION {
    (?a, "related_to", {id: "C:10"})
    SET ATTRIBUTES {weight: 0.5}
  } WITH METADATA {confidence: 1}
  PROPOSITION { (id: "P:11") }
}
WITH METADATA {author: "$self"}"#,
    );
}

#[test]
fn placeholders_are_bound_in_delete_describe_and_search() {
    assert_binds_to(
        r#"DELETE ATTRIBUTES {:key, "fixed"} FROM ?d WHERE { ?d {type: :type} }
DELETE METADATA {:meta_key} FROM ?d WHERE { ?d {id: :id} }
DELETE PROPOSITIONS ?l WHERE { ?l (?s, :pred, ?o) }
DELETE CONCEPT ?d DETACH WHERE { ?d {type: :type, name: :name} }
DESCRIBE CONCEPT TYPE :type LIMIT :limit CURSOR :cursor
DESCRIBE PROPOSITION TYPE :pred
DESCRIBE CONCEPT TYPES LIMIT :limit
SEARCH CONCEPT :term WITH TYPE :type LIMIT :limit
SEARCH PROPOSITION :term"#,
        json!({
            "key": "risk", "type": "Drug", "meta_key": "source", "id": "C:1",
            "pred": "treats", "name": "Aspirin", "limit": 5, "cursor": "c2", "term": "阿司匹林"
        }),
        r#"DELETE ATTRIBUTES {"risk", "fixed"} FROM ?d WHERE { ?d {type: "Drug"} }
DELETE METADATA {"source"} FROM ?d WHERE { ?d {id: "C:1"} }
DELETE PROPOSITIONS ?l WHERE { ?l (?s, "treats", ?o) }
DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug", name: "Aspirin"} }
DESCRIBE CONCEPT TYPE "Drug" LIMIT 5 CURSOR "c2"
DESCRIBE PROPOSITION TYPE "treats"
DESCRIBE CONCEPT TYPES LIMIT 5
SEARCH CONCEPT "阿司匹林" WITH TYPE "Drug" LIMIT 5
SEARCH PROPOSITION "阿司匹林""#,
    );
}

#[test]
fn a_bound_limit_is_printed_as_a_number() {
    let source = r#"FIND(?d.name) WHERE { ?d {type: "Drug"} } LIMIT :n"#;
    let bound = bind_ok(source, json!({"n": 5}));
    assert_eq!(
        bound[0].to_string(),
        "FIND(?d.name)\nWHERE {\n  ?d {type: \"Drug\"}\n}\nLIMIT 5"
    );
}

#[test]
fn a_string_parameter_is_a_value_never_text() {
    // A value that looks like KIP stays one string: binding does not splice text.
    let source = r#"FIND(?d) WHERE { ?d {type: "Drug"} FILTER(?d.name == :n) }"#;
    let evil = "\") || true || (\"";
    let bound = bind_ok(source, json!({"n": evil}));
    let expected = format!(
        "FIND(?d) WHERE {{ ?d {{type: \"Drug\"}} FILTER(?d.name == {}) }}",
        serde_json::to_string(evil).expect("a string serialises")
    );
    assert_eq!(bound, parsed(&expected));
}

#[test]
fn a_placeholder_inside_a_string_or_a_comment_is_not_a_placeholder() {
    let source = r#"// :in_comment
FIND(?d) // :also_in_comment
WHERE {
  ?d {type: "Drug", name: ":in_string"} // :trailing
  FILTER(?d.attributes.note == "x :in_filter_string y")
}"#;
    let commands = parsed(source);
    assert!(kip_lang::placeholders(&commands).is_empty());
    // Nothing to bind, nothing missing, and the strings are untouched.
    let bound = bind(source, commands.clone(), &Map::new()).expect("nothing to bind");
    assert_eq!(bound, commands);
    assert!(format_commands(&bound).contains(r#"name: ":in_string""#));
}

#[test]
fn a_longer_placeholder_name_does_not_match_a_prefix() {
    let source = r#"FIND(?d) WHERE { ?d {type: "Drug", name: :name2} }"#;
    let errors = bind_err(source, json!({"name": "Aspirin"}));
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].code, ErrorCode::ReferenceError);
    assert_eq!(errors[0].data["parameter"], json!("name2"));
    // The reverse: `:name` is not satisfied by `name2`.
    let source = r#"FIND(?d) WHERE { ?d {type: "Drug", name: :name} }"#;
    let errors = bind_err(source, json!({"name2": "Aspirin"}));
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].data["parameter"], json!("name"));
}

#[test]
fn a_missing_parameter_is_kip_3001_naming_it_at_its_position() {
    let source = "FIND(?d.name)\nWHERE {\n  ?d {name: \"药\", type: :drug_type}\n}";
    let errors = bind_err(source, json!({"drug_typ": "x"}));
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let error = &errors[0];
    assert_eq!(error.code, ErrorCode::ReferenceError);
    assert!(error.message.contains(":drug_type"), "{}", error.message);
    assert_eq!(error.data["parameter"], json!("drug_type"));
    // Line 3, after `  ?d {name: "药", type: ` (23 characters, 25 bytes).
    assert_eq!(error.data["line"], json!(3));
    assert_eq!(error.data["column"], json!(24));
    assert_eq!(error.data["offset"], json!(14 + 8 + 25));
    assert_eq!(error.data["length"], json!(":drug_type".len()));
    assert_eq!(source.find(":drug_type"), Some(47));
    // The near miss is suggested (with or without its `:`).
    let suggestion = error.data["suggestions"][0].as_str().unwrap_or_default();
    assert_eq!(suggestion.trim_start_matches(':'), "drug_typ", "{error:#?}");
}

#[test]
fn every_missing_parameter_is_reported_in_source_order() {
    let source = r#"FIND(?d.name)
WHERE {
  ?d {type: :type, name: :name}
  FILTER(?d.attributes.risk < :max)
}
LIMIT :limit
CURSOR :cursor"#;
    let errors = bind_err(source, json!({"name": "Aspirin"}));
    let missing: Vec<&Value> = errors.iter().map(|e| &e.data["parameter"]).collect();
    assert_eq!(
        missing,
        [
            &json!("type"),
            &json!("max"),
            &json!("limit"),
            &json!("cursor")
        ]
    );
    assert!(errors.iter().all(|e| e.code == ErrorCode::ReferenceError));
    let offsets: Vec<usize> = errors.iter().filter_map(KipError::offset).collect();
    let expected: Vec<usize> = [":type", ":max", ":limit", ":cursor"]
        .iter()
        .map(|p| source.find(p).expect("placeholder in text"))
        .collect();
    assert_eq!(offsets, expected);
}

#[test]
fn a_placeholder_used_twice_and_missing_is_reported_at_each_use() {
    let source = r#"FIND(?d) WHERE { ?d {type: :t} ?e {type: :t} }"#;
    let errors = bind_err(source, json!({}));
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(errors[0].offset(), Some(27));
    assert_eq!(errors[1].offset(), Some(41));
}

#[track_caller]
fn assert_wrong_type(source: &str, values: Value, parameter: &str) {
    let errors = bind_err(source, values);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0].code, ErrorCode::InvalidValueType, "{errors:#?}");
    assert_eq!(errors[0].data["parameter"], json!(parameter));
    let placeholder = format!(":{parameter}");
    assert_eq!(errors[0].offset(), source.find(&placeholder));
}

#[test]
fn a_limit_must_be_a_non_negative_integer() {
    let source = r#"FIND(?d) WHERE { ?d {type: "Drug"} } LIMIT :limit"#;
    for wrong in [
        json!("5"),
        json!(-1),
        json!(2.5),
        json!(true),
        json!(null),
        json!([5]),
        json!({"n": 5}),
    ] {
        assert_wrong_type(source, json!({ "limit": wrong }), "limit");
    }
    for source in [
        r#"DESCRIBE CONCEPT TYPES LIMIT :limit"#,
        r#"SEARCH CONCEPT "x" LIMIT :limit"#,
    ] {
        assert_wrong_type(source, json!({"limit": "10"}), "limit");
    }
    // The largest count binds.
    let bound = bind_ok(source, json!({"limit": u64::MAX}));
    let Command::Find(query) = &bound[0] else {
        panic!("a FIND")
    };
    assert_eq!(
        query.limit.as_ref().and_then(|l| l.lit()).copied(),
        Some(u64::MAX)
    );
}

#[test]
fn a_type_name_or_other_text_position_must_be_a_string() {
    let cases = [
        (r#"FIND(?d) WHERE { ?d {type: :p} }"#, json!(5)),
        (
            r#"FIND(?d) WHERE { ?d {type: "Drug", name: :p} }"#,
            json!(null),
        ),
        (r#"FIND(?d) WHERE { ?d {id: :p} }"#, json!(["C:1"])),
        (r#"FIND(?l) WHERE { ?l (id: :p) }"#, json!({"id": "P:1"})),
        (r#"FIND(?s) WHERE { (?s, :p, ?o) }"#, json!(true)),
        (
            r#"FIND(?d) WHERE { ?d {type: "Drug"} } CURSOR :p"#,
            json!(12),
        ),
        (r#"DESCRIBE CONCEPT TYPE :p"#, json!(1)),
        (r#"SEARCH CONCEPT :p"#, json!(["aspirin"])),
        (r#"SEARCH CONCEPT "x" WITH TYPE :p"#, json!(false)),
        (
            r#"UPSERT { CONCEPT { {type: :p, name: "A"} } }"#,
            json!(1.5),
        ),
        (
            r#"UPSERT { CONCEPT { {type: "A", name: "A"} SET PROPOSITIONS { (:p, {id: "C:1"}) } } }"#,
            json!(null),
        ),
        (
            r#"DELETE ATTRIBUTES {:p} FROM ?d WHERE { ?d {type: "Drug"} }"#,
            json!(3),
        ),
    ];
    for (source, value) in cases {
        assert_wrong_type(source, json!({ "p": value }), "p");
    }
}

#[test]
fn a_value_position_accepts_any_json() {
    let source = r#"FIND(?d) WHERE { ?d {type: "Drug"} FILTER(?d.attributes.k == :v) }"#;
    for value in [
        json!(null),
        json!(true),
        json!(-1.5),
        json!("s"),
        json!([1, [2]]),
        json!({"a": {"b": null}}),
    ] {
        let bound = bind_ok(source, json!({ "v": value.clone() }));
        assert!(kip_lang::placeholders(&bound).is_empty(), "{value}");
    }
}

#[test]
fn wrong_types_and_missing_parameters_are_all_reported_together() {
    let source = r#"FIND(?d) WHERE { ?d {type: :type, name: :name} } LIMIT :limit CURSOR :cursor"#;
    let errors = bind_err(source, json!({"type": 1, "limit": "ten"}));
    let codes: Vec<(ErrorCode, &Value)> = errors
        .iter()
        .map(|e| (e.code, &e.data["parameter"]))
        .collect();
    assert_eq!(
        codes,
        [
            (ErrorCode::InvalidValueType, &json!("type")),
            (ErrorCode::ReferenceError, &json!("name")),
            (ErrorCode::InvalidValueType, &json!("limit")),
            (ErrorCode::ReferenceError, &json!("cursor")),
        ]
    );
}

#[test]
fn placeholders_lists_names_in_order_without_repeats() {
    let source = r#"FIND(?d.name)
WHERE {
  ?d {type: :type, name: :name}
  (?d, :pred, {type: :type})
  FILTER(?d.attributes.x == [:a, {k: :b}] || ?d.name == :name)
}
LIMIT :limit
CURSOR :cursor
UPSERT { CONCEPT { {type: :type, name: :c} SET ATTRIBUTES {z: :z} } } WITH METADATA {m: :m}
DESCRIBE CONCEPT TYPE :d
SEARCH PROPOSITION :e WITH TYPE :f LIMIT :g"#;
    let names = kip_lang::placeholders(&parsed(source));
    assert_eq!(
        names,
        [
            "type", "name", "pred", "a", "b", "limit", "cursor", "c", "z", "m", "d", "e", "f", "g"
        ]
    );
    assert!(kip_lang::placeholders(&parsed("DESCRIBE PRIMER")).is_empty());
}

/// An editor lists each command's placeholders and points at them: every
/// occurrence, in source order, with the span of its `:name`; a `:name`
/// inside a string or a comment is none.
#[test]
fn placeholders_of_gives_each_occurrence_of_one_command_with_its_span() {
    let source = r#"FIND(?d.name) WHERE { ?d {type: :type, name: "not :this"} // nor :that
  FILTER(?d.name == :name || ?d.name == :type) } LIMIT :limit UPSERT { CONCEPT ?x { {type: "Drug", name: :n} } }"#;
    let commands = parsed(source);
    assert_eq!(commands.len(), 2);
    let seen = |c: &Command| -> Vec<(String, String)> {
        kip_lang::placeholders_of(c)
            .into_iter()
            .map(|p| (p.name, source[p.span.start..p.span.end].to_owned()))
            .collect()
    };
    let pair = |n: &str| (n.to_owned(), format!(":{n}"));
    assert_eq!(
        seen(&commands[0]),
        [pair("type"), pair("name"), pair("type"), pair("limit")]
    );
    assert_eq!(seen(&commands[1]), [pair("n")]);
    assert!(kip_lang::placeholders_of(&parsed("DESCRIBE PRIMER")[0]).is_empty());
}

#[test]
fn binding_leaves_a_text_without_placeholders_unchanged() {
    let source = r#"FIND(?d) WHERE { ?d {type: "Drug"} } LIMIT 3"#;
    let commands = parsed(source);
    let bound = bind(source, commands.clone(), &params(json!({"unused": 1})))
        .expect("extra parameters are ignored");
    assert_eq!(bound, commands);
}

//! Positions, limits and round trips of the YAML reader and writer.

use serde_json::{Value as Json, json};

use super::write::{flow, key, string};
use super::{Entry, Items, Kind, MAX_DEPTH, Node, parse, parse_items};

fn value(text: &str) -> Json {
    parse(text).expect("parses").expect("a document").to_json()
}

#[test]
fn resolves_scalars_by_the_core_schema() {
    assert_eq!(
        value("a: yes\nb: 1.5\nc: ~\nd: '12'\ne: true\nf: 0x1F\ng: 18446744073709551615\nh:"),
        json!({"a": "yes", "b": 1.5, "c": null, "d": "12", "e": true, "f": 31, "g": 18446744073709551615u64, "h": null})
    );
}

#[test]
fn records_byte_positions_of_keys_and_values() {
    let text = "- type: Drug\n  name: 阿司匹林\n  risk: 2\n";
    let root = parse(text).expect("parses").expect("doc");
    let Kind::Seq(items) = &root.kind else {
        panic!("a list")
    };
    let risk = items[0].entry("risk").expect("risk");
    assert_eq!(&text[risk.key_start..risk.key_end], "risk");
    assert_eq!(&text[risk.value.start..risk.value.end], "2");
    let name = items[0].get("name").expect("name");
    assert_eq!(&text[name.start..name.end], "阿司匹林");
    assert_eq!(items[0].start, text.find("type").expect("type"));
}

#[test]
fn refuses_duplicate_keys_several_documents_and_bad_syntax() {
    let dup = parse("a: 1\nb: 2\na: 3\n").expect_err("duplicate");
    assert_eq!(dup.offset, 10);
    let two = parse("a: 1\n---\nb: 2\n").expect_err("two documents");
    assert!(two.message.contains("one YAML document"), "{two:?}");
    let bad = parse("a: [1, 2\nb: 3\n").expect_err("unclosed");
    assert!(bad.message.starts_with("invalid YAML"), "{bad:?}");
    assert!(parse("x: .inf").is_err());
    assert_eq!(parse("# only a comment\n").expect("parses"), None);
}

/// Every YAML text the tests and the fuzzer keep: the corpus of the
/// `yaml_import` fuzz target, the examples and the broken bundles.
fn corpus() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [
        root.join("../../fuzz/corpus/yaml_import"),
        root.join("../../capsules/examples"),
        root.join("tests/data/err"),
    ] {
        for entry in std::fs::read_dir(&dir).expect("corpus folder") {
            let path = entry.expect("entry").path();
            let is_kip = path.extension().is_some_and(|e| e == "kip");
            if let (false, Ok(bytes)) = (is_kip, std::fs::read(&path)) {
                out.push(String::from_utf8_lossy(&bytes).into_owned());
            }
        }
    }
    out
}

#[test]
fn handing_items_out_gives_what_the_whole_tree_holds() {
    let corpus = corpus();
    assert!(corpus.len() > 100, "{}", corpus.len());
    for text in &corpus {
        let mut items = Vec::new();
        let mut heads = Vec::new();
        let streamed = parse_items(text, &mut |n, head| {
            items.push(n);
            heads.push(head.to_vec());
            true
        });
        match (parse(text), streamed) {
            (Ok(Some(root)), Ok(Items::Done)) => {
                let (list, head) = streamable(&root).expect("a streamable document");
                assert_eq!(items, list, "{text:?}");
                assert!(heads.iter().all(|h| h == head), "{text:?}");
            }
            (Err(whole), Err(handed)) => assert_eq!(whole, handed, "{text:?}"),
            // Not a bundle's list: the rest, errors included, is left
            // to `parse`.
            (Ok(root), Ok(Items::NotAList)) => {
                assert!(root.as_ref().and_then(streamable).is_none(), "{text:?}");
            }
            (Err(_), Ok(Items::NotAList)) => {}
            (whole, handed) => panic!("{text:?}: {whole:?} but {handed:?}"),
        }
    }
}

/// The items a document hands out, and the mapping entries before
/// them: a list's, or those of a mapping of `metadata` then `items`.
fn streamable(root: &Node) -> Option<(Vec<Node>, &[Entry])> {
    match &root.kind {
        Kind::Seq(list) => Some((list.clone(), &[])),
        Kind::Map(entries) => {
            let at = entries.iter().position(|e| e.key == "items")?;
            let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
            let Kind::Seq(list) = &entries[at].value.kind else {
                return None;
            };
            matches!(keys.as_slice(), ["items"] | ["metadata", "items"])
                .then(|| (list.clone(), &entries[..at]))
        }
        _ => None,
    }
}

#[test]
fn a_bundle_mapping_hands_out_its_items_after_its_metadata() {
    let text = "metadata: {source: a}\nitems:\n  - x\n  - y\n";
    let mut seen = Vec::new();
    let ended = parse_items(text, &mut |n, head| {
        seen.push((
            n.to_json(),
            head.iter().map(|e| e.key.clone()).collect::<Vec<_>>(),
        ));
        true
    });
    assert_eq!(ended, Ok(Items::Done));
    let meta = vec!["metadata".to_owned()];
    assert_eq!(seen, [(json!("x"), meta.clone()), (json!("y"), meta)]);
    // A key after the items, or another key: left to `parse`.
    for text in [
        "items: [x]\nmetadata: {}\n",
        "items: [x]\nextra: 1\n",
        "type: Drug\nname: A\n",
        "items: {a: 1}\n",
        "metadata: {}\n",
    ] {
        assert_eq!(
            parse_items(text, &mut |_, _| true),
            Ok(Items::NotAList),
            "{text}"
        );
    }
}

#[test]
fn a_sink_that_stops_gets_no_more_items() {
    let text = "- a\n- b\n- c\n- [unclosed\n";
    let mut seen = Vec::new();
    let ended = parse_items(text, &mut |n, _| {
        seen.push(n.to_json());
        seen.len() < 2
    });
    assert_eq!(ended, Ok(Items::Stopped));
    assert_eq!(seen, [json!("a"), json!("b")]);
    assert_eq!(parse_items("{a: 1}", &mut |_, _| true), Ok(Items::NotAList));
    assert_eq!(parse_items("", &mut |_, _| true), Ok(Items::NotAList));
    assert_eq!(parse_items("[]", &mut |_, _| true), Ok(Items::Done));
}

#[test]
fn bounds_alias_expansion() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let p = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let e = parse(&text).expect_err("a billion laughs");
    assert!(e.message.contains("too many"), "{e:?}");
    assert_eq!(
        value("base: &m {source: x}\nitem: *m\n"),
        json!({"base": {"source": "x"}, "item": {"source": "x"}})
    );
}

#[test]
fn bounds_nesting() {
    let text = "[".repeat(MAX_DEPTH + 5);
    assert!(parse(&text).is_err());
}

#[test]
fn written_strings_read_back_unchanged() {
    for s in [
        "Aspirin",
        "Brain Fog",
        "阿司匹林",
        "yes",
        "No",
        "1.0",
        "0x10",
        "1_000",
        "12:30",
        "a: b",
        "a #b",
        "- x",
        "#x",
        "",
        " padded ",
        "trailing:",
        "line\nbreak",
        "tab\there",
        "quote \" and \\ backslash",
        "nel\u{85}x",
        "ls\u{2028}x",
        "bom\u{feff}",
        "null",
        "~",
        "@at",
        "`tick",
        "%pct",
        "C9H8O4",
        "500mg",
        "😀 emoji",
        "---",
        "...",
        "e1",
        ".5",
        "-",
        "?",
    ] {
        let doc = format!("k: {}\nf: {}\n", string(s), flow(&json!([s, {"x": s}])));
        assert_eq!(
            value(&doc),
            json!({"k": s, "f": [s, {"x": s}]}),
            "string {s:?} written as {doc:?}"
        );
        let keyed = format!("{}: 1\n", key(s));
        if !s.is_empty() {
            assert_eq!(value(&keyed), json!({ s: 1 }), "key {s:?}");
        }
    }
}

#[test]
fn written_numbers_read_back_unchanged() {
    for n in [
        json!(0),
        json!(-7),
        json!(1.5),
        json!(-0.25),
        json!(1e300),
        json!(1.0),
        json!(i64::MAX),
        json!(u64::MAX),
    ] {
        let doc = format!("k: {}\n", flow(&n));
        assert_eq!(value(&doc), json!({ "k": n }), "{doc}");
    }
}

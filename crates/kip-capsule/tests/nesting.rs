//! The nesting limit (`kip_lang::MAX_DEPTH`) in imports: a `.kip` capsule
//! or a YAML bundle nested 100,000 deep is refused with a positioned
//! `KIP_1001` "nested deeper than 256 levels" and writes nothing; nested to
//! the limit, it imports. Every import runs on a thread with a 2 MiB stack,
//! so a pass that recursed past the limit would overflow and abort this
//! test binary.

use crate::common;

use std::sync::Arc;

use common::*;
use kip_capsule::{ImportReport, Status};
use kip_lang::{ErrorCode, MAX_DEPTH};
use kip_nexus::Nexus;

/// Imports `text` as `name` on a thread with a 2 MiB stack.
fn import(nexus: &Arc<Nexus>, name: &'static str, text: String) -> ImportReport {
    let nexus = nexus.clone();
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || kip_capsule::import_text(&nexus, name, &text, &origin()))
        .expect("spawn")
        .join()
        .expect("the import did not panic")
}

fn medical_arc() -> (tempfile::TempDir, Arc<Nexus>) {
    let (dir, nexus) = medical();
    (dir, Arc::new(nexus))
}

/// Line and column (1-based; the texts are ASCII) of `offset`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    (line, offset - before.rfind('\n').map_or(0, |i| i + 1) + 1)
}

#[track_caller]
fn assert_too_deep(r: &ImportReport, text: &str, offset: usize, what: &str) {
    assert_refused(r, text, offset, what, "nested deeper than 256 levels");
}

#[track_caller]
fn assert_refused(r: &ImportReport, text: &str, offset: usize, what: &str, phrase: &str) {
    assert_eq!(r.status, Status::Failed, "{what}");
    assert_eq!(r.errors.len(), 1, "{what}: {:#?}", r.errors);
    let e = &r.errors[0];
    assert_eq!(e.code, ErrorCode::InvalidSyntax, "{what}: {e:?}");
    assert!(e.message.contains(phrase), "{what}: {}", e.message);
    let (line, column) = position(text, offset);
    assert_eq!(
        (e.line, e.column),
        (Some(line), Some(column)),
        "{what}: {e:?}"
    );
}

// ------------------------------------------------------------ .kip capsules

/// `(name, head, unit, inner, close, foot, index of the first bracket past
/// the limit)`: the text is head, 100,000 units, inner, closers, foot.
const KIP: [(&str, &str, &str, &str, &str, &str, usize); 8] = [
    (
        "NOT blocks",
        "FIND(?d)\nWHERE {\n  ?d {type: \"Drug\"}\n  ",
        "NOT { ",
        "?d {name: \"x\"} ",
        "} ",
        "\n}\n",
        4,
    ),
    (
        "OPTIONAL blocks",
        "FIND(?d)\nWHERE {\n  ?d {type: \"Drug\"}\n  ",
        "OPTIONAL { ",
        "?d {name: \"x\"} ",
        "} ",
        "\n}\n",
        9,
    ),
    (
        "UNION blocks",
        "FIND(?d)\nWHERE {\n  ?d {type: \"Drug\"}\n  ",
        "UNION { ",
        "?d {name: \"x\"} ",
        "} ",
        "\n}\n",
        6,
    ),
    (
        "parentheses in FILTER",
        "FIND(?d)\nWHERE {\n  ?d {type: \"Drug\"}\n  FILTER(",
        "(",
        "?d.name == \"x\"",
        ")",
        ")\n}\n",
        0,
    ),
    (
        "arrays",
        "UPSERT {\n  CONCEPT ?c {\n    {type: \"Company\", name: \"Deep\"}\n    SET ATTRIBUTES {deep: ",
        "[",
        "1",
        "]",
        "}\n  }\n}\n",
        0,
    ),
    (
        "objects",
        "UPSERT {\n  CONCEPT ?c {\n    {type: \"Company\", name: \"Deep\"}\n    SET ATTRIBUTES {deep: ",
        "{a: ",
        "1",
        "}",
        "}\n  }\n}\n",
        0,
    ),
    (
        "nested propositions",
        "FIND(?p)\nWHERE {\n  ?p ",
        "(?s, \"treats\", ",
        "?o",
        ")",
        "\n}\n",
        0,
    ),
    (
        "inline concepts",
        "FIND(?p)\nWHERE {\n  ?p ",
        "({type: \"Drug\"}, \"treats\", ",
        "{name: \"x\"}",
        ")",
        "\n}\n",
        1,
    ),
];

#[test]
fn a_capsule_nested_100_000_deep_is_refused_with_a_position() {
    let (_d, nexus) = medical_arc();
    let before = graph(&nexus);
    for (name, head, unit, inner, close, foot, index) in KIP {
        let n = 100_000;
        let text = format!("{head}{}{inner}{}{foot}", unit.repeat(n), close.repeat(n));
        // Brackets already open before the first unit; the unit whose
        // bracket at `index` opens level 257.
        let open = head.matches(['(', '[', '{']).count() - head.matches([')', ']', '}']).count();
        let extra = unit[..index].matches(['(', '[', '{']).count();
        let unit_no = MAX_DEPTH + 1 - open - extra;
        let at = head.len() + unit.len() * (unit_no - 1) + index;
        let r = import(&nexus, "deep.kip", text.clone());
        assert_too_deep(&r, &text, at, name);
    }
    assert_eq!(graph(&nexus), before, "a refused capsule wrote something");
}

#[test]
fn a_capsule_nested_to_the_limit_imports() {
    let (_d, nexus) = medical_arc();
    let head = "UPSERT {\n  CONCEPT ?c {\n    {type: \"Company\", name: \"Deep\"}\n    SET ATTRIBUTES {deep: ";
    let n = MAX_DEPTH - 3;
    let text = format!("{head}{}1{}}}\n  }}\n}}\n", "[".repeat(n), "]".repeat(n));
    let r = import(&nexus, "deep.kip", text);
    assert_eq!(r.status, Status::Imported, "{:#?}", r.errors);
    let query = format!(
        "FIND(?c) WHERE {{ ?c {{type: \"Company\"}} {}?c {{name: \"Deep\"}}{} }}",
        "NOT { NOT { ".repeat((MAX_DEPTH - 2) / 2),
        " } }".repeat((MAX_DEPTH - 2) / 2)
    );
    let r = import(&nexus, "query.kip", query);
    assert_eq!(r.status, Status::Imported, "{:#?}", r.errors);
}

// ------------------------------------------------------------ YAML bundles

#[test]
fn a_bundle_nested_100_000_deep_is_refused_with_a_position() {
    let (_d, nexus) = medical_arc();
    let before = graph(&nexus);
    let n = 100_000;
    // (name, text, offset of the collection that opens level 257)
    let head = "- {type: Company, name: C, deep: ";
    let flow_seq = format!("{head}{}1{}}}\n", "[".repeat(n), "]".repeat(n));
    // The list and the item's mapping are two levels: the 255th `[` opens
    // level 257.
    let flow_seq_at = head.len() + MAX_DEPTH - 2;
    let flow_map = format!("{head}{}1{}}}\n", "{a: ".repeat(n), "}".repeat(n));
    let flow_map_at = head.len() + 4 * (MAX_DEPTH - 2);
    // `- - - x`: block sequences, two characters a level, on line 2.
    let block = format!("# nested lists\n{}x\n", "- ".repeat(n));
    let block_at = "# nested lists\n".len() + 2 * MAX_DEPTH;
    // A proposition whose target is a proposition whose target is …
    let prop_head = "- type: stated\n  source: {type: User, name: U}\n  target: ";
    let prop_unit = "{type: stated, source: {type: User, name: U}, target: ";
    let nested = format!(
        "{prop_head}{}{{type: User, name: V}}{}\n",
        prop_unit.repeat(n),
        "}".repeat(n)
    );
    // The list and the item are two levels; each unit opens one more, and
    // its `source` mapping one beyond: unit 254's source opens level 257.
    let nested_at = prop_head.len()
        + prop_unit.len() * (MAX_DEPTH - 3)
        + prop_unit.find("{type: User").unwrap_or(0);
    for (name, text, at) in [
        ("flow sequences", flow_seq, flow_seq_at),
        ("flow mappings", flow_map, flow_map_at),
        ("block sequences", block, block_at),
        ("nested propositions", nested, nested_at),
    ] {
        let r = import(&nexus, "deep.yaml", text.clone());
        assert_too_deep(&r, &text, at, name);
    }
    // A million characters of nesting, likewise.
    // A flow collection at the root meets the YAML reader's own bound
    // (255 levels of `[…]` / `{…}`) one level before ours.
    let text = "[".repeat(1_000_000);
    let r = import(&nexus, "deep.yaml", text.clone());
    assert_refused(
        &r,
        &text,
        255,
        "flow root",
        "nested deeper than 255 levels of `[…]` and `{…}`",
    );
    assert_eq!(graph(&nexus), before, "a refused bundle wrote something");
}

#[test]
fn a_bundle_nested_to_the_limit_imports() {
    let (_d, nexus) = medical_arc();
    // The list and the item's mapping are two levels: 254 more fit.
    let n = MAX_DEPTH - 2;
    let text = format!(
        "- {{type: Company, name: C, deep: {}1{}}}\n",
        "[".repeat(n),
        "]".repeat(n)
    );
    let r = import(&nexus, "deep.yaml", text);
    assert_eq!(r.status, Status::Imported, "{:#?}", r.errors);
    let text = format!(
        "- {{type: Company, name: C, deep: {}1{}}}\n",
        "[".repeat(n + 1),
        "]".repeat(n + 1)
    );
    let r = import(&nexus, "deep.yaml", text);
    assert!(
        r.errors[0].message.contains("nested deeper than 256"),
        "{:#?}",
        r.errors
    );
    // Nested proposition targets as deep as the reader allows: imported or
    // refused for what they mean, never for their depth, never a crash.
    let prop_unit = "{type: stated, source: {type: User, name: U}, target: ";
    let m = MAX_DEPTH - 4;
    let text = format!(
        "- type: stated\n  source: {{type: User, name: U}}\n  target: {}{{type: User, name: V}}{}\n",
        prop_unit.repeat(m),
        "}".repeat(m)
    );
    let r = import(&nexus, "props.yaml", text);
    assert!(
        r.errors
            .iter()
            .all(|e| !e.message.contains("nested deeper")),
        "{:#?}",
        r.errors
    );
}

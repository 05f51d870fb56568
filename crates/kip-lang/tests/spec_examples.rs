//! Every code example of the KIP v1.0-RC2 specification (seed 001), read from
//! the specification text itself rather than retyped, so nothing is left out
//! by selection: complete commands must parse, pass validation and
//! round-trip through the formatter; clause fragments must parse as WHERE
//! bodies; the `execute_kip` request examples must parse and bind their
//! parameters; syntax templates (with `...`, `<Type>`, `LIMIT N`) must be
//! rejected with a positioned KIP_1001.

use std::collections::BTreeMap;
use std::path::PathBuf;

use kip_lang::ast::{Arg, Command, ConceptMatcher, UpsertItem};
use kip_lang::{ErrorCode, bind, format_source, parse, parse_where_items};

/// The specification as the repository carries it (`docs/spec/`), so a
/// fresh clone tests against it with nothing beside the repository.
fn spec_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/spec/kip-v1.0-rc2.md")
}

fn spec_text() -> String {
    let path = spec_path();
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the specification must be at {}: {e}", path.display()))
}

/// Where the company keeps the seed documents, the repository's copy must
/// be the seed itself, byte for byte (skipped where the seeds are absent).
#[test]
fn the_repositorys_specification_is_the_seed() {
    let seed = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/seeds/001_b1da25b84fec77e7.txt");
    let Ok(seed) = std::fs::read(&seed) else {
        return;
    };
    let copy = std::fs::read(spec_path()).expect("docs/spec/kip-v1.0-rc2.md exists");
    assert!(
        copy == seed,
        "docs/spec/kip-v1.0-rc2.md differs from the seed; copy the seed over it"
    );
}

/// The fenced code blocks of the specification: (language, body).
fn blocks() -> Vec<(String, String)> {
    let text = spec_text();
    let mut blocks = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let Some(newline) = after.find('\n') else {
            break;
        };
        let lang = after[..newline].trim().to_owned();
        let body_start = &after[newline + 1..];
        let Some(end) = body_start.find("```") else {
            break;
        };
        blocks.push((lang, body_start[..end].to_owned()));
        rest = &body_start[end + 3..];
    }
    blocks
}

/// What each block of the specification is, by index. The spec has 41 code
/// blocks; if it changes, this table must be revisited (the test says so).
#[derive(Debug, PartialEq)]
enum Kind {
    /// Diagrams and the JSON error example: not KIP.
    NotKip,
    /// One or more complete commands.
    Commands(usize),
    /// WHERE-clause fragments.
    Fragment,
    /// An `execute_kip` request in JSON.
    Request,
    /// A syntax template with placeholders such as `...` or `LIMIT N`.
    Template,
}

fn kind(index: usize, lang: &str) -> Kind {
    match (index, lang) {
        (0 | 34, "mermaid") | (40, "json") => Kind::NotKip,
        (1 | 2 | 17 | 26 | 29, "prolog") => Kind::Template,
        (3..=10, "prolog") => Kind::Fragment,
        (31, "prolog") => Kind::Commands(3),
        // The Genesis capsule and its housekeeping UPSERT.
        (35, "prolog") => Kind::Commands(2),
        (11..=16 | 18..=25 | 27 | 28 | 30 | 36..=39, "prolog") => Kind::Commands(1),
        (32 | 33, "js") => Kind::Request,
        other => panic!("block {other:?} of the specification is not classified: update `kind`"),
    }
}

#[test]
fn the_specification_has_the_expected_blocks() {
    let blocks = blocks();
    assert_eq!(blocks.len(), 41, "the specification's code blocks changed");
    for (i, (lang, _)) in blocks.iter().enumerate() {
        kind(i, lang);
    }
}

fn assert_round_trips(source: &str) {
    let ast = parse(source).unwrap_or_else(|e| panic!("{source}\n{e:?}"));
    let formatted = format_source(source).expect("a valid text formats");
    let reparsed = parse(&formatted).unwrap_or_else(|e| panic!("{formatted}\n{e:?}"));
    assert_eq!(
        ast, reparsed,
        "formatting changed the meaning of:\n{source}\n---\n{formatted}"
    );
    let again = format_source(&formatted).expect("formatted text formats");
    assert_eq!(formatted, again, "formatting is not idempotent");
    // Every comment of the source survives formatting.
    let before: Vec<String> = kip_lang::scan_comments(source)
        .into_iter()
        .map(|c| c.text)
        .collect();
    let after: Vec<String> = kip_lang::scan_comments(&formatted)
        .into_iter()
        .map(|c| c.text)
        .collect();
    assert_eq!(before, after, "comments were lost or reordered");
}

#[test]
fn every_complete_example_parses_validates_and_round_trips() {
    let mut checked = 0;
    for (i, (lang, body)) in blocks().iter().enumerate() {
        if let Kind::Commands(n) = kind(i, lang) {
            let commands = parse(body).unwrap_or_else(|e| panic!("block {i}:\n{body}\n{e:?}"));
            assert_eq!(commands.len(), n, "block {i}");
            assert_round_trips(body);
            checked += 1;
        }
    }
    assert_eq!(checked, 23);
}

#[test]
fn every_clause_fragment_parses_as_a_where_body() {
    let mut checked = 0;
    for (i, (lang, body)) in blocks().iter().enumerate() {
        if kind(i, lang) == Kind::Fragment {
            let group =
                parse_where_items(body).unwrap_or_else(|e| panic!("block {i}:\n{body}\n{e:?}"));
            assert!(!group.items.is_empty(), "block {i}");
            checked += 1;
        }
    }
    assert_eq!(checked, 8);
}

#[test]
fn every_template_is_rejected_with_a_position() {
    for (i, (lang, body)) in blocks().iter().enumerate() {
        if kind(i, lang) == Kind::Template {
            let errors = parse(body).expect_err(&format!("block {i} is a template"));
            let first = &errors.0[0];
            assert_eq!(first.code, ErrorCode::InvalidSyntax, "block {i}: {first:?}");
            assert!(first.data.contains_key("line") && first.data.contains_key("column"));
        }
    }
}

#[test]
fn every_request_example_parses_and_binds_its_parameters() {
    let mut commands_seen = 0;
    for (i, (lang, body)) in blocks().iter().enumerate() {
        if kind(i, lang) != Kind::Request {
            continue;
        }
        let request: serde_json::Value = serde_json::from_str(body).expect("valid JSON");
        let args = &request["function"]["arguments"];
        let shared = args["parameters"].as_object().cloned().unwrap_or_default();
        let mut items: Vec<(String, serde_json::Map<String, serde_json::Value>)> = Vec::new();
        if let Some(command) = args["command"].as_str() {
            items.push((command.to_owned(), shared.clone()));
        }
        for entry in args["commands"].as_array().into_iter().flatten() {
            match entry {
                serde_json::Value::String(s) => items.push((s.clone(), shared.clone())),
                serde_json::Value::Object(o) => {
                    let mut params = shared.clone();
                    params.extend(o["parameters"].as_object().cloned().unwrap_or_default());
                    items.push((o["command"].as_str().expect("command").to_owned(), params));
                }
                other => panic!("block {i}: unexpected command entry {other}"),
            }
        }
        for (text, params) in items {
            let commands = parse(&text).unwrap_or_else(|e| panic!("{text}\n{e:?}"));
            let bound = bind(&text, commands, &params).unwrap_or_else(|e| panic!("{text}\n{e:?}"));
            assert!(kip_lang::placeholders(&bound).is_empty());
            commands_seen += 1;
        }
    }
    assert_eq!(commands_seen, 4);
}

/// The concepts a capsule writes, `(type, name)` → the attributes its
/// blocks set, merged in order.
fn written(text: &str) -> BTreeMap<(String, String), serde_json::Map<String, serde_json::Value>> {
    let mut out = BTreeMap::new();
    for command in parse(text).expect("parses") {
        let Command::Upsert(upsert) = command else {
            panic!("a Genesis capsule holds only UPSERTs");
        };
        for item in upsert.items {
            let UpsertItem::Concept(block) = item else {
                continue;
            };
            let ConceptMatcher::TypeName {
                ty: Arg::Lit(ty, _),
                name: Arg::Lit(name, _),
            } = block.matcher
            else {
                panic!("a concept block without a literal {{type, name}}");
            };
            let attributes: &mut serde_json::Map<_, _> = out.entry((ty, name)).or_default();
            if let Some(set) = block.attributes {
                attributes.extend(set.to_json().expect("no placeholder"));
            }
        }
    }
    out
}

/// `capsules/genesis/` holds the capsules of the specification's appendices
/// 2 and 3 brought to KIP v1.0-RC11's content model (checked against the
/// official RC11 capsules by `crates/kip-nexus/tests/rc11.rs`): RC11 only
/// adds to RC2, so every concept the appendices write is still written,
/// with every attribute they set, and every instance_schema key they
/// define keeps its type.
#[test]
fn the_genesis_capsules_still_write_everything_the_specification_does() {
    let blocks = blocks();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../capsules/genesis");
    let files = [
        (35, "01_genesis.kip"),
        (36, "02_person.kip"),
        (37, "03_event.kip"),
        (38, "04_self.kip"),
        (39, "05_system.kip"),
    ];
    for (index, name) in files {
        let text = std::fs::read_to_string(dir.join(name)).expect("genesis capsule exists");
        let (spec, ours) = (written(&blocks[index].1), written(&text));
        assert!(!spec.is_empty(), "block {index} is a Genesis capsule");
        for (concept, attributes) in &spec {
            let mine = ours
                .get(concept)
                .unwrap_or_else(|| panic!("{name} no longer writes {concept:?}"));
            for key in attributes.keys() {
                assert!(mine.contains_key(key), "{name}: {concept:?} lost `{key}`");
            }
            let Some(schema) = attributes
                .get("instance_schema")
                .and_then(|s| s.as_object())
            else {
                continue;
            };
            for (key, entry) in schema {
                let my_entry = &mine["instance_schema"][key];
                for field in ["type", "item_type"] {
                    assert_eq!(
                        my_entry.get(field),
                        entry.get(field),
                        "{name}: {concept:?}'s instance_schema `{key}` changed its {field}"
                    );
                }
            }
        }
    }
}

//! Export → import round trips: the example graphs and a generated graph
//! full of awkward values come back identical in both formats; filters
//! keep what they name; changes to Genesis elements survive.

use crate::common;

use common::*;
use kip_capsule::{ExportFormat, ExportOptions, export};
use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::{Value as Json, json};

const FORMATS: [(ExportFormat, &str); 2] = [
    (ExportFormat::Kip, "export.kip"),
    (ExportFormat::Yaml, "export.yaml"),
];

fn options(format: ExportFormat) -> ExportOptions {
    ExportOptions {
        format,
        ..ExportOptions::default()
    }
}

/// Exports `nexus` in both formats and imports each into a fresh nexus:
/// both must hold exactly `nexus`'s graph, and export the same text again.
#[track_caller]
fn assert_round_trip(nexus: &Nexus) {
    let expected = graph(nexus);
    for (format, name) in FORMATS {
        let text = export(nexus, &options(format)).expect("export");
        let (_d, copy) = fresh();
        let r = kip_capsule::import_text(&copy, name, &text, &origin());
        assert!(
            r.is_imported(),
            "{name} does not import:\n{}\n{}",
            r.error_lines().join("\n"),
            text
        );
        assert_eq!(
            graph(&copy),
            expected,
            "{name} rebuilt another graph:\n{text}"
        );
        let again = export(&copy, &options(format)).expect("export");
        assert_eq!(again, text, "{name}: exporting the copy gives another text");
    }
}

#[test]
fn a_fresh_nexus_exports_nothing() {
    let (_d, nexus) = fresh();
    for (format, _) in FORMATS {
        let text = export(&nexus, &options(format)).expect("export");
        assert!(
            text.contains("0 concepts, 0 propositions, 0 deletes"),
            "{text}"
        );
    }
    assert_round_trip(&nexus);
}

#[test]
fn the_medical_example_round_trips() {
    let (_d, nexus) = medical();
    assert_round_trip(&nexus);
}

#[test]
fn the_chinese_example_round_trips() {
    let (_d, nexus) = fresh();
    imported(&nexus, &examples_dir().join("30_tcm_zh.yaml"));
    assert_round_trip(&nexus);
}

#[test]
fn changed_and_deleted_genesis_elements_round_trip() {
    let (_d, nexus) = medical();
    for command in [
        r#"UPSERT { CONCEPT ?s { {type: "Person", name: "$self"} SET ATTRIBUTES { name: "Kip", handle: "@kip" } } WITH METADATA { source: "onboarding" } }"#,
        r#"DELETE CONCEPT ?e DETACH WHERE { ?e {type: "$ConceptType", name: "Event"} }"#,
        r#"DELETE PROPOSITIONS ?l WHERE { ?l ({type: "$ConceptType", name: "Person"}, "belongs_to_domain", {type: "Domain", name: "CoreSchema"}) }"#,
    ] {
        let r = nexus.execute(&ExecuteKip::command(command), &Context::default());
        assert!(r.get("error").is_none(), "{r:#}");
    }
    let yaml = export(&nexus, &options(ExportFormat::Yaml)).expect("export");
    assert!(yaml.contains("- type: Person\n  name: $self\n"), "{yaml}");
    assert!(yaml.contains("  attributes:\n    name: Kip\n"), "{yaml}");
    assert!(
        yaml.contains("- type: $ConceptType\n  name: Event\n  action: delete\n"),
        "{yaml}"
    );
    assert_round_trip(&nexus);
}

/// A small deterministic generator (no dependency, same graph every run).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// Texts that trip naive YAML and KIP writers.
const AWKWARD: [&str; 24] = [
    "plain",
    "yes",
    "No",
    "null",
    "~",
    "1.0",
    "0x1F",
    "12:30",
    "a: b",
    "#hash",
    "- dash",
    "quote \" and \\ backslash",
    "line\nbreak",
    "tab\tstop",
    " padded ",
    "",
    "阿司匹林",
    "emoji 😀",
    "{not: json}",
    "[1, 2]",
    "it's",
    "%percent",
    "@at",
    "trailing:",
];

fn value(rng: &mut Rng, depth: u32) -> Json {
    match rng.next() % if depth > 1 { 6 } else { 8 } {
        0 => json!(rng.pick(&AWKWARD)),
        1 => json!((rng.next() % 2_000_000) as i64 - 1_000_000),
        2 => json!(((rng.next() % 100_000) as f64) / 64.0 - 700.5),
        3 => json!(rng.next().is_multiple_of(2)),
        4 => Json::Null,
        5 => json!(format!("{} {}", rng.pick(&AWKWARD), rng.next() % 100)),
        6 => Json::Array((0..rng.next() % 4).map(|_| value(rng, depth + 1)).collect()),
        _ => {
            let mut m = serde_json::Map::new();
            for _ in 0..rng.next() % 4 {
                m.insert(rng.pick(&AWKWARD).to_owned(), value(rng, depth + 1));
            }
            Json::Object(m)
        }
    }
}

fn object(rng: &mut Rng) -> serde_json::Map<String, Json> {
    let mut m = serde_json::Map::new();
    for i in 0..rng.next() % 5 {
        let key = match rng.next() % 4 {
            0 => format!("attr_{i}"),
            1 => rng
                .pick(&[
                    "name",
                    "type",
                    "source",
                    "metadata",
                    "action",
                    "attributes",
                    "target",
                ])
                .to_owned(),
            2 => rng.pick(&AWKWARD).to_owned(),
            _ => format!("键{i}"),
        };
        if key.is_empty() || key.starts_with('_') {
            continue;
        }
        m.insert(key, value(rng, 0));
    }
    m
}

/// Builds a graph through KIP (not through the capsule importer, so the
/// round trip is not checked against itself): types with schemas, concepts
/// with awkward names and values, links with attributes and metadata, and
/// links about links.
fn generated(seed: u64) -> (tempfile::TempDir, Nexus) {
    let (d, nexus) = fresh();
    let mut rng = Rng(seed);
    // Values go into the text as JSON literals (JSON is KIP's value syntax).
    // Placeholders are replaced in one pass over the template.
    let run = |command: String, params: Json| {
        let mut text = String::new();
        let mut rest = command.as_str();
        while let Some(i) = rest.find(':') {
            text.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            let len = after
                .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .unwrap_or(after.len());
            match params.get(&after[..len]) {
                Some(v) if len > 0 => text.push_str(&v.to_string()),
                _ => text.push_str(&rest[i..i + 1 + len]),
            }
            rest = &after[len..];
        }
        text.push_str(rest);
        let r = nexus.execute(&ExecuteKip::command(text.clone()), &Context::default());
        assert!(r.get("error").is_none(), "{text}\n{r:#}");
    };
    let types = ["Alpha", "Beta", "Gamma"];
    for t in types {
        run(
            r#"UPSERT { CONCEPT ?t { {type: "$ConceptType", name: :t} SET ATTRIBUTES { description: :d, instance_schema: { note: {type: "string", is_required: false} } } } }"#.into(),
            json!({"t": t, "d": format!("The {t} type.")}),
        );
    }
    run(
        r#"UPSERT { CONCEPT ?p { {type: "$PropositionType", name: "relates"} SET ATTRIBUTES { description: "Any to any.", subject_types: ["*"], object_types: ["*"] } } }"#.into(),
        json!({}),
    );
    run(
        r#"UPSERT { CONCEPT ?p { {type: "$PropositionType", name: "alpha_to_beta"} SET ATTRIBUTES { description: "Typed.", subject_types: ["Alpha"], object_types: ["Beta"] } } }"#.into(),
        json!({}),
    );
    let mut names: Vec<(String, String)> = Vec::new();
    for i in 0..60 {
        let t = types[i % 3];
        let name = format!("{} {i}", rng.pick(&AWKWARD));
        run(
            r#"UPSERT { CONCEPT ?c { {type: :t, name: :n} SET ATTRIBUTES :a } WITH METADATA :m }"#
                .into(),
            json!({"t": t, "n": name, "a": object(&mut rng), "m": {"source": rng.pick(&AWKWARD), "confidence": 0.5}}),
        );
        names.push((t.to_owned(), name));
    }
    let mut links = Vec::new();
    for _ in 0..80 {
        let (st, sn) = names[(rng.next() % names.len() as u64) as usize].clone();
        let (ot, on) = names[(rng.next() % names.len() as u64) as usize].clone();
        let predicate = if st == "Alpha" && ot == "Beta" {
            "alpha_to_beta"
        } else {
            "relates"
        };
        run(
            r#"UPSERT { PROPOSITION ?l { ({type: :st, name: :sn}, :p, {type: :ot, name: :on}) SET ATTRIBUTES :a } WITH METADATA :m }"#.into(),
            json!({"st": st, "sn": sn, "p": predicate, "ot": ot, "on": on, "a": object(&mut rng), "m": object(&mut rng)}),
        );
        links.push((st, sn, predicate, ot, on));
    }
    // Links about links, two levels deep.
    for i in 0..10 {
        let (st, sn, p, ot, on) = links[i * 3].clone();
        let (ut, un) = names[i].clone();
        run(
            r#"UPSERT { PROPOSITION ?h { ({type: :ut, name: :un}, "relates", ({type: :st, name: :sn}, :p, {type: :ot, name: :on})) SET ATTRIBUTES { level: 1 } } }"#.into(),
            json!({"ut": ut, "un": un, "st": st, "sn": sn, "p": p, "ot": ot, "on": on}),
        );
        if i % 2 == 0 {
            run(
                r#"UPSERT { PROPOSITION ?h2 { ({type: :ut, name: :un}, "relates", ({type: :ut, name: :un}, "relates", ({type: :st, name: :sn}, :p, {type: :ot, name: :on}))) SET ATTRIBUTES { level: 2 } } }"#.into(),
                json!({"ut": ut, "un": un, "st": st, "sn": sn, "p": p, "ot": ot, "on": on}),
            );
        }
    }
    (d, nexus)
}

#[test]
fn a_generated_graph_with_awkward_values_round_trips() {
    for seed in [0x9E37_79B9_7F4A_7C15, 42, 7_777_777] {
        let (_d, nexus) = generated(seed);
        assert_round_trip(&nexus);
    }
}

#[test]
fn filters_keep_the_named_types_and_domains_with_their_propositions() {
    let (_d, nexus) = medical();
    imported(&nexus, &examples_dir().join("30_tcm_zh.yaml"));
    let drugs = export(
        &nexus,
        &ExportOptions {
            format: ExportFormat::Yaml,
            types: vec!["Drug".into()],
            ..ExportOptions::default()
        },
    )
    .expect("export");
    assert!(drugs.contains("name: Cognizine\n"), "{drugs}");
    assert!(
        !drugs.contains("name: Headache\n"),
        "a Symptom is not a Drug:\n{drugs}"
    );
    assert!(
        drugs.contains("- type: treats\n"),
        "propositions follow their subject:\n{drugs}"
    );
    assert!(!drugs.contains("麻黄"), "{drugs}");
    assert!(!drugs.contains("action: delete"), "{drugs}");
    // Imported where the rest of the medical schema and data exist, the
    // drugs export changes nothing.
    let r = imported_text(&nexus, "drugs.yaml", &drugs);
    assert!(!r.stats.changed(), "{:?}", r.stats);

    let tcm = export(
        &nexus,
        &ExportOptions {
            format: ExportFormat::Kip,
            domains: vec!["中医药".into()],
            ..ExportOptions::default()
        },
    )
    .expect("export");
    assert!(tcm.contains(r#"{type: "Domain", name: "中医药"}"#), "{tcm}");
    assert!(
        tcm.contains(r#"{type: "Formula", name: "麻黄汤"}"#),
        "{tcm}"
    );
    assert!(!tcm.contains("Aspirin"), "{tcm}");
    // The domain's members and their links, into a nexus that has only Genesis:
    // everything its propositions point at must come along or exist.
    let (_d2, other) = fresh();
    let r = kip_capsule::import_text(&other, "tcm.kip", &tcm, &origin());
    assert!(
        !r.is_imported(),
        "herbs are not members of the domain, so links to them fail"
    );
    assert!(
        r.errors
            .iter()
            .all(|e| e.code == kip_lang::ErrorCode::NotFound
                && (e.message.contains("object Herb") || e.message.contains("object Syndrome"))),
        "{:#?}",
        r.errors
    );

    let wrong = export(
        &nexus,
        &ExportOptions {
            types: vec!["Drgu".into()],
            ..ExportOptions::default()
        },
    )
    .expect_err("unknown type");
    assert_eq!(wrong.data["suggestions"], json!(["Drug"]));
    let wrong = export(
        &nexus,
        &ExportOptions {
            domains: vec!["Medicall".into()],
            ..ExportOptions::default()
        },
    )
    .expect_err("unknown domain");
    assert_eq!(wrong.data["suggestions"], json!(["Medical"]));
}

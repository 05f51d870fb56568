//! `get_knowledge_schema`: a valid draft-07 schema generated from the live
//! definitions (custom types included), whose example validates against it
//! and imports cleanly.

use crate::common;

use common::*;
use kip_capsule::knowledge_schema;
use kip_nexus::Nexus;
use serde_json::{Value as Json, json};

/// The YAML of a bundle as JSON (through the importer's own reader is not
/// public, so through a tiny independent path: saphyr's loader).
fn yaml_to_json(text: &str) -> Json {
    use saphyr::{LoadableYamlNode, Scalar, Yaml};
    fn conv(y: &Yaml<'_>) -> Json {
        match y {
            Yaml::Value(Scalar::Null) => Json::Null,
            Yaml::Value(Scalar::Boolean(b)) => json!(b),
            Yaml::Value(Scalar::Integer(i)) => json!(i),
            Yaml::Value(Scalar::FloatingPoint(f)) => json!(f.into_inner()),
            Yaml::Value(Scalar::String(s)) => json!(s),
            Yaml::Sequence(items) => Json::Array(items.iter().map(conv).collect()),
            Yaml::Mapping(m) => Json::Object(
                m.iter()
                    .map(|(k, v)| (k.as_str().unwrap_or_default().to_owned(), conv(v)))
                    .collect(),
            ),
            other => panic!("unexpected YAML node {other:?}"),
        }
    }
    let docs = Yaml::load_from_str(text).expect("the example is YAML");
    assert_eq!(docs.len(), 1);
    conv(&docs[0])
}

fn example_files(names: &[&str]) -> Vec<(&'static str, String)> {
    names
        .iter()
        .map(|n| {
            let text = std::fs::read_to_string(examples_dir().join(n)).expect("example");
            let name: &'static str = if n.ends_with(".kip") {
                "setup.kip"
            } else {
                "setup.yaml"
            };
            (name, text)
        })
        .collect()
}

fn schema_of(nexus: &Nexus) -> (Json, String) {
    let s = knowledge_schema(nexus).expect("schema");
    (s.full_bundle_schema, s.example_yaml)
}

#[track_caller]
fn assert_valid(schema: &Json, instance: &Json) {
    let validator = jsonschema::draft7::new(schema).expect("a valid draft-07 schema");
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// The example of `nexus`'s schema: valid, and imports cleanly (into a
/// copy, so the nexus is left as it was).
fn check_example(nexus: &Nexus, setup: &[(&str, String)]) {
    let (full, example) = schema_of(nexus);
    assert!(
        jsonschema::meta::is_valid(&full),
        "the schema is not a valid JSON Schema"
    );
    assert_eq!(full["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_valid(&full, &yaml_to_json(&example));
    let (_d, copy) = fresh();
    for (name, text) in setup {
        imported_text(&copy, name, text);
    }
    let r = imported_text(&copy, "example.yaml", &example);
    assert!(r.stats.concepts_created >= 2, "{:?}\n{example}", r.stats);
    assert!(
        r.stats.propositions_created >= 1,
        "{:?}\n{example}",
        r.stats
    );
}

#[test]
fn the_example_of_a_fresh_nexus_validates_and_imports() {
    let (_d, nexus) = fresh();
    check_example(&nexus, &[]);
}

#[test]
fn the_example_of_the_medical_nexus_validates_and_imports() {
    let (_d, nexus) = medical();
    let (_, example) = schema_of(&nexus);
    assert!(example.contains("- type: Drug\n"), "{example}");
    check_example(
        &nexus,
        &example_files(&[
            "10_medical_schema.kip",
            "11_medical_data.kip",
            "12_cognizine.kip",
        ]),
    );
}

#[test]
fn the_example_of_the_chinese_nexus_validates_and_imports() {
    let (_d, nexus) = fresh();
    imported(&nexus, &examples_dir().join("30_tcm_zh.yaml"));
    check_example(&nexus, &example_files(&["30_tcm_zh.yaml"]));
}

#[test]
fn there_is_one_branch_per_type_and_predicate() {
    let (_d, nexus) = medical();
    let (full, _) = schema_of(&nexus);
    assert_eq!(full["type"], "array");
    let titles: Vec<&str> = full["items"]["oneOf"]
        .as_array()
        .expect("oneOf")
        .iter()
        .map(|b| b["title"].as_str().expect("title"))
        .collect();
    let types = nexus.read(|g| g.defined_types()).expect("types");
    let predicates = nexus.read(|g| g.defined_predicates()).expect("predicates");
    assert_eq!(titles.len(), types.len() + predicates.len());
    for t in &types {
        assert!(titles.contains(&format!("{t} (concept)").as_str()), "{t}");
    }
    for p in &predicates {
        assert!(
            titles.contains(&format!("{p} (proposition)").as_str()),
            "{p}"
        );
    }
}

fn branch<'a>(full: &'a Json, title: &str) -> &'a Json {
    full["items"]["oneOf"]
        .as_array()
        .expect("oneOf")
        .iter()
        .find(|b| b["title"] == title)
        .unwrap_or_else(|| panic!("no branch {title}"))
}

#[test]
fn custom_types_bring_their_required_attributes_property_types_and_end_types() {
    let (_d, nexus) = fresh();
    let lab = r#"
- type: $ConceptType
  name: Sample
  description: A lab sample.
  instance_schema:
    description: {type: string, is_required: true, description: What it is.}
    volume_ml: {type: number, is_required: true}
    count: {type: integer, is_required: false}
    sterile: {type: boolean, is_required: false}
    tags: {type: array, item_type: string, is_required: false}
    extra: {type: object, is_required: false}
    taken_on: {type: date, is_required: false, description: When.}
- type: $ConceptType
  name: Lab
  description: A laboratory.
- type: $PropositionType
  name: analysed_by
  description: The sample was analysed by the lab.
  subject_types: [Sample]
  object_types: [Lab]
  instance_schema:
    method: {type: string, is_required: true}
- type: $PropositionType
  name: mentions
  description: Anything mentions anything.
  subject_types: ["*"]
  object_types: ["*"]
"#;
    imported_text(&nexus, "lab.yaml", lab);
    let (full, _) = schema_of(&nexus);
    let sample = branch(&full, "Sample (concept)");
    assert_eq!(sample["description"], "A lab sample.");
    assert_eq!(sample["required"], json!(["type", "name"]));
    assert_eq!(
        sample["else"]["required"],
        json!(["description", "volume_ml"])
    );
    let p = &sample["properties"];
    assert_eq!(p["type"], json!({"const": "Sample"}));
    assert_eq!(p["description"]["type"], "string");
    assert_eq!(p["volume_ml"]["type"], "number");
    assert_eq!(p["count"]["type"], json!(["integer", "null"]));
    assert_eq!(p["sterile"]["type"], json!(["boolean", "null"]));
    assert_eq!(p["tags"]["items"], json!({"type": "string"}));
    assert_eq!(p["extra"]["type"], json!(["object", "null"]));
    assert!(
        p["taken_on"].get("type").is_none(),
        "an unknown type is not checked"
    );
    assert_eq!(p["taken_on"]["description"], "When. (declared type: date)");
    assert_eq!(p["action"]["enum"], json!(["upsert", "delete"]));

    let analysed = branch(&full, "analysed_by (proposition)");
    assert_eq!(analysed["required"], json!(["type", "source", "target"]));
    assert_eq!(analysed["else"]["required"], json!(["method"]));
    assert_eq!(
        analysed["properties"]["source"]["anyOf"][0]["properties"]["type"]["enum"],
        json!(["Sample"])
    );
    assert_eq!(
        analysed["properties"]["target"]["anyOf"][0]["properties"]["type"]["enum"],
        json!(["Lab"])
    );
    let mentions = branch(&full, "mentions (proposition)");
    assert_eq!(
        mentions["properties"]["target"]["$ref"],
        "#/definitions/element_ref"
    );

    // The schema accepts what it should and refuses what it should.
    let validator = jsonschema::draft7::new(&full).expect("compiles");
    let ok = json!([
        {"type": "Sample", "name": "s1", "description": "Blood.", "volume_ml": 5, "tags": ["a"]},
        {"type": "Lab", "name": "L"},
        {"type": "analysed_by", "source": {"type": "Sample", "name": "s1"}, "target": {"type": "Lab", "name": "L"}, "method": "PCR"},
        {"type": "mentions", "source": {"type": "Lab", "name": "L"}, "target": {"type": "analysed_by", "source": {"id": "C:1"}, "target": {"type": "Lab", "name": "L"}}},
        {"type": "Sample", "name": "s1", "action": "delete"},
    ]);
    assert!(
        validator.is_valid(&ok),
        "{:?}",
        validator
            .iter_errors(&ok)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
    for bad in [
        json!([{"type": "Sample", "name": "s2", "description": "x"}]),
        json!([{"type": "Sample", "name": "s2", "description": "x", "volume_ml": "five"}]),
        json!([{"type": "analysed_by", "source": {"type": "Lab", "name": "L"}, "target": {"type": "Lab", "name": "L"}, "method": "x"}]),
        json!([{"type": "analysed_by", "source": {"type": "Sample", "name": "s1"}, "target": {"type": "Lab", "name": "L"}}]),
        json!([{"type": "Lab", "name": "L", "_secret": 1}]),
        json!([{"type": "Lab", "name": "L", "action": "delete", "note": "x"}]),
        json!([{"type": "Nope", "name": "L"}]),
    ] {
        assert!(!validator.is_valid(&bad), "accepted {bad}");
    }
    check_example(&nexus, &[("lab.yaml", lab.to_owned())]);
}

#[test]
fn the_medical_yaml_bundle_validates_against_the_schema_of_the_nexus_it_built() {
    let (_d, nexus) = fresh();
    let text = std::fs::read_to_string(examples_dir().join("20_medical.yaml")).expect("example");
    imported_text(&nexus, "20_medical.yaml", &text);
    let (full, _) = schema_of(&nexus);
    let items = yaml_to_json(&text)["items"].clone();
    assert_valid(&full, &items);
}

//! The import pipeline against the medical example: the example files
//! import cleanly, both formats give the same graph, a broken file reports
//! every error with its exact place and applies nothing, re-imports change
//! nothing.

mod common;

use common::*;
use kip_capsule::{
    ImportOptions, ImportReport, Phase, Status, import_path, import_text, import_text_with,
};
use kip_lang::ErrorCode;
use kip_nexus::ElementId;

#[test]
fn every_example_imports_cleanly_into_a_fresh_nexus() {
    let files = kip_capsule::capsule_files(&examples_dir()).expect("examples");
    assert!(files.len() >= 5, "{files:?}");
    for file in files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        let (_d, nexus) = fresh();
        // The data capsules build on the schema capsule before them.
        if name.starts_with("11_") || name.starts_with("12_") {
            imported(&nexus, &examples_dir().join("10_medical_schema.kip"));
        }
        if name.starts_with("12_") {
            imported(&nexus, &examples_dir().join("11_medical_data.kip"));
        }
        let r = imported(&nexus, &file);
        assert!(r.stats.changed(), "{name} changed nothing");
        assert!(r.errors.is_empty());
    }
}

#[test]
fn the_yaml_medical_bundle_holds_exactly_the_knowledge_of_the_kip_capsules() {
    let (_a, from_kip) = medical();
    let (_b, from_yaml) = fresh();
    let r = imported(&from_yaml, &examples_dir().join("20_medical.yaml"));
    assert_eq!(r.items, 69);
    assert_eq!(graph(&from_kip), graph(&from_yaml));
    // And on top of each other, nothing changes.
    let again = imported(&from_kip, &examples_dir().join("20_medical.yaml"));
    assert!(!again.stats.changed(), "{:?}", again.stats);
}

#[test]
fn the_chinese_example_is_searchable_and_queryable() {
    let (_d, nexus) = fresh();
    let r = imported(&nexus, &examples_dir().join("30_tcm_zh.yaml"));
    assert_eq!(r.stats.concepts_created, 21);
    let found = nexus.execute(&kip_nexus::ExecuteKip::command(
        r#"FIND(?h.name) WHERE { ?f {type: "Formula", name: "桂枝汤"} (?f, "contains_herb", ?h) }"#,
    ), &kip_nexus::Context::default());
    let mut herbs: Vec<String> = serde_json::from_value(found["result"].clone()).expect("names");
    herbs.sort();
    assert_eq!(herbs, ["大枣", "桂枝", "甘草", "生姜", "芍药"]);
    let search = nexus.execute(
        &kip_nexus::ExecuteKip::command(r#"SEARCH CONCEPT "麻黄汤" LIMIT 1"#),
        &kip_nexus::Context::default(),
    );
    assert_eq!(search["result"][0]["name"], "麻黄汤", "{search:#}");
}

#[test]
fn re_importing_a_file_changes_nothing() {
    let (_d, nexus) = medical();
    for f in [
        "10_medical_schema.kip",
        "11_medical_data.kip",
        "12_cognizine.kip",
        "20_medical.yaml",
    ] {
        let before = graph(&nexus);
        let r = imported(&nexus, &examples_dir().join(f));
        assert!(!r.stats.changed(), "{f}: {:?}", r.stats);
        assert_eq!(graph(&nexus), before, "{f}");
    }
    let (_d, nexus) = fresh();
    let first = imported(&nexus, &examples_dir().join("30_tcm_zh.yaml"));
    assert!(first.stats.changed());
    let second = imported(&nexus, &examples_dir().join("30_tcm_zh.yaml"));
    assert!(!second.stats.changed(), "{:?}", second.stats);
}

/// Every broken file of `tests/data/err` holds one mistake: it is reported
/// once, with its code, path, line and column, and nothing is applied.
#[test]
fn each_broken_file_reports_its_one_mistake_exactly_and_applies_nothing() {
    insta::glob!("data/err/*", |path| {
        let (_d, nexus) = medical();
        let before = graph(&nexus);
        let seq = nexus.last_change_seq().expect("seq");
        let r = import_path(&nexus, path, &origin());
        assert_eq!(r.status, Status::Failed, "{}", path.display());
        assert_eq!(r.errors.len(), 1, "{}: {:#?}", path.display(), r.errors);
        let e = &r.errors[0];
        assert!(
            e.line.is_some() && e.column.is_some(),
            "{}: no position: {e:?}",
            path.display()
        );
        assert!(!e.hint.is_empty());
        assert_eq!(
            graph(&nexus),
            before,
            "{} changed the graph",
            path.display()
        );
        assert_eq!(nexus.last_change_seq().expect("seq"), seq);
        insta::assert_snapshot!(error_lines(&r).join("\n"));
    });
}

#[test]
fn a_bundle_with_many_mistakes_reports_every_one_in_file_order() {
    let (_d, nexus) = medical();
    let before = graph(&nexus);
    let text = "\
- type: Drug
  name: Naproxen
  description: An NSAID.
  risk_level: high
- type: Drugg
  name: X
- type: treats
  source: {type: Drug, name: Naproxen}
  target: {type: Symptom, name: Headach}
- type: treats
  source: {type: Symptom, name: Fever}
  target: {type: Symptom, name: Headache}
- type: Drug
  name: Undescribed
- type: Drug
  name: Naproxen
  risk_level: 4
- type: Domain
  name: CoreSchema
  action: delete
- type: treats
  source: {type: Drug, name: Aspirin, brand: x}
  target: {id: \"X:1\"}
- {type: Drug, name: Z, description: z, _secret: 1}
- type: Symptom
  name: Itch
";
    let r = import_text(&nexus, "many.yaml", text, &origin());
    assert_eq!(r.status, Status::Failed);
    assert_eq!(r.items, 10);
    assert_eq!(
        error_lines(&r),
        [
            "KIP_2004 [0].risk_level 4:15 expected null or a number, found a string",
            "KIP_2001 [1].type 5:9 Entity type 'Drugg' is not defined. Did you mean 'Drug'?",
            "KIP_3002 [2].target 9:11 Cannot create 'treats': target Symptom 'Headach' not found. Did you mean 'Headache'?",
            "KIP_2001 [3].source.type 11:18 Cannot create 'treats': its source must be a Drug, not a Symptom",
            "KIP_2003 [4].description 13:3 `description` is required (its type's instance_schema marks it is_required)",
            "KIP_3003 [5] 15:3 Drug 'Naproxen' is given risk_level = 4 here but \"high\" at [0] (line 1)",
            "KIP_3004 [6] 18:3 Domain 'CoreSchema' is protected and cannot be deleted",
            "KIP_1001 [7].source.brand 22:39 unexpected key `brand`",
            "KIP_2003 [7].target.id 23:16 'X:1' does not match ^[CP]:[0-9]+$",
            "KIP_2003 [8]._secret 24:41 `_secret` is reserved for the engine: keys starting with '_' cannot be written",
        ]
    );
    assert_eq!(graph(&nexus), before);
}

#[test]
fn positions_count_characters_on_cjk_and_crlf_text() {
    let (_d, nexus) = medical();
    let text = "- type: Drug\r\n  name: 阿司匹林肠溶片\r\n  description: 肠溶阿司匹林\r\n  risk_level: 高\r\n";
    let r = import_text(&nexus, "zh.yaml", text, &origin());
    assert_eq!(
        error_lines(&r),
        ["KIP_2004 [0].risk_level 4:15 expected null or a number, found a string"]
    );
    let kip =
        "UPSERT {\r\n  CONCEPT ?n {\r\n    {type: \"药物\", name: \"阿司匹林\"}\r\n  }\r\n}\r\n";
    let r = import_text(&nexus, "zh.kip", kip, &origin());
    assert_eq!(r.errors.len(), 1, "{:#?}", r.errors);
    // The parser refuses a non-identifier type name where it is written.
    assert_eq!(
        (r.errors[0].line, r.errors[0].column),
        (Some(3), Some(12)),
        "{:#?}",
        r.errors
    );
}

#[test]
fn a_capsule_that_fails_while_applying_leaves_no_trace_of_its_earlier_commands() {
    let (_d, nexus) = medical();
    let before = graph(&nexus);
    let r = import_path(
        &nexus,
        &data_dir().join("err/kip_protected_delete.kip"),
        &origin(),
    );
    assert_eq!(r.status, Status::Failed);
    assert_eq!(r.errors[0].code, ErrorCode::ImmutableTarget);
    assert_eq!(graph(&nexus), before);
    let naproxen = nexus.execute(
        &kip_nexus::ExecuteKip::command(
            r#"FIND(?d.name) WHERE { ?d {type: "Drug", name: "Naproxen"} }"#,
        ),
        &kip_nexus::Context::default(),
    );
    assert_eq!(naproxen["result"], serde_json::json!([]), "{naproxen:#}");
}

#[test]
fn a_bundle_may_define_a_type_and_a_predicate_and_use_them() {
    let (_d, nexus) = fresh();
    let text = r#"
metadata: {source: test}
items:
  - type: $ConceptType
    name: Herb
    description: A medicinal plant.
    instance_schema:
      description: {type: string, is_required: true}
      potency: {type: integer, is_required: false}
  - type: $PropositionType
    name: pairs_with
    description: Used together.
    subject_types: [Herb]
    object_types: [Herb]
  - {type: Herb, name: Ginseng, description: A root., potency: 3}
  - {type: Herb, name: Ginger, description: A rhizome.}
  - {type: pairs_with, source: {type: Herb, name: Ginseng}, target: {type: Herb, name: Ginger}, strength: 0.5}
"#;
    let r = imported_text(&nexus, "herbs.yaml", text);
    assert_eq!(r.stats.concepts_created, 4);
    assert_eq!(r.stats.propositions_created, 1);
    let g = graph(&nexus);
    assert!(
        g.contains(
            r#"(Herb:"Ginseng" pairs_with Herb:"Ginger") {"strength":0.5} {"source":"test"}"#
        ),
        "{g:#?}"
    );
    // The new type's schema now applies: potency is an integer.
    let bad = import_text(
        &nexus,
        "b.yaml",
        "- {type: Herb, name: Mint, description: A leaf., potency: 1.5}\n",
        &origin(),
    );
    assert_eq!(
        error_lines(&bad),
        ["KIP_2004 [0].potency 1:59 expected null or an integer, found a number"]
    );
}

#[test]
fn deletes_remove_concepts_with_their_links_and_repeat_as_no_ops() {
    let (_d, nexus) = medical();
    let text = "- {type: has_side_effect, source: {type: Drug, name: Ibuprofen}, target: {type: Symptom, name: Stomach Upset}, action: delete}\n- {type: Drug, name: Vitamin C, action: delete}\n";
    let r = imported_text(&nexus, "del.yaml", text);
    assert_eq!(r.stats.concepts_deleted, 1);
    assert_eq!(
        r.stats.propositions_deleted, 2,
        "the link, and Vitamin C's domain membership"
    );
    let again = imported_text(&nexus, "del.yaml", text);
    assert!(!again.stats.changed());
}

#[test]
fn propositions_about_propositions_and_id_references_resolve() {
    let (_d, nexus) = medical();
    let aspirin = nexus.execute(
        &kip_nexus::ExecuteKip::command(
            r#"FIND(?d.id) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
        ),
        &kip_nexus::Context::default(),
    );
    let id = aspirin["result"][0].as_str().expect("id").to_owned();
    let text = format!(
        "- {{type: User, name: Li Si}}\n- type: stated\n  source: {{type: User, name: Li Si}}\n  target: {{type: treats, source: {{id: \"{id}\"}}, target: {{type: Symptom, name: Fever}}}}\n"
    );
    let r = imported_text(&nexus, "ho.yaml", &text);
    assert_eq!(r.stats.propositions_created, 1);
    let missing = "- type: stated\n  source: {type: User, name: Li Si}\n  target: {type: treats, source: {type: Drug, name: Aspirin}, target: {type: Symptom, name: Brain Fog}}\n";
    let r = import_text(&nexus, "ho2.yaml", missing, &origin());
    assert_eq!(
        error_lines(&r),
        [
            "KIP_3002 [0].target 3:11 Cannot create 'stated': target proposition (Drug 'Aspirin', 'treats', Symptom 'Brain Fog') not found"
        ]
    );
}

#[test]
fn a_persons_display_name_goes_under_attributes() {
    let (_d, nexus) = fresh();
    let text = "- type: Person\n  name: alice\n  id: alice\n  person_class: Human\n  attributes:\n    name: Alice\n";
    imported_text(&nexus, "p.yaml", text);
    assert!(graph(&nexus).iter().any(|l| {
        l.starts_with(r#"Person:"alice" {"id":"alice","name":"Alice","person_class":"Human"}"#)
    }));
    let clash =
        "- type: Person\n  name: bob\n  id: bob\n  person_class: Human\n  attributes: {name: 1}\n";
    let r = import_text(&nexus, "p2.yaml", clash, &origin());
    assert_eq!(
        error_lines(&r),
        ["KIP_2004 [0].attributes.name 5:22 expected null or a string, found a number"]
    );
}

#[test]
fn empty_files_and_unknown_extensions_and_unreadable_bytes() {
    let (_d, nexus) = fresh();
    let r = import_text(&nexus, "empty.yaml", "# nothing yet\n", &origin());
    assert_eq!((r.status, r.items), (Status::Imported, 0));
    let r = import_text(&nexus, "empty.kip", "", &origin());
    assert_eq!(r.status, Status::Imported);
    let r = import_text(&nexus, "notes.json", "[]", &origin());
    assert_eq!(r.status, Status::Failed);
    assert!(
        r.errors[0]
            .message
            .contains("unsupported file type ('.json')"),
        "{:?}",
        r.errors
    );
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("latin1.yaml");
    std::fs::write(&file, b"- type: Domain\n  name: Caf\xe9\n").expect("write");
    let r = import_path(&nexus, &file, &origin());
    assert_eq!(
        error_lines(&r),
        ["KIP_1001 - 2:12 the file is not UTF-8 text: invalid byte at offset 26"]
    );
    let bom = dir.path().join("bom.yaml");
    std::fs::write(
        &bom,
        "\u{feff}- {type: Domain, name: Bom, description: x}\n",
    )
    .expect("write");
    assert!(import_path(&nexus, &bom, &origin()).is_imported());
    let r = import_path(&nexus, &dir.path().join("missing.kip"), &origin());
    assert_eq!(r.errors[0].code, ErrorCode::InternalError);
}

#[test]
fn a_dry_run_reports_what_would_change_and_writes_nothing() {
    let (_d, nexus) = medical();
    let before = graph(&nexus);
    let options = ImportOptions {
        dry_run: true,
        progress: None,
        originator: None,
        owner: false,
    };
    let r = import_text_with(
        &nexus,
        "d.yaml",
        "- {type: Drug, name: Naproxen, description: An NSAID.}\n",
        &origin(),
        &options,
    );
    assert!(r.is_imported() && r.dry_run);
    assert_eq!(r.stats.concepts_created, 1);
    assert_eq!(graph(&nexus), before);
}

#[test]
fn progress_reports_each_phase_in_order() {
    let (_d, nexus) = fresh();
    let mut text = String::from("- {type: $ConceptType, name: Thing, description: A thing.}\n");
    for i in 0..2500 {
        text.push_str(&format!("- {{type: Thing, name: t{i}}}\n"));
    }
    let seen = std::cell::RefCell::new(Vec::new());
    let record = |p: kip_capsule::Progress| seen.borrow_mut().push(p);
    let options = ImportOptions {
        dry_run: false,
        progress: Some(&record),
        originator: None,
        owner: false,
    };
    let r = import_text_with(&nexus, "big.yaml", &text, &origin(), &options);
    assert!(r.is_imported());
    let seen = seen.into_inner();
    common::assert_progress_is_ordered_and_paced(&seen, text.len() as u64);
    let ends: Vec<(Phase, u64, u64)> = seen
        .iter()
        .filter(|p| p.done == 0 || p.done == p.total)
        .map(|p| (p.phase, p.done, p.total))
        .collect();
    assert_eq!(
        ends,
        [
            (Phase::Parsing, 0, text.len() as u64),
            (Phase::Validating, 0, 2501),
            (Phase::Validating, 2501, 2501),
            (Phase::Applying, 0, 2501),
            (Phase::Applying, 2501, 2501),
        ]
    );
}

#[test]
fn a_capsule_reports_bytes_checked_and_commands_written() {
    let (_d, nexus) = fresh();
    let mut text = String::from(
        "UPSERT { CONCEPT ?t { {type: \"$ConceptType\", name: \"Thing\"} SET ATTRIBUTES { description: \"A thing.\" } } }\n",
    );
    for i in 0..300 {
        text.push_str(&format!(
            "UPSERT {{ CONCEPT ?x {{ {{type: \"Thing\", name: \"t{i}\"}} }} }}\n"
        ));
    }
    let seen = std::cell::RefCell::new(Vec::new());
    let record = |p: kip_capsule::Progress| seen.borrow_mut().push(p);
    let options = ImportOptions {
        dry_run: false,
        progress: Some(&record),
        originator: None,
        owner: false,
    };
    let r = import_text_with(&nexus, "many.kip", &text, &origin(), &options);
    assert!(r.is_imported(), "{:?}", r.errors);
    let seen = seen.into_inner();
    common::assert_progress_is_ordered_and_paced(&seen, text.len() as u64);
    let last = seen.last().expect("reports");
    assert_eq!(
        (last.phase, last.done, last.total),
        (Phase::Applying, 301, 301)
    );
    assert_eq!(last.bytes, text.len() as u64);
    // Parsing ends with every byte taken in; checking starts from the first item.
    assert!(
        seen.iter()
            .any(|p| p.phase == Phase::Parsing && p.bytes == text.len() as u64)
    );
}

#[test]
fn the_report_says_imported_with_counts_and_time() {
    let (_d, nexus) = medical();
    let r = imported_text(
        &nexus,
        "x.yaml",
        "- {type: Drug, name: Naproxen, description: An NSAID.}\n- {type: treats, source: {type: Drug, name: Naproxen}, target: {type: Symptom, name: Headache}}\n",
    );
    let json = r.to_json();
    assert_eq!(json["status"], "imported");
    assert_eq!(json["format"], "yaml");
    assert_eq!(json["items"], 2);
    assert_eq!(json["stats"]["concepts_created"], 1);
    assert_eq!(json["stats"]["propositions_created"], 1);
    assert!(json["duration_ms"].as_f64().is_some());
    assert!(
        json["hash"]
            .as_str()
            .is_some_and(|h| h.starts_with("sha256:") && h.len() == 71)
    );
    assert_eq!(json["errors"], serde_json::json!([]));
}

/// The pipelined import of several files gives, file for file, the reports
/// and the graph that importing them one after the other gives: a file that
/// fails (here one whose types are not defined yet, then one that is not
/// UTF-8) applies nothing and the files after it still import.
#[test]
fn a_pipelined_import_of_several_files_equals_importing_them_in_turn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = dir.path().join("00_broken.kip");
    std::fs::write(
        &broken,
        b"UPSERT { CONCEPT ?x { {type: \"Nope\", name: \"x\"} } }",
    )
    .expect("write");
    let not_utf8 = dir.path().join("15_latin1.kip");
    std::fs::write(&not_utf8, b"// caf\xe9\n").expect("write");
    let ex = examples_dir();
    let paths = vec![
        broken,
        ex.join("10_medical_schema.kip"),
        not_utf8,
        ex.join("11_medical_data.kip"),
        ex.join("20_medical.yaml"),
    ];
    let (_a, one_by_one) = fresh();
    let expected = each_alone(&one_by_one, &paths);
    let (_b, pipelined) = fresh();
    let reports = pipelined_import(&pipelined, &paths);
    assert_eq!(reports.len(), expected.len());
    for (got, want) in reports.iter().zip(&expected) {
        assert_eq!(got.file, want.file);
        assert_eq!(got.status, want.status, "{}", got.file);
        assert_eq!(got.items, want.items, "{}", got.file);
        assert_eq!(got.hash, want.hash, "{}", got.file);
        assert_eq!(error_lines(got), error_lines(want), "{}", got.file);
        assert_eq!(
            serde_json::to_value(got.stats).expect("stats"),
            serde_json::to_value(want.stats).expect("stats")
        );
    }
    assert_eq!(reports[0].status, Status::Failed);
    assert_eq!(reports[2].status, Status::Failed);
    assert_eq!(reports[3].status, Status::Imported);
    assert_eq!(graph(&pipelined), graph(&one_by_one));
}

/// The pipelined import checks each next file ahead, on the reader's
/// thread, against the nexus as it is then; the writer trusts a passing
/// check only while nothing but additive files of the import has been
/// written since. A file that deletes (or defines schema) makes the next
/// file be checked again against what it will meet: its errors are those
/// of importing it after the deleting file, one by one. And a file whose
/// check ahead failed only because the file before creates what it needs
/// imports.
#[test]
fn checks_made_ahead_are_redone_after_a_file_that_deletes() {
    let both = Compared::import(&[
        (
            "1_new.kip",
            r#"UPSERT { CONCEPT { {type: "Symptom", name: "Dizziness"} SET ATTRIBUTES { description: "A spinning feeling." } } }"#.into(),
        ),
        (
            "2_uses_new.kip",
            r#"UPSERT { CONCEPT { {type: "Drug", name: "Meclizine"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Dizziness"}) } } }"#.into(),
        ),
        (
            "3_delete.kip",
            r#"DELETE CONCEPT ?s DETACH WHERE { ?s {type: "Symptom", name: "Fever"} }"#.into(),
        ),
        (
            "4_uses_deleted.kip",
            r#"UPSERT { CONCEPT { {type: "Drug", name: "Paracetamol"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Fever"}) } } }"#.into(),
        ),
        (
            "5_after.kip",
            r#"UPSERT { CONCEPT { {type: "Drug", name: "Ibuprofen"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Dizziness"}) } } }"#.into(),
        ),
    ]);
    let statuses: Vec<Status> = both.expected.iter().map(|r| r.status).collect();
    assert_eq!(
        statuses,
        [
            Status::Imported,
            Status::Imported,
            Status::Imported,
            Status::Failed,
            Status::Imported
        ]
    );
    both.assert_same();
}

/// The writer takes the ids of concepts the checks ahead found instead of
/// looking them up again; a concept deleted and created again (a new id)
/// by a file in between must not be linked by its old id.
#[test]
fn ids_found_ahead_are_not_used_after_a_file_that_recreates_the_concept() {
    let both = Compared::import(&[
        (
            "1_uses.kip",
            r#"UPSERT { CONCEPT { {type: "Drug", name: "Meclizine"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Fever"}) } } }"#.into(),
        ),
        (
            "2_recreate.kip",
            r#"DELETE CONCEPT ?s DETACH WHERE { ?s {type: "Symptom", name: "Fever"} }
UPSERT { CONCEPT { {type: "Symptom", name: "Fever"} SET ATTRIBUTES { description: "Created again." } } }"#.into(),
        ),
        (
            "3_uses_again.kip",
            r#"UPSERT { CONCEPT { {type: "Drug", name: "Paracetamol"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Fever"}) } } }"#.into(),
        ),
        (
            "4_uses_again.kip",
            r#"UPSERT { CONCEPT { {type: "Drug", name: "Ibuprofen"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Fever"}) } } }"#.into(),
        ),
    ]);
    assert!(both.expected.iter().all(|r| r.status == Status::Imported));
    both.assert_same();
    let fever_links = both
        .pipelined
        .read(|g| {
            let fever = g
                .find_concept_by_names("Symptom", "Fever")?
                .expect("Fever exists");
            Ok(g.propositions(None, None, Some(ElementId::Concept(fever)))?
                .len())
        })
        .expect("read");
    // Paracetamol and Ibuprofen treat the new Fever; Meclizine's link went
    // with the old one.
    assert_eq!(fever_links, 2);
}

/// Runs of additive files are applied in one group write. A file that
/// passes every check ahead and still fails when written (here a stale
/// `EXPECT VERSION`, which only the write can see) undoes the group, and
/// the group's files are imported one by one: the same outcome, file for
/// file, as importing them alone.
#[test]
fn a_group_write_that_fails_imports_its_files_one_by_one() {
    let files: Vec<(&str, String)> = ["0.kip", "1.kip", "2.kip", "3.kip", "4.kip", "5.kip"]
        .into_iter()
        .enumerate()
        .map(|(k, name)| {
            let mut text = String::from("UPSERT {\n");
            for i in 0..500 {
                text.push_str(&format!(
                    "  CONCEPT {{ {{type: \"Symptom\", name: \"S{k}-{i}\"}} }}\n  CONCEPT {{ {{type: \"Drug\", name: \"Aspirin\"}} SET PROPOSITIONS {{ (\"has_side_effect\", {{type: \"Symptom\", name: \"S{k}-{i}\"}}) }} }}\n"
                ));
            }
            if k == 2 {
                text.push_str(
                    "  CONCEPT { {type: \"Drug\", name: \"Ibuprofen\"} EXPECT VERSION 99 SET ATTRIBUTES { note: \"stale\" } }\n",
                );
            }
            text.push_str("}\n");
            (name, text)
        })
        .collect();
    let both = Compared::import(&files);
    for (k, want) in both.expected.iter().enumerate() {
        let status = if k == 2 {
            Status::Failed
        } else {
            Status::Imported
        };
        assert_eq!(want.status, status, "{}: {:?}", want.file, want.errors);
    }
    both.assert_same_and_clean();
}

/// The checks ahead look every link up in their snapshot, and a group
/// write trusts the links they found absent while nothing else has been
/// written: links already stored, links an earlier file of the same group
/// wrote and links an earlier group wrote are all still updated, not
/// created again, file for file as importing them alone.
#[test]
fn links_repeated_within_and_across_groups_are_updated_as_alone() {
    let files: Vec<(String, String)> = (0..8usize)
        .map(|k| {
            let mut text = String::from("UPSERT {\n");
            // A link of the medical nexus itself, with new metadata.
            text.push_str(&format!(
                "  CONCEPT {{ {{type: \"Drug\", name: \"Aspirin\"}} SET PROPOSITIONS {{ (\"treats\", {{type: \"Symptom\", name: \"Headache\"}}) WITH METADATA {{ file: {k} }} }} }}\n"
            ));
            for i in 0..400 {
                // New concepts and links; the previous file's repeated.
                for j in [k, k.saturating_sub(1)] {
                    text.push_str(&format!(
                        "  CONCEPT {{ {{type: \"Symptom\", name: \"S{j}-{i}\"}} }}\n  CONCEPT {{ {{type: \"Drug\", name: \"Aspirin\"}} SET PROPOSITIONS {{ (\"has_side_effect\", {{type: \"Symptom\", name: \"S{j}-{i}\"}}) }} }}\n"
                    ));
                }
            }
            text.push_str(&format!("}} WITH METADATA {{ source: \"file {k}\" }}\n"));
            (format!("{k}.kip"), text)
        })
        .collect();
    let files: Vec<(&str, String)> = files.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let both = Compared::import(&files);
    for want in &both.expected {
        assert_eq!(
            want.status,
            Status::Imported,
            "{}: {:?}",
            want.file,
            want.errors
        );
    }
    // The first file creates its 400 links; each later file creates 400
    // and updates the previous file's 400 and Aspirin's link.
    assert_eq!(both.expected[0].stats.propositions_created, 400);
    assert_eq!(both.expected[3].stats.propositions_created, 400);
    assert_eq!(both.expected[3].stats.propositions_updated, 401);
    both.assert_same_and_clean();
}

/// Files applied together in one write report their progress before the
/// first of them is done: each report names its file.
#[test]
fn progress_of_files_applied_together_names_each_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let paths: Vec<std::path::PathBuf> = (0..4usize)
        .map(|k| {
            let mut text = String::from("UPSERT {\n");
            for i in 0..(100 * (k + 1)) {
                text.push_str(&format!(
                    "  CONCEPT {{ {{type: \"Symptom\", name: \"P{k}-{i}\"}} }}\n  CONCEPT {{ {{type: \"Drug\", name: \"Aspirin\"}} SET PROPOSITIONS {{ (\"has_side_effect\", {{type: \"Symptom\", name: \"P{k}-{i}\"}}) }} }}\n"
                ));
            }
            text.push_str("}\n");
            let path = dir.path().join(format!("{k}.kip"));
            std::fs::write(&path, text).expect("write");
            path
        })
        .collect();
    let (_n, nexus) = medical();
    let seen = std::sync::Mutex::new(Vec::new());
    let record = |p: kip_capsule::Progress| seen.lock().expect("lock").push(p);
    let options = ImportOptions {
        progress: Some(&record),
        ..ImportOptions::default()
    };
    let mut reports = Vec::new();
    kip_capsule::import_paths_with(&nexus, &paths, &origin(), &options, |r| reports.push(r));
    assert!(reports.iter().all(|r| r.status == Status::Imported));
    let seen = seen.into_inner().expect("lock");
    for (k, path) in paths.iter().enumerate() {
        let size = std::fs::metadata(path).expect("size").len();
        let mine: Vec<_> = seen.iter().filter(|p| p.file == Some(k)).collect();
        assert!(!mine.is_empty(), "no progress for file {k}");
        assert!(mine.iter().all(|p| p.total_bytes == size), "{k}: {mine:?}");
        // Applied: its one command.
        let last = mine.last().expect("a report");
        assert_eq!((last.phase, last.done, last.total), (Phase::Applying, 1, 1));
    }
    assert!(seen.iter().all(|p| p.file.is_some_and(|k| k < paths.len())));
}

/// The same files imported one by one into one medical nexus and by the
/// pipelined import into another.
struct Compared {
    _dirs: [tempfile::TempDir; 3],
    alone: kip_nexus::Nexus,
    pipelined: kip_nexus::Nexus,
    expected: Vec<ImportReport>,
    reports: Vec<ImportReport>,
}

impl Compared {
    fn import(files: &[(&str, String)]) -> Compared {
        let dir = tempfile::tempdir().expect("tempdir");
        let paths: Vec<std::path::PathBuf> = files
            .iter()
            .map(|(name, text)| {
                let p = dir.path().join(name);
                std::fs::write(&p, text).expect("write");
                p
            })
            .collect();
        let (a, alone) = medical();
        let expected = each_alone(&alone, &paths);
        let (b, pipelined) = medical();
        let reports = pipelined_import(&pipelined, &paths);
        Compared {
            _dirs: [dir, a, b],
            alone,
            pipelined,
            expected,
            reports,
        }
    }

    /// [`Compared::assert_same`], and the pipelined nexus's store keeps
    /// every invariant.
    fn assert_same_and_clean(&self) {
        self.assert_same();
        let violations = self.pipelined.check_store().expect("check").violations;
        assert!(violations.is_empty(), "{violations:#?}");
    }

    /// Every file has the same outcome both ways, and so has the graph.
    fn assert_same(&self) {
        assert_eq!(self.reports.len(), self.expected.len());
        for (got, want) in self.reports.iter().zip(&self.expected) {
            assert_eq!(got.file, want.file);
            assert_eq!(got.status, want.status, "{}: {:?}", got.file, got.errors);
            assert_eq!(got.stats, want.stats, "{}", got.file);
            assert_eq!(error_lines(got), error_lines(want), "{}", got.file);
        }
        assert_eq!(graph(&self.pipelined), graph(&self.alone));
    }
}

/// Each file imported alone, one after the other.
fn each_alone(nexus: &kip_nexus::Nexus, paths: &[std::path::PathBuf]) -> Vec<ImportReport> {
    paths
        .iter()
        .map(|p| import_path(nexus, p, &origin()))
        .collect()
}

/// The files imported by the pipelined import (`import_paths_with`).
fn pipelined_import(nexus: &kip_nexus::Nexus, paths: &[std::path::PathBuf]) -> Vec<ImportReport> {
    let mut reports = Vec::new();
    kip_capsule::import_paths_with(nexus, paths, &origin(), &ImportOptions::default(), |r| {
        reports.push(r)
    });
    reports
}

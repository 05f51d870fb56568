//! The capsule checks' errors, pinned whole (code, message, hint,
//! suggestions, position) on files that make every mistake the checks
//! look for, several times over: a faster way to check must report exactly
//! the same, in the same order.

mod common;

use common::*;
use kip_capsule::{ImportReport, Status, import_text};
use kip_nexus::Nexus;

/// The report's errors as pretty JSON, one object per error.
fn errors_json(r: &ImportReport) -> String {
    serde_json::to_string_pretty(&r.errors).expect("errors serialize")
}

#[track_caller]
fn failed(nexus: &Nexus, name: &str, text: &str) -> ImportReport {
    let before = graph(nexus);
    let r = import_text(nexus, name, text, &origin());
    assert_eq!(r.status, Status::Failed, "{}", errors_json(&r));
    assert_eq!(graph(nexus), before, "a failed import changed the graph");
    r
}

/// Unknown types and predicates, ends not found (the same one twice,
/// by name and by id, created only later in the file), ends of the wrong
/// type in either role, links used as ends (stored, created earlier in the
/// file, missing), definitions used before they are made, and ends that
/// are fine (stored, created earlier, through handles).
const CAPSULE: &str = r#"// Many mistakes, and many things that are fine.
UPSERT {
  CONCEPT ?a { {type: "Drugg", name: "X"} }
  CONCEPT ?b {
    {type: "Drug", name: "Naproxen"}
    SET ATTRIBUTES { description: "An NSAID." }
    SET PROPOSITIONS {
      ("treats", {type: "Symptom", name: "Headach"})
      ("treats", {type: "Symptom", name: "Headach"})
      ("treat", {type: "Symptom", name: "Headache"})
      ("treats", {type: "DrugClass", name: "NSAID"})
      ("treats", {type: "Symptom", name: "Fever"})
      ("treats", {type: "Symptom", name: "Fever"})
      ("treats", {id: "C:999999"})
      ("treats", {id: "P:999999"})
      ("treats", {type: "Symptom", name: "Nausea"})
      ("treats", {type: "Symptm", name: "Fever"})
      ("has_side_effect", {type: "Symptom", name: "Brain Fog"})
    }
  }
  CONCEPT ?s {
    {type: "Symptom", name: "Fever"}
    SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headache"}) }
  }
  CONCEPT ?n { {type: "Symptom", name: "Nausea"} }
  CONCEPT ?m {
    {type: "Drug", name: "Aspirin"}
    SET PROPOSITIONS {
      ("treats", {type: "Symptom", name: "Nausea"})
      ("treats", {type: "Symptom", name: "Nausea"})
      ("treats", ?n)
      ("is_class_of", {type: "DrugClass", name: "NSAID"})
      ("is_class_of", {type: "Drug", name: "Ibuprofen"})
    }
  }
  PROPOSITION ?p {
    ({type: "User", name: "Ghost"}, "stated", ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Itch"}))
  }
  PROPOSITION ?q {
    ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Nausea"})
  }
  CONCEPT ?u {
    {type: "User", name: "u1"}
    SET PROPOSITIONS {
      ("stated", ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Nausea"}))
      ("stated", ({type: "Drug", name: "Naproxen"}, "has_side_effect", {type: "Symptom", name: "Brain Fog"}))
      ("stated", ({type: "Drug", name: "Aspirin"}, "has_side_effect", {type: "Symptom", name: "Fever"}))
      ("stated", ({type: "Drug", name: "Aspirin"}, "has_side_effec", {type: "Symptom", name: "Fever"}))
      ("stated", ?q)
      ("stated", {type: "User", name: "u1"})
      ("treats", ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Nausea"}))
    }
  }
  CONCEPT ?early {
    {type: "Later", name: "L1"}
    SET PROPOSITIONS { ("later_link", {type: "Symptom", name: "Fever"}) }
  }
  CONCEPT ?later {
    {type: "$ConceptType", name: "Later"}
    SET ATTRIBUTES { description: "Defined after its first use." }
  }
  CONCEPT ?later_link {
    {type: "$PropositionType", name: "later_link"}
    SET ATTRIBUTES { description: "Defined after its first use.", subject_types: ["Later"], object_types: ["Symptom"] }
  }
  CONCEPT ?fine {
    {type: "Later", name: "L2"}
    SET PROPOSITIONS {
      ("later_link", {type: "Symptom", name: "Fever"})
      ("later_link", {type: "Drug", name: "Aspirin"})
    }
  }
}
"#;

#[test]
fn a_capsule_with_every_mistake_reports_each_exactly() {
    let (_d, nexus) = medical();
    let r = failed(&nexus, "many.kip", CAPSULE);
    insta::assert_snapshot!(errors_json(&r));
}

/// The same capsule with every mistake taken out imports, and a second
/// import of it changes nothing: the checks let through what is right.
#[test]
fn a_capsule_of_ends_stored_created_earlier_and_through_handles_imports() {
    let (_d, nexus) = medical();
    let text = r#"UPSERT {
  CONCEPT ?n { {type: "Symptom", name: "Nausea"} }
  CONCEPT ?b {
    {type: "Drug", name: "Naproxen"}
    SET ATTRIBUTES { description: "An NSAID." }
    SET PROPOSITIONS {
      ("treats", {type: "Symptom", name: "Fever"})
      ("treats", {type: "Symptom", name: "Fever"})
      ("treats", {type: "Symptom", name: "Nausea"})
      ("treats", ?n)
      ("has_side_effect", {type: "Symptom", name: "Brain Fog"})
    }
  }
  PROPOSITION ?q {
    ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Nausea"})
  }
  CONCEPT ?u {
    {type: "User", name: "u1"}
    SET PROPOSITIONS {
      ("stated", ({type: "Drug", name: "Naproxen"}, "has_side_effect", {type: "Symptom", name: "Brain Fog"}))
      ("stated", ({type: "Drug", name: "Aspirin"}, "treats", {type: "Symptom", name: "Nausea"}))
      ("stated", ?q)
    }
  }
}
"#;
    let r = imported_text(&nexus, "fine.kip", text);
    assert_eq!(r.stats.propositions_created, 6, "{r:?}");
    let again = imported_text(&nexus, "fine.kip", text);
    assert_eq!(again.stats.propositions_created, 0, "{again:?}");
}

/// A bundle (strict): links given two values for one key, written then
/// deleted, deleted then written; concepts deleted then used as ends; the
/// same missing end many times.
const BUNDLE: &str = r#"# Contradictions about links and ends.
- type: treats
  source: {type: Drug, name: Aspirin}
  target: {type: Symptom, name: Fever}
  metadata: {confidence: 0.5}
- type: treats
  source: {type: Drug, name: Aspirin}
  target: {type: Symptom, name: Fever}
  metadata: {confidence: 0.9}
- type: treats
  source: {type: Drug, name: Aspirin}
  target: {type: Symptom, name: Fever}
  action: delete
- type: treats
  source: {type: Drug, name: Aspirin}
  target: {type: Symptom, name: Fever}
- type: Symptom
  name: Brain Fog
  action: delete
- type: treats
  source: {type: Drug, name: Aspirin}
  target: {type: Symptom, name: Brain Fog}
- type: has_side_effect
  source: {type: Drug, name: Aspirin}
  target: {type: Symptom, name: Brain Fog}
- type: treats
  source: {type: Drug, name: Aspirn}
  target: {type: Symptom, name: Headache}
- type: treats
  source: {type: Drug, name: Aspirn}
  target: {type: Symptom, name: Headache}
- type: treats
  source: {type: Symptom, name: Headache}
  target: {type: Drug, name: Aspirin}
- type: stated
  source: {type: User, name: Nobody}
  target:
    type: treats
    source: {type: Drug, name: Aspirin}
    target: {type: Symptom, name: Stomach Upset}
"#;

#[test]
fn a_bundle_with_contradictions_about_links_reports_each_exactly() {
    let (_d, nexus) = medical();
    let r = failed(&nexus, "many.yaml", BUNDLE);
    insta::assert_snapshot!(errors_json(&r));
}

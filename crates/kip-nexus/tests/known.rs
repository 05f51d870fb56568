//! Concept ids a caller looked up before a write (`RunOptions::with_known`,
//! what the capsule pipeline hands over from its checks ahead): the write
//! takes them only while the nexus is at the change the caller named.

use crate::common;

use std::sync::Arc;

use common::fixture;
use kip_nexus::bulk::KnownConcepts;
use kip_nexus::{ElementId, Nexus, Origin, RunOptions};

const LINK: &str = r#"UPSERT { CONCEPT { {type: "Drug", name: "Meclizine"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Fever"}) } } }"#;

fn concept(nexus: &Nexus, ty: &str, name: &str) -> kip_nexus::ConceptId {
    nexus
        .read(|g| g.find_concept_by_names(ty, name))
        .expect("read")
        .expect("the concept exists")
}

/// What Meclizine treats, by name.
fn treated(nexus: &Nexus) -> Vec<String> {
    nexus
        .read(|g| {
            let drug = g
                .find_concept_by_names("Drug", "Meclizine")?
                .expect("Meclizine");
            let mut names = Vec::new();
            for (_, _, _, object) in g.propositions(Some(ElementId::Concept(drug)), None, None)? {
                if let ElementId::Concept(c) = object {
                    names.push(g.concept(c)?.expect("object").name.clone());
                }
            }
            Ok(names)
        })
        .expect("read")
}

fn run(nexus: &Nexus, options: &RunOptions) {
    let commands = kip_lang::parse(LINK).expect("parses");
    let commands = kip_lang::bind(LINK, commands, &serde_json::Map::new()).expect("binds");
    nexus.run(LINK, &commands, options).expect("runs");
}

/// Names Fever by Headache's id: the write follows the caller's ids when
/// the change sequence matches (so the look-up really is skipped), and
/// looks the name up itself when another write came in between.
fn known_fever(nexus: &Nexus) -> Arc<KnownConcepts> {
    let mut known = KnownConcepts::default();
    known.insert("Symptom", "Fever", concept(nexus, "Symptom", "Headache"));
    Arc::new(known)
}

#[test]
fn known_ids_are_taken_at_the_change_the_caller_named() {
    let (_dir, nexus) = fixture();
    let seq = nexus.last_change_seq().expect("seq");
    let options = RunOptions::new(Origin::new("test")).with_known(known_fever(&nexus), seq);
    run(&nexus, &options);
    assert_eq!(treated(&nexus), ["Headache"]);
}

#[test]
fn known_ids_are_ignored_after_another_write() {
    let (_dir, nexus) = fixture();
    let seq = nexus.last_change_seq().expect("seq");
    let known = known_fever(&nexus);
    // Another write between the look-ups and this one.
    let other = r#"UPSERT { CONCEPT { {type: "Symptom", name: "Dizziness"} } }"#;
    let commands = kip_lang::parse(other).expect("parses");
    let commands = kip_lang::bind(other, commands, &serde_json::Map::new()).expect("binds");
    nexus
        .run(other, &commands, &RunOptions::new(Origin::new("other")))
        .expect("runs");
    assert!(nexus.last_change_seq().expect("seq") > seq);
    let options = RunOptions::new(Origin::new("test")).with_known(known, seq);
    run(&nexus, &options);
    assert_eq!(treated(&nexus), ["Fever"]);
}

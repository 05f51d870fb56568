//! The reader's checks ahead ([`super::ahead`]) against the medical
//! example graph.

use std::sync::atomic::{AtomicU64, Ordering};

use kip_nexus::bulk::LinkKey;
use kip_nexus::{ElementId, Nexus, Origin};

use super::ahead::{self, Ahead};
use super::kip::Parsed;

/// The checks ahead of a file, as the reader of a pipelined import
/// makes them when nothing else was written since the import began.
fn parse_and_check_kip(nexus: &Nexus, text: &str) -> Parsed {
    let clean_since = AtomicU64::new(0);
    ahead::parse_and_check_kip(&mut Ahead::new(nexus, &clean_since, false), text)
}

fn medical() -> (tempfile::TempDir, Nexus) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus opens");
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../capsules/examples");
    for f in ["10_medical_schema.kip", "11_medical_data.kip"] {
        let report = super::import_path(&nexus, &examples.join(f), &Origin::new("test"));
        assert!(report.is_imported(), "{f}: {:?}", report.errors);
    }
    (dir, nexus)
}

fn key(nexus: &Nexus, drug: &str, predicate: &str, symptom: &str) -> LinkKey {
    nexus
        .read(|g| {
            let s = g.find_concept_by_names("Drug", drug)?.expect("drug");
            let o = g
                .find_concept_by_names("Symptom", symptom)?
                .expect("symptom");
            let p = g.predicate_id(predicate)?.expect("predicate");
            Ok((ElementId::Concept(s), p, ElementId::Concept(o)))
        })
        .expect("read")
}

/// The checks ahead look every upserted link up in their snapshot and
/// hand over the ones they found stored: a link between stored
/// concepts that is stored, one that is not, one to a concept the file
/// creates.
#[test]
fn the_checks_ahead_list_the_upserted_links_they_found_stored() {
    let (_dir, nexus) = medical();
    let text = r#"UPSERT {
  CONCEPT { {type: "Symptom", name: "Vertigo"} }
  CONCEPT { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headache"}) ("has_side_effect", {type: "Symptom", name: "Headache"}) ("has_side_effect", {type: "Symptom", name: "Vertigo"}) } }
}"#;
    let parsed = parse_and_check_kip(&nexus, text);
    let known = parsed
        .known
        .expect("an additive file that passed its checks");
    let at = nexus.last_change_seq().expect("seq");
    assert_eq!(known.links_checked_at(), Some(at));
    assert!(known.link_was_stored(&key(&nexus, "Aspirin", "treats", "Headache")));
    assert!(!known.link_was_stored(&key(&nexus, "Aspirin", "has_side_effect", "Headache")));
}

/// The checks follow a handle to its concept; an end they cannot
/// follow (a handle the file never defines) leaves no claim about the
/// file's links, so the write looks each one up itself.
#[test]
fn handles_are_followed_and_an_unknown_end_leaves_the_links_unchecked() {
    let (_dir, nexus) = medical();
    let handle = r#"UPSERT {
  CONCEPT ?h { {type: "Symptom", name: "Headache"} }
  CONCEPT { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("treats", ?h) } }
}"#;
    let known = parse_and_check_kip(&nexus, handle).known.expect("checked");
    assert!(known.links_checked_at().is_some());
    assert!(known.link_was_stored(&key(&nexus, "Aspirin", "treats", "Headache")));
    let unknown = r#"UPSERT {
  CONCEPT { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headache"}) ("treats", ?nowhere) } }
}"#;
    let parsed = parse_and_check_kip(&nexus, unknown);
    assert_eq!(parsed.known.and_then(|k| k.links_checked_at()), None);
}

/// The reader remembers the concepts its checks found from one file to
/// the next, and a check that used them counts as made in the snapshot
/// they were found in; once something other than the import's additive
/// files is written (the writer moves `clean_since`), it forgets them.
#[test]
fn the_checks_ahead_remember_found_concepts_until_another_write_comes_in() {
    let (_dir, nexus) = medical();
    let text = r#"UPSERT {
  CONCEPT { {type: "Drug", name: "Aspirin"} SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headache"}) } }
}"#;
    let first = nexus.last_change_seq().expect("seq");
    let clean_since = AtomicU64::new(first);
    let mut ahead = Ahead::new(&nexus, &clean_since, false);
    let parsed = ahead::parse_and_check_kip(&mut ahead, text);
    assert_eq!(parsed.checked_at, Some(first));
    let aspirin = key(&nexus, "Aspirin", "treats", "Headache").0;
    let found = |parsed: &Parsed| {
        let known = parsed.known.as_ref().expect("an additive file that passed");
        known.rewind();
        let id = known.get_in_order("Drug", "Aspirin").expect("listed");
        id.map(ElementId::Concept)
    };
    assert_eq!(found(&parsed), Some(aspirin));
    // An additive write of the import: what was found still holds.
    let added = r#"UPSERT { CONCEPT { {type: "Drug", name: "Zinc"} } }"#;
    let report = super::import_text(&nexus, "added.kip", added, &Origin::new("test"));
    assert!(report.is_imported(), "{:?}", report.errors);
    let second = nexus.last_change_seq().expect("seq");
    assert!(second > first);
    let parsed = ahead::parse_and_check_kip(&mut ahead, text);
    assert_eq!(parsed.checked_at, Some(first));
    assert_eq!(found(&parsed), Some(aspirin));
    // Another write came in: the checks start afresh.
    clean_since.store(second, Ordering::Relaxed);
    let parsed = ahead::parse_and_check_kip(&mut ahead, text);
    assert_eq!(parsed.checked_at, Some(second));
    assert_eq!(found(&parsed), Some(aspirin));
}

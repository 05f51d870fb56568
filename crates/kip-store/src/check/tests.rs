//! The checks of each invariant, shown to fire on a store tampered with
//! underneath the API.

use serde_json::{Map, json};

use super::*;
use crate::codec::concept_keys::type_name_key;
use crate::codec::element;
use crate::codec::posting::ordinal;
use crate::codec::stat_key::StatKey;
use crate::ids::{ConceptId, ElementId};
use crate::names::Namespace;
use crate::{ConceptRecord, PropositionRecord};

/// A store with concepts, propositions (one about a proposition),
/// documents, a deletion and change-log entries.
fn sample() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    store
        .write(|txn| {
            let drug = store.intern(txn, Namespace::ConceptType, "Drug")?;
            let treats = store.intern(txn, Namespace::Predicate, "treats")?;
            let mut attributes = Map::new();
            attributes.insert("dose".to_owned(), json!({"mg": [100, 200]}));
            let mut ids = Vec::new();
            for name in ["Aspirin", "Headache", "Fever", "阿司匹林"] {
                let record = ConceptRecord {
                    type_id: drug,
                    name: name.to_owned(),
                    attributes: attributes.clone(),
                    ..Default::default()
                };
                let id = store.create_concept(txn, &record)?;
                store.index_document(
                    txn,
                    id.into(),
                    &[(name.to_lowercase(), 2), ("drug".to_owned(), 1)],
                    3,
                )?;
                ids.push(id);
            }
            let p = store.create_proposition(
                txn,
                &PropositionRecord {
                    subject: ids[0].into(),
                    predicate: treats,
                    object: ids[1].into(),
                    attributes: Map::new(),
                    metadata: Map::new(),
                },
            )?;
            let about = store.intern(txn, Namespace::Predicate, "about")?;
            store.create_proposition(
                txn,
                &PropositionRecord {
                    subject: ids[2].into(),
                    predicate: about,
                    object: p.into(),
                    attributes: Map::new(),
                    metadata: Map::new(),
                },
            )?;
            store.remove_document(txn, ids[3].into())?;
            store.delete_concept(txn, ids[3])?;
            store.append_change(txn, &json!({"origin": "test"}))?;
            store.append_change(txn, &json!({"origin": "test"}))?;
            Ok::<_, StoreError>(())
        })
        .expect("write");
    (dir, store)
}

fn invariants(store: &Store) -> Vec<(&'static str, &'static str)> {
    let report = store.check().expect("check");
    assert_eq!(report.ok, report.violations.is_empty());
    report
        .violations
        .iter()
        .map(|v| (v.invariant, v.database))
        .collect()
}

/// Tampers with raw bytes, bypassing every rule of the store.
fn tamper(store: &Store, f: impl Fn(&Store, &mut heed::RwTxn<'_>) -> heed::Result<()>) {
    store.write(|txn| f(store, txn).lmdb()).expect("tamper");
}

#[test]
fn a_store_written_through_its_api_passes() {
    let (_d, store) = sample();
    let report = store.check().expect("check");
    assert!(report.ok, "{report:#?}");
    assert_eq!(report.counts.concepts, 3);
    assert_eq!(report.counts.propositions, 2);
    assert_eq!(report.counts.documents, 3);
    assert_eq!(report.counts.changes, 2);
    assert_eq!(report.counts.last_change_seq, 2);
}

#[test]
fn a_missing_or_stray_attribute_index_entry_is_reported() {
    let (_d, store) = sample();
    store
        .write(|txn| {
            let drug = store.intern(txn, Namespace::ConceptType, "Drug")?;
            let mut attributes = Map::new();
            attributes.insert("dose_mg".to_owned(), json!(500));
            let record = ConceptRecord {
                type_id: drug,
                name: "Ibuprofen".to_owned(),
                attributes,
                ..Default::default()
            };
            store.create_concept(txn, &record).map(|_| ())
        })
        .expect("write");
    assert!(invariants(&store).is_empty());
    tamper(&store, |s, txn| {
        raw(s.db.attr_index).clear(txn)?;
        raw(s.db.attr_index).put(
            txn,
            b"\x00\x00\x00\x01\x01\x00\x00\x00\x09\x01\x01\x00\x00\x00\x00\x00\x00\x00\x09",
            b"",
        )
    });
    let found = invariants(&store);
    assert!(
        found.contains(&("record-has-index-entry", "attr_index")),
        "{found:?}"
    );
    assert!(
        found.contains(&("index-entry-has-record", "attr_index")),
        "{found:?}"
    );
}

/// The marker key of an array or object value (format 6) is checked like
/// every other attribute-index key: the sample's `dose` values are objects.
#[test]
fn a_missing_marker_of_an_object_value_is_reported() {
    let (_d, store) = sample();
    assert!(invariants(&store).is_empty());
    tamper(&store, |s, txn| {
        let markers: Vec<Vec<u8>> = raw(s.db.attr_index)
            .iter(txn)?
            .filter_map(|e| e.ok().map(|(k, _)| k.to_vec()))
            .filter(|k| k.len() == 18 && k[9] == 0x04)
            .collect();
        assert!(!markers.is_empty(), "the sample's object values");
        raw(s.db.attr_index).delete(txn, &markers[0]).map(|_| ())
    });
    assert_eq!(
        invariants(&store),
        vec![("record-has-index-entry", "attr_index")]
    );
}

#[test]
fn a_missing_or_stray_index_entry_is_reported() {
    let (_d, store) = sample();
    tamper(&store, |s, txn| {
        raw(s.db.pos).clear(txn)?;
        raw(s.db.concepts_by_name).put(txn, b"Ghost\x00\x00\x00\x00\x00\x00\x00\x00\x09", b"")
    });
    let found = invariants(&store);
    assert_eq!(
        found
            .iter()
            .filter(|v| **v == ("record-has-index-entry", "pos"))
            .count(),
        2,
        "{found:?}"
    );
    assert!(
        found.contains(&("index-entry-has-record", "concepts_by_name")),
        "{found:?}"
    );
}

#[test]
fn an_index_entry_pointing_at_another_record_is_reported() {
    let (_d, store) = sample();
    tamper(&store, |s, txn| {
        let key = type_name_key(1, "Aspirin");
        raw(s.db.concept_keys).put(txn, &key, &2u64.to_be_bytes())
    });
    assert_eq!(
        invariants(&store),
        [("index-entry-matches-record", "concept_keys")]
    );
}

#[test]
fn a_counter_that_differs_from_its_count_is_reported() {
    let (_d, store) = sample();
    tamper(&store, |s, txn| {
        raw(s.db.stats).put(txn, &StatKey::Concepts.encode(), &7u64.to_be_bytes())
    });
    let found = store.check().expect("check");
    assert_eq!(found.violations.len(), 1, "{found:#?}");
    assert_eq!(found.violations[0].invariant, "counter-equals-count");
    assert!(found.violations[0].detail.contains("is 7, but counts 3"));
}

#[test]
fn postings_that_do_not_match_the_documents_are_reported() {
    let (_d, store) = sample();
    tamper(&store, |s, txn| {
        // The block of "drug" loses its postings, "fever" claims five
        // documents, and "drug" is looked up under another term's id.
        let drug = s.db.terms.get(txn, "drug")?.expect("indexed");
        let fever = s.db.terms.get(txn, "fever")?.expect("indexed");
        let first = ordinal(ElementId::Concept(ConceptId(1)));
        raw(s.db.postings).delete(txn, &crate::codec::posting::block_key(drug, first))?;
        s.db.term_ids.put(
            txn,
            &fever,
            &crate::codec::posting::encode_term_entry(5, "fever"),
        )?;
        s.db.terms.put(txn, "drug", &fever)
    });
    let found = invariants(&store);
    assert!(
        found.contains(&("posting-matches-document", "postings")),
        "{found:?}"
    );
    assert!(found.contains(&("term-frequency", "term_ids")), "{found:?}");
    assert!(found.contains(&("term-frequency", "terms")), "{found:?}");
}

#[test]
fn a_gap_in_the_change_log_and_a_dangling_end_are_reported() {
    let (_d, store) = sample();
    tamper(&store, |s, txn| {
        s.db.changes.put(txn, &5, &json!({}))?;
        // The object of P:2 is P:1: remove P:1's record only.
        raw(s.db.propositions).delete(txn, &1u64.to_be_bytes())?;
        Ok(())
    });
    let found = invariants(&store);
    assert!(
        found.contains(&("change-log-order", "changes")),
        "{found:?}"
    );
    assert!(
        found.contains(&("proposition-ends-exist", "propositions")),
        "{found:?}"
    );
    assert!(
        found.contains(&("index-entry-has-record", "spo")),
        "{found:?}"
    );
    assert!(
        found.contains(&("counter-equals-count", "stats")),
        "{found:?}"
    );
}

#[test]
fn trace_entries_and_their_element_index_are_checked() {
    let (_d, store) = sample();
    store
        .write(|txn| {
            let slot = store.next_trace_slot(txn, "tester")?;
            store.put_trace(
                txn,
                slot.id,
                &json!({"type": "TRACE", "message": "a write"}),
                &[crate::ElementId::Concept(crate::ConceptId(1))],
            )
        })
        .expect("a trace entry");
    assert!(store.check().expect("check").ok, "{:?}", invariants(&store));
    tamper(&store, |s, txn| {
        // The element index loses the entry's one element, and a stray
        // key points at an entry that does not list it.
        raw(s.db.trace_elements).clear(txn)?;
        let mut stray = element::encode(crate::ElementId::Concept(crate::ConceptId(2))).to_vec();
        stray.extend_from_slice(&1u64.to_be_bytes());
        raw(s.db.trace_elements).put(txn, &stray, &[])?;
        raw(s.db.trace).put(txn, &99u64.to_be_bytes(), b"not json")?;
        Ok(())
    });
    let found = invariants(&store);
    assert!(
        found.contains(&("trace-index", "trace_elements")),
        "{found:?}"
    );
    assert!(found.contains(&("trace-order", "trace")), "{found:?}");
    assert!(found.contains(&("trace-entry", "trace")), "{found:?}");
}

//! The store's rules, one test each: uniqueness, referential integrity,
//! cascades over higher-order links, interning, the text index, state, the
//! change log and counters.

use kip_store::{
    ConceptId, ConceptRecord, ElementId, MAX_CHANGES, Namespace, PropositionId, PropositionRecord,
    RwTxn, Store, StoreError,
};
use serde_json::{Map, json};

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    (dir, store)
}

fn concept(type_id: u32, name: &str) -> ConceptRecord {
    ConceptRecord {
        type_id,
        name: name.to_owned(),
        ..Default::default()
    }
}

fn link(s: impl Into<ElementId>, p: u32, o: impl Into<ElementId>) -> PropositionRecord {
    PropositionRecord {
        subject: s.into(),
        predicate: p,
        object: o.into(),
        attributes: Map::new(),
        metadata: Map::new(),
    }
}

/// Runs `f` in a write and returns its result (errors included) after the
/// write committed or aborted.
/// How [`index_all`] indexes: one document at a time (what the batch
/// paths must equal), as one batch of documents, or as one batch over a
/// table of terms.
#[derive(Clone, Copy, Debug)]
enum How {
    OneByOne,
    Batch,
    Table,
}

const EVERY_WAY: [How; 3] = [How::OneByOne, How::Batch, How::Table];

/// `docs` as a [`kip_store::DocumentBatch`]: each distinct text added
/// once, in order of first use.
fn to_table(docs: &[kip_store::NewDocument]) -> kip_store::DocumentBatch {
    let mut table = kip_store::DocumentBatch::default();
    let mut slots = std::collections::HashMap::new();
    for d in docs {
        let mut terms: Vec<(u32, u32)> = d
            .terms
            .iter()
            .map(|(t, tf)| {
                let slot = *slots
                    .entry(t.clone())
                    .or_insert_with(|| table.add_term(t.clone()));
                (slot, *tf)
            })
            .collect();
        table.push(d.element, d.len, &mut terms);
    }
    table
}

fn index_all(store: &Store, docs: &[kip_store::NewDocument], how: How) -> Result<(), StoreError> {
    write(store, |txn| match how {
        How::Batch => store.index_documents(txn, docs),
        How::Table => store.index_document_batch(txn, to_table(docs)),
        How::OneByOne => {
            for d in docs {
                store.index_document(txn, d.element, &d.terms, d.len)?;
            }
            Ok(())
        }
    })
}

fn write<T>(
    store: &Store,
    f: impl FnMut(&mut RwTxn<'_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    store.write(f)
}

#[test]
fn type_and_name_are_unique_and_renames_move_the_indexes() {
    let (_dir, store) = open();
    let (drug, a, b) = write(&store, |txn| {
        let drug = store.intern(txn, Namespace::ConceptType, "Drug")?;
        let a = store.create_concept(txn, &concept(drug, "Aspirin"))?;
        let b = store.create_concept(txn, &concept(drug, "Ibuprofen"))?;
        Ok((drug, a, b))
    })
    .expect("write");
    let duplicate = write(&store, |txn| {
        store.create_concept(txn, &concept(drug, "Aspirin"))
    });
    assert!(
        matches!(&duplicate, Err(StoreError::DuplicateConcept { existing, .. }) if *existing == a),
        "{duplicate:?}"
    );
    // The same name under another type is another concept.
    let symptom_aspirin = write(&store, |txn| {
        let symptom = store.intern(txn, Namespace::ConceptType, "Symptom")?;
        store.create_concept(txn, &concept(symptom, "Aspirin"))
    })
    .expect("write");
    let renamed_onto_a = write(&store, |txn| {
        store.update_concept(txn, b, &concept(drug, "Aspirin"))
    });
    assert!(matches!(
        renamed_onto_a,
        Err(StoreError::DuplicateConcept { .. })
    ));
    write(&store, |txn| {
        store.update_concept(txn, b, &concept(drug, "Advil"))
    })
    .expect("rename");
    store
        .read(|txn| {
            assert_eq!(store.find_concept(txn, drug, "Ibuprofen")?, None);
            assert_eq!(store.find_concept(txn, drug, "Advil")?, Some(b));
            assert_eq!(
                store.concepts_by_name(txn, "Aspirin")?,
                vec![a, symptom_aspirin]
            );
            assert_eq!(store.concepts_by_name(txn, "Advil")?, vec![b]);
            assert_eq!(store.concepts_by_type(txn, drug, None)?, vec![a, b]);
            assert_eq!(store.concepts_by_type(txn, drug, Some(a))?, vec![b]);
            assert_eq!(
                store.concepts_by_type(txn, drug, Some(ConceptId(u64::MAX)))?,
                vec![]
            );
            assert_eq!(store.concept_count_by_type(txn, drug)?, 2);
            Ok::<_, StoreError>(())
        })
        .expect("read");
    let missing = write(&store, |txn| {
        store.update_concept(txn, ConceptId(99), &concept(drug, "X"))
    });
    assert!(matches!(missing, Err(StoreError::NotFound { .. })));
}

#[test]
fn a_triple_is_unique_and_its_ends_must_exist() {
    let (_dir, store) = open();
    let (p, a, b) = write(&store, |txn| {
        let t = store.intern(txn, Namespace::ConceptType, "T")?;
        let p = store.intern(txn, Namespace::Predicate, "p")?;
        let a = store.create_concept(txn, &concept(t, "a"))?;
        let b = store.create_concept(txn, &concept(t, "b"))?;
        Ok((p, a, b))
    })
    .expect("write");
    let first = write(&store, |txn| store.create_proposition(txn, &link(a, p, b))).expect("create");
    let again = write(&store, |txn| store.create_proposition(txn, &link(a, p, b)));
    assert!(
        matches!(&again, Err(StoreError::DuplicateProposition { existing }) if *existing == first),
        "{again:?}"
    );
    let dangling = write(&store, |txn| {
        store.create_proposition(txn, &link(a, p, ConceptId(99)))
    });
    assert!(
        matches!(dangling, Err(StoreError::NotFound { element }) if element == ConceptId(99).into())
    );
    // The reverse direction is a different triple.
    write(&store, |txn| store.create_proposition(txn, &link(b, p, a))).expect("reverse");
    assert_eq!(
        store
            .read(|txn| store.proposition_count_by_predicate(txn, p))
            .expect("read"),
        2
    );
}

/// A batch of links checks its ends by walking their records when they
/// are close together and by looking each up when they are far apart:
/// either way a missing end fails the batch and names the end.
#[test]
fn a_batch_of_links_refuses_a_missing_end_whether_its_ends_are_close_or_far_apart() {
    let (_dir, store) = open();
    let (p, ids) = write(&store, |txn| {
        let t = store.intern(txn, Namespace::ConceptType, "T")?;
        let p = store.intern(txn, Namespace::Predicate, "p")?;
        let mut ids = Vec::new();
        for i in 0..200 {
            ids.push(store.create_concept(txn, &concept(t, &format!("c{i}")))?);
        }
        Ok((p, ids))
    })
    .expect("write");
    let gone = ids[101];
    write(&store, |txn| store.delete_concept(txn, gone).map(drop)).expect("delete");
    // Close together: links among the first 150 concepts, one to the
    // deleted one.
    let close: Vec<PropositionRecord> = (0..149)
        .filter(|&i| i != 100 && i != 101)
        .map(|i| link(ids[i], p, ids[i + 1]))
        .chain([link(ids[100], p, gone)])
        .collect();
    // Far apart: the first concept and the deleted one, and ids far past
    // every concept.
    let far = vec![link(ids[0], p, gone), link(ids[0], p, ConceptId(1_000_000))];
    for (records, missing) in [(close, gone), (far, gone)] {
        let news: Vec<_> = records.iter().map(PropositionRecord::as_new).collect();
        let result = write(&store, |txn| store.create_propositions(txn, &news));
        assert!(
            matches!(result, Err(StoreError::NotFound { element }) if element == missing.into()),
            "{result:?}"
        );
    }
    // Without the missing end, the close batch is written.
    let fine: Vec<PropositionRecord> = (0..149)
        .map(|i| link(ids[i], p, ids[i + 2]))
        .filter(|l| l.object != gone.into() && l.subject != gone.into())
        .collect();
    let news: Vec<_> = fine.iter().map(PropositionRecord::as_new).collect();
    let created = write(&store, |txn| store.create_propositions(txn, &news)).expect("created");
    assert_eq!(created.len(), fine.len());
}

#[test]
fn referenced_elements_cannot_be_deleted_and_a_detach_cascade_reaches_links_about_links() {
    let (_dir, store) = open();
    let (a, b, ab, about) = write(&store, |txn| {
        let t = store.intern(txn, Namespace::ConceptType, "T")?;
        let p = store.intern(txn, Namespace::Predicate, "p")?;
        let said = store.intern(txn, Namespace::Predicate, "stated_by")?;
        let a = store.create_concept(txn, &concept(t, "a"))?;
        let b = store.create_concept(txn, &concept(t, "b"))?;
        let ab = store.create_proposition(txn, &link(a, p, b))?;
        let about = store.create_proposition(txn, &link(ab, said, b))?;
        store.index_document(txn, a.into(), &[("alpha".to_owned(), 1)], 1)?;
        Ok((a, b, ab, about))
    })
    .expect("write");
    let refused = write(&store, |txn| store.delete_concept(txn, a));
    assert!(
        matches!(refused, Err(StoreError::StillReferenced { element, by }) if element == a.into() && by == ab),
        "{refused:?}"
    );
    let refused = write(&store, |txn| store.delete_proposition(txn, ab));
    assert!(matches!(refused, Err(StoreError::StillReferenced { by, .. }) if by == about));

    // What a DETACH delete of `a` does: links first (the ones about links
    // before the links they are about), then the concept.
    let mentioning = store
        .read(|txn| store.propositions_mentioning(txn, a.into()))
        .expect("read");
    assert_eq!(mentioning, vec![ab]);
    let about_ab = store
        .read(|txn| store.propositions_mentioning(txn, ab.into()))
        .expect("read");
    assert_eq!(about_ab, vec![about]);
    let about_b = store
        .read(|txn| store.propositions_mentioning(txn, b.into()))
        .expect("read");
    assert_eq!(about_b, vec![ab, about]);
    write(&store, |txn| {
        store.delete_proposition(txn, about)?;
        store.delete_proposition(txn, ab)?;
        store.delete_concept(txn, a)?;
        Ok(())
    })
    .expect("cascade");
    store
        .read(|txn| {
            assert_eq!(store.proposition_count(txn)?, 0);
            assert_eq!(store.concept_count(txn)?, 1);
            // Deleting the element removed its search document.
            assert_eq!(store.postings(txn, "alpha")?, vec![]);
            assert_eq!(store.search_stats(txn)?, (0, 0));
            Ok::<_, StoreError>(())
        })
        .expect("read");
    // Deleting what is gone is not an error, and ids are never reused.
    assert_eq!(
        write(&store, |txn| store.delete_concept(txn, a)).expect("delete"),
        None
    );
    let next = write(&store, |txn| store.create_concept(txn, &concept(1, "a"))).expect("create");
    assert_eq!(next, ConceptId(3));
    assert_eq!(
        write(&store, |txn| store
            .delete_proposition(txn, PropositionId(7)))
        .expect("delete"),
        None
    );
}

#[test]
fn names_are_interned_per_namespace_from_one() {
    let (_dir, store) = open();
    let long = "a very long type name ".repeat(30); // hashed key
    let ids = write(&store, |txn| {
        Ok((
            store.intern(txn, Namespace::ConceptType, "Drug")?,
            store.intern(txn, Namespace::Predicate, "Drug")?,
            store.intern(txn, Namespace::ConceptType, "Symptom")?,
            store.intern(txn, Namespace::ConceptType, "Drug")?,
            store.intern(txn, Namespace::ConceptType, &long)?,
        ))
    })
    .expect("write");
    assert_eq!(ids, (1, 1, 2, 1, 3));
    store
        .read(|txn| {
            assert_eq!(
                store.lookup(txn, Namespace::ConceptType, "Symptom")?,
                Some(2)
            );
            assert_eq!(store.lookup(txn, Namespace::Key, "Symptom")?, None);
            assert_eq!(store.lookup(txn, Namespace::ConceptType, &long)?, Some(3));
            assert_eq!(
                store.lookup(txn, Namespace::ConceptType, &format!("{long}!"))?,
                None
            );
            assert_eq!(
                store.resolve(txn, Namespace::ConceptType, 2)?.as_deref(),
                Some("Symptom")
            );
            assert_eq!(store.resolve(txn, Namespace::ConceptType, 9)?, None);
            let names: Vec<String> = store
                .names(txn, Namespace::ConceptType)?
                .into_iter()
                .map(|(_, n)| n)
                .collect();
            assert_eq!(
                names,
                vec!["Drug".to_owned(), "Symptom".to_owned(), long.clone()]
            );
            Ok::<_, StoreError>(())
        })
        .expect("read");
}

#[test]
fn record_keys_are_interned_and_records_keep_their_key_order() {
    let (_dir, store) = open();
    let mut record = concept(1, "x");
    record.attributes =
        serde_json::from_value(json!({"zeta": 1, "alpha": [1.5, -2], "mid": {"b": 1, "a": 2}}))
            .expect("object");
    record.metadata =
        serde_json::from_value(json!({"_updated_at": "2025-01-01T00:00:00Z"})).expect("object");
    let id = write(&store, |txn| store.create_concept(txn, &record)).expect("write");
    store
        .read(|txn| {
            let back = store.get_concept(txn, id)?.expect("record");
            let keys: Vec<&String> = back.attributes.keys().collect();
            assert_eq!(keys, ["zeta", "alpha", "mid"]);
            assert_eq!(back, record);
            let interned: Vec<String> = store
                .names(txn, Namespace::Key)?
                .into_iter()
                .map(|(_, n)| n)
                .collect();
            assert_eq!(interned, ["zeta", "alpha", "mid", "_updated_at"]);
            assert_eq!(store.concept_head(txn, id)?, Some((1, "x".to_owned())));
            Ok::<_, StoreError>(())
        })
        .expect("read");
}

#[test]
fn indexing_a_document_replaces_the_previous_one() {
    let (_dir, store) = open();
    let terms = |list: &[(&str, u32)]| -> Vec<(String, u32)> {
        list.iter().map(|&(t, n)| (t.to_owned(), n)).collect()
    };
    let (a, b) = write(&store, |txn| {
        let a = store.create_concept(txn, &concept(1, "a"))?;
        let b = store.create_concept(txn, &concept(1, "b"))?;
        store.index_document(
            txn,
            a.into(),
            &terms(&[("aspirin", 2), ("a", 1), ("aspirin", 1)]),
            4,
        )?;
        store.index_document(
            txn,
            b.into(),
            &terms(&[("a\0x", 1), ("ibuprofen", 1), ("", 5), ("zero", 0)]),
            2,
        )?;
        Ok((ElementId::from(a), ElementId::from(b)))
    })
    .expect("write");
    store
        .read(|txn| {
            assert_eq!(
                store.postings(txn, "aspirin")?,
                vec![(a, 3)],
                "repeated terms merge"
            );
            // "a\0x" shares the key prefix of "a" but is another term.
            assert_eq!(store.postings(txn, "a")?, vec![(a, 1)]);
            assert_eq!(store.terms_with_prefix(txn, "a")?, ["a", "a\0x", "aspirin"]);
            assert_eq!(
                store.document_frequency(txn, "zero")?,
                0,
                "zero frequencies are skipped"
            );
            assert_eq!(store.search_stats(txn)?, (2, 6));
            assert_eq!(store.doc_len(txn, b)?, Some(2));
            Ok::<_, StoreError>(())
        })
        .expect("read");
    write(&store, |txn| {
        store.index_document(txn, a, &terms(&[("ibuprofen", 1)]), 1)
    })
    .expect("reindex");
    store
        .read(|txn| {
            assert_eq!(store.postings(txn, "aspirin")?, vec![]);
            assert_eq!(store.postings(txn, "ibuprofen")?, vec![(a, 1), (b, 1)]);
            assert_eq!(store.document_frequency(txn, "ibuprofen")?, 2);
            assert_eq!(store.terms_with_prefix(txn, "a")?, ["a\0x"]);
            assert_eq!(store.search_stats(txn)?, (2, 3));
            let prefixed = store.postings_with_prefix(txn, "ibu")?;
            assert_eq!(prefixed.len(), 2);
            assert!(prefixed.iter().all(|p| p.term == "ibuprofen"));
            Ok::<_, StoreError>(())
        })
        .expect("read");
    assert!(write(&store, |txn| store.remove_document(txn, a)).expect("remove"));
    assert!(!write(&store, |txn| store.remove_document(txn, a)).expect("remove again"));
    let missing = write(&store, |txn| {
        store.index_document(txn, ElementId::Proposition(PropositionId(5)), &[], 0)
    });
    assert!(matches!(missing, Err(StoreError::NotFound { .. })));
    let long_term = "阿".repeat(200);
    write(&store, |txn| {
        store.index_document(txn, b, &[(long_term.clone(), 1)], 1)
    })
    .expect("long term");
    assert_eq!(
        store
            .read(|txn| store.postings(txn, &long_term))
            .expect("read"),
        vec![(b, 1)]
    );
}

/// What the text index holds about `terms` and `elements`.
fn index_snapshot(store: &Store, terms: &[&str], elements: &[ElementId]) -> Vec<String> {
    store
        .read(|txn| {
            let mut out = vec![format!("{:?}", store.search_stats(txn)?)];
            for t in terms {
                out.push(format!(
                    "{t}: df {} postings {:?}",
                    store.document_frequency(txn, t)?,
                    store.postings(txn, t)?
                ));
            }
            for &e in elements {
                out.push(format!(
                    "{e}: {:?} {:?}",
                    store.doc_len(txn, e)?,
                    store.document_terms(txn, e)?
                ));
            }
            out.push(format!("{:?}", store.terms_with_prefix(txn, "")?));
            Ok::<_, StoreError>(out)
        })
        .expect("read")
}

#[test]
fn a_batch_of_documents_indexes_as_one_by_one_would() {
    let terms = |list: &[(&str, u32)]| -> Vec<(String, u32)> {
        list.iter().map(|&(t, n)| (t.to_owned(), n)).collect()
    };
    let batch = |a: ElementId, b: ElementId, c: ElementId| {
        vec![
            kip_store::NewDocument {
                element: b,
                terms: terms(&[("aspirin", 2), ("treats", 3), ("aspirin", 1), ("", 4)]),
                len: 6,
            },
            kip_store::NewDocument {
                element: a,
                terms: terms(&[("headache", 1), ("treats", 3), ("zero", 0)]),
                len: 4,
            },
            kip_store::NewDocument {
                element: c,
                terms: vec![],
                len: 0,
            },
        ]
    };
    let mut snapshots = Vec::new();
    for how in EVERY_WAY {
        let (_dir, store) = open();
        let ids = write(&store, |txn| {
            let a = store.create_concept(txn, &concept(1, "a"))?;
            let b = store.create_concept(txn, &concept(1, "b"))?;
            let c = store.create_concept(txn, &concept(1, "c"))?;
            // `a` already has a document, which the batch replaces.
            store.index_document(txn, a.into(), &terms(&[("aspirin", 1), ("old", 1)]), 2)?;
            Ok([ElementId::from(a), b.into(), c.into()])
        })
        .expect("write");
        let docs = batch(ids[0], ids[1], ids[2]);
        index_all(&store, &docs, how).expect("index");
        snapshots.push(index_snapshot(
            &store,
            &["aspirin", "treats", "headache", "old", "zero"],
            &ids,
        ));
        let twice = write(&store, |txn| {
            store.index_documents(txn, &[docs[0].clone(), docs[0].clone()])
        });
        assert!(
            matches!(twice, Err(StoreError::Invalid { .. })),
            "{twice:?}"
        );
        let missing = write(&store, |txn| {
            store.index_documents(
                txn,
                &[kip_store::NewDocument {
                    element: ElementId::Proposition(PropositionId(5)),
                    terms: vec![],
                    len: 0,
                }],
            )
        });
        assert!(matches!(missing, Err(StoreError::NotFound { .. })));
    }
    assert_eq!(snapshots[0], snapshots[1]);
    assert_eq!(snapshots[0], snapshots[2]);
}

/// A table of terms is the caller's: a text given twice would give one
/// term two ids, so the batch fails and writes nothing. Texts longer than a
/// term may be are cut as [`Store::index_document`] cuts them, two of them
/// becoming one term.
#[test]
fn a_table_of_terms_refuses_a_repeated_text_and_cuts_long_texts_as_documents_do() {
    let long = |tail: &str| format!("{}{tail}", "x".repeat(300));
    let mut snapshots = Vec::new();
    for how in EVERY_WAY {
        let (_dir, store) = open();
        let ids: Vec<ElementId> = write(&store, |txn| {
            (0..2)
                .map(|i| {
                    Ok(store
                        .create_concept(txn, &concept(1, &format!("c{i}")))?
                        .into())
                })
                .collect()
        })
        .expect("concepts");
        let docs: Vec<kip_store::NewDocument> = ids
            .iter()
            .map(|&element| kip_store::NewDocument {
                element,
                terms: vec![(long("a"), 1), (long("b"), 2), ("short".to_owned(), 1)],
                len: 4,
            })
            .collect();
        index_all(&store, &docs, how).expect("index");
        snapshots.push(index_snapshot(&store, &["short", &"x".repeat(256)], &ids));
    }
    assert_eq!(snapshots[0], snapshots[1]);
    assert_eq!(snapshots[0], snapshots[2]);

    let (_dir, store) = open();
    let c = write(&store, |txn| store.create_concept(txn, &concept(1, "c"))).expect("concept");
    let mut table = kip_store::DocumentBatch::default();
    let a = table.add_term("aspirin".to_owned());
    let again = table.add_term("aspirin".to_owned());
    table.push(c.into(), 2, &mut [(a, 1), (again, 1)]);
    let result = write(&store, |txn| store.index_document_batch(txn, table.clone()));
    assert!(
        matches!(result, Err(StoreError::Invalid { .. })),
        "{result:?}"
    );
    let written = store
        .read(|txn| Ok::<_, StoreError>((store.search_stats(txn)?, store.doc_len(txn, c.into())?)))
        .expect("read");
    assert_eq!(written, ((0, 0), None));
}

/// Batches in element order take three paths: documents that all follow the
/// last indexed one are appended (no previous document to remove, postings
/// added to each term's last block), new documents below indexed ones skip
/// the removal only, and a batch that also replaces an indexed document goes
/// the general way. Both leave exactly what indexing
/// one document at a time leaves, across block boundaries, for known and
/// new terms alike.
#[test]
fn batches_in_element_order_index_as_one_by_one_would_on_both_paths() {
    let terms_of = |i: usize, round: usize| -> Vec<(String, u32)> {
        vec![
            ("common".to_owned(), 1),
            (format!("n{}", i % 37), 2),
            (format!("fresh{i}r{round}"), 1),
            (format!("n{}", i % 37), 1),
        ]
    };
    let doc = |ids: &[ElementId], i: usize, round: usize| kip_store::NewDocument {
        element: ids[i],
        terms: terms_of(i, round),
        len: 5,
    };
    let mut snapshots = Vec::new();
    for how in EVERY_WAY {
        let (_dir, store) = open();
        let index = |docs: Vec<kip_store::NewDocument>| {
            index_all(&store, &docs, how).expect("index");
        };
        let mut ids: Vec<ElementId> = write(&store, |txn| {
            let t = store.intern(txn, Namespace::ConceptType, "T")?;
            (0..400)
                .map(|i| {
                    Ok(store
                        .create_concept(txn, &concept(t, &format!("c{i}")))?
                        .into())
                })
                .collect()
        })
        .expect("concepts");
        // Some documents one at a time, then the rest in one batch after
        // them: 250 more postings of `common` fill its last block and two
        // more.
        for i in 0..150 {
            index(vec![doc(&ids, i, 0)]);
        }
        index((150..400).map(|i| doc(&ids, i, 0)).collect());
        // Propositions after every concept, indexed after them.
        let links: Vec<ElementId> = write(&store, |txn| {
            let p = store.intern(txn, Namespace::Predicate, "p")?;
            (0..30)
                .map(|i| {
                    Ok(store
                        .create_proposition(txn, &link(ids[i], p, ids[i + 1]))?
                        .into())
                })
                .collect()
        })
        .expect("propositions");
        ids.extend(&links);
        index((400..430).map(|i| doc(&ids, i, 0)).collect());
        // New concepts, below the indexed propositions: nothing to replace,
        // but not appended either.
        let more: Vec<ElementId> = write(&store, |txn| {
            let t = store.intern(txn, Namespace::ConceptType, "T")?;
            (400..420)
                .map(|i| {
                    Ok(store
                        .create_concept(txn, &concept(t, &format!("c{i}")))?
                        .into())
                })
                .collect()
        })
        .expect("more concepts");
        let new_doc = |k: usize| kip_store::NewDocument {
            element: more[k],
            terms: terms_of(500 + k, 0),
            len: 3,
        };
        index((0..10).map(new_doc).collect());
        // In element order again, but replacing two indexed documents (one
        // of them the last) next to new ones.
        let mut mixed = vec![doc(&ids, 7, 1)];
        mixed.extend((10..20).map(new_doc));
        mixed.push(doc(&ids, 429, 1));
        ids.extend(&more);
        index(mixed);
        let report = store.check().expect("check");
        assert!(report.ok, "{report:#?}");
        let mut listed = vec![
            "common".to_owned(),
            "fresh7r0".to_owned(),
            "fresh7r1".to_owned(),
        ];
        listed.extend((0..37).map(|n| format!("n{n}")));
        let listed: Vec<&str> = listed.iter().map(String::as_str).collect();
        snapshots.push(index_snapshot(&store, &listed, &ids));
    }
    assert_eq!(snapshots[0], snapshots[1]);
    assert_eq!(snapshots[0], snapshots[2]);
    assert!(snapshots[1].iter().any(|l| l.starts_with("fresh7r0: df 0")));
}

/// A batch in element order names an element that does not exist: refused
/// with that element, whether the batch's ids are dense (checked by one walk
/// over the records) or sparse (checked one by one), and nothing is written.
#[test]
fn a_batch_in_element_order_refuses_a_missing_element() {
    let (_dir, store) = open();
    let ids: Vec<ConceptId> = write(&store, |txn| {
        let t = store.intern(txn, Namespace::ConceptType, "T")?;
        (0..50)
            .map(|i| store.create_concept(txn, &concept(t, &format!("c{i}"))))
            .collect()
    })
    .expect("concepts");
    let gone = ids[20];
    write(&store, |txn| store.delete_concept(txn, gone)).expect("delete");
    let doc = |e: ElementId| kip_store::NewDocument {
        element: e,
        terms: vec![("word".to_owned(), 1)],
        len: 1,
    };
    let dense: Vec<_> = ids.iter().map(|&c| doc(c.into())).collect();
    let sparse = vec![
        doc(ids[0].into()),
        doc(gone.into()),
        doc(ElementId::Concept(ConceptId(ids[49].0 + 1_000))),
    ];
    let beyond = vec![
        doc(ids[0].into()),
        doc(ElementId::Proposition(PropositionId(1))),
    ];
    for (batch, missing) in [
        (dense, ElementId::from(gone)),
        (sparse, gone.into()),
        (beyond, ElementId::Proposition(PropositionId(1))),
    ] {
        let result = write(&store, |txn| store.index_documents(txn, &batch));
        assert!(
            matches!(result, Err(StoreError::NotFound { element }) if element == missing),
            "{result:?}"
        );
    }
    store
        .read(|txn| {
            assert_eq!(store.search_stats(txn)?, (0, 0));
            assert_eq!(store.document_frequency(txn, "word")?, 0);
            Ok::<_, StoreError>(())
        })
        .expect("read");
}

/// The text index keeps a term's postings in blocks of up to 128: documents
/// indexed out of order (into the middle of blocks), replaced and removed
/// leave exactly the postings a plain model holds, and `check` agrees.
#[test]
fn posting_blocks_stay_exact_through_inserts_in_any_order_replacements_and_removals() {
    use std::collections::BTreeMap;
    let (_dir, store) = open();
    let ids: Vec<ElementId> = write(&store, |txn| {
        let t = store.intern(txn, Namespace::ConceptType, "T")?;
        (0..1_000)
            .map(|i| {
                Ok(store
                    .create_concept(txn, &concept(t, &format!("c{i}")))?
                    .into())
            })
            .collect()
    })
    .expect("concepts");
    // A small deterministic shuffle (xorshift).
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let mut order: Vec<usize> = (0..ids.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, next(i + 1));
    }
    let terms_of = |i: usize, round: usize| -> Vec<(String, u32)> {
        let mut t = vec![
            ("common".to_owned(), 1),
            (format!("t{}", (i + round) % 7), 2),
            (
                if i.is_multiple_of(2) { "even" } else { "odd" }.to_owned(),
                1,
            ),
        ];
        if round > 0 {
            t.push((format!("round{round}"), 3));
        }
        t
    };
    let mut model: BTreeMap<String, BTreeMap<ElementId, u32>> = BTreeMap::new();
    let mut docs: BTreeMap<ElementId, Vec<(String, u32)>> = BTreeMap::new();
    let compare = |store: &Store,
                   model: &BTreeMap<String, BTreeMap<ElementId, u32>>,
                   docs: &BTreeMap<ElementId, Vec<(String, u32)>>| {
        store
            .read(|txn| {
                let mut listed = store.terms_with_prefix(txn, "")?;
                listed.sort();
                let want: Vec<&String> = model
                    .iter()
                    .filter(|(_, p)| !p.is_empty())
                    .map(|(t, _)| t)
                    .collect();
                assert_eq!(listed.iter().collect::<Vec<_>>(), want);
                for (term, postings) in model {
                    let want: Vec<(ElementId, u32)> =
                        postings.iter().map(|(e, tf)| (*e, *tf)).collect();
                    assert_eq!(store.postings(txn, term)?, want, "postings of {term}");
                    assert_eq!(store.document_frequency(txn, term)? as usize, want.len());
                }
                for (e, terms) in docs {
                    let mut want = terms.clone();
                    want.sort();
                    assert_eq!(store.document_terms(txn, *e)?, Some(want));
                }
                Ok::<_, StoreError>(())
            })
            .expect("read");
        let report = store.check().expect("check");
        assert!(report.ok, "{report:#?}");
        assert_eq!(
            report.counts.postings as usize,
            model.values().map(BTreeMap::len).sum::<usize>()
        );
    };
    let mut apply = |store: &Store, batch: &[usize], round: usize| {
        let batch: Vec<kip_store::NewDocument> = batch
            .iter()
            .map(|&i| kip_store::NewDocument {
                element: ids[i],
                terms: terms_of(i, round),
                len: 4,
            })
            .collect();
        write(store, |txn| store.index_documents(txn, &batch)).expect("index");
        for d in batch {
            if let Some(old) = docs.insert(d.element, d.terms.clone()) {
                for (t, _) in old {
                    model.get_mut(&t).expect("modelled").remove(&d.element);
                }
            }
            for (t, tf) in d.terms {
                model.entry(t).or_default().insert(d.element, tf);
            }
        }
        (model.clone(), docs.clone())
    };
    // Half in one batch, shuffled; the rest in batches of random sizes, which
    // land in the middle of existing blocks.
    let (m, d) = apply(&store, &order[..500], 0);
    compare(&store, &m, &d);
    let mut at = 500;
    let mut last = (m, d);
    while at < order.len() {
        let n = (1 + next(150)).min(order.len() - at);
        last = apply(&store, &order[at..at + n], 0);
        at += n;
    }
    compare(&store, &last.0, &last.1);
    // Replace 200 documents (new terms, moved terms), then remove 300.
    for (k, &i) in order[..200].iter().enumerate() {
        last = apply(&store, &[i], 1 + k % 3);
    }
    compare(&store, &last.0, &last.1);
    let (mut model, mut docs) = last;
    write(&store, |txn| {
        for &i in &order[600..900] {
            assert!(store.remove_document(txn, ids[i])?);
        }
        Ok(())
    })
    .expect("remove");
    for &i in &order[600..900] {
        for (t, _) in docs.remove(&ids[i]).expect("indexed") {
            model.get_mut(&t).expect("modelled").remove(&ids[i]);
        }
    }
    compare(&store, &model, &docs);
}

#[test]
fn state_round_trips_with_long_keys_and_prefix_listing() {
    let (_dir, store) = open();
    let long = format!("import/{}", "very/deep/path/".repeat(40));
    write(&store, |txn| {
        store.put_state(txn, "import/b.kip", &json!({"sha256": "bb"}))?;
        store.put_state(txn, "import/a.kip", &json!({"sha256": "aa"}))?;
        store.put_state(txn, &long, &json!(1))?;
        store.put_state(txn, "other", &json!(null))?;
        store.put_state(txn, "import/a.kip", &json!({"sha256": "a2"}))
    })
    .expect("write");
    store
        .read(|txn| {
            assert_eq!(
                store.get_state(txn, "import/a.kip")?,
                Some(json!({"sha256": "a2"}))
            );
            assert_eq!(store.get_state(txn, &long)?, Some(json!(1)));
            assert_eq!(store.get_state(txn, "other")?, Some(json!(null)));
            assert_eq!(store.get_state(txn, "missing")?, None);
            let keys: Vec<String> = store
                .states_with_prefix(txn, "import/")?
                .into_iter()
                .map(|(k, _)| k)
                .collect();
            assert_eq!(
                keys,
                vec![
                    "import/a.kip".to_owned(),
                    "import/b.kip".to_owned(),
                    long.clone()
                ]
            );
            Ok::<_, StoreError>(())
        })
        .expect("read");
    assert!(write(&store, |txn| store.delete_state(txn, &long)).expect("delete"));
    assert!(!write(&store, |txn| store.delete_state(txn, &long)).expect("delete again"));
    let empty = write(&store, |txn| store.put_state(txn, "", &json!(1)));
    assert!(matches!(empty, Err(StoreError::Invalid { .. })));
}

#[test]
fn the_change_log_is_monotonic_and_bounded() {
    let (_dir, store) = open();
    assert_eq!(store.current_change_seq().expect("seq"), 0);
    let extra = 5;
    let last = write(&store, |txn| {
        let mut last = 0;
        for i in 0..MAX_CHANGES + extra {
            last = store.append_change(txn, &json!({ "i": i }))?;
        }
        Ok(last)
    })
    .expect("write");
    assert_eq!(last, MAX_CHANGES + extra);
    assert_eq!(store.current_change_seq().expect("seq"), last);
    store
        .read(|txn| {
            let all = store.changes_since(txn, 0)?;
            assert_eq!(all.len() as u64, MAX_CHANGES);
            assert_eq!(all[0], (extra + 1, json!({ "i": extra })));
            let tail = store.changes_since(txn, last - 2)?;
            assert_eq!(
                tail.iter().map(|c| c.0).collect::<Vec<_>>(),
                vec![last - 1, last]
            );
            assert_eq!(store.changes_since(txn, last)?, vec![]);
            Ok::<_, StoreError>(())
        })
        .expect("read");
}

#[test]
fn counters_count_and_forget_zero() {
    let (_dir, store) = open();
    let values = write(&store, |txn| {
        Ok((
            store.add_counter(txn, b"domain/1/type/2", 3)?,
            store.add_counter(txn, b"domain/1/type/2", -1)?,
            store.add_counter(txn, b"domain/1/type/3", 1)?,
            store.add_counter(txn, b"domain/1/type/3", -1)?,
            store.add_counter(txn, b"domain/2/type/2", -4)?,
        ))
    })
    .expect("write");
    assert_eq!(values, (3, 2, 1, 0, -4));
    store
        .read(|txn| {
            assert_eq!(store.counter(txn, b"domain/1/type/2")?, 2);
            assert_eq!(store.counter(txn, b"never")?, 0);
            assert_eq!(
                store.counters_with_prefix(txn, b"domain/1/")?,
                vec![(b"domain/1/type/2".to_vec(), 2)]
            );
            Ok::<_, StoreError>(())
        })
        .expect("read");
    let empty = write(&store, |txn| store.add_counter(txn, b"", 1));
    assert!(matches!(empty, Err(StoreError::Invalid { .. })));
}

#[test]
fn store_errors_explain_themselves() {
    let e = StoreError::StillReferenced {
        element: ConceptId(3).into(),
        by: PropositionId(9),
    };
    assert_eq!(
        e.to_string(),
        "C:3 cannot be deleted: P:9 still refers to it; delete the referring propositions first"
    );
    let e = StoreError::UnsupportedFormat {
        found: 3,
        supported: 1,
    };
    assert!(e.to_string().contains("newer KIP Explorer"));
}

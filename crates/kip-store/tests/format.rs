//! The on-disk format: a committed store of every released format must
//! open and read back exactly; newer formats and foreign files are refused.
//!
//! `tests/data/format-1/data.mdb` was written by [`build_fixture`] and
//! [`Store::copy_compacted`]. To regenerate it after an intentional change
//! (which must also bump `FORMAT_VERSION` and add a migration, keeping the
//! old fixture under its own name): `KIP_STORE_BLESS=1 cargo test -p
//! kip-store --test integration format::`.

use std::fs;
use std::path::{Path, PathBuf};

use kip_store::{
    ConceptRecord, ElementId, FORMAT_VERSION, FieldKind, Namespace, PropositionRecord, Store,
    StoreError,
};
use serde_json::{Map, Value, json};

fn fixture_dir(version: u32) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/format-{version}"))
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A small graph that touches every database: types, predicates, concepts
/// with every kind of value, a higher-order proposition, a deleted concept
/// (so ids have a gap), counters, state, text documents and the change log.
fn build_fixture(store: &Store) -> Result<(), StoreError> {
    store.write(|txn| {
        let drug = store.intern(txn, Namespace::ConceptType, "Drug")?;
        let symptom = store.intern(txn, Namespace::ConceptType, "Symptom")?;
        let treats = store.intern(txn, Namespace::Predicate, "treats")?;
        let source = store.intern(txn, Namespace::Predicate, "stated_by")?;
        let concept = |type_id, name: &str, attributes: Value| ConceptRecord {
            type_id,
            name: name.to_owned(),
            attributes: object(attributes),
            metadata: object(json!({"_created_at": "2025-01-01T00:00:00Z", "confidence": 0.9})),
        };
        let aspirin = store.create_concept(
            txn,
            &concept(drug, "Aspirin", json!({
                "dose_mg": 500, "delta": -3, "big": u64::MAX, "ratio": 1.0, "tiny": 1e-300,
                "tags": ["nsaid", null, true, false], "nested": {"z": 1, "a": {"deep": "阿司匹林"}},
            })),
        )?;
        let headache = store.create_concept(txn, &concept(symptom, "Headache", json!({})))?;
        let gone = store.create_concept(txn, &concept(symptom, "Gone", json!({})))?;
        store.delete_concept(txn, gone)?;
        let long_name = "long name ".repeat(60);
        let long = store.create_concept(
            txn,
            &concept(drug, &long_name, json!({"note": "hashed key"})),
        )?;
        let link = store.create_proposition(
            txn,
            &PropositionRecord {
                subject: aspirin.into(),
                predicate: treats,
                object: headache.into(),
                attributes: object(json!({"evidence": "strong"})),
                metadata: Map::new(),
            },
        )?;
        store.create_proposition(
            txn,
            &PropositionRecord {
                subject: link.into(),
                predicate: source,
                object: long.into(),
                attributes: Map::new(),
                metadata: object(json!({"source": "fixture"})),
            },
        )?;
        store.index_document(
            txn,
            aspirin.into(),
            &[("aspirin".into(), 3), ("阿司匹林".into(), 1)],
            4,
        )?;
        store.index_document(txn, headache.into(), &[("headache".into(), 3)], 3)?;
        store.add_counter(txn, b"domain/1/type/1", 2)?;
        store.put_state(
            txn,
            "import/capsule.kip",
            &json!({"sha256": "00ff", "at": 1}),
        )?;
        store.append_change(
            txn,
            &json!({"origin": "fixture", "stats": {"concepts_created": 4}}),
        )?;
        Ok(())
    })
}

/// Everything the public API can read, as one JSON document.
fn dump(store: &Store) -> Value {
    store
        .read(|txn| {
            let mut names = Map::new();
            for ns in Namespace::ALL {
                names.insert(format!("{ns:?}"), json!(store.names(txn, ns)?));
            }
            let mut concepts = Vec::new();
            for entry in store.all_concepts(txn)? {
                let (id, c) = entry?;
                let by_name = store.concepts_by_name(txn, &c.name)?;
                concepts.push(json!({
                    "id": id.to_string(), "type": c.type_id, "name": c.name,
                    "attributes": c.attributes, "metadata": c.metadata,
                    "found": store.find_concept(txn, c.type_id, &c.name)?.map(|i| i.to_string()),
                    "by_name": by_name.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "doc_len": store.doc_len(txn, id.into())?,
                    "terms": store.document_terms(txn, id.into())?,
                }));
            }
            let mut propositions = Vec::new();
            for entry in store.all_propositions(txn)? {
                let (id, p) = entry?;
                let matches = store.propositions_matching(txn, Some(p.subject), None, None)?;
                propositions.push(json!({
                    "id": id.to_string(), "subject": p.subject, "predicate": p.predicate,
                    "object": p.object, "attributes": p.attributes, "metadata": p.metadata,
                    "same_subject": matches.iter().map(|m| m.0.to_string()).collect::<Vec<_>>(),
                    "mentioning": store.propositions_mentioning(txn, ElementId::Proposition(id))?
                        .iter().map(ToString::to_string).collect::<Vec<_>>(),
                }));
            }
            Ok::<_, StoreError>(json!({
                "names": names,
                "concepts": concepts,
                "propositions": propositions,
                "counts": {
                    "concepts": store.concept_count(txn)?,
                    "propositions": store.proposition_count(txn)?,
                    "by_type": store.concept_counts_by_type(txn)?,
                    "by_predicate": store.proposition_counts_by_predicate(txn)?,
                },
                "counters": store.counters_with_prefix(txn, b"")?
                    .into_iter().map(|(k, v)| json!([String::from_utf8_lossy(&k), v])).collect::<Vec<_>>(),
                "terms": store.terms_with_prefix(txn, "")?,
                "postings": store.postings(txn, "aspirin")?
                    .into_iter().map(|(e, tf)| json!([e, tf])).collect::<Vec<_>>(),
                "search_stats": store.search_stats(txn)?,
                "state": store.states_with_prefix(txn, "")?,
                "changes": store.changes_since(txn, 0)?,
            }))
        })
        .expect("dump")
}

fn copy_fixture(version: u32, to: &Path) {
    fs::copy(fixture_dir(version).join("data.mdb"), to.join("data.mdb")).expect("copy the fixture");
}

#[test]
fn the_committed_format_1_store_reads_back_exactly() {
    let built = tempfile::tempdir().expect("tempdir");
    let store = Store::open(built.path()).expect("open");
    build_fixture(&store).expect("build the fixture");
    if std::env::var_os("KIP_STORE_BLESS").is_some() {
        fs::create_dir_all(fixture_dir(FORMAT_VERSION)).expect("fixture folder");
        // Written aside and renamed, so tests running meanwhile never read
        // half a file.
        let target = fixture_dir(FORMAT_VERSION).join("data.mdb");
        let fresh = built.path().join("fixture.mdb");
        store.copy_compacted(&fresh).expect("write the fixture");
        fs::copy(&fresh, target.with_extension("tmp")).expect("copy the fixture");
        fs::rename(target.with_extension("tmp"), &target).expect("replace the fixture");
    }
    let expected = dump(&store);

    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixture(1, dir.path());
    let old = Store::open(dir.path()).expect("open the format-1 store");
    assert!(!old.is_fresh());
    assert_eq!(dump(&old), expected);
    // It is writable too, and ids continue after the committed ones.
    let id = old
        .write(|txn| {
            let drug = old
                .lookup(txn, Namespace::ConceptType, "Drug")?
                .expect("interned");
            old.create_concept(
                txn,
                &ConceptRecord {
                    type_id: drug,
                    name: "Ibuprofen".into(),
                    ..Default::default()
                },
            )
        })
        .expect("write");
    assert_eq!(id.to_string(), "C:5");
    // The migration to format 3 built the attribute index of the old
    // concepts, and the check finds it complete.
    let report = old.check().expect("check");
    assert!(report.ok, "{report:#?}");
    old.read(|txn| {
        let drug = old
            .lookup(txn, Namespace::ConceptType, "Drug")?
            .expect("interned");
        let q = kip_store::AttrQuery::Equals(vec![json!(500)]);
        let found = old.attr_lookup(
            txn,
            drug,
            kip_store::FieldKind::Attributes,
            "dose_mg",
            &q,
            10,
        )?;
        assert_eq!(found.ids.len(), 1);
        let q = kip_store::AttrQuery::Between {
            lower: Some(json!(0.5)),
            upper: None,
        };
        let found = old.attr_lookup(
            txn,
            drug,
            kip_store::FieldKind::Metadata,
            "confidence",
            &q,
            10,
        )?;
        assert_eq!(found.ids.len(), 2);
        Ok::<_, StoreError>(())
    })
    .expect("read");
}

/// `tests/data/format-4/data.mdb` is [`build_fixture`]'s graph as the
/// program of format 4 wrote it (`KIP_STORE_BLESS=1` at 9bbbf0a); format 5
/// keeps the text index by term id, in posting blocks. The upgrade rebuilds
/// it: everything reads back as a fresh store's, `check` is clean, and
/// the index keeps working.
#[test]
fn the_committed_format_4_store_upgrades_its_text_index() {
    let built = tempfile::tempdir().expect("tempdir");
    let store = Store::open(built.path()).expect("open");
    build_fixture(&store).expect("build the fixture");
    let expected = dump(&store);

    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixture(4, dir.path());
    let old = Store::open(dir.path()).expect("open the format-4 store");
    assert_eq!(dump(&old), expected);
    let report = old.check().expect("check");
    assert!(report.ok, "{report:#?}");
    assert_eq!(report.counts.postings, 3);
    old.write(|txn| {
        let aspirin = ElementId::Concept("C:1".parse().expect("id"));
        old.index_document(txn, aspirin, &[("aspirin".into(), 1), ("new".into(), 2)], 3)
    })
    .expect("re-index");
    old.read(|txn| {
        assert_eq!(old.postings(txn, "阿司匹林")?, vec![]);
        assert_eq!(old.document_frequency(txn, "new")?, 1);
        assert_eq!(
            old.terms_with_prefix(txn, "")?,
            ["aspirin", "headache", "new"]
        );
        Ok::<_, StoreError>(())
    })
    .expect("read");
    assert!(old.check().expect("check").ok);
}

/// `tests/data/format-5/data.mdb` is [`build_fixture`]'s graph as the
/// program of format 5 wrote it (`KIP_STORE_BLESS=1` at 639f632); format 6
/// gives array and object values their attribute-index key, so the index
/// read whole is each key's column. The upgrade adds them: everything reads
/// back as a fresh store's, `check` is clean, and the columns name every
/// concept with a value.
#[test]
fn the_committed_format_5_store_indexes_its_array_and_object_values() {
    let built = tempfile::tempdir().expect("tempdir");
    let store = Store::open(built.path()).expect("open");
    build_fixture(&store).expect("build the fixture");
    let expected = dump(&store);

    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixture(5, dir.path());
    let old = Store::open(dir.path()).expect("open the format-5 store");
    assert_eq!(dump(&old), expected);
    let report = old.check().expect("check");
    assert!(report.ok, "{report:#?}");
    let column = |store: &Store, key: &str| {
        store
            .read(|txn| {
                let drug = store
                    .lookup(txn, Namespace::ConceptType, "Drug")?
                    .expect("interned");
                let key = store.lookup(txn, Namespace::Key, key)?.expect("interned");
                let mut cells = Vec::new();
                store.attr_column(txn, drug, FieldKind::Attributes, key, &mut |id, cell| {
                    cells.push(format!("{id} {cell:?}"));
                })?;
                Ok::<_, StoreError>(cells)
            })
            .expect("read")
    };
    for key in ["tags", "nested", "dose_mg", "note"] {
        assert_eq!(column(&old, key), column(&store, key), "{key}");
    }
    assert_eq!(column(&old, "tags"), ["C:1 Other"]);
    assert_eq!(column(&old, "nested"), ["C:1 Other"]);
    assert_eq!(column(&old, "dose_mg"), ["C:1 Number(500.0)"]);
    assert_eq!(
        column(&old, "note"),
        ["C:4 Text([104, 97, 115, 104, 101, 100, 32, 107, 101, 121])"]
    );
}

/// `Store::copy_packed` (what `kip compact` writes) copies every database
/// exactly, the new store checks clean and takes new writes, and a folder
/// that holds a store is refused.
#[test]
fn a_packed_copy_reads_back_exactly_and_checks_clean() {
    let built = tempfile::tempdir().expect("tempdir");
    let store = Store::open(built.path()).expect("open");
    build_fixture(&store).expect("build the fixture");
    let expected = dump(&store);
    let copy = tempfile::tempdir().expect("tempdir");
    let bytes = store.copy_packed(copy.path()).expect("packed copy");
    assert!(bytes > 0);
    let packed = Store::open(copy.path()).expect("open the copy");
    assert!(!packed.is_fresh());
    assert_eq!(dump(&packed), expected);
    assert!(packed.check().expect("check").ok);
    let id = packed
        .write(|txn| {
            let drug = packed
                .lookup(txn, Namespace::ConceptType, "Drug")?
                .expect("interned");
            packed.create_concept(
                txn,
                &ConceptRecord {
                    type_id: drug,
                    name: "Naproxen".into(),
                    ..Default::default()
                },
            )
        })
        .expect("write");
    assert_eq!(id.to_string(), "C:5");
    drop(packed);
    assert!(matches!(
        store.copy_packed(copy.path()),
        Err(StoreError::Invalid { .. })
    ));
}

/// `tests/data/format-3/data.mdb` was written by the program of format 3
/// (one concept and two trace entries, a long and a short one, then
/// `copy_compacted`); format 4 changed how trace entries are kept.
#[test]
fn the_committed_format_3_store_keeps_its_trace_entries_through_the_upgrade() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixture(3, dir.path());
    let store = Store::open(dir.path()).expect("open the format-3 store");
    let command = "UPSERT { CONCEPT ?d { {type: \"Drug\", name: \"Aspirin\"} SET ATTRIBUTES { dose_mg: 500 } } }\n".repeat(20);
    let (long, short, touching) = store
        .read(|txn| {
            Ok::<_, StoreError>((
                store.trace_entry(txn, 1)?,
                store.trace_entry(txn, 2)?,
                store.trace_touching(txn, ElementId::Concept("C:1".parse().expect("id")))?,
            ))
        })
        .expect("read");
    assert_eq!(
        long,
        Some(
            json!({"data": {"command": command}, "originator": "fixture", "seq": "1", "中文": "阿司匹林"})
        )
    );
    assert_eq!(
        short,
        Some(json!({"originator": "fixture", "seq": "2", "tag": []}))
    );
    assert_eq!(touching, vec![1]);
    let report = store.check().expect("check");
    assert!(report.ok, "{report:#?}");
    // The long entry is now kept compressed.
    let trace = store
        .sizes()
        .expect("sizes")
        .databases
        .into_iter()
        .find(|d| d.name == kip_store::db_name::TRACE)
        .expect("trace");
    assert!(trace.value_bytes < 1000, "{trace:?}");
}

#[test]
fn a_store_of_a_newer_format_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixture(1, dir.path());
    // Patch the stored version in place: a meta leaf holds the key and then
    // its value, and LMDB keeps no checksums.
    let path = dir.path().join("data.mdb");
    let mut bytes = fs::read(&path).expect("read");
    let needle = b"format_version\x00\x00\x00\x01";
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("version in the file");
    let newer = FORMAT_VERSION + 1;
    bytes[at + needle.len() - 1] = u8::try_from(newer).expect("a small version");
    fs::write(&path, &bytes).expect("write");

    let result = Store::open(dir.path());
    assert!(
        matches!(
            result,
            Err(StoreError::UnsupportedFormat {
                found,
                supported: FORMAT_VERSION
            }) if found == newer
        ),
        "{result:?}"
    );
    assert_eq!(
        fs::read(&path).expect("read"),
        bytes,
        "the newer store was modified"
    );
}

#[test]
fn a_file_that_is_not_a_store_is_reported_corrupt() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("data.mdb"), vec![0x5a; 64 * 1024]).expect("write");
    let result = Store::open(dir.path());
    assert!(
        matches!(result, Err(StoreError::Corrupt { .. })),
        "{result:?}"
    );
}

#[test]
fn only_the_open_that_creates_the_store_sees_it_fresh() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nested = dir.path().join("not/yet/there");
    let store = Store::open(&nested).expect("open creates the folders");
    assert!(store.is_fresh());
    assert!(!Store::open(&nested).expect("second handle").is_fresh());
    drop(store);
    assert!(!Store::open(&nested).expect("reopen").is_fresh());
}

#[test]
fn a_truncated_data_file_is_reported_corrupt_with_its_path_before_it_is_mapped() {
    // Mapping a file shorter than its last commit and reading past its end
    // would kill the process (SIGBUS); the open must refuse it first.
    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixture(1, dir.path());
    let path = dir.path().join("data.mdb");
    let full = fs::read(&path).expect("read");
    for keep in [full.len() - 4096, full.len() / 2, 8192, 4200, 100] {
        fs::write(&path, &full[..keep]).expect("truncate");
        let result = Store::open(dir.path());
        let Err(StoreError::Corrupt { detail }) = &result else {
            panic!("{keep} bytes: {result:?}");
        };
        assert!(detail.contains(&path.display().to_string()), "{detail}");
        assert!(detail.contains("truncated"), "{detail}");
        assert_eq!(
            fs::read(&path).expect("read").len(),
            keep,
            "the file was touched"
        );
    }
}

#[test]
fn a_check_after_reopening_the_committed_store_finds_nothing_wrong() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixture(1, dir.path());
    let store = Store::open(dir.path()).expect("open");
    let report = store.check().expect("check");
    assert!(report.ok, "{report:#?}");
    assert!(report.counts.concepts > 0 && report.counts.propositions > 0);
}

#[test]
fn a_compacted_copy_is_a_store_that_passes_the_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_fixture(1, dir.path());
    let store = Store::open(dir.path()).expect("open");
    let copy = tempfile::tempdir().expect("tempdir");
    store
        .copy_compacted(&copy.path().join("data.mdb"))
        .expect("copy");
    let copied = Store::open(copy.path()).expect("open the copy");
    assert_eq!(dump(&copied), dump(&store));
    assert!(copied.check().expect("check").ok);
}

//! The cognitive trace's databases: numbering, the element index, bodies
//! replaced in place, retention, and a restored element keeping its id.

use kip_store::{ConceptRecord, ElementId, Namespace, Store, StoreError, TraceSlot};
use serde_json::{Value, json};

fn append(store: &Store, originator: &str, elements: &[ElementId]) -> TraceSlot {
    store
        .write(|txn| {
            let slot = store.next_trace_slot(txn, originator)?;
            let body = json!({"originator": originator, "seq": slot.seq.to_string()});
            store.put_trace(txn, slot.id, &body, elements)?;
            Ok::<_, StoreError>(slot)
        })
        .expect("append")
}

#[test]
fn ids_are_global_and_sequences_per_originator() {
    let dir = tempfile::tempdir().expect("ok");
    let store = Store::open(dir.path()).expect("ok");
    assert_eq!(append(&store, "a", &[]), TraceSlot { id: 1, seq: 1 });
    assert_eq!(append(&store, "b", &[]), TraceSlot { id: 2, seq: 1 });
    assert_eq!(append(&store, "a", &[]), TraceSlot { id: 3, seq: 2 });
    let last = store.read(|txn| store.last_trace_id(txn)).expect("ok");
    assert_eq!(last, 3);
}

#[test]
fn an_empty_or_oversized_originator_is_refused() {
    let dir = tempfile::tempdir().expect("ok");
    let store = Store::open(dir.path()).expect("ok");
    for bad in [String::new(), "x".repeat(kip_store::MAX_ORIGINATOR_LEN + 1)] {
        let r = store.write(|txn| store.next_trace_slot(txn, &bad));
        assert!(matches!(r, Err(StoreError::Invalid { .. })), "{r:?}");
    }
}

#[test]
fn elements_find_the_entries_that_touched_them_until_retention_drops_them() {
    let dir = tempfile::tempdir().expect("ok");
    let store = Store::open(dir.path()).expect("ok");
    let c1: ElementId = "C:1".parse().expect("ok");
    let p1: ElementId = "P:1".parse().expect("ok");
    append(&store, "a", &[c1]);
    append(&store, "a", &[c1, p1]);
    append(&store, "a", &[p1]);
    store
        .read(|txn| {
            assert_eq!(store.trace_touching(txn, c1)?, [1, 2]);
            assert_eq!(store.trace_touching(txn, p1)?, [2, 3]);
            assert_eq!(store.trace_elements(txn, 2)?, [c1, p1]);
            Ok::<_, StoreError>(())
        })
        .expect("ok");
    let dropped = store
        .write(|txn| store.trim_trace(txn, 1, None))
        .expect("ok");
    assert_eq!(dropped, 2);
    store
        .read(|txn| {
            assert_eq!(store.trace_touching(txn, c1)?, [] as [u64; 0]);
            assert_eq!(store.trace_touching(txn, p1)?, [3]);
            assert_eq!(store.trace_len(txn)?, 1);
            assert!(store.trace_entry(txn, 1)?.is_none());
            Ok::<_, StoreError>(())
        })
        .expect("ok");
    // Ids continue after dropped entries.
    assert_eq!(append(&store, "a", &[]).id, 4);
}

#[test]
fn retention_by_age_stops_at_the_first_young_entry() {
    let dir = tempfile::tempdir().expect("ok");
    let store = Store::open(dir.path()).expect("ok");
    for _ in 0..4 {
        append(&store, "a", &[]);
    }
    let old = |v: &Value| v["seq"].as_str().is_some_and(|s| s == "1" || s == "3");
    let dropped = store
        .write(|txn| store.trim_trace(txn, 100, Some(&old)))
        .expect("ok");
    assert_eq!(dropped, 1, "entry 3 is old but entry 2 is not");
    let mut seen = Vec::new();
    store
        .read(|txn| {
            store.visit_trace(txn, None, None, true, |id, _| {
                seen.push(id);
                Ok(true)
            })
        })
        .expect("ok");
    assert_eq!(seen, [4, 3, 2]);
}

#[test]
fn a_body_is_replaced_in_place() {
    let dir = tempfile::tempdir().expect("ok");
    let store = Store::open(dir.path()).expect("ok");
    append(&store, "a", &[]);
    let body = json!({"flags": ["Reviewed"]});
    assert!(
        store
            .write(|txn| store.set_trace_body(txn, 1, &body))
            .expect("ok")
    );
    assert!(
        !store
            .write(|txn| store.set_trace_body(txn, 9, &body))
            .expect("ok")
    );
    let got = store.read(|txn| store.trace_entry(txn, 1)).expect("ok");
    assert_eq!(got, Some(body));
}

#[test]
fn a_deleted_concept_is_restored_under_its_id() {
    let dir = tempfile::tempdir().expect("ok");
    let store = Store::open(dir.path()).expect("ok");
    let record = store
        .write(|txn| {
            let t = store.intern(txn, Namespace::ConceptType, "Drug")?;
            Ok::<_, StoreError>(ConceptRecord {
                type_id: t,
                name: "Aspirin".into(),
                ..Default::default()
            })
        })
        .expect("ok");
    let id = store
        .write(|txn| store.create_concept(txn, &record))
        .expect("ok");
    store
        .write(|txn| store.delete_concept(txn, id))
        .expect("ok");
    store
        .write(|txn| store.restore_concept(txn, id, &record))
        .expect("ok");
    let found = store
        .read(|txn| store.find_concept(txn, record.type_id, "Aspirin"))
        .expect("ok");
    assert_eq!(found, Some(id));
    // Restoring over a live element, or an id never issued, is refused.
    let again = store.write(|txn| store.restore_concept(txn, id, &record));
    assert!(matches!(again, Err(StoreError::Invalid { .. })));
    let never = store.write(|txn| store.restore_concept(txn, kip_store::ConceptId(99), &record));
    assert!(matches!(never, Err(StoreError::Invalid { .. })));
}

#[test]
fn a_long_body_is_kept_compressed_and_reads_back_exactly() {
    let dir = tempfile::tempdir().expect("ok");
    let store = Store::open(dir.path()).expect("ok");
    let command = "UPSERT { PROPOSITION ?p { ({type: \"Drug\", name: \"Drug 1\"}, \"treats\", {type: \"Disease\", name: \"Disease 2\"}) } }\n".repeat(400);
    let long = json!({"data": {"command": command, "n": 1.5, "中文": [true, null]}, "seq": "1"});
    let short = json!({"seq": "2"});
    let ids = store
        .write(|txn| {
            let a = store.next_trace_slot(txn, "a")?;
            store.put_trace(txn, a.id, &long, &[])?;
            let b = store.next_trace_slot(txn, "a")?;
            store.put_trace(txn, b.id, &short, &[])?;
            Ok::<_, StoreError>([a.id, b.id])
        })
        .expect("append");
    let read = |id| {
        store
            .read(|txn| store.trace_entry(txn, id))
            .expect("read")
            .expect("there")
    };
    assert_eq!(read(ids[0]), long);
    assert_eq!(read(ids[1]), short);
    let stored = store
        .sizes()
        .expect("sizes")
        .databases
        .into_iter()
        .find(|d| d.name == kip_store::db_name::TRACE)
        .expect("the trace database")
        .value_bytes;
    let plain = serde_json::to_vec(&long).expect("json").len()
        + serde_json::to_vec(&short).expect("json").len();
    assert!(
        (stored as usize) * 10 < plain,
        "{stored} bytes stored for {plain} bytes of JSON"
    );
    assert!(store.check().expect("check").ok);
}

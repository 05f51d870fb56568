use kip_store::*;
#[test]
fn smoke() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    assert!(store.is_fresh());
    let t0 = std::time::Instant::now();
    for i in 0..100 {
        store
            .write(|txn| {
                let t = store.intern(txn, Namespace::ConceptType, "Drug")?;
                let rec = ConceptRecord { type_id: t, name: format!("n{i}"), ..Default::default() };
                store.create_concept(txn, &rec)
            })
            .expect("write");
    }
    eprintln!("100 commits: {:?}", t0.elapsed());
    let n = store.read(|txn| store.concept_count(txn)).expect("read");
    assert_eq!(n, 100);
    drop(store);
    let store = Store::open(dir.path()).expect("reopen");
    assert!(!store.is_fresh());
}

//! The attribute index against a model: random concepts created, updated
//! (type, name, attributes, metadata) and deleted, then every kind of
//! lookup compared with a brute-force pass over the records, and the
//! store's own check clean.

use kip_store::{AttrQuery, ConceptId, ConceptRecord, FieldKind, Namespace, Store, StoreError};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-5i64..5).prop_map(|i| json!(i)),
        (-3.0f64..3.0).prop_map(|f| json!((f * 4.0).round() / 4.0)),
        prop::sample::select(vec!["", "a", "a\u{0}", "ab", "b", "阿", "2025-01-02"])
            .prop_map(|s| json!(s)),
        Just(json!("x".repeat(300))),
        Just(json!(["a", 1])),
        Just(json!({"k": 1})),
    ]
}

fn fields() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec(
        (prop::sample::select(vec!["k", "m", "confidence"]), value()),
        0..3,
    )
    .prop_map(|kv| kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

#[derive(Clone, Debug)]
enum Op {
    Create(u8, Map<String, Value>, Map<String, Value>),
    Update(usize, u8, Map<String, Value>, Map<String, Value>),
    Delete(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..2, fields(), fields()).prop_map(|(t, a, m)| Op::Create(t, a, m)),
        (0usize..20, 0u8..2, fields(), fields()).prop_map(|(i, t, a, m)| Op::Update(i, t, a, m)),
        (0usize..20).prop_map(Op::Delete),
    ]
}

/// What FILTER would say, for the index's superset to be checked against.
fn holds(v: &Value, q: &AttrQuery) -> bool {
    let num = |v: &Value| v.as_f64();
    let cmp = |a: &Value, b: &Value| match (a, b) {
        (Value::Number(_), Value::Number(_)) => num(a)?.partial_cmp(&num(b)?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    };
    match q {
        AttrQuery::Equals(values) => values
            .iter()
            .any(|w| cmp(v, w) == Some(std::cmp::Ordering::Equal)),
        AttrQuery::Between { lower, upper } => {
            lower
                .as_ref()
                .is_none_or(|l| cmp(v, l).is_some_and(|o| o.is_ge()))
                && upper
                    .as_ref()
                    .is_none_or(|u| cmp(v, u).is_some_and(|o| o.is_le()))
                && (lower.is_some() || upper.is_some())
        }
        AttrQuery::Prefix(p) => v.as_str().is_some_and(|s| s.starts_with(p.as_str())),
    }
}

fn queries() -> Vec<AttrQuery> {
    let long = "x".repeat(300);
    vec![
        AttrQuery::Equals(vec![json!(1)]),
        AttrQuery::Equals(vec![json!(1.0), json!("a"), json!(true), json!(null)]),
        AttrQuery::Equals(vec![json!(long.clone())]),
        AttrQuery::Equals(vec![json!("a\u{0}")]),
        AttrQuery::Between {
            lower: Some(json!(-1)),
            upper: Some(json!(2.5)),
        },
        AttrQuery::Between {
            lower: Some(json!(0)),
            upper: None,
        },
        AttrQuery::Between {
            lower: None,
            upper: Some(json!(-0.0)),
        },
        AttrQuery::Between {
            lower: Some(json!("a")),
            upper: Some(json!("b")),
        },
        AttrQuery::Between {
            lower: Some(json!("a")),
            upper: None,
        },
        AttrQuery::Between {
            lower: None,
            upper: Some(json!(false)),
        },
        AttrQuery::Between {
            lower: Some(json!(long.clone())),
            upper: None,
        },
        AttrQuery::Prefix("a".into()),
        AttrQuery::Prefix(String::new()),
        AttrQuery::Prefix(long[..250].to_owned()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn lookups_find_every_match_and_the_check_agrees(ops in prop::collection::vec(op(), 1..40)) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        let types = store.write(|txn| {
            Ok::<_, StoreError>([
                store.intern(txn, Namespace::ConceptType, "A")?,
                store.intern(txn, Namespace::ConceptType, "B")?,
            ])
        }).expect("types");
        let mut ids: Vec<ConceptId> = Vec::new();
        for (n, op) in ops.into_iter().enumerate() {
            store.write(|txn| {
                match &op {
                    Op::Create(t, a, m) => {
                        let record = ConceptRecord { type_id: types[*t as usize], name: format!("c{n}"), attributes: a.clone(), metadata: m.clone() };
                        ids.push(store.create_concept(txn, &record)?);
                    }
                    Op::Update(i, t, a, m) if !ids.is_empty() => {
                        let id = ids[i % ids.len()];
                        if store.get_concept(txn, id)?.is_some() {
                            let record = ConceptRecord { type_id: types[*t as usize], name: format!("u{n}"), attributes: a.clone(), metadata: m.clone() };
                            store.update_concept(txn, id, &record)?;
                        }
                    }
                    Op::Delete(i) if !ids.is_empty() => {
                        store.delete_concept(txn, ids[i % ids.len()])?;
                    }
                    _ => {}
                }
                Ok::<_, StoreError>(())
            }).expect("write");
        }
        let report = store.check().expect("check");
        prop_assert!(report.ok, "{report:#?}");
        store.read(|txn| {
            let records: Vec<(ConceptId, ConceptRecord)> = store.all_concepts(txn)?.collect::<Result<_, _>>()?;
            for &t in &types {
                for kind in [FieldKind::Attributes, FieldKind::Metadata] {
                    for key in ["k", "m", "confidence", "never"] {
                        for q in queries() {
                            let found = store.attr_lookup(txn, t, kind, key, &q, usize::MAX)?;
                            assert!(found.complete);
                            let mut got = found.ids.clone();
                            got.sort();
                            let len = got.len();
                            got.dedup();
                            assert_eq!(len, got.len(), "a concept listed twice for {q:?}");
                            for (id, r) in &records {
                                let map = match kind { FieldKind::Attributes => &r.attributes, FieldKind::Metadata => &r.metadata };
                                let matches = r.type_id == t && map.get(key).is_some_and(|v| holds(v, &q));
                                if matches {
                                    assert!(got.contains(id), "{id} missing for {key} {q:?}: {r:?}");
                                }
                                if got.contains(id) {
                                    // A superset only where long strings are cut.
                                    let v = map.get(key).expect("an indexed key");
                                    assert!(r.type_id == t && (matches || v.as_str().is_some_and(|s| s.len() > 240)), "{id} wrongly found for {key} {q:?}: {r:?}");
                                }
                                if let Some(key_id) = store.lookup(txn, Namespace::Key, key)? {
                                    let field = store.concept_field(txn, *id, kind, key_id)?;
                                    assert_eq!(field, Some(map.get(key).cloned()));
                                }
                            }
                        }
                    }
                }
            }
            Ok::<_, StoreError>(())
        }).expect("read");
    }
}

#[test]
fn a_lookup_stops_at_its_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    store
        .write(|txn| {
            let t = store.intern(txn, Namespace::ConceptType, "T")?;
            for i in 0..10 {
                let mut attributes = Map::new();
                attributes.insert("n".into(), json!(i));
                store.create_concept(
                    txn,
                    &ConceptRecord {
                        type_id: t,
                        name: format!("c{i}"),
                        attributes,
                        ..Default::default()
                    },
                )?;
            }
            let q = AttrQuery::Between {
                lower: Some(json!(2)),
                upper: None,
            };
            let some = store.attr_lookup(txn, t, FieldKind::Attributes, "n", &q, 3)?;
            assert_eq!(some.ids.len(), 3);
            assert!(!some.complete);
            let all = store.attr_lookup(txn, t, FieldKind::Attributes, "n", &q, 100)?;
            assert_eq!(all.ids.len(), 8);
            assert!(all.complete);
            Ok::<_, StoreError>(())
        })
        .expect("write");
}

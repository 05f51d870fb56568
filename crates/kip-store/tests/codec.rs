//! Codecs round-trip, and keys sort as what they encode.

use crate::common;

use heed::{BytesDecode, BytesEncode};
use kip_store::codec::concept::ConceptBytes;
use kip_store::codec::concept_keys::{
    NameMemberKey, TypeMemberKey, name_member_key, name_member_prefix, type_member_key,
    type_name_key,
};
use kip_store::codec::document::{DocumentRef, DocumentView};
use kip_store::codec::element;
use kip_store::codec::integer::{CompactPropositionId, compact_u64, decode_compact_u64};
use kip_store::codec::integer::{ConceptIdCodec, I64Be, PropositionIdCodec, U32Be, U64Be};
use kip_store::codec::intern::{IdToNameKey, id_to_name_key};
use kip_store::codec::name_key::{HASHED_LEN, KEPT_PREFIX, name_key};
use kip_store::codec::posting::{
    BLOCK_POSTINGS, MAX_TERM_BYTES, append_to_block, block_key, block_tail, clamp_term,
    decode_block, decode_block_key, decode_term_entry, element_of, encode_block, encode_block_into,
    encode_term_entry, ordinal,
};
use kip_store::codec::proposition::PropositionBytes;
use kip_store::codec::stat_key::StatKey;
use kip_store::codec::triple::{Osp, Part, Permutation, Pos, Spo, Triple, prefix};
use kip_store::codec::{Reader, value, varint};
use kip_store::{ConceptId, ElementId, PropositionId};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn element_id() -> impl Strategy<Value = ElementId> {
    prop_oneof![
        any::<u64>().prop_map(|n| ElementId::Concept(ConceptId(n))),
        any::<u64>().prop_map(|n| ElementId::Proposition(PropositionId(n))),
    ]
}

fn triple() -> impl Strategy<Value = Triple> {
    (element_id(), any::<u32>(), element_id()).prop_map(|(subject, predicate, object)| Triple {
        subject,
        predicate,
        object,
    })
}

fn encode<'a, C: BytesEncode<'a>>(item: &'a C::EItem) -> Vec<u8> {
    C::bytes_encode(item).expect("encodes").into_owned()
}

/// Exact JSON text, which (unlike `Value`'s `==`) tells `-0.0` from `0.0`
/// and sees key order.
fn text(v: &Value) -> String {
    serde_json::to_string(v).expect("serializes")
}

proptest! {
    #[test]
    fn varints_round_trip(n in any::<u64>()) {
        let mut out = Vec::new();
        varint::write(&mut out, n);
        prop_assert!(out.len() <= varint::MAX_LEN);
        let mut r = Reader::new(&out);
        prop_assert_eq!(varint::read(&mut r).expect("decodes"), n);
        prop_assert!(r.is_empty());
    }

    #[test]
    fn integer_keys_sort_as_numbers(a in any::<u64>(), b in any::<u64>()) {
        let (ka, kb) = (encode::<U64Be>(&a), encode::<U64Be>(&b));
        prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
        prop_assert_eq!(U64Be::bytes_decode(&ka).expect("decodes"), a);
        let (ca, cb) = (encode::<ConceptIdCodec>(&ConceptId(a)), encode::<ConceptIdCodec>(&ConceptId(b)));
        prop_assert_eq!(ca.cmp(&cb), a.cmp(&b));
        prop_assert_eq!(ConceptIdCodec::bytes_decode(&ca).expect("decodes"), ConceptId(a));
        let pa = encode::<PropositionIdCodec>(&PropositionId(a));
        prop_assert_eq!(PropositionIdCodec::bytes_decode(&pa).expect("decodes"), PropositionId(a));
        let (a32, b32) = (a as u32, b as u32);
        let (ka, kb) = (encode::<U32Be>(&a32), encode::<U32Be>(&b32));
        prop_assert_eq!(ka.cmp(&kb), a32.cmp(&b32));
        prop_assert_eq!(U32Be::bytes_decode(&ka).expect("decodes"), a32);
        let i = a as i64;
        prop_assert_eq!(I64Be::bytes_decode(&encode::<I64Be>(&i)).expect("decodes"), i);
    }

    #[test]
    fn element_ids_round_trip_and_sort(a in element_id(), b in element_id()) {
        let (ka, kb) = (element::encode(a), element::encode(b));
        prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
        prop_assert_eq!(element::decode(&ka).expect("decodes"), a);
        prop_assert_eq!(a.to_string().parse::<ElementId>().expect("parses"), a);
    }

    #[test]
    fn triple_keys_sort_in_their_permutation_order(a in triple(), b in triple()) {
        let spo = |t: &Triple| (t.subject, t.predicate, t.object);
        let pos = |t: &Triple| (t.predicate, t.object, t.subject);
        let osp = |t: &Triple| (t.object, t.subject, t.predicate);
        prop_assert_eq!(Spo::encode(&a).cmp(&Spo::encode(&b)), spo(&a).cmp(&spo(&b)));
        prop_assert_eq!(Pos::encode(&a).cmp(&Pos::encode(&b)), pos(&a).cmp(&pos(&b)));
        prop_assert_eq!(Osp::encode(&a).cmp(&Osp::encode(&b)), osp(&a).cmp(&osp(&b)));
        prop_assert_eq!(Spo::decode(&Spo::encode(&a)).expect("decodes"), a);
        prop_assert_eq!(Pos::decode(&Pos::encode(&a)).expect("decodes"), a);
        prop_assert_eq!(Osp::decode(&Osp::encode(&a)).expect("decodes"), a);
    }

    #[test]
    fn type_member_keys_sort_by_type_then_id(t1 in any::<u32>(), c1 in any::<u64>(), t2 in any::<u32>(), c2 in any::<u64>()) {
        let (k1, k2) = (type_member_key(t1, ConceptId(c1)), type_member_key(t2, ConceptId(c2)));
        prop_assert_eq!(k1.cmp(&k2), (t1, c1).cmp(&(t2, c2)));
        prop_assert_eq!(TypeMemberKey::bytes_decode(&k1).expect("decodes"), (t1, ConceptId(c1)));
    }

    #[test]
    fn values_round_trip_exactly(v in common::json_value()) {
        let mut out = Vec::new();
        value::encode(&mut out, &v).expect("encodes");
        let back = value::decode_all(&out).expect("decodes");
        prop_assert_eq!(text(&back), text(&v));
        prop_assert_eq!(back, v);
    }

    #[test]
    fn fields_round_trip_through_interned_keys(entries in prop::collection::vec(("\\PC{0,6}", common::json_value()), 0..6)) {
        let map: Map<String, Value> = entries.into_iter().collect();
        let mut keys: Vec<String> = Vec::new();
        let mut out = Vec::new();
        value::encode_fields(&mut out, &map, |k| -> Result<u32, value::TooDeep> {
            let at = keys.iter().position(|x| x == k).unwrap_or_else(|| { keys.push(k.to_owned()); keys.len() - 1 });
            Ok(at as u32 + 1)
        }).expect("encodes");
        let back = value::decode_fields(&out, |id| -> Result<String, kip_store::codec::DecodeError> {
            Ok(keys[id as usize - 1].clone())
        }).expect("decodes");
        prop_assert_eq!(text(&Value::Object(back)), text(&Value::Object(map)));
    }

    #[test]
    fn appending_to_a_block_writes_what_encoding_the_whole_block_would(
        gaps in prop::collection::vec((1u64..100_000, 1u32..300), 2..(2 * BLOCK_POSTINGS)),
        start in any::<u32>(),
        split in any::<prop::sample::Index>(),
    ) {
        let mut at = u64::from(start);
        let postings: Vec<(u64, u32)> = gaps
            .iter()
            .map(|&(gap, tf)| {
                at += gap;
                (at, tf)
            })
            .collect();
        let k = 1 + split.index(postings.len() - 1);
        let (old, new) = postings.split_at(k);
        let block = encode_block(old);
        let tail = block_tail(old[0].0, &block).expect("reads");
        prop_assert_eq!((tail.count, tail.last), (old.len(), old[k - 1].0));
        let mut out = vec![9; 3];
        append_to_block(&mut out, &block, tail, new);
        prop_assert_eq!(&out, &encode_block(&postings));
        encode_block_into(&mut out, new);
        prop_assert_eq!(&out, &encode_block(new));
    }

    #[test]
    fn garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = value::decode_all(&bytes);
        let _ = value::decode_fields(&bytes, |id| -> Result<String, kip_store::codec::DecodeError> { Ok(id.to_string()) });
        let _ = ConceptBytes::decode(&bytes);
        let _ = PropositionBytes::decode(&bytes);
        let _ = DocumentView::decode(&bytes).map(|d| d.terms());
        let _ = StatKey::decode(&bytes);
        let _ = decode_block_key(&bytes);
        let _ = decode_block(1, &bytes);
        // The tail of a block is read with decode's checks: one fails
        // exactly when the other does, and agrees on what it read.
        match (decode_block(1, &bytes), block_tail(1, &bytes)) {
            (Ok(postings), Ok(tail)) => {
                prop_assert_eq!(tail.count, postings.len());
                prop_assert_eq!(Some(tail.last), postings.last().map(|p| p.0));
            }
            (Err(_), Err(_)) => {}
            (a, b) => prop_assert!(false, "decode {:?} but tail {:?}", a, b),
        }
        let _ = decode_term_entry(&bytes);
        let _ = kip_store::codec::document::v4::decode(&bytes);
        let _ = NameMemberKey::bytes_decode(&bytes);
        let _ = Spo::decode(&bytes);
        let _ = Pos::decode(&bytes);
        let _ = Osp::decode(&bytes);
        let _ = decode_compact_u64(&bytes);
        let _ = kip_store::codec::proposition::v4::decode(&bytes);
        let _ = element::decode(&bytes);
    }

    #[test]
    fn ids_parse_only_their_canonical_form(text in "[CPcp]?:?-?0?[0-9]{0,3} ?") {
        if let Ok(id) = text.parse::<ElementId>() {
            prop_assert_eq!(id.to_string(), text);
        }
    }
}

#[test]
fn integral_floats_stay_floats_and_big_integers_stay_exact() {
    for v in [
        json!(1.0),
        json!(-0.0),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(-1),
        json!(0),
    ] {
        let mut out = Vec::new();
        value::encode(&mut out, &v).expect("encodes");
        let back = value::decode_all(&out).expect("decodes");
        assert_eq!(text(&back), text(&v));
        assert_eq!(back.is_f64(), v.is_f64());
        assert_eq!(back.is_u64(), v.is_u64());
        assert_eq!(back.is_i64(), v.is_i64());
    }
}

#[test]
fn values_nested_too_deeply_are_refused() {
    let mut v = json!(1);
    for _ in 0..=value::MAX_DEPTH {
        v = json!([v]);
    }
    let mut out = Vec::new();
    assert!(value::encode(&mut out, &v).is_err());
}

#[test]
fn short_names_are_kept_and_long_ones_hashed() {
    let short = "x".repeat(HASHED_LEN - 1);
    assert_eq!(&*name_key(short.as_bytes()), short.as_bytes());
    let long_a = format!("{}a", "x".repeat(HASHED_LEN));
    let long_b = format!("{}b", "x".repeat(HASHED_LEN));
    let (ka, kb) = (name_key(long_a.as_bytes()), name_key(long_b.as_bytes()));
    assert_eq!(ka.len(), HASHED_LEN);
    assert_ne!(ka, kb);
    assert_eq!(&ka[..KEPT_PREFIX], &long_a.as_bytes()[..KEPT_PREFIX]);
    // Every key the store builds from a name fits LMDB's 511-byte limit.
    assert!(type_name_key(u32::MAX, &long_a).len() <= 511);
    assert!(name_member_key(&long_a, ConceptId(u64::MAX)).len() <= 511);
}

#[test]
fn name_member_keys_tell_names_with_nul_apart() {
    let key = name_member_key("a\0b", ConceptId(7));
    let (name, id) = NameMemberKey::bytes_decode(&key).expect("decodes");
    assert_eq!((name, id), (&b"a\0b"[..], ConceptId(7)));
    // "a"'s prefix is a prefix of this key, but the lengths differ.
    assert!(key.starts_with(&name_member_prefix("a")));
    assert_ne!(name.len(), name_member_prefix("a").len() - 1);
}

/// Small ids (every length from 1 to 8 bytes) and the prefixes the pattern
/// lookups use: a key starts with the encoded leading parts of its own
/// triple and with no other's.
#[test]
fn compact_triple_keys_sort_prefix_and_refuse_non_minimal_parts() {
    let numbers = [
        0u64,
        1,
        255,
        256,
        65_535,
        65_536,
        1 << 24,
        1 << 32,
        1 << 40,
        1 << 48,
        1 << 56,
        u64::MAX,
    ];
    let mut triples = Vec::new();
    for &n in &numbers {
        for &m in &numbers[..6] {
            for p in [1u32, 255, 256, 70_000, u32::MAX] {
                triples.push(Triple {
                    subject: ElementId::Concept(ConceptId(n)),
                    predicate: p,
                    object: ElementId::Proposition(PropositionId(m)),
                });
                triples.push(Triple {
                    subject: ElementId::Proposition(PropositionId(m)),
                    predicate: p,
                    object: ElementId::Concept(ConceptId(n)),
                });
            }
        }
    }
    use Part::{Element as E, Predicate as P};
    for a in &triples {
        for b in triples.iter().step_by(7) {
            assert_eq!(
                Spo::encode(a).cmp(&Spo::encode(b)),
                (a.subject, a.predicate, a.object).cmp(&(b.subject, b.predicate, b.object))
            );
            assert_eq!(
                Pos::encode(a).cmp(&Pos::encode(b)),
                (a.predicate, a.object, a.subject).cmp(&(b.predicate, b.object, b.subject))
            );
            assert_eq!(
                Osp::encode(a).cmp(&Osp::encode(b)),
                (a.object, a.subject, a.predicate).cmp(&(b.object, b.subject, b.predicate))
            );
            let same_s = Spo::encode(b).starts_with(&prefix(&[E(a.subject)]));
            assert_eq!(same_s, a.subject == b.subject);
            let same_sp = Spo::encode(b).starts_with(&prefix(&[E(a.subject), P(a.predicate)]));
            assert_eq!(
                same_sp,
                a.subject == b.subject && a.predicate == b.predicate
            );
            let same_po = Pos::encode(b).starts_with(&prefix(&[P(a.predicate), E(a.object)]));
            assert_eq!(same_po, a.predicate == b.predicate && a.object == b.object);
            let same_os = Osp::encode(b).starts_with(&prefix(&[E(a.object), E(a.subject)]));
            assert_eq!(same_os, a.object == b.object && a.subject == b.subject);
        }
        assert_eq!(Spo::decode(&Spo::encode(a)).expect("decodes"), *a);
    }
    // C:1 · predicate 2 · P:3 is seven bytes; the same with a padded part is refused.
    let t = Triple {
        subject: ElementId::Concept(ConceptId(1)),
        predicate: 2,
        object: ElementId::Proposition(PropositionId(3)),
    };
    assert_eq!(&*Spo::encode(&t), &[0x01, 1, 0x01, 2, 0x11, 3]);
    assert!(Spo::decode(&[0x02, 0, 1, 0x01, 2, 0x11, 3]).is_err());
    assert!(Spo::decode(&[0x01, 1, 0x02, 0, 2, 0x11, 3]).is_err());
    assert!(Spo::decode(&[0x01, 1, 0x01, 2, 0x21, 3]).is_err());
    assert!(Spo::decode(&[0x09, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0x01, 2, 0x11, 3]).is_err());
    for n in numbers {
        let bytes = compact_u64(n);
        assert_eq!(decode_compact_u64(&bytes).expect("decodes"), n);
        assert_eq!(
            CompactPropositionId::bytes_decode(&encode::<CompactPropositionId>(&PropositionId(n)))
                .expect("decodes"),
            PropositionId(n)
        );
    }
    assert!(decode_compact_u64(&[0, 1]).is_err());
    assert!(decode_compact_u64(&[]).is_err());
    assert!(decode_compact_u64(&[1; 9]).is_err());
}

#[test]
fn ordinals_and_block_keys_sort_as_term_then_element() {
    let elements = [
        ElementId::Concept(ConceptId(1)),
        ElementId::Concept(ConceptId(300)),
        ElementId::Concept(ConceptId(u64::MAX >> 1)),
        ElementId::Proposition(PropositionId(1)),
        ElementId::Proposition(PropositionId(1 << 40)),
    ];
    for pair in elements.windows(2) {
        assert!(ordinal(pair[0]) < ordinal(pair[1]), "{pair:?}");
        assert!(block_key(7, ordinal(pair[0])) < block_key(7, ordinal(pair[1])));
    }
    for e in elements {
        assert_eq!(element_of(ordinal(e)), e);
        assert_eq!(
            decode_block_key(&block_key(9, ordinal(e))).expect("decodes"),
            (9, ordinal(e))
        );
        // A later term's keys all sort after an earlier term's.
        assert!(block_key(9, ordinal(e)) < block_key(10, 0));
    }
}

#[test]
fn posting_blocks_round_trip_and_refuse_damage() {
    let postings: Vec<(u64, u32)> = (0..BLOCK_POSTINGS as u64)
        .map(|i| {
            (
                ordinal(ElementId::Proposition(PropositionId(5 + i * i * 1000))),
                1 + (i as u32 % 3),
            )
        })
        .collect();
    let bytes = encode_block(&postings);
    assert_eq!(
        decode_block(postings[0].0, &bytes).expect("decodes"),
        postings
    );
    // Small gaps cost one byte each, and a frequency another.
    let dense: Vec<(u64, u32)> = (10..20).map(|i| (i, 1)).collect();
    assert_eq!(encode_block(&dense).len(), 1 + 10 * 2);
    // An empty block, a repeated element, a zero frequency, trailing bytes:
    // refused. (A block is relative to its key; `check` compares every
    // posting with its document.)
    assert!(decode_block(10, &encode_block(&[])).is_err());
    assert!(decode_block(10, &[2, 0, 1, 0, 1]).is_err());
    assert!(decode_block(10, &[1, 0, 0]).is_err());
    assert!(decode_block(10, &[1, 0, 1, 7]).is_err());
    // A varint cut short, one over 64 bits: refused too, by both readers.
    let overlong = [&[1, 0][..], &[0xff; 9][..], &[0x02][..]].concat();
    for damaged in [&[1, 0, 0x81][..], &[2, 0, 1, 0x80][..], &overlong[..]] {
        assert!(decode_block(10, damaged).is_err(), "{damaged:?}");
        assert!(block_tail(10, damaged).is_err(), "{damaged:?}");
    }
    let entry = encode_term_entry(42, "阿司匹林");
    assert_eq!(
        decode_term_entry(&entry).expect("decodes"),
        (42, "阿司匹林")
    );
}

#[test]
fn long_terms_are_cut_on_a_character_boundary() {
    let term = "阿".repeat(200); // 600 bytes
    let cut = clamp_term(&term);
    assert!(cut.len() <= MAX_TERM_BYTES && cut.len() > MAX_TERM_BYTES - 3);
    assert!(term.starts_with(cut));
    assert_eq!(clamp_term("short"), "short");
}

#[test]
fn records_round_trip() {
    let concept = ConceptBytes {
        type_id: 9,
        name: "阿司匹林",
        attributes: &[1, 2, 3],
        metadata: &[4, 5],
    };
    assert_eq!(
        ConceptBytes::decode(&concept.encode()).expect("decodes"),
        concept
    );
    let proposition = PropositionBytes {
        triple: Triple {
            subject: ElementId::Concept(ConceptId(1)),
            predicate: 3,
            object: ElementId::Proposition(PropositionId(2)),
        },
        attributes: &[],
        metadata: &[0],
    };
    assert_eq!(
        PropositionBytes::decode(&proposition.encode()).expect("decodes"),
        proposition
    );
    let terms = [(3, 2), (70_000, 1)];
    let doc = DocumentRef {
        len: 12,
        terms: &terms,
    };
    let bytes = doc.encode();
    let view = DocumentView::decode(&bytes).expect("decodes");
    assert_eq!(view.len, 12);
    assert_eq!(view.terms().expect("decodes"), terms);
}

#[test]
fn stat_and_intern_keys_round_trip() {
    for key in [
        StatKey::ConceptsOfType(7),
        StatKey::PropositionsOfPredicate(u32::MAX),
        StatKey::Concepts,
        StatKey::Propositions,
        StatKey::Documents,
        StatKey::DocumentLength,
    ] {
        assert_eq!(StatKey::decode(&key.encode()).expect("decodes"), key);
    }
    let key = id_to_name_key(2, 300);
    assert_eq!(IdToNameKey::bytes_decode(&key).expect("decodes"), (2, 300));
    assert!(id_to_name_key(1, 2) < id_to_name_key(1, 10));
    assert!(id_to_name_key(1, u32::MAX) < id_to_name_key(2, 0));
}

#[test]
fn element_id_text_form() {
    assert_eq!(ElementId::Concept(ConceptId(12)).to_string(), "C:12");
    assert_eq!(ElementId::Proposition(PropositionId(0)).to_string(), "P:0");
    assert_eq!(
        "P:7".parse::<PropositionId>().expect("parses"),
        PropositionId(7)
    );
    for bad in [
        "",
        "C:",
        "C:01",
        "c:1",
        "X:1",
        "C:-1",
        "C: 1",
        "C:1 ",
        "C:18446744073709551616",
    ] {
        assert!(bad.parse::<ElementId>().is_err(), "{bad:?} parsed");
    }
    assert!("C:1".parse::<PropositionId>().is_err());
    let json = serde_json::to_value(ElementId::Concept(ConceptId(3))).expect("serializes");
    assert_eq!(json, json!("C:3"));
    let back: ElementId = serde_json::from_value(json!("P:4")).expect("deserializes");
    assert_eq!(back, ElementId::Proposition(PropositionId(4)));
}

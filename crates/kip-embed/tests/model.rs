//! The real model, when installed (`scripts/setup-model.sh`). Where the setup
//! promised it (`KIP_EMBED_REQUIRED=1`, as `scripts/test.sh` sets), a
//! missing model fails instead of skipping.
use kip_embed::{Embedder, TextKind, dot};

fn model() -> Option<Embedder> {
    match Embedder::discover() {
        Some(Ok(m)) => Some(m),
        Some(Err(e)) => panic!("the embedding model is installed but does not load: {e}"),
        None if std::env::var("KIP_EMBED_REQUIRED").as_deref() == Ok("1") => {
            panic!(
                "KIP_EMBED_REQUIRED=1 but no model in {:?}",
                kip_embed::model_dir()
            )
        }
        None => {
            eprintln!("no embedding model installed: skipping (run scripts/setup-model.sh)");
            None
        }
    }
}

#[test]
fn vectors_are_unit_length_and_of_the_model_dimension() {
    let Some(m) = model() else { return };
    assert_eq!(m.info().dimension, 384);
    for v in m.embed(&["hello world", "", "降压药"], TextKind::Passage) {
        assert_eq!(v.len(), 384);
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
    }
}

#[test]
fn batching_does_not_change_a_vector() {
    let Some(m) = model() else { return };
    let alone = m.embed_one("Mortgage renewal", TextKind::Passage);
    let batch = m.embed(
        &["Dark mode", "Mortgage renewal", "降压药"],
        TextKind::Passage,
    );
    assert!(dot(&alone, &batch[1]) > 0.9999);
}

#[test]
fn meaning_crosses_languages_and_paraphrase() {
    let Some(m) = model() else { return };
    let docs = m.embed(
        &["降压药", "Mortgage renewal", "Dark mode"],
        TextKind::Passage,
    );
    let best = |q: &str| {
        let q = m.embed_one(q, TextKind::Query);
        (0..docs.len())
            .max_by(|&a, &b| dot(&q, &docs[a]).total_cmp(&dot(&q, &docs[b])))
            .unwrap_or(usize::MAX)
    };
    assert_eq!(best("blood pressure medicine"), 0);
    assert_eq!(best("refinancing my home"), 1);
    assert_eq!(best("深色模式"), 2);
}

#[test]
fn a_large_batch_split_over_threads_keeps_order_and_values() {
    let Some(m) = model() else { return };
    let texts: Vec<String> = (0..40).map(|i| format!("memory number {i}")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let batch = m.embed(&refs, TextKind::Passage);
    assert_eq!(batch.len(), 40);
    for i in [0, 17, 39] {
        let alone = m.embed_one(&texts[i], TextKind::Passage);
        assert!(dot(&alone, &batch[i]) > 0.9999, "text {i}");
    }
}

/// `reference.tsv` holds four vectors (kind, text, 384 components) as the
/// encoder computed them before its AVX2 kernels and `f32` GELU (4c3c4c4,
/// scalar `f64` erf, SSE2 dot products); any faster path must keep each
/// vector within 1e-3 cosine of them.
#[test]
fn vectors_stay_those_of_the_reference_encoder() {
    let Some(m) = model() else { return };
    let reference = include_str!("reference.tsv");
    for line in reference.lines() {
        let mut fields = line.split('\t');
        let (Some(kind), Some(text), Some(nums)) = (fields.next(), fields.next(), fields.next())
        else {
            panic!("a reference line of three fields: {line}");
        };
        let want: Vec<f32> = nums
            .split(' ')
            .map(|n| n.parse().expect("a number"))
            .collect();
        let kind = if kind == "query" {
            TextKind::Query
        } else {
            TextKind::Passage
        };
        let got = m.embed_one(text, kind);
        let cos = dot(&got, &want) / dot(&want, &want).sqrt();
        assert!(cos > 0.999, "{text}: cosine {cos} with the reference");
        // Passages come in batches too (SGEMM, not the few-token kernel).
        let batch = m.embed(&[text, "another text to make a batch"], kind);
        assert!(
            dot(&batch[0], &want) / dot(&want, &want).sqrt() > 0.999,
            "{text} in a batch"
        );
    }
}

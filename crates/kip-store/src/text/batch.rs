//! A batch of documents regrouped by term, the shape the index is written
//! in: each distinct term once, with its postings in element order.

use std::collections::HashMap;

use super::{DocumentBatch, NewDocument};
use crate::codec::posting::{clamp_term, ordinal};
use crate::ids::ElementId;

/// A document's terms as stored, into `out` (cleared first): empty terms
/// and zero frequencies skipped, long terms cut, sorted, repeated terms
/// merged.
pub(super) fn merge_terms_into<'a, S: AsRef<str>>(
    terms: &'a [(S, u32)],
    out: &mut Vec<(&'a str, u32)>,
) {
    out.clear();
    out.extend(
        terms
            .iter()
            .filter(|(term, tf)| !term.as_ref().is_empty() && *tf > 0)
            .map(|(term, tf)| (clamp_term(term.as_ref()), *tf)),
    );
    out.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.dedup_by(|later, kept| {
        if later.0 == kept.0 {
            kept.1 = kept.1.saturating_add(later.1);
            true
        } else {
            false
        }
    });
}

/// Postings of one term as `(element ordinal, term frequency)`, sorted.
pub(super) type Postings = Vec<(u64, u32)>;

/// A document to write: its element, its length and its terms.
pub(super) struct Doc<'a, S> {
    pub(super) element: ElementId,
    pub(super) len: u32,
    pub(super) terms: &'a [(S, u32)],
}

impl Doc<'_, String> {
    /// The batch's documents as [`Store::insert_documents`] takes them.
    pub(super) fn view(docs: &[NewDocument]) -> Vec<Doc<'_, String>> {
        docs.iter()
            .map(|d| Doc {
                element: d.element,
                len: d.len,
                terms: &d.terms,
            })
            .collect()
    }
}

/// A batch's documents regrouped by term, in flat vectors (no allocation
/// per term or per document).
pub(super) struct Batch<'a> {
    /// Each distinct term (clamped), by slot.
    pub(super) texts: Vec<&'a str>,
    /// Where each slot's postings start in `postings` (one more entry at the
    /// end).
    pub(super) starts: Vec<usize>,
    /// Every posting `(element ordinal, frequency)`, grouped by slot, each
    /// group in ordinal order.
    pub(super) postings: Vec<(u64, u32)>,
    /// Every document's terms `(slot, frequency)`, document after document.
    pub(super) doc_terms: Vec<(u32, u32)>,
    /// Where each document's terms end in `doc_terms`.
    pub(super) doc_ends: Vec<usize>,
    /// Each document's element and length.
    pub(super) elements: Vec<ElementId>,
    pub(super) lens: Vec<u32>,
    /// The sum of the documents' lengths.
    pub(super) total_len: i64,
}

impl<'a> Batch<'a> {
    pub(super) fn gather<S: AsRef<str>>(docs: &'a [Doc<'a, S>]) -> Batch<'a> {
        let mut slots: HashMap<&str, u32> = HashMap::with_capacity(docs.len());
        let mut texts: Vec<&str> = Vec::new();
        let mut doc_terms = Vec::with_capacity(docs.len() * 4);
        let mut doc_ends = Vec::with_capacity(docs.len());
        let mut merged = Vec::new();
        for doc in docs {
            merge_terms_into(doc.terms, &mut merged);
            for &(term, tf) in &merged {
                let slot = *slots.entry(term).or_insert_with(|| {
                    texts.push(term);
                    (texts.len() - 1) as u32
                });
                doc_terms.push((slot, tf));
            }
            doc_ends.push(doc_terms.len());
        }
        Batch::scatter(
            texts,
            doc_terms,
            doc_ends,
            docs.iter().map(|d| d.element).collect(),
            docs.iter().map(|d| d.len).collect(),
        )
    }

    /// The batch of a [`DocumentBatch`] (but its table of terms, `terms`),
    /// whose documents already name their terms by slot.
    pub(super) fn from_table(terms: &'a [String], table: DocumentBatch) -> Batch<'a> {
        Batch::scatter(
            terms.iter().map(String::as_str).collect(),
            table.doc_terms,
            table.doc_ends,
            table.elements,
            table.lens,
        )
    }

    /// Scatters each document's `(slot, frequency)` pairs (each document's
    /// slots distinct) into its terms' posting groups.
    pub(super) fn scatter(
        texts: Vec<&'a str>,
        doc_terms: Vec<(u32, u32)>,
        doc_ends: Vec<usize>,
        elements: Vec<ElementId>,
        lens: Vec<u32>,
    ) -> Batch<'a> {
        let mut counts = vec![0usize; texts.len()];
        for &(slot, _) in &doc_terms {
            counts[slot as usize] += 1;
        }
        let mut starts = Vec::with_capacity(counts.len() + 1);
        let mut at = 0;
        for count in &counts {
            starts.push(at);
            at += count;
        }
        starts.push(at);
        let mut fill = starts.clone();
        let mut postings = vec![(0, 0); doc_terms.len()];
        let mut begin = 0;
        for (&element, &end) in elements.iter().zip(&doc_ends) {
            let o = ordinal(element);
            for &(slot, tf) in &doc_terms[begin..end] {
                let at = &mut fill[slot as usize];
                postings[*at] = (o, tf);
                *at += 1;
            }
            begin = end;
        }
        // Ordinals sort as elements do; a bulk import's documents come in
        // element order already.
        if !elements.is_sorted() {
            for group in starts.windows(2) {
                postings[group[0]..group[1]].sort_unstable_by_key(|p| p.0);
            }
        }
        let total_len = lens.iter().map(|&l| i64::from(l)).sum();
        Batch {
            texts,
            starts,
            postings,
            doc_terms,
            doc_ends,
            elements,
            lens,
            total_len,
        }
    }

    /// The postings of the term in `slot`, in ordinal order.
    pub(super) fn postings(&self, slot: u32) -> &[(u64, u32)] {
        let slot = slot as usize;
        &self.postings[self.starts[slot]..self.starts[slot + 1]]
    }

    /// The terms `(slot, frequency)` of the document at position `at`.
    pub(super) fn terms_of(&self, at: usize) -> &[(u32, u32)] {
        let begin = if at == 0 { 0 } else { self.doc_ends[at - 1] };
        &self.doc_terms[begin..self.doc_ends[at]]
    }
}

/// How many known terms of a batch are updated before their entries and
/// blocks are written (bounds the bytes held: ~400 per block).
pub(super) const KNOWN_CHUNK: usize = 4_096;

/// Puts gathered in key order to go through one cursor: keys of `N`
/// bytes, values one after the other in a single buffer.
#[derive(Default)]
pub(super) struct SortedPuts<const N: usize> {
    pub(super) keys: Vec<([u8; N], std::ops::Range<usize>)>,
    pub(super) values: Vec<u8>,
}

impl<const N: usize> SortedPuts<N> {
    /// Adds a put of `key`, which follows every key added before.
    pub(super) fn push(&mut self, key: [u8; N], value: &[u8]) {
        debug_assert!(self.keys.last().is_none_or(|(k, _)| *k < key));
        let at = self.values.len();
        self.values.extend_from_slice(value);
        self.keys.push((key, at..self.values.len()));
    }

    pub(super) fn entries(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        (self.keys.iter()).map(|(k, range)| (&k[..], &self.values[range.clone()]))
    }

    pub(super) fn clear(&mut self) {
        self.keys.clear();
        self.values.clear();
    }
}

//! The inverted text index behind SEARCH: postings, a forward list per
//! document, document frequencies and corpus statistics for BM25.
//!
//! The engine decides what a document is and tokenizes it; the store only
//! keeps what it is given, consistently: indexing an element replaces its
//! previous document, deleting an element removes its document, and the
//! counts (documents, total length, per-term document frequency) change in
//! the same transaction.

use heed::{RoTxn, RwTxn};

use crate::Store;
use crate::codec::document::DocumentRef;
use crate::codec::posting::{clamp_term, posting_key, posting_prefix};
use crate::codec::stat_key::StatKey;
use crate::error::{Lmdb as _, StoreError};
use crate::ids::ElementId;
use crate::store::for_each_with_prefix;

/// One posting found by a prefix lookup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixPosting {
    pub term: String,
    pub element: ElementId,
    pub term_frequency: u32,
}

/// One document of a batch for [`Store::index_documents`]: the same
/// arguments [`Store::index_document`] takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewDocument {
    pub element: ElementId,
    pub terms: Vec<(String, u32)>,
    pub len: u32,
}

/// A document's terms as stored: empty terms and zero frequencies skipped,
/// long terms cut, sorted, repeated terms merged.
fn merge_terms(terms: &[(String, u32)]) -> Vec<(&str, u32)> {
    let mut merged: Vec<(&str, u32)> = terms
        .iter()
        .filter(|(term, tf)| !term.is_empty() && *tf > 0)
        .map(|(term, tf)| (clamp_term(term), *tf))
        .collect();
    merged.sort_unstable_by(|a, b| a.0.cmp(b.0));
    merged.dedup_by(|later, kept| {
        if later.0 == kept.0 {
            kept.1 = kept.1.saturating_add(later.1);
            true
        } else {
            false
        }
    });
    merged
}

impl Store {
    /// Indexes `element` as a document of `doc_len` tokens with the given
    /// `(term, frequency)` pairs, replacing its previous document. Repeated
    /// terms are merged, empty terms and zero frequencies skipped, and terms
    /// longer than 256 bytes cut (see [`crate::codec::posting`]). The element
    /// must exist.
    pub fn index_document(
        &self,
        txn: &mut RwTxn<'_>,
        element: ElementId,
        terms: &[(String, u32)],
        doc_len: u32,
    ) -> Result<(), StoreError> {
        if !self.contains(txn, element)? {
            return Err(StoreError::NotFound { element });
        }
        self.remove_document(txn, element)?;
        let merged = merge_terms(terms);
        for &(term, tf) in &merged {
            self.db
                .postings
                .put(txn, &posting_key(term, element), &tf)
                .lmdb()?;
            let df = self.db.terms.get(txn, term).lmdb()?.unwrap_or(0);
            self.db.terms.put(txn, term, &(df + 1)).lmdb()?;
        }
        let doc = DocumentRef {
            len: doc_len,
            terms: &merged,
        };
        self.db.documents.put(txn, &element, &doc).lmdb()?;
        self.add_stat(txn, StatKey::Documents, 1)?;
        self.add_stat(txn, StatKey::DocumentLength, i64::from(doc_len))
    }

    /// Indexes many documents at once, with the same result as calling
    /// [`Store::index_document`] for each in turn (each replaces its
    /// element's previous document; every element must exist and appear
    /// once). The postings of the whole batch are written sorted by
    /// `(term, element)`, and each distinct term's document frequency and
    /// the corpus statistics are read and written once per batch, not once
    /// per document: a bulk import's links share most of their terms
    /// (predicates, the names of their ends).
    pub fn index_documents(
        &self,
        txn: &mut RwTxn<'_>,
        docs: &[NewDocument],
    ) -> Result<(), StoreError> {
        let mut seen = std::collections::HashSet::with_capacity(docs.len());
        for doc in docs {
            if !seen.insert(doc.element) {
                return Err(StoreError::invalid(format!(
                    "{} appears twice in one batch of documents",
                    doc.element
                )));
            }
            if !self.contains(txn, doc.element)? {
                return Err(StoreError::NotFound {
                    element: doc.element,
                });
            }
        }
        for doc in docs {
            self.remove_document(txn, doc.element)?;
        }
        let mut postings: Vec<(&str, ElementId, u32)> = Vec::new();
        let mut total_len: i64 = 0;
        for doc in docs {
            let merged = merge_terms(&doc.terms);
            postings.extend(merged.iter().map(|&(t, tf)| (t, doc.element, tf)));
            let forward = DocumentRef {
                len: doc.len,
                terms: &merged,
            };
            self.db.documents.put(txn, &doc.element, &forward).lmdb()?;
            total_len += i64::from(doc.len);
        }
        postings.sort_unstable_by(|a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)));
        let mut i = 0;
        while i < postings.len() {
            let term = postings[i].0;
            let mut j = i;
            while j < postings.len() && postings[j].0 == term {
                self.db
                    .postings
                    .put(txn, &posting_key(term, postings[j].1), &postings[j].2)
                    .lmdb()?;
                j += 1;
            }
            let added = u32::try_from(j - i)
                .map_err(|_| StoreError::invalid("too many documents in one batch"))?;
            let df = self.db.terms.get(txn, term).lmdb()?.unwrap_or(0);
            self.db.terms.put(txn, term, &(df + added)).lmdb()?;
            i = j;
        }
        if !docs.is_empty() {
            self.add_stat(txn, StatKey::Documents, docs.len() as i64)?;
            self.add_stat(txn, StatKey::DocumentLength, total_len)?;
        }
        Ok(())
    }

    /// Removes `element`'s document from the index; returns whether it had
    /// one.
    pub fn remove_document(
        &self,
        txn: &mut RwTxn<'_>,
        element: ElementId,
    ) -> Result<bool, StoreError> {
        // The forward list is copied out: the loop below writes to the
        // databases the borrowed bytes live in.
        let (len, terms): (u32, Vec<String>) = match self.db.documents.get(txn, &element).lmdb()? {
            None => return Ok(false),
            Some(doc) => (
                doc.len,
                doc.terms()?
                    .into_iter()
                    .map(|(t, _)| t.to_owned())
                    .collect(),
            ),
        };
        for term in &terms {
            self.db
                .postings
                .delete(txn, &posting_key(term, element))
                .lmdb()?;
            match self.db.terms.get(txn, term).lmdb()? {
                Some(df) if df > 1 => self.db.terms.put(txn, term, &(df - 1)).lmdb()?,
                Some(_) => {
                    self.db.terms.delete(txn, term).lmdb()?;
                }
                None => {
                    return Err(StoreError::corrupt(format!(
                        "term {term:?} of {element} has no document frequency"
                    )));
                }
            }
        }
        self.db.documents.delete(txn, &element).lmdb()?;
        self.add_stat(txn, StatKey::Documents, -1)?;
        self.add_stat(txn, StatKey::DocumentLength, -i64::from(len))?;
        Ok(true)
    }

    /// The documents containing `term`, with the term's frequency in each,
    /// in element order.
    pub fn postings(
        &self,
        txn: &RoTxn<'_>,
        term: &str,
    ) -> Result<Vec<(ElementId, u32)>, StoreError> {
        let term = clamp_term(term);
        let prefix = posting_prefix(term);
        let mut out = Vec::new();
        for entry in self.db.postings.prefix_iter(txn, &prefix).lmdb()? {
            let (posting, tf) = entry.lmdb()?;
            // Terms that start with `term` and a 0x00 byte share the prefix.
            if posting.term.len() == term.len() {
                out.push((posting.element, tf));
            }
        }
        Ok(out)
    }

    /// Every posting of every term starting with `prefix`, by term then
    /// element (for prefix and typo-tolerant fallbacks).
    pub fn postings_with_prefix(
        &self,
        txn: &RoTxn<'_>,
        prefix: &str,
    ) -> Result<Vec<PrefixPosting>, StoreError> {
        let mut out = Vec::new();
        for_each_with_prefix(self.db.postings, txn, prefix.as_bytes(), |posting, tf| {
            out.push(PrefixPosting {
                term: posting.term.to_owned(),
                element: posting.element,
                term_frequency: tf,
            });
            Ok(())
        })?;
        Ok(out)
    }

    /// Every indexed term starting with `prefix`, in byte order. Fuzzy
    /// lookups can pass a term's first character and filter.
    pub fn terms_with_prefix(
        &self,
        txn: &RoTxn<'_>,
        prefix: &str,
    ) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        for_each_with_prefix(self.db.terms, txn, prefix.as_bytes(), |term, _| {
            out.push(term.to_owned());
            Ok(())
        })?;
        Ok(out)
    }

    /// How many documents contain `term`.
    pub fn document_frequency(&self, txn: &RoTxn<'_>, term: &str) -> Result<u32, StoreError> {
        Ok(self
            .db
            .terms
            .get(txn, clamp_term(term))
            .lmdb()?
            .unwrap_or(0))
    }

    /// The length `element`'s document was indexed with.
    pub fn doc_len(&self, txn: &RoTxn<'_>, element: ElementId) -> Result<Option<u32>, StoreError> {
        Ok(self
            .db
            .documents
            .get(txn, &element)
            .lmdb()?
            .map(|doc| doc.len))
    }

    /// The terms of `element`'s document with their frequencies, by term.
    pub fn document_terms(
        &self,
        txn: &RoTxn<'_>,
        element: ElementId,
    ) -> Result<Option<Vec<(String, u32)>>, StoreError> {
        let Some(doc) = self.db.documents.get(txn, &element).lmdb()? else {
            return Ok(None);
        };
        Ok(Some(
            doc.terms()?
                .into_iter()
                .map(|(t, tf)| (t.to_owned(), tf))
                .collect(),
        ))
    }

    /// Corpus statistics for BM25: `(number of documents, total length)`.
    pub fn search_stats(&self, txn: &RoTxn<'_>) -> Result<(u64, u64), StoreError> {
        Ok((
            self.stat(txn, StatKey::Documents)?,
            self.stat(txn, StatKey::DocumentLength)?,
        ))
    }
}

//! The inverted text index behind SEARCH: postings, a forward list per
//! document, document frequencies and corpus statistics for BM25.
//!
//! The engine decides what a document is and tokenizes it; the store only
//! keeps what it is given, consistently: indexing an element replaces its
//! previous document, deleting an element removes its document, and the
//! counts (documents, total length, per-term document frequency) change in
//! the same transaction.

mod batch;
mod write;

use batch::{Batch, Doc};

use heed::types::Bytes;
use heed::{RoTxn, RwTxn};

use crate::Store;
use crate::codec::document::v4;
use crate::codec::element;
use crate::codec::posting::{clamp_term, decode_block_into, decode_block_key, element_of, ordinal};
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

/// Documents over one table of terms, each term given once for the whole
/// batch: what [`Store::index_document_batch`] takes. A bulk import's link
/// documents are made of a few names shared by many links, so the caller
/// tokenizes each name once and hands every document as term slots, where
/// [`NewDocument`]s would repeat (and the store would hash again) each
/// term's text per document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocumentBatch {
    terms: Vec<String>,
    elements: Vec<ElementId>,
    lens: Vec<u32>,
    /// Every document's `(slot, frequency)`, document after document.
    doc_terms: Vec<(u32, u32)>,
    /// Where each document's terms end in `doc_terms`.
    doc_ends: Vec<usize>,
}

impl DocumentBatch {
    /// Adds a term to the table and returns its slot. The caller gives
    /// each distinct text once (a repeated text fails the batch).
    pub fn add_term(&mut self, text: String) -> u32 {
        self.terms.push(text);
        (self.terms.len() - 1) as u32
    }

    /// Adds the document of `element`, `len` tokens long, with the given
    /// `(slot, frequency)` pairs in any order: repeated slots are merged,
    /// zero frequencies skipped. Panics on a slot not added yet.
    pub fn push(&mut self, element: ElementId, len: u32, terms: &mut [(u32, u32)]) {
        terms.sort_unstable_by_key(|&(slot, _)| slot);
        let start = self.doc_terms.len();
        for &(slot, tf) in terms.iter() {
            assert!(
                (slot as usize) < self.terms.len(),
                "term slot {slot} was not added"
            );
            if tf == 0 {
                continue;
            }
            match self.doc_terms[start..].last_mut() {
                Some(last) if last.0 == slot => last.1 = last.1.saturating_add(tf),
                _ => self.doc_terms.push((slot, tf)),
            }
        }
        self.elements.push(element);
        self.lens.push(len);
        self.doc_ends.push(self.doc_terms.len());
    }

    pub fn len(&self) -> usize {
        self.elements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// The same documents with each term spelled out.
    fn to_documents(&self) -> Vec<NewDocument> {
        let mut begin = 0;
        (self.elements.iter().zip(&self.lens).zip(&self.doc_ends))
            .map(|((&element, &len), &end)| {
                let terms = self.doc_terms[begin..end]
                    .iter()
                    .map(|&(slot, tf)| (self.terms[slot as usize].clone(), tf))
                    .collect();
                begin = end;
                NewDocument {
                    element,
                    terms,
                    len,
                }
            })
            .collect()
    }
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
        let doc = Doc {
            element,
            len: doc_len,
            terms,
        };
        self.replace_documents(txn, Batch::gather(&[doc]))
    }

    /// Indexes many documents at once, with the same result as calling
    /// [`Store::index_document`] for each in turn (each replaces its
    /// element's previous document; every element must exist and appear
    /// once). Each distinct term of the batch is looked up and its document
    /// frequency written once, and its new postings are merged into its
    /// blocks in one pass.
    ///
    /// A bulk import's batch is cheaper still: its new elements, in element
    /// order, follow every indexed one, so there is no previous document to
    /// look for, their existence is checked by one walk over their records,
    /// their postings fill each term's last block without decoding it, and
    /// new documents, new terms and new blocks are appended in key order.
    pub fn index_documents(
        &self,
        txn: &mut RwTxn<'_>,
        docs: &[NewDocument],
    ) -> Result<(), StoreError> {
        self.replace_documents(txn, Batch::gather(&Doc::view(docs)))
    }

    /// [`Store::index_documents`] for documents given over one table of
    /// terms: the same result, without hashing each term of each document.
    pub fn index_document_batch(
        &self,
        txn: &mut RwTxn<'_>,
        mut table: DocumentBatch,
    ) -> Result<(), StoreError> {
        // An empty text, or one that must be cut (two texts could then
        // become one term, which `Batch::gather` merges), goes the way of
        // spelled-out documents.
        if (table.terms.iter()).any(|t| t.is_empty() || clamp_term(t).len() < t.len()) {
            return self.index_documents(txn, &table.to_documents());
        }
        let terms = std::mem::take(&mut table.terms);
        self.replace_documents(txn, Batch::from_table(&terms, table))
    }

    /// Removes `element`'s document from the index; returns whether it had
    /// one.
    pub fn remove_document(
        &self,
        txn: &mut RwTxn<'_>,
        element: ElementId,
    ) -> Result<bool, StoreError> {
        if let ElementId::Concept(id) = element {
            self.forget_vector(txn, id)?;
        }
        let (len, terms) = match self.db.documents.get(txn, &element).lmdb()? {
            None => return Ok(false),
            Some(doc) => (doc.len, doc.terms()?),
        };
        let at = ordinal(element);
        for (id, _) in terms {
            self.remove_posting(txn, id, at)?;
            let (df, term) = self.term_entry(txn, id)?;
            let df = df.checked_sub(1).ok_or_else(|| {
                StoreError::corrupt(format!(
                    "the term {term:?} of {element} has document frequency 0"
                ))
            })?;
            self.set_document_frequency(txn, id, &term, df)?;
        }
        self.db.documents.delete(txn, &element).lmdb()?;
        self.add_stat(txn, StatKey::Documents, -1)?;
        self.add_stat(txn, StatKey::DocumentLength, -i64::from(len))?;
        Ok(true)
    }

    /// Every posting of the term id `term`, in element order.
    fn term_postings(
        &self,
        txn: &RoTxn<'_>,
        term: u32,
    ) -> Result<Vec<(ElementId, u32)>, StoreError> {
        let mut raw = Vec::new();
        for entry in self
            .db
            .postings
            .prefix_iter(txn, &term.to_be_bytes())
            .lmdb()?
        {
            let (key, block) = entry.lmdb()?;
            let (_, first) = decode_block_key(key)?;
            decode_block_into(first, block, &mut raw)?;
        }
        Ok(raw.into_iter().map(|(o, tf)| (element_of(o), tf)).collect())
    }

    /// The documents containing `term`, with the term's frequency in each,
    /// in element order.
    pub fn postings(
        &self,
        txn: &RoTxn<'_>,
        term: &str,
    ) -> Result<Vec<(ElementId, u32)>, StoreError> {
        match self.db.terms.get(txn, clamp_term(term)).lmdb()? {
            Some(id) => self.term_postings(txn, id),
            None => Ok(Vec::new()),
        }
    }

    /// Every posting of every term starting with `prefix`, by term then
    /// element (for prefix and typo-tolerant fallbacks).
    pub fn postings_with_prefix(
        &self,
        txn: &RoTxn<'_>,
        prefix: &str,
    ) -> Result<Vec<PrefixPosting>, StoreError> {
        let mut terms = Vec::new();
        for_each_with_prefix(self.db.terms, txn, prefix.as_bytes(), |term, id| {
            terms.push((term.to_owned(), id));
            Ok(())
        })?;
        let mut out = Vec::new();
        for (term, id) in terms {
            for (element, term_frequency) in self.term_postings(txn, id)? {
                out.push(PrefixPosting {
                    term: term.clone(),
                    element,
                    term_frequency,
                });
            }
        }
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
        match self.db.terms.get(txn, clamp_term(term)).lmdb()? {
            Some(id) => Ok(self.term_entry(txn, id)?.0),
            None => Ok(0),
        }
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
        let mut out = Vec::new();
        for (id, tf) in doc.terms()? {
            out.push((self.term_entry(txn, id)?.1, tf));
        }
        out.sort_unstable();
        Ok(Some(out))
    }

    /// Corpus statistics for BM25: `(number of documents, total length)`.
    pub fn search_stats(&self, txn: &RoTxn<'_>) -> Result<(u64, u64), StoreError> {
        Ok((
            self.stat(txn, StatKey::Documents)?,
            self.stat(txn, StatKey::DocumentLength)?,
        ))
    }

    /// The upgrade to format 5: rebuilds `terms`, `term_ids` and `postings`
    /// from the documents' old forward lists (which held the terms' texts),
    /// rewriting each document with term ids. The corpus statistics do not
    /// change. Returns the documents and postings written.
    pub(crate) fn upgrade_text_index(&self, txn: &mut RwTxn<'_>) -> Result<(u64, u64), StoreError> {
        self.db.postings.clear(txn).lmdb()?;
        self.db.terms.clear(txn).lmdb()?;
        self.db.term_ids.clear(txn).lmdb()?;
        let documents = self.db.documents.remap_types::<Bytes, Bytes>();
        let mut postings = 0u64;
        let written = crate::store::rewrite_in_chunks(
            txn,
            documents,
            |key, value| {
                let (len, terms) = v4::decode(value)?;
                postings += terms.len() as u64;
                Ok(NewDocument {
                    element: element::decode(key)?,
                    terms: terms
                        .into_iter()
                        .map(|(t, tf)| (t.to_owned(), tf))
                        .collect(),
                    len,
                })
            },
            |txn, chunk| self.insert_documents(txn, &Batch::gather(&Doc::view(&chunk)), false),
        )?;
        Ok((written, postings))
    }
}

//! The inverted text index behind SEARCH: postings, a forward list per
//! document, document frequencies and corpus statistics for BM25.
//!
//! The engine decides what a document is and tokenizes it; the store only
//! keeps what it is given, consistently: indexing an element replaces its
//! previous document, deleting an element removes its document, and the
//! counts (documents, total length, per-term document frequency) change in
//! the same transaction.

use std::collections::HashMap;

use heed::types::Bytes;
use heed::{RoTxn, RwTxn};

use crate::Store;
use crate::codec::document::{DocumentRef, v4};
use crate::codec::element;
use crate::codec::posting::{
    BLOCK_POSTINGS, block_key, clamp_term, decode_block, decode_block_into, decode_block_key,
    decode_term_entry, element_of, encode_block, encode_term_entry, ordinal,
};
use crate::codec::stat_key::StatKey;
use crate::error::{Lmdb as _, StoreError};
use crate::format::meta_key;
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
fn merge_terms<S: AsRef<str>>(terms: &[(S, u32)]) -> Vec<(&str, u32)> {
    let mut merged: Vec<(&str, u32)> = terms
        .iter()
        .filter(|(term, tf)| !term.as_ref().is_empty() && *tf > 0)
        .map(|(term, tf)| (clamp_term(term.as_ref()), *tf))
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

/// Postings of one term as `(element ordinal, term frequency)`, sorted.
type Postings = Vec<(u64, u32)>;

/// A posting gathered for a batch: `(element ordinal, frequency, position
/// of the document in the batch)`.
type Gathered = (u64, u32, usize);

/// A document to write: its element, its length and its terms.
struct Doc<'a, S> {
    element: ElementId,
    len: u32,
    terms: &'a [(S, u32)],
}

impl Doc<'_, String> {
    /// The batch's documents as [`Store::insert_documents`] takes them.
    fn view(docs: &[NewDocument]) -> Vec<Doc<'_, String>> {
        docs.iter()
            .map(|d| Doc {
                element: d.element,
                len: d.len,
                terms: &d.terms,
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
        self.replace_documents(txn, &[doc])
    }

    /// Indexes many documents at once, with the same result as calling
    /// [`Store::index_document`] for each in turn (each replaces its
    /// element's previous document; every element must exist and appear
    /// once). Each distinct term of the batch is looked up and its document
    /// frequency written once, and its new postings are merged into its
    /// blocks in one pass: a bulk import's new elements follow every indexed
    /// one, so they append to each term's last block.
    pub fn index_documents(
        &self,
        txn: &mut RwTxn<'_>,
        docs: &[NewDocument],
    ) -> Result<(), StoreError> {
        self.replace_documents(txn, &Doc::view(docs))
    }

    /// [`Store::index_documents`] on borrowed documents.
    fn replace_documents(
        &self,
        txn: &mut RwTxn<'_>,
        docs: &[Doc<'_, String>],
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
        let total_len = self.insert_documents(txn, docs)?;
        if !docs.is_empty() {
            self.add_stat(txn, StatKey::Documents, docs.len() as i64)?;
            self.add_stat(txn, StatKey::DocumentLength, total_len)?;
        }
        Ok(())
    }

    /// Writes the documents, their postings and their terms' document
    /// frequencies, for elements that have no document; returns the sum of
    /// their lengths. The corpus statistics are the caller's.
    fn insert_documents<S: AsRef<str>>(
        &self,
        txn: &mut RwTxn<'_>,
        docs: &[Doc<'_, S>],
    ) -> Result<i64, StoreError> {
        // Each distinct term's postings `(element ordinal, frequency,
        // position of the document)`, gathered in document order.
        let mut slots: HashMap<&str, usize> = HashMap::new();
        let mut groups: Vec<(&str, Vec<Gathered>)> = Vec::new();
        let mut total_len: i64 = 0;
        for (at, doc) in docs.iter().enumerate() {
            let o = ordinal(doc.element);
            for (term, tf) in merge_terms(doc.terms) {
                let slot = match slots.get(term) {
                    Some(&slot) => slot,
                    None => {
                        slots.insert(term, groups.len());
                        groups.push((term, Vec::new()));
                        groups.len() - 1
                    }
                };
                groups[slot].1.push((o, tf, at));
            }
            total_len += i64::from(doc.len);
        }
        drop(slots);
        // Terms in key order (neighbouring `terms` entries and blocks);
        // a bulk import's documents come in element order already.
        groups.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut forward: Vec<Vec<(u32, u32)>> = vec![Vec::new(); docs.len()];
        let mut block: Vec<(u64, u32)> = Vec::new();
        for (term, run) in &mut groups {
            if !run.is_sorted_by_key(|p| p.0) {
                run.sort_unstable_by_key(|p| p.0);
            }
            let added = u32::try_from(run.len())
                .map_err(|_| StoreError::invalid("too many documents in one batch"))?;
            let (id, df) = self.intern_term(txn, term)?;
            self.set_document_frequency(txn, id, term, df + added)?;
            block.clear();
            block.extend(run.iter().map(|p| (p.0, p.1)));
            self.insert_postings(txn, id, &block)?;
            for p in run.iter() {
                forward[p.2].push((id, p.1));
            }
        }
        for (doc, mut terms) in docs.iter().zip(forward) {
            terms.sort_unstable();
            let forward = DocumentRef {
                len: doc.len,
                terms: &terms,
            };
            self.db.documents.put(txn, &doc.element, &forward).lmdb()?;
        }
        Ok(total_len)
    }

    /// The id and document frequency of `term` (already clamped), a new id
    /// (frequency 0) if the term is not indexed yet.
    fn intern_term(&self, txn: &mut RwTxn<'_>, term: &str) -> Result<(u32, u32), StoreError> {
        if let Some(id) = self.db.terms.get(txn, term).lmdb()? {
            return Ok((id, self.term_entry(txn, id)?.0));
        }
        let next = self.peek_id(txn, meta_key::NEXT_TERM_ID)?;
        let id = u32::try_from(next).map_err(|_| StoreError::invalid("no term ids left"))?;
        self.take_id(txn, meta_key::NEXT_TERM_ID, next)?;
        self.db.terms.put(txn, term, &id).lmdb()?;
        Ok((id, 0))
    }

    /// The document frequency and text of the term `id`.
    fn term_entry(&self, txn: &RoTxn<'_>, id: u32) -> Result<(u32, String), StoreError> {
        let bytes = self
            .db
            .term_ids
            .get(txn, &id)
            .lmdb()?
            .ok_or_else(|| StoreError::corrupt(format!("the term id {id} is not recorded")))?;
        let (df, term) = decode_term_entry(bytes)?;
        Ok((df, term.to_owned()))
    }

    /// Records the term's document frequency; at 0 the term is forgotten.
    fn set_document_frequency(
        &self,
        txn: &mut RwTxn<'_>,
        id: u32,
        term: &str,
        df: u32,
    ) -> Result<(), StoreError> {
        if df == 0 {
            self.db.term_ids.delete(txn, &id).lmdb()?;
            self.db.terms.delete(txn, term).lmdb()?;
            return Ok(());
        }
        self.db
            .term_ids
            .put(txn, &id, &encode_term_entry(df, term))
            .lmdb()
    }

    /// The block of term `term` that `at` belongs in: the last one starting
    /// at or before it, else the term's first. Its first ordinal and postings.
    fn block_for(
        &self,
        txn: &RoTxn<'_>,
        term: u32,
        at: u64,
    ) -> Result<Option<(u64, Postings)>, StoreError> {
        let key = block_key(term, at);
        let found = match self
            .db
            .postings
            .get_lower_than_or_equal_to(txn, &key)
            .lmdb()?
        {
            Some((k, v)) if k.starts_with(&term.to_be_bytes()) => Some((k, v)),
            _ => self
                .db
                .postings
                .get_greater_than(txn, &key)
                .lmdb()?
                .filter(|(k, _)| k.starts_with(&term.to_be_bytes())),
        };
        match found {
            None => Ok(None),
            Some((k, v)) => {
                let (_, first) = decode_block_key(k)?;
                Ok(Some((first, decode_block(first, v)?)))
            }
        }
    }

    /// The first ordinal of the term's block after the one starting at
    /// `first`.
    fn next_block_start(
        &self,
        txn: &RoTxn<'_>,
        term: u32,
        first: u64,
    ) -> Result<Option<u64>, StoreError> {
        match self
            .db
            .postings
            .get_greater_than(txn, &block_key(term, first))
            .lmdb()?
        {
            Some((k, _)) if k.starts_with(&term.to_be_bytes()) => Ok(Some(decode_block_key(k)?.1)),
            _ => Ok(None),
        }
    }

    /// Writes `postings` (sorted by ordinal) as blocks of `term`, in place
    /// of the block that started at `replaced` if any.
    fn write_blocks(
        &self,
        txn: &mut RwTxn<'_>,
        term: u32,
        replaced: Option<u64>,
        postings: &[(u64, u32)],
    ) -> Result<(), StoreError> {
        if let Some(first) = replaced
            && postings.first().map(|p| p.0) != Some(first)
        {
            self.db
                .postings
                .delete(txn, &block_key(term, first))
                .lmdb()?;
        }
        for chunk in postings.chunks(BLOCK_POSTINGS) {
            self.db
                .postings
                .put(txn, &block_key(term, chunk[0].0), &encode_block(chunk))
                .lmdb()?;
        }
        Ok(())
    }

    /// Merges new postings of `term` (sorted by ordinal, none already
    /// indexed) into its blocks, touching only the blocks they fall in.
    fn insert_postings(
        &self,
        txn: &mut RwTxn<'_>,
        term: u32,
        new: &[(u64, u32)],
    ) -> Result<(), StoreError> {
        let Some(&(first_new, _)) = new.first() else {
            return Ok(());
        };
        // The common case, a bulk import's new elements: every new posting
        // follows the term's last block, which one seek finds.
        let last_block = match self
            .db
            .postings
            .get_lower_than_or_equal_to(txn, &block_key(term, u64::MAX))
            .lmdb()?
        {
            Some((k, v)) if k.starts_with(&term.to_be_bytes()) => {
                let (_, first) = decode_block_key(k)?;
                Some((first, decode_block(first, v)?))
            }
            // The term has no postings yet.
            _ => None,
        };
        match last_block {
            None => return self.write_blocks(txn, term, None, new),
            Some((first, mut block)) if block.last().is_some_and(|p| p.0 < first_new) => {
                if block.len() >= BLOCK_POSTINGS {
                    return self.write_blocks(txn, term, None, new);
                }
                block.extend_from_slice(new);
                return self.write_blocks(txn, term, Some(first), &block);
            }
            Some(_) => {}
        }
        let mut i = 0;
        while i < new.len() {
            let Some((first, mut merged)) = self.block_for(txn, term, new[i].0)? else {
                return self.write_blocks(txn, term, None, &new[i..]);
            };
            let end = match self.next_block_start(txn, term, first)? {
                Some(next) => i + new[i..].partition_point(|p| p.0 < next),
                None => new.len(),
            };
            let last = merged.last().map_or(0, |p| p.0);
            if merged.len() >= BLOCK_POSTINGS && new[i].0 > last {
                // A full block followed by the new postings stays as it is.
                self.write_blocks(txn, term, None, &new[i..end])?;
                i = end;
                continue;
            }
            let old = std::mem::take(&mut merged);
            merged.reserve(old.len() + end - i);
            let (mut a, mut b) = (old.iter().peekable(), new[i..end].iter().peekable());
            loop {
                let next = match (a.peek(), b.peek()) {
                    (Some(x), Some(y)) if x.0 == y.0 => {
                        return Err(StoreError::corrupt(format!(
                            "{} already has a posting of the term id {term}",
                            element_of(x.0)
                        )));
                    }
                    (Some(x), Some(y)) if x.0 < y.0 => a.next(),
                    (Some(_), None) => a.next(),
                    (_, Some(_)) => b.next(),
                    (None, None) => break,
                };
                merged.extend(next.copied());
            }
            self.write_blocks(txn, term, Some(first), &merged)?;
            i = end;
        }
        Ok(())
    }

    /// Removes `element`'s posting of `term`.
    fn remove_posting(&self, txn: &mut RwTxn<'_>, term: u32, at: u64) -> Result<(), StoreError> {
        let block = self.block_for(txn, term, at)?;
        let missing = || {
            StoreError::corrupt(format!(
                "the document of {} lists the term id {term}, which has no posting of it",
                element_of(at)
            ))
        };
        let (first, mut postings) = block.ok_or_else(missing)?;
        let found = postings
            .binary_search_by_key(&at, |p| p.0)
            .map_err(|_| missing())?;
        postings.remove(found);
        if postings.is_empty() {
            self.db
                .postings
                .delete(txn, &block_key(term, first))
                .lmdb()?;
            return Ok(());
        }
        self.write_blocks(txn, term, Some(first), &postings)
    }

    /// Removes `element`'s document from the index; returns whether it had
    /// one.
    pub fn remove_document(
        &self,
        txn: &mut RwTxn<'_>,
        element: ElementId,
    ) -> Result<bool, StoreError> {
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
            |txn, chunk| self.insert_documents(txn, &Doc::view(&chunk)).map(drop),
        )?;
        Ok((written, postings))
    }
}

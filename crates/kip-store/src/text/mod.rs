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
use heed::{PutFlags, RoTxn, RwTxn};

use crate::Store;
use crate::codec::document::{DocumentRef, v4};
use crate::codec::element;
use crate::codec::posting::{
    BLOCK_POSTINGS, KEY_LEN, append_to_block, block_key, block_tail, clamp_term, decode_block,
    decode_block_into, decode_block_key, decode_term_entry, element_of, encode_block_into,
    encode_term_entry, ordinal,
};
use crate::codec::stat_key::StatKey;
use crate::env::put_in_order;
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

/// A document's terms as stored, into `out` (cleared first): empty terms
/// and zero frequencies skipped, long terms cut, sorted, repeated terms
/// merged.
fn merge_terms_into<'a, S: AsRef<str>>(terms: &'a [(S, u32)], out: &mut Vec<(&'a str, u32)>) {
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
type Postings = Vec<(u64, u32)>;

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

/// A batch's documents regrouped by term, in flat vectors (no allocation
/// per term or per document).
struct Batch<'a> {
    /// Each distinct term (clamped), by slot.
    texts: Vec<&'a str>,
    /// Where each slot's postings start in `postings` (one more entry at the
    /// end).
    starts: Vec<usize>,
    /// Every posting `(element ordinal, frequency)`, grouped by slot, each
    /// group in ordinal order.
    postings: Vec<(u64, u32)>,
    /// Every document's terms `(slot, frequency)`, document after document.
    doc_terms: Vec<(u32, u32)>,
    /// Where each document's terms end in `doc_terms`.
    doc_ends: Vec<usize>,
    /// Each document's element and length.
    elements: Vec<ElementId>,
    lens: Vec<u32>,
    /// The sum of the documents' lengths.
    total_len: i64,
}

impl<'a> Batch<'a> {
    fn gather<S: AsRef<str>>(docs: &'a [Doc<'a, S>]) -> Batch<'a> {
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
    fn from_table(terms: &'a [String], table: DocumentBatch) -> Batch<'a> {
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
    fn scatter(
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
    fn postings(&self, slot: u32) -> &[(u64, u32)] {
        let slot = slot as usize;
        &self.postings[self.starts[slot]..self.starts[slot + 1]]
    }

    /// The terms `(slot, frequency)` of the document at position `at`.
    fn terms_of(&self, at: usize) -> &[(u32, u32)] {
        let begin = if at == 0 { 0 } else { self.doc_ends[at - 1] };
        &self.doc_terms[begin..self.doc_ends[at]]
    }
}

/// How many known terms of a batch are updated before their entries and
/// blocks are written (bounds the bytes held: ~400 per block).
const KNOWN_CHUNK: usize = 4_096;

/// Puts gathered in key order to go through one cursor: keys of `N`
/// bytes, values one after the other in a single buffer.
#[derive(Default)]
struct SortedPuts<const N: usize> {
    keys: Vec<([u8; N], std::ops::Range<usize>)>,
    values: Vec<u8>,
}

impl<const N: usize> SortedPuts<N> {
    /// Adds a put of `key`, which follows every key added before.
    fn push(&mut self, key: [u8; N], value: &[u8]) {
        debug_assert!(self.keys.last().is_none_or(|(k, _)| *k < key));
        let at = self.values.len();
        self.values.extend_from_slice(value);
        self.keys.push((key, at..self.values.len()));
    }

    fn entries(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        (self.keys.iter()).map(|(k, range)| (&k[..], &self.values[range.clone()]))
    }

    fn clear(&mut self) {
        self.keys.clear();
        self.values.clear();
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

    /// Indexes a batch's documents, each replacing its element's previous
    /// one.
    fn replace_documents(&self, txn: &mut RwTxn<'_>, batch: Batch<'_>) -> Result<(), StoreError> {
        let elements = &batch.elements;
        // In strictly increasing element order (a bulk import's new
        // elements) no element can appear twice.
        let ascending = elements.is_sorted_by(|a, b| a < b);
        if ascending {
            self.require_all(txn, elements)?;
        } else {
            let mut seen = std::collections::HashSet::with_capacity(elements.len());
            for &element in elements {
                if !seen.insert(element) {
                    return Err(StoreError::invalid(format!(
                        "{element} appears twice in one batch of documents"
                    )));
                }
                if !self.contains(txn, element)? {
                    return Err(StoreError::NotFound { element });
                }
            }
        }
        // In element order, with no document from the batch's first element
        // to its last (new concepts, say, below indexed propositions), there
        // is no previous document to remove; after every indexed one (a bulk
        // import's new links), they are appended to `documents` too.
        let (fresh, append) = match (elements.first(), elements.last()) {
            (Some(&first), Some(&last)) if ascending => {
                let documents = self.db.documents.remap_data_type::<Bytes>();
                let range = first..=last;
                let fresh = documents.range(txn, &range).lmdb()?.next().is_none();
                let append = fresh
                    && match documents.last(txn).lmdb()? {
                        Some((indexed, _)) => indexed < first,
                        None => true,
                    };
                (fresh, append)
            }
            _ => (false, false),
        };
        if !fresh {
            for &element in elements {
                self.remove_document(txn, element)?;
            }
        }
        self.insert_documents(txn, &batch, append)?;
        if !elements.is_empty() {
            self.add_stat(txn, StatKey::Documents, elements.len() as i64)?;
            self.add_stat(txn, StatKey::DocumentLength, batch.total_len)?;
        }
        Ok(())
    }

    /// Writes the documents, their postings and their terms' document
    /// frequencies, for elements that have no document. `append`: the
    /// documents are in element order and
    /// follow every key of `documents`. The corpus statistics are the
    /// caller's.
    ///
    /// Each distinct term of the batch is looked up once: known terms (in
    /// id order) have their document frequency rewritten and their new
    /// postings appended to their last block without decoding it; new terms
    /// (ids past every known one, in id order) are appended to `term_ids`
    /// and `postings`.
    fn insert_documents(
        &self,
        txn: &mut RwTxn<'_>,
        batch: &Batch<'_>,
        append: bool,
    ) -> Result<(), StoreError> {
        let n = batch.texts.len();
        // Intern in term order (neighbouring `terms` entries), so new
        // terms take ids in term order.
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_unstable_by_key(|&slot| batch.texts[slot as usize]);
        // A table given by the caller could name one text twice.
        if let Some(pair) = order
            .windows(2)
            .find(|w| batch.texts[w[0] as usize] == batch.texts[w[1] as usize])
        {
            return Err(StoreError::invalid(format!(
                "the term {:?} appears twice in one batch's table",
                batch.texts[pair[0] as usize]
            )));
        }
        let mut ids = vec![0u32; n];
        let mut known: Vec<u32> = Vec::with_capacity(n);
        let mut fresh: Vec<u32> = Vec::new();
        let mut next_id: Option<u64> = None;
        for &slot in &order {
            let term = batch.texts[slot as usize];
            ids[slot as usize] = match self.db.terms.get(txn, term).lmdb()? {
                Some(id) => {
                    known.push(slot);
                    id
                }
                None => {
                    let next = match next_id {
                        Some(next) => next,
                        None => self.peek_id(txn, meta_key::NEXT_TERM_ID)?,
                    };
                    let id =
                        u32::try_from(next).map_err(|_| StoreError::invalid("no term ids left"))?;
                    next_id = Some(next + 1);
                    self.db.terms.put(txn, term, &id).lmdb()?;
                    fresh.push(slot);
                    id
                }
            };
        }
        if let Some(next) = next_id {
            self.take_id(txn, meta_key::NEXT_TERM_ID, next - 1)?;
        }
        // Known terms in id order: neighbouring `term_ids` entries and
        // blocks, written a chunk at a time through one cursor per
        // database (see `env::put_in_order`) instead of a descent from the
        // root for each.
        known.sort_unstable_by_key(|&slot| ids[slot as usize]);
        let mut buf = Vec::new();
        let mut updates = SortedPuts::default();
        let mut blocks = SortedPuts::default();
        for chunk in known.chunks(KNOWN_CHUNK) {
            for &slot in chunk {
                let id = ids[slot as usize];
                let new = batch.postings(slot);
                let entry = self.db.term_ids.get(txn, &id).lmdb()?.ok_or_else(|| {
                    StoreError::corrupt(format!("the term id {id} is not recorded"))
                })?;
                let (df, _) = decode_term_entry(entry)?;
                let df = u32::try_from(new.len())
                    .ok()
                    .and_then(|added| df.checked_add(added))
                    .ok_or_else(|| StoreError::invalid("too many documents of one term"))?;
                buf.clear();
                buf.extend_from_slice(&df.to_be_bytes());
                buf.extend_from_slice(&entry[4..]);
                updates.push(id.to_be_bytes(), &buf);
                self.append_postings(txn, id, new, &mut blocks, &mut buf)?;
            }
            put_in_order(
                txn,
                self.db.term_ids.remap_key_type::<Bytes>(),
                PutFlags::empty(),
                updates.entries(),
            )?;
            put_in_order(txn, self.db.postings, PutFlags::empty(), blocks.entries())?;
            updates.clear();
            blocks.clear();
        }
        // New terms: their ids follow every recorded one, in term order.
        for &slot in &fresh {
            let id = ids[slot as usize];
            let new = batch.postings(slot);
            let df = u32::try_from(new.len())
                .map_err(|_| StoreError::invalid("too many documents in one batch"))?;
            self.db
                .term_ids
                .put_with_flags(
                    txn,
                    PutFlags::APPEND,
                    &id,
                    &encode_term_entry(df, batch.texts[slot as usize]),
                )
                .lmdb()?;
            self.put_blocks(txn, id, new, PutFlags::APPEND, &mut buf)?;
        }
        let documents = self.db.documents.remap_data_type::<Bytes>();
        let flags = if append {
            PutFlags::APPEND
        } else {
            PutFlags::empty()
        };
        let mut forward: Vec<(u32, u32)> = Vec::new();
        for (at, (element, &len)) in batch.elements.iter().zip(&batch.lens).enumerate() {
            forward.clear();
            forward.extend(
                batch
                    .terms_of(at)
                    .iter()
                    .map(|&(slot, tf)| (ids[slot as usize], tf)),
            );
            forward.sort_unstable();
            DocumentRef {
                len,
                terms: &forward,
            }
            .encode_into(&mut buf);
            documents.put_with_flags(txn, flags, element, &buf).lmdb()?;
        }
        Ok(())
    }

    /// Adds new postings of `term` (sorted by ordinal, none already
    /// indexed). The common case, a bulk import's new elements, follows the
    /// term's last block: they fill it up, without decoding it, then start
    /// new blocks, all handed to `blocks` to be written in key order (terms
    /// come in id order). Otherwise they are merged into the blocks they
    /// fall in, written at once. `buf` is scratch space.
    fn append_postings(
        &self,
        txn: &mut RwTxn<'_>,
        term: u32,
        new: &[(u64, u32)],
        blocks: &mut SortedPuts<KEY_LEN>,
        buf: &mut Vec<u8>,
    ) -> Result<(), StoreError> {
        let Some(&(first_new, _)) = new.first() else {
            return Ok(());
        };
        let rest = match self
            .db
            .postings
            .get_lower_than_or_equal_to(txn, &block_key(term, u64::MAX))
            .lmdb()?
        {
            Some((key, block)) if key.starts_with(&term.to_be_bytes()) => {
                let (_, first) = decode_block_key(key)?;
                let tail = block_tail(first, block)?;
                if tail.last >= first_new {
                    return self.merge_postings(txn, term, new);
                }
                let room = BLOCK_POSTINGS.saturating_sub(tail.count).min(new.len());
                let (into_last, rest) = new.split_at(room);
                if !into_last.is_empty() {
                    append_to_block(buf, block, tail, into_last);
                    blocks.push(block_key(term, first), buf);
                }
                rest
            }
            // The term has no postings yet.
            _ => new,
        };
        for chunk in rest.chunks(BLOCK_POSTINGS) {
            encode_block_into(buf, chunk);
            blocks.push(block_key(term, chunk[0].0), buf);
        }
        Ok(())
    }

    /// Writes `postings` (sorted by ordinal) as new blocks of `term`, each
    /// keyed by its first ordinal, with `flags` (`APPEND` when they follow
    /// every key). `buf` is scratch space.
    fn put_blocks(
        &self,
        txn: &mut RwTxn<'_>,
        term: u32,
        postings: &[(u64, u32)],
        flags: PutFlags,
        buf: &mut Vec<u8>,
    ) -> Result<(), StoreError> {
        for chunk in postings.chunks(BLOCK_POSTINGS) {
            encode_block_into(buf, chunk);
            self.db
                .postings
                .put_with_flags(txn, flags, &block_key(term, chunk[0].0), buf)
                .lmdb()?;
        }
        Ok(())
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
        self.put_blocks(txn, term, postings, PutFlags::empty(), &mut Vec::new())
    }

    /// Merges new postings of `term` (sorted by ordinal, none already
    /// indexed) into its blocks, touching only the blocks they fall in.
    fn merge_postings(
        &self,
        txn: &mut RwTxn<'_>,
        term: u32,
        new: &[(u64, u32)],
    ) -> Result<(), StoreError> {
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
            |txn, chunk| self.insert_documents(txn, &Batch::gather(&Doc::view(&chunk)), false),
        )?;
        Ok((written, postings))
    }
}

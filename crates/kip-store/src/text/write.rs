//! Writing documents into the index and taking them out: interning a
//! batch's terms, updating document frequencies, and keeping each term's
//! postings in blocks of at most [`BLOCK_POSTINGS`].

use heed::types::Bytes;
use heed::{PutFlags, RoTxn, RwTxn};

use super::batch::{Batch, KNOWN_CHUNK, Postings, SortedPuts};
use crate::Store;
use crate::codec::document::DocumentRef;
use crate::codec::posting::{
    BLOCK_POSTINGS, KEY_LEN, append_to_block, block_key, block_tail, decode_block,
    decode_block_key, decode_term_entry, element_of, encode_block_into, encode_term_entry,
};
use crate::codec::stat_key::StatKey;
use crate::env::put_in_order;
use crate::error::{Lmdb as _, StoreError};
use crate::format::meta_key;

/// A batch's terms by slot: each one's id, and which slots were known
/// before the batch and which are new.
struct Interned {
    ids: Vec<u32>,
    known: Vec<u32>,
    fresh: Vec<u32>,
}

impl Store {
    /// Indexes a batch's documents, each replacing its element's previous
    /// one.
    pub(super) fn replace_documents(
        &self,
        txn: &mut RwTxn<'_>,
        batch: Batch<'_>,
    ) -> Result<(), StoreError> {
        // A concept's document is its grounding text: its vector is stale.
        // Marked after the old documents are gone (removing one drops the
        // element's vector and backlog entry).
        let elements = batch.elements.clone();
        self.replace_documents_unmarked(txn, batch)?;
        self.mark_vectors_stale(txn, elements)
    }

    fn replace_documents_unmarked(
        &self,
        txn: &mut RwTxn<'_>,
        batch: Batch<'_>,
    ) -> Result<(), StoreError> {
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
    pub(super) fn insert_documents(
        &self,
        txn: &mut RwTxn<'_>,
        batch: &Batch<'_>,
        append: bool,
    ) -> Result<(), StoreError> {
        let Interned { ids, known, fresh } = self.intern_terms(txn, batch)?;
        let mut buf = Vec::new();
        self.add_known_postings(txn, batch, &ids, known, &mut buf)?;
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

    /// Looks up (or interns) each distinct term of the batch once, in term
    /// order, so that new terms take ids in term order.
    fn intern_terms(&self, txn: &mut RwTxn<'_>, batch: &Batch<'_>) -> Result<Interned, StoreError> {
        let n = batch.texts.len();
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
        let mut interned = Interned {
            ids: vec![0u32; n],
            known: Vec::with_capacity(n),
            fresh: Vec::new(),
        };
        let mut next_id: Option<u64> = None;
        for &slot in &order {
            let term = batch.texts[slot as usize];
            interned.ids[slot as usize] = match self.db.terms.get(txn, term).lmdb()? {
                Some(id) => {
                    interned.known.push(slot);
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
                    interned.fresh.push(slot);
                    id
                }
            };
        }
        if let Some(next) = next_id {
            self.take_id(txn, meta_key::NEXT_TERM_ID, next - 1)?;
        }
        Ok(interned)
    }

    /// Raises the document frequency of the batch's known terms and adds
    /// their postings. In id order: neighbouring `term_ids` entries and
    /// blocks, written a chunk at a time through one cursor per database
    /// (see `env::put_in_order`) instead of a descent from the root for
    /// each.
    fn add_known_postings(
        &self,
        txn: &mut RwTxn<'_>,
        batch: &Batch<'_>,
        ids: &[u32],
        mut known: Vec<u32>,
        buf: &mut Vec<u8>,
    ) -> Result<(), StoreError> {
        known.sort_unstable_by_key(|&slot| ids[slot as usize]);
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
                updates.push(id.to_be_bytes(), buf);
                self.append_postings(txn, id, new, &mut blocks, buf)?;
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
    pub(super) fn term_entry(&self, txn: &RoTxn<'_>, id: u32) -> Result<(u32, String), StoreError> {
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
    pub(super) fn set_document_frequency(
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
    pub(super) fn remove_posting(
        &self,
        txn: &mut RwTxn<'_>,
        term: u32,
        at: u64,
    ) -> Result<(), StoreError> {
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
}

//! The text index: documents, postings and the term tables agree
//! (`posting-matches-document`, `term-frequency`).

use std::collections::{BTreeMap, HashMap};

use heed::RoTxn;

use super::records::Elements;
use super::{Findings, hex, raw};
use crate::Store;
use crate::codec::document::DocumentView;
use crate::codec::element;
use crate::codec::posting::{
    BLOCK_POSTINGS, decode_block, decode_block_key, decode_term_entry, element_of, ordinal,
};
use crate::codec::stat_key::StatKey;
use crate::db_name;
use crate::error::{Lmdb as _, StoreError};

/// The postings the documents imply: `(term id, element ordinal)` → term
/// frequency.
pub(super) type Postings = HashMap<(u32, u64), u32>;

/// The number of documents holding each term id.
pub(super) type Frequencies = HashMap<u32, u32>;

impl Store {
    /// Checks that each document decodes and belongs to an element, and
    /// returns the postings and document frequencies its terms imply.
    pub(super) fn check_documents(
        &self,
        txn: &RoTxn<'_>,
        f: &mut Findings,
        elements: &Elements,
        stats: &mut BTreeMap<StatKey, u64>,
    ) -> Result<(Postings, Frequencies), StoreError> {
        let mut expected: Postings = HashMap::new();
        let mut frequencies: Frequencies = HashMap::new();
        for entry in raw(self.db.documents).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            f.report.counts.documents += 1;
            let Ok(e) = element::decode(key) else {
                f.add(
                    "record-decodes",
                    db_name::DOCUMENTS,
                    format!("the key {} is not an element id", hex(key)),
                );
                continue;
            };
            if !elements.exists(e) {
                f.add(
                    "posting-matches-document",
                    db_name::DOCUMENTS,
                    format!("the document of {e}, which does not exist"),
                );
            }
            let terms = DocumentView::decode(value).and_then(|d| Ok((d.len, d.terms()?)));
            let (len, terms) = match terms {
                Ok(t) => t,
                Err(err) => {
                    f.add("record-decodes", db_name::DOCUMENTS, format!("{e}: {err}"));
                    continue;
                }
            };
            *stats.entry(StatKey::Documents).or_default() += 1;
            *stats.entry(StatKey::DocumentLength).or_default() += u64::from(len);
            for (term, tf) in terms {
                *frequencies.entry(term).or_default() += 1;
                expected.insert((term, ordinal(e)), tf);
            }
        }
        Ok((expected, frequencies))
    }

    /// Checks the postings against those the documents imply.
    pub(super) fn check_postings(
        &self,
        txn: &RoTxn<'_>,
        f: &mut Findings,
        mut expected: Postings,
    ) -> Result<(), StoreError> {
        for entry in raw(self.db.postings).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            let block = decode_block_key(key)
                .and_then(|(term, first)| Ok((term, decode_block(first, value)?)));
            let (term, block) = match block {
                Ok(b) => b,
                Err(err) => {
                    f.add(
                        "record-decodes",
                        db_name::POSTINGS,
                        format!("the block {}: {err}", hex(key)),
                    );
                    continue;
                }
            };
            if block.len() > BLOCK_POSTINGS {
                f.add(
                    "record-decodes",
                    db_name::POSTINGS,
                    format!(
                        "the block {} holds {} postings, more than {BLOCK_POSTINGS}",
                        hex(key),
                        block.len()
                    ),
                );
            }
            for (at, tf) in block {
                f.report.counts.postings += 1;
                match expected.remove(&(term, at)) {
                    Some(want) if want == tf => {}
                    Some(want) => f.add(
                        "posting-matches-document",
                        db_name::POSTINGS,
                        format!(
                            "the posting of the term id {term} in {} has frequency {tf}, its document says {want}",
                            element_of(at)
                        ),
                    ),
                    None => f.add(
                        "posting-matches-document",
                        db_name::POSTINGS,
                        format!(
                            "a posting of the term id {term} in {}, whose document does not list it",
                            element_of(at)
                        ),
                    ),
                }
            }
        }
        let mut unposted: Vec<_> = expected.into_keys().collect();
        unposted.sort_unstable();
        for (term, at) in unposted {
            f.add(
                "posting-matches-document",
                db_name::POSTINGS,
                format!(
                    "the document of {} lists the term id {term}, which has no posting there",
                    element_of(at)
                ),
            );
        }
        Ok(())
    }

    /// Checks the term tables (`term_ids` with document frequencies, and
    /// `terms` from text to id) against the documents' frequencies and each
    /// other.
    pub(super) fn check_terms(
        &self,
        txn: &RoTxn<'_>,
        f: &mut Findings,
        mut frequencies: Frequencies,
    ) -> Result<(), StoreError> {
        let mut ids_by_term: HashMap<String, u32> = HashMap::new();
        for entry in raw(self.db.term_ids).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            let decoded = <[u8; 4]>::try_from(key)
                .map(u32::from_be_bytes)
                .map_err(|_| format!("the key {} is not a term id", hex(key)))
                .and_then(|id| {
                    decode_term_entry(value)
                        .map(|(df, term)| (id, df, term))
                        .map_err(|e| format!("the term id {id}: {e}"))
                });
            let (id, df, term) = match decoded {
                Ok(d) => d,
                Err(err) => {
                    f.add("record-decodes", db_name::TERM_IDS, err);
                    continue;
                }
            };
            let want = frequencies.remove(&id).unwrap_or(0);
            if df != want {
                f.add(
                    "term-frequency",
                    db_name::TERM_IDS,
                    format!(
                        "the term {term:?} has document frequency {df}, but {want} documents hold it"
                    ),
                );
            }
            ids_by_term.insert(term.to_owned(), id);
        }
        let mut unrecorded: Vec<_> = frequencies.into_iter().collect();
        unrecorded.sort();
        for (id, n) in unrecorded {
            f.add(
                "term-frequency",
                db_name::TERM_IDS,
                format!("the term id {id} of {n} documents has no document frequency"),
            );
        }
        for entry in raw(self.db.terms).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            f.report.counts.terms += 1;
            let term = String::from_utf8_lossy(key).into_owned();
            let id = <[u8; 4]>::try_from(value).map(u32::from_be_bytes).ok();
            let recorded = ids_by_term.remove(&term);
            if id.is_none() || id != recorded {
                f.add(
                    "term-frequency",
                    db_name::TERMS,
                    format!(
                        "the term {term:?} names the id {}, but the ids record {}",
                        id.map_or_else(|| hex(value), |d| d.to_string()),
                        recorded.map_or_else(|| "no such term".to_owned(), |d| d.to_string())
                    ),
                );
            }
        }
        let mut unnamed: Vec<_> = ids_by_term.into_iter().collect();
        unnamed.sort();
        for (term, id) in unnamed {
            f.add(
                "term-frequency",
                db_name::TERMS,
                format!("the term {term:?} (id {id}) cannot be looked up by its text"),
            );
        }
        Ok(())
    }
}

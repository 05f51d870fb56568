//! [`Store::check`]: verifies, in one read snapshot, every invariant the
//! store keeps between its databases, and reports each violation precisely.
//!
//! What is checked (the `invariant` names of [`Violation`]):
//!
//! - `record-decodes`: every concept, proposition, document, statistic,
//!   name and change-log entry decodes, and every key of a record's maps is
//!   an interned name.
//! - `index-entry-has-record` / `record-has-index-entry` /
//!   `index-entry-matches-record`: the concept indexes (`concept_keys`,
//!   `concepts_by_type`, `concepts_by_name`, and the attribute index
//!   `attr_index`: every scalar attribute and metadata value, and a marker for each
//!   array or object value), the proposition indexes
//!   (`spo`, `pos`, `osp`) and the interned names (`names` ↔ `name_ids`) hold
//!   exactly the entries their records imply, pointing at the right id.
//! - `name-is-interned`: a record's type and predicate ids are interned.
//! - `proposition-ends-exist`: a proposition's subject and object exist.
//! - `counter-equals-count`: every statistic (`stats`) equals the count it
//!   keeps, and no statistic is stored at zero.
//! - `posting-matches-document` / `term-frequency`: the text index's
//!   postings are exactly the documents' terms with their frequencies, each
//!   term's document frequency is its number of postings, and a document
//!   belongs to an element that exists.
//! - `change-log-order`: the change log is one gapless run of sequence
//!   numbers ending at `last_change_seq`, at most [`MAX_CHANGES`] long.
//! - `next-id`: the next concept and proposition ids are above every id in
//!   use; `format-version`: the recorded version is [`FORMAT_VERSION`].
//! - `vector-has-concept` / `vector-decodes` / `vector-sum-matches` /
//!   `vector-code-matches`: the vectors of SEARCH by meaning belong to
//!   concepts that exist, decode, are counted by their group's sum, and
//!   each has its binary code, recomputed here (`vectors.rs`).
//!
//! The check reads everything once and holds the expected index entries in
//! memory (about 100 bytes per element); it never writes.

mod log;
mod records;
mod text;
mod trace;
mod vectors;

use std::collections::{BTreeMap, HashMap};

use heed::types::Bytes;
use heed::{Database, RoTxn};
use serde::Serialize;

use crate::Store;
use crate::error::{Lmdb as _, StoreError};

/// At most this many violations are listed; the rest are only counted.
pub const MAX_LISTED_VIOLATIONS: usize = 1000;

/// What [`Store::check`] found (`kip check-store`, the `check_store`
/// operation: `StoreCheck` on the wire).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "StoreCheck"))]
pub struct CheckReport {
    /// No invariant is violated.
    pub ok: bool,
    /// What was read.
    pub counts: CheckCounts,
    /// The violations, in the order found (at most [`MAX_LISTED_VIOLATIONS`]).
    pub violations: Vec<Violation>,
    /// Violations found beyond those listed.
    pub unlisted: u64,
}

/// The sizes of what [`Store::check`] read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "StoreCounts"))]
pub struct CheckCounts {
    pub concepts: u64,
    pub propositions: u64,
    pub names: u64,
    pub documents: u64,
    pub postings: u64,
    pub terms: u64,
    pub changes: u64,
    pub last_change_seq: u64,
}

/// One broken invariant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "StoreViolation"))]
pub struct Violation {
    /// Which invariant (see the module documentation for the list).
    pub invariant: &'static str,
    /// The database where it shows.
    pub database: &'static str,
    /// What exactly is wrong, naming the element, key or count.
    pub detail: String,
}

/// The report being filled, shared by the checks of each invariant.
#[derive(Default)]
struct Findings {
    report: CheckReport,
}

impl Findings {
    fn add(&mut self, invariant: &'static str, database: &'static str, detail: String) {
        if self.report.violations.len() < MAX_LISTED_VIOLATIONS {
            self.report.violations.push(Violation {
                invariant,
                database,
                detail,
            });
        } else {
            self.report.unlisted += 1;
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    let shown: String = bytes.iter().take(48).map(|b| format!("{b:02x}")).collect();
    if bytes.len() > 48 {
        format!("{shown}… ({} bytes)", bytes.len())
    } else {
        shown
    }
}

fn raw<K, V>(db: Database<'static, K, V>) -> Database<'static, Bytes, Bytes> {
    db.remap_types::<Bytes, Bytes>()
}

/// Compares an index with the entries its records imply: every actual entry
/// must be expected with the same value, and every expected one present.
fn compare(
    txn: &RoTxn<'_>,
    findings: &mut Findings,
    database: &'static str,
    db: Database<'static, Bytes, Bytes>,
    mut expected: HashMap<Vec<u8>, (Vec<u8>, String)>,
    invariant: Option<&'static str>,
) -> Result<(), StoreError> {
    for entry in db.iter(txn).lmdb()? {
        let (key, value) = entry.lmdb()?;
        match expected.remove(key) {
            Some((want, _)) if want == value => {}
            Some((want, owner)) => findings.add(
                invariant.unwrap_or("index-entry-matches-record"),
                database,
                format!(
                    "the entry {} of {owner} holds {}, expected {}",
                    hex(key),
                    hex(value),
                    hex(&want)
                ),
            ),
            None => findings.add(
                invariant.unwrap_or("index-entry-has-record"),
                database,
                format!(
                    "the entry {} (value {}) belongs to no record",
                    hex(key),
                    hex(value)
                ),
            ),
        }
    }
    let mut missing: Vec<_> = expected.into_iter().collect();
    missing.sort();
    for (key, (_, owner)) in missing {
        findings.add(
            invariant.unwrap_or("record-has-index-entry"),
            database,
            format!("{owner} has no entry {}", hex(&key)),
        );
    }
    Ok(())
}

impl Store {
    /// Verifies every invariant between the store's databases in one read
    /// snapshot (see the `check` module documentation for the list) and
    /// reports each violation. Writers keep running meanwhile. Fails only if
    /// the store cannot be read at all.
    pub fn check(&self) -> Result<CheckReport, StoreError> {
        self.read(|txn| self.check_in(txn))
    }

    /// Runs the checks one invariant group after another; each reads its
    /// databases once and hands on what a later one needs (the interned
    /// names, the ids that exist, the counts the statistics must equal).
    fn check_in(&self, txn: &RoTxn<'_>) -> Result<CheckReport, StoreError> {
        let mut f = Findings::default();
        let mut stats = BTreeMap::new();
        let interned = self.check_names(txn, &mut f)?;
        let concepts = self.check_concepts(txn, &mut f, &interned, &mut stats)?;
        let elements = self.check_propositions(txn, &mut f, &interned, concepts, &mut stats)?;
        let (postings, frequencies) = self.check_documents(txn, &mut f, &elements, &mut stats)?;
        self.check_postings(txn, &mut f, postings)?;
        self.check_terms(txn, &mut f, frequencies)?;
        self.check_stats(txn, &mut f, stats)?;
        self.check_change_log(txn, &mut f)?;
        self.check_meta(txn, &mut f, &elements)?;
        self.check_trace(txn, &mut f)?;
        self.check_vectors(txn, &mut f, &elements)?;
        f.report.ok = f.report.violations.is_empty() && f.report.unlisted == 0;
        Ok(f.report)
    }
}

#[cfg(test)]
mod tests;

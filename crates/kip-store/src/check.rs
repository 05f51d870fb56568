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
//!   `attr_index`: every scalar attribute and metadata value), the proposition indexes
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
//!
//! The check reads everything once and holds the expected index entries in
//! memory (about 100 bytes per element); it never writes.

use std::collections::{BTreeMap, HashMap, HashSet};

use heed::types::Bytes;
use heed::{Database, RoTxn};
use serde::Serialize;

use crate::Store;
use crate::changes::MAX_CHANGES;
use crate::codec::concept::ConceptBytes;
use crate::codec::concept_keys::{name_member_key, type_member_key, type_name_key};
use crate::codec::document::DocumentView;
use crate::codec::element;
use crate::codec::intern::name_to_id_key;
use crate::codec::posting::{
    BLOCK_POSTINGS, decode_block, decode_block_key, decode_term_entry, element_of, ordinal,
};
use crate::codec::proposition::PropositionBytes;
use crate::codec::stat_key::StatKey;
use crate::codec::triple::{Osp, Permutation, Pos, Spo};
use crate::codec::value;
use crate::db_name;
use crate::error::{Lmdb as _, StoreError};
use crate::format::{FORMAT_VERSION, meta_key};
use crate::ids::{ConceptId, ElementId, PropositionId};
use crate::names::Namespace;

/// At most this many violations are listed; the rest are only counted.
pub const MAX_LISTED_VIOLATIONS: usize = 1000;

/// What [`Store::check`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
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
pub struct Violation {
    /// Which invariant (see the module documentation for the list).
    pub invariant: &'static str,
    /// The database where it shows.
    pub database: &'static str,
    /// What exactly is wrong, naming the element, key or count.
    pub detail: String,
}

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

    fn check_in(&self, txn: &RoTxn<'_>) -> Result<CheckReport, StoreError> {
        let mut f = Findings {
            report: CheckReport::default(),
        };
        let mut stats: BTreeMap<StatKey, u64> = BTreeMap::new();

        // Interned names, both directions.
        let mut interned: HashSet<(u8, u32)> = HashSet::new();
        let mut names_expected = HashMap::new();
        for entry in raw(self.db.name_ids).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            f.report.counts.names += 1;
            let (Ok(name), [ns, id @ ..]) = (std::str::from_utf8(value), key) else {
                f.add(
                    "record-decodes",
                    db_name::NAME_IDS,
                    format!("the entry {} does not decode", hex(key)),
                );
                continue;
            };
            let Ok(id) = <[u8; 4]>::try_from(id).map(u32::from_be_bytes) else {
                f.add(
                    "record-decodes",
                    db_name::NAME_IDS,
                    format!("the key {} is not a namespace and a 4-byte id", hex(key)),
                );
                continue;
            };
            interned.insert((*ns, id));
            names_expected.insert(
                name_to_id_key(*ns, name),
                (
                    id.to_be_bytes().to_vec(),
                    format!("the name {name:?} (#{id})"),
                ),
            );
        }
        compare(
            txn,
            &mut f,
            db_name::NAMES,
            raw(self.db.names),
            names_expected,
            None,
        )?;
        let key_name = |id: u32| -> Result<String, StoreError> {
            if interned.contains(&(Namespace::Key.tag(), id)) {
                self.key_name(txn, id)
            } else {
                Err(StoreError::corrupt(format!("key #{id} is not interned")))
            }
        };

        // Concepts and their three indexes.
        let mut concepts: HashSet<u64> = HashSet::new();
        let mut max_concept = 0;
        let (mut keys, mut by_type, mut by_name) = (HashMap::new(), HashMap::new(), HashMap::new());
        let mut attr_index = HashMap::new();
        for entry in raw(self.db.concepts).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            f.report.counts.concepts += 1;
            let Ok(id) = <[u8; 8]>::try_from(key).map(u64::from_be_bytes) else {
                f.add(
                    "record-decodes",
                    db_name::CONCEPTS,
                    format!("the key {} is not an 8-byte id", hex(key)),
                );
                continue;
            };
            let id = ConceptId(id);
            concepts.insert(id.0);
            max_concept = max_concept.max(id.0);
            let c = match ConceptBytes::decode(value) {
                Ok(c) => c,
                Err(e) => {
                    f.add("record-decodes", db_name::CONCEPTS, format!("{id}: {e}"));
                    continue;
                }
            };
            for (part, bytes) in [("attributes", c.attributes), ("metadata", c.metadata)] {
                if let Err(e) = value::decode_fields::<StoreError>(bytes, key_name) {
                    f.add(
                        "record-decodes",
                        db_name::CONCEPTS,
                        format!("the {part} of {id}: {e}"),
                    );
                }
            }
            if !interned.contains(&(Namespace::ConceptType.tag(), c.type_id)) {
                f.add(
                    "name-is-interned",
                    db_name::CONCEPTS,
                    format!("the type #{} of {id} is not interned", c.type_id),
                );
            }
            *stats.entry(StatKey::ConceptsOfType(c.type_id)).or_default() += 1;
            *stats.entry(StatKey::Concepts).or_default() += 1;
            let owner = format!("{id} ({:?} of type #{})", c.name, c.type_id);
            keys.insert(
                type_name_key(c.type_id, c.name),
                (id.0.to_be_bytes().to_vec(), owner.clone()),
            );
            by_type.insert(
                type_member_key(c.type_id, id).to_vec(),
                (Vec::new(), owner.clone()),
            );
            if let Ok(entries) = crate::attrs::attr_entries(id, &c) {
                for key in entries {
                    attr_index.insert(key, (Vec::new(), owner.clone()));
                }
            }
            by_name.insert(name_member_key(c.name, id), (Vec::new(), owner));
        }
        compare(
            txn,
            &mut f,
            db_name::CONCEPT_KEYS,
            raw(self.db.concept_keys),
            keys,
            None,
        )?;
        compare(
            txn,
            &mut f,
            db_name::CONCEPTS_BY_TYPE,
            raw(self.db.concepts_by_type),
            by_type,
            None,
        )?;
        compare(
            txn,
            &mut f,
            db_name::CONCEPTS_BY_NAME,
            raw(self.db.concepts_by_name),
            by_name,
            None,
        )?;
        compare(
            txn,
            &mut f,
            db_name::ATTR_INDEX,
            raw(self.db.attr_index),
            attr_index,
            None,
        )?;

        // Propositions: read the ids first, since an end may be a later one.
        let mut propositions: HashSet<u64> = HashSet::new();
        for entry in raw(self.db.propositions).iter(txn).lmdb()? {
            let (key, _) = entry.lmdb()?;
            if let Ok(id) = <[u8; 8]>::try_from(key).map(u64::from_be_bytes) {
                propositions.insert(id);
            }
        }
        let exists = |e: ElementId| match e {
            ElementId::Concept(c) => concepts.contains(&c.0),
            ElementId::Proposition(p) => propositions.contains(&p.0),
        };
        let mut max_proposition = 0;
        let (mut spo, mut pos, mut osp) = (HashMap::new(), HashMap::new(), HashMap::new());
        for entry in raw(self.db.propositions).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            f.report.counts.propositions += 1;
            let Ok(id) = <[u8; 8]>::try_from(key).map(u64::from_be_bytes) else {
                f.add(
                    "record-decodes",
                    db_name::PROPOSITIONS,
                    format!("the key {} is not an 8-byte id", hex(key)),
                );
                continue;
            };
            let id = PropositionId(id);
            max_proposition = max_proposition.max(id.0);
            let p = match PropositionBytes::decode(value) {
                Ok(p) => p,
                Err(e) => {
                    f.add(
                        "record-decodes",
                        db_name::PROPOSITIONS,
                        format!("{id}: {e}"),
                    );
                    continue;
                }
            };
            for (part, bytes) in [("attributes", p.attributes), ("metadata", p.metadata)] {
                if let Err(e) = value::decode_fields::<StoreError>(bytes, key_name) {
                    f.add(
                        "record-decodes",
                        db_name::PROPOSITIONS,
                        format!("the {part} of {id}: {e}"),
                    );
                }
            }
            let t = p.triple;
            if !interned.contains(&(Namespace::Predicate.tag(), t.predicate)) {
                f.add(
                    "name-is-interned",
                    db_name::PROPOSITIONS,
                    format!("the predicate #{} of {id} is not interned", t.predicate),
                );
            }
            for (end, e) in [("subject", t.subject), ("object", t.object)] {
                if !exists(e) {
                    f.add(
                        "proposition-ends-exist",
                        db_name::PROPOSITIONS,
                        format!("the {end} {e} of {id} does not exist"),
                    );
                }
            }
            *stats
                .entry(StatKey::PropositionsOfPredicate(t.predicate))
                .or_default() += 1;
            *stats.entry(StatKey::Propositions).or_default() += 1;
            let owner = format!("{id} ({} #{} {})", t.subject, t.predicate, t.object);
            let value = crate::codec::integer::compact_u64(id.0);
            spo.insert(Spo::encode(&t).to_vec(), (value.clone(), owner.clone()));
            pos.insert(Pos::encode(&t).to_vec(), (value.clone(), owner.clone()));
            osp.insert(Osp::encode(&t).to_vec(), (value, owner));
        }
        compare(txn, &mut f, db_name::SPO, raw(self.db.spo), spo, None)?;
        compare(txn, &mut f, db_name::POS, raw(self.db.pos), pos, None)?;
        compare(txn, &mut f, db_name::OSP, raw(self.db.osp), osp, None)?;

        // The text index.
        let mut expected: HashMap<(u32, u64), u32> = HashMap::new();
        let mut frequencies: HashMap<u32, u32> = HashMap::new();
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
            if !exists(e) {
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

        // Statistics.
        for entry in raw(self.db.stats).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            let (Ok(stat), Ok(found)) = (
                StatKey::decode(key),
                <[u8; 8]>::try_from(value).map(u64::from_be_bytes),
            ) else {
                f.add(
                    "record-decodes",
                    db_name::STATS,
                    format!("the entry {} = {} does not decode", hex(key), hex(value)),
                );
                continue;
            };
            let want = stats.remove(&stat).unwrap_or(0);
            if found != want || found == 0 {
                f.add(
                    "counter-equals-count",
                    db_name::STATS,
                    format!("{stat:?} is {found}, but counts {want}"),
                );
            }
        }
        for (stat, want) in stats {
            f.add(
                "counter-equals-count",
                db_name::STATS,
                format!("{stat:?} is missing (0), but counts {want}"),
            );
        }

        // The change log and the meta keys.
        let last = self.last_change_seq(txn)?;
        f.report.counts.last_change_seq = last;
        let mut previous: Option<u64> = None;
        for entry in raw(self.db.changes).iter(txn).lmdb()? {
            let (key, value) = entry.lmdb()?;
            f.report.counts.changes += 1;
            let Ok(seq) = <[u8; 8]>::try_from(key).map(u64::from_be_bytes) else {
                f.add(
                    "record-decodes",
                    db_name::CHANGES,
                    format!("the key {} is not a sequence number", hex(key)),
                );
                continue;
            };
            if let Err(e) = value::decode_all(value) {
                f.add(
                    "record-decodes",
                    db_name::CHANGES,
                    format!("change {seq}: {e}"),
                );
            }
            if let Some(p) = previous
                && seq != p + 1
            {
                f.add(
                    "change-log-order",
                    db_name::CHANGES,
                    format!("change {seq} follows change {p}: the log has a gap"),
                );
            }
            previous = Some(seq);
        }
        if previous.unwrap_or(0) != last {
            f.add(
                "change-log-order",
                db_name::CHANGES,
                format!(
                    "the log ends at {}, but last_change_seq is {last}",
                    previous.map_or_else(|| "nothing".to_owned(), |p| p.to_string())
                ),
            );
        }
        if f.report.counts.changes > MAX_CHANGES {
            f.add(
                "change-log-order",
                db_name::CHANGES,
                format!(
                    "the log keeps {} entries, more than {MAX_CHANGES}",
                    f.report.counts.changes
                ),
            );
        }
        for (key, max, what) in [
            (meta_key::NEXT_CONCEPT_ID, max_concept, "concept"),
            (
                meta_key::NEXT_PROPOSITION_ID,
                max_proposition,
                "proposition",
            ),
        ] {
            let next = self.peek_id(txn, key)?;
            if next <= max {
                f.add(
                    "next-id",
                    db_name::META,
                    format!("`{key}` is {next}, but {what} {max} exists"),
                );
            }
        }
        match self.db.meta.get(txn, meta_key::FORMAT_VERSION).lmdb()? {
            Some(v) if v == FORMAT_VERSION.to_be_bytes() => {}
            other => f.add(
                "format-version",
                db_name::META,
                format!(
                    "the format version is {}, expected {FORMAT_VERSION}",
                    other.map_or_else(|| "missing".to_owned(), hex)
                ),
            ),
        }

        self.check_trace(txn, &mut f)?;

        f.report.ok = f.report.violations.is_empty() && f.report.unlisted == 0;
        Ok(f.report)
    }

    /// The cognitive trace's databases agree: every entry decodes, no entry
    /// id is above `last_trace_id`, every entry's touched elements are
    /// indexed by element and every element index entry points at an entry
    /// that lists it, and every per-originator sequence is 8 bytes.
    fn check_trace(&self, txn: &RoTxn<'_>, f: &mut Findings) -> Result<(), StoreError> {
        let last = self.last_trace_id(txn)?;
        let mut listed: HashSet<(Vec<u8>, u64)> = HashSet::new();
        for item in self.db.trace.iter(txn).lmdb()? {
            let (id, body) = item.lmdb()?;
            if id > last {
                f.add(
                    "trace-order",
                    db_name::TRACE,
                    format!("entry {id} is above last_trace_id {last}"),
                );
            }
            if crate::trace::decode_entry(body).is_err() {
                f.add(
                    "trace-entry",
                    db_name::TRACE,
                    format!("entry {id} is not a JSON document"),
                );
            }
        }
        for item in self.db.trace_touches.iter(txn).lmdb()? {
            let (id, touched) = item.lmdb()?;
            if self.db.trace.get(txn, &id).lmdb()?.is_none() {
                f.add(
                    "trace-index",
                    db_name::TRACE_TOUCHES,
                    format!("entry {id} touches elements but does not exist"),
                );
            }
            if touched.len() % element::LEN != 0 {
                f.add(
                    "trace-index",
                    db_name::TRACE_TOUCHES,
                    format!("entry {id}'s element list is {} bytes", touched.len()),
                );
                continue;
            }
            // A range of created elements is two chunks flagged
            // `RANGE_FLAG`, indexed under the second (see `trace.rs`).
            let mut chunks = touched.chunks(element::LEN);
            while let Some(first) = chunks.next() {
                let e = if first[0] & crate::trace::RANGE_FLAG == 0 {
                    first
                } else {
                    match chunks.next() {
                        Some(last) if last[0] == first[0] && last[1..] >= first[1..] => last,
                        _ => {
                            f.add(
                                "trace-index",
                                db_name::TRACE_TOUCHES,
                                format!(
                                    "entry {id} has a range {} without a valid end",
                                    hex(first)
                                ),
                            );
                            continue;
                        }
                    }
                };
                listed.insert((e.to_vec(), id));
                let mut key = e.to_vec();
                key.extend_from_slice(&id.to_be_bytes());
                if raw(self.db.trace_elements).get(txn, &key).lmdb()?.is_none() {
                    f.add(
                        "trace-index",
                        db_name::TRACE_ELEMENTS,
                        format!(
                            "entry {id} touched {} but the element index lacks it",
                            hex(e)
                        ),
                    );
                }
            }
        }
        for item in raw(self.db.trace_elements).iter(txn).lmdb()? {
            let (key, _) = item.lmdb()?;
            let Some((e, id)) = key.split_at_checked(element::LEN) else {
                f.add(
                    "trace-index",
                    db_name::TRACE_ELEMENTS,
                    format!("a key of {} bytes", key.len()),
                );
                continue;
            };
            let id = <[u8; 8]>::try_from(id).map(u64::from_be_bytes);
            match id {
                Ok(id) if listed.contains(&(e.to_vec(), id)) => {}
                Ok(id) => f.add(
                    "trace-index",
                    db_name::TRACE_ELEMENTS,
                    format!("{} → entry {id}, which does not list it", hex(e)),
                ),
                Err(_) => f.add(
                    "trace-index",
                    db_name::TRACE_ELEMENTS,
                    format!("a key of {} bytes", key.len()),
                ),
            }
        }
        for item in raw(self.db.trace_seqs).iter(txn).lmdb()? {
            let (originator, seq) = item.lmdb()?;
            if seq.len() != 8 {
                f.add(
                    "trace-seq",
                    db_name::TRACE_SEQS,
                    format!(
                        "the sequence of {} is {} bytes",
                        String::from_utf8_lossy(originator),
                        seq.len()
                    ),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;
    use crate::{ConceptRecord, PropositionRecord};

    /// A store with concepts, propositions (one about a proposition),
    /// documents, a deletion and change-log entries.
    fn sample() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path()).expect("open");
        store
            .write(|txn| {
                let drug = store.intern(txn, Namespace::ConceptType, "Drug")?;
                let treats = store.intern(txn, Namespace::Predicate, "treats")?;
                let mut attributes = Map::new();
                attributes.insert("dose".to_owned(), json!({"mg": [100, 200]}));
                let mut ids = Vec::new();
                for name in ["Aspirin", "Headache", "Fever", "阿司匹林"] {
                    let record = ConceptRecord {
                        type_id: drug,
                        name: name.to_owned(),
                        attributes: attributes.clone(),
                        ..Default::default()
                    };
                    let id = store.create_concept(txn, &record)?;
                    store.index_document(
                        txn,
                        id.into(),
                        &[(name.to_lowercase(), 2), ("drug".to_owned(), 1)],
                        3,
                    )?;
                    ids.push(id);
                }
                let p = store.create_proposition(
                    txn,
                    &PropositionRecord {
                        subject: ids[0].into(),
                        predicate: treats,
                        object: ids[1].into(),
                        attributes: Map::new(),
                        metadata: Map::new(),
                    },
                )?;
                let about = store.intern(txn, Namespace::Predicate, "about")?;
                store.create_proposition(
                    txn,
                    &PropositionRecord {
                        subject: ids[2].into(),
                        predicate: about,
                        object: p.into(),
                        attributes: Map::new(),
                        metadata: Map::new(),
                    },
                )?;
                store.remove_document(txn, ids[3].into())?;
                store.delete_concept(txn, ids[3])?;
                store.append_change(txn, &json!({"origin": "test"}))?;
                store.append_change(txn, &json!({"origin": "test"}))?;
                Ok::<_, StoreError>(())
            })
            .expect("write");
        (dir, store)
    }

    fn invariants(store: &Store) -> Vec<(&'static str, &'static str)> {
        let report = store.check().expect("check");
        assert_eq!(report.ok, report.violations.is_empty());
        report
            .violations
            .iter()
            .map(|v| (v.invariant, v.database))
            .collect()
    }

    /// Tampers with raw bytes, bypassing every rule of the store.
    fn tamper(store: &Store, f: impl Fn(&Store, &mut heed::RwTxn<'_>) -> heed::Result<()>) {
        store.write(|txn| f(store, txn).lmdb()).expect("tamper");
    }

    #[test]
    fn a_store_written_through_its_api_passes() {
        let (_d, store) = sample();
        let report = store.check().expect("check");
        assert!(report.ok, "{report:#?}");
        assert_eq!(report.counts.concepts, 3);
        assert_eq!(report.counts.propositions, 2);
        assert_eq!(report.counts.documents, 3);
        assert_eq!(report.counts.changes, 2);
        assert_eq!(report.counts.last_change_seq, 2);
    }

    #[test]
    fn a_missing_or_stray_attribute_index_entry_is_reported() {
        let (_d, store) = sample();
        store
            .write(|txn| {
                let drug = store.intern(txn, Namespace::ConceptType, "Drug")?;
                let mut attributes = Map::new();
                attributes.insert("dose_mg".to_owned(), json!(500));
                let record = ConceptRecord {
                    type_id: drug,
                    name: "Ibuprofen".to_owned(),
                    attributes,
                    ..Default::default()
                };
                store.create_concept(txn, &record).map(|_| ())
            })
            .expect("write");
        assert!(invariants(&store).is_empty());
        tamper(&store, |s, txn| {
            raw(s.db.attr_index).clear(txn)?;
            raw(s.db.attr_index).put(
                txn,
                b"\x00\x00\x00\x01\x01\x00\x00\x00\x09\x01\x01\x00\x00\x00\x00\x00\x00\x00\x09",
                b"",
            )
        });
        let found = invariants(&store);
        assert!(
            found.contains(&("record-has-index-entry", "attr_index")),
            "{found:?}"
        );
        assert!(
            found.contains(&("index-entry-has-record", "attr_index")),
            "{found:?}"
        );
    }

    #[test]
    fn a_missing_or_stray_index_entry_is_reported() {
        let (_d, store) = sample();
        tamper(&store, |s, txn| {
            raw(s.db.pos).clear(txn)?;
            raw(s.db.concepts_by_name).put(txn, b"Ghost\x00\x00\x00\x00\x00\x00\x00\x00\x09", b"")
        });
        let found = invariants(&store);
        assert_eq!(
            found
                .iter()
                .filter(|v| **v == ("record-has-index-entry", "pos"))
                .count(),
            2,
            "{found:?}"
        );
        assert!(
            found.contains(&("index-entry-has-record", "concepts_by_name")),
            "{found:?}"
        );
    }

    #[test]
    fn an_index_entry_pointing_at_another_record_is_reported() {
        let (_d, store) = sample();
        tamper(&store, |s, txn| {
            let key = type_name_key(1, "Aspirin");
            raw(s.db.concept_keys).put(txn, &key, &2u64.to_be_bytes())
        });
        assert_eq!(
            invariants(&store),
            [("index-entry-matches-record", "concept_keys")]
        );
    }

    #[test]
    fn a_counter_that_differs_from_its_count_is_reported() {
        let (_d, store) = sample();
        tamper(&store, |s, txn| {
            raw(s.db.stats).put(txn, &StatKey::Concepts.encode(), &7u64.to_be_bytes())
        });
        let found = store.check().expect("check");
        assert_eq!(found.violations.len(), 1, "{found:#?}");
        assert_eq!(found.violations[0].invariant, "counter-equals-count");
        assert!(found.violations[0].detail.contains("is 7, but counts 3"));
    }

    #[test]
    fn postings_that_do_not_match_the_documents_are_reported() {
        let (_d, store) = sample();
        tamper(&store, |s, txn| {
            // The block of "drug" loses its postings, "fever" claims five
            // documents, and "drug" is looked up under another term's id.
            let drug = s.db.terms.get(txn, "drug")?.expect("indexed");
            let fever = s.db.terms.get(txn, "fever")?.expect("indexed");
            let first = ordinal(ElementId::Concept(ConceptId(1)));
            raw(s.db.postings).delete(txn, &crate::codec::posting::block_key(drug, first))?;
            s.db.term_ids.put(
                txn,
                &fever,
                &crate::codec::posting::encode_term_entry(5, "fever"),
            )?;
            s.db.terms.put(txn, "drug", &fever)
        });
        let found = invariants(&store);
        assert!(
            found.contains(&("posting-matches-document", "postings")),
            "{found:?}"
        );
        assert!(found.contains(&("term-frequency", "term_ids")), "{found:?}");
        assert!(found.contains(&("term-frequency", "terms")), "{found:?}");
    }

    #[test]
    fn a_gap_in_the_change_log_and_a_dangling_end_are_reported() {
        let (_d, store) = sample();
        tamper(&store, |s, txn| {
            s.db.changes.put(txn, &5, &json!({}))?;
            // The object of P:2 is P:1: remove P:1's record only.
            raw(s.db.propositions).delete(txn, &1u64.to_be_bytes())?;
            Ok(())
        });
        let found = invariants(&store);
        assert!(
            found.contains(&("change-log-order", "changes")),
            "{found:?}"
        );
        assert!(
            found.contains(&("proposition-ends-exist", "propositions")),
            "{found:?}"
        );
        assert!(
            found.contains(&("index-entry-has-record", "spo")),
            "{found:?}"
        );
        assert!(
            found.contains(&("counter-equals-count", "stats")),
            "{found:?}"
        );
    }

    #[test]
    fn trace_entries_and_their_element_index_are_checked() {
        let (_d, store) = sample();
        store
            .write(|txn| {
                let slot = store.next_trace_slot(txn, "tester")?;
                store.put_trace(
                    txn,
                    slot.id,
                    &json!({"type": "TRACE", "message": "a write"}),
                    &[crate::ElementId::Concept(crate::ConceptId(1))],
                )
            })
            .expect("a trace entry");
        assert!(store.check().expect("check").ok, "{:?}", invariants(&store));
        tamper(&store, |s, txn| {
            // The element index loses the entry's one element, and a stray
            // key points at an entry that does not list it.
            raw(s.db.trace_elements).clear(txn)?;
            let mut stray =
                element::encode(crate::ElementId::Concept(crate::ConceptId(2))).to_vec();
            stray.extend_from_slice(&1u64.to_be_bytes());
            raw(s.db.trace_elements).put(txn, &stray, &[])?;
            raw(s.db.trace).put(txn, &99u64.to_be_bytes(), b"not json")?;
            Ok(())
        });
        let found = invariants(&store);
        assert!(
            found.contains(&("trace-index", "trace_elements")),
            "{found:?}"
        );
        assert!(found.contains(&("trace-order", "trace")), "{found:?}");
        assert!(found.contains(&("trace-entry", "trace")), "{found:?}");
    }
}

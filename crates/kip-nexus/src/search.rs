//! SEARCH: keeping the inverted index in step with writes, and ranking.
//!
//! A concept is indexed by its name (counted three times, so a name match
//! outranks a mention) and the string values of its attributes (nested
//! ones too); a proposition by its predicate (counted three times), the
//! names of its subject and object and its string attributes. Ranking is BM25 (k1 = 1.2, b = 0.75)
//! over the query's terms, plus a bonus when the whole query equals the
//! name. When nothing matches, a typo-tolerant pass retries each query term
//! with the indexed terms that start with it or are within a small edit
//! distance. `WITH TYPE` filters candidates *before* ranking and the limit
//! is applied last, so `LIMIT N` returns N hits whenever N exist.
//!
//! A query term of one CJK character (search as you type: `汤`) stands for
//! every indexed term holding it: itself (a lone or run-final character,
//! see [`crate::tokenize::index_terms`]) and the bigrams starting with it.
//! A concept whose name contains the character ranks above one that only
//! mentions it.

use std::collections::HashMap;

use kip_store::{
    ConceptId, ConceptRecord, DocumentBatch, ElementId, PropositionId, PropositionRecord, RwTxn,
    Store,
};
use serde_json::Value as Json;

use crate::graph::{Graph, OrInternal as _, Result};
use crate::tokenize::{each_index_term, index_terms, is_cjk, tokenize};

const NAME_WEIGHT: u32 = 3;

fn collect_strings(v: &Json, out: &mut Vec<String>) {
    match v {
        Json::String(s) => out.push(s.clone()),
        Json::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Json::Object(map) => map.values().for_each(|i| collect_strings(i, out)),
        _ => {}
    }
}

/// Term frequencies and length of a document: `name_like` texts count
/// [`NAME_WEIGHT`] times, `mentions` and string attributes once.
fn document(
    name_like: &[&str],
    mentions: &[&str],
    attributes: &serde_json::Map<String, Json>,
) -> (Vec<(String, u32)>, u32) {
    // Documents are short (a link's three names): every occurrence is
    // listed, sorted and merged, which is cheaper than hashing each term.
    let mut occurrences: Vec<(String, u32)> = Vec::new();
    let mut len = 0;
    for (texts, weight) in [(name_like, NAME_WEIGHT), (mentions, 1)] {
        for text in texts {
            for t in index_terms(text) {
                occurrences.push((t, weight));
                len += weight;
            }
        }
    }
    let mut strings = Vec::new();
    for v in attributes.values() {
        collect_strings(v, &mut strings);
    }
    for s in &strings {
        for t in index_terms(s) {
            occurrences.push((t, 1));
            len += 1;
        }
    }
    occurrences.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut terms: Vec<(String, u32)> = Vec::with_capacity(occurrences.len());
    for (t, weight) in occurrences {
        match terms.last_mut() {
            Some((last, tf)) if *last == t => *tf += weight,
            _ => terms.push((t, weight)),
        }
    }
    (terms, len)
}

/// A concept's search document: its terms with frequencies and its length.
pub fn concept_document(rec: &ConceptRecord) -> (Vec<(String, u32)>, u32) {
    document(&[rec.name.as_str()], &[], &rec.attributes)
}

pub fn index_concept(
    store: &Store,
    txn: &mut RwTxn<'_>,
    id: ConceptId,
    rec: &ConceptRecord,
) -> Result<()> {
    let (terms, len) = concept_document(rec);
    store
        .index_document(txn, ElementId::Concept(id), &terms, len)
        .kip()
}

/// Indexes a proposition; `names` are its predicate (with spaces for
/// underscores), its subject's name and its object's name.
pub fn index_proposition(
    store: &Store,
    txn: &mut RwTxn<'_>,
    id: PropositionId,
    rec: &PropositionRecord,
    names: &[String; 3],
) -> Result<()> {
    let (terms, len) = document(
        &[names[0].as_str()],
        &[names[1].as_str(), names[2].as_str()],
        &rec.attributes,
    );
    store
        .index_document(txn, ElementId::Proposition(id), &terms, len)
        .kip()
}

/// The search documents of new links without attributes (what a bulk
/// import's `SET PROPOSITIONS` creates), the same documents
/// [`index_proposition`] writes one by one: each link's predicate (counted
/// [`NAME_WEIGHT`] times) and its ends' names. Ends and predicates recur
/// across many links, so each is tokenized once per batch and its terms
/// interned once; a link's document is then a merge of three short lists
/// of term slots ([`kip_store::DocumentBatch`]).
#[derive(Debug, Default)]
pub struct LinkDocuments {
    /// Tells this batch's [`Terms`] from another's (0 until the first
    /// name is tokenized).
    generation: u64,
    batch: DocumentBatch,
    slots: HashMap<String, u32, foldhash::fast::RandomState>,
    /// Each end's name, as a range of `arena` and its token count.
    ends: HashMap<ElementId, Terms, foldhash::fast::RandomState>,
    /// Each predicate's name (spaces for underscores), likewise.
    predicates: HashMap<u32, Terms, foldhash::fast::RandomState>,
    /// `(slot, occurrences)` of every name tokenized so far.
    arena: Vec<(u32, u32)>,
    scratch: Vec<(u32, u32)>,
}

/// What [`LinkDocuments::add`] asks the name of.
#[derive(Clone, Copy, Debug)]
pub enum NameOf {
    Predicate(u32),
    End(ElementId),
}

/// A tokenized name: its terms (a range of [`LinkDocuments::arena`] of
/// the batch `generation`) and how many tokens it has. The writer keeps
/// its links' ends' so that creating a link finds them without a look-up.
#[derive(Clone, Copy, Debug, Default)]
pub struct Terms {
    generation: u64,
    start: u32,
    end: u32,
    len: u32,
}

/// Numbers the batches of [`LinkDocuments`] (see [`Terms`]).
static GENERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl LinkDocuments {
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    pub fn len(&self) -> usize {
        self.batch.len()
    }

    /// Adds link `id` between `subject` and `object` by predicate `p`.
    /// `name` is asked only for a predicate or an end the batch has not
    /// met yet (a proposition end's name is empty). `ends`: the ends' terms as [`LinkDocuments::meet`] gave them, if
    /// at hand (those of another batch are looked up again).
    pub fn add(
        &mut self,
        id: PropositionId,
        (subject, p, object): (ElementId, u32, ElementId),
        ends: Option<[Terms; 2]>,
        mut name: impl FnMut(NameOf) -> Result<String>,
    ) -> Result<()> {
        let pred = match self.predicates.get(&p) {
            Some(&t) => t,
            None => {
                let t = self.tokenize(&name(NameOf::Predicate(p))?.replace('_', " "));
                self.predicates.insert(p, t);
                t
            }
        };
        let mut end = |this: &mut Self, e: ElementId, given: Option<Terms>| -> Result<Terms> {
            if let Some(t) = given.filter(|t| t.generation == this.generation && t.generation != 0)
            {
                return Ok(t);
            }
            match this.known(e) {
                Some(t) => Ok(t),
                None => Ok(this.meet(e, &name(NameOf::End(e))?)),
            }
        };
        let [given_s, given_o] = ends.map_or([None, None], |[s, o]| [Some(s), Some(o)]);
        let (s, o) = (end(self, subject, given_s)?, end(self, object, given_o)?);
        let mut terms = std::mem::take(&mut self.scratch);
        terms.clear();
        let range = |t: Terms| t.start as usize..t.end as usize;
        terms.extend(
            self.arena[range(pred)]
                .iter()
                .map(|&(slot, n)| (slot, n * NAME_WEIGHT)),
        );
        terms.extend_from_slice(&self.arena[range(s)]);
        terms.extend_from_slice(&self.arena[range(o)]);
        let len = pred.len * NAME_WEIGHT + s.len + o.len;
        self.batch.push(ElementId::Proposition(id), len, &mut terms);
        self.scratch = terms;
        Ok(())
    }

    /// Makes room for `ends` ends without growing step by step (a group
    /// write's batch meets ~100,000: rehashing as it went was 1–2% of the
    /// writer).
    pub fn reserve(&mut self, ends: usize) {
        self.ends.reserve(ends);
        self.slots.reserve(ends / 2);
        self.arena.reserve(ends * 3);
    }

    /// End `e`'s terms, if the batch has met it (see
    /// [`LinkDocuments::meet`]).
    pub fn known(&self, e: ElementId) -> Option<Terms> {
        self.ends.get(&e).copied()
    }

    /// Tokenizes end `e`'s name ahead of the links that will name it:
    /// the writer meets the ends when it decides a link, with their names
    /// at hand, and creates the link later (handing the terms back to
    /// [`LinkDocuments::add`]).
    pub fn meet(&mut self, e: ElementId, name: &str) -> Terms {
        if let Some(&t) = self.ends.get(&e) {
            return t;
        }
        let t = self.tokenize(name);
        self.ends.insert(e, t);
        t
    }

    /// Interns `text`'s terms; their occurrences go to the arena.
    fn tokenize(&mut self, text: &str) -> Terms {
        if self.generation == 0 {
            self.generation = GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let start = self.arena.len();
        let mut len = 0;
        let (slots, batch, arena) = (&mut self.slots, &mut self.batch, &mut self.arena);
        each_index_term(text, |term| {
            len += 1;
            let slot = match slots.get(term) {
                Some(&slot) => slot,
                None => {
                    let slot = batch.add_term(term.to_owned());
                    slots.insert(term.to_owned(), slot);
                    slot
                }
            };
            match arena[start..].iter_mut().find(|(s, _)| *s == slot) {
                Some((_, n)) => *n += 1,
                None => arena.push((slot, 1)),
            }
        });
        Terms {
            generation: self.generation,
            start: start as u32,
            end: self.arena.len() as u32,
            len,
        }
    }

    /// Writes the documents as one batch (see
    /// [`kip_store::Store::index_document_batch`]).
    pub fn write(self, store: &Store, txn: &mut RwTxn<'_>) -> Result<()> {
        store.index_document_batch(txn, self.batch).kip()
    }
}

pub fn unindex(store: &Store, txn: &mut RwTxn<'_>, e: ElementId) -> Result<()> {
    store.remove_document(txn, e).kip().map(drop)
}

/// What SEARCH looks for.
#[derive(Debug)]
pub struct Query<'q> {
    pub propositions: bool,
    pub term: &'q str,
    /// `WITH TYPE`: a concept type, or for propositions a predicate.
    pub with_type: Option<&'q str>,
    pub limit: usize,
}

/// The hits of a query, best first, with their scores normalised to
/// [0, 1] (RC9 §5.2.2): a hit's BM25 score (plus the exact-name bonus) as a
/// fraction of the best score any document could get for this query — every
/// query term at saturation and the whole query equal to its name. A query
/// term the index has never seen still counts in that best score, so a
/// probe that only half matches what the nexus holds stays below 0.5, which
/// is what `THRESHOLD` needs ("only if I really remember something like
/// this"). Normalising by a per-query constant keeps the ranking unchanged.
pub fn search(g: &Graph<'_>, q: &Query<'_>) -> Result<Vec<(ElementId, f64)>> {
    let terms = {
        let mut t = tokenize(q.term);
        t.sort();
        t.dedup();
        t
    };
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let terms = widen_lone_characters(g, terms)?;
    let type_filter: Option<u32> = match q.with_type {
        None => None,
        Some(t) if q.propositions => Some(g.predicate_id(t)?.unwrap_or(u32::MAX)),
        Some(t) => Some(g.type_id(t)?.unwrap_or(u32::MAX)),
    };
    let mut hits = rank(g, q, &terms, type_filter)?;
    if hits.is_empty() {
        // Typo-tolerant pass: each term widened to the indexed terms that
        // extend it or are one or two edits away.
        let mut widened = Vec::new();
        for t in &terms {
            widened.extend(similar_terms(g, t)?);
        }
        widened.sort();
        widened.dedup();
        if !widened.is_empty() {
            hits = rank(g, q, &widened, type_filter)?;
            for h in &mut hits {
                h.1 *= 0.5; // a fuzzy hit ranks below what an exact one would
            }
        }
    }
    hits.truncate(q.limit);
    Ok(hits)
}

/// At most this many bigrams stand in for one lone CJK character.
const LONE_CHARACTER_BIGRAMS: usize = 256;

/// Whether `term` is one CJK character.
fn is_lone_character(term: &str) -> bool {
    let mut chars = term.chars();
    matches!((chars.next(), chars.next()), (Some(c), None) if is_cjk(c))
}

/// `terms` with each lone CJK character joined by the indexed bigrams
/// that start with it (the ones that end with it are indexed with the
/// character itself as their run's last unigram).
fn widen_lone_characters(g: &Graph<'_>, terms: Vec<String>) -> Result<Vec<String>> {
    if !terms.iter().any(|t| is_lone_character(t)) {
        return Ok(terms);
    }
    let mut out = Vec::new();
    for t in terms {
        if is_lone_character(&t) {
            let mut bigrams = g.store.terms_with_prefix(g.txn, &t).kip()?;
            bigrams.retain(|b| b != &t);
            bigrams.truncate(LONE_CHARACTER_BIGRAMS);
            out.extend(bigrams);
        }
        out.push(t);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn similar_terms(g: &Graph<'_>, term: &str) -> Result<Vec<String>> {
    let chars: Vec<char> = term.chars().collect();
    if chars.iter().any(|&c| is_cjk(c)) {
        // CJK terms have no spelling to be near; a lone character was
        // widened before the first pass already.
        return Ok(Vec::new());
    }
    if chars.len() < 3 {
        return Ok(Vec::new());
    }
    let prefix: String = chars[..1].iter().collect();
    let budget = if chars.len() <= 5 { 1 } else { 2 };
    let mut out = Vec::new();
    for candidate in g.store.terms_with_prefix(g.txn, &prefix).kip()? {
        if candidate.starts_with(term) || strsim::damerau_levenshtein(term, &candidate) <= budget {
            out.push(candidate);
        }
        if out.len() >= 64 {
            break;
        }
    }
    Ok(out)
}

/// What a hit gains when the whole query equals its name.
const EXACT_NAME_BONUS: f64 = 10.0;

/// At most this many candidate documents are scored per query.
const CANDIDATES: usize = 4_096;

/// BM25 over the candidates that the query's rarest terms select.
///
/// Candidates come from the postings of the rarest terms first, until
/// [`CANDIDATES`] would be exceeded (the rarest term always contributes, up
/// to that cap); each candidate is then scored on *every* query term from
/// its own stored term list. A query such as "Gene 123" thus reads the few
/// postings of "123" instead of every document containing "gene".
/// What a concept whose name contains a lone typed (CJK) character adds to
/// its score, so names come before mere mentions.
const LONE_CHARACTER_BONUS: f64 = 5.0;

fn rank(
    g: &Graph<'_>,
    q: &Query<'_>,
    terms: &[String],
    type_filter: Option<u32>,
) -> Result<Vec<(ElementId, f64)>> {
    const K1: f64 = 1.2;
    const B: f64 = 0.75;
    let (docs, total_len) = g.store.search_stats(g.txn).kip()?;
    let n = docs.max(1) as f64;
    let avg = (total_len as f64 / n).max(1.0);
    let idf_of = |df: u32| (1.0 + (n - f64::from(df) + 0.5) / (f64::from(df) + 0.5)).ln();
    let mut by_rarity: Vec<(&String, u32)> = Vec::with_capacity(terms.len());
    // The best score a document could reach: each term saturated
    // (`tf → ∞` gives `idf · (K1 + 1)`), plus the exact-name bonus.
    let mut best = EXACT_NAME_BONUS;
    for t in terms {
        let df = g.store.document_frequency(g.txn, t).kip()?;
        best += idf_of(df) * (K1 + 1.0);
        if df > 0 {
            by_rarity.push((t, df));
        }
    }
    by_rarity.sort_by_key(|&(t, df)| (df, t.clone()));
    let idf: HashMap<&str, f64> = by_rarity
        .iter()
        .map(|&(t, df)| (t.as_str(), idf_of(df)))
        .collect();

    let mut candidates: Vec<ElementId> = Vec::new();
    let mut seen: std::collections::HashSet<ElementId> = std::collections::HashSet::new();
    for (i, &(t, df)) in by_rarity.iter().enumerate() {
        if i > 0 && candidates.len() + df as usize > CANDIDATES {
            break;
        }
        for (e, _) in g.store.postings(g.txn, t).kip()? {
            if candidates.len() >= CANDIDATES {
                break;
            }
            if seen.insert(e) && admits(g, q.propositions, type_filter, e)? {
                candidates.push(e);
            }
        }
    }

    let wanted = q.term.trim().to_lowercase();
    let lone = is_lone_character(&wanted);
    if lone {
        best += LONE_CHARACTER_BONUS;
    }
    let mut hits = Vec::with_capacity(candidates.len());
    for e in candidates {
        let Some(doc) = g.store.document_terms(g.txn, e).kip()? else {
            continue;
        };
        let len = f64::from(doc.iter().map(|(_, tf)| *tf).sum::<u32>().max(1));
        let mut score = 0.0;
        let mut matched = 0;
        for (term, tf) in &doc {
            if let Some(idf) = idf.get(term.as_str()) {
                let tf = f64::from(*tf);
                score += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg));
                matched += 1;
            }
        }
        // The whole query equal to a concept's name is the best possible hit;
        // only documents holding every query term can be one.
        if (matched == idf.len() || lone)
            && let ElementId::Concept(c) = e
            && g.concept(c)?
                .is_some_and(|r| r.name.to_lowercase() == wanted)
        {
            score += EXACT_NAME_BONUS;
        }
        // One character typed: the concepts named with it come first.
        if lone
            && let ElementId::Concept(c) = e
            && g.concept(c)?
                .is_some_and(|r| r.name.contains(wanted.as_str()))
        {
            score += LONE_CHARACTER_BONUS;
        }
        hits.push((e, (score / best).clamp(0.0, 1.0)));
    }
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(hits)
}

fn admits(
    g: &Graph<'_>,
    propositions: bool,
    type_filter: Option<u32>,
    e: ElementId,
) -> Result<bool> {
    Ok(match (e, propositions) {
        (ElementId::Concept(c), false) => match type_filter {
            None => true,
            Some(t) => g.concept(c)?.is_some_and(|r| r.type_id == t),
        },
        (ElementId::Proposition(p), true) => match type_filter {
            None => true,
            Some(t) => g.proposition(p)?.is_some_and(|r| r.predicate == t),
        },
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::{NAME_WEIGHT, document};
    use crate::tokenize::index_terms;

    /// A document's terms counted the plain way: a map from term to
    /// weighted frequency.
    fn counted(
        name_like: &[&str],
        mentions: &[&str],
        strings: &[&str],
    ) -> (Vec<(String, u32)>, u32) {
        let mut tf: BTreeMap<String, u32> = BTreeMap::new();
        let mut len = 0;
        for (texts, weight) in [(name_like, NAME_WEIGHT), (mentions, 1), (strings, 1)] {
            for text in texts {
                for t in index_terms(text) {
                    *tf.entry(t).or_default() += weight;
                    len += weight;
                }
            }
        }
        (tf.into_iter().collect(), len)
    }

    #[test]
    fn a_document_counts_each_term_once_with_its_weights_summed_in_term_order() {
        let attributes = json!({
            "description": "Aspirin treats headache; aspirin again",
            "aliases": ["阿司匹林", {"nested": "treats"}],
            "score": 3,
        });
        let attributes = attributes.as_object().expect("an object");
        let got = document(&["treats"], &["Aspirin", "Headache 阿司匹林"], attributes);
        let want = counted(
            &["treats"],
            &["Aspirin", "Headache 阿司匹林"],
            &[
                "Aspirin treats headache; aspirin again",
                "阿司匹林",
                "treats",
            ],
        );
        assert_eq!(got, want);
        assert_eq!(document(&[], &[], &serde_json::Map::new()), (Vec::new(), 0));
    }
}

//! Duplicate candidates (issue 31 §3): pairs of concepts of one type that
//! may name the same thing, each with the reasons that made it a candidate
//! and a score, for a curator (or a `$system` agent) to merge with `MERGE`
//! or to dismiss ("not the same", remembered).
//!
//! One pass over every concept record: per type, names (and `aliases`)
//! are normalised — Unicode compatibility form (NFKC: full-width letters
//! become ASCII), lower case, without whitespace or punctuation — and
//!
//! - equal normalised names are candidates ("same name");
//! - names one edit apart (a letter added, dropped, changed or two
//!   swapped; normalised names of at least [`MIN_FUZZY_CHARS`] characters;
//!   never a digit: "Windows 10" and "Windows 11" are two things) are
//!   candidates, found by a deletion index (each name and its one-letter
//!   deletions, hashed) instead of comparing every pair;
//! - a candidate's score grows with the neighbours both ends link to.
//!
//! The meta-types (`$ConceptType`, `$PropositionType`) are left out:
//! their instances are the schema.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use kip_store::ConceptId;
use serde::Serialize;
use unicode_normalization::UnicodeNormalization as _;

use crate::graph::{CONCEPT_TYPE, Graph, PROPOSITION_TYPE, Result};

/// Names shorter than this (normalised, in characters) only match exactly:
/// one letter apart, "cat" and "car" are different words.
pub const MIN_FUZZY_CHARS: usize = 5;

/// The most candidates one call returns.
pub const MAX_CANDIDATES: usize = 10_000;

/// A concept of a candidate pair.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DuplicateEnd {
    /// `C:…`.
    pub id: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub name: String,
}

/// Two concepts that may be one, best first by `score` (0–1).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Duplicate {
    pub a: DuplicateEnd,
    pub b: DuplicateEnd,
    pub score: f64,
    /// Why, in words: "same name after normalising case, width, spaces and
    /// punctuation", "one edit apart", "an alias of the other", "3 shared
    /// neighbours".
    pub reasons: Vec<String>,
}

/// What to look for.
#[derive(Clone, Debug, Default)]
pub struct DuplicateQuery {
    /// Only these types (all but the meta-types when empty).
    pub types: Vec<String>,
    /// At most this many, best first ([`MAX_CANDIDATES`] when 0).
    pub limit: usize,
    /// Pairs dismissed as not the same, as `(smaller id, larger id)`.
    pub dismissed: HashSet<(ConceptId, ConceptId)>,
}

/// A name as the comparison sees it.
pub fn normalise(name: &str) -> String {
    name.nfkc()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect()
}

/// One concept's names (its name, then its aliases), normalised.
struct Entry {
    id: ConceptId,
    name: String,
    keys: Vec<String>,
}

/// Why a pair became a candidate, before scoring.
#[derive(Clone, Copy, Default)]
struct Found {
    same: bool,
    alias: bool,
    edit: bool,
}

/// The duplicate candidates of `g` (see the module doc).
pub fn duplicates(g: &Graph<'_>, query: &DuplicateQuery) -> Result<Vec<Duplicate>> {
    let wanted = g.wanted_types(&query.types)?;
    let skipped: Vec<u32> = [CONCEPT_TYPE, PROPOSITION_TYPE]
        .iter()
        .filter_map(|t| g.type_id(t).ok().flatten())
        .collect();
    let mut by_type: HashMap<u32, Vec<Entry>> = HashMap::new();
    for row in g.all_concepts()? {
        let (id, record) = row?;
        if skipped.contains(&record.type_id)
            || wanted
                .as_ref()
                .is_some_and(|w| !w.contains(&record.type_id))
        {
            continue;
        }
        let mut keys = vec![normalise(&record.name)];
        if let Some(aliases) = record.attributes.get("aliases").and_then(|a| a.as_array()) {
            keys.extend(aliases.iter().filter_map(|a| a.as_str()).map(normalise));
        }
        keys.retain(|k| !k.is_empty());
        by_type.entry(record.type_id).or_default().push(Entry {
            id,
            name: record.name,
            keys,
        });
    }
    // Every candidate with its score from the names alone; the shared
    // neighbours (two index reads a pair) only for the best of them.
    let mut found = Vec::new();
    for (type_id, entries) in &by_type {
        for ((i, j), why) in candidates(entries) {
            let (a, b) = (&entries[i], &entries[j]);
            let pair = (a.id.min(b.id), a.id.max(b.id));
            if !query.dismissed.contains(&pair) {
                found.push((name_score(a, b, why), *type_id, i, j, why));
            }
        }
    }
    let limit = if query.limit == 0 {
        MAX_CANDIDATES
    } else {
        query.limit.min(MAX_CANDIDATES)
    };
    found.sort_by(|x, y| y.0.total_cmp(&x.0));
    // Shared neighbours add at most 0.1: a pair beyond the best `limit`
    // by names can only overtake pairs within 0.1 of the cut.
    let cut = found.get(limit.saturating_sub(1)).map_or(0.0, |f| f.0) - 0.1;
    let mut out = Vec::new();
    for (score, type_id, i, j, why) in found.into_iter().take_while(|f| f.0 >= cut) {
        let entries = &by_type[&type_id];
        let (a, b) = (&entries[i], &entries[j]);
        let shared = shared_neighbours(g, a.id, b.id)?;
        out.push(scored(&g.type_name(type_id)?, a, b, why, score, shared));
    }
    out.sort_by(|x, y| {
        y.score
            .total_cmp(&x.score)
            .then_with(|| x.a.id.cmp(&y.a.id))
            .then_with(|| x.b.id.cmp(&y.b.id))
    });
    out.truncate(limit);
    Ok(out)
}

/// The candidate pairs among one type's entries, as index pairs `i < j`.
fn candidates(entries: &[Entry]) -> HashMap<(usize, usize), Found> {
    let mut found: HashMap<(usize, usize), Found> = HashMap::new();
    let mut note = |i: usize, j: usize, f: fn(&mut Found)| {
        if i != j {
            f(found.entry((i.min(j), i.max(j))).or_default());
        }
    };
    // Exact normalised names (a concept's own name against every name and
    // alias of the others).
    let mut exact: HashMap<&str, Vec<(usize, bool)>> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        for (k, key) in e.keys.iter().enumerate() {
            exact.entry(key.as_str()).or_default().push((i, k > 0));
        }
    }
    for group in exact.values().filter(|g| g.len() > 1) {
        for (x, &(i, i_alias)) in group.iter().enumerate() {
            for &(j, j_alias) in &group[x + 1..] {
                if i_alias || j_alias {
                    note(i, j, |f| f.alias = true);
                } else {
                    note(i, j, |f| f.same = true);
                }
            }
        }
    }
    // One edit apart: names sharing a one-letter deletion (or one being
    // the other's deletion), confirmed by the edit distance.
    let mut deletions: HashMap<u64, Vec<usize>> = HashMap::new();
    let names: Vec<Vec<char>> = entries
        .iter()
        .map(|e| {
            e.keys
                .first()
                .map(|k| k.chars().collect())
                .unwrap_or_default()
        })
        .collect();
    for (i, chars) in names.iter().enumerate() {
        if chars.len() < MIN_FUZZY_CHARS {
            continue;
        }
        deletions.entry(hash(chars, None)).or_default().push(i);
        // Not at digits: names that differ in a number ("Windows 10" and
        // "Windows 11", "Patient 7" and "Patient 17") name different
        // things, and numbered names would pair up by the thousand.
        for skip in (0..chars.len()).filter(|&k| !chars[k].is_numeric()) {
            deletions
                .entry(hash(chars, Some(skip)))
                .or_default()
                .push(i);
        }
    }
    for bucket in deletions.values().filter(|b| b.len() > 1) {
        for (x, &i) in bucket.iter().enumerate() {
            for &j in &bucket[x + 1..] {
                if i != j
                    && names[i] != names[j]
                    && strsim::damerau_levenshtein(&entries[i].keys[0], &entries[j].keys[0]) == 1
                {
                    note(i, j, |f| f.edit = true);
                }
            }
        }
    }
    found
}

/// The hash of `chars` without the one at `skip` (a name and another's
/// one-letter deletion hash alike when they are the same letters).
fn hash(chars: &[char], skip: Option<usize>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (i, c) in chars.iter().enumerate() {
        if Some(i) != skip {
            c.hash(&mut h);
        }
    }
    h.finish()
}

/// How many elements both `a` and `b` link to (as subject, to the same
/// object through any predicate), `belongs_to_domain` aside.
fn shared_neighbours(g: &Graph<'_>, a: ConceptId, b: ConceptId) -> Result<usize> {
    let domain = g.predicate_id(crate::graph::BELONGS_TO_DOMAIN)?;
    let objects = |c: ConceptId| -> Result<HashSet<kip_store::ElementId>> {
        Ok(
            g.propositions(Some(kip_store::ElementId::Concept(c)), None, None)?
                .into_iter()
                .filter(|(_, _, p, _)| Some(*p) != domain)
                .map(|(_, _, _, o)| o)
                .collect(),
        )
    };
    let (x, y) = (objects(a)?, objects(b)?);
    Ok(x.intersection(&y).count())
}

/// How likely `a` and `b` are one by their names alone (see [`scored`]).
fn name_score(a: &Entry, b: &Entry, found: Found) -> f64 {
    let mut score: f64 = 0.0;
    if found.same {
        score = score.max(0.9);
    }
    if found.alias {
        score = score.max(0.85);
    }
    if found.edit {
        let len = a.keys[0].chars().count().max(b.keys[0].chars().count()) as f64;
        // One letter in a long name says more than one in a short one.
        score = score.max(0.8 - 1.0 / len);
    }
    score
}

/// A candidate with its reasons, its names' `score` raised by the
/// neighbours both ends link to.
fn scored(
    type_name: &str,
    a: &Entry,
    b: &Entry,
    found: Found,
    score: f64,
    shared: usize,
) -> Duplicate {
    let mut reasons = Vec::new();
    let mut score = score;
    if found.same {
        reasons.push("same name after normalising case, width, spaces and punctuation".to_owned());
    }
    if found.alias {
        reasons.push("one's name is an alias of the other".to_owned());
    }
    if found.edit {
        reasons.push("names one edit apart".to_owned());
    }
    if shared > 0 {
        reasons.push(format!(
            "{shared} shared neighbour{}",
            if shared == 1 { "" } else { "s" }
        ));
        score = (score + 0.02 * shared.min(5) as f64).min(1.0);
    }
    let end = |e: &Entry| DuplicateEnd {
        id: kip_store::ElementId::Concept(e.id).to_string(),
        type_name: type_name.to_owned(),
        name: e.name.clone(),
    };
    let (first, second) = if a.id < b.id { (a, b) } else { (b, a) };
    Duplicate {
        a: end(first),
        b: end(second),
        score: (score * 1000.0).round() / 1000.0,
        reasons,
    }
}

/// Where a dismissed pair is remembered (one state key a pair, so two
/// processes dismissing at once both keep theirs).
const DISMISSED: &str = "duplicates/dismissed/";

fn concept_id(id: &str) -> Result<ConceptId> {
    match id.parse::<kip_store::ElementId>() {
        Ok(kip_store::ElementId::Concept(c)) => Ok(c),
        _ => Err(kip_lang::KipError::new(
            kip_lang::ErrorCode::InvalidSyntax,
            format!("{id:?} is not a concept id"),
        )
        .with_hint("Name two concepts by their ids, e.g. C:12 C:40.")),
    }
}

impl crate::nexus::Nexus {
    /// The duplicate candidates (see the module doc), less the pairs
    /// dismissed as not the same.
    pub fn duplicates(&self, types: &[String], limit: usize) -> Result<Vec<Duplicate>> {
        let mut dismissed = HashSet::new();
        for (key, _) in self.states_with_prefix(DISMISSED)? {
            let mut ids = key[DISMISSED.len()..].split('/').map(concept_id);
            if let (Some(Ok(a)), Some(Ok(b))) = (ids.next(), ids.next()) {
                dismissed.insert((a.min(b), a.max(b)));
            }
        }
        let query = DuplicateQuery {
            types: types.to_vec(),
            limit,
            dismissed,
        };
        self.read(|g| duplicates(g, &query))
    }

    /// Remembers that `a` and `b` (`C:…` ids of two concepts) are not the
    /// same: the pair is no candidate from now on.
    pub fn dismiss_duplicate(&self, a: &str, b: &str) -> Result<()> {
        let (x, y) = (concept_id(a)?, concept_id(b)?);
        for (id, c) in [(a, x), (b, y)] {
            if !self.read(|g| g.exists(kip_store::ElementId::Concept(c)))? {
                return Err(kip_lang::KipError::new(
                    kip_lang::ErrorCode::NotFound,
                    format!("{id} is not in the nexus"),
                )
                .with_hint("Dismiss a pair that `kip duplicates` lists."));
            }
        }
        let (lo, hi) = (x.min(y), x.max(y));
        let key = format!(
            "{DISMISSED}{}/{}",
            kip_store::ElementId::Concept(lo),
            kip_store::ElementId::Concept(hi)
        );
        self.set_state(&key, &serde_json::json!({"at": crate::clock::now()}))
    }
}

#[cfg(test)]
mod tests {
    use super::normalise;

    #[test]
    fn names_are_compared_without_case_width_spaces_or_punctuation() {
        assert_eq!(normalise("IBUPROFEN "), "ibuprofen");
        assert_eq!(normalise("Ｉｂｕｐｒｏｆｅｎ"), "ibuprofen");
        assert_eq!(normalise("Dark-mode"), normalise("dark mode"));
        assert_eq!(normalise("降压药 "), "降压药");
    }
}

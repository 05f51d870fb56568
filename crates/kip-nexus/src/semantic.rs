//! SEARCH by meaning: the process's embedding model, the grounding text of
//! a concept, keeping the store's vectors current, and the semantic and
//! hybrid rankings.
//!
//! Only concepts are embedded (propositions are searched by keyword in
//! every mode, with a warning when meaning was asked for). A concept's
//! grounding text is its name, `attributes.aliases`, `attributes.description`,
//! then its other top-level string attributes in key order (an Event's
//! `content_summary`, a Preference's `content`…), cut at
//! [`GROUNDING_CHARS`] characters — the same fields the keyword index holds.
//!
//! Vectors are caught up after commit, never in the writer's transaction:
//! writes mark concepts in the store's backlog ([`kip_store`]'s
//! `vectors.rs`), and [`Nexus::catch_up_vectors`] embeds a slice of it
//! outside any transaction and settles it. Hosts run it in the background;
//! a SEARCH runs it first for up to [`SEARCH_CATCH_UP`] concepts.
//!
//! A search by meaning does not score every vector: the store's binary
//! codes (one sign bit per dimension, around the model's prior centres,
//! which catch-up records) pick [`candidates`] by Hamming distance, and
//! only those are scored exactly; a type filter that uses them all up
//! falls back to the exact scan.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use kip_embed::{Embedder, TextKind};
use kip_store::{ConceptId, ConceptRecord, ElementId};
use serde_json::Value as Json;

use crate::embedding::Model;
use crate::graph::{Graph, OrInternal as _, Result};
use crate::nexus::Nexus;
use kip_lang::{ErrorCode, KipError};

/// The longest grounding text embedded, in characters.
pub const GROUNDING_CHARS: usize = 1_000;
/// How many waiting concepts a SEARCH embeds before it answers; beyond
/// that it answers from the vectors there are and says how many wait.
pub const SEARCH_CATCH_UP: usize = 256;
/// Concepts embedded per batch (one read, one embedding call, one write).
const BATCH: usize = 32;
/// After centring (below), cosines of unrelated texts sit around 0 and the
/// best related memory of a query between 0.2 and 0.6 (median 0.42 on
/// BENCHMARKS.md's bilingual set): `_score` maps [`COSINE_FLOOR`],
/// [`COSINE_CEILING`] linearly onto [0, 1], so `THRESHOLD` means about the
/// same in every mode.
const COSINE_FLOOR: f32 = 0.15;
const COSINE_CEILING: f32 = 0.60;
/// A language group's centre is its vectors' mean pulled toward the mean
/// of all vectors as if by this many of them, so a group of a few texts is
/// not centred on itself.
const CENTRE_PRIOR: f64 = 16.0;
/// The prefilter's candidates per hit asked, and at least (see
/// [`candidates`]).
const CANDIDATES_PER_HIT: usize = 40;
const MIN_CANDIDATES: usize = 1_000;
/// Reciprocal-rank fusion's constant (the usual 60).
const RRF_K: f64 = 60.0;

/// The text a concept is embedded from (see the module documentation).
pub fn grounding_text(rec: &ConceptRecord) -> String {
    let mut parts = vec![rec.name.clone()];
    let mut push = |v: &Json| match v {
        Json::String(s) if !s.trim().is_empty() => parts.push(s.clone()),
        Json::Array(items) => parts.extend(
            items
                .iter()
                .filter_map(Json::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(str::to_owned),
        ),
        _ => {}
    };
    for key in ["aliases", "description"] {
        if let Some(v) = rec.attributes.get(key) {
            push(v);
        }
    }
    let mut rest: Vec<(&String, &Json)> = (rec.attributes.iter())
        .filter(|(k, _)| !matches!(k.as_str(), "aliases" | "description"))
        .collect();
    rest.sort_by(|a, b| a.0.cmp(b.0));
    for (_, v) in rest {
        if let Json::String(_) = v {
            push(v);
        }
    }
    let text = parts.join(". ");
    match text.char_indices().nth(GROUNDING_CHARS) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text,
    }
}

impl Nexus {
    /// Uses `model` (or none: keyword search only, as without a model).
    /// When the store's vectors come from another model (or none yet),
    /// they are dropped and every concept is queued for embedding.
    pub fn set_embedder(&mut self, model: Option<Arc<Model>>) -> Result<()> {
        if let Some(m) = &model {
            let key = m.key();
            let recorded = self.store.read(|txn| self.store.vector_model(txn)).kip()?;
            if recorded.as_deref() != Some(key.as_str()) {
                // Checked again in the write: another process opening the
                // nexus at the same time may have recorded the model first,
                // and its vectors must not be thrown away.
                self.store
                    .write(|txn| {
                        if self.store.vector_model(txn)?.as_deref() == Some(key.as_str()) {
                            return Ok(0);
                        }
                        self.store.reset_vectors(txn, &key)
                    })
                    .kip()?;
            }
        }
        self.semantic.model = model;
        Ok(())
    }

    /// Whether this nexus searches by meaning.
    pub fn searches_by_meaning(&self) -> bool {
        self.semantic.model.is_some()
    }

    /// How many concepts wait for a vector.
    pub fn vector_backlog(&self) -> Result<u64> {
        self.store
            .read(|txn| self.store.vector_backlog_len(txn))
            .kip()
    }

    /// Embeds up to `max` waiting concepts (in batches, each read, embedded
    /// outside any transaction, then settled in a short write that a newer
    /// write to the same concept wins) and returns how many it settled.
    /// Without an embedder it does nothing.
    pub fn catch_up_vectors(&self, max: usize) -> Result<usize> {
        let Some(model) = &self.semantic.model else {
            return Ok(0);
        };
        let embedder = model
            .get()
            .map_err(|e| kip_lang::KipError::new(kip_lang::ErrorCode::InternalError, e))?;
        let _one = self
            .semantic
            .catching_up
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.record_code_centres(model)?;
        let mut done = 0;
        while done < max {
            let take = BATCH.min(max - done);
            let work = self
                .store
                .read(|txn| {
                    let mut work = Vec::new();
                    for (id, seq) in self.store.vector_backlog(txn, take)? {
                        let text = self.store.get_concept(txn, id)?.map(|r| grounding_text(&r));
                        work.push((id, seq, text));
                    }
                    Ok::<_, kip_store::StoreError>(work)
                })
                .kip()?;
            if work.is_empty() {
                break;
            }
            let texts: Vec<&str> = work.iter().filter_map(|w| w.2.as_deref()).collect();
            let vectors = embedder.embed(&texts, TextKind::Passage);
            // The write may run again (the map grew): it reads `vectors`
            // by position and consumes nothing.
            self.store
                .write(|txn| {
                    let mut next = vectors.iter();
                    for (id, seq, text) in &work {
                        let v = if text.is_some() { next.next() } else { None };
                        let group = text.as_deref().map_or(0, language_group);
                        let v = v.map_or(&[][..], Vec::as_slice);
                        self.store.settle_vector(txn, *id, *seq, group, v)?;
                    }
                    Ok::<_, kip_store::StoreError>(())
                })
                .kip()?;
            done += work.len();
        }
        Ok(done)
    }
}

impl Nexus {
    /// Records the model's prior centres as the store's code centres (the
    /// vectors' binary codes are their signs around them) when none are
    /// recorded: after a model change (which drops them) or the format-7
    /// upgrade (codes around zero), once; computing them recomputes every
    /// code. Recorded centres are kept: they belong to this model (a
    /// change of model resets them) and the codes are exact around them.
    fn record_code_centres(&self, model: &Model) -> Result<()> {
        let recorded = (self.store)
            .read(|txn| self.store.code_centres(txn))
            .kip()?;
        if !recorded.is_empty() {
            return Ok(());
        }
        let priors = model
            .priors()
            .map_err(|e| KipError::new(ErrorCode::InternalError, e))?;
        (self.store)
            .write(|txn| self.store.set_code_centres(txn, priors))
            .kip()?;
        Ok(())
    }
}

/// What PRIMER's `capabilities.embedding` says: the model, what it
/// embeds, how many vectors there are and how many concepts wait for one
/// (without a model: why not).
pub(crate) fn status(g: &Graph<'_>) -> Result<Json> {
    let e = match g.embedder.as_ref().map(|m| m.get()) {
        None => {
            let why = "no embedding model installed (run scripts/setup-model.sh) or embeddings switched off";
            return Ok(serde_json::json!({"unavailable": why}));
        }
        Some(Err(why)) => return Ok(serde_json::json!({"unavailable": why})),
        Some(Ok(e)) => e,
    };
    let i = e.info();
    Ok(serde_json::json!({
        "model": i.name,
        "version": i.version,
        "dimension": i.dimension,
        "targets": ["concepts"],
        "vectors": g.store.vector_count(g.txn).kip()?,
        "waiting": g.store.vector_backlog_len(g.txn).kip()?,
    }))
}

/// Whether SEARCH by meaning is served: a model is installed and loads.
pub(crate) fn serves_meaning(g: &Graph<'_>) -> bool {
    g.embedder.as_ref().is_some_and(|m| m.get().is_ok())
}

/// The language group of a text: 1 when at least a third of its letters
/// are CJK, else 0. e5's vectors of one language lean together (a Chinese
/// query finds any Chinese text closer than the English memory it means),
/// so each group is centred on its own mean before cosines are taken: on
/// the bilingual set this lifts Chinese → English recall@10 from 0.17 to
/// 1.0 without hurting the other directions (BENCHMARKS.md).
pub(crate) fn language_group(text: &str) -> u8 {
    let letters = text.chars().filter(|c| c.is_alphanumeric()).count();
    let cjk = text.chars().filter(|&c| crate::tokenize::is_cjk(c)).count();
    u8::from(letters > 0 && cjk * 3 >= letters)
}

/// The centre of every language group: the mean of its stored vectors,
/// pulled toward the group's prior centre (its reference sentences' mean)
/// as if by [`CENTRE_PRIOR`] vectors.
fn centres(g: &Graph<'_>, model: &Model) -> Result<Vec<(u8, Vec<f32>)>> {
    let stored = g.store.vector_centroids(g.txn).kip()?;
    let priors = model
        .priors()
        .map_err(|e| KipError::new(ErrorCode::InternalError, e))?;
    let mut out = Vec::new();
    for (group, prior) in priors {
        let (n, mean) = match stored.iter().find(|(sg, _, _)| sg == group) {
            Some((_, n, mean)) if mean.len() == prior.len() => (*n as f64, mean.as_slice()),
            _ => (0.0, prior.as_slice()),
        };
        let centre = mean
            .iter()
            .zip(prior)
            .map(|(m, p)| {
                ((n * f64::from(*m) + CENTRE_PRIOR * f64::from(*p)) / (n + CENTRE_PRIOR)) as f32
            })
            .collect();
        out.push((*group, centre));
    }
    Ok(out)
}

/// Maps a cosine onto `_score`'s [0, 1].
pub(crate) fn cosine_score(cos: f32) -> f64 {
    f64::from(((cos - COSINE_FLOOR) / (COSINE_CEILING - COSINE_FLOOR)).clamp(0.0, 1.0))
}

/// The concepts closest in meaning to `term` (of type `type_id` if given),
/// best first, at most `limit`, each with its `_score`; hits scoring 0
/// (below [`COSINE_FLOOR`]) are left out: an honest miss beats a weak match.
pub(crate) fn semantic_hits(
    g: &Graph<'_>,
    model: &Model,
    embedder: &Embedder,
    term: &str,
    type_id: Option<u32>,
    limit: usize,
) -> Result<Vec<(ConceptId, f64)>> {
    let mut query = embedder.embed_one(term, TextKind::Query);
    let centres = centres(g, model)?;
    let group = language_group(term);
    let centre = (centres.iter()).find(|(g, _)| *g == group).map(|(_, c)| c);
    if let Some(centre) = centre.filter(|c| c.len() == query.len()) {
        query.iter_mut().zip(centre).for_each(|(q, c)| *q -= c);
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
        query.iter_mut().for_each(|x| *x /= norm);
    }
    let candidates = candidates(limit);
    let near = (g.store)
        .nearest_vectors_centred(g.txn, &query, &centres, candidates)
        .kip()?;
    let (out, filtered) = best_of(g, near.hits, type_id, limit)?;
    if out.len() < limit && filtered && near.cut {
        // The type filter (or concepts deleted since their vector was
        // read) used up the candidates: only the exact scan can tell
        // whether more of the type lie beyond them.
        let mut all = Vec::new();
        g.store
            .scan_vectors_centred(g.txn, &query, &centres, |id, cos| all.push((id, cos)))
            .kip()?;
        return Ok(best_of(g, all, type_id, limit)?.0);
    }
    Ok(out)
}

/// How many vectors the prefilter passes on to exact scoring for a top
/// `limit`: at 200,000 random vectors 1,000 candidates keep 80% of the
/// exact top 10 and 4,000 94%; real memories, whose related texts stand
/// far apart from the rest, lose none (BENCHMARKS.md).
/// `KIP_VECTOR_CANDIDATES` sets another count (the recall benchmark uses
/// it to exercise the prefilter on a small set).
fn candidates(limit: usize) -> usize {
    static SET: OnceLock<Option<usize>> = OnceLock::new();
    let set = SET.get_or_init(|| {
        std::env::var("KIP_VECTOR_CANDIDATES")
            .ok()
            .and_then(|v| v.parse().ok())
    });
    set.unwrap_or_else(|| limit.saturating_mul(CANDIDATES_PER_HIT).max(MIN_CANDIDATES))
}

/// The best `limit` of `scored` above [`COSINE_FLOOR`] whose concept
/// exists in this snapshot (and has type `type_id`, if given), best first
/// with their `_score`; and whether any was left out for its type or for
/// not existing.
fn best_of(
    g: &Graph<'_>,
    mut scored: Vec<(ConceptId, f32)>,
    type_id: Option<u32>,
    limit: usize,
) -> Result<(Vec<(ConceptId, f64)>, bool)> {
    scored.retain(|h| h.1 > COSINE_FLOOR);
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut out = Vec::new();
    let mut filtered = false;
    for (id, cos) in scored {
        if out.len() >= limit {
            break;
        }
        // The record is read in this snapshot: a concept deleted since its
        // vector was written is not found, and is never returned.
        let Some(rec) = g.concept(id)? else {
            filtered = true;
            continue;
        };
        if type_id.is_some_and(|t| t != rec.type_id) {
            filtered = true;
            continue;
        }
        out.push((id, cosine_score(cos)));
    }
    Ok((out, filtered))
}

/// How hybrid SEARCH fuses its two rankings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fusion {
    /// Calibrated score fusion (the default): `_score` = 1 − (1 − keyword)
    /// × (1 − meaning), a probabilistic OR of the two normalised scores — a
    /// hit strong in either is strong, agreement adds, and `THRESHOLD`
    /// means what it means in the other modes.
    Scores,
    /// Reciprocal-rank fusion (k = 60); `_score` is the fused value as a
    /// fraction of the best possible (first in both lists).
    Ranks,
}

impl Fusion {
    /// The default, or `KIP_SEARCH_FUSION=rrf` (BENCHMARKS.md compares both).
    pub(crate) fn configured() -> Fusion {
        static F: OnceLock<Fusion> = OnceLock::new();
        *F.get_or_init(|| match std::env::var("KIP_SEARCH_FUSION").as_deref() {
            Ok("rrf") => Fusion::Ranks,
            _ => Fusion::Scores,
        })
    }
}

/// Fuses a keyword and a semantic ranking (each best first, scores in
/// [0, 1]), with an exact-name boost: a concept whose name or alias equals
/// the query (ignoring case) comes first with `_score` 1.
pub(crate) fn fuse(
    how: Fusion,
    keyword: &[(ConceptId, f64)],
    semantic: &[(ConceptId, f64)],
    exact: &[ConceptId],
) -> Vec<(ConceptId, f64)> {
    let mut fused: HashMap<ConceptId, f64> = HashMap::new();
    for list in [keyword, semantic] {
        for (rank, (id, score)) in list.iter().enumerate() {
            let f = fused.entry(*id).or_default();
            *f = match how {
                Fusion::Scores => 1.0 - (1.0 - *f) * (1.0 - score.clamp(0.0, 1.0)),
                Fusion::Ranks => *f + 1.0 / (RRF_K + rank as f64 + 1.0),
            };
        }
    }
    let best = match how {
        Fusion::Scores => 1.0,
        Fusion::Ranks => 2.0 / (RRF_K + 1.0),
    };
    let mut out: Vec<(ConceptId, f64)> = fused
        .into_iter()
        .map(|(id, f)| {
            let score = if exact.contains(&id) {
                1.0
            } else {
                (f / best).min(0.999)
            };
            (id, score)
        })
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// Hits, best first, with their `_score`s, and a warning for the response.
type Answer = (Vec<(ElementId, f64)>, Option<String>);

/// A hit with the parts its `_score` was made of: the keyword (BM25) and
/// meaning (cosine) scores as the two rankings gave them, whether the
/// exact-name boost set it, and the mode that served it. The recall
/// simulator shows them; SEARCH only keeps `score`.
#[derive(Clone, Debug)]
pub(crate) struct Scored {
    pub id: ElementId,
    pub score: f64,
    pub keyword: Option<f64>,
    pub semantic: Option<f64>,
    pub exact: bool,
}

/// What [`search_scored`] served: the hits, best first, the warning, and
/// the mode that ranked them (`keyword`, `semantic` or `hybrid`).
pub(crate) struct Served {
    pub hits: Vec<Scored>,
    pub warning: Option<String>,
    pub mode: &'static str,
}

/// SEARCH in the mode asked (`None`: hybrid where the nexus searches by
/// meaning, else keyword): the hits, best first, and a warning when the
/// mode could not be served as asked or some concepts still wait for their
/// vector.
pub(crate) fn search(
    g: &Graph<'_>,
    q: &crate::search::Query<'_>,
    mode: Option<&str>,
) -> Result<Answer> {
    let served = search_scored(g, q, mode)?;
    let hits = served.hits.into_iter().map(|h| (h.id, h.score)).collect();
    Ok((hits, served.warning))
}

/// Keyword SEARCH, each hit's score its keyword part.
fn by_keyword(
    g: &Graph<'_>,
    q: &crate::search::Query<'_>,
    warning: Option<String>,
) -> Result<Served> {
    let hits = (crate::search::search(g, q)?.into_iter())
        .map(|(id, score)| Scored {
            id,
            score,
            keyword: Some(score),
            semantic: None,
            exact: false,
        })
        .collect();
    Ok(Served {
        hits,
        warning,
        mode: "keyword",
    })
}

/// [`search`] with each hit's score parts (see [`Scored`]): the one
/// ranking SEARCH runs, so the parts are those of the `_score` an agent
/// gets.
pub(crate) fn search_scored(
    g: &Graph<'_>,
    q: &crate::search::Query<'_>,
    mode: Option<&str>,
) -> Result<Served> {
    let loaded = g.embedder.as_deref().map(|m| m.get().map(|e| (m, e)));
    let (model, embedder) = match (loaded, mode) {
        (_, Some("keyword")) | (None, None) => return by_keyword(g, q, None),
        (Some(Err(why)), _) => {
            let warning = format!(
                "MODE {:?} was served as \"keyword\": the embedding model does not load: {why}",
                mode.unwrap_or("hybrid")
            );
            return by_keyword(g, q, Some(warning));
        }
        (None, Some(mode)) => {
            let warning = format!(
                "MODE {mode:?} was served as \"keyword\": this nexus has no embedding source, so it cannot search by meaning (DESCRIBE PRIMER lists the search_modes it serves)"
            );
            return by_keyword(g, q, Some(warning));
        }
        (Some(_), _) if q.propositions => {
            let warning = mode.map(|mode| {
                format!("MODE {mode:?} was served as \"keyword\": propositions are searched by keyword only (only concepts are embedded)")
            });
            return by_keyword(g, q, warning);
        }
        (Some(Ok(pair)), _) => pair,
    };
    let semantic_only = mode == Some("semantic");
    let served = if semantic_only { "semantic" } else { "hybrid" };
    if q.limit == 0 {
        return Ok(Served {
            hits: Vec::new(),
            warning: None,
            mode: served,
        });
    }
    let type_id = match q.with_type {
        Some(t) => Some(g.type_id(t)?.unwrap_or(u32::MAX)),
        None => None,
    };
    // Each ranking offers more candidates than asked, so fusion can promote
    // a hit that only one of them ranks high.
    let pool = q.limit.saturating_mul(3).max(30);
    let limit = if semantic_only { q.limit } else { pool };
    let meaning = semantic_hits(g, model, &embedder, q.term, type_id, limit)?;
    let hits = if semantic_only {
        (meaning.iter())
            .map(|&(c, s)| scored(c, s, None, Some(s), false))
            .collect()
    } else {
        fused_hits(g, q, pool, &meaning)?
    };
    let waiting = g.store.vector_backlog_len(g.txn).kip()?;
    let warning = (waiting > 0).then(|| {
        format!("{waiting} concept(s) written recently are not searchable by meaning yet (their vectors are being computed); keyword matches include them")
    });
    Ok(Served {
        hits,
        warning,
        mode: served,
    })
}

fn scored(
    c: ConceptId,
    score: f64,
    keyword: Option<f64>,
    semantic: Option<f64>,
    exact: bool,
) -> Scored {
    Scored {
        id: ElementId::Concept(c),
        score,
        keyword,
        semantic,
        exact,
    }
}

/// Hybrid: the keyword ranking of `pool` concepts fused with `meaning`,
/// cut at the query's limit, each hit with both parts.
fn fused_hits(
    g: &Graph<'_>,
    q: &crate::search::Query<'_>,
    pool: usize,
    meaning: &[(ConceptId, f64)],
) -> Result<Vec<Scored>> {
    let keyword_query = crate::search::Query {
        propositions: false,
        term: q.term,
        with_type: q.with_type,
        limit: pool,
    };
    let keyword: Vec<(ConceptId, f64)> = crate::search::search(g, &keyword_query)?
        .into_iter()
        .filter_map(|(e, s)| match e {
            ElementId::Concept(c) => Some((c, s)),
            ElementId::Proposition(_) => None,
        })
        .collect();
    let exact = exact_names(g, q.term, keyword.iter().chain(meaning).map(|h| h.0))?;
    let mut fused = fuse(Fusion::configured(), &keyword, meaning, &exact);
    fused.truncate(q.limit);
    let part = |list: &[(ConceptId, f64)], c| list.iter().find(|h| h.0 == c).map(|h| h.1);
    Ok(fused
        .into_iter()
        .map(|(c, s)| {
            scored(
                c,
                s,
                part(&keyword, c),
                part(meaning, c),
                exact.contains(&c),
            )
        })
        .collect())
}

/// The candidates whose name or one of whose aliases equals `term`,
/// ignoring case and surrounding space.
fn exact_names(
    g: &Graph<'_>,
    term: &str,
    candidates: impl Iterator<Item = ConceptId>,
) -> Result<Vec<ConceptId>> {
    let wanted = term.trim().to_lowercase();
    let mut out = Vec::new();
    for id in candidates {
        let Some(rec) = g.concept(id)? else { continue };
        let aliases = rec.attributes.get("aliases");
        let alias_hit = match aliases {
            Some(Json::String(a)) => a.trim().to_lowercase() == wanted,
            Some(Json::Array(items)) => items
                .iter()
                .filter_map(Json::as_str)
                .any(|a| a.trim().to_lowercase() == wanted),
            _ => false,
        };
        if rec.name.trim().to_lowercase() == wanted || alias_hit {
            out.push(id);
        }
    }
    Ok(out)
}

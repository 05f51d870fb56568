//! "Related by meaning" (issue 30 §5): the concepts whose meaning lies
//! nearest a given concept's, for the inspector. It is SEARCH by meaning of
//! the concept's own grounding text (`semantic::grounding_text`: name,
//! aliases, description and the salient text attributes), the concept
//! itself left out; vectors waiting for the embedder are caught up first,
//! as a SEARCH does.

use kip_lang::{ErrorCode, KipError};
use kip_store::ElementId;
use serde::Serialize;

use crate::graph::Result;
use crate::nexus::Nexus;

/// How many related concepts by default, and at most.
pub const DEFAULT_RELATED: usize = 8;
pub const MAX_RELATED: usize = 50;

/// One concept near in meaning.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RelatedConcept {
    pub id: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub name: String,
    /// SEARCH's `_score` by meaning, in [0, 1].
    pub score: f64,
}

/// What [`Nexus::related_by_meaning`] found.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Related {
    /// This nexus searches by meaning (an embedding model is installed);
    /// when not, `related` is empty.
    pub available: bool,
    /// Concepts still waiting for their vector (not found until embedded).
    pub backlog: u64,
    /// Best first.
    pub related: Vec<RelatedConcept>,
}

impl Nexus {
    /// The concepts nearest in meaning to concept `id` (`C:…`), best first,
    /// at most `limit` ([`DEFAULT_RELATED`]; [`MAX_RELATED`] at most). A bad
    /// or unknown id is refused; without an embedding model the answer says
    /// it is not available.
    pub fn related_by_meaning(&self, id: &str, limit: Option<usize>) -> Result<Related> {
        let Ok(ElementId::Concept(concept)) = id.parse::<ElementId>() else {
            return Err(KipError::new(
                ErrorCode::InvalidSyntax,
                format!("{id:?} is not a concept id"),
            )
            .with_hint("Concept ids look like C:12."));
        };
        let limit = limit.unwrap_or(DEFAULT_RELATED).clamp(1, MAX_RELATED);
        let Some(model) = self.semantic.model.clone() else {
            if self.read(|g| g.concept(concept))?.is_none() {
                return Err(not_found(id));
            }
            return Ok(Related::default());
        };
        // A failure here only leaves vectors waiting; the backlog says so.
        let _ = self.catch_up_vectors(crate::semantic::SEARCH_CATCH_UP);
        let embedder = model
            .get()
            .map_err(|e| KipError::new(ErrorCode::InternalError, e))?;
        let backlog = self.vector_backlog()?;
        self.read(|g| {
            let Some(record) = g.concept(concept)? else {
                return Err(not_found(id));
            };
            let text = crate::semantic::grounding_text(&record);
            let hits =
                crate::semantic::semantic_hits(g, &model, &embedder, &text, None, limit + 1)?;
            let mut related = Vec::with_capacity(limit);
            for (c, score) in hits.into_iter().filter(|(c, _)| *c != concept).take(limit) {
                let Some(r) = g.concept(c)? else { continue };
                related.push(RelatedConcept {
                    id: ElementId::Concept(c).to_string(),
                    type_name: g.type_name(r.type_id)?.to_string(),
                    name: r.name.clone(),
                    score,
                });
            }
            Ok(Related {
                available: true,
                backlog,
                related,
            })
        })
    }
}

fn not_found(id: &str) -> KipError {
    KipError::new(ErrorCode::NotFound, format!("{id} is not in the nexus"))
        .with_hint("Name a concept that exists (ids look like C:12).")
}

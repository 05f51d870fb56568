//! Reading the attribute index for a type scan (the lookup is chosen when
//! the block compiles, in `compile.rs`): a `?x {type: "T"}` clause
//! whose block FILTERs `?x.attributes.k` or `?x.metadata.k` with `==`, `<`,
//! `<=`, `>`, `>=`, `IN` or `STARTS_WITH` against literals, in a conjunct
//! of the FILTER's top-level `&&`, reads the matching instances from the
//! index instead of the whole type.
//!
//! The FILTER itself stays where it was and still runs on every row: the
//! index only narrows the candidates to a superset of the rows the FILTER
//! keeps (a comparison with a literal holds only for a value of the
//! literal's JSON type, and the index keeps types apart), so the answer is
//! the scan's answer by construction. Candidates are visited in id order,
//! the scan's order, so LIMIT and cursors cut the same pages.

use crate::graph::{AttrMatches, AttrQuery, Graph, Result};

use kip_store::ConceptId;

use super::compile::{Atom, CompiledGroup, ConceptTest, IndexUse};
use super::exec::{Executor, ROW_BUDGET, rows_exceeded};
use super::row::{Row, Val};

/// Index entries read to estimate a lookup; a lookup with more matches is
/// treated as unselective.
pub(super) const PROBE: usize = 4096;

impl IndexUse {
    /// The first [`PROBE`] matches (all of them when `complete`).
    pub(super) fn probe(&self, graph: &Graph<'_>, type_id: u32) -> Result<AttrMatches> {
        if let Some(p) = &*self.probe.borrow() {
            return Ok(p.clone());
        }
        let p = graph.attr_lookup(type_id, self.kind, &self.key, &self.query, PROBE)?;
        *self.probe.borrow_mut() = Some(p.clone());
        Ok(p)
    }

    /// Whether the lookup is one value (`==`): its index entries are then
    /// in id order, the scan's order, and can be read as far as needed.
    fn one_value(&self) -> bool {
        matches!(&self.query, AttrQuery::Equals(values) if values.len() == 1)
    }

    /// The matches of a one-value lookup in id order, read from the index
    /// as they are needed (in batches growing ×4 from 64), so that a scan
    /// under LIMIT stops after the rows it needs however many match.
    fn streamed<'g>(&'g self, graph: &'g Graph<'g>, type_id: u32) -> Streamed<'g> {
        Streamed {
            ix: self,
            graph,
            type_id,
            batch: Vec::new(),
            pos: 0,
            want: 16,
            complete: false,
        }
    }

    /// Every match, in id order.
    pub(super) fn all(&self, graph: &Graph<'_>, type_id: u32) -> Result<Vec<ConceptId>> {
        let probe = self.probe(graph, type_id)?;
        let mut ids = if probe.complete {
            probe.ids
        } else {
            graph
                .attr_lookup(type_id, self.kind, &self.key, &self.query, usize::MAX)?
                .ids
        };
        ids.sort_unstable();
        ids.dedup();
        Ok(ids)
    }
}

/// A one-value lookup's matches, read as needed (see [`IndexUse::streamed`]).
struct Streamed<'g> {
    ix: &'g IndexUse,
    graph: &'g Graph<'g>,
    type_id: u32,
    /// The first `batch.len()` matches, of which `pos` were handed out.
    batch: Vec<ConceptId>,
    pos: usize,
    want: usize,
    complete: bool,
}

impl Iterator for Streamed<'_> {
    type Item = Result<ConceptId>;

    fn next(&mut self) -> Option<Result<ConceptId>> {
        if self.pos == self.batch.len() {
            if self.complete {
                return None;
            }
            // The same snapshot gives the same entries in the same order:
            // a larger read starts with the ids handed out already.
            self.want = self.want.saturating_mul(4);
            let ix = self.ix;
            match self
                .graph
                .attr_lookup(self.type_id, ix.kind, &ix.key, &ix.query, self.want)
            {
                Ok(m) => {
                    self.complete = m.complete;
                    self.batch = m.ids;
                }
                Err(e) => {
                    self.complete = true;
                    self.batch.clear();
                    self.pos = 0;
                    return Some(Err(e));
                }
            }
            if self.pos >= self.batch.len() {
                return None;
            }
        }
        self.pos += 1;
        Some(Ok(self.batch[self.pos - 1]))
    }
}

impl Executor<'_, '_> {
    /// A block that is one type clause and FILTERs over its variable alone,
    /// as one pass: visits candidates in id order, runs the FILTERs on each
    /// and, with a `cap` (LIMIT without ORDER BY), stops once it has that
    /// many rows. The candidates come from the attribute index when its
    /// matches are fewer than what the scan is expected to read before it
    /// has `cap` rows, else from the type's instances, read lazily; no row
    /// is held that the FILTERs drop. `None` when the block has another
    /// shape (the general join runs instead).
    pub(super) fn capped_scan(
        &mut self,
        group: &CompiledGroup,
        rows: &[Row],
        pending: &mut Vec<usize>,
        cap: Option<usize>,
    ) -> Result<Option<Vec<Row>>> {
        let ([(atom, _)], [input]) = (group.atoms.as_slice(), rows) else {
            return Ok(None);
        };
        let Atom::Concept {
            var,
            test: ConceptTest::Type(t),
            index,
            ..
        } = atom
        else {
            return Ok(None);
        };
        if !group.nots.is_empty()
            || !group.optionals.is_empty()
            || !group.unions.is_empty()
            || input[*var] != Val::Null
            || pending
                .iter()
                .any(|&f| group.filters[f].1.iter().any(|s| s != var))
        {
            return Ok(None);
        }
        let graph = self.graph;
        // One value under LIMIT: its entries are in id order, read as far
        // as the rows need, however many match.
        let streamed = match index {
            Some(ix) if self.use_index && cap.is_some() && ix.one_value() => Some(ix),
            _ => None,
        };
        let from_index = match index {
            _ if streamed.is_some() => false,
            Some(_) if !self.use_index => false,
            Some(ix) if cap.is_none() => ix.probe(graph, *t)?.complete,
            Some(ix) => {
                let probe = ix.probe(graph, *t)?;
                let n = graph.count_type(*t)? as f64;
                let matches = probe.ids.len().max(1) as f64;
                // The scan reads about cap / selectivity instances.
                probe.complete && matches <= cap.unwrap_or(usize::MAX) as f64 * n / matches
            }
            None => false,
        };
        let filters: Vec<usize> = std::mem::take(pending);
        // No index lookup pays: FILTERs over one key read its column.
        if streamed.is_none()
            && !from_index
            && self.use_index
            && let Some(out) = self.column_scan(group, &filters, input, (*var, *t), cap)?
        {
            return Ok(Some(out));
        }
        let candidates: Box<dyn Iterator<Item = Result<ConceptId>> + '_> = match (streamed, index) {
            (Some(ix), _) => Box::new(ix.streamed(graph, *t)),
            (None, Some(ix)) if from_index => Box::new(ix.all(graph, *t)?.into_iter().map(Ok)),
            _ => Box::new(graph.concepts_of_type_iter(*t)?),
        };
        let mut out = Vec::new();
        for (visited, c) in candidates.enumerate() {
            if cap.is_some_and(|cap| out.len() >= cap) {
                break;
            }
            // The rows a join would hold before its FILTERs, as it counts them.
            if cap.is_none() && visited >= ROW_BUDGET {
                return Err(rows_exceeded());
            }
            self.charge(1)?;
            let mut row = input.clone();
            row[*var] = Val::Concept(c?);
            let mut keep = true;
            for &f in &filters {
                self.charge(1)?;
                if !self.holds(&group.filters[f].0, &row)? {
                    keep = false;
                    break;
                }
            }
            if keep {
                out.push(row);
            }
        }
        Ok(Some(out))
    }
}

//! Paths with a hop range, `(?a, "p"{m,n}, ?b)`: breadth-first walks with
//! exact level sets up to the minimum length (a node seen early may be
//! reached again at the right length) and a visited set after it, so an
//! unbounded `{m,}` ends on cycles. Every expanded edge is charged to the
//! executor's work meter.

use std::collections::HashSet;

use kip_store::ElementId;

use crate::graph::Result;

use super::compile::Slot;
use super::exec::{Executor, ROW_BUDGET, rows_exceeded};
use super::row::{Row, Val, set};

impl Executor<'_, '_> {
    /// The elements one hop from `from` along `preds` (forward or backward).
    fn neighbours(
        &mut self,
        from: ElementId,
        preds: &[u32],
        forward: bool,
    ) -> Result<Vec<ElementId>> {
        let mut out = Vec::new();
        for &p in preds {
            let links = if forward {
                self.graph.propositions(Some(from), Some(p), None)?
            } else {
                self.graph.propositions(None, Some(p), Some(from))?
            };
            self.charge(links.len() as u64 + 1)?;
            out.extend(
                links
                    .into_iter()
                    .map(|(_, s, _, o)| if forward { o } else { s }),
            );
        }
        Ok(out)
    }

    /// Every element reachable from `start` by a walk of `min..=max` hops.
    /// Exact level sets up to `min` (a node seen early may be reached again
    /// at the right length), then breadth-first with a visited set, which
    /// ends on cycles when `max` is unbounded.
    fn reach(
        &mut self,
        start: ElementId,
        preds: &[u32],
        min: u32,
        max: Option<u32>,
        forward: bool,
    ) -> Result<Vec<ElementId>> {
        let mut result: Vec<ElementId> = Vec::new();
        let mut seen_result: HashSet<ElementId> = HashSet::new();
        let mut level: Vec<ElementId> = vec![start];
        let mut depth = 0u32;
        if min == 0 {
            seen_result.insert(start);
            result.push(start);
        }
        // Exact levels until the minimum length.
        while depth < min && !level.is_empty() {
            let mut next: Vec<ElementId> = Vec::new();
            let mut seen_level: HashSet<ElementId> = HashSet::new();
            for &n in &level {
                self.walk.nodes_visited += 1;
                for m in self.neighbours(n, preds, forward)? {
                    if seen_level.insert(m) {
                        next.push(m);
                    }
                }
            }
            level = next;
            depth += 1;
            if !level.is_empty() {
                self.walk.depth_reached = self.walk.depth_reached.max(depth);
            }
        }
        if depth < min {
            return Ok(result);
        }
        for &n in &level {
            if seen_result.insert(n) && depth >= min {
                result.push(n);
            }
        }
        let mut visited: HashSet<ElementId> = level.iter().copied().collect();
        while max.is_none_or(|m| depth < m) && !level.is_empty() {
            let mut next = Vec::new();
            for &n in &level {
                self.walk.nodes_visited += 1;
                for m in self.neighbours(n, preds, forward)? {
                    if visited.insert(m) {
                        next.push(m);
                        if seen_result.insert(m) {
                            result.push(m);
                        }
                    }
                }
            }
            level = next;
            depth += 1;
            if !level.is_empty() {
                self.walk.depth_reached = self.walk.depth_reached.max(depth);
            }
        }
        Ok(result)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn apply_path(
        &mut self,
        row: &Row,
        s: Slot,
        preds: &[u32],
        min: u32,
        max: Option<u32>,
        o: Slot,
        out: &mut Vec<Row>,
    ) -> Result<()> {
        let (subject, object) = (row[s].element(), row[o].element());
        if row[s] != Val::Null && subject.is_none() || row[o] != Val::Null && object.is_none() {
            return Ok(());
        }
        let emit = |start: ElementId, end: ElementId, out: &mut Vec<Row>| {
            let mut r = row.clone();
            if set(&mut r, s, Val::of(start)) && set(&mut r, o, Val::of(end)) {
                out.push(r);
            }
        };
        match (subject, object) {
            (Some(a), _) => {
                for end in self.reach(a, preds, min, max, true)? {
                    emit(a, end, out);
                }
            }
            (None, Some(b)) => {
                for start in self.reach(b, preds, min, max, false)? {
                    emit(start, b, out);
                }
            }
            (None, None) => {
                // Every element that can start a walk: the subjects of the
                // predicates (and, for zero hops, their objects too).
                let mut starts: Vec<ElementId> = Vec::new();
                let mut seen = HashSet::new();
                for &p in preds {
                    let links = self.graph.propositions(None, Some(p), None)?;
                    self.charge(links.len() as u64 + 1)?;
                    for (_, a, _, b) in links {
                        if seen.insert(a) {
                            starts.push(a);
                        }
                        if min == 0 && seen.insert(b) {
                            starts.push(b);
                        }
                    }
                }
                for a in starts {
                    for end in self.reach(a, preds, min, max, true)? {
                        emit(a, end, out);
                    }
                    if out.len() > ROW_BUDGET {
                        return Err(rows_exceeded());
                    }
                }
            }
        }
        Ok(())
    }
}

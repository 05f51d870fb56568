//! UPDATE (RC9 §4.3): pattern-matched bulk mutation. The targets are the
//! distinct elements bound to the target variable by the WHERE block (read
//! with the executor before anything is written), capped by LIMIT; each is
//! updated exactly once, its new values computed from its own state before
//! the statement. UPDATE never creates, runs in the caller's one
//! transaction, and refuses a target in the protected scope.

use std::collections::HashSet;

use kip_lang::ast::*;
use kip_lang::{ErrorCode, KipError};
use kip_store::{ConceptId, PropositionId};
use serde_json::{Value as Json, json};

use crate::graph::{Graph, OrInternal as _, PROPOSITION_TYPE, Result};
use crate::kql::{self, SweepFrom, SweepHint, SweepStarts, Val, path_value};
use crate::{schema, search, value};

use super::changes::Op;
use super::object::{Object, reserved_key_error};
use super::writer::Writer;

/// What a sweep's cycle leaves for the next one, once its targets are
/// updated: the statement's key, what the scan did and the change log's
/// sequence number when it ran.
type NextCycle = (String, kql::Sweep, u64);

impl Writer<'_, '_> {
    pub fn update(&mut self, u: &Update) -> Result<Json> {
        for object in [&u.attributes, &u.metadata].into_iter().flatten() {
            if let Some((k, _)) = object.members.iter().find(|(k, _)| k.starts_with('_')) {
                return Err(reserved_key_error(k, self.source, object.span));
            }
        }
        let limit = u
            .limit
            .as_ref()
            .and_then(|l| l.lit().copied())
            .map(|l| usize::try_from(l).unwrap_or(usize::MAX));
        let (mut targets, sweep) = self.update_targets(u, limit)?;
        if let Some(limit) = limit {
            targets.truncate(limit);
        }
        // Refuse before writing anything: a statement that matches a
        // protected structure fails whole.
        for t in &targets {
            match *t {
                Val::Pred(_) => {
                    return Err(KipError::new(
                        ErrorCode::InvalidSyntax,
                        format!("?{} binds predicate names, not elements: UPDATE changes concepts and propositions", u.target.name),
                    )
                    .with_hint("Bind the proposition itself, e.g. UPDATE ?link … WHERE { ?link (?s, ?p, ?o) }.")
                    .at(self.source, u.target.span));
                }
                Val::Concept(c) => {
                    let (ty, name) = self.concept_identity(c)?;
                    if schema::protection(&ty, &name) == schema::Protection::Whole {
                        return Err(schema::protected_error(&ty, &name, "modified")
                            .with_hint("Narrow the WHERE pattern so that it leaves the foundation ($ConceptType, $PropositionType, Domain, belongs_to_domain, CoreSchema) alone.")
                            .at(self.source, u.target.span));
                    }
                }
                Val::Prop(_) | Val::Null => {}
            }
        }
        let matched = targets.len();
        let mut updated = 0;
        for &t in &targets {
            let changed = match t {
                Val::Concept(c) => self.update_one_concept(u, c)?,
                Val::Prop(p) => self.update_one_proposition(u, p)?,
                Val::Null | Val::Pred(_) => false,
            };
            if changed {
                updated += 1;
            }
        }
        if let (Some(starts), Some((key, sweep, seq))) = (self.sweep_starts, sweep) {
            let selected = selected_links(&targets);
            let hint = SweepHint {
                from: sweep.next(selected),
                seq,
                updated: updated as u64,
            };
            starts.stage(self.txn.id(), key, hint);
        }
        Ok(json!({"updated": updated, "matched": matched}))
    }

    /// The distinct elements the WHERE block binds to the target, in the
    /// order found. A sweep's link pattern is scanned capped at LIMIT from
    /// where the same statement's previous cycle left off (see
    /// `kql::sweep`); every other block is joined whole. Also answers the
    /// hint for the next cycle, to be staged once the targets are updated.
    fn update_targets(
        &self,
        u: &Update,
        limit: Option<usize>,
    ) -> Result<(Vec<Val>, Option<NextCycle>)> {
        let key = SweepStarts::key(&u.where_);
        let graph = Graph::new(self.store, self.txn);
        let hint = match (self.sweep_starts, limit) {
            (Some(starts), Some(_)) => starts.hint(&key),
            _ => None,
        };
        let from = match hint {
            Some(h) if !h.from.wrap && kql::still_clean(&graph, &h)? => h.from,
            Some(h) => SweepFrom {
                recheck: Vec::new(),
                start: h.from.start,
                wrap: true,
            },
            None => SweepFrom::default(),
        };
        let seq = graph.change_seq()?;
        let (exec, rows, sweep) =
            kql::solve_sweep(&graph, self.source, &u.where_, &u.target.name, from, limit)?;
        let mut seen = HashSet::new();
        let targets = rows
            .iter()
            .map(|r| exec.val(r, &u.target.name))
            .filter(|v| *v != Val::Null && seen.insert(*v))
            .collect();
        let next = (sweep.ran && limit.is_some()).then_some((key, sweep, seq));
        Ok((targets, next))
    }

    fn concept_identity(&self, c: ConceptId) -> Result<(String, String)> {
        self.graph(|g| {
            Ok(match g.concept(c)? {
                Some(r) => (g.type_name(r.type_id)?.to_string(), r.name.clone()),
                None => (String::new(), String::new()),
            })
        })
    }

    /// The record's attributes and metadata with the SETs applied; keys
    /// whose expression yields `null` are skipped.
    fn apply_sets(
        &self,
        u: &Update,
        target: Val,
        attributes: &Object,
        metadata: &Object,
    ) -> Result<(Object, Object)> {
        let mut attrs = attributes.clone();
        let mut meta = metadata.clone();
        for (object, out) in [(&u.attributes, &mut attrs), (&u.metadata, &mut meta)] {
            let Some(object) = object else { continue };
            for (key, v) in &object.members {
                let new = self.eval_update(v, target, (attributes, metadata))?;
                if new.is_null() && matches!(v, UpdateValue::Call(_)) {
                    continue; // RC9: a null expression skips its key for this element
                }
                out.insert(key.clone(), new);
            }
        }
        Ok((attrs, meta))
    }

    /// Evaluates a SET value for one element, whose attributes and metadata
    /// before the statement are `own`. Operands that are not numbers make
    /// ADD, MUL and CLAMP `null`.
    fn eval_update(&self, v: &UpdateValue, target: Val, own: (&Object, &Object)) -> Result<Json> {
        Ok(match v {
            UpdateValue::Value(value, span) => value.to_json().ok_or_else(|| {
                KipError::new(ErrorCode::ReferenceError, "a placeholder was not bound")
                    .at(self.source, *span)
            })?,
            // A path is on the target itself (RC11 §4.3): its attributes and
            // metadata are at hand, the rest is read from the graph.
            UpdateValue::Path(path) => match &path.field {
                Field::Attributes(keys) if !keys.is_empty() => dig(own.0, keys),
                Field::Metadata(keys) if !keys.is_empty() => dig(own.1, keys),
                _ => self.graph(|g| path_value(g, path, target))?,
            },
            UpdateValue::Call(call) => {
                let mut args = Vec::with_capacity(call.args.len());
                for a in &call.args {
                    args.push(self.eval_update(a, target, own)?);
                }
                match (call.func, args.as_slice()) {
                    (UpdateFunc::Coalesce, [x, default]) => {
                        if x.is_null() {
                            default.clone()
                        } else {
                            x.clone()
                        }
                    }
                    (UpdateFunc::Add, [a, b]) if a.is_number() && b.is_number() => {
                        value::add(a, b).unwrap_or(Json::Null)
                    }
                    (UpdateFunc::Mul, [a, b]) if a.is_number() && b.is_number() => {
                        value::mul(a, b).unwrap_or(Json::Null)
                    }
                    (UpdateFunc::Clamp, [x, lo, hi])
                        if x.is_number() && lo.is_number() && hi.is_number() =>
                    {
                        if value::total_cmp(x, lo).is_lt() {
                            lo.clone()
                        } else if value::total_cmp(x, hi).is_gt() {
                            hi.clone()
                        } else {
                            x.clone()
                        }
                    }
                    _ => Json::Null,
                }
            }
        })
    }

    fn update_one_concept(&mut self, u: &Update, c: ConceptId) -> Result<bool> {
        let Some(old) = self.graph(|g| Ok(g.concept(c)?.map(|r| (*r).clone())))? else {
            return Ok(false);
        };
        let (attributes, mut metadata) =
            self.apply_sets(u, Val::Concept(c), &old.attributes, &old.metadata)?;
        if attributes == old.attributes && metadata == old.metadata {
            return Ok(false);
        }
        let ty = self.graph(|g| Ok(g.type_name(old.type_id)?.to_string()))?;
        schema::check_modification(
            &ty,
            &old.name,
            (&old.attributes, &old.metadata),
            (&attributes, &metadata),
        )
        .map_err(|e| e.at(self.source, u.target.span))?;
        self.touch(&mut metadata, &old.metadata);
        if ty == PROPOSITION_TYPE {
            self.cache.predicates.clear();
        }
        let before = self.previewing().then(|| old.clone());
        let record = kip_store::ConceptRecord {
            attributes,
            metadata,
            ..old
        };
        self.store.update_concept(self.txn, c, &record).kip()?;
        search::index_concept(self.store, self.txn, c, &record)?;
        self.stats.concepts_updated += 1;
        self.note_concept(Op::Updated, c, before.as_ref(), Some(&record))?;
        Ok(true)
    }

    fn update_one_proposition(&mut self, u: &Update, p: PropositionId) -> Result<bool> {
        let Some(old) = self.graph(|g| Ok(g.proposition(p)?.map(|r| (*r).clone())))? else {
            return Ok(false);
        };
        let (attributes, mut metadata) =
            self.apply_sets(u, Val::Prop(p), &old.attributes, &old.metadata)?;
        if attributes == old.attributes && metadata == old.metadata {
            return Ok(false);
        }
        self.touch(&mut metadata, &old.metadata);
        let before = self.previewing().then(|| old.clone());
        let old_attributes = old.attributes.clone();
        let record = kip_store::PropositionRecord {
            attributes,
            metadata,
            ..old
        };
        let reindex = record.attributes != old_attributes;
        self.store.update_proposition(self.txn, p, &record).kip()?;
        // A link's search document is its predicate, its ends' names and
        // its attributes: a metadata-only change (a sweep's) leaves it be.
        if reindex {
            self.reindex_proposition(p, &record)?;
        }
        self.stats.propositions_updated += 1;
        self.note_proposition(Op::Updated, p, before.as_ref(), Some(&record))?;
        Ok(true)
    }
}

/// The links among UPDATE's targets.
fn selected_links(targets: &[Val]) -> Vec<PropositionId> {
    targets
        .iter()
        .filter_map(|t| match t {
            Val::Prop(p) => Some(*p),
            _ => None,
        })
        .collect()
}

/// The value at `keys` in a record's map (`null` where one is missing).
fn dig(map: &Object, keys: &[String]) -> Json {
    let mut cur = map.get(&keys[0]);
    for k in &keys[1..] {
        cur = cur.and_then(|v| v.get(k));
    }
    cur.cloned().unwrap_or(Json::Null)
}

//! MERGE (RC9 §4.4, RC10): `MERGE CONCEPT ?source INTO ?target` declares
//! two concepts the same entity and folds the source into the target, in
//! the caller's one transaction: every link of the source is repointed to
//! the target keeping its id (a link that would then duplicate one of the
//! target's is folded into it instead: missing keys filled, links about it
//! repointed, the duplicate removed), the source's attributes fill the
//! target's missing ones (`aliases` are unioned and gain the source's
//! name), `_merged_from` records the source, and the source is deleted.

use std::collections::HashSet;

use kip_lang::ast::*;
use kip_lang::{ErrorCode, KipError};
use kip_store::{ConceptId, ConceptRecord, ElementId, PropositionId, PropositionRecord};
use serde_json::{Value as Json, json};

use crate::graph::{Graph, OrInternal as _, Result};
use crate::kql::{self, Val};
use crate::{schema, search};

use super::changes::Op;
use super::object::Object;
use super::writer::Writer;

/// What a merge did, for its result.
#[derive(Debug, Default)]
struct Merged {
    repointed: usize,
    deduplicated: usize,
}

/// The result object of a MERGE.
fn merge_result(merged: &Merged, filled: usize) -> Json {
    json!({
        "merged": true,
        "links_repointed": merged.repointed,
        "links_deduplicated": merged.deduplicated,
        "attributes_filled": filled,
    })
}

/// The values of `list`s, each once, in order.
fn union<'a>(lists: impl IntoIterator<Item = Option<&'a Json>>) -> Vec<Json> {
    let mut out: Vec<Json> = Vec::new();
    for v in lists
        .into_iter()
        .flat_map(|l| l.and_then(Json::as_array).into_iter().flatten())
    {
        if !out.contains(v) {
            out.push(v.clone());
        }
    }
    out
}

/// `list` with `item` added at the end unless it is there already.
fn with(mut list: Vec<Json>, item: Json) -> Vec<Json> {
    if !list.contains(&item) {
        list.push(item);
    }
    list
}

/// The target's attributes after the merge and how many keys it gained:
/// the source fills the keys the target lacks, `aliases` become the union
/// of both plus the source's name.
fn merged_attributes(target: &ConceptRecord, source: &ConceptRecord) -> (Object, usize) {
    let mut attributes = target.attributes.clone();
    let mut filled = 0;
    for (k, v) in &source.attributes {
        if k != "aliases" && !attributes.contains_key(k) {
            attributes.insert(k.clone(), v.clone());
            filled += 1;
        }
    }
    if !attributes.contains_key("aliases") {
        filled += 1;
    }
    let aliases = with(
        union([attributes.get("aliases"), source.attributes.get("aliases")]),
        json!(source.name),
    );
    attributes.insert("aliases".into(), Json::Array(aliases));
    (attributes, filled)
}

impl Writer<'_, '_> {
    pub fn merge(&mut self, m: &Merge) -> Result<Json> {
        let (sources, targets) = self.merge_candidates(m)?;
        let source = self.one_concept(&sources, &m.source, m, true)?;
        let target = self.one_concept(&targets, &m.target, m, false)?;
        if source == target {
            return Ok(merge_result(&Merged::default(), 0));
        }
        let (source_rec, source_type) = self.concept_with_type(source)?;
        let (target_rec, target_type) = self.concept_with_type(target)?;
        self.check_mergeable(m, (&source_rec, &source_type), (&target_rec, &target_type))?;

        // 1. Repoint the source's links to the target.
        let mut merged = Merged::default();
        self.repoint(
            ElementId::Concept(source),
            ElementId::Concept(target),
            &mut merged,
        )?;

        // 2. Fill the target's attributes; 3. record the provenance.
        let (attributes, filled) = merged_attributes(&target_rec, &source_rec);
        let mut metadata = target_rec.metadata.clone();
        let trail = with(
            union([
                target_rec.metadata.get("_merged_from"),
                source_rec.metadata.get("_merged_from"),
            ]),
            json!(format!("{source_type}:{}", source_rec.name)),
        );
        metadata.insert("_merged_from".into(), Json::Array(trail));
        self.touch(&mut metadata, &target_rec.metadata);
        let before = self.previewing().then(|| target_rec.clone());
        let record = ConceptRecord {
            attributes,
            metadata,
            ..target_rec
        };
        self.store.update_concept(self.txn, target, &record).kip()?;
        search::index_concept(self.store, self.txn, target, &record)?;
        self.stats.concepts_updated += 1;
        self.note_concept(Op::Updated, target, before.as_ref(), Some(&record))?;

        // 4. Delete the source, which no link mentions any more.
        self.delete_element(ElementId::Concept(source))?;
        Ok(merge_result(&merged, filled))
    }

    /// The distinct concepts the WHERE binds to the source and the target.
    fn merge_candidates(&self, m: &Merge) -> Result<(Vec<Val>, Vec<Val>)> {
        let graph = Graph::new(self.store, self.txn);
        let (exec, rows) = kql::solve(&graph, self.source, &m.where_)?;
        let distinct = |var: &str| {
            let mut seen = HashSet::new();
            rows.iter()
                .map(|r| exec.val(r, var))
                .filter(|v| *v != Val::Null && seen.insert(*v))
                .collect::<Vec<_>>()
        };
        Ok((distinct(&m.source.name), distinct(&m.target.name)))
    }

    /// A concept's record and its type's name.
    fn concept_with_type(&self, id: ConceptId) -> Result<(ConceptRecord, String)> {
        self.graph(|g| {
            let Some(rec) = g.concept(id)?.map(|r| (*r).clone()) else {
                return Err(KipError::new(
                    ErrorCode::InternalError,
                    "a matched concept vanished",
                ));
            };
            let ty = g.type_name(rec.type_id)?.to_string();
            Ok((rec, ty))
        })
    }

    /// Neither end protected; both of one type.
    fn check_mergeable(
        &self,
        m: &Merge,
        (source_rec, source_type): (&ConceptRecord, &str),
        (target_rec, target_type): (&ConceptRecord, &str),
    ) -> Result<()> {
        for (ty, name, var) in [
            (source_type, &source_rec.name, &m.source),
            (target_type, &target_rec.name, &m.target),
        ] {
            if schema::is_protected(ty, name) {
                return Err(schema::protected_error(ty, name, "merged").at(self.source, var.span));
            }
        }
        if source_rec.type_id != target_rec.type_id {
            // RC10's ConstraintViolation (KIP_2002 there), KIP_2003 in RC2's numbering.
            return Err(KipError::new(
                ErrorCode::ConstraintViolation,
                format!(
                    "MERGE joins concepts of one type: {source_type} '{}' cannot be merged into {target_type} '{}'",
                    source_rec.name, target_rec.name
                ),
            )
            .with_hint("Only duplicates of the same type can be merged; check both with FIND(?x.type) first.")
            .at(self.source, m.span));
        }
        Ok(())
    }

    /// The one concept a MERGE variable binds: none is `KIP_3002` (with the
    /// "already merged" hint on a replay), several are `KIP_3003`.
    fn one_concept(
        &mut self,
        vals: &[Val],
        var: &Var,
        m: &Merge,
        is_source: bool,
    ) -> Result<ConceptId> {
        match vals {
            [Val::Concept(c)] => Ok(*c),
            [] => {
                let role = if is_source { "source" } else { "target" };
                let mut e = KipError::new(
                    ErrorCode::NotFound,
                    format!("the MERGE {role} ?{} matches no concept", var.name),
                )
                .with_hint("Check both concepts with FIND before merging; SEARCH CONCEPT finds near names.")
                .at(self.source, var.span);
                if is_source && let Some(hint) = self.already_merged(m)? {
                    e = e.with_hint(hint);
                }
                Err(e)
            }
            [_] => Err(KipError::new(
                ErrorCode::ConstraintViolation,
                format!("?{} binds a proposition: MERGE joins concepts", var.name),
            )
            .at(self.source, var.span)),
            many => Err(KipError::new(
                ErrorCode::DuplicateExists,
                format!("the MERGE variable ?{} matches {} nodes; it must match exactly one", var.name, many.len()),
            )
            .with_hint(format!("Narrow the WHERE pattern until ?{} matches one concept, e.g. with {{type: \"…\", name: \"…\"}}.", var.name))
            .at(self.source, var.span)
            .with_data("matches", many.len())),
        }
    }

    /// RC10: when the source is gone but the target's `_merged_from` lists
    /// it, the merge already happened (a replay).
    fn already_merged(&mut self, m: &Merge) -> Result<Option<String>> {
        let named = |var: &Var| {
            m.where_.items.iter().find_map(|item| match item {
                Pattern::Concept(ConceptClause {
                    var: Some(v),
                    matcher: ConceptMatcher::TypeName { ty, name },
                    ..
                }) if v.name == var.name => Some((ty.lit()?.clone(), name.lit()?.clone())),
                _ => None,
            })
        };
        let (Some((sty, sname)), Some((tty, tname))) = (named(&m.source), named(&m.target)) else {
            return Ok(None);
        };
        let trail = self.graph(|g| {
            let Some(c) = g.find_concept_by_names(&tty, &tname)? else {
                return Ok(None);
            };
            Ok(g.concept(c)?
                .and_then(|r| r.metadata.get("_merged_from").cloned()))
        })?;
        let entry = json!(format!("{sty}:{sname}"));
        let listed = trail
            .as_ref()
            .and_then(Json::as_array)
            .is_some_and(|a| a.contains(&entry));
        Ok(listed.then(|| {
            format!("{sty} '{sname}' was already merged into {tty} '{tname}' (its _merged_from lists it): nothing left to do.")
        }))
    }

    /// Repoints every link that mentions `from` to mention `to` instead,
    /// keeping link ids; a link that would duplicate an existing one is
    /// folded into it (missing keys filled, links about it repointed in
    /// turn) and removed.
    fn repoint(&mut self, from: ElementId, to: ElementId, merged: &mut Merged) -> Result<()> {
        for link in self.store.propositions_mentioning(self.txn, from).kip()? {
            let Some(old) = self.graph(|g| Ok(g.proposition(link)?.map(|r| (*r).clone())))? else {
                continue;
            };
            let swap = |e: ElementId| if e == from { to } else { e };
            let (s, o) = (swap(old.subject), swap(old.object));
            let existing = self
                .store
                .find_proposition(self.txn, s, old.predicate, o)
                .kip()?;
            match existing {
                Some(survivor) if survivor != link => {
                    self.fold_link(link, &old, survivor, merged)?;
                }
                _ => {
                    let mut metadata = old.metadata.clone();
                    self.touch(&mut metadata, &old.metadata);
                    let before = self.previewing().then(|| old.clone());
                    let record = PropositionRecord {
                        subject: s,
                        object: o,
                        metadata,
                        ..old
                    };
                    self.store
                        .update_proposition(self.txn, link, &record)
                        .kip()?;
                    self.reindex_proposition(link, &record)?;
                    self.stats.propositions_updated += 1;
                    self.note_proposition(Op::Updated, link, before.as_ref(), Some(&record))?;
                    merged.repointed += 1;
                }
            }
        }
        Ok(())
    }

    /// Folds the duplicate `dup` into `survivor`: the survivor's keys win,
    /// missing ones come from the duplicate; links about the duplicate are
    /// repointed to the survivor; the duplicate is removed.
    fn fold_link(
        &mut self,
        dup: PropositionId,
        dup_rec: &PropositionRecord,
        survivor: PropositionId,
        merged: &mut Merged,
    ) -> Result<()> {
        self.repoint(
            ElementId::Proposition(dup),
            ElementId::Proposition(survivor),
            merged,
        )?;
        if let Some(old) = self.graph(|g| Ok(g.proposition(survivor)?.map(|r| (*r).clone())))? {
            let fill = |base: &Object, extra: &Object| {
                let mut out = base.clone();
                for (k, v) in extra {
                    if !k.starts_with('_') && !out.contains_key(k) {
                        out.insert(k.clone(), v.clone());
                    }
                }
                out
            };
            let attributes = fill(&old.attributes, &dup_rec.attributes);
            let mut metadata = fill(&old.metadata, &dup_rec.metadata);
            if attributes != old.attributes || metadata != old.metadata {
                self.touch(&mut metadata, &old.metadata);
                let before = self.previewing().then(|| old.clone());
                let record = PropositionRecord {
                    attributes,
                    metadata,
                    ..old
                };
                self.store
                    .update_proposition(self.txn, survivor, &record)
                    .kip()?;
                self.reindex_proposition(survivor, &record)?;
                self.stats.propositions_updated += 1;
                self.note_proposition(Op::Updated, survivor, before.as_ref(), Some(&record))?;
            }
        }
        self.delete_element(ElementId::Proposition(dup))?;
        merged.deduplicated += 1;
        Ok(())
    }
}

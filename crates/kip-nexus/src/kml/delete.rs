//! DELETE in its four forms — attribute keys, metadata keys, links, and
//! concepts with the DETACH cascade to every link that mentions them
//! (links about links included). The targets are the solutions of the
//! WHERE block, read with the executor before anything is deleted.

use std::collections::HashSet;

use kip_lang::ast::*;
use kip_store::{ConceptId, ElementId, PropositionId};
use serde_json::{Value as Json, json};

use crate::graph::{BELONGS_TO_DOMAIN, Graph, OrInternal as _, Result};
use crate::kql::{self, Val};
use crate::{schema, search};

use super::changes::Op;
use super::object::reserved_key_error;
use super::writer::Writer;

impl Writer<'_, '_> {
    pub fn delete(&mut self, d: &Delete) -> Result<Json> {
        let targets: Vec<Val> = {
            let graph = Graph::new(self.store, self.txn);
            let (exec, rows) = kql::solve(&graph, self.source, &d.where_)?;
            let mut seen = HashSet::new();
            rows.iter()
                .map(|r| exec.val(r, &d.var.name))
                .filter(|v| *v != Val::Null && seen.insert(*v))
                .collect()
        };
        match &d.target {
            DeleteTarget::Attributes(keys) | DeleteTarget::Metadata(keys) => {
                let is_attributes = matches!(d.target, DeleteTarget::Attributes(_));
                self.delete_keys(targets, keys, is_attributes, d.span)
            }
            DeleteTarget::Propositions => self.delete_links(targets),
            DeleteTarget::Concept => self.delete_concepts(targets, d.var.span),
        }
    }

    /// `DELETE ATTRIBUTES` / `DELETE METADATA`: the keys removed from each
    /// target that has one of them.
    fn delete_keys(
        &mut self,
        targets: Vec<Val>,
        keys: &[Arg<String>],
        is_attributes: bool,
        span: Span,
    ) -> Result<Json> {
        let mut names = Vec::new();
        for k in keys {
            let name = self.text(k)?;
            if !is_attributes && name.starts_with('_') {
                return Err(reserved_key_error(name, self.source, k.span()));
            }
            names.push(name.to_owned());
        }
        let (mut concepts, mut propositions) = (0, 0);
        for t in targets {
            match t {
                Val::Concept(c) => {
                    if self.delete_concept_keys(c, &names, is_attributes, span)? {
                        concepts += 1;
                    }
                }
                Val::Prop(p) => {
                    if self.delete_proposition_keys(p, &names, is_attributes)? {
                        propositions += 1;
                    }
                }
                Val::Null | Val::Pred(_) => {}
            }
        }
        Ok(json!({"updated_concepts": concepts, "updated_propositions": propositions}))
    }

    /// `DELETE PROPOSITIONS`: each target link and the links about it.
    fn delete_links(&mut self, targets: Vec<Val>) -> Result<Json> {
        let before = self.stats.propositions_deleted;
        for t in targets {
            if let Val::Prop(p) = t {
                self.delete_element(ElementId::Proposition(p))?;
            }
        }
        Ok(json!({"deleted_propositions": self.stats.propositions_deleted - before}))
    }

    /// `DELETE CONCEPT … DETACH`: each target concept and every link that
    /// mentions it. `var` is where the variable is written, for the error
    /// of a protected target.
    fn delete_concepts(&mut self, targets: Vec<Val>, var: Span) -> Result<Json> {
        // Check every target before deleting any, so a protected
        // one refuses the whole command.
        let mut concepts = Vec::new();
        for t in &targets {
            if let Val::Concept(c) = t {
                let (ty, name) = self.graph(|g| {
                    let rec = g.concept(*c)?;
                    Ok(match rec {
                        Some(r) => (g.type_name(r.type_id)?.to_string(), r.name.clone()),
                        None => (String::new(), String::new()),
                    })
                })?;
                if schema::is_protected(&ty, &name) {
                    return Err(schema::protected_error(&ty, &name, "deleted").at(self.source, var));
                }
                concepts.push(*c);
            }
        }
        let (c0, p0) = (self.stats.concepts_deleted, self.stats.propositions_deleted);
        for c in concepts {
            self.delete_element(ElementId::Concept(c))?;
        }
        Ok(json!({
            "deleted_concepts": self.stats.concepts_deleted - c0,
            "deleted_propositions": self.stats.propositions_deleted - p0,
        }))
    }

    fn delete_concept_keys(
        &mut self,
        id: ConceptId,
        keys: &[String],
        attributes: bool,
        span: Span,
    ) -> Result<bool> {
        let Some(old) = self.graph(|g| Ok(g.concept(id)?.map(|r| (*r).clone())))? else {
            return Ok(false);
        };
        let mut rec = old.clone();
        let map = if attributes {
            &mut rec.attributes
        } else {
            &mut rec.metadata
        };
        let before = map.len();
        for k in keys {
            map.shift_remove(k);
        }
        if map.len() == before {
            return Ok(false);
        }
        let ty = self.graph(|g| Ok(g.type_name(rec.type_id)?.to_string()))?;
        schema::check_modification(
            &ty,
            &rec.name,
            (&old.attributes, &old.metadata),
            (&rec.attributes, &rec.metadata),
        )
        .map_err(|e| e.at(self.source, span))?;
        self.touch(&mut rec.metadata, &old.metadata);
        self.store.update_concept(self.txn, id, &rec).kip()?;
        search::index_concept(self.store, self.txn, id, &rec)?;
        self.stats.concepts_updated += 1;
        self.note_concept(Op::Updated, id, Some(&old), Some(&rec))?;
        Ok(true)
    }

    fn delete_proposition_keys(
        &mut self,
        id: PropositionId,
        keys: &[String],
        attributes: bool,
    ) -> Result<bool> {
        let Some(old) = self.graph(|g| Ok(g.proposition(id)?.map(|r| (*r).clone())))? else {
            return Ok(false);
        };
        let mut rec = old.clone();
        let map = if attributes {
            &mut rec.attributes
        } else {
            &mut rec.metadata
        };
        let before = map.len();
        for k in keys {
            map.shift_remove(k);
        }
        if map.len() == before {
            return Ok(false);
        }
        self.touch(&mut rec.metadata, &old.metadata);
        self.store.update_proposition(self.txn, id, &rec).kip()?;
        self.reindex_proposition(id, &rec)?;
        self.stats.propositions_updated += 1;
        self.note_proposition(Op::Updated, id, Some(&old), Some(&rec))?;
        Ok(true)
    }

    /// Deletes an element and, transitively, every link that mentions it
    /// (links about links included). Links go first, while the concepts
    /// they join still exist (the domain counters need their types), each
    /// after every link that mentions it: `order` is a post-order of "is
    /// mentioned by", so a link about a link reached two ways (`U stated
    /// (U stated F)`, deleting `U`) still goes before the link it is about.
    pub fn delete_element(&mut self, root: ElementId) -> Result<()> {
        let mut work = vec![(root, false)];
        let mut order = Vec::new();
        let mut seen: HashSet<ElementId> = HashSet::new();
        while let Some((e, expanded)) = work.pop() {
            if expanded {
                order.push(e);
                continue;
            }
            if !seen.insert(e) {
                continue;
            }
            work.push((e, true));
            for link in self.store.propositions_mentioning(self.txn, e).kip()? {
                let link = ElementId::Proposition(link);
                if !seen.contains(&link) {
                    work.push((link, false));
                }
            }
        }
        for &e in &order {
            if let ElementId::Proposition(p) = e
                && let Some(rec) = self.graph(|g| Ok(g.proposition(p)?.map(|r| (*r).clone())))?
            {
                let pred = self.graph(|g| Ok(g.predicate_name(rec.predicate)?.to_string()))?;
                if pred == BELONGS_TO_DOMAIN {
                    self.count_domain_member(&rec, -1)?;
                }
                self.note_proposition(Op::Deleted, p, Some(&rec), None)?;
                search::unindex(self.store, self.txn, e)?;
                self.store.delete_proposition(self.txn, p).kip()?;
                self.stats.propositions_deleted += 1;
            }
        }
        for &e in &order {
            if let ElementId::Concept(c) = e
                && let Some(rec) = self.graph(|g| g.concept(c))?
            {
                self.note_concept(Op::Deleted, c, Some(&*rec), None)?;
                search::unindex(self.store, self.txn, e)?;
                self.store.delete_concept(self.txn, c).kip()?;
                self.cache.heads.remove(&c);
                self.stats.concepts_deleted += 1;
            }
        }
        Ok(())
    }
}

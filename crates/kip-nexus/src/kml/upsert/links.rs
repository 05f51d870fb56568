//! Links: checked against their predicate's signature, then deferred, so
//! that the links of a command are written together.

use kip_lang::ast::*;
use kip_lang::{ErrorCode, KipError};
use kip_store::{ElementId, PropositionId, PropositionRecord};
use serde_json::json;

use crate::graph::{BELONGS_TO_DOMAIN, OrInternal as _, Result};
use crate::schema;
use crate::search;

use crate::kml::changes::Op;
use crate::kml::object::{Object, merged, stamp_new_at};
use crate::kml::writer::Writer;

impl Writer<'_, '_> {
    /// Checks a link before it is written: the predicate is defined and
    /// `s` and `o` have allowed types. Returns the predicate's id.
    pub(super) fn check_link(
        &mut self,
        s: ElementId,
        predicate: &str,
        predicate_span: Span,
        o: ElementId,
        span: Span,
    ) -> Result<u32> {
        let Some(signature) = self.predicate(predicate)? else {
            return Err(self
                .graph(|g| schema::unknown_predicate(g, predicate))?
                .at(self.source, predicate_span));
        };
        for (end, allowed, role) in [
            (s, &signature.subject_types, "subject"),
            (o, &signature.object_types, "object"),
        ] {
            let Some(allowed) = allowed else { continue };
            if !self.has_type_in(end, allowed)? {
                let actual = self.element_type(end)?;
                let found = actual.map_or_else(|| "a proposition".to_owned(), |t| format!("a {t}"));
                return Err(KipError::new(
                    ErrorCode::TypeMismatch,
                    format!("predicate '{predicate}' needs a {role} of type {}, found {found}", allowed.join(" or ")),
                )
                .with_hint(format!("Check the direction and the types: DESCRIBE PROPOSITION TYPE \"{predicate}\" shows its subject_types and object_types."))
                .at(self.source, span));
            }
        }
        self.intern_predicate(predicate)
    }

    /// Whether `e` is a concept whose type is one of `allowed`.
    pub(super) fn has_type_in(&mut self, e: ElementId, allowed: &[String]) -> Result<bool> {
        let ElementId::Concept(c) = e else {
            return Ok(false);
        };
        let type_id = match self.cache.heads.get(&c) {
            Some(h) => h.0,
            None => match self.head(c)? {
                Some(h) => h.0,
                None => return Ok(false),
            },
        };
        if !self.cache.type_names.contains_key(&type_id) {
            self.cached_type_name(type_id)?;
        }
        let name = &self.cache.type_names[&type_id];
        Ok(allowed.iter().any(|a| a == name))
    }

    /// Creates or updates the link `(s, predicate, o)`; checks that the
    /// predicate is defined and that `s` and `o` have allowed types.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn upsert_link(
        &mut self,
        s: ElementId,
        predicate: &str,
        predicate_span: Span,
        o: ElementId,
        attrs: &Object,
        meta: &Object,
        span: Span,
    ) -> Result<PropositionId> {
        let p = self.check_link(s, predicate, predicate_span, o, span)?;
        let existing = self.store.find_proposition(self.txn, s, p, o).kip()?;
        if let Some(id) = existing {
            self.update_proposition(id, attrs, meta)?;
            return Ok(id);
        }
        let mut metadata = meta.clone();
        self.stamp_new(&mut metadata);
        let record = PropositionRecord {
            subject: s,
            predicate: p,
            object: o,
            attributes: attrs.clone(),
            metadata,
        };
        let id = self.store.create_proposition(self.txn, &record).kip()?;
        // Not a deferred link: a group no longer knows every link it wrote.
        self.written.untracked = true;
        if predicate == BELONGS_TO_DOMAIN {
            self.count_domain_member(&record, 1)?;
        }
        let names = [
            predicate.replace('_', " "),
            self.element_name(s)?,
            self.element_name(o)?,
        ];
        search::index_proposition(self.store, self.txn, id, &record, &names)?;
        self.stats.propositions_created += 1;
        self.note_proposition(Op::Created, id, None, Some(&record))?;
        Ok(id)
    }

    /// [`Writer::upsert_link`] for a `SET PROPOSITIONS` entry (a link
    /// without attributes whose id is not needed): the same checks, merges
    /// and counts, but a new link is only recorded, and written by
    /// [`Writer::flush_links`] together with the others.
    pub(super) fn defer_link(
        &mut self,
        s: ElementId,
        predicate: &str,
        predicate_span: Span,
        o: ElementId,
        meta: &Object,
        span: Span,
    ) -> Result<()> {
        let p = self.check_link(s, predicate, predicate_span, o, span)?;
        if let Some(&i) = self.pending.by_triple.get(&(s, p, o))
            && let Some(group) = &self.group
            && self.pending.commands[i] != group.command
        {
            // A repeat of a link an earlier command of the group decided:
            // written first, it is updated as it would be had that
            // command been committed on its own.
            self.flush_links()?;
        }
        if let Some(&i) = self.pending.by_triple.get(&(s, p, o)) {
            // A repeat of a link of this command: merge as
            // `update_proposition` would merge into the stored record.
            let old = &self.pending.metadata[self.pending.meta[i] as usize];
            let mut metadata = merged(old, meta);
            if metadata != *old {
                metadata.insert("_updated_at".into(), json!(self.now));
                self.pending.meta[i] = self.pending.share(metadata);
                self.stats.propositions_updated += 1;
            }
            return Ok(());
        }
        if self.may_be_stored(&(s, p, o))?
            && let Some(id) = self.store.find_proposition(self.txn, s, p, o).kip()?
        {
            return self.update_proposition(id, &Object::new(), meta);
        }
        if predicate == BELONGS_TO_DOMAIN {
            let record = PropositionRecord {
                subject: s,
                predicate: p,
                object: o,
                attributes: Object::new(),
                metadata: Object::new(),
            };
            self.count_domain_member(&record, 1)?;
        }
        // A group write decides tens of thousands of links: room for them
        // at once.
        if self.group.is_some() && self.pending.by_triple.is_empty() {
            self.pending.by_triple.reserve(GROUP_LINKS);
            if self.pending_documents.links.is_empty() {
                self.pending_documents.links.reserve(2 * GROUP_LINKS);
            }
        }
        // The ends' names are at hand now (the links' search documents
        // are built when the links are created, maybe after a file whose
        // look-ups are forgotten).
        let mut end_terms = [search::Terms::default(); 2];
        for (e, terms) in [s, o].into_iter().zip(&mut end_terms) {
            *terms = match self.pending_documents.links.known(e) {
                Some(t) => t,
                None => {
                    let name = self.element_name(e)?;
                    self.pending_documents.links.meet(e, &name)
                }
            };
        }
        self.pending.end_terms.push(end_terms);
        self.pending
            .by_triple
            .insert((s, p, o), self.pending.triples.len());
        self.pending.triples.push(kip_store::Triple {
            subject: s,
            predicate: p,
            object: o,
        });
        let now = &self.now;
        let shared = self.pending.share_new(meta, now, |m| stamp_new_at(m, now));
        self.pending.meta.push(shared);
        if let Some(group) = &self.group {
            self.pending.commands.push(group.command);
        }
        self.stats.propositions_created += 1;
        Ok(())
    }

    /// Whether link `(s, p, o)` may be stored already (the caller has
    /// looked among the pending links): `false` only in a group write
    /// whose transaction started from the state in which the checks ahead
    /// found the link absent (see [`crate::known::KnownConcepts::set_links`]), or
    /// from the end of the last groups that followed that state
    /// ([`super::RecentGroups`]), when none of them and nothing this group
    /// has written could be it. Saves a random look-up in `spo` per new
    /// link of a bulk import.
    pub(super) fn may_be_stored(&mut self, link: &crate::known::LinkKey) -> Result<bool> {
        let Some(known) = self.known else {
            return Ok(true);
        };
        if self.group.is_none() || self.written.untracked {
            return Ok(true);
        }
        let since = match self.known_links_hold {
            Some(since) => since,
            None => {
                // A group appends its change-log entries at its end: the
                // last one is still the one it started from.
                let now = self.store.last_change_seq(self.txn).kip()?;
                let since = match known.links_checked_at() {
                    Some(at) if at == now => Some(&[][..]),
                    // Checked before the last groups: they count too.
                    Some(at) => self.recent.and_then(|r| r.between(at, now)),
                    None => None,
                };
                self.known_links_hold = Some(since);
                since
            }
        };
        let Some(since) = since else {
            return Ok(true);
        };
        Ok(known.link_was_stored(link)
            || self.written.may_hold(link)
            || since.iter().any(|g| g.created(link)))
    }

    pub(super) fn update_proposition(
        &mut self,
        id: PropositionId,
        attrs: &Object,
        meta: &Object,
    ) -> Result<()> {
        let Some(old) = self.graph(|g| Ok(g.proposition(id)?.map(|r| (*r).clone())))? else {
            return Ok(());
        };
        let attributes = merged(&old.attributes, attrs);
        let mut metadata = merged(&old.metadata, meta);
        if attributes == old.attributes && metadata == old.metadata {
            return Ok(());
        }
        self.touch(&mut metadata, &old.metadata);
        let before = self.previewing().then(|| old.clone());
        let record = PropositionRecord {
            attributes,
            metadata,
            ..old
        };
        self.store.update_proposition(self.txn, id, &record).kip()?;
        self.reindex_proposition(id, &record)?;
        self.stats.propositions_updated += 1;
        self.note_proposition(Op::Updated, id, before.as_ref(), Some(&record))?;
        Ok(())
    }
}

/// The links a group write is made room for at once (see `defer_link`).
const GROUP_LINKS: usize = 1 << 15;

//! Writing what the blocks deferred: attributes, search documents and
//! links, together at the end of the command or before anything reads
//! links back.

use kip_store::{ConceptId, ConceptRecord, ElementId, NewProposition, PropositionRecord};

use crate::graph::{OrInternal as _, Result};
use crate::search::{self, NameOf};

use crate::kml::changes::Op;
use crate::kml::object::Object;
use crate::kml::writer::Writer;

impl Writer<'_, '_> {
    /// Decides `id`'s search document; written by
    /// [`Writer::flush_documents`] (a later one for the same concept wins).
    pub(super) fn defer_document(&mut self, id: ConceptId, record: &ConceptRecord) {
        let (terms, len) = search::concept_document(record);
        let document = kip_store::NewDocument {
            element: ElementId::Concept(id),
            terms,
            len,
        };
        let pending = &mut self.pending_documents;
        match pending.at.get(&id) {
            Some(&at) => pending.documents[at] = document,
            None => {
                pending.at.insert(id, pending.documents.len());
                pending.documents.push(document);
            }
        }
    }

    /// Writes the attribute-index entries of the concepts created since
    /// the last call (see [`kip_store::Store::create_concept_deferring`]).
    pub(in crate::kml) fn flush_attrs(&mut self) -> Result<()> {
        if self.pending_attrs.is_empty() {
            return Ok(());
        }
        self.store
            .put_attr_entries(self.txn, &mut self.pending_attrs)
            .kip()
    }

    /// Writes the deferred concept documents as one batch: each distinct
    /// term is looked up once, and new concepts append to its postings.
    /// The command's attribute-index entries go first.
    pub(in crate::kml) fn flush_documents(&mut self) -> Result<()> {
        self.flush_attrs()?;
        if self.pending_documents.documents.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending_documents);
        self.store
            .index_documents(self.txn, &pending.documents)
            .kip()
    }

    /// Writes the deferred links, in the order they were decided (ids as
    /// one-by-one creation would give them), and their search documents.
    ///
    /// In a group write, before its end, the links are noted in
    /// [`super::WrittenLinks`] (what it decides next must know) and their
    /// search documents wait for [`Writer::index_link_documents`] at the
    /// group's end, to be indexed in one batch (each distinct term is
    /// looked up once per batch).
    pub(in crate::kml) fn flush_links(&mut self) -> Result<()> {
        let in_group = self.group.is_some();
        self.create_pending_links(in_group)?;
        if !in_group {
            self.index_link_documents()?;
        }
        Ok(())
    }

    /// Indexes the documents of the links written so far.
    pub(in crate::kml) fn index_link_documents(&mut self) -> Result<()> {
        let links = std::mem::take(&mut self.pending_documents.links);
        if links.is_empty() {
            return Ok(());
        }
        links.write(self.store, self.txn)
    }

    /// Creates the deferred links (see [`Writer::flush_links`]); their
    /// search documents wait in `pending_documents`. `note_written`: the
    /// links are noted in [`super::WrittenLinks`].
    pub(in crate::kml) fn create_pending_links(&mut self, note_written: bool) -> Result<()> {
        if self.pending.triples.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        if note_written {
            self.written.note(&pending.triples);
        }
        let no_attributes = Object::new();
        let records: Vec<NewProposition<'_>> = pending
            .triples
            .iter()
            .zip(&pending.meta)
            .map(|(&triple, &m)| NewProposition {
                triple,
                attributes: &no_attributes,
                metadata: &pending.metadata[m as usize],
            })
            .collect();
        let ids = self.store.create_propositions(self.txn, &records).kip()?;
        drop(records);
        let mut documents = std::mem::take(&mut self.pending_documents.links);
        // Kept beside each triple (pushed together in `defer_link`).
        let aligned = pending.end_terms.len() == pending.triples.len();
        for (i, (&id, t)) in ids.iter().zip(&pending.triples).enumerate() {
            let ends = pending.end_terms.get(i).copied().filter(|_| aligned);
            documents.add(
                id,
                (t.subject, t.predicate, t.object),
                ends,
                |of| match of {
                    NameOf::Predicate(p) => self.graph(|g| Ok(g.predicate_name(p)?.to_string())),
                    NameOf::End(e) => self.element_name(e),
                },
            )?;
        }
        self.pending_documents.links = documents;
        // Creations are noted where changes are collected: this command's,
        // or those of the group's earlier commands (see `Carry`).
        let noting = self.previewing()
            || (self.group.as_ref()).is_some_and(|g| g.earlier.iter().any(Option::is_some));
        if !noting {
            return Ok(());
        }
        // One record to note the links with, its metadata copied only when
        // it is not the previous link's (the links of a command share it).
        let first = pending.triples[0];
        let mut record = PropositionRecord {
            subject: first.subject,
            predicate: first.predicate,
            object: first.object,
            attributes: Object::new(),
            metadata: Object::new(),
        };
        // Each command's plain creations, counted first: a command they take
        // past the bulk bound notes none of them in full.
        let mut plain: Vec<(Option<u32>, usize)> = Vec::new();
        for (i, &m) in pending.meta.iter().enumerate() {
            if crate::kml::changes::uncertain(&pending.metadata[m as usize]) {
                continue;
            }
            let command = pending.commands.get(i).copied();
            match plain.iter_mut().find(|(c, _)| *c == command) {
                Some((_, n)) => *n += 1,
                None => plain.push((command, 1)),
            }
        }
        for (command, n) in plain {
            self.expect_creations(command, n)?;
        }
        let mut record_meta = None;
        for (i, (id, &m)) in ids.into_iter().zip(&pending.meta).enumerate() {
            let t = pending.triples[i];
            (record.subject, record.predicate, record.object) = (t.subject, t.predicate, t.object);
            if record_meta != Some(m) {
                record.metadata = pending.metadata[m as usize].clone();
                record_meta = Some(m);
            }
            match pending.commands.get(i) {
                Some(&command) => self.note_in(command, |w| {
                    w.note_proposition(Op::Created, id, None, Some(&record))
                })?,
                None => self.note_proposition(Op::Created, id, None, Some(&record))?,
            }
        }
        Ok(())
    }
}

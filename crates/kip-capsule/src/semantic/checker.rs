//! The [`Checker`]: its state over one snapshot of the nexus, the schema
//! as the file defines and deletes types and predicates, where errors are
//! placed, and what it hands the writer when the checks pass. The checks
//! of each op are [`super::items`]'s, the resolution of ends
//! [`super::ends`]'s.

use std::collections::HashSet;
use std::rc::Rc;

use kip_lang::ErrorCode;
use kip_nexus::bulk::FoundConcepts;
use kip_nexus::{CONCEPT_TYPE, Graph, PROPOSITION_TYPE, Result};
use serde_json::{Map, Value as Json};

use crate::model::{Definition, Model};
use crate::ops::{Action, Loc, Op};
use crate::report::ImportError;
use crate::text::LineIndex;

use super::keys::{End, HashMap, Keys, Kind, Signature, State};
use super::names::{DEFINE_PREDICATE, DEFINE_TYPE, Roles, unknown_name};

/// Checks ops in order against one snapshot of the nexus.
///
/// Its fields are `pub(super)`: the checks of ops ([`super::items`]) and
/// of ends ([`super::ends`]), which read and update them, are `impl`
/// blocks of their own in the sibling modules.
pub(crate) struct Checker<'a, 'g> {
    pub(super) g: &'a Graph<'g>,
    pub(super) model: &'a Model,
    pub(super) source: &'a str,
    pub(super) lines: &'a LineIndex,
    pub(super) roles: Roles,
    /// Contradictions are errors (bundles), or later writes simply win
    /// (capsules).
    pub(super) strict: bool,
    /// The owner's import (`kip import --owner`): the protected scope's
    /// `id` is the owner's to change, as the writer lets it.
    pub(super) owner: bool,
    pub(super) types: HashMap<String, State>,
    pub(super) predicates: HashMap<String, (State, Definition)>,
    /// Where the file defines each type and predicate (its first
    /// definition), to tell "used before its definition" from "unknown".
    pub(super) defined_at: HashMap<String, Loc>,
    pub(super) keys: Keys,
    /// The allowed end types of each predicate, read from its definition
    /// once (until the file defines it again).
    pub(super) signatures: HashMap<String, Rc<Signature>>,
    pub(super) stored_names: HashMap<String, Vec<String>>,
    /// The upserted links between stored elements found stored too, and
    /// whether every upserted link's ends were resolved (see
    /// [`Checker::checked_links`]).
    pub(super) stored_links: Vec<kip_nexus::bulk::LinkKey>,
    pub(super) links_resolved: bool,
    /// The concepts a write of the file will look up by type and name, in
    /// the order it will (see [`kip_nexus::bulk::KnownConcepts::push_in_order`]).
    pub(super) look_ups: Vec<u32>,
    /// What earlier files' checks found stored (see [`FoundConcepts`]).
    pub(super) found: Option<&'a mut FoundConcepts>,
    pub(crate) errors: Vec<ImportError>,
}

impl<'a, 'g> Checker<'a, 'g> {
    pub(crate) fn new(
        g: &'a Graph<'g>,
        model: &'a Model,
        source: &'a str,
        lines: &'a LineIndex,
        roles: Roles,
        strict: bool,
        ops: &[Op],
    ) -> Checker<'a, 'g> {
        let mut defined_at = HashMap::default();
        for op in ops {
            if let Op::Concept {
                ty,
                name,
                action: Action::Upsert,
                loc,
                ..
            } = op
                && (ty == CONCEPT_TYPE || ty == PROPOSITION_TYPE)
            {
                defined_at
                    .entry(name.clone())
                    .or_insert_with(|| loc.clone());
            }
        }
        Checker {
            g,
            model,
            source,
            lines,
            roles,
            strict,
            owner: false,
            types: HashMap::default(),
            predicates: HashMap::default(),
            defined_at,
            keys: Keys::default(),
            signatures: HashMap::default(),
            stored_names: HashMap::default(),
            stored_links: Vec::new(),
            links_resolved: true,
            look_ups: Vec::new(),
            found: None,
            errors: Vec::new(),
        }
    }

    /// Checks an import applied with the owner's authority (see
    /// [`crate::ImportOptions::owner`]).
    pub(crate) fn with_owner(mut self, owner: bool) -> Self {
        self.owner = owner;
        self
    }

    /// Takes concepts from, and adds those it finds to, what earlier
    /// files' checks found (see [`FoundConcepts`]).
    pub(crate) fn with_found(mut self, found: &'a mut FoundConcepts) -> Self {
        self.found = Some(found);
        self
    }

    /// The concepts the checks found stored in the snapshot, by type and
    /// name: what a write of the same file against the same state (or one
    /// that has only gained concepts and links since) need not look up
    /// again (see [`kip_nexus::bulk::KnownConcepts`]).
    pub(crate) fn known_concepts(&self) -> kip_nexus::bulk::KnownConcepts {
        let mut known = kip_nexus::bulk::KnownConcepts::default();
        let slots = &self.keys.concept_slots;
        let mut by_key: Vec<(&str, &str)> = vec![("", ""); slots.len()];
        let mut in_order = vec![false; slots.len()];
        for &k in &self.look_ups {
            in_order[k as usize] = true;
        }
        // The writer finds the concepts it looks up by type and name in
        // the list; only the others (the ends of links given through
        // handles or nested propositions) are worth a map.
        for (ty, names) in &self.keys.concepts {
            for (name, &k) in names {
                by_key[k as usize] = (ty, name);
                if let Some(Some(id)) = slots[k as usize].stored
                    && !in_order[k as usize]
                {
                    known.insert(ty, name, id);
                }
            }
        }
        for &k in &self.look_ups {
            let (ty, name) = by_key[k as usize];
            known.push_in_order(ty, name, slots[k as usize].stored.flatten());
        }
        known
    }

    /// The links the file upserts that the snapshot holds, when every
    /// upserted link's ends were resolved: any other link it upserts was
    /// absent from the snapshot (see [`kip_nexus::bulk::KnownConcepts::set_links`]).
    pub(crate) fn checked_links(&self) -> Option<&[kip_nexus::bulk::LinkKey]> {
        self.links_resolved.then_some(&self.stored_links)
    }

    /// Looks an upserted link up in the snapshot (see
    /// [`Checker::checked_links`]).
    pub(super) fn look_up_link(&mut self, predicate: &str, s: &End, o: &End) -> Result<()> {
        if s.kind == Kind::Unknown || o.kind == Kind::Unknown {
            self.links_resolved = false;
            return Ok(());
        }
        // An end the snapshot lacks: so does the link.
        let (Some(s), Some(o)) = (s.stored, o.stored) else {
            return Ok(());
        };
        if let Some(p) = self.g.predicate_id(predicate)?
            && self.g.find_link(s, p, o)?.is_some()
        {
            self.stored_links.push((s, p, o));
        }
        Ok(())
    }

    fn at(&self, e: ImportError, loc: &Loc) -> ImportError {
        let (line, column) = self.lines.position(self.source, loc.start);
        ImportError {
            path: loc.path.clone(),
            line: Some(line),
            column: Some(column),
            ..e
        }
    }

    pub(super) fn report(&mut self, e: ImportError, loc: &Loc) {
        let e = self.at(e, loc);
        self.errors.push(e);
    }

    pub(super) fn place(&self, loc: &Loc) -> String {
        let (line, _) = self.lines.position(self.source, loc.start);
        match &loc.path {
            Some(p) => format!("{p} (line {line})"),
            None => format!("line {line}"),
        }
    }

    fn type_defined(&self, ty: &str) -> bool {
        if ty == CONCEPT_TYPE {
            return true; // the root defines itself
        }
        match self.types.get(ty) {
            Some(State::Defined) => true,
            Some(State::Deleted) => false,
            None => self.model.types.contains_key(ty),
        }
    }

    pub(super) fn predicate(&self, p: &str) -> Option<&Definition> {
        match self.predicates.get(p) {
            Some((State::Defined, def)) => Some(def),
            Some((State::Deleted, _)) => None,
            None => self.model.predicates.get(p),
        }
    }

    pub(super) fn check_type(&mut self, ty: &str, loc: &Loc) -> bool {
        if self.type_defined(ty) {
            return true;
        }
        if let Some(def) = self.defined_at.get(ty).cloned() {
            let e = ImportError::new(
                ErrorCode::TypeMismatch,
                format!(
                    "Concept type '{ty}' is used here before its definition at {}",
                    self.place(&def)
                ),
            )
            .hint("Move the `$ConceptType` item above every item that uses the type: a file is applied in order.");
            self.report(e, loc);
            return false;
        }
        let mut candidates: HashSet<String> = self.model.types.keys().cloned().collect();
        candidates.extend(
            self.types
                .iter()
                .filter(|(_, s)| **s == State::Defined)
                .map(|(t, _)| t.clone()),
        );
        let mut sorted: Vec<String> = candidates.into_iter().collect();
        sorted.sort();
        let e = unknown_name("Entity type", ty, sorted, DEFINE_TYPE);
        self.report(e, loc);
        false
    }

    pub(super) fn check_predicate(&mut self, p: &str, loc: &Loc) -> bool {
        if self.predicate(p).is_some() {
            return true;
        }
        if let Some(def) = self.defined_at.get(p).cloned() {
            let e = ImportError::new(
                ErrorCode::TypeMismatch,
                format!(
                    "Predicate '{p}' is used here before its definition at {}",
                    self.place(&def)
                ),
            )
            .hint("Move the `$PropositionType` item above every item that uses the predicate: a file is applied in order.");
            self.report(e, loc);
            return false;
        }
        let mut candidates: HashSet<String> = self.model.predicates.keys().cloned().collect();
        candidates.extend(
            self.predicates
                .iter()
                .filter(|(_, (s, _))| *s == State::Defined)
                .map(|(t, _)| t.clone()),
        );
        let mut sorted: Vec<String> = candidates.into_iter().collect();
        sorted.sort();
        let e = unknown_name("Predicate", p, sorted, DEFINE_PREDICATE);
        self.report(e, loc);
        false
    }

    /// Stored names of type `ty` (for "did you mean"), at most a few
    /// thousand: past that, comparing is not cheap and SEARCH helps more.
    pub(super) fn names_of(&mut self, ty: &str) -> Result<Vec<String>> {
        if let Some(n) = self.stored_names.get(ty) {
            return Ok(n.clone());
        }
        let mut names = Vec::new();
        if let Some(t) = self.g.type_id(ty)? {
            let ids = self.g.concepts_of_type(t)?;
            if ids.len() <= 5_000 {
                for id in ids {
                    if let Some(c) = self.g.concept(id)? {
                        names.push(c.name.clone());
                    }
                }
            }
        }
        self.stored_names.insert(ty.to_owned(), names.clone());
        Ok(names)
    }

    /// The end types predicate `p` allows, as its definition says now
    /// (any, if it is not defined).
    pub(super) fn signature(&mut self, p: &str) -> Rc<Signature> {
        if let Some(sig) = self.signatures.get(p) {
            return sig.clone();
        }
        let def = self.predicate(p);
        let sig = Rc::new(Signature {
            subject: def.and_then(|d| d.end_types("subject_types")),
            object: def.and_then(|d| d.end_types("object_types")),
        });
        self.signatures.insert(p.to_owned(), sig.clone());
        sig
    }

    /// Records the effect of a definition item on the schema.
    pub(super) fn define(&mut self, ty: &str, name: &str, attrs: &Map<String, Json>, upsert: bool) {
        let state = if upsert {
            State::Defined
        } else {
            State::Deleted
        };
        if ty == CONCEPT_TYPE {
            self.types.insert(name.to_owned(), state);
        } else if ty == PROPOSITION_TYPE {
            let mut def = match self.predicates.get(name) {
                Some((_, d)) => d.clone(),
                None => self.model.predicates.get(name).cloned().unwrap_or_default(),
            };
            for (k, v) in attrs {
                def.attributes.insert(k.clone(), v.clone());
            }
            self.predicates.insert(name.to_owned(), (state, def));
            self.signatures.remove(name);
        }
    }
}

//! The meaning checks: a file's ops against the nexus, in file order,
//! collecting every problem instead of stopping at the first.
//!
//! - every concept type and predicate is defined, by the nexus or by an
//!   earlier item of the same file, with "did you mean";
//! - every `source` / `target` (subject / object) exists, in the nexus or
//!   created earlier in the file, and was not deleted in between;
//! - the ends have the types the predicate's `subject_types` /
//!   `object_types` allow;
//! - protected elements are neither deleted nor given a new `id`;
//! - in a bundle (a declarative set, unlike a capsule's sequence of
//!   commands), no element is given two different values for one key, or
//!   both upserted and deleted.
//!
//! The checks read one snapshot of the nexus and never write; each concept
//! a file names is looked up in it once, however many links name it. They
//! do not replace the nexus's own checks, which run again when the file is
//! applied.

use std::collections::HashSet;
use std::rc::Rc;

use kip_lang::{ErrorCode, suggest};
use kip_nexus::bulk::FoundConcepts;
use kip_nexus::{CONCEPT_TYPE, Graph, PROPOSITION_TYPE, Result};
use kip_nexus::{ConceptId, ElementId};
use kip_nexus::{has_immutable_id, is_protected};
use serde_json::{Map, Value as Json};

use crate::model::{Definition, Model};
use crate::ops::{Action, LinkRef, Loc, Op, Ref};
use crate::report::ImportError;
use crate::text::LineIndex;

/// The checker's tables are looked up several times per link with keys
/// the file chose: a fast hasher, seeded per process like std's.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// How an end of a proposition resolved.
#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Concept(String),
    Proposition,
    /// Not followed (a KIP handle the checks cannot see through).
    Unknown,
}

/// The identity of an element, comparable across items: an index into
/// the checker's interned identities ([`Keys`]), so that a file naming the
/// same few thousand concepts in tens of thousands of links hashes and
/// stores each name once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// A concept by `(type, name)` (whether named so or by `{id}`).
    Concept(u32),
    /// A proposition by its `{id}`.
    Id(u32),
    /// A proposition by its ends and predicate.
    Link(u32),
    Unknown,
}

/// The identities the checks have met, interned.
#[derive(Default)]
struct Keys {
    /// Concepts by type, then name.
    concepts: HashMap<String, HashMap<String, u32>>,
    /// What the file did to each concept, and its id in the snapshot once
    /// looked up (the snapshot does not change while the checks run, so
    /// one look-up per concept is enough), by [`Key::Concept`] index.
    concept_slots: Vec<ConceptSlot>,
    ids: HashMap<String, u32>,
    predicates: HashMap<String, u32>,
    links: HashMap<(Key, u32, Key), u32>,
    /// What the file did to each proposition, by [`Key::Link`] index.
    link_seen: Vec<Option<Seen>>,
}

/// One interned concept: what the file has done to it so far, and its id
/// in the snapshot (`None` until looked up, then `Some(None)` if absent).
#[derive(Default)]
struct ConceptSlot {
    seen: Option<Seen>,
    stored: Option<Option<ConceptId>>,
}

impl Keys {
    fn concept(&mut self, ty: &str, name: &str) -> u32 {
        if let Some(&k) = self.concepts.get(ty).and_then(|names| names.get(name)) {
            return k;
        }
        let k = self.concept_slots.len() as u32;
        self.concept_slots.push(ConceptSlot::default());
        self.concepts
            .entry(ty.to_owned())
            .or_default()
            .insert(name.to_owned(), k);
        k
    }

    fn slot(&mut self, k: u32) -> &mut ConceptSlot {
        &mut self.concept_slots[k as usize]
    }

    fn seen(&self, k: u32) -> Option<&Seen> {
        self.concept_slots[k as usize].seen.as_ref()
    }

    fn id(&mut self, id: &str) -> u32 {
        intern(&mut self.ids, id)
    }

    fn link(&mut self, s: Key, predicate: &str, o: Key) -> u32 {
        let p = intern(&mut self.predicates, predicate);
        let next = self.links.len() as u32;
        let k = *self.links.entry((s, p, o)).or_insert(next);
        if k == next {
            self.link_seen.push(None);
        }
        k
    }
}

fn intern(table: &mut HashMap<String, u32>, s: &str) -> u32 {
    if let Some(&k) = table.get(s) {
        return k;
    }
    let k = table.len() as u32;
    table.insert(s.to_owned(), k);
    k
}

/// A resolved end: what it is, its identity, and its id if it is stored.
struct End {
    kind: Kind,
    key: Key,
    stored: Option<ElementId>,
}

/// A predicate's allowed subject and object types (`None`: any).
struct Signature {
    subject: Option<Vec<String>>,
    object: Option<Vec<String>>,
}

/// How an end is used: by which predicate, in which role, and whether it
/// must exist (it need not when the proposition is deleted).
struct EndUse<'u> {
    predicate: &'u str,
    role: &'u str,
    must_exist: bool,
}

/// What the file has done to an element so far.
///
/// Boxed fields keep it small: every concept and link of a file has one
/// in the checks' tables, most of them `Present`.
enum Seen {
    Upserted {
        attrs: Box<Map<String, Json>>,
        meta: Box<Map<String, Json>>,
        loc: Box<Loc>,
    },
    Deleted {
        loc: Box<Loc>,
    },
    /// An item that failed earlier checks, or a link a capsule upserted
    /// (capsules compare nothing): it counts as present.
    Present,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Defined,
    Deleted,
}

/// Words for a proposition's ends: `source` / `target` in bundles,
/// `subject` / `object` in capsules.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Roles {
    pub(crate) subject: &'static str,
    pub(crate) object: &'static str,
}

pub(crate) const BUNDLE_ROLES: Roles = Roles {
    subject: "source",
    object: "target",
};
pub(crate) const KIP_ROLES: Roles = Roles {
    subject: "subject",
    object: "object",
};

/// "Entity type 'Human' is not defined. Did you mean 'Person'?", as an error.
pub(crate) fn unknown_name(
    what: &str,
    name: &str,
    candidates: impl IntoIterator<Item = String>,
    define: &str,
) -> ImportError {
    let candidates: Vec<String> = candidates.into_iter().collect();
    let suggestions = suggest::similar(name, candidates.iter().map(String::as_str));
    let message = match suggestions.first() {
        Some(s) => format!("{what} '{name}' is not defined. Did you mean '{s}'?"),
        None => format!("{what} '{name}' is not defined"),
    };
    ImportError::new(ErrorCode::TypeMismatch, message)
        .hint(format!(
            "Names are case-sensitive. {define} Run `kip schema` (get_knowledge_schema) to see every defined type and predicate."
        ))
        .suggestions(suggestions)
}

pub(crate) const DEFINE_TYPE: &str =
    "Define a new concept type with a `$ConceptType` item (or UPSERT) before its first use.";
pub(crate) const DEFINE_PREDICATE: &str = "Define a new predicate with a `$PropositionType` item (or UPSERT) before its first use, with its subject_types and object_types.";

fn describe_ref(r: &Ref) -> String {
    match r {
        Ref::Concept { ty, name, .. } => format!("{ty} '{name}'"),
        Ref::Id { id, .. } => format!("element {id}"),
        Ref::Link(l) => format!(
            "proposition ({}, '{}', {})",
            describe_ref(&l.subject),
            l.predicate,
            describe_ref(&l.object)
        ),
        Ref::Unknown => "element".to_owned(),
    }
}

/// Checks ops in order against one snapshot of the nexus.
pub(crate) struct Checker<'a, 'g> {
    g: &'a Graph<'g>,
    model: &'a Model,
    source: &'a str,
    lines: &'a LineIndex,
    roles: Roles,
    /// Contradictions are errors (bundles), or later writes simply win
    /// (capsules).
    strict: bool,
    types: HashMap<String, State>,
    predicates: HashMap<String, (State, Definition)>,
    /// Where the file defines each type and predicate (its first
    /// definition), to tell "used before its definition" from "unknown".
    defined_at: HashMap<String, Loc>,
    keys: Keys,
    /// The allowed end types of each predicate, read from its definition
    /// once (until the file defines it again).
    signatures: HashMap<String, Rc<Signature>>,
    stored_names: HashMap<String, Vec<String>>,
    /// The upserted links between stored elements found stored too, and
    /// whether every upserted link's ends were resolved (see
    /// [`Checker::checked_links`]).
    stored_links: Vec<kip_nexus::bulk::LinkKey>,
    links_resolved: bool,
    /// The concepts a write of the file will look up by type and name, in
    /// the order it will (see [`kip_nexus::bulk::KnownConcepts::push_in_order`]).
    look_ups: Vec<u32>,
    /// What earlier files' checks found stored (see [`FoundConcepts`]).
    found: Option<&'a mut FoundConcepts>,
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
    fn look_up_link(&mut self, predicate: &str, s: &End, o: &End) -> Result<()> {
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

    fn report(&mut self, e: ImportError, loc: &Loc) {
        let e = self.at(e, loc);
        self.errors.push(e);
    }

    fn place(&self, loc: &Loc) -> String {
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

    fn predicate(&self, p: &str) -> Option<&Definition> {
        match self.predicates.get(p) {
            Some((State::Defined, def)) => Some(def),
            Some((State::Deleted, _)) => None,
            None => self.model.predicates.get(p),
        }
    }

    fn check_type(&mut self, ty: &str, loc: &Loc) -> bool {
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

    fn check_predicate(&mut self, p: &str, loc: &Loc) -> bool {
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
    fn names_of(&mut self, ty: &str) -> Result<Vec<String>> {
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

    /// Resolves an end; reports what is wrong with it when `must_exist`.
    fn resolve(
        &mut self,
        r: &Ref,
        predicate: &str,
        role: &str,
        must_exist: bool,
    ) -> Result<Option<End>> {
        let end = EndUse {
            predicate,
            role,
            must_exist,
        };
        match r {
            Ref::Unknown => Ok(Some(End {
                kind: Kind::Unknown,
                key: Key::Unknown,
                stored: None,
            })),
            Ref::Concept {
                ty,
                name,
                ty_loc,
                loc,
            } => self.resolve_concept(ty, name, ty_loc, loc, &end),
            Ref::Id { id, loc } => self.resolve_id(id, loc, &end),
            Ref::Link(l) => self.resolve_link(r, l, &end),
        }
    }

    /// An end given as `{type, name}`: defined type, and the concept stored
    /// or created earlier in the file and not deleted since.
    fn resolve_concept(
        &mut self,
        ty: &str,
        name: &str,
        ty_loc: &Loc,
        loc: &Loc,
        end: &EndUse<'_>,
    ) -> Result<Option<End>> {
        if !self.check_type(ty, ty_loc) {
            return Ok(None);
        }
        let k = self.keys.concept(ty, name);
        let stored = self.stored_concept(k, ty, name)?.map(ElementId::Concept);
        let present = match self.keys.seen(k) {
            Some(Seen::Upserted { .. } | Seen::Present) => true,
            Some(Seen::Deleted { loc: deleted }) => {
                if end.must_exist {
                    let e = ImportError::new(
                        ErrorCode::NotFound,
                        format!(
                            "Cannot create '{}': {} {ty} '{name}' is deleted earlier in this file, at {}",
                            end.predicate,
                            end.role,
                            self.place(deleted)
                        ),
                    )
                    .hint("Remove the delete, or this item.");
                    self.report(e, loc);
                }
                return Ok(None);
            }
            None => stored.is_some(),
        };
        if !present {
            if end.must_exist {
                self.concept_not_found(ty, name, loc, end)?;
            }
            return Ok(None);
        }
        Ok(Some(End {
            kind: Kind::Concept(ty.to_owned()),
            key: Key::Concept(k),
            stored,
        }))
    }

    /// The id of concept `k` (`ty`, `name`) in the snapshot, looked up once.
    fn stored_concept(&mut self, k: u32, ty: &str, name: &str) -> Result<Option<ConceptId>> {
        if let Some(stored) = self.keys.slot(k).stored {
            return Ok(stored);
        }
        let stored = match self.found.as_deref().and_then(|f| f.get(ty, name)) {
            Some(id) => Some(id),
            None => {
                let stored = self.g.find_concept_by_names(ty, name)?;
                if let (Some(id), Some(found)) = (stored, self.found.as_deref_mut()) {
                    found.insert(ty, name, id);
                }
                stored
            }
        };
        self.keys.slot(k).stored = Some(stored);
        Ok(stored)
    }

    /// Reports a missing concept end, with the names it may have meant.
    fn concept_not_found(
        &mut self,
        ty: &str,
        name: &str,
        loc: &Loc,
        end: &EndUse<'_>,
    ) -> Result<()> {
        let (predicate, role) = (end.predicate, end.role);
        let mut candidates = self.names_of(ty)?;
        if let Some(names) = self.keys.concepts.get(ty) {
            candidates.extend(
                names
                    .iter()
                    .filter(|&(_, &k)| {
                        matches!(
                            self.keys.seen(k),
                            Some(Seen::Upserted { .. } | Seen::Present)
                        )
                    })
                    .map(|(n, _)| n.clone()),
            );
        }
        let suggestions = suggest::similar(name, candidates.iter().map(String::as_str));
        let message = match suggestions.first() {
            Some(s) => format!(
                "Cannot create '{predicate}': {role} {ty} '{name}' not found. Did you mean '{s}'?"
            ),
            None => format!("Cannot create '{predicate}': {role} {ty} '{name}' not found"),
        };
        let e = ImportError::new(ErrorCode::NotFound, message)
            .hint(format!(
                "Create {ty} '{name}' with an item earlier in this file, or correct the name (names are exact and case-sensitive)."
            ))
            .suggestions(suggestions);
        self.report(e, loc);
        Ok(())
    }

    /// An end given as `{id}`: an element the nexus holds (and, for a
    /// concept, one the file has not deleted).
    fn resolve_id(&mut self, id: &str, loc: &Loc, end: &EndUse<'_>) -> Result<Option<End>> {
        let element = id.parse::<ElementId>().ok();
        let found = match element {
            Some(ElementId::Concept(c)) => match self.g.concept(c)? {
                Some(rec) => {
                    let ty = self.g.type_name(rec.type_id)?.to_string();
                    let k = self.keys.concept(&ty, &rec.name);
                    let deleted = matches!(self.keys.seen(k), Some(Seen::Deleted { .. }));
                    (!deleted).then_some((Kind::Concept(ty), Key::Concept(k)))
                }
                None => None,
            },
            Some(ElementId::Proposition(p)) => self
                .g
                .proposition(p)?
                .map(|_| (Kind::Proposition, Key::Id(self.keys.id(id)))),
            None => None,
        };
        match found {
            Some((kind, key)) => Ok(Some(End {
                kind,
                key,
                stored: element,
            })),
            None => {
                if end.must_exist {
                    let e = ImportError::new(
                        ErrorCode::NotFound,
                        format!("Cannot create '{}': {} {id} not found", end.predicate, end.role),
                    )
                    .hint("An {id} reference names an element that already exists (C:… concepts, P:… propositions). Find ids with SEARCH or FIND(?x.id), or refer to the concept by {type, name}.");
                    self.report(e, loc);
                }
                Ok(None)
            }
        }
    }

    /// An end that is itself a proposition `{type, source, target}`: its
    /// predicate defined, its own ends resolved, and the proposition stored
    /// or created earlier in the file (or not checkable, through a handle).
    fn resolve_link(&mut self, r: &Ref, l: &LinkRef, end: &EndUse<'_>) -> Result<Option<End>> {
        if !self.check_predicate(&l.predicate, &l.predicate_loc) {
            return Ok(None);
        }
        let must_exist = end.must_exist;
        let s = self.resolve(&l.subject, &l.predicate, self.roles.subject, must_exist)?;
        let o = self.resolve(&l.object, &l.predicate, self.roles.object, must_exist)?;
        let (Some(s), Some(o)) = (s, o) else {
            return Ok(None);
        };
        let k = self.keys.link(s.key, &l.predicate, o.key);
        let stored = match (s.stored, o.stored, self.g.predicate_id(&l.predicate)?) {
            (Some(si), Some(oi), Some(p)) => self
                .g
                .propositions(Some(si), Some(p), Some(oi))?
                .first()
                .map(|m| ElementId::Proposition(m.0)),
            _ => None,
        };
        let present = match &self.keys.link_seen[k as usize] {
            Some(Seen::Upserted { .. } | Seen::Present) => true,
            Some(Seen::Deleted { .. }) => false,
            None => stored.is_some() || s.kind == Kind::Unknown || o.kind == Kind::Unknown,
        };
        if !present {
            if must_exist {
                let e = ImportError::new(
                    ErrorCode::NotFound,
                    format!(
                        "Cannot create '{}': {} {} not found",
                        end.predicate,
                        end.role,
                        describe_ref(r)
                    ),
                )
                .hint("A proposition used as an end must exist: create it with an item earlier in this file.");
                self.report(e, &l.loc);
            }
            return Ok(None);
        }
        Ok(Some(End {
            kind: Kind::Proposition,
            key: Key::Link(k),
            stored,
        }))
    }

    fn check_end_type(
        &mut self,
        predicate: &str,
        end: &End,
        allowed: Option<&[String]>,
        role: &str,
        r: &Ref,
        at: &Loc,
    ) {
        let Some(allowed) = allowed else { return };
        let ok = match &end.kind {
            Kind::Concept(t) => allowed.iter().any(|a| a == t),
            Kind::Proposition => false,
            Kind::Unknown => true,
        };
        if ok {
            return;
        }
        let e = ImportError::new(
            ErrorCode::TypeMismatch,
            format!(
                "Cannot create '{predicate}': its {role} must be a {}, not {}",
                allowed.join(" or "),
                describe_ref(r)
            ),
        )
        .hint(format!(
            "Check the direction and the types: '{predicate}' goes from {} to {}.",
            self.predicate(predicate)
                .and_then(|d| d.end_types("subject_types"))
                .map_or("anything".to_owned(), |l| l.join(" or ")),
            self.predicate(predicate)
                .and_then(|d| d.end_types("object_types"))
                .map_or("anything".to_owned(), |l| l.join(" or ")),
        ));
        // A bundle points at the end; a capsule's subject is often the
        // enclosing CONCEPT block, so there the link itself is clearer.
        let loc = if self.strict {
            r.loc().cloned()
        } else {
            Some(at.clone())
        };
        if let Some(loc) = loc {
            self.report(e, &loc);
        }
    }

    /// Reports each key given two different values for one element.
    fn contradictions(
        &mut self,
        what: &str,
        old: &Seen,
        attrs: &Map<String, Json>,
        meta: &Map<String, Json>,
        loc: &Loc,
    ) {
        match old {
            Seen::Upserted {
                attrs: a0,
                meta: m0,
                loc: l0,
            } => {
                for (section, new, before) in [("", attrs, a0), ("metadata.", meta, m0)] {
                    for (k, v) in new {
                        if let Some(v0) = before.get(k)
                            && v0 != v
                        {
                            let e = ImportError::new(
                                ErrorCode::DuplicateExists,
                                format!(
                                    "{what} is given {section}{k} = {v} here but {v0} at {}",
                                    self.place(l0)
                                ),
                            )
                            .hint("One element, one value per key: keep one of the two, or merge the items.");
                            self.report(e, loc);
                        }
                    }
                }
            }
            Seen::Deleted { loc: l0 } => {
                let e = ImportError::new(
                    ErrorCode::DuplicateExists,
                    format!(
                        "{what} is deleted at {} and written again here",
                        self.place(l0)
                    ),
                )
                .hint("A bundle states what should be: keep either the delete or the item.");
                self.report(e, loc);
            }
            Seen::Present => {}
        }
    }

    /// Checks one op and records what it does.
    pub(crate) fn op(&mut self, op: &Op) -> Result<()> {
        match op {
            Op::Placeholder {
                ty,
                name,
                attrs,
                meta,
                loc,
            } => self.placeholder(ty, name, attrs, meta, loc),
            Op::ById { id, loc } => self.check_exists(id, loc)?,
            Op::Concept {
                ty,
                name,
                attrs,
                meta,
                action,
                loc,
                ty_loc,
            } => {
                if !self.check_type(ty, ty_loc) {
                    self.define(ty, name, attrs, *action == Action::Upsert);
                    let k = self.keys.concept(ty, name);
                    self.keys.slot(k).seen = Some(Seen::Present);
                    return Ok(());
                }
                match action {
                    Action::Upsert => {
                        let k = self.upsert_concept(ty, name, attrs, meta, loc)?;
                        self.look_ups.push(k);
                    }
                    Action::Delete => self.delete_concept(ty, name, attrs, loc),
                }
            }
            Op::Link {
                link,
                attrs,
                meta,
                action,
                loc,
            } => self.link(link, attrs, meta, *action, loc)?,
        }
        Ok(())
    }

    /// The ends of an upserted link a write looks up by type and name:
    /// those written in the link itself (a `SET PROPOSITIONS` entry's
    /// subject is its block, looked up with the block; a handle's end is
    /// not looked up again).
    fn note_look_ups(&mut self, link: &LinkRef, loc: &Loc, ends: [&End; 2]) {
        for (written, end) in [&link.subject, &link.object].into_iter().zip(ends) {
            if let (Ref::Concept { loc: at, .. }, Key::Concept(k)) = (written, end.key)
                && at.start >= loc.start
                && at.end <= loc.end
            {
                self.look_ups.push(k);
            }
        }
    }

    /// A concept item that failed earlier checks: it counts as present,
    /// and what it says still meets what the file said before.
    fn placeholder(
        &mut self,
        ty: &str,
        name: &str,
        attrs: &Map<String, Json>,
        meta: &Map<String, Json>,
        loc: &Loc,
    ) {
        self.define(ty, name, attrs, true);
        let k = self.keys.concept(ty, name);
        let seen = match self.keys.slot(k).seen.take() {
            Some(old) => {
                if self.strict {
                    self.contradictions(&format!("{ty} '{name}'"), &old, attrs, meta, loc);
                }
                Seen::Present
            }
            None => Seen::Upserted {
                attrs: Box::new(attrs.clone()),
                meta: Box::new(meta.clone()),
                loc: Box::new(loc.clone()),
            },
        };
        self.keys.slot(k).seen = Some(seen);
    }

    /// `{id: …}` as an item: the element must exist.
    fn check_exists(&mut self, id: &str, loc: &Loc) -> Result<()> {
        let exists = match id.parse::<ElementId>() {
            Ok(ElementId::Concept(c)) => self.g.concept(c)?.is_some(),
            Ok(ElementId::Proposition(p)) => self.g.proposition(p)?.is_some(),
            Err(_) => false,
        };
        if !exists {
            let e = ImportError::new(ErrorCode::NotFound, format!("element {id:?} does not exist"))
                .hint("{id: …} only matches an existing element. Find its id with SEARCH or FIND(?x.id), or refer to a concept by {type, name}.");
            self.report(e, loc);
        }
        Ok(())
    }

    /// An upserted concept of a defined type.
    fn upsert_concept(
        &mut self,
        ty: &str,
        name: &str,
        attrs: &Map<String, Json>,
        meta: &Map<String, Json>,
        loc: &Loc,
    ) -> Result<u32> {
        self.check_immutable_id(ty, name, attrs, loc)?;
        let k = self.keys.concept(ty, name);
        // A capsule compares nothing: what it gave a concept before matters
        // only for the `id` of `$self` and `$system`.
        let seen = if self.strict || has_immutable_id(ty, name) {
            let old = self.keys.slot(k).seen.take();
            self.upserted(|| format!("{ty} '{name}'"), old, attrs, meta, loc)
        } else {
            Seen::Present
        };
        self.define(ty, name, attrs, true);
        self.keys.slot(k).seen = Some(seen);
        Ok(k)
    }

    /// `$self` and `$system` keep their `id`.
    fn check_immutable_id(
        &mut self,
        ty: &str,
        name: &str,
        attrs: &Map<String, Json>,
        loc: &Loc,
    ) -> Result<()> {
        if !has_immutable_id(ty, name) {
            return Ok(());
        }
        let Some(new_id) = attrs.get("id") else {
            return Ok(());
        };
        let k = self.keys.concept(ty, name);
        let old_id = match self.keys.seen(k) {
            Some(Seen::Upserted { attrs: a, .. }) => a.get("id").cloned(),
            _ => match self.g.find_concept_by_names(ty, name)? {
                Some(c) => self
                    .g
                    .concept(c)?
                    .and_then(|r| r.attributes.get("id").cloned()),
                None => None,
            },
        };
        if old_id.as_ref().is_some_and(|o| o != new_id) {
            let e = ImportError::new(
                ErrorCode::ImmutableTarget,
                format!("{ty} '{name}' is protected and cannot be given a new `id`"),
            )
            .hint("The id of $self and $system never changes; leave `id` out, other attributes may grow.");
            self.report(e, loc);
        }
        Ok(())
    }

    /// A deleted concept of a defined type.
    fn delete_concept(&mut self, ty: &str, name: &str, attrs: &Map<String, Json>, loc: &Loc) {
        let what = format!("{ty} '{name}'");
        if is_protected(ty, name) {
            let e = ImportError::new(
                ErrorCode::ImmutableTarget,
                format!("{what} is protected and cannot be deleted"),
            )
            .hint("The meta-types, $self, $system, the CoreSchema domain and belongs_to_domain are the nexus's foundation; remove this item.");
            self.report(e, loc);
        }
        let k = self.keys.concept(ty, name);
        if let Some(e) = self.written_then_deleted(|| what, self.keys.seen(k)) {
            self.report(e, loc);
        }
        self.define(ty, name, attrs, false);
        self.keys.slot(k).seen = Some(Seen::Deleted {
            loc: Box::new(loc.clone()),
        });
    }

    /// What an upsert leaves on record for an element, given what the file
    /// did to it before: the keys merged over the earlier ones (an upsert
    /// merges), and in a bundle every key given a second, different value
    /// reported. Concepts and propositions alike.
    fn upserted(
        &mut self,
        what: impl FnOnce() -> String,
        old: Option<Seen>,
        attrs: &Map<String, Json>,
        meta: &Map<String, Json>,
        loc: &Loc,
    ) -> Seen {
        let (attrs, meta) = match old {
            Some(old) => {
                if self.strict {
                    self.contradictions(&what(), &old, attrs, meta, loc);
                }
                match old {
                    Seen::Upserted {
                        attrs: mut a0,
                        meta: mut m0,
                        ..
                    } => {
                        a0.extend(attrs.clone());
                        m0.extend(meta.clone());
                        (a0, m0)
                    }
                    _ => (Box::new(attrs.clone()), Box::new(meta.clone())),
                }
            }
            None => (Box::new(attrs.clone()), Box::new(meta.clone())),
        };
        Seen::Upserted {
            attrs,
            meta,
            loc: Box::new(loc.clone()),
        }
    }

    /// In a bundle, an element written earlier in the file and deleted
    /// here is a contradiction. Concepts and propositions alike.
    fn written_then_deleted(
        &self,
        what: impl FnOnce() -> String,
        old: Option<&Seen>,
    ) -> Option<ImportError> {
        match old {
            Some(Seen::Upserted { loc: l0, .. }) if self.strict => Some(
                ImportError::new(
                    ErrorCode::DuplicateExists,
                    format!(
                        "{} is written at {} and deleted here",
                        what(),
                        self.place(l0)
                    ),
                )
                .hint("A bundle states what should be: keep either the item or the delete."),
            ),
            _ => None,
        }
    }

    fn link(
        &mut self,
        link: &LinkRef,
        attrs: &Map<String, Json>,
        meta: &Map<String, Json>,
        action: Action,
        loc: &Loc,
    ) -> Result<()> {
        let p = &link.predicate;
        if !self.check_predicate(p, &link.predicate_loc) {
            return Ok(());
        }
        let must_exist = action == Action::Upsert;
        let (sr, or) = (self.roles.subject, self.roles.object);
        let s = self.resolve(&link.subject, p, sr, must_exist)?;
        let o = self.resolve(&link.object, p, or, must_exist)?;
        let (Some(s), Some(o)) = (s, o) else {
            return Ok(());
        };
        if must_exist {
            let sig = self.signature(p);
            let (subject, object) = (sig.subject.as_deref(), sig.object.as_deref());
            self.check_end_type(p, &s, subject, sr, &link.subject, loc);
            self.check_end_type(p, &o, object, or, &link.object, loc);
            self.look_up_link(p, &s, &o)?;
            self.note_look_ups(link, loc, [&s, &o]);
        }
        let k = self.keys.link(s.key, p, o.key) as usize;
        let what = || {
            format!(
                "proposition {}",
                describe_ref(&Ref::Link(Box::new(link.clone())))
            )
        };
        let seen = match action {
            // A capsule's later writes simply win: what a link was given
            // before is never compared, only that it is there (a 20,000-link
            // capsule would otherwise copy each link's metadata here).
            Action::Upsert if !self.strict => Seen::Present,
            Action::Upsert => {
                let old = self.keys.link_seen[k].take();
                self.upserted(what, old, attrs, meta, loc)
            }
            Action::Delete => {
                let old = self.keys.link_seen[k].as_ref();
                if let Some(e) = self.written_then_deleted(what, old) {
                    self.report(e, loc);
                }
                Seen::Deleted {
                    loc: Box::new(loc.clone()),
                }
            }
        };
        self.keys.link_seen[k] = Some(seen);
        Ok(())
    }

    /// The end types predicate `p` allows, as its definition says now
    /// (any, if it is not defined).
    fn signature(&mut self, p: &str) -> Rc<Signature> {
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
    fn define(&mut self, ty: &str, name: &str, attrs: &Map<String, Json>, upsert: bool) {
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

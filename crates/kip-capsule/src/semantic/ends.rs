//! Resolving a proposition's ends: a concept by type and name, an element
//! by `{id}`, a nested proposition, each found in the snapshot or earlier
//! in the file (and not deleted since), with the errors that say what is
//! missing; and whether an end has a type the predicate allows.

use kip_lang::{ErrorCode, suggest};
use kip_nexus::{ConceptId, ElementId, Result};

use crate::ops::{LinkRef, Loc, Ref};
use crate::report::ImportError;

use super::checker::Checker;
use super::keys::{End, EndUse, Key, Kind, Seen};
use super::names::describe_ref;

impl<'a, 'g> Checker<'a, 'g> {
    /// Resolves an end; reports what is wrong with it when `must_exist`.
    pub(super) fn resolve(
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

    pub(super) fn check_end_type(
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
}

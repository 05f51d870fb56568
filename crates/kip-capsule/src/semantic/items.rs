//! Checking each op of a file and recording what it does to its element:
//! concepts upserted or deleted, propositions written or removed, `{id}`
//! items, protected elements, and in a bundle the contradictions between
//! items (two values for one key, an element written and deleted).

use kip_lang::ErrorCode;
use kip_nexus::{ElementId, Result, has_immutable_id, is_protected};
use serde_json::{Map, Value as Json};

use crate::ops::{Action, LinkRef, Loc, Op, Ref};
use crate::report::ImportError;

use super::checker::Checker;
use super::keys::{End, Key, Seen};
use super::names::describe_ref;

impl<'a, 'g> Checker<'a, 'g> {
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
        if self.owner || !has_immutable_id(ty, name) {
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
}

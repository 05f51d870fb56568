//! KIP → ops: a capsule's UPSERTs lowered into ops, whole or a few
//! commands at a time, only so that the meaning checks can report every
//! problem at once.

use std::collections::HashMap;

use kip_lang::ast::{
    Arg, Command, ConceptBlock, ConceptMatcher, Object, PredicateExpr, PropositionBlock,
    PropositionMatcher, Span, Term, Triple, Upsert, UpsertItem,
};
use serde_json::{Map, Value as Json};

use super::{Action, LinkRef, Loc, Op, Ref};

pub(super) fn object_json(o: Option<&Object>) -> Map<String, Json> {
    o.and_then(Object::to_json).unwrap_or_default()
}

pub(super) fn merged(base: &Map<String, Json>, over: &Map<String, Json>) -> Map<String, Json> {
    let mut out = base.clone();
    for (k, v) in over {
        out.insert(k.clone(), v.clone());
    }
    out
}

pub(super) fn lit(arg: &Arg<String>) -> Option<&str> {
    arg.lit().map(String::as_str)
}

pub(super) fn term(t: &Term, handles: &HashMap<String, Ref>) -> Ref {
    match t {
        Term::Var(v) => handles.get(&v.name).cloned().unwrap_or(Ref::Unknown),
        Term::Concept(ConceptMatcher::TypeName { ty, name }, span) => match (lit(ty), lit(name)) {
            (Some(t), Some(n)) => Ref::Concept {
                ty: t.to_owned(),
                name: n.to_owned(),
                ty_loc: Loc::of_span(ty.span()),
                loc: Loc::of_span(*span),
            },
            _ => Ref::Unknown,
        },
        Term::Concept(ConceptMatcher::Id(id), span)
        | Term::Proposition(PropositionMatcher::Id(id), span) => match lit(id) {
            Some(i) => Ref::Id {
                id: i.to_owned(),
                loc: Loc::of_span(*span),
            },
            None => Ref::Unknown,
        },
        Term::Concept(_, _) => Ref::Unknown,
        Term::Proposition(PropositionMatcher::Triple(t), span) => match triple(t, handles, *span) {
            Some(l) => Ref::Link(Box::new(l)),
            None => Ref::Unknown,
        },
    }
}

pub(super) fn triple(t: &Triple, handles: &HashMap<String, Ref>, span: Span) -> Option<LinkRef> {
    let PredicateExpr::Names { names, .. } = &t.predicate else {
        return None;
    };
    let first = names.first()?;
    Some(LinkRef {
        subject: term(&t.subject, handles),
        predicate: lit(first)?.to_owned(),
        predicate_loc: Loc::of_span(first.span()),
        object: term(&t.object, handles),
        loc: Loc::of_span(span),
    })
}

/// The UPSERTs of a bound capsule as ops (other commands are left to the
/// nexus).
pub(crate) fn lower_kip(commands: &[Command]) -> Vec<Op> {
    // At most one op per block and one per `SET PROPOSITIONS` entry: sized
    // once, a capsule of tens of thousands of links is not copied over
    // again each time the list would grow.
    let most: usize = commands
        .iter()
        .filter_map(|c| match c {
            Command::Upsert(u) => Some(&u.items),
            _ => None,
        })
        .flatten()
        .map(|item| match item {
            UpsertItem::Concept(c) => 1 + c.propositions.as_ref().map_or(0, Vec::len),
            UpsertItem::Proposition(_) => 1,
        })
        .sum();
    let mut ops = Vec::with_capacity(most);
    for command in commands {
        if let Command::Upsert(u) = command {
            lower_upsert(u, &mut ops);
        }
    }
    ops
}

/// One UPSERT's items as ops. A handle names the element of an earlier
/// item of the same UPSERT (a block's own handle is not yet known to its
/// own `SET PROPOSITIONS`).
pub(super) fn lower_upsert(u: &Upsert, ops: &mut Vec<Op>) {
    let defaults = object_json(u.metadata.as_ref());
    let mut handles: HashMap<String, Ref> = HashMap::new();
    for item in &u.items {
        lower_item(item, &defaults, &mut handles, ops);
    }
}

/// One item of an UPSERT as ops, its handle (if any) added to `handles`.
pub(super) fn lower_item(
    item: &UpsertItem,
    defaults: &Map<String, Json>,
    handles: &mut HashMap<String, Ref>,
    ops: &mut Vec<Op>,
) {
    let (handle, me) = match item {
        UpsertItem::Concept(c) => (&c.handle, lower_concept(c, defaults, handles, ops)),
        UpsertItem::Proposition(p) => (&p.handle, lower_proposition(p, defaults, handles, ops)),
    };
    if let Some(h) = handle {
        handles.insert(h.name.clone(), me);
    }
}

/// [`lower_kip`] a few items at a time, for a capsule that defines no type
/// or predicate (see [`defines_schema`]): its checks need no look ahead,
/// so a capsule of tens of thousands of links is checked without holding
/// all its ops (about 600 bytes a link).
pub(crate) struct Lowering<'c> {
    pub(super) commands: &'c [Command],
    /// The command and the item of it to lower next.
    pub(super) command: usize,
    pub(super) item: usize,
    /// The current UPSERT's default metadata and handles.
    pub(super) defaults: Map<String, Json>,
    pub(super) handles: HashMap<String, Ref>,
}

impl<'c> Lowering<'c> {
    pub(crate) fn new(commands: &'c [Command]) -> Lowering<'c> {
        Lowering {
            commands,
            command: 0,
            item: 0,
            defaults: Map::new(),
            handles: HashMap::new(),
        }
    }

    /// Whether every item is lowered.
    pub(crate) fn done(&self) -> bool {
        self.commands[self.command.min(self.commands.len())..]
            .iter()
            .enumerate()
            .all(|(i, c)| match c {
                Command::Upsert(u) => {
                    let from = if i == 0 { self.item } else { 0 };
                    from >= u.items.len()
                }
                _ => true,
            })
    }

    /// Replaces `ops` with the ops of the next `items` items (fewer at the
    /// end); `false` once every item is lowered.
    pub(crate) fn next(&mut self, items: usize, ops: &mut Vec<Op>) -> bool {
        ops.clear();
        let mut lowered = 0;
        while lowered < items {
            let Some(command) = self.commands.get(self.command) else {
                break;
            };
            let Command::Upsert(u) = command else {
                self.command += 1;
                continue;
            };
            if self.item == 0 {
                self.defaults = object_json(u.metadata.as_ref());
                self.handles.clear();
            }
            let Some(item) = u.items.get(self.item) else {
                (self.command, self.item) = (self.command + 1, 0);
                continue;
            };
            lower_item(item, &self.defaults, &mut self.handles, ops);
            self.item += 1;
            lowered += 1;
        }
        lowered > 0
    }
}

/// Whether a capsule may define a type or a predicate: a CONCEPT block of
/// `$ConceptType` or `$PropositionType`, or one whose type is not written
/// out. The checks of a capsule that does must know every definition
/// before the first item (to tell a use before its definition).
pub(crate) fn defines_schema(commands: &[Command]) -> bool {
    let upserts = commands.iter().filter_map(|c| match c {
        Command::Upsert(u) => Some(u),
        _ => None,
    });
    upserts.flat_map(|u| &u.items).any(|item| match item {
        UpsertItem::Concept(c) => match &c.matcher {
            ConceptMatcher::TypeName { ty, .. } => match lit(ty) {
                Some(ty) => ty == kip_nexus::CONCEPT_TYPE || ty == kip_nexus::PROPOSITION_TYPE,
                None => true,
            },
            _ => false,
        },
        UpsertItem::Proposition(_) => false,
    })
}

/// A CONCEPT block as ops (the concept, then each of its `SET
/// PROPOSITIONS`); returns what its handle refers to.
pub(super) fn lower_concept(
    c: &ConceptBlock,
    defaults: &Map<String, Json>,
    handles: &HashMap<String, Ref>,
    ops: &mut Vec<Op>,
) -> Ref {
    let meta = merged(defaults, &object_json(c.metadata.as_ref()));
    let attrs = object_json(c.attributes.as_ref());
    let me = match &c.matcher {
        ConceptMatcher::TypeName { ty, name } => match (lit(ty), lit(name)) {
            (Some(t), Some(n)) => {
                ops.push(Op::Concept {
                    ty: t.to_owned(),
                    name: n.to_owned(),
                    attrs,
                    meta: meta.clone(),
                    action: Action::Upsert,
                    loc: Loc::of_span(c.span),
                    ty_loc: Loc::of_span(ty.span()),
                });
                Ref::Concept {
                    ty: t.to_owned(),
                    name: n.to_owned(),
                    ty_loc: Loc::of_span(ty.span()),
                    loc: Loc::of_span(c.span),
                }
            }
            _ => Ref::Unknown,
        },
        ConceptMatcher::Id(id) => lower_id(id, ops),
        _ => Ref::Unknown,
    };
    for entry in c.propositions.iter().flatten() {
        let Some(predicate) = lit(&entry.predicate) else {
            continue;
        };
        ops.push(Op::Link {
            link: Box::new(LinkRef {
                subject: me.clone(),
                predicate: predicate.to_owned(),
                predicate_loc: Loc::of_span(entry.predicate.span()),
                object: term(&entry.target, handles),
                loc: Loc::of_span(entry.span),
            }),
            attrs: Map::new(),
            meta: merged(&meta, &object_json(entry.metadata.as_ref())),
            action: Action::Upsert,
            loc: Loc::of_span(entry.span),
        });
    }
    me
}

/// A PROPOSITION block as an op; returns what its handle refers to.
pub(super) fn lower_proposition(
    p: &PropositionBlock,
    defaults: &Map<String, Json>,
    handles: &HashMap<String, Ref>,
    ops: &mut Vec<Op>,
) -> Ref {
    let meta = merged(defaults, &object_json(p.metadata.as_ref()));
    let attrs = object_json(p.attributes.as_ref());
    match &p.matcher {
        PropositionMatcher::Triple(t) => match triple(t, handles, p.span) {
            Some(link) => {
                ops.push(Op::Link {
                    link: Box::new(link.clone()),
                    attrs,
                    meta,
                    action: Action::Upsert,
                    loc: Loc::of_span(p.span),
                });
                Ref::Link(Box::new(link))
            }
            None => Ref::Unknown,
        },
        PropositionMatcher::Id(id) => lower_id(id, ops),
    }
}

/// A block that matches an element by `{id: …}`, concept or proposition.
pub(super) fn lower_id(id: &Arg<String>, ops: &mut Vec<Op>) -> Ref {
    match lit(id) {
        Some(i) => {
            ops.push(Op::ById {
                id: i.to_owned(),
                loc: Loc::of_span(id.span()),
            });
            Ref::Id {
                id: i.to_owned(),
                loc: Loc::of_span(id.span()),
            }
        }
        None => Ref::Unknown,
    }
}

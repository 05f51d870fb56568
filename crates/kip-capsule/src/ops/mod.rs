//! The import's plan: what a file asks of the nexus, as a list of [`Op`]s
//! in file order, whichever format it came in.
//!
//! A YAML bundle is read into ops (by [`crate::bundle`]) and the ops become
//! KIP commands ([`to_commands`]) that the nexus runs in one transaction. A
//! `.kip` capsule runs as written; its UPSERTs are lowered into ops
//! ([`lower_kip`]) only so that the meaning checks of [`crate::semantic`]
//! can report every problem at once, which the nexus, stopping at the
//! first, cannot. Either way the nexus is the final judge of every write.
//!
//! Spans are byte ranges of the file's own text; commands built here carry
//! them too, so an error the nexus raises while applying a bundle points at
//! the YAML line it came from.

use std::collections::HashMap;

use kip_lang::ast::{
    Arg, Command, ConceptBlock, ConceptClause, ConceptMatcher, Delete, DeleteTarget, Group, Object,
    Pattern, PredicateExpr, PropositionBlock, PropositionClause, PropositionMatcher, Span, Term,
    Triple, Upsert, UpsertItem, Value, Var,
};
use serde_json::{Map, Value as Json};

/// Where something is: a path inside a bundle (`[4].source`) and its bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Loc {
    pub(crate) path: Option<String>,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

impl Loc {
    pub(crate) fn span(&self) -> Span {
        Span::new(self.start, self.end.max(self.start))
    }

    fn of_span(span: Span) -> Loc {
        Loc {
            path: None,
            start: span.start,
            end: span.end,
        }
    }
}

/// A reference to an element from a proposition's end.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ref {
    Concept {
        ty: String,
        name: String,
        ty_loc: Loc,
        loc: Loc,
    },
    Id {
        id: String,
        loc: Loc,
    },
    Link(Box<LinkRef>),
    /// A KIP handle the checks cannot follow; the nexus will.
    Unknown,
}

impl Ref {
    pub(crate) fn loc(&self) -> Option<&Loc> {
        match self {
            Ref::Concept { loc, .. } | Ref::Id { loc, .. } => Some(loc),
            Ref::Link(l) => Some(&l.loc),
            Ref::Unknown => None,
        }
    }
}

/// A proposition by its ends.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LinkRef {
    pub(crate) subject: Ref,
    pub(crate) predicate: String,
    pub(crate) predicate_loc: Loc,
    pub(crate) object: Ref,
    pub(crate) loc: Loc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Upsert,
    Delete,
}

/// One step of an import.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Op {
    Concept {
        ty: String,
        name: String,
        attrs: Map<String, Json>,
        meta: Map<String, Json>,
        action: Action,
        loc: Loc,
        ty_loc: Loc,
    },
    /// A KIP block that matches an existing element by id.
    ById { id: String, loc: Loc },
    Link {
        link: Box<LinkRef>,
        attrs: Map<String, Json>,
        meta: Map<String, Json>,
        action: Action,
        loc: Loc,
    },
    /// A bundle item that failed the structure check: its identity is known
    /// (so later items that refer to it are not reported a second time),
    /// nothing else about it is checked, and nothing is applied.
    Placeholder {
        ty: String,
        name: String,
        attrs: Map<String, Json>,
        meta: Map<String, Json>,
        loc: Loc,
    },
}

// ------------------------------------------------------------------ KIP → ops

fn object_json(o: Option<&Object>) -> Map<String, Json> {
    o.and_then(Object::to_json).unwrap_or_default()
}

fn merged(base: &Map<String, Json>, over: &Map<String, Json>) -> Map<String, Json> {
    let mut out = base.clone();
    for (k, v) in over {
        out.insert(k.clone(), v.clone());
    }
    out
}

fn lit(arg: &Arg<String>) -> Option<&str> {
    arg.lit().map(String::as_str)
}

fn term(t: &Term, handles: &HashMap<String, Ref>) -> Ref {
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

fn triple(t: &Triple, handles: &HashMap<String, Ref>, span: Span) -> Option<LinkRef> {
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
fn lower_upsert(u: &Upsert, ops: &mut Vec<Op>) {
    let defaults = object_json(u.metadata.as_ref());
    let mut handles: HashMap<String, Ref> = HashMap::new();
    for item in &u.items {
        lower_item(item, &defaults, &mut handles, ops);
    }
}

/// One item of an UPSERT as ops, its handle (if any) added to `handles`.
fn lower_item(
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
    commands: &'c [Command],
    /// The command and the item of it to lower next.
    command: usize,
    item: usize,
    /// The current UPSERT's default metadata and handles.
    defaults: Map<String, Json>,
    handles: HashMap<String, Ref>,
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
fn lower_concept(
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
fn lower_proposition(
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
fn lower_id(id: &Arg<String>, ops: &mut Vec<Op>) -> Ref {
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

// ------------------------------------------------------------------ ops → KIP

fn object(map: &Map<String, Json>, span: Span) -> Option<Object> {
    if map.is_empty() {
        return None;
    }
    Some(Object {
        members: map
            .iter()
            .map(|(k, v)| (k.clone(), Value::from_json(v, span)))
            .collect(),
        span,
    })
}

fn text(s: &str, loc: &Loc) -> Arg<String> {
    Arg::Lit(s.to_owned(), loc.span())
}

fn ref_term(r: &Ref) -> Term {
    match r {
        Ref::Concept {
            ty,
            name,
            ty_loc,
            loc,
        } => Term::Concept(
            ConceptMatcher::TypeName {
                ty: text(ty, ty_loc),
                name: text(name, loc),
            },
            loc.span(),
        ),
        Ref::Id { id, loc } if id.starts_with("P:") => {
            Term::Proposition(PropositionMatcher::Id(text(id, loc)), loc.span())
        }
        Ref::Id { id, loc } => Term::Concept(ConceptMatcher::Id(text(id, loc)), loc.span()),
        Ref::Link(l) => Term::Proposition(
            PropositionMatcher::Triple(Box::new(link_triple(l))),
            l.loc.span(),
        ),
        // Bundles never produce unknown references; an empty id fails in
        // the nexus with a positioned "does not exist" rather than panicking.
        Ref::Unknown => Term::Concept(
            ConceptMatcher::Id(Arg::Lit(String::new(), Span::default())),
            Span::default(),
        ),
    }
}

fn link_triple(l: &LinkRef) -> Triple {
    Triple {
        subject: ref_term(&l.subject),
        predicate: PredicateExpr::Names {
            names: vec![text(&l.predicate, &l.predicate_loc)],
            hops: None,
            span: l.predicate_loc.span(),
        },
        object: ref_term(&l.object),
    }
}

/// The KIP commands that apply a bundle's ops, in order: runs of upserts
/// become one UPSERT each, every delete a DELETE.
pub(crate) fn to_commands(ops: &[Op]) -> Vec<Command> {
    let mut commands = Vec::new();
    let mut run = UpsertRun::default();
    for op in ops {
        match op {
            Op::Concept {
                ty,
                name,
                attrs,
                meta,
                action: Action::Upsert,
                loc,
                ty_loc,
            } => run.push(concept_block(ty, name, attrs, meta, loc, ty_loc), loc),
            Op::Link {
                link,
                attrs,
                meta,
                action: Action::Upsert,
                loc,
            } => run.push(proposition_block(link, attrs, meta, loc), loc),
            Op::Concept {
                ty,
                name,
                action: Action::Delete,
                loc,
                ty_loc,
                ..
            } => {
                run.flush(&mut commands);
                commands.push(delete_concept(ty, name, loc, ty_loc));
            }
            Op::Link {
                link,
                action: Action::Delete,
                loc,
                ..
            } => {
                run.flush(&mut commands);
                commands.push(delete_link(link, loc));
            }
            Op::ById { .. } | Op::Placeholder { .. } => {}
        }
    }
    run.flush(&mut commands);
    commands
}

/// Consecutive upserted items, gathered into one UPSERT spanning them.
#[derive(Default)]
struct UpsertRun {
    items: Vec<UpsertItem>,
    first: Option<Span>,
    last: Span,
}

impl UpsertRun {
    fn push(&mut self, item: UpsertItem, loc: &Loc) {
        let span = loc.span();
        self.first.get_or_insert(span);
        self.last = span;
        self.items.push(item);
    }

    /// Ends the run: its UPSERT, if it holds any item, goes to `commands`.
    fn flush(&mut self, commands: &mut Vec<Command>) {
        if self.items.is_empty() {
            return;
        }
        let start = self.first.take().unwrap_or_default();
        let span = Span::new(start.start, self.last.end.max(start.start));
        commands.push(Command::Upsert(Upsert {
            items: std::mem::take(&mut self.items),
            metadata: None,
            body: span,
            span,
        }));
    }
}

fn concept_block(
    ty: &str,
    name: &str,
    attrs: &Map<String, Json>,
    meta: &Map<String, Json>,
    loc: &Loc,
    ty_loc: &Loc,
) -> UpsertItem {
    let span = loc.span();
    UpsertItem::Concept(ConceptBlock {
        handle: None,
        matcher: ConceptMatcher::TypeName {
            ty: text(ty, ty_loc),
            name: text(name, loc),
        },
        expect_version: None,
        attributes: object(attrs, span),
        propositions: None,
        metadata: object(meta, span),
        body: span,
        span,
    })
}

fn proposition_block(
    link: &LinkRef,
    attrs: &Map<String, Json>,
    meta: &Map<String, Json>,
    loc: &Loc,
) -> UpsertItem {
    let span = loc.span();
    UpsertItem::Proposition(PropositionBlock {
        handle: None,
        matcher: PropositionMatcher::Triple(Box::new(link_triple(link))),
        expect_version: None,
        attributes: object(attrs, span),
        metadata: object(meta, span),
        body: span,
        span,
    })
}

/// `DELETE CONCEPT ?n DETACH WHERE { ?n {type, name} }`.
fn delete_concept(ty: &str, name: &str, loc: &Loc, ty_loc: &Loc) -> Command {
    let span = loc.span();
    let var = Var {
        name: "n".into(),
        span,
    };
    Command::Delete(Delete {
        target: DeleteTarget::Concept,
        var: var.clone(),
        where_: Group {
            items: vec![Pattern::Concept(ConceptClause {
                var: Some(var),
                matcher: ConceptMatcher::TypeName {
                    ty: text(ty, ty_loc),
                    name: text(name, loc),
                },
                span,
            })],
            span,
        },
        span,
    })
}

/// `DELETE PROPOSITIONS ?l WHERE { ?l (subject, predicate, object) }`.
fn delete_link(link: &LinkRef, loc: &Loc) -> Command {
    let span = loc.span();
    let var = Var {
        name: "l".into(),
        span,
    };
    Command::Delete(Delete {
        target: DeleteTarget::Propositions,
        var: var.clone(),
        where_: Group {
            items: vec![Pattern::Proposition(PropositionClause {
                var: Some(var),
                matcher: PropositionMatcher::Triple(Box::new(link_triple(link))),
                span,
            })],
            span,
        },
        span,
    })
}

#[cfg(test)]
mod tests {
    use super::{Lowering, defines_schema, lower_kip};

    fn commands(text: &str) -> Vec<kip_lang::ast::Command> {
        let commands = kip_lang::parse(text).expect("parses");
        kip_lang::bind(text, commands, &serde_json::Map::new()).expect("binds")
    }

    /// Lowered a few items at a time, a capsule gives the ops it gives
    /// whole: handles and default metadata carry across the cuts, and each
    /// UPSERT starts afresh.
    #[test]
    fn lowering_in_chunks_gives_the_ops_of_the_whole() {
        let text = r#"UPSERT {
  CONCEPT ?a { {type: "Drug", name: "A"} SET ATTRIBUTES { x: 1 } }
  CONCEPT ?b { {type: "Symptom", name: "B"} }
  CONCEPT { {type: "Drug", name: "C"} SET PROPOSITIONS { ("treats", ?b) ("treats", {type: "Symptom", name: "D"}) } }
  PROPOSITION ?p { (?a, "treats", ?b) }
  CONCEPT { {type: "Drug", name: "E"} SET PROPOSITIONS { ("cites", ?p) } }
} WITH METADATA { source: "one" }
FIND(?x) WHERE { ?x {type: "Drug"} }
UPSERT {
  CONCEPT ?b { {type: "Symptom", name: "G"} }
  CONCEPT { {type: "Drug", name: "F"} SET PROPOSITIONS { ("treats", ?b) } }
} WITH METADATA { source: "two" }"#;
        let commands = commands(text);
        let whole = lower_kip(&commands);
        assert!(whole.len() > 8);
        for size in [1, 2, 3, 7, 1000] {
            let mut lowering = Lowering::new(&commands);
            let (mut chunked, mut ops) = (Vec::new(), Vec::new());
            while lowering.next(size, &mut ops) {
                assert!(ops.len() <= 3 * size, "{size}: {}", ops.len());
                chunked.append(&mut ops);
            }
            assert!(lowering.done());
            assert_eq!(chunked, whole, "chunks of {size}");
        }
        assert!(!defines_schema(&commands));
    }

    #[test]
    fn a_capsule_that_defines_a_type_or_a_predicate_is_lowered_whole() {
        let defines = r#"UPSERT { CONCEPT { {type: "$ConceptType", name: "Gene"} } CONCEPT { {type: "Gene", name: "g"} } }"#;
        assert!(defines_schema(&commands(defines)));
        let predicate = r#"UPSERT { CONCEPT { {type: "$PropositionType", name: "binds"} } }"#;
        assert!(defines_schema(&commands(predicate)));
    }
}

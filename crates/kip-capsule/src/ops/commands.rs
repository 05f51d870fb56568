//! Ops → KIP: the commands a bundle's ops run as, carrying the bundle's
//! spans so that the nexus's errors point at the YAML line.

use kip_lang::ast::{
    Arg, Command, ConceptBlock, ConceptClause, ConceptMatcher, Delete, DeleteTarget, Group, Object,
    Pattern, PredicateExpr, PropositionBlock, PropositionClause, PropositionMatcher, Span, Term,
    Triple, Upsert, UpsertItem, Value, Var,
};
use serde_json::{Map, Value as Json};

use super::{Action, LinkRef, Loc, Op, Ref};

pub(super) fn object(map: &Map<String, Json>, span: Span) -> Option<Object> {
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

pub(super) fn text(s: &str, loc: &Loc) -> Arg<String> {
    Arg::Lit(s.to_owned(), loc.span())
}

pub(super) fn ref_term(r: &Ref) -> Term {
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

pub(super) fn link_triple(l: &LinkRef) -> Triple {
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
pub(super) struct UpsertRun {
    pub(super) items: Vec<UpsertItem>,
    pub(super) first: Option<Span>,
    pub(super) last: Span,
}

impl UpsertRun {
    pub(super) fn push(&mut self, item: UpsertItem, loc: &Loc) {
        let span = loc.span();
        self.first.get_or_insert(span);
        self.last = span;
        self.items.push(item);
    }

    /// Ends the run: its UPSERT, if it holds any item, goes to `commands`.
    pub(super) fn flush(&mut self, commands: &mut Vec<Command>) {
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

pub(super) fn concept_block(
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

pub(super) fn proposition_block(
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
pub(super) fn delete_concept(ty: &str, name: &str, loc: &Loc, ty_loc: &Loc) -> Command {
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
pub(super) fn delete_link(link: &LinkRef, loc: &Loc) -> Command {
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

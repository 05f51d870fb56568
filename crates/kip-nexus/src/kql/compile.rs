//! Compiling a WHERE block: type and predicate names are resolved against
//! the in-graph schema (`KIP_2001` for an undefined one, with suggestions)
//! and the block is flattened into [`Atom`]s over variable slots. Inline
//! `{…}` concepts and nested `(…)` propositions become hidden slots with
//! their own atoms, so every proposition atom joins three slots.
//!
//! Compiling reads names and ids, never instances: what matches is the
//! executor's business.
//!
//! Compiling and executing recurse once per nested block and FILTER
//! expression level, relying on the parser's proof that neither nests
//! deeper than `kip_lang::MAX_DEPTH` (`tests/nesting.rs` runs both limits
//! at once on a 2 MiB stack).

use kip_lang::ast::*;
use kip_lang::{ErrorCode, KipError};
use kip_store::{ConceptId, ElementId, PropositionId};

use crate::graph::{Graph, Result};

use super::index::IndexUse;

/// A variable's position in a row.
pub type Slot = usize;

/// Variable names and their slots; hidden slots have no name.
#[derive(Debug, Default)]
pub struct Vars {
    pub(super) names: Vec<Option<String>>,
}

impl Vars {
    pub fn slot(&mut self, name: &str) -> Slot {
        if let Some(i) = self.names.iter().position(|n| n.as_deref() == Some(name)) {
            return i;
        }
        self.names.push(Some(name.to_owned()));
        self.names.len() - 1
    }

    pub(super) fn hidden(&mut self) -> Slot {
        self.names.push(None);
        self.names.len() - 1
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub(super) fn visible(&self) -> Vec<Slot> {
        (0..self.names.len())
            .filter(|&i| self.names[i].is_some())
            .collect()
    }
}

/// A concept test with names already resolved against the store.
#[derive(Debug)]
pub(crate) enum ConceptTest {
    /// `{id}` or `{type, name}`: one concept, or none if it does not exist.
    One(Option<ConceptId>),
    Type(u32),
    Name(String),
}

#[derive(Debug)]
pub(crate) enum PredTest {
    Var(Slot),
    Names(Vec<u32>),
    Path {
        preds: Vec<u32>,
        min: u32,
        max: Option<u32>,
        /// Where the hop range is written.
        hops: Span,
    },
}

#[derive(Debug)]
pub(crate) enum Atom {
    Concept {
        var: Slot,
        test: ConceptTest,
        /// The pattern as written, for `explain`.
        matcher: ConceptMatcher,
        /// For a type clause, the attribute-index lookup its block's
        /// FILTERs allow ([`super::index`]).
        index: Option<Box<IndexUse>>,
    },
    PropId {
        var: Slot,
        id: Option<PropositionId>,
    },
    Prop {
        var: Option<Slot>,
        s: Slot,
        pred: PredTest,
        o: Slot,
        /// Where the subject and object are written (for suggested edits).
        ends: (Span, Span),
    },
}

impl Atom {
    pub(super) fn slots(&self) -> Vec<Slot> {
        match self {
            Atom::Concept { var, .. } | Atom::PropId { var, .. } => vec![*var],
            Atom::Prop {
                var, s, pred, o, ..
            } => {
                let mut v = vec![*s, *o];
                v.extend(var.iter().copied());
                if let PredTest::Var(p) = pred {
                    v.push(*p);
                }
                v
            }
        }
    }
}

/// A compiled WHERE block.
#[derive(Debug, Default)]
pub struct CompiledGroup {
    /// Each atom with the source range of the clause (or inline term) it
    /// comes from.
    pub(crate) atoms: Vec<(Atom, Span)>,
    pub(crate) filters: Vec<(Expr, Vec<Slot>, Span)>,
    pub(super) nots: Vec<CompiledGroup>,
    pub(super) optionals: Vec<CompiledGroup>,
    pub(super) unions: Vec<CompiledGroup>,
    pub(super) span: Span,
}

/// Compiles a group, resolving type and predicate names (`KIP_2001` for an
/// undefined one, with suggestions).
pub fn compile(
    graph: &Graph<'_>,
    source: &str,
    group: &Group,
    vars: &mut Vars,
) -> Result<CompiledGroup> {
    let mut compiler = Compiler {
        graph,
        source,
        vars,
    };
    compiler.group(group)
}

struct Compiler<'g, 't, 'v> {
    graph: &'g Graph<'t>,
    source: &'g str,
    vars: &'v mut Vars,
}

impl Compiler<'_, '_, '_> {
    fn group(&mut self, group: &Group) -> Result<CompiledGroup> {
        let mut out = CompiledGroup {
            span: group.span,
            ..CompiledGroup::default()
        };
        // Blocks recurse here once per level (up to `kip_lang::MAX_DEPTH`):
        // the other items are compiled by functions of their own, so that
        // this frame stays small.
        for item in &group.items {
            match item {
                Pattern::Concept(c) => self.concept_clause(c, &mut out)?,
                Pattern::Proposition(p) => {
                    let var = p.var.as_ref().map(|v| self.vars.slot(&v.name));
                    self.proposition(&p.matcher, var, p.span, &mut out.atoms)?;
                }
                Pattern::Filter(f) => self.filter(f, &mut out),
                Pattern::Not(g) => out.nots.push(self.group(g)?),
                Pattern::Optional(g) => out.optionals.push(self.group(g)?),
                Pattern::Union(g) => out.unions.push(self.group(g)?),
            }
        }
        self.choose_indexes(&mut out);
        Ok(out)
    }

    /// Gives each named type clause of the block the attribute-index
    /// lookup its FILTERs allow.
    fn choose_indexes(&self, out: &mut CompiledGroup) {
        let filters = &out.filters;
        for (atom, _) in &mut out.atoms {
            if let Atom::Concept {
                var,
                test: ConceptTest::Type(_),
                index,
                ..
            } = atom
                && let Some(Some(name)) = self.vars.names.get(*var)
            {
                *index = super::index::choose(name, *var, filters).map(Box::new);
            }
        }
    }

    fn concept_clause(&mut self, c: &ConceptClause, out: &mut CompiledGroup) -> Result<()> {
        let var = match &c.var {
            Some(v) => self.vars.slot(&v.name),
            None => self.vars.hidden(),
        };
        let test = self.concept_test(&c.matcher)?;
        let matcher = c.matcher.clone();
        out.atoms.push((
            Atom::Concept {
                var,
                test,
                matcher,
                index: None,
            },
            c.span,
        ));
        Ok(())
    }

    fn filter(&mut self, f: &Filter, out: &mut CompiledGroup) {
        let mut refs = Vec::new();
        kip_lang::expr_vars(&f.expr, &mut refs);
        let slots = refs.iter().map(|v| self.vars.slot(&v.name)).collect();
        out.filters.push((f.expr.clone(), slots, f.span));
    }

    fn text<'a>(&self, arg: &'a Arg<String>) -> Result<&'a str> {
        arg.lit().map(String::as_str).ok_or_else(|| {
            KipError::new(ErrorCode::ReferenceError, "a placeholder was not bound")
                .at(self.source, arg.span())
        })
    }

    fn type_id(&self, arg: &Arg<String>) -> Result<u32> {
        let name = self.text(arg)?;
        if self.graph.is_type_defined(name)?
            && let Some(id) = self.graph.type_id(name)?
        {
            return Ok(id);
        }
        if self.graph.is_type_defined(name)? {
            // Defined but with no instance ever created: nothing matches.
            return Ok(u32::MAX);
        }
        Err(crate::schema::unknown_type(self.graph, name)?.at(self.source, arg.span()))
    }

    fn predicate_id(&self, arg: &Arg<String>) -> Result<u32> {
        let name = self.text(arg)?;
        if self.graph.is_predicate_defined(name)? {
            return Ok(self.graph.predicate_id(name)?.unwrap_or(u32::MAX));
        }
        Err(crate::schema::unknown_predicate(self.graph, name)?.at(self.source, arg.span()))
    }

    fn concept_test(&mut self, m: &ConceptMatcher) -> Result<ConceptTest> {
        Ok(match m {
            ConceptMatcher::Id(id) => {
                let text = self.text(id)?;
                ConceptTest::One(match text.parse::<ElementId>() {
                    Ok(ElementId::Concept(c)) => Some(c),
                    _ => None,
                })
            }
            ConceptMatcher::TypeName { ty, name } => {
                let t = self.type_id(ty)?;
                let name = self.text(name)?;
                ConceptTest::One(self.graph.find_concept(t, name)?)
            }
            ConceptMatcher::Type(ty) => ConceptTest::Type(self.type_id(ty)?),
            ConceptMatcher::Name(name) => ConceptTest::Name(self.text(name)?.to_owned()),
        })
    }

    fn term(&mut self, term: &Term, atoms: &mut Vec<(Atom, Span)>) -> Result<Slot> {
        Ok(match term {
            Term::Var(v) => self.vars.slot(&v.name),
            Term::Concept(m, span) => {
                let var = self.vars.hidden();
                let test = self.concept_test(m)?;
                atoms.push((
                    Atom::Concept {
                        var,
                        test,
                        matcher: m.clone(),
                        index: None,
                    },
                    *span,
                ));
                var
            }
            Term::Proposition(m, span) => {
                let var = self.vars.hidden();
                self.proposition(m, Some(var), *span, atoms)?;
                var
            }
        })
    }

    fn proposition(
        &mut self,
        m: &PropositionMatcher,
        var: Option<Slot>,
        span: Span,
        atoms: &mut Vec<(Atom, Span)>,
    ) -> Result<()> {
        match m {
            PropositionMatcher::Id(id) => {
                let text = self.text(id)?;
                let id = match text.parse::<ElementId>() {
                    Ok(ElementId::Proposition(p)) => Some(p),
                    _ => None,
                };
                let var = var.unwrap_or_else(|| self.vars.hidden());
                atoms.push((Atom::PropId { var, id }, span));
            }
            PropositionMatcher::Triple(t) => {
                let s = self.term(&t.subject, atoms)?;
                let o = self.term(&t.object, atoms)?;
                let pred = self.predicate_test(&t.predicate, var, span)?;
                let ends = (t.subject.span(), t.object.span());
                atoms.push((
                    Atom::Prop {
                        var,
                        s,
                        pred,
                        o,
                        ends,
                    },
                    span,
                ));
            }
        }
        Ok(())
    }

    /// The predicate of a proposition clause; a hop range other than
    /// `{1,1}` makes it a path, which cannot bind a proposition variable.
    fn predicate_test(
        &mut self,
        predicate: &PredicateExpr,
        var: Option<Slot>,
        span: Span,
    ) -> Result<PredTest> {
        let (names, hops) = match predicate {
            PredicateExpr::Var(v) => return Ok(PredTest::Var(self.vars.slot(&v.name))),
            PredicateExpr::Names { names, hops, .. } => (names, hops),
        };
        let mut preds = Vec::new();
        for n in names {
            preds.push(self.predicate_id(n)?);
        }
        Ok(match hops {
            Some(h) if !(h.min == 1 && h.max == Some(1)) => {
                if var.is_some() {
                    return Err(KipError::new(
                        ErrorCode::InvalidSyntax,
                        "a path pattern with a hop range cannot bind a proposition variable",
                    )
                    .with_hint("A path spans several links; remove the variable before the pattern, or use a single hop.")
                    .at(self.source, span));
                }
                PredTest::Path {
                    preds,
                    min: h.min,
                    max: h.max,
                    hops: h.span,
                }
            }
            _ => PredTest::Names(preds),
        })
    }
}

//! The outline of a WHERE block as a diagram: concept clauses are nodes,
//! proposition clauses are edges, FILTER / NOT / OPTIONAL / UNION are
//! badges and nested blocks (issue 6, the console's query debugger).
//!
//! The builder recurses once per nested block: it relies on the parser's
//! proof that blocks nest at most `kip_lang::MAX_DEPTH` deep.
//!
//! The outline is read off the syntax tree alone — no store, no names
//! resolved — so an editor can draw it while the user types, and `explain`
//! can lay its per-step counts over it. Every element carries the source
//! range of the clause it comes from, with the same spans the executor's
//! steps and `why_empty` causes use, so a client links the three by
//! `(offset, length)`.
//!
//! What it deliberately does not do: check anything. A variable used only
//! in a FILTER still gets a node; an undefined type is drawn as written.

use std::collections::HashMap;

use kip_lang::Position;
use kip_lang::ast::{
    Arg, ConceptMatcher, Group, Pattern as Clause, PredicateExpr, PropositionMatcher, Span, Term,
    Var,
};
use serde::Serialize;

/// A source range as the UI needs it to point at a clause.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Range {
    pub line: usize,
    pub column: usize,
    pub offset: usize,
    pub length: usize,
}

impl Range {
    pub fn of(source: &str, span: Span) -> Range {
        let p = Position::of(source, span.start);
        Range {
            line: p.line,
            column: p.column,
            offset: span.start,
            length: span.len(),
        }
    }
}

/// The diagram of one WHERE block and the blocks nested in it.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Pattern {
    /// Block 0 is the WHERE block itself; NOT, OPTIONAL and UNION blocks
    /// follow in source order.
    pub blocks: Vec<Block>,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub filters: Vec<Filter>,
}

/// `where`, `not`, `optional` or `union`.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Block {
    pub id: usize,
    #[cfg_attr(feature = "ts", ts(type = "'where' | 'not' | 'optional' | 'union'"))]
    pub kind: &'static str,
    /// The block's braces (the range a NOT / OPTIONAL / UNION step reports).
    pub range: Range,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<usize>,
}

/// A concept (a variable, or an inline `{…}` term), or a proposition that
/// another proposition is about.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Node {
    pub id: usize,
    /// The variable's name without `?`, for a node that is a variable.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub var: Option<String>,
    /// `concept` or `proposition` (an inline `(…)` term, or a variable
    /// bound to a link).
    #[cfg_attr(feature = "ts", ts(type = "'concept' | 'proposition'"))]
    pub kind: &'static str,
    /// The type as written (`:param` for a placeholder).
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// The name as written, or `id: …` for an id matcher.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A short label: `?drug`, `Symptom "Fever"`, `(…)`.
    pub label: String,
    /// The block the node first appears in.
    pub block: usize,
    /// The clauses that constrain this node: concept clauses on the
    /// variable, or the inline term itself.
    pub clauses: Vec<Range>,
}

/// One proposition clause (or an inline proposition term): subject → object.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Edge {
    pub id: usize,
    pub from: usize,
    pub to: usize,
    /// `treats`, `treats | relieves`, or `?p` for a predicate variable.
    pub predicate: String,
    /// The hop range as written (`{1,3}`), for a path.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hops: Option<String>,
    /// The variable the link is bound to (`?l (…)`).
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub var: Option<String>,
    /// The node standing for this link when another clause is about it.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<usize>,
    pub clause: Range,
    /// Where the predicate (with its hop range) is written.
    pub predicate_range: Range,
    pub block: usize,
}

/// A FILTER, drawn as a badge on the nodes whose variables it reads.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Filter {
    pub clause: Range,
    /// The nodes of the variables it reads.
    pub nodes: Vec<usize>,
    pub block: usize,
}

/// The outline of `group` (a WHERE block) written in `source`.
pub fn outline(source: &str, group: &Group) -> Pattern {
    let mut b = Builder {
        source,
        out: Pattern::default(),
        vars: HashMap::new(),
        link_vars: HashMap::new(),
    };
    b.group(group, "where", None, 0);
    b.out
}

/// A name as written: the literal, or `:param` for a placeholder.
fn arg(a: &Arg<String>) -> String {
    match a {
        Arg::Lit(s, _) => s.clone(),
        Arg::Param(p) => format!(":{}", p.name),
    }
}

struct Builder<'s> {
    source: &'s str,
    out: Pattern,
    /// (scope, variable) → node. A UNION branch is its own scope (it sees
    /// nothing from outside); NOT and OPTIONAL share their parent's.
    vars: HashMap<(usize, String), usize>,
    /// (scope, variable) → the edge a proposition variable is bound to.
    link_vars: HashMap<(usize, String), usize>,
}

impl Builder<'_> {
    fn range(&self, span: Span) -> Range {
        Range::of(self.source, span)
    }

    fn written(&self, span: Span) -> String {
        self.source
            .get(span.start..span.end)
            .unwrap_or_default()
            .to_owned()
    }

    fn group(&mut self, group: &Group, kind: &'static str, parent: Option<usize>, scope: usize) {
        let id = self.out.blocks.len();
        self.out.blocks.push(Block {
            id,
            kind,
            range: self.range(group.span),
            parent,
        });
        let scope = if kind == "union" { id } else { scope };
        for item in &group.items {
            match item {
                Clause::Concept(c) => {
                    let node = match &c.var {
                        Some(v) => self.var_node(v, "concept", id, scope),
                        None => self.new_node(None, "concept", id),
                    };
                    self.describe(node, &c.matcher);
                    let range = self.range(c.span);
                    self.out.nodes[node].clauses.push(range);
                }
                Clause::Proposition(p) => {
                    self.proposition(&p.matcher, p.var.as_ref(), p.span, id, scope);
                }
                Clause::Filter(f) => {
                    let mut refs = Vec::new();
                    kip_lang::expr_vars(&f.expr, &mut refs);
                    let mut nodes: Vec<usize> = refs
                        .iter()
                        .map(|v| self.var_node(v, "concept", id, scope))
                        .collect();
                    nodes.dedup();
                    self.out.filters.push(Filter {
                        clause: self.range(f.span),
                        nodes,
                        block: id,
                    });
                }
                Clause::Not(g) => self.group(g, "not", Some(id), scope),
                Clause::Optional(g) => self.group(g, "optional", Some(id), scope),
                Clause::Union(g) => self.group(g, "union", Some(id), scope),
            }
        }
    }

    fn new_node(&mut self, var: Option<&Var>, kind: &'static str, block: usize) -> usize {
        let id = self.out.nodes.len();
        self.out.nodes.push(Node {
            id,
            var: var.map(|v| v.name.clone()),
            kind,
            type_name: None,
            name: None,
            label: var.map_or_else(String::new, |v| format!("?{}", v.name)),
            block,
            clauses: Vec::new(),
        });
        id
    }

    fn var_node(&mut self, var: &Var, kind: &'static str, block: usize, scope: usize) -> usize {
        if let Some(&node) = self.vars.get(&(scope, var.name.clone())) {
            return node;
        }
        let node = self.new_node(Some(var), kind, block);
        self.vars.insert((scope, var.name.clone()), node);
        if let Some(&edge) = self.link_vars.get(&(scope, var.name.clone())) {
            self.out.nodes[node].kind = "proposition";
            self.out.edges[edge].node = Some(node);
        }
        node
    }

    /// Records what a concept matcher says about a node and labels inline
    /// terms by it.
    fn describe(&mut self, node: usize, matcher: &ConceptMatcher) {
        let (ty, name) = match matcher {
            ConceptMatcher::Id(id) => (None, Some(format!("id: {}", arg(id)))),
            ConceptMatcher::TypeName { ty, name } => (Some(arg(ty)), Some(arg(name))),
            ConceptMatcher::Type(ty) => (Some(arg(ty)), None),
            ConceptMatcher::Name(name) => (None, Some(arg(name))),
        };
        let n = &mut self.out.nodes[node];
        if n.type_name.is_none() {
            n.type_name = ty;
        }
        if n.name.is_none() {
            n.name = name;
        }
        if n.var.is_none() {
            n.label = match (&n.type_name, &n.name) {
                (Some(t), Some(name)) => format!("{t} {name:?}"),
                (Some(t), None) => t.clone(),
                (None, Some(name)) => format!("{name:?}"),
                (None, None) => "{…}".into(),
            };
        }
    }

    fn term(&mut self, term: &Term, block: usize, scope: usize) -> usize {
        match term {
            Term::Var(v) => self.var_node(v, "concept", block, scope),
            Term::Concept(m, span) => {
                let node = self.new_node(None, "concept", block);
                self.describe(node, m);
                let range = self.range(*span);
                self.out.nodes[node].clauses.push(range);
                node
            }
            Term::Proposition(m, span) => {
                let node = self.new_node(None, "proposition", block);
                self.out.nodes[node].label = "(…)".into();
                let range = self.range(*span);
                self.out.nodes[node].clauses.push(range);
                if let Some(edge) = self.proposition(m, None, *span, block, scope) {
                    self.out.edges[edge].node = Some(node);
                }
                node
            }
        }
    }

    /// Adds the edge of a proposition clause or term; `None` for an id
    /// matcher, which is a node rather than an edge.
    fn proposition(
        &mut self,
        m: &PropositionMatcher,
        var: Option<&Var>,
        span: Span,
        block: usize,
        scope: usize,
    ) -> Option<usize> {
        match m {
            PropositionMatcher::Id(id) => {
                let node = match var {
                    Some(v) => self.var_node(v, "proposition", block, scope),
                    None => self.new_node(None, "proposition", block),
                };
                let range = self.range(span);
                let n = &mut self.out.nodes[node];
                n.kind = "proposition";
                n.name = Some(format!("id: {}", arg(id)));
                if n.var.is_none() {
                    n.label = "(id)".into();
                }
                n.clauses.push(range);
                None
            }
            PropositionMatcher::Triple(t) => {
                let from = self.term(&t.subject, block, scope);
                let to = self.term(&t.object, block, scope);
                let (predicate, hops, predicate_span) = match &t.predicate {
                    PredicateExpr::Var(v) => (format!("?{}", v.name), None, v.span),
                    PredicateExpr::Names { names, hops, span } => {
                        let names: Vec<String> = names.iter().map(arg).collect();
                        (
                            names.join(" | "),
                            hops.as_ref().map(|h| self.written(h.span)),
                            *span,
                        )
                    }
                };
                // A variable bound to the link is also a node other clauses
                // may be about; it is drawn only when one is.
                let node = var.and_then(|v| self.vars.get(&(scope, v.name.clone())).copied());
                if let Some(n) = node {
                    self.out.nodes[n].kind = "proposition";
                }
                let id = self.out.edges.len();
                self.out.edges.push(Edge {
                    id,
                    from,
                    to,
                    predicate,
                    hops,
                    var: var.map(|v| v.name.clone()),
                    node,
                    clause: self.range(span),
                    predicate_range: self.range(predicate_span),
                    block,
                });
                if let Some(v) = var {
                    // Later clauses about `?l` find the edge's node.
                    self.link_vars.insert((scope, v.name.clone()), id);
                }
                Some(id)
            }
        }
    }
}

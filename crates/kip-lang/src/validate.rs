//! Checks that need no store: variable scopes and UPSERT handles.
//!
//! Every problem is collected, in source order. What is checked here:
//! - a variable in FIND, ORDER BY, FILTER or a DELETE target that no pattern
//!   can bind, respecting the scopes of NOT (its variables stay inside),
//!   OPTIONAL (its variables flow out) and UNION (it sees nothing from
//!   outside; its variables flow out): `KIP_3001`;
//! - a target of UPDATE, MERGE or EXPORT that no pattern binds, and an
//!   update expression reading another variable than UPDATE's target;
//! - an UPSERT handle used before (or inside) the block that defines it, or
//!   defined twice: `KIP_3001` / `KIP_1001`.
//!
//! The parser has already checked identifiers, pattern shapes, hop ranges,
//! function names and aggregates inside FILTER.

use std::collections::{BTreeMap, BTreeSet};

use crate::ast::*;
use crate::error::{ErrorCode, KipError};
use crate::position::Position;
use crate::suggest;

/// Checks `commands`, parsed from `source`. For one part of a text split
/// between two UPSERT blocks (a streamed import, see
/// [`crate::parse_part`]): with `handles`, the first
/// command, an UPSERT, continues one whose earlier parts defined those
/// handles, and on return `handles` holds the handles defined so far by
/// the text's last UPSERT (which the next part may continue).
pub(crate) fn check_part(
    source: &str,
    commands: &[Command],
    mut handles: Option<&mut BTreeSet<String>>,
) -> Vec<KipError> {
    let mut checker = Checker {
        source,
        errors: Vec::new(),
    };
    let mut carried: BTreeSet<String> = handles
        .as_deref_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    for (i, command) in commands.iter().enumerate() {
        match command {
            Command::Find(query) => checker.find(query),
            Command::Upsert(upsert) => {
                let earlier = if i == 0 {
                    std::mem::take(&mut carried)
                } else {
                    BTreeSet::new()
                };
                carried = checker.upsert(upsert, earlier);
            }
            Command::Delete(delete) => checker.delete(delete),
            Command::Update(update) => checker.update(update),
            Command::Merge(merge) => {
                checker.targets(
                    &merge.where_,
                    &[
                        (&merge.source, "the MERGE source"),
                        (&merge.target, "the MERGE target"),
                    ],
                );
            }
            Command::Export(export) => {
                checker.targets(&export.where_, &[(&export.target, "the EXPORT target")]);
            }
            Command::Describe(_) | Command::Search(_) => {}
        }
        if !matches!(command, Command::Upsert(_)) {
            carried.clear();
        }
    }
    if let Some(handles) = handles {
        *handles = carried;
    }
    checker.errors
}

/// The variables a group binds for the rows it produces.
pub fn bound_vars(group: &Group) -> BTreeSet<String> {
    let mut vars = BTreeSet::new();
    for item in &group.items {
        match item {
            Pattern::Concept(c) => {
                if let Some(v) = &c.var {
                    vars.insert(v.name.clone());
                }
            }
            Pattern::Proposition(p) => {
                if let Some(v) = &p.var {
                    vars.insert(v.name.clone());
                }
                matcher_vars(&p.matcher, &mut vars);
            }
            Pattern::Optional(g) | Pattern::Union(g) => vars.extend(bound_vars(g)),
            Pattern::Filter(_) | Pattern::Not(_) => {}
        }
    }
    vars
}

fn matcher_vars(matcher: &PropositionMatcher, vars: &mut BTreeSet<String>) {
    if let PropositionMatcher::Triple(t) = matcher {
        term_vars(&t.subject, vars);
        if let PredicateExpr::Var(v) = &t.predicate {
            vars.insert(v.name.clone());
        }
        term_vars(&t.object, vars);
    }
}

fn term_vars(term: &Term, vars: &mut BTreeSet<String>) {
    match term {
        Term::Var(v) => {
            vars.insert(v.name.clone());
        }
        Term::Concept(..) => {}
        Term::Proposition(m, _) => matcher_vars(m, vars),
    }
}

/// Variables that a group uses only inside NOT blocks (for a better hint).
fn not_only_vars(group: &Group, out: &mut BTreeSet<String>) {
    for item in &group.items {
        match item {
            Pattern::Not(g) => out.extend(bound_vars(g)),
            Pattern::Optional(g) | Pattern::Union(g) => not_only_vars(g, out),
            _ => {}
        }
    }
}

struct Checker<'s> {
    source: &'s str,
    errors: Vec<KipError>,
}

impl Checker<'_> {
    fn unbound(&mut self, var: &Var, visible: &BTreeSet<String>, group: &Group, place: &str) {
        let mut hidden = BTreeSet::new();
        not_only_vars(group, &mut hidden);
        let candidates: Vec<&str> = visible.iter().map(String::as_str).collect();
        let suggestions = suggest::similar(&var.name, candidates);
        let hint = if hidden.contains(&var.name) {
            format!(
                "?{} is bound only inside NOT {{…}}, whose variables are not visible outside it; bind it in the main WHERE block or an OPTIONAL block.",
                var.name
            )
        } else if let Some(s) = suggestions.first() {
            format!("Did you mean ?{s}?")
        } else {
            format!(
                "Bind ?{} in a WHERE pattern, e.g. ?{} {{type: \"…\"}} or (?{}, \"predicate\", ?other).",
                var.name, var.name, var.name
            )
        };
        let suggestions: Vec<String> = suggestions.into_iter().map(|s| format!("?{s}")).collect();
        self.errors.push(
            KipError::new(
                ErrorCode::ReferenceError,
                format!(
                    "variable ?{} in {place} is not bound by any pattern",
                    var.name
                ),
            )
            .with_hint(hint)
            .at(self.source, var.span)
            .with_suggestions(&suggestions),
        );
    }

    fn find(&mut self, query: &FindQuery) {
        let visible = bound_vars(&query.where_);
        self.group(&query.where_, &BTreeSet::new());
        for projection in &query.find {
            let var = projection_var(projection);
            if !var.name.is_empty() && !visible.contains(&var.name) {
                self.unbound(var, &visible, &query.where_, "FIND");
            }
        }
        for key in &query.order_by {
            let var = projection_var(&key.expr);
            if !var.name.is_empty() && !visible.contains(&var.name) {
                self.unbound(var, &visible, &query.where_, "ORDER BY");
            }
        }
    }

    fn delete(&mut self, delete: &Delete) {
        self.targets(&delete.where_, &[(&delete.var, "the DELETE target")]);
    }

    /// Checks a WHERE block and that each of the statement's target
    /// variables is bound by it.
    fn targets(&mut self, where_: &Group, targets: &[(&Var, &str)]) {
        self.group(where_, &BTreeSet::new());
        let visible = bound_vars(where_);
        for (var, place) in targets {
            if !var.name.is_empty() && !visible.contains(&var.name) {
                self.unbound(var, &visible, where_, place);
            }
        }
    }

    /// UPDATE: the target is bound, and update expressions read only the
    /// target's own state (RC9 §4.3), so each element's new value is
    /// computed from itself and the result does not depend on order.
    fn update(&mut self, update: &Update) {
        self.targets(&update.where_, &[(&update.target, "the UPDATE target")]);
        for object in [&update.attributes, &update.metadata].into_iter().flatten() {
            for (_, value) in &object.members {
                self.update_value(value, &update.target, true);
            }
        }
    }

    fn update_value(&mut self, value: &UpdateValue, target: &Var, top: bool) {
        match value {
            UpdateValue::Value(..) => {}
            UpdateValue::Path(path) if top => {
                self.errors.push(
                    KipError::new(
                        ErrorCode::InvalidSyntax,
                        "a dot path cannot be a SET value on its own",
                    )
                    .with_hint(format!(
                        "Use it inside an update expression, e.g. COALESCE(?{}.attributes.key, 0).",
                        path.var.name
                    ))
                    .at(self.source, path.span),
                );
            }
            UpdateValue::Path(path) => {
                if !path.var.name.is_empty() && path.var.name != target.name {
                    self.errors.push(
                        KipError::new(
                            ErrorCode::ReferenceError,
                            format!(
                                "update expressions read only the target ?{}, not ?{}",
                                target.name, path.var.name
                            ),
                        )
                        .with_hint(format!(
                            "Each element's new value is computed from its own state: read ?{}.attributes.… or ?{}.metadata.…; narrow the elements with WHERE instead.",
                            target.name, target.name
                        ))
                        .at(self.source, path.var.span),
                    );
                }
            }
            UpdateValue::Call(call) => {
                for arg in &call.args {
                    self.update_value(arg, target, false);
                }
            }
        }
    }

    /// Checks the FILTERs of `group`, which also sees `outer` (a UNION branch
    /// is checked with an empty `outer`: it sees nothing from outside).
    fn group(&mut self, group: &Group, outer: &BTreeSet<String>) {
        let mut visible = outer.clone();
        visible.extend(bound_vars(group));
        for item in &group.items {
            match item {
                Pattern::Filter(filter) => {
                    let mut vars = Vec::new();
                    expr_vars(&filter.expr, &mut vars);
                    for var in vars {
                        if !var.name.is_empty() && !visible.contains(&var.name) {
                            self.unbound(var, &visible, group, "FILTER");
                        }
                    }
                }
                Pattern::Not(g) | Pattern::Optional(g) => self.group(g, &visible),
                Pattern::Union(g) => self.group(g, &BTreeSet::new()),
                Pattern::Concept(_) | Pattern::Proposition(_) => {}
            }
        }
    }

    /// Checks one UPSERT's handles, `earlier` defined by the parts of it
    /// before this text; returns every handle defined by its end.
    fn upsert(&mut self, upsert: &Upsert, earlier: BTreeSet<String>) -> BTreeSet<String> {
        // Handles whose blocks have run (`earlier`, then this text's), and
        // every handle of this text with its block.
        let mut defined: BTreeMap<String, Span> = BTreeMap::new();
        let all: BTreeMap<String, Span> = upsert
            .items
            .iter()
            .filter_map(|item| {
                let (handle, span) = match item {
                    UpsertItem::Concept(c) => (&c.handle, c.span),
                    UpsertItem::Proposition(p) => (&p.handle, p.span),
                };
                handle.as_ref().map(|h| (h.name.clone(), span))
            })
            .collect();
        for item in &upsert.items {
            let mut used = Vec::new();
            let handle = match item {
                UpsertItem::Concept(c) => {
                    for entry in c.propositions.iter().flatten() {
                        term_var_refs(&entry.target, &mut used);
                    }
                    &c.handle
                }
                UpsertItem::Proposition(p) => {
                    if let PropositionMatcher::Triple(t) = &p.matcher {
                        term_var_refs(&t.subject, &mut used);
                        term_var_refs(&t.object, &mut used);
                    }
                    &p.handle
                }
            };
            for var in used {
                if defined.contains_key(&var.name) || earlier.contains(&var.name) {
                    continue;
                }
                let hint = match all.get(&var.name) {
                    Some(span) if handle.as_ref().is_some_and(|h| h.name == var.name) => format!(
                        "?{0} is the handle of this very block, which is not defined until the block has run; refer to the concept by its {{type, name}} instead (line {1}).",
                        var.name,
                        Position::of(self.source, span.start).line
                    ),
                    Some(span) => format!(
                        "?{} is defined later, by the block at line {}; move that block before this one (blocks run in written order).",
                        var.name,
                        Position::of(self.source, span.start).line
                    ),
                    None => format!(
                        "Define ?{0} with an earlier CONCEPT ?{0} {{ … }} or PROPOSITION ?{0} {{ … }} block in this UPSERT, or refer to an existing concept with {{type: \"…\", name: \"…\"}}.",
                        var.name
                    ),
                };
                let suggestions: Vec<String> =
                    suggest::similar(&var.name, defined.keys().map(String::as_str))
                        .into_iter()
                        .map(|s| format!("?{s}"))
                        .collect();
                self.errors.push(
                    KipError::new(
                        ErrorCode::ReferenceError,
                        format!("handle ?{} is used before it is defined", var.name),
                    )
                    .with_hint(hint)
                    .at(self.source, var.span)
                    .with_suggestions(&suggestions),
                );
            }
            if let Some(h) = handle {
                if defined.contains_key(&h.name) || earlier.contains(&h.name) {
                    self.errors.push(
                        KipError::new(
                            ErrorCode::InvalidSyntax,
                            format!("handle ?{} is defined twice in this UPSERT", h.name),
                        )
                        .with_hint("Give each CONCEPT or PROPOSITION block its own handle name.")
                        .at(self.source, h.span),
                    );
                }
                defined.insert(h.name.clone(), h.span);
            }
        }
        let mut all = earlier;
        all.extend(defined.into_keys());
        all
    }
}

fn projection_var(p: &Projection) -> &Var {
    match p {
        Projection::Path(path) => &path.var,
        Projection::Aggregate(agg) => &agg.arg.var,
    }
}

fn term_var_refs<'a>(term: &'a Term, out: &mut Vec<&'a Var>) {
    match term {
        Term::Var(v) => out.push(v),
        Term::Concept(..) => {}
        Term::Proposition(PropositionMatcher::Triple(t), _) => {
            term_var_refs(&t.subject, out);
            term_var_refs(&t.object, out);
        }
        Term::Proposition(PropositionMatcher::Id(_), _) => {}
    }
}

/// The variables an expression reads, in source order.
pub fn expr_vars<'a>(expr: &'a Expr, out: &mut Vec<&'a Var>) {
    match expr {
        Expr::Or(l, r) | Expr::And(l, r) | Expr::Compare(_, l, r) => {
            expr_vars(l, out);
            expr_vars(r, out);
        }
        Expr::Not(e) => expr_vars(e, out),
        Expr::Call(c) => c.args.iter().for_each(|a| expr_vars(a, out)),
        Expr::Path(p) => out.push(&p.var),
        Expr::Value(..) => {}
    }
}

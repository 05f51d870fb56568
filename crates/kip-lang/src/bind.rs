//! Parameter binding: `:name` placeholders replaced by `execute_kip.parameters`.
//!
//! Binding works on the tree, never on text, so a `:name` inside a string or
//! a comment is never touched and `:name2` is never a match for `name`.
//! Every problem is collected: a missing parameter is `KIP_3001` naming it;
//! a parameter of the wrong JSON type where the grammar needs a string (a
//! type, name, predicate, search term, cursor) or a count (LIMIT) is
//! `KIP_2004`. A value counts as if its JSON were written in place of the
//! placeholder: with the brackets around it, it may not nest deeper than
//! [`crate::MAX_DEPTH`] (`KIP_1001` at the placeholder). The depth is
//! measured without recursing and before the value is copied, so even a
//! value built deeper than any JSON reader allows is refused, not followed.

use serde_json::{Map, Value as Json};

use crate::ast::*;
use crate::error::{ErrorCode, Errors, KipError};
use crate::nesting::{DepthIndex, MAX_DEPTH, json_depth};

/// Replaces every placeholder of `commands` with its parameter's value.
pub fn bind(
    source: &str,
    mut commands: Vec<Command>,
    params: &Map<String, Json>,
) -> Result<Vec<Command>, Errors> {
    let mut binder = Binder {
        source,
        params,
        depths: None,
        errors: Vec::new(),
    };
    for command in &mut commands {
        walk_command(command, &mut binder);
    }
    if binder.errors.is_empty() {
        Ok(commands)
    } else {
        binder.errors.sort_by_key(|e| e.offset().unwrap_or(0));
        Err(Errors(binder.errors))
    }
}

/// The names of the placeholders of `commands`, in order, without repeats.
pub fn placeholders(commands: &[Command]) -> Vec<String> {
    let mut collector = Collector(Vec::new());
    for command in commands {
        let mut command = command.clone();
        walk_command(&mut command, &mut collector);
    }
    collector.0
}

/// Every placeholder of one command, in source order, repeats included:
/// what an editor needs to list a command's parameters and point at them.
/// Like [`bind`], this reads the tree, so a `:name` inside a string or a
/// comment is never one.
pub fn placeholders_of(command: &Command) -> Vec<Param> {
    let mut spans = Spans(Vec::new());
    walk_command(&mut command.clone(), &mut spans);
    spans.0.sort_by_key(|p| p.span.start);
    spans.0
}

/// What a walk over every placeholder position does.
trait ParamVisitor {
    fn text(&mut self, arg: &mut Arg<String>);
    fn count(&mut self, arg: &mut Arg<u64>);
    fn value(&mut self, value: &mut Value);
}

struct Collector(Vec<String>);

impl Collector {
    fn add(&mut self, p: &Param) {
        if !self.0.contains(&p.name) {
            self.0.push(p.name.clone());
        }
    }
}

impl ParamVisitor for Collector {
    fn text(&mut self, arg: &mut Arg<String>) {
        if let Arg::Param(p) = arg {
            self.add(p);
        }
    }
    fn count(&mut self, arg: &mut Arg<u64>) {
        if let Arg::Param(p) = arg {
            self.add(p);
        }
    }
    fn value(&mut self, value: &mut Value) {
        match value {
            Value::Param(p) => self.add(p),
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(obj) => obj.members.iter_mut().for_each(|(_, v)| self.value(v)),
            _ => {}
        }
    }
}

/// Every occurrence, with its span (see [`placeholders_of`]).
struct Spans(Vec<Param>);

impl ParamVisitor for Spans {
    fn text(&mut self, arg: &mut Arg<String>) {
        if let Arg::Param(p) = arg {
            self.0.push(p.clone());
        }
    }
    fn count(&mut self, arg: &mut Arg<u64>) {
        if let Arg::Param(p) = arg {
            self.0.push(p.clone());
        }
    }
    fn value(&mut self, value: &mut Value) {
        match value {
            Value::Param(p) => self.0.push(p.clone()),
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(obj) => obj.members.iter_mut().for_each(|(_, v)| self.value(v)),
            _ => {}
        }
    }
}

struct Binder<'a> {
    source: &'a str,
    params: &'a Map<String, Json>,
    /// The bracket depth of `source`, built when a value parameter first
    /// needs it.
    depths: Option<DepthIndex>,
    errors: Vec<KipError>,
}

impl<'a> Binder<'a> {
    fn lookup(&mut self, p: &Param) -> Option<&'a Json> {
        let params: &'a Map<String, Json> = self.params;
        let found = params.get(&p.name);
        if found.is_none() {
            let mut known: Vec<&str> = self.params.keys().map(String::as_str).collect();
            known.sort_unstable();
            let suggestions = crate::suggest::similar(&p.name, known.iter().copied());
            let hint = match suggestions.first() {
                Some(s) => format!(
                    "Did you mean :{s}? Otherwise add \"{}\" to `parameters`.",
                    p.name
                ),
                None => format!(
                    "Add \"{}\" to the `parameters` object of execute_kip, or write the value in place of :{}.",
                    p.name, p.name
                ),
            };
            self.errors.push(
                KipError::new(
                    ErrorCode::ReferenceError,
                    format!("parameter :{} is not provided", p.name),
                )
                .with_hint(hint)
                .at(self.source, p.span)
                .with_data("parameter", p.name.clone())
                .with_suggestions(&suggestions),
            );
        }
        found
    }

    /// Whether `json`, bound at `p`, would nest deeper than [`MAX_DEPTH`]
    /// with the brackets around `p`; if so, reports it.
    fn too_deep(&mut self, p: &Param, json: &Json) -> bool {
        let depth = json_depth(json);
        if depth == 0 {
            return false;
        }
        let source = self.source;
        let around = self
            .depths
            .get_or_insert_with(|| DepthIndex::new(source))
            .at(p.span.start);
        if around + depth <= MAX_DEPTH {
            return false;
        }
        self.errors.push(
            crate::nesting::too_deep(
                self.source,
                p.span,
                &format!("parameter :{}", p.name),
                &format!(
                    "A parameter counts as if written in place of :{}: its value nests {depth} levels inside {around} around the placeholder, and at most {MAX_DEPTH} are allowed. Pass a flatter value, or store the deep part as a string.",
                    p.name
                ),
            )
            .with_data("parameter", p.name.clone()),
        );
        true
    }

    fn wrong_type(&mut self, p: &Param, expected: &str, found: &Json) {
        self.errors.push(
            KipError::new(
                ErrorCode::InvalidValueType,
                format!(
                    "parameter :{} must be {expected} here, found {}",
                    p.name,
                    json_kind(found)
                ),
            )
            .with_hint(format!("Pass {expected} as the value of \"{}\".", p.name))
            .at(self.source, p.span)
            .with_data("parameter", p.name.clone()),
        );
    }
}

fn json_kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

impl ParamVisitor for Binder<'_> {
    fn text(&mut self, arg: &mut Arg<String>) {
        let Arg::Param(p) = arg else { return };
        let p = p.clone();
        match self.lookup(&p) {
            Some(Json::String(s)) => *arg = Arg::Lit(s.clone(), p.span),
            Some(other) => self.wrong_type(&p, "a string", other),
            None => {}
        }
    }

    fn count(&mut self, arg: &mut Arg<u64>) {
        let Arg::Param(p) = arg else { return };
        let p = p.clone();
        match self.lookup(&p) {
            Some(Json::Number(n)) if n.as_u64().is_some() => {
                *arg = Arg::Lit(n.as_u64().unwrap_or_default(), p.span);
            }
            Some(other) => self.wrong_type(&p, "a non-negative integer", other),
            None => {}
        }
    }

    fn value(&mut self, value: &mut Value) {
        match value {
            Value::Param(p) => {
                let p = p.clone();
                if let Some(json) = self.lookup(&p)
                    && !self.too_deep(&p, json)
                {
                    *value = Value::from_json(json, p.span);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(obj) => obj.members.iter_mut().for_each(|(_, v)| self.value(v)),
            _ => {}
        }
    }
}

fn walk_command(command: &mut Command, v: &mut impl ParamVisitor) {
    match command {
        Command::Find(q) => {
            walk_group(&mut q.where_, v);
            if let Some(limit) = &mut q.limit {
                v.count(limit);
            }
            if let Some(cursor) = &mut q.cursor {
                v.text(cursor);
            }
        }
        Command::Upsert(u) => walk_upsert(u, v),
        Command::Delete(d) => {
            match &mut d.target {
                DeleteTarget::Attributes(keys) | DeleteTarget::Metadata(keys) => {
                    keys.iter_mut().for_each(|k| v.text(k));
                }
                DeleteTarget::Propositions | DeleteTarget::Concept => {}
            }
            walk_group(&mut d.where_, v);
        }
        Command::Describe(d) => walk_describe(d, v),
        Command::Search(s) => walk_search(s, v),
        Command::Update(u) => {
            for object in [&mut u.attributes, &mut u.metadata].into_iter().flatten() {
                object
                    .members
                    .iter_mut()
                    .for_each(|(_, val)| walk_update_value(val, v));
            }
            walk_group(&mut u.where_, v);
            if let Some(limit) = &mut u.limit {
                v.count(limit);
            }
        }
        Command::Merge(m) => walk_group(&mut m.where_, v),
        Command::Export(e) => {
            walk_group(&mut e.where_, v);
            if let Some(limit) = &mut e.limit {
                v.count(limit);
            }
            if let Some(cursor) = &mut e.cursor {
                v.text(cursor);
            }
        }
    }
}

fn walk_upsert(u: &mut Upsert, v: &mut impl ParamVisitor) {
    for item in &mut u.items {
        match item {
            UpsertItem::Concept(c) => {
                walk_concept(&mut c.matcher, v);
                if let Some(n) = &mut c.expect_version {
                    v.count(n);
                }
                walk_object(&mut c.attributes, v);
                for entry in c.propositions.iter_mut().flatten() {
                    v.text(&mut entry.predicate);
                    walk_term(&mut entry.target, v);
                    walk_object(&mut entry.metadata, v);
                }
                walk_object(&mut c.metadata, v);
            }
            UpsertItem::Proposition(p) => {
                walk_proposition(&mut p.matcher, v);
                if let Some(n) = &mut p.expect_version {
                    v.count(n);
                }
                walk_object(&mut p.attributes, v);
                walk_object(&mut p.metadata, v);
            }
        }
    }
    walk_object(&mut u.metadata, v);
}

fn walk_describe(d: &mut Describe, v: &mut impl ParamVisitor) {
    match &mut d.target {
        DescribeTarget::ConceptType(name) | DescribeTarget::PropositionType(name) => {
            v.text(name);
        }
        DescribeTarget::Primer
        | DescribeTarget::Domains
        | DescribeTarget::ConceptTypes
        | DescribeTarget::PropositionTypes => {}
    }
    if let Some(limit) = &mut d.limit {
        v.count(limit);
    }
    if let Some(cursor) = &mut d.cursor {
        v.text(cursor);
    }
}

fn walk_search(s: &mut Search, v: &mut impl ParamVisitor) {
    v.text(&mut s.term);
    if let Some(t) = &mut s.with_type {
        v.text(t);
    }
    if let Some(m) = &mut s.mode {
        v.text(m);
    }
    if let Some(t) = &mut s.threshold {
        v.value(t);
    }
    if let Some(limit) = &mut s.limit {
        v.count(limit);
    }
}

fn walk_update_value(value: &mut UpdateValue, v: &mut impl ParamVisitor) {
    match value {
        UpdateValue::Value(val, _) => v.value(val),
        UpdateValue::Path(_) => {}
        UpdateValue::Call(c) => c.args.iter_mut().for_each(|a| walk_update_value(a, v)),
    }
}

fn walk_object(object: &mut Option<Object>, v: &mut impl ParamVisitor) {
    if let Some(obj) = object {
        obj.members.iter_mut().for_each(|(_, val)| v.value(val));
    }
}

fn walk_group(group: &mut Group, v: &mut impl ParamVisitor) {
    for item in &mut group.items {
        match item {
            Pattern::Concept(c) => walk_concept(&mut c.matcher, v),
            Pattern::Proposition(p) => walk_proposition(&mut p.matcher, v),
            Pattern::Filter(f) => walk_expr(&mut f.expr, v),
            Pattern::Not(g) | Pattern::Optional(g) | Pattern::Union(g) => walk_group(g, v),
        }
    }
}

fn walk_concept(matcher: &mut ConceptMatcher, v: &mut impl ParamVisitor) {
    match matcher {
        ConceptMatcher::Id(a) | ConceptMatcher::Type(a) | ConceptMatcher::Name(a) => v.text(a),
        ConceptMatcher::TypeName { ty, name } => {
            v.text(ty);
            v.text(name);
        }
    }
}

fn walk_proposition(matcher: &mut PropositionMatcher, v: &mut impl ParamVisitor) {
    match matcher {
        PropositionMatcher::Id(a) => v.text(a),
        PropositionMatcher::Triple(t) => {
            walk_term(&mut t.subject, v);
            if let PredicateExpr::Names { names, .. } = &mut t.predicate {
                names.iter_mut().for_each(|n| v.text(n));
            }
            walk_term(&mut t.object, v);
        }
    }
}

fn walk_term(term: &mut Term, v: &mut impl ParamVisitor) {
    match term {
        Term::Var(_) => {}
        Term::Concept(m, _) => walk_concept(m, v),
        Term::Proposition(m, _) => walk_proposition(m, v),
    }
}

fn walk_expr(expr: &mut Expr, v: &mut impl ParamVisitor) {
    match expr {
        Expr::Or(l, r) | Expr::And(l, r) | Expr::Compare(_, l, r) => {
            walk_expr(l, v);
            walk_expr(r, v);
        }
        Expr::Not(e) => walk_expr(e, v),
        Expr::Call(c) => c.args.iter_mut().for_each(|a| walk_expr(a, v)),
        Expr::Path(_) => {}
        Expr::Value(val, _) => v.value(val),
    }
}

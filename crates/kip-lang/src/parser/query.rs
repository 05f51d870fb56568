//! Lowering commands and the patterns of a WHERE clause: concept and
//! proposition patterns, terms, predicates and hop ranges.

use pest::iterators::Pair;

use super::{Lower, PatternPlace, Rule, children, empty_matcher, empty_text, span_of};
use crate::ast::*;
use crate::error::ErrorCode;
use crate::suggest;

impl Lower<'_> {
    // ------------------------------------------------------------ commands

    pub(super) fn command(&mut self, pair: Pair<'_, Rule>) -> Command {
        match pair.as_rule() {
            Rule::find_query => Command::Find(self.find_query(pair)),
            Rule::upsert => Command::Upsert(self.upsert(pair)),
            Rule::delete_attributes
            | Rule::delete_metadata
            | Rule::delete_propositions
            | Rule::delete_concept => Command::Delete(self.delete(pair)),
            Rule::describe => Command::Describe(self.describe(pair)),
            Rule::search => Command::Search(self.search(pair)),
            Rule::update => Command::Update(self.update(pair)),
            Rule::merge => Command::Merge(self.merge(pair)),
            Rule::export => Command::Export(self.export(pair)),
            other => unreachable!("grammar: unexpected command rule {other:?}"),
        }
    }

    pub(super) fn find_query(&mut self, pair: Pair<'_, Rule>) -> FindQuery {
        let span = span_of(&pair);
        let mut query = FindQuery {
            find: Vec::new(),
            where_: Group::default(),
            order_by: Vec::new(),
            limit: None,
            cursor: None,
            span,
        };
        for part in children(pair) {
            match part.as_rule() {
                Rule::find_clause => {
                    for expr in children(part).filter(|p| p.as_rule() != Rule::kw_find) {
                        query.find.push(self.projection(expr));
                    }
                }
                Rule::where_clause => query.where_ = self.where_clause(part),
                Rule::order_by => {
                    for key in children(part).filter(|p| p.as_rule() == Rule::order_key) {
                        query.order_by.push(self.order_key(key));
                    }
                }
                Rule::limit_clause => query.limit = Some(self.limit(part)),
                Rule::cursor_clause => query.cursor = Some(self.cursor(part)),
                other => unreachable!("grammar: unexpected {other:?} in find_query"),
            }
        }
        query
    }

    pub(super) fn where_clause(&mut self, pair: Pair<'_, Rule>) -> Group {
        let group = pair
            .into_inner()
            .find(|p| p.as_rule() == Rule::group)
            .map(|g| self.group(g));
        group.unwrap_or_default()
    }

    // Blocks nest through `group`, `pattern` and `inner_group`: plain loops
    // rather than iterator adapters, whose closures would add frames to
    // every level of recursion in a debug build.
    pub(super) fn group(&mut self, pair: Pair<'_, Rule>) -> Group {
        let span = span_of(&pair);
        let mut items = Vec::new();
        for p in pair.into_inner() {
            if p.as_rule() != Rule::close_brace {
                items.push(self.pattern(p));
            }
        }
        Group { items, span }
    }

    pub(super) fn inner_group(&mut self, pair: Pair<'_, Rule>) -> Group {
        for p in children(pair) {
            if p.as_rule() == Rule::group {
                return self.group(p);
            }
        }
        Group::default()
    }

    /// A WHERE item. A dispatcher only, like [`Lower::expr_at`]: NOT /
    /// OPTIONAL / UNION blocks recurse through here, so each kind is
    /// lowered by its own function to keep a level's frame small.
    pub(super) fn pattern(&mut self, pair: Pair<'_, Rule>) -> Pattern {
        match pair.as_rule() {
            Rule::concept_clause => self.concept_clause(pair),
            Rule::proposition_clause => self.proposition_clause(pair),
            Rule::filter_clause => self.filter_clause(pair),
            Rule::not_clause => Pattern::Not(self.inner_group(pair)),
            Rule::optional_clause => Pattern::Optional(self.inner_group(pair)),
            Rule::union_clause => Pattern::Union(self.inner_group(pair)),
            other => unreachable!("grammar: unexpected where item {other:?}"),
        }
    }

    pub(super) fn concept_clause(&mut self, pair: Pair<'_, Rule>) -> Pattern {
        let span = span_of(&pair);
        let mut var = None;
        let mut matcher = None;
        for part in children(pair) {
            match part.as_rule() {
                Rule::variable => var = Some(self.variable(&part)),
                _ => matcher = Some(self.concept_pattern(part, PatternPlace::Query)),
            }
        }
        Pattern::Concept(ConceptClause {
            var,
            matcher: matcher.unwrap_or_else(empty_matcher),
            span,
        })
    }

    pub(super) fn proposition_clause(&mut self, pair: Pair<'_, Rule>) -> Pattern {
        let span = span_of(&pair);
        let mut var = None;
        let mut matcher = None;
        for part in children(pair) {
            match part.as_rule() {
                Rule::variable => var = Some(self.variable(&part)),
                _ => matcher = Some(self.proposition_pattern(part, PatternPlace::Query)),
            }
        }
        Pattern::Proposition(PropositionClause {
            var,
            matcher: matcher.unwrap_or_else(|| PropositionMatcher::Id(empty_text())),
            span,
        })
    }

    pub(super) fn filter_clause(&mut self, pair: Pair<'_, Rule>) -> Pattern {
        let span = span_of(&pair);
        let expr = pair
            .into_inner()
            .find(|p| p.as_rule() == Rule::expr)
            .map(|e| self.expr(e))
            .unwrap_or(Expr::Value(Value::Bool(true), span));
        Pattern::Filter(Filter { expr, span })
    }

    // ------------------------------------------------------------ patterns

    pub(super) fn concept_pattern(
        &mut self,
        pair: Pair<'_, Rule>,
        place: PatternPlace,
    ) -> ConceptMatcher {
        let span = span_of(&pair);
        let mut id = None;
        let mut ty = None;
        let mut name = None;
        for field in children(pair) {
            let field_span = span_of(&field);
            let (key, value) = self.pattern_field(field);
            let slot = match key.as_str() {
                "id" => &mut id,
                "type" => &mut ty,
                "name" => &mut name,
                _ => {
                    let suggestions = suggest::similar(&key, ["id", "type", "name"]);
                    let hint = match suggestions.first() {
                        Some(s) => format!(
                            "Did you mean `{s}`? A concept pattern has only `id`, `type` and `name`; match attributes with FILTER(?x.attributes.{key} == …)."
                        ),
                        None => format!(
                            "A concept pattern has only `id`, `type` and `name`; match attributes with FILTER(?x.attributes.{key} == …)."
                        ),
                    };
                    self.error(
                        ErrorCode::InvalidSyntax,
                        field_span,
                        format!("unknown field `{key}` in a concept pattern; expected `id`, `type` or `name`"),
                        Some(hint),
                    );
                    continue;
                }
            };
            if slot.is_some() {
                self.error(
                    ErrorCode::InvalidSyntax,
                    field_span,
                    format!("field `{key}` appears twice in a concept pattern"),
                    Some("Give each of `id`, `type` and `name` at most once.".into()),
                );
            }
            *slot = Some(value);
        }
        if let Some(Arg::Lit(t, s)) = &ty {
            let (t, s) = (t.clone(), *s);
            self.check_identifier("concept type name", &t, s, true);
        }
        let forms = match place {
            PatternPlace::Query => "`{id: …}`, `{type: …, name: …}`, `{type: …}` or `{name: …}`",
            PatternPlace::Write => {
                "`{type: …, name: …}` (match or create) or `{id: …}` (match only)"
            }
        };
        match (id, ty, name, place) {
            (Some(id), None, None, _) => ConceptMatcher::Id(id),
            (None, Some(ty), Some(name), _) => ConceptMatcher::TypeName { ty, name },
            (None, Some(ty), None, PatternPlace::Query) => ConceptMatcher::Type(ty),
            (None, None, Some(name), PatternPlace::Query) => ConceptMatcher::Name(name),
            (Some(_), _, _, _) => {
                self.error(
                    ErrorCode::InvalidSyntax,
                    span,
                    "`id` identifies a concept on its own and cannot be combined with `type` or `name`".into(),
                    Some(format!("Use {forms}.")),
                );
                empty_matcher()
            }
            (None, None, None, _) => {
                self.error(
                    ErrorCode::InvalidSyntax,
                    span,
                    "empty concept pattern".into(),
                    Some(format!("Use {forms}.")),
                );
                empty_matcher()
            }
            (None, ty, _, PatternPlace::Write) => {
                let missing = if ty.is_none() { "type" } else { "name" };
                self.error(
                    ErrorCode::InvalidSyntax,
                    span,
                    format!("this concept pattern lacks `{missing}`: writing needs both `type` and `name`, or `id`"),
                    Some(format!("Use {forms}.")),
                );
                empty_matcher()
            }
        }
    }

    pub(super) fn pattern_field(&mut self, pair: Pair<'_, Rule>) -> (String, Arg<String>) {
        let mut inner = children(pair);
        let key = inner.next().map(|k| self.key(k)).unwrap_or_default();
        let value = inner
            .next()
            .map(|v| self.text(v))
            .unwrap_or_else(empty_text);
        (key, value)
    }

    pub(super) fn proposition_pattern(
        &mut self,
        pair: Pair<'_, Rule>,
        place: PatternPlace,
    ) -> PropositionMatcher {
        let Some(inner) = children(pair).next() else {
            return PropositionMatcher::Id(empty_text());
        };
        match inner.as_rule() {
            Rule::id_pattern => {
                let field = children(inner).next();
                let Some(field) = field else {
                    return PropositionMatcher::Id(empty_text());
                };
                let field_span = span_of(&field);
                let (key, value) = self.pattern_field(field);
                if key != "id" {
                    self.error(
                        ErrorCode::InvalidSyntax,
                        field_span,
                        format!("expected `id: \"…\"` in a proposition pattern, found field `{key}`"),
                        Some("Write `(id: \"P:…\")` to match a proposition by id, or `(?subject, \"predicate\", ?object)` to match by structure.".into()),
                    );
                }
                PropositionMatcher::Id(value)
            }
            Rule::triple => {
                let mut parts = children(inner);
                let subject = parts.next().map(|p| self.term(p, place));
                let predicate = parts.next().map(|p| self.predicate(p, place));
                let object = parts.next().map(|p| self.term(p, place));
                match (subject, predicate, object) {
                    (Some(subject), Some(predicate), Some(object)) => {
                        PropositionMatcher::Triple(Box::new(Triple {
                            subject,
                            predicate,
                            object,
                        }))
                    }
                    _ => unreachable!("grammar: a triple has three parts"),
                }
            }
            other => unreachable!("grammar: unexpected {other:?} in proposition pattern"),
        }
    }

    pub(super) fn term(&mut self, pair: Pair<'_, Rule>, place: PatternPlace) -> Term {
        let span = span_of(&pair);
        let Some(inner) = children(pair).next() else {
            unreachable!("grammar: a term has one child");
        };
        match inner.as_rule() {
            Rule::variable => Term::Var(self.variable(&inner)),
            Rule::concept_pattern => Term::Concept(self.concept_pattern(inner, place), span),
            Rule::proposition_pattern => {
                Term::Proposition(self.proposition_pattern(inner, place), span)
            }
            other => unreachable!("grammar: unexpected {other:?} in term"),
        }
    }

    pub(super) fn predicate(&mut self, pair: Pair<'_, Rule>, place: PatternPlace) -> PredicateExpr {
        let span = span_of(&pair);
        let mut names = Vec::new();
        let mut hops = None;
        for part in children(pair) {
            match part.as_rule() {
                Rule::variable => {
                    let var = self.variable(&part);
                    if place == PatternPlace::Write {
                        self.error(
                            ErrorCode::InvalidSyntax,
                            var.span,
                            format!("a predicate variable (`?{}`) cannot be written", var.name),
                            Some(
                                "In UPSERT, name the predicate as a string, e.g. \"treats\"."
                                    .into(),
                            ),
                        );
                    }
                    return PredicateExpr::Var(var);
                }
                Rule::predicate_names => {
                    for text in children(part) {
                        let text = self.text(text);
                        if let Arg::Lit(name, span) = &text {
                            let (name, span) = (name.clone(), *span);
                            self.check_identifier("predicate name", &name, span, false);
                        }
                        names.push(text);
                    }
                }
                Rule::hops => hops = Some(self.hops(part)),
                other => unreachable!("grammar: unexpected {other:?} in predicate"),
            }
        }
        if place == PatternPlace::Write && (names.len() != 1 || hops.is_some()) {
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                "a written proposition needs exactly one predicate, without alternatives or hop ranges".into(),
                Some("Write one predicate string, e.g. (?a, \"treats\", ?b).".into()),
            );
        }
        PredicateExpr::Names { names, hops, span }
    }

    pub(super) fn hops(&mut self, pair: Pair<'_, Rule>) -> Hops {
        let span = span_of(&pair);
        let mut min = None;
        let mut max = None;
        let mut comma = false;
        for part in children(pair) {
            match part.as_rule() {
                Rule::uint => {
                    let n = self.u32_of(&part);
                    if comma {
                        max = Some(n);
                    } else {
                        min = Some(n);
                    }
                }
                Rule::hop_comma => comma = true,
                other => unreachable!("grammar: unexpected {other:?} in hops"),
            }
        }
        let min = min.unwrap_or(0);
        let max = if comma { max } else { Some(min) };
        if let Some(max) = max
            && min > max
        {
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                format!(
                    "hop range {{{min},{max}}} is empty: the minimum is larger than the maximum"
                ),
                Some(format!(
                    "Write {{{max},{min}}}, or {{{min},}} for no upper bound."
                )),
            );
        }
        Hops { min, max, span }
    }

    pub(super) fn u32_of(&mut self, pair: &Pair<'_, Rule>) -> u32 {
        match pair.as_str().parse::<u32>() {
            Ok(n) => n,
            Err(_) => {
                self.error(
                    ErrorCode::InvalidSyntax,
                    span_of(pair),
                    format!("the number {} is too large here", pair.as_str()),
                    Some("Use a number below 4294967296.".into()),
                );
                0
            }
        }
    }
}

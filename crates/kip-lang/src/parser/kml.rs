//! Lowering KML: UPSERT with its concept and proposition blocks, DELETE,
//! UPDATE, MERGE and EXPORT.

use pest::iterators::Pair;

use super::{Lower, PatternPlace, Rule, children, empty_matcher, empty_text, span_of};
use crate::ast::*;
use crate::error::{ErrorCode, KipError};
use crate::suggest;

impl Lower<'_> {
    // ------------------------------------------------------------ KML

    pub(super) fn upsert(&mut self, pair: Pair<'_, Rule>) -> Upsert {
        let span = span_of(&pair);
        let mut items = Vec::new();
        let mut metadata = None;
        let mut body = span;
        for part in children(pair).flat_map(|p| {
            if p.as_rule() == Rule::upsert_body {
                body = span_of(&p);
                children(p).collect::<Vec<_>>()
            } else {
                vec![p]
            }
        }) {
            match part.as_rule() {
                Rule::kw_upsert => {}
                Rule::concept_block => items.push(UpsertItem::Concept(self.concept_block(part))),
                Rule::proposition_block => {
                    items.push(UpsertItem::Proposition(self.proposition_block(part)));
                }
                Rule::with_metadata => metadata = self.with_metadata(part),
                other => unreachable!("grammar: unexpected {other:?} in UPSERT"),
            }
        }
        Upsert {
            items,
            metadata,
            body,
            span,
        }
    }

    pub(super) fn concept_block(&mut self, pair: Pair<'_, Rule>) -> ConceptBlock {
        let span = span_of(&pair);
        let mut block = ConceptBlock {
            handle: None,
            matcher: empty_matcher(),
            expect_version: None,
            attributes: None,
            propositions: None,
            metadata: None,
            body: span,
            span,
        };
        for part in children(pair).flat_map(|p| {
            if p.as_rule() == Rule::concept_body {
                block.body = span_of(&p);
                children(p).collect::<Vec<_>>()
            } else {
                vec![p]
            }
        }) {
            let part_span = span_of(&part);
            match part.as_rule() {
                Rule::kw_concept => {}
                Rule::variable => block.handle = Some(self.variable(&part)),
                Rule::concept_pattern => {
                    block.matcher = self.concept_pattern(part, PatternPlace::Write);
                }
                Rule::expect_version => block.expect_version = Some(self.expect_version(part)),
                Rule::set_attributes => self.set_attributes(part, &mut block.attributes, part_span),
                Rule::set_propositions => {
                    if block.propositions.is_some() {
                        self.error(
                            ErrorCode::InvalidSyntax,
                            part_span,
                            "`SET PROPOSITIONS` appears twice in this block".into(),
                            Some("Merge both into one SET PROPOSITIONS { … }.".into()),
                        );
                    }
                    let entries = part
                        .into_inner()
                        .filter(|p| p.as_rule() == Rule::set_proposition)
                        .map(|p| self.set_proposition(p))
                        .collect();
                    block.propositions = Some(entries);
                }
                Rule::with_metadata => block.metadata = self.with_metadata(part),
                other => unreachable!("grammar: unexpected {other:?} in CONCEPT"),
            }
        }
        block
    }

    pub(super) fn set_proposition(&mut self, pair: Pair<'_, Rule>) -> SetProposition {
        let span = span_of(&pair);
        let mut predicate = empty_text();
        let mut target = None;
        let mut metadata = None;
        for part in children(pair) {
            match part.as_rule() {
                Rule::text => {
                    predicate = self.text(part);
                    if let Arg::Lit(name, s) = &predicate {
                        let (name, s) = (name.clone(), *s);
                        self.check_identifier("predicate name", &name, s, false);
                    }
                }
                Rule::term => target = Some(self.term(part, PatternPlace::Write)),
                Rule::with_metadata => metadata = self.with_metadata(part),
                other => unreachable!("grammar: unexpected {other:?} in SET PROPOSITIONS"),
            }
        }
        SetProposition {
            predicate,
            target: target.unwrap_or_else(|| Term::Concept(empty_matcher(), span)),
            metadata,
            span,
        }
    }

    pub(super) fn proposition_block(&mut self, pair: Pair<'_, Rule>) -> PropositionBlock {
        let span = span_of(&pair);
        let mut block = PropositionBlock {
            handle: None,
            matcher: PropositionMatcher::Id(empty_text()),
            expect_version: None,
            attributes: None,
            metadata: None,
            body: span,
            span,
        };
        for part in children(pair).flat_map(|p| {
            if p.as_rule() == Rule::proposition_body {
                block.body = span_of(&p);
                children(p).collect::<Vec<_>>()
            } else {
                vec![p]
            }
        }) {
            let part_span = span_of(&part);
            match part.as_rule() {
                Rule::kw_proposition => {}
                Rule::variable => block.handle = Some(self.variable(&part)),
                Rule::proposition_pattern => {
                    block.matcher = self.proposition_pattern(part, PatternPlace::Write);
                }
                Rule::expect_version => block.expect_version = Some(self.expect_version(part)),
                Rule::set_attributes => self.set_attributes(part, &mut block.attributes, part_span),
                Rule::with_metadata => block.metadata = self.with_metadata(part),
                other => unreachable!("grammar: unexpected {other:?} in PROPOSITION"),
            }
        }
        block
    }

    pub(super) fn delete(&mut self, pair: Pair<'_, Rule>) -> Delete {
        let span = span_of(&pair);
        let rule = pair.as_rule();
        let mut keys = Vec::new();
        let mut var = None;
        let mut where_ = Group::default();
        let mut detach = false;
        let mut target_span = span;
        for part in children(pair) {
            match part.as_rule() {
                Rule::key_list => {
                    keys = children(part).map(|t| self.text(t)).collect();
                }
                Rule::variable => {
                    target_span = span_of(&part);
                    var = Some(self.variable(&part));
                }
                Rule::kw_detach => detach = true,
                Rule::where_clause => where_ = self.where_clause(part),
                _ => {}
            }
        }
        let target = match rule {
            Rule::delete_attributes => DeleteTarget::Attributes(keys),
            Rule::delete_metadata => DeleteTarget::Metadata(keys),
            Rule::delete_propositions => DeleteTarget::Propositions,
            _ => {
                if !detach {
                    let name = var.as_ref().map_or("", |v| v.name.as_str());
                    self.error(
                        ErrorCode::InvalidSyntax,
                        Span::new(target_span.end, target_span.end),
                        "`DELETE CONCEPT` requires `DETACH`".into(),
                        Some(format!("Write DELETE CONCEPT ?{name} DETACH WHERE {{ … }} to confirm that the concept and all its propositions are removed.")),
                    );
                }
                DeleteTarget::Concept
            }
        };
        Delete {
            target,
            var: var.unwrap_or(Var {
                name: String::new(),
                span,
            }),
            where_,
            span,
        }
    }

    pub(super) fn expect_version(&mut self, pair: Pair<'_, Rule>) -> Arg<u64> {
        let count = children(pair).find(|p| p.as_rule() == Rule::count);
        match count {
            Some(c) => self.count(c),
            None => unreachable!("grammar: EXPECT VERSION has a count"),
        }
    }

    pub(super) fn update(&mut self, pair: Pair<'_, Rule>) -> Update {
        let span = span_of(&pair);
        let mut update = Update {
            target: Var {
                name: String::new(),
                span,
            },
            attributes: None,
            metadata: None,
            where_: Group::default(),
            limit: None,
            span,
        };
        for part in children(pair) {
            let part_span = span_of(&part);
            match part.as_rule() {
                Rule::kw_update => {}
                Rule::variable => update.target = self.variable(&part),
                Rule::update_set => {
                    let mut is_attributes = true;
                    let mut object = UpdateObject::default();
                    for p in children(part) {
                        match p.as_rule() {
                            Rule::kw_attributes => is_attributes = true,
                            Rule::kw_metadata => is_attributes = false,
                            Rule::update_object => object = self.update_object(p),
                            _ => {}
                        }
                    }
                    let (slot, what) = if is_attributes {
                        (&mut update.attributes, "ATTRIBUTES")
                    } else {
                        (&mut update.metadata, "METADATA")
                    };
                    if slot.is_some() {
                        self.error(
                            ErrorCode::InvalidSyntax,
                            part_span,
                            format!("`SET {what}` appears twice in this UPDATE"),
                            Some(format!("Merge both into one SET {what} {{ … }}.")),
                        );
                    }
                    *slot = Some(object);
                }
                Rule::where_clause => update.where_ = self.where_clause(part),
                Rule::limit_clause => update.limit = Some(self.limit(part)),
                other => unreachable!("grammar: unexpected {other:?} in UPDATE"),
            }
        }
        update
    }

    pub(super) fn update_object(&mut self, pair: Pair<'_, Rule>) -> UpdateObject {
        let span = span_of(&pair);
        let mut members: Vec<(String, UpdateValue)> = Vec::new();
        for member in children(pair) {
            let member_span = span_of(&member);
            let mut inner = children(member);
            let key = inner.next().map(|k| self.key(k)).unwrap_or_default();
            let value = inner
                .next()
                .map(|v| self.update_value(v))
                .unwrap_or(UpdateValue::Value(Value::Null, member_span));
            if members.iter().any(|(k, _)| *k == key) {
                self.error(
                    ErrorCode::InvalidSyntax,
                    member_span,
                    format!("key `{key}` appears twice in this object"),
                    Some(
                        "Give each key once; to change a value, edit the first occurrence.".into(),
                    ),
                );
                continue;
            }
            members.push((key, value));
        }
        UpdateObject { members, span }
    }

    /// A value of an UPDATE's SET or an operand of an update expression.
    pub(super) fn update_value(&mut self, pair: Pair<'_, Rule>) -> UpdateValue {
        let pair = if pair.as_rule() == Rule::update_value {
            match children(pair).next() {
                Some(p) => p,
                None => unreachable!("grammar: an update value has one child"),
            }
        } else {
            pair
        };
        let span = span_of(&pair);
        match pair.as_rule() {
            Rule::update_call => self.update_call(pair),
            Rule::dot_path => UpdateValue::Path(self.dot_path(pair)),
            Rule::value => UpdateValue::Value(self.value(pair), span),
            other => unreachable!("grammar: unexpected {other:?} in an update value"),
        }
    }

    pub(super) fn update_call(&mut self, pair: Pair<'_, Rule>) -> UpdateValue {
        let span = span_of(&pair);
        let mut inner = children(pair);
        let Some(name_pair) = inner.next() else {
            unreachable!("grammar: an update expression starts with its name");
        };
        let name = name_pair.as_str().to_owned();
        let args: Vec<UpdateValue> = inner.map(|p| self.update_value(p)).collect();
        let Some(func) = UpdateFunc::from_keyword(&name) else {
            let names = UpdateFunc::ALL.iter().map(|f| f.keyword());
            let suggestions = suggest::similar(&name, names);
            let hint = match suggestions.first() {
                Some(s) => format!("Did you mean `{s}`?"),
                None => "Update expressions are ADD(a, b), MUL(a, b), CLAMP(x, lo, hi) and COALESCE(x, default).".into(),
            };
            let error = KipError::new(
                ErrorCode::InvalidSyntax,
                format!("unknown update expression `{name}`"),
            )
            .with_hint(hint)
            .at(self.source, span_of(&name_pair))
            .with_suggestions(&suggestions);
            self.errors.push(error);
            return UpdateValue::Value(Value::Null, span);
        };
        if args.len() != func.arity() {
            let usage = match func {
                UpdateFunc::Add => "ADD(?x.attributes.count, 1)",
                UpdateFunc::Mul => "MUL(?x.metadata.confidence, 0.9)",
                UpdateFunc::Clamp => "CLAMP(?x.metadata.confidence, 0.0, 1.0)",
                UpdateFunc::Coalesce => "COALESCE(?x.attributes.count, 0)",
            };
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                format!(
                    "`{name}` takes {} arguments, found {}",
                    func.arity(),
                    args.len()
                ),
                Some(format!("Write {usage}.")),
            );
        }
        UpdateValue::Call(UpdateCall { func, args, span })
    }

    pub(super) fn merge(&mut self, pair: Pair<'_, Rule>) -> Merge {
        let span = span_of(&pair);
        let mut vars = Vec::new();
        let mut where_ = Group::default();
        for part in children(pair) {
            match part.as_rule() {
                Rule::variable => vars.push(self.variable(&part)),
                Rule::where_clause => where_ = self.where_clause(part),
                _ => {}
            }
        }
        let mut vars = vars.into_iter();
        let mut next = || {
            vars.next().unwrap_or(Var {
                name: String::new(),
                span,
            })
        };
        let source = next();
        let target = next();
        Merge {
            source,
            target,
            where_,
            span,
        }
    }

    pub(super) fn export(&mut self, pair: Pair<'_, Rule>) -> Export {
        let span = span_of(&pair);
        let mut export = Export {
            target: Var {
                name: String::new(),
                span,
            },
            where_: Group::default(),
            limit: None,
            cursor: None,
            span,
        };
        for part in children(pair) {
            match part.as_rule() {
                Rule::kw_export => {}
                Rule::variable => export.target = self.variable(&part),
                Rule::where_clause => export.where_ = self.where_clause(part),
                Rule::limit_clause => export.limit = Some(self.limit(part)),
                Rule::cursor_clause => export.cursor = Some(self.cursor(part)),
                other => unreachable!("grammar: unexpected {other:?} in EXPORT"),
            }
        }
        export
    }
}

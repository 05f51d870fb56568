//! Lowering META: DESCRIBE and SEARCH.

use pest::iterators::Pair;

use super::{Lower, Rule, children, empty_text, span_of};
use crate::ast::*;
use crate::error::{ErrorCode, KipError};
use crate::suggest;

impl Lower<'_> {
    // ------------------------------------------------------------ META

    pub(super) fn describe(&mut self, pair: Pair<'_, Rule>) -> Describe {
        let span = span_of(&pair);
        let mut describe = Describe {
            target: DescribeTarget::Primer,
            limit: None,
            cursor: None,
            span,
        };
        for part in children(pair) {
            match part.as_rule() {
                Rule::kw_describe => {}
                Rule::kw_primer => describe.target = DescribeTarget::Primer,
                Rule::kw_domains => describe.target = DescribeTarget::Domains,
                Rule::concept_types => describe.target = DescribeTarget::ConceptTypes,
                Rule::proposition_types => describe.target = DescribeTarget::PropositionTypes,
                Rule::concept_type | Rule::proposition_type => {
                    let is_concept = part.as_rule() == Rule::concept_type;
                    let name = children(part).find(|p| p.as_rule() == Rule::text);
                    let name = name.map(|t| self.text(t)).unwrap_or_else(empty_text);
                    if let Arg::Lit(n, s) = &name {
                        let (n, s) = (n.clone(), *s);
                        if is_concept {
                            self.check_identifier("concept type name", &n, s, true);
                        } else {
                            self.check_identifier("predicate name", &n, s, false);
                        }
                    }
                    describe.target = if is_concept {
                        DescribeTarget::ConceptType(name)
                    } else {
                        DescribeTarget::PropositionType(name)
                    };
                }
                Rule::limit_clause => describe.limit = Some(self.limit(part)),
                Rule::cursor_clause => describe.cursor = Some(self.cursor(part)),
                other => unreachable!("grammar: unexpected {other:?} in DESCRIBE"),
            }
        }
        describe
    }

    pub(super) fn search(&mut self, pair: Pair<'_, Rule>) -> Search {
        let span = span_of(&pair);
        let mut search = Search {
            target: SearchTarget::Concept,
            term: empty_text(),
            with_type: None,
            mode: None,
            threshold: None,
            limit: None,
            span,
        };
        for part in children(pair) {
            match part.as_rule() {
                Rule::kw_search => {}
                Rule::search_mode => {
                    let t = children(part).find(|p| p.as_rule() == Rule::text);
                    let mode = t.map(|t| self.text(t)).unwrap_or_else(empty_text);
                    if let Arg::Lit(m, span) = &mode
                        && !SEARCH_MODES.contains(&m.as_str())
                    {
                        let suggestions = suggest::similar(m, SEARCH_MODES);
                        let hint = match suggestions.first() {
                            Some(s) => format!(
                                "Did you mean \"{s}\"? MODE is \"keyword\", \"semantic\" or \"hybrid\"."
                            ),
                            None => "MODE is \"keyword\", \"semantic\" or \"hybrid\".".to_owned(),
                        };
                        let error = KipError::new(
                            ErrorCode::InvalidSyntax,
                            format!("unknown search mode {m:?}; expected \"keyword\", \"semantic\" or \"hybrid\""),
                        )
                        .with_hint(hint)
                        .at(self.source, *span)
                        .with_suggestions(&suggestions);
                        self.errors.push(error);
                    }
                    search.mode = Some(mode);
                }
                Rule::search_threshold => {
                    let v = children(part).find(|p| p.as_rule() != Rule::kw_threshold);
                    if let Some(v) = v {
                        let span = span_of(&v);
                        let value = self.value(v);
                        if let Value::Number(n) = &value
                            && !n.as_f64().is_some_and(|x| (0.0..=1.0).contains(&x))
                        {
                            self.error(
                                ErrorCode::InvalidSyntax,
                                span,
                                format!("THRESHOLD {n} is outside [0, 1]"),
                                Some("A threshold is a minimum normalised _score, between 0.0 and 1.0, e.g. THRESHOLD 0.75.".into()),
                            );
                        }
                        search.threshold = Some(value);
                    }
                }
                Rule::kw_concept => search.target = SearchTarget::Concept,
                Rule::kw_proposition => search.target = SearchTarget::Proposition,
                Rule::text => search.term = self.text(part),
                Rule::search_type => {
                    let t = children(part).find(|p| p.as_rule() == Rule::text);
                    search.with_type = t.map(|t| self.text(t));
                }
                Rule::limit_clause => search.limit = Some(self.limit(part)),
                other => unreachable!("grammar: unexpected {other:?} in SEARCH"),
            }
        }
        search
    }
}

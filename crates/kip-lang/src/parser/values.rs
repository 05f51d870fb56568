//! Lowering values: variables, parameters, strings, numbers, objects and
//! the small arguments (counts, limits, cursors) that may be either.

use pest::iterators::Pair;

use super::{Lower, Rule, children, empty_text, span_of};
use crate::ast::*;
use crate::error::ErrorCode;
use crate::lexeme::unescape;

impl Lower<'_> {
    // ------------------------------------------------------------ values

    pub(super) fn variable(&mut self, pair: &Pair<'_, Rule>) -> Var {
        let span = span_of(pair);
        let name = pair.as_str().trim_start_matches('?').to_owned();
        self.check_identifier("variable name", &name, span, false);
        Var { name, span }
    }

    pub(super) fn param(&mut self, pair: &Pair<'_, Rule>) -> Param {
        let span = span_of(pair);
        let name = pair.as_str().trim_start_matches(':').to_owned();
        self.check_identifier("parameter name", &name, span, false);
        Param { name, span }
    }

    pub(super) fn text(&mut self, pair: Pair<'_, Rule>) -> Arg<String> {
        let span = span_of(&pair);
        let inner = if pair.as_rule() == Rule::text {
            children(pair).next()
        } else {
            Some(pair)
        };
        match inner {
            Some(p) if p.as_rule() == Rule::param => Arg::Param(self.param(&p)),
            Some(p) => Arg::Lit(self.string(&p), span),
            None => empty_text(),
        }
    }

    pub(super) fn count(&mut self, pair: Pair<'_, Rule>) -> Arg<u64> {
        let span = span_of(&pair);
        match children(pair).next() {
            Some(p) if p.as_rule() == Rule::param => Arg::Param(self.param(&p)),
            Some(p) => match p.as_str().parse::<u64>() {
                Ok(n) => Arg::Lit(n, span),
                Err(_) => {
                    self.error(
                        ErrorCode::InvalidSyntax,
                        span,
                        format!("the number {} is too large", p.as_str()),
                        Some("Use a smaller LIMIT.".into()),
                    );
                    Arg::Lit(0, span)
                }
            },
            None => Arg::Lit(0, span),
        }
    }

    pub(super) fn limit(&mut self, pair: Pair<'_, Rule>) -> Arg<u64> {
        let count = children(pair).find(|p| p.as_rule() == Rule::count);
        match count {
            Some(c) => self.count(c),
            None => unreachable!("grammar: LIMIT has a count"),
        }
    }

    pub(super) fn cursor(&mut self, pair: Pair<'_, Rule>) -> Arg<String> {
        let text = children(pair).find(|p| p.as_rule() == Rule::text);
        match text {
            Some(t) => self.text(t),
            None => unreachable!("grammar: CURSOR has a token"),
        }
    }

    /// Decodes a string literal (the grammar has already checked its escapes).
    pub(super) fn string(&mut self, pair: &Pair<'_, Rule>) -> String {
        let raw = pair.as_str();
        let body = raw
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(raw);
        match unescape(body) {
            Ok(s) => s,
            Err(message) => {
                self.error(
                    ErrorCode::InvalidSyntax,
                    span_of(pair),
                    message,
                    Some("Escape a character outside the Basic Multilingual Plane as a surrogate pair, e.g. \\ud83d\\ude00, or write it directly.".into()),
                );
                String::new()
            }
        }
    }

    pub(super) fn key(&mut self, pair: Pair<'_, Rule>) -> String {
        let Some(inner) = children(pair).next() else {
            return String::new();
        };
        if inner.as_rule() == Rule::string {
            self.string(&inner)
        } else {
            let name = inner.as_str().to_owned();
            self.check_identifier("key", &name, span_of(&inner), true);
            name
        }
    }

    pub(super) fn object(&mut self, pair: Pair<'_, Rule>) -> Object {
        let span = span_of(&pair);
        let mut members: Vec<(String, Value)> = Vec::new();
        for member in children(pair) {
            let member_span = span_of(&member);
            let mut inner = children(member);
            let key = inner.next().map(|k| self.key(k)).unwrap_or_default();
            let value = inner.next().map(|v| self.value(v)).unwrap_or(Value::Null);
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
        Object { members, span }
    }

    pub(super) fn value(&mut self, pair: Pair<'_, Rule>) -> Value {
        let pair = if pair.as_rule() == Rule::value {
            match children(pair).next() {
                Some(p) => p,
                None => return Value::Null,
            }
        } else {
            pair
        };
        match pair.as_rule() {
            Rule::object => Value::Object(self.object(pair)),
            Rule::array => Value::Array(children(pair).map(|v| self.value(v)).collect()),
            Rule::string => Value::String(self.string(&pair)),
            Rule::number => match pair.as_str().parse::<serde_json::Number>() {
                Ok(n) => Value::Number(n),
                Err(_) => {
                    self.error(
                        ErrorCode::InvalidSyntax,
                        span_of(&pair),
                        format!("the number {} cannot be represented", pair.as_str()),
                        Some("Use a number within the range of a 64-bit float.".into()),
                    );
                    Value::Null
                }
            },
            Rule::lit_true => Value::Bool(true),
            Rule::lit_false => Value::Bool(false),
            Rule::lit_null => Value::Null,
            Rule::param => Value::Param(self.param(&pair)),
            other => unreachable!("grammar: unexpected {other:?} in value"),
        }
    }

    pub(super) fn with_metadata(&mut self, pair: Pair<'_, Rule>) -> Option<Object> {
        children(pair)
            .find(|p| p.as_rule() == Rule::object)
            .map(|o| self.object(o))
    }

    pub(super) fn set_attributes(
        &mut self,
        pair: Pair<'_, Rule>,
        slot: &mut Option<Object>,
        span: Span,
    ) {
        let object = pair
            .into_inner()
            .find(|p| p.as_rule() == Rule::object)
            .map(|o| self.object(o));
        if slot.is_some() {
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                "`SET ATTRIBUTES` appears twice in this block".into(),
                Some("Merge both into one SET ATTRIBUTES { … }.".into()),
            );
        }
        *slot = object;
    }
}

//! Lowering expressions: FIND projections, ORDER BY keys, dot paths, the
//! operators of FILTER, function calls and aggregates, with the nesting
//! depth bounded as they are lowered.

use pest::iterators::Pair;

use super::{Lower, Rule, children, expr_span, placeholder_path, skip_single_operands, span_of};
use crate::ast::*;
use crate::error::{ErrorCode, KipError};
use crate::nesting::MAX_DEPTH;
use crate::suggest;

impl Lower<'_> {
    // ------------------------------------------------------------ expressions

    pub(super) fn projection(&mut self, pair: Pair<'_, Rule>) -> Projection {
        match pair.as_rule() {
            Rule::dot_path => Projection::Path(self.dot_path(pair)),
            Rule::call => {
                let span = span_of(&pair);
                match self.call(pair).0 {
                    CallOrAggregate::Aggregate(agg) => Projection::Aggregate(agg),
                    CallOrAggregate::Call(call) => {
                        self.error(
                            ErrorCode::InvalidSyntax,
                            span,
                            format!("`{}` is a FILTER function, not an aggregate", call.func.keyword()),
                            Some("FIND and ORDER BY take variables, dot paths and the aggregates COUNT, SUM, AVG, MIN, MAX; move the test into FILTER(…).".into()),
                        );
                        Projection::Path(placeholder_path(span))
                    }
                    CallOrAggregate::Invalid => Projection::Path(placeholder_path(span)),
                }
            }
            other => unreachable!("grammar: unexpected {other:?} in FIND"),
        }
    }

    pub(super) fn order_key(&mut self, pair: Pair<'_, Rule>) -> OrderKey {
        let span = span_of(&pair);
        let mut expr = None;
        let mut descending = false;
        for part in children(pair) {
            match part.as_rule() {
                Rule::kw_asc => descending = false,
                Rule::kw_desc => descending = true,
                _ => expr = Some(self.projection(part)),
            }
        }
        OrderKey {
            expr: expr.unwrap_or_else(|| Projection::Path(placeholder_path(span))),
            descending,
            span,
        }
    }

    pub(super) fn dot_path(&mut self, pair: Pair<'_, Rule>) -> DotPath {
        let span = span_of(&pair);
        let mut inner = children(pair);
        let var = match inner.next() {
            Some(v) => self.variable(&v),
            None => unreachable!("grammar: a dot path starts with a variable"),
        };
        let segments: Vec<Pair<'_, Rule>> = inner.collect();
        for seg in &segments {
            self.check_identifier("field name", seg.as_str(), span_of(seg), false);
        }
        let field = match segments.split_first() {
            None => Field::Whole,
            Some((first, rest)) => {
                let rest_names: Vec<String> = rest.iter().map(|p| p.as_str().to_owned()).collect();
                let top = first.as_str();
                let simple = |field: Field, lower: &mut Self| {
                    if let Some(extra) = rest.first() {
                        lower.error(
                            ErrorCode::InvalidSyntax,
                            span_of(extra),
                            format!(
                                "`.{top}` has no fields; `.{}` cannot follow it",
                                extra.as_str()
                            ),
                            Some(format!("Use ?{}.{top} on its own.", var.name)),
                        );
                    }
                    field
                };
                match top {
                    "id" => simple(Field::Id, self),
                    "type" => simple(Field::Type, self),
                    "name" => simple(Field::Name, self),
                    "subject" => simple(Field::Subject, self),
                    "predicate" => simple(Field::Predicate, self),
                    "object" => simple(Field::Object, self),
                    "attributes" => Field::Attributes(rest_names),
                    "metadata" => Field::Metadata(rest_names),
                    other => {
                        let suggestions = suggest::similar(other, Field::TOP_LEVEL);
                        let hint = match suggestions.first() {
                            Some(s) => format!(
                                "Did you mean ?{}.{s}? Attributes are read as ?{}.attributes.{other}.",
                                var.name, var.name
                            ),
                            None => format!(
                                "Attributes are read as ?{0}.attributes.{other} and metadata as ?{0}.metadata.{other}.",
                                var.name
                            ),
                        };
                        self.error(
                            ErrorCode::InvalidSyntax,
                            span_of(first),
                            format!("unknown field `.{other}`; expected one of id, type, name, subject, predicate, object, attributes, metadata"),
                            Some(hint),
                        );
                        Field::Attributes(vec![other.to_owned()])
                    }
                }
            }
        };
        DotPath { var, field, span }
    }

    pub(super) fn expr(&mut self, pair: Pair<'_, Rule>) -> Expr {
        self.expr_at(pair).0
    }

    /// An expression and the depth of its tree. Brackets bound how deep
    /// lowering recurses, but not how deep the tree it builds is: a chain
    /// of `||` / `&&` operands or of `!` adds a level per operator without
    /// a bracket. Every node built here is checked against [`MAX_DEPTH`],
    /// so the passes that recurse over expressions later (validation, the
    /// formatter, the engine) never meet a deeper one; an expression past
    /// the limit is reported once and replaced by a stand-in.
    pub(super) fn expr_at(&mut self, pair: Pair<'_, Rule>) -> (Expr, usize) {
        let pair = skip_single_operands(pair);
        // A dispatcher only: every kind has its own function, so that the
        // frame of each level of recursion holds one kind's locals (a
        // debug build gives every local of a function its own slot).
        match pair.as_rule() {
            Rule::expr => self.fold(pair, Rule::and_expr, |l, r| {
                Expr::Or(Box::new(l), Box::new(r))
            }),
            Rule::and_expr => self.fold(pair, Rule::unary_expr, |l, r| {
                Expr::And(Box::new(l), Box::new(r))
            }),
            Rule::unary_expr => self.negation(pair),
            Rule::comparison => self.comparison(pair),
            Rule::call => self.call_expr(pair),
            Rule::dot_path => (Expr::Path(self.dot_path(pair)), 1),
            Rule::value => {
                let span = span_of(&pair);
                (Expr::Value(self.value(pair), span), 1)
            }
            other => unreachable!("grammar: unexpected {other:?} in expression"),
        }
    }

    /// An operand with its `!`s.
    pub(super) fn negation(&mut self, pair: Pair<'_, Rule>) -> (Expr, usize) {
        let span = span_of(&pair);
        let mut nots = Vec::new();
        let mut operand = None;
        for part in children(pair) {
            match part.as_rule() {
                Rule::not_op => nots.push(span_of(&part)),
                _ => operand = Some(self.expr_at(part)),
            }
        }
        let (mut e, mut depth) = operand.unwrap_or((Expr::Value(Value::Null, span), 1));
        // The `!` nearest the operand applies first.
        for not in nots.into_iter().rev() {
            depth += 1;
            if self.too_deep(depth, not) {
                return (Expr::Value(Value::Null, span), 1);
            }
            e = Expr::Not(Box::new(e));
        }
        (e, depth)
    }

    pub(super) fn comparison(&mut self, pair: Pair<'_, Rule>) -> (Expr, usize) {
        let span = span_of(&pair);
        let mut inner = children(pair);
        let left = inner.next().map(|p| self.expr_at(p));
        let op = inner.next().map(|p| match p.as_str() {
            "==" => CompareOp::Eq,
            "!=" => CompareOp::Ne,
            "<=" => CompareOp::Le,
            ">=" => CompareOp::Ge,
            "<" => CompareOp::Lt,
            _ => CompareOp::Gt,
        });
        let right = inner.next().map(|p| self.expr_at(p));
        match (left, op, right) {
            (Some((l, ld)), Some(op), Some((r, rd))) => {
                let depth = ld.max(rd) + 1;
                if self.too_deep(depth, span) {
                    return (Expr::Value(Value::Null, span), 1);
                }
                (Expr::Compare(op, Box::new(l), Box::new(r)), depth)
            }
            (Some(l), _, _) => l,
            _ => unreachable!("grammar: a comparison has an operand"),
        }
    }

    /// A call inside FILTER: a function (an aggregate is an error here).
    pub(super) fn call_expr(&mut self, pair: Pair<'_, Rule>) -> (Expr, usize) {
        let span = span_of(&pair);
        let (call, args_depth) = self.call(pair);
        let depth = args_depth + 1;
        if self.too_deep(depth, span) {
            return (Expr::Value(Value::Null, span), 1);
        }
        let expr = match call {
            CallOrAggregate::Call(call) => Expr::Call(call),
            CallOrAggregate::Aggregate(agg) => {
                self.misplaced_aggregate(&agg, span);
                Expr::Value(Value::Null, span)
            }
            CallOrAggregate::Invalid => Expr::Value(Value::Null, span),
        };
        (expr, depth)
    }

    /// An aggregate inside FILTER, or inside another aggregate.
    #[inline(never)]
    pub(super) fn misplaced_aggregate(&mut self, agg: &Aggregate, span: Span) {
        if self.in_aggregate {
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                format!(
                    "the aggregate `{}` cannot be nested inside another aggregate",
                    agg.func.keyword()
                ),
                Some("Aggregate a variable or dot path directly, e.g. COUNT(?x).".into()),
            );
        } else {
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                format!(
                    "the aggregate `{}` cannot be used inside FILTER",
                    agg.func.keyword()
                ),
                Some(
                    "FILTER tests one row at a time; aggregates belong in FIND(…) or ORDER BY."
                        .into(),
                ),
            );
        }
    }

    /// Whether an expression tree `depth` deep is past [`MAX_DEPTH`]; if so,
    /// reports it at `span`.
    pub(super) fn too_deep(&mut self, depth: usize, span: Span) -> bool {
        if depth <= MAX_DEPTH {
            return false;
        }
        self.report_too_deep(span);
        true
    }

    #[inline(never)]
    pub(super) fn report_too_deep(&mut self, span: Span) {
        self.errors.push(crate::nesting::too_deep(
            self.source,
            span,
            "this expression",
            &format!(
                "A FILTER expression may nest at most {MAX_DEPTH} levels (each `!`, `&&`, `||`, comparison and function call adds one). Split a long `&&` chain into several FILTER clauses (all must hold), and write a long `||` chain of equalities as IN(?x, [...])."
            ),
        ));
    }

    pub(super) fn fold(
        &mut self,
        pair: Pair<'_, Rule>,
        operand_rule: Rule,
        combine: impl Fn(Expr, Expr) -> Expr,
    ) -> (Expr, usize) {
        let span = span_of(&pair);
        let mut acc: Option<(Expr, usize)> = None;
        for part in children(pair).filter(|p| p.as_rule() == operand_rule) {
            let part_span = span_of(&part);
            let (e, d) = self.expr_at(part);
            acc = Some(match acc {
                None => (e, d),
                Some((l, ld)) => {
                    let depth = ld.max(d) + 1;
                    if self.too_deep(depth, part_span) {
                        // The rest of the chain is not lowered: one error
                        // for the chain, not one per operand past the limit.
                        return (Expr::Value(Value::Null, span), 1);
                    }
                    (combine(l, e), depth)
                }
            });
        }
        acc.unwrap_or((Expr::Value(Value::Null, Span::default()), 1))
    }

    /// A call, and the depth of its deepest argument's tree.
    pub(super) fn call(&mut self, pair: Pair<'_, Rule>) -> (CallOrAggregate, usize) {
        let span = span_of(&pair);
        let mut inner = children(pair);
        let Some(name_pair) = inner.next() else {
            unreachable!("grammar: a call starts with its name");
        };
        let name = name_pair.as_str();
        let mut distinct = false;
        let mut args = Vec::new();
        let mut args_depth = 0;
        let errors_before = self.errors.len();
        let outer = std::mem::replace(
            &mut self.in_aggregate,
            AggregateFunc::from_keyword(name).is_some(),
        );
        for part in inner {
            match part.as_rule() {
                Rule::kw_distinct => distinct = true,
                _ => {
                    let (arg, depth) = self.expr_at(part);
                    args_depth = args_depth.max(depth);
                    args.push(arg);
                }
            }
        }
        self.in_aggregate = outer;
        if let Some(func) = AggregateFunc::from_keyword(name) {
            let aggregate = self.aggregate(func, name, distinct, &args, span, errors_before);
            return (aggregate, args_depth);
        }
        (self.function(&name_pair, distinct, args, span), args_depth)
    }

    /// An aggregate: exactly one argument, a variable or dot path. An
    /// argument that was itself wrong (errors since `errors_before`) has
    /// been reported already.
    pub(super) fn aggregate(
        &mut self,
        func: AggregateFunc,
        name: &str,
        distinct: bool,
        args: &[Expr],
        span: Span,
        errors_before: usize,
    ) -> CallOrAggregate {
        let arg = match args {
            [Expr::Path(path)] => path.clone(),
            [other] => {
                let found = match other {
                    Expr::Value(..) => "a value",
                    Expr::Call(_) => "a function call",
                    _ => "an expression",
                };
                // An argument that was itself wrong has been reported already.
                if self.errors.len() == errors_before {
                    self.error(
                        ErrorCode::InvalidSyntax,
                        expr_span(other),
                        format!("`{name}` aggregates a variable or dot path, found {found}"),
                        Some(format!("Write {name}(?x) or {name}(?x.attributes.key).")),
                    );
                }
                return CallOrAggregate::Invalid;
            }
            _ => {
                self.error(
                    ErrorCode::InvalidSyntax,
                    span,
                    format!("`{name}` takes exactly one argument, found {}", args.len()),
                    Some(format!("Write {name}(?x) or {name}(?x.attributes.key).")),
                );
                return CallOrAggregate::Invalid;
            }
        };
        CallOrAggregate::Aggregate(Aggregate {
            func,
            distinct,
            arg,
            span,
        })
    }

    /// A FILTER function: known name (else "did you mean"), no DISTINCT,
    /// its arity, `IN`'s array.
    pub(super) fn function(
        &mut self,
        name_pair: &Pair<'_, Rule>,
        distinct: bool,
        args: Vec<Expr>,
        span: Span,
    ) -> CallOrAggregate {
        let name = name_pair.as_str();
        let Some(func) = Func::from_keyword(name) else {
            let names = Func::ALL
                .iter()
                .map(|f| f.keyword())
                .chain(AggregateFunc::ALL.iter().map(|f| f.keyword()));
            let suggestions = suggest::similar(name, names);
            let hint = match suggestions.first() {
                Some(s) => format!("Did you mean `{s}`?"),
                None => "FILTER functions are CONTAINS, STARTS_WITH, ENDS_WITH, REGEX, IN, IS_NULL and IS_NOT_NULL; aggregates are COUNT, SUM, AVG, MIN and MAX.".into(),
            };
            let error = KipError::new(
                ErrorCode::InvalidSyntax,
                format!("unknown function `{name}`"),
            )
            .with_hint(hint)
            .at(self.source, span_of(name_pair))
            .with_suggestions(&suggestions);
            self.errors.push(error);
            return CallOrAggregate::Invalid;
        };
        if distinct {
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                format!("`DISTINCT` only applies to aggregates, not to `{name}`"),
                Some("Remove DISTINCT.".into()),
            );
        }
        if args.len() != func.arity() {
            let usage = match func {
                Func::IsNull | Func::IsNotNull => format!("{name}(?x.attributes.key)"),
                Func::In => "IN(?x.attributes.key, [\"a\", \"b\"])".to_owned(),
                _ => format!("{name}(?x.name, \"text\")"),
            };
            self.error(
                ErrorCode::InvalidSyntax,
                span,
                format!(
                    "`{name}` takes {} argument{}, found {}",
                    func.arity(),
                    if func.arity() == 1 { "" } else { "s" },
                    args.len()
                ),
                Some(format!("Write {usage}.")),
            );
        } else if func == Func::In
            && !matches!(
                args.get(1),
                Some(Expr::Value(Value::Array(_) | Value::Param(_), _))
            )
        {
            self.error(
                ErrorCode::InvalidSyntax,
                args.get(1).map_or(span, expr_span),
                "the second argument of `IN` must be an array literal".into(),
                Some("Write IN(?x.attributes.key, [\"a\", \"b\"]).".into()),
            );
        }
        CallOrAggregate::Call(Call { func, args, span })
    }
}

pub(super) enum CallOrAggregate {
    Call(Call),
    Aggregate(Aggregate),
    Invalid,
}

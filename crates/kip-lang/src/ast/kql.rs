//! The KQL nodes: FIND with its WHERE patterns, expressions and functions.

use super::*;

/// `FIND(…) WHERE {…} [ORDER BY …] [LIMIT n] [CURSOR "…"]`.
#[derive(Clone, Debug, PartialEq)]
pub struct FindQuery {
    pub find: Vec<Projection>,
    pub where_: Group,
    pub order_by: Vec<OrderKey>,
    pub limit: Option<Arg<u64>>,
    pub cursor: Option<Arg<String>>,
    pub span: Span,
}

/// A FIND expression or ORDER BY key: a dot path or an aggregate.
#[derive(Clone, Debug, PartialEq)]
pub enum Projection {
    Path(DotPath),
    Aggregate(Aggregate),
}

impl Projection {
    pub fn span(&self) -> Span {
        match self {
            Projection::Path(p) => p.span,
            Projection::Aggregate(a) => a.span,
        }
    }
}

/// `COUNT([DISTINCT] ?x…)`, `SUM`, `AVG`, `MIN`, `MAX`.
#[derive(Clone, Debug, PartialEq)]
pub struct Aggregate {
    pub func: AggregateFunc,
    pub distinct: bool,
    pub arg: DotPath,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggregateFunc {
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

impl AggregateFunc {
    pub const ALL: [AggregateFunc; 5] = [
        AggregateFunc::Count,
        AggregateFunc::Sum,
        AggregateFunc::Avg,
        AggregateFunc::Min,
        AggregateFunc::Max,
    ];

    pub fn keyword(self) -> &'static str {
        match self {
            AggregateFunc::Count => "COUNT",
            AggregateFunc::Sum => "SUM",
            AggregateFunc::Avg => "AVG",
            AggregateFunc::Min => "MIN",
            AggregateFunc::Max => "MAX",
        }
    }

    pub fn from_keyword(s: &str) -> Option<AggregateFunc> {
        AggregateFunc::ALL.into_iter().find(|f| f.keyword() == s)
    }
}

/// `?var` followed by a field path, e.g. `?drug.attributes.risk_level`.
#[derive(Clone, Debug, PartialEq)]
pub struct DotPath {
    pub var: Var,
    pub field: Field,
    pub span: Span,
}

/// What a dot path reads from the element bound to its variable.
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    /// `?x`: the whole concept or proposition object.
    Whole,
    Id,
    Type,
    Name,
    Subject,
    Predicate,
    Object,
    /// `?x.attributes` (empty path: the whole object) or `?x.attributes.k.…`.
    Attributes(Vec<String>),
    /// `?x.metadata` or `?x.metadata.k.…`.
    Metadata(Vec<String>),
}

impl Field {
    /// The top-level field names a dot path may start with.
    pub const TOP_LEVEL: [&'static str; 8] = [
        "id",
        "type",
        "name",
        "subject",
        "predicate",
        "object",
        "attributes",
        "metadata",
    ];
}

/// A block of patterns: the body of WHERE, NOT, OPTIONAL or UNION.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Group {
    pub items: Vec<Pattern>,
    pub span: Span,
}

/// One item of a WHERE block.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    Concept(ConceptClause),
    Proposition(PropositionClause),
    Filter(Filter),
    Not(Group),
    Optional(Group),
    Union(Group),
}

impl Pattern {
    pub fn span(&self) -> Span {
        match self {
            Pattern::Concept(c) => c.span,
            Pattern::Proposition(p) => p.span,
            Pattern::Filter(f) => f.span,
            Pattern::Not(g) | Pattern::Optional(g) | Pattern::Union(g) => g.span,
        }
    }
}

/// `[?var] {…}`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConceptClause {
    pub var: Option<Var>,
    pub matcher: ConceptMatcher,
    pub span: Span,
}

/// The four concept-clause forms.
#[derive(Clone, Debug, PartialEq)]
pub enum ConceptMatcher {
    Id(Arg<String>),
    TypeName { ty: Arg<String>, name: Arg<String> },
    Type(Arg<String>),
    Name(Arg<String>),
}

/// `[?var] (…)`.
#[derive(Clone, Debug, PartialEq)]
pub struct PropositionClause {
    pub var: Option<Var>,
    pub matcher: PropositionMatcher,
    pub span: Span,
}

/// `(id: "…")` or `(subject, predicate, object)`.
#[derive(Clone, Debug, PartialEq)]
pub enum PropositionMatcher {
    Id(Arg<String>),
    Triple(Box<Triple>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Triple {
    pub subject: Term,
    pub predicate: PredicateExpr,
    pub object: Term,
}

/// The subject or object of a proposition pattern.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    Var(Var),
    Concept(ConceptMatcher, Span),
    Proposition(PropositionMatcher, Span),
}

impl Term {
    pub fn span(&self) -> Span {
        match self {
            Term::Var(v) => v.span,
            Term::Concept(_, span) | Term::Proposition(_, span) => *span,
        }
    }
}

/// The predicate of a proposition pattern.
#[derive(Clone, Debug, PartialEq)]
pub enum PredicateExpr {
    /// `?p`: binds the predicate's name.
    Var(Var),
    /// `"a" | "b"` with an optional hop range `{m,n}`.
    Names {
        names: Vec<Arg<String>>,
        hops: Option<Hops>,
        span: Span,
    },
}

/// `{m,n}`, `{m,}` (max `None`) or `{m}` (min == max).
#[derive(Clone, Debug, PartialEq)]
pub struct Hops {
    pub min: u32,
    pub max: Option<u32>,
    pub span: Span,
}

/// `FILTER(expr)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Filter {
    pub expr: Expr,
    pub span: Span,
}

/// A FILTER expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Compare(CompareOp, Box<Expr>, Box<Expr>),
    Call(Call),
    Path(DotPath),
    Value(Value, Span),
}

/// A function call inside FILTER.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub func: Func,
    pub args: Vec<Expr>,
    pub span: Span,
}

/// The functions FILTER knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Contains,
    StartsWith,
    EndsWith,
    Regex,
    In,
    IsNull,
    IsNotNull,
}

impl Func {
    pub const ALL: [Func; 7] = [
        Func::Contains,
        Func::StartsWith,
        Func::EndsWith,
        Func::Regex,
        Func::In,
        Func::IsNull,
        Func::IsNotNull,
    ];

    pub fn keyword(self) -> &'static str {
        match self {
            Func::Contains => "CONTAINS",
            Func::StartsWith => "STARTS_WITH",
            Func::EndsWith => "ENDS_WITH",
            Func::Regex => "REGEX",
            Func::In => "IN",
            Func::IsNull => "IS_NULL",
            Func::IsNotNull => "IS_NOT_NULL",
        }
    }

    pub fn from_keyword(s: &str) -> Option<Func> {
        Func::ALL.into_iter().find(|f| f.keyword() == s)
    }

    /// How many arguments the function takes.
    pub fn arity(self) -> usize {
        match self {
            Func::IsNull | Func::IsNotNull => 1,
            _ => 2,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CompareOp {
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Eq => "==",
            CompareOp::Ne => "!=",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
        }
    }
}

/// One `ORDER BY` key.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderKey {
    pub expr: Projection,
    pub descending: bool,
    pub span: Span,
}

//! The typed, spanned syntax tree of KIP v1.0-RC2 and the later additions
//! accepted as a compatible superset (RC9–RC10: `UPDATE`, `MERGE`,
//! `EXPECT VERSION`, `EXPORT`, `SEARCH … MODE / THRESHOLD`).
//!
//! Every node that a later error may need to point at carries a [`Span`].
//! Spans are positions, not meaning: two spans always compare equal, so that
//! `parse(format(x)) == x` holds although formatting moves every position.
//!
//! Placeholders (`:name`) may stand wherever a value may stand; they are kept
//! in the tree as [`Arg::Param`] / [`Value::Param`] until [`crate::bind`]
//! replaces them. A *bound* tree holds no placeholder.

use std::fmt;

/// A byte range `start..end` in the source text.
#[derive(Clone, Copy, Debug, Default, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub const fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    pub const fn len(self) -> usize {
        self.end - self.start
    }

    pub const fn is_empty(self) -> bool {
        self.start == self.end
    }
}

impl PartialEq for Span {
    /// Spans never distinguish two trees; see the module documentation.
    fn eq(&self, _other: &Span) -> bool {
        true
    }
}

/// A name as written in the source, with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A variable (`?drug`) or, in KML, a local handle. `name` excludes the `?`.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    pub name: String,
    pub span: Span,
}

/// A placeholder `:name`. `name` excludes the `:`.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub span: Span,
}

/// A literal of type `T` or a placeholder standing for one.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg<T> {
    Lit(T, Span),
    Param(Param),
}

impl<T> Arg<T> {
    pub fn span(&self) -> Span {
        match self {
            Arg::Lit(_, span) => *span,
            Arg::Param(p) => p.span,
        }
    }

    /// The literal, or `None` while the placeholder is unbound.
    pub fn lit(&self) -> Option<&T> {
        match self {
            Arg::Lit(v, _) => Some(v),
            Arg::Param(_) => None,
        }
    }
}

/// A KIP value: JSON plus placeholders. Objects keep their written key order.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Value>),
    Object(Object),
    Param(Param),
}

/// An object literal: ordered `key: value` members with unique keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Object {
    pub members: Vec<(String, Value)>,
    pub span: Span,
}

impl Value {
    /// Converts a bound value to JSON; `None` if a placeholder is left.
    pub fn to_json(&self) -> Option<serde_json::Value> {
        Some(match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => serde_json::Value::Number(n.clone()),
            Value::String(s) => serde_json::Value::String(s.clone()),
            Value::Array(items) => {
                serde_json::Value::Array(items.iter().map(Value::to_json).collect::<Option<_>>()?)
            }
            Value::Object(obj) => serde_json::Value::Object(obj.to_json()?),
            Value::Param(_) => return None,
        })
    }

    /// Converts JSON (e.g. a parameter's value) to a KIP value.
    pub fn from_json(json: &serde_json::Value, span: Span) -> Value {
        match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Number(n.clone()),
            serde_json::Value::String(s) => Value::String(s.clone()),
            serde_json::Value::Array(items) => {
                Value::Array(items.iter().map(|v| Value::from_json(v, span)).collect())
            }
            serde_json::Value::Object(map) => Value::Object(Object {
                members: map
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v, span)))
                    .collect(),
                span,
            }),
        }
    }
}

impl Object {
    /// Converts a bound object to a JSON map; `None` if a placeholder is left.
    pub fn to_json(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        self.members
            .iter()
            .map(|(k, v)| Some((k.clone(), v.to_json()?)))
            .collect()
    }
}

/// One KIP command. A script (a capsule file) holds several.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Find(FindQuery),
    Upsert(Upsert),
    /// RC9: pattern-matched bulk mutation.
    Update(Update),
    /// RC9: atomic consolidation of two concepts.
    Merge(Merge),
    Delete(Delete),
    Describe(Describe),
    Search(Search),
    /// RC9: a matched subgraph as a capsule (META, read-only).
    Export(Export),
}

impl Command {
    pub fn span(&self) -> Span {
        match self {
            Command::Find(q) => q.span,
            Command::Upsert(u) => u.span,
            Command::Update(u) => u.span,
            Command::Merge(m) => m.span,
            Command::Delete(d) => d.span,
            Command::Describe(d) => d.span,
            Command::Search(s) => s.span,
            Command::Export(e) => e.span,
        }
    }

    /// Which sub-language the command belongs to.
    pub fn kind(&self) -> CommandKind {
        match self {
            Command::Find(_) => CommandKind::Kql,
            Command::Upsert(_) | Command::Update(_) | Command::Merge(_) | Command::Delete(_) => {
                CommandKind::Kml
            }
            Command::Describe(_) | Command::Search(_) | Command::Export(_) => CommandKind::Meta,
        }
    }
}

/// KQL (queries), KML (changes) or META (introspection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandKind {
    Kql,
    Kml,
    Meta,
}

impl fmt::Display for CommandKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CommandKind::Kql => "KQL",
            CommandKind::Kml => "KML",
            CommandKind::Meta => "META",
        })
    }
}

// ------------------------------------------------------------------ KQL

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

// ------------------------------------------------------------------ KML

/// `UPSERT { … } [WITH METADATA {…}]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Upsert {
    pub items: Vec<UpsertItem>,
    pub metadata: Option<Object>,
    /// From `{` to `}`, without the trailing WITH METADATA.
    pub body: Span,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum UpsertItem {
    Concept(ConceptBlock),
    Proposition(PropositionBlock),
}

/// `CONCEPT [?h] { {…} [SET ATTRIBUTES {…}] [SET PROPOSITIONS {…}] } [WITH METADATA {…}]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConceptBlock {
    pub handle: Option<Var>,
    /// `{type, name}` (match or create) or `{id}` (match only).
    pub matcher: ConceptMatcher,
    /// `EXPECT VERSION n` (RC9): the block runs only if the concept's
    /// `_version` is `n`; `0` means it must not exist yet.
    pub expect_version: Option<Arg<u64>>,
    pub attributes: Option<Object>,
    pub propositions: Option<Vec<SetProposition>>,
    pub metadata: Option<Object>,
    /// From `{` to `}`, without the trailing WITH METADATA.
    pub body: Span,
    pub span: Span,
}

/// `("predicate", target) [WITH METADATA {…}]`.
#[derive(Clone, Debug, PartialEq)]
pub struct SetProposition {
    pub predicate: Arg<String>,
    pub target: Term,
    pub metadata: Option<Object>,
    pub span: Span,
}

/// `PROPOSITION [?h] { (s, "p", o) | (id: "…") [SET ATTRIBUTES {…}] } [WITH METADATA {…}]`.
#[derive(Clone, Debug, PartialEq)]
pub struct PropositionBlock {
    pub handle: Option<Var>,
    pub matcher: PropositionMatcher,
    /// `EXPECT VERSION n` (RC9), as for a concept block.
    pub expect_version: Option<Arg<u64>>,
    pub attributes: Option<Object>,
    pub metadata: Option<Object>,
    /// From `{` to `}`, without the trailing WITH METADATA.
    pub body: Span,
    pub span: Span,
}

/// `UPDATE ?target SET ATTRIBUTES {…} SET METADATA {…} WHERE {…} [LIMIT n]`
/// (RC9 §4.3). At least one SET is present.
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    pub target: Var,
    pub attributes: Option<UpdateObject>,
    pub metadata: Option<UpdateObject>,
    pub where_: Group,
    pub limit: Option<Arg<u64>>,
    pub span: Span,
}

/// The object of an UPDATE's SET: keys with values or update expressions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UpdateObject {
    pub members: Vec<(String, UpdateValue)>,
    pub span: Span,
}

/// A value of an UPDATE's SET, or an operand of an update expression.
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateValue {
    /// A JSON value (or placeholder), written as is.
    Value(Value, Span),
    /// A dot path on the UPDATE's own target (only as an operand).
    Path(DotPath),
    /// `ADD(…)`, `MUL(…)`, `CLAMP(…)`, `COALESCE(…)`.
    Call(UpdateCall),
}

impl UpdateValue {
    pub fn span(&self) -> Span {
        match self {
            UpdateValue::Value(_, span) => *span,
            UpdateValue::Path(p) => p.span,
            UpdateValue::Call(c) => c.span,
        }
    }
}

/// An update expression, computed per element from its own state.
#[derive(Clone, Debug, PartialEq)]
pub struct UpdateCall {
    pub func: UpdateFunc,
    pub args: Vec<UpdateValue>,
    pub span: Span,
}

/// The update expressions of RC9 §4.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateFunc {
    Add,
    Mul,
    Clamp,
    Coalesce,
}

impl UpdateFunc {
    pub const ALL: [UpdateFunc; 4] = [
        UpdateFunc::Add,
        UpdateFunc::Mul,
        UpdateFunc::Clamp,
        UpdateFunc::Coalesce,
    ];

    pub fn keyword(self) -> &'static str {
        match self {
            UpdateFunc::Add => "ADD",
            UpdateFunc::Mul => "MUL",
            UpdateFunc::Clamp => "CLAMP",
            UpdateFunc::Coalesce => "COALESCE",
        }
    }

    pub fn from_keyword(s: &str) -> Option<UpdateFunc> {
        UpdateFunc::ALL.into_iter().find(|f| f.keyword() == s)
    }

    /// How many arguments the expression takes.
    pub fn arity(self) -> usize {
        match self {
            UpdateFunc::Clamp => 3,
            _ => 2,
        }
    }
}

/// `MERGE CONCEPT ?source INTO ?target WHERE {…}` (RC9 §4.4).
#[derive(Clone, Debug, PartialEq)]
pub struct Merge {
    pub source: Var,
    pub target: Var,
    pub where_: Group,
    pub span: Span,
}

/// The four DELETE forms.
#[derive(Clone, Debug, PartialEq)]
pub struct Delete {
    pub target: DeleteTarget,
    pub var: Var,
    pub where_: Group,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum DeleteTarget {
    /// `DELETE ATTRIBUTES {keys} FROM ?x`.
    Attributes(Vec<Arg<String>>),
    /// `DELETE METADATA {keys} FROM ?x`.
    Metadata(Vec<Arg<String>>),
    /// `DELETE PROPOSITIONS ?link`.
    Propositions,
    /// `DELETE CONCEPT ?node DETACH` (DETACH is required; validation rejects its absence).
    Concept,
}

// ------------------------------------------------------------------ META

/// `DESCRIBE … [LIMIT n] [CURSOR "…"]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Describe {
    pub target: DescribeTarget,
    pub limit: Option<Arg<u64>>,
    pub cursor: Option<Arg<String>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum DescribeTarget {
    Primer,
    Domains,
    ConceptTypes,
    ConceptType(Arg<String>),
    PropositionTypes,
    PropositionType(Arg<String>),
}

/// `SEARCH CONCEPT|PROPOSITION "term" [WITH TYPE "T"] [MODE "m"] [THRESHOLD x] [LIMIT n]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    pub target: SearchTarget,
    pub term: Arg<String>,
    pub with_type: Option<Arg<String>>,
    /// `MODE "keyword" | "semantic" | "hybrid"` (RC9).
    pub mode: Option<Arg<String>>,
    /// `THRESHOLD x` (RC9): a number, or a placeholder until bound.
    pub threshold: Option<Value>,
    pub limit: Option<Arg<u64>>,
    pub span: Span,
}

/// The retrieval modes of `SEARCH … MODE` (RC9 §5.2.1).
pub const SEARCH_MODES: [&str; 3] = ["keyword", "semantic", "hybrid"];

/// `EXPORT ?target WHERE {…} [LIMIT n] [CURSOR "…"]` (RC9 §5.3).
#[derive(Clone, Debug, PartialEq)]
pub struct Export {
    pub target: Var,
    pub where_: Group,
    pub limit: Option<Arg<u64>>,
    pub cursor: Option<Arg<String>>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchTarget {
    Concept,
    Proposition,
}

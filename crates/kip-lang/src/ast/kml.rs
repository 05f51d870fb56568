//! The KML nodes: UPSERT, UPDATE, MERGE and DELETE.

use super::*;

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

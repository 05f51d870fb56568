//! The META nodes: DESCRIBE, SEARCH and EXPORT.

use super::*;

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

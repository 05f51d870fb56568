//! Element identities: [`ConceptId`], [`PropositionId`] and [`ElementId`],
//! and their stable text form (`C:<n>`, `P:<n>`).
//!
//! The numbers come from monotonic counters kept in the `meta` database and
//! are never reused after a delete, so an id held by a client (in a cursor, a
//! UI tab, an agent's memory) can only ever name the element it was given for.
//! This module owns the text form; the byte form lives in
//! [`crate::codec::element`].

use std::fmt;
use std::str::FromStr;

/// The id of a concept node. Its text form is `C:<n>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConceptId(pub u64);

/// The id of a proposition link. Its text form is `P:<n>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PropositionId(pub u64);

/// Either end of a proposition: a concept or (for higher-order links) another
/// proposition.
///
/// Ordering puts every concept before every proposition, then orders by
/// number, which is also the order of the byte encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElementId {
    Concept(ConceptId),
    Proposition(PropositionId),
}

impl From<ConceptId> for ElementId {
    fn from(id: ConceptId) -> Self {
        ElementId::Concept(id)
    }
}

impl From<PropositionId> for ElementId {
    fn from(id: PropositionId) -> Self {
        ElementId::Proposition(id)
    }
}

impl ElementId {
    /// The concept id, if this element is a concept.
    pub fn as_concept(self) -> Option<ConceptId> {
        match self {
            ElementId::Concept(c) => Some(c),
            ElementId::Proposition(_) => None,
        }
    }
}

impl fmt::Display for ConceptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "C:{}", self.0)
    }
}

impl fmt::Display for PropositionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "P:{}", self.0)
    }
}

impl fmt::Display for ElementId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElementId::Concept(c) => c.fmt(f),
            ElementId::Proposition(p) => p.fmt(f),
        }
    }
}

/// A text that is not an element id (`C:<n>` or `P:<n>`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{text}` is not an element id: expected `C:<number>` for a concept or `P:<number>` for a proposition"
)]
pub struct ParseIdError {
    pub text: String,
}

/// Parses the digits after the `C:` / `P:` tag. Only plain decimal digits
/// are accepted (no sign, no spaces), so every id has exactly one text form.
fn parse_number(text: &str, digits: &str) -> Result<u64, ParseIdError> {
    let error = || ParseIdError {
        text: text.to_owned(),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(error());
    }
    // Leading zeros would give one id two spellings.
    if digits.len() > 1 && digits.starts_with('0') {
        return Err(error());
    }
    digits.parse().map_err(|_| error())
}

impl FromStr for ElementId {
    type Err = ParseIdError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Some(digits) = text.strip_prefix("C:") {
            parse_number(text, digits).map(|n| ElementId::Concept(ConceptId(n)))
        } else if let Some(digits) = text.strip_prefix("P:") {
            parse_number(text, digits).map(|n| ElementId::Proposition(PropositionId(n)))
        } else {
            Err(ParseIdError {
                text: text.to_owned(),
            })
        }
    }
}

impl FromStr for ConceptId {
    type Err = ParseIdError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.parse()? {
            ElementId::Concept(c) => Ok(c),
            ElementId::Proposition(_) => Err(ParseIdError {
                text: text.to_owned(),
            }),
        }
    }
}

impl FromStr for PropositionId {
    type Err = ParseIdError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.parse()? {
            ElementId::Proposition(p) => Ok(p),
            ElementId::Concept(_) => Err(ParseIdError {
                text: text.to_owned(),
            }),
        }
    }
}

/// Ids travel as their text form in JSON, so a client never sees a bare
/// number it could confuse across kinds.
impl serde::Serialize for ElementId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for ElementId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

//! KIP's error model: the closed set of codes of seed 001's appendix 4 (plus
//! RC9's `KIP_3005` VersionConflict, RC2's numbering kept) and the
//! `{code, message, hint, data}` object every face of KIP Explorer returns.
//!
//! The UI and agents match on [`ErrorCode`], never on message text. Position
//! data (`line`, `column`, `offset`, `length`) uses [`crate::Position`].

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ast::Span;
use crate::position::Position;

/// The standard KIP error codes (seed 001, appendix 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ErrorCode {
    /// KIP_1001: the text cannot be parsed.
    #[serde(rename = "KIP_1001")]
    InvalidSyntax,
    /// KIP_1002: an identifier does not match `[a-zA-Z_][a-zA-Z0-9_]*`.
    #[serde(rename = "KIP_1002")]
    InvalidIdentifier,
    /// KIP_1003: the requested protocol version is not supported.
    #[serde(rename = "KIP_1003")]
    UnsupportedVersion,
    /// KIP_2001: a concept type or predicate is not defined.
    #[serde(rename = "KIP_2001")]
    TypeMismatch,
    /// KIP_2002: an attribute is not defined by a strict schema.
    #[serde(rename = "KIP_2002")]
    AttributeUndefined,
    /// KIP_2003: a data constraint is violated.
    #[serde(rename = "KIP_2003")]
    ConstraintViolation,
    /// KIP_2004: a value has the wrong JSON type.
    #[serde(rename = "KIP_2004")]
    InvalidValueType,
    /// KIP_3001: a variable, handle or parameter is not defined.
    #[serde(rename = "KIP_3001")]
    ReferenceError,
    /// KIP_3002: the referenced node or link does not exist.
    #[serde(rename = "KIP_3002")]
    NotFound,
    /// KIP_3003: a uniqueness constraint is violated.
    #[serde(rename = "KIP_3003")]
    DuplicateExists,
    /// KIP_3004: the target is protected.
    #[serde(rename = "KIP_3004")]
    ImmutableTarget,
    /// KIP_3005 (RC9): an `EXPECT VERSION` guard did not match the
    /// element's current `_version`; the whole UPSERT was aborted.
    #[serde(rename = "KIP_3005")]
    VersionConflict,
    /// KIP_4001: the query exceeded its time or work budget.
    #[serde(rename = "KIP_4001")]
    ExecutionTimeout,
    /// KIP_4002: the result or memory budget is exhausted.
    #[serde(rename = "KIP_4002")]
    ResourceExhausted,
    /// KIP_4003: an internal error.
    #[serde(rename = "KIP_4003")]
    InternalError,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 15] = [
        ErrorCode::InvalidSyntax,
        ErrorCode::InvalidIdentifier,
        ErrorCode::UnsupportedVersion,
        ErrorCode::TypeMismatch,
        ErrorCode::AttributeUndefined,
        ErrorCode::ConstraintViolation,
        ErrorCode::InvalidValueType,
        ErrorCode::ReferenceError,
        ErrorCode::NotFound,
        ErrorCode::DuplicateExists,
        ErrorCode::ImmutableTarget,
        ErrorCode::VersionConflict,
        ErrorCode::ExecutionTimeout,
        ErrorCode::ResourceExhausted,
        ErrorCode::InternalError,
    ];

    /// The wire form, e.g. `"KIP_1001"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidSyntax => "KIP_1001",
            ErrorCode::InvalidIdentifier => "KIP_1002",
            ErrorCode::UnsupportedVersion => "KIP_1003",
            ErrorCode::TypeMismatch => "KIP_2001",
            ErrorCode::AttributeUndefined => "KIP_2002",
            ErrorCode::ConstraintViolation => "KIP_2003",
            ErrorCode::InvalidValueType => "KIP_2004",
            ErrorCode::ReferenceError => "KIP_3001",
            ErrorCode::NotFound => "KIP_3002",
            ErrorCode::DuplicateExists => "KIP_3003",
            ErrorCode::ImmutableTarget => "KIP_3004",
            ErrorCode::VersionConflict => "KIP_3005",
            ErrorCode::ExecutionTimeout => "KIP_4001",
            ErrorCode::ResourceExhausted => "KIP_4002",
            ErrorCode::InternalError => "KIP_4003",
        }
    }

    /// The name of the code in seed 001's table, e.g. `"InvalidSyntax"`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::InvalidSyntax => "InvalidSyntax",
            ErrorCode::InvalidIdentifier => "InvalidIdentifier",
            ErrorCode::UnsupportedVersion => "UnsupportedVersion",
            ErrorCode::TypeMismatch => "TypeMismatch",
            ErrorCode::AttributeUndefined => "AttributeUndefined",
            ErrorCode::ConstraintViolation => "ConstraintViolation",
            ErrorCode::InvalidValueType => "InvalidValueType",
            ErrorCode::ReferenceError => "ReferenceError",
            ErrorCode::NotFound => "NotFound",
            ErrorCode::DuplicateExists => "DuplicateExists",
            ErrorCode::ImmutableTarget => "ImmutableTarget",
            ErrorCode::VersionConflict => "VersionConflict",
            ErrorCode::ExecutionTimeout => "ExecutionTimeout",
            ErrorCode::ResourceExhausted => "ResourceExhausted",
            ErrorCode::InternalError => "InternalError",
        }
    }

    /// The recovery hint of seed 001's table, used when an error has no more
    /// specific one.
    pub fn default_hint(self) -> &'static str {
        match self {
            ErrorCode::InvalidSyntax => {
                "Check bracket matching, keyword spelling and statement structure; make sure JSON values are well formed."
            }
            ErrorCode::InvalidIdentifier => {
                "Identifiers must match [a-zA-Z_][a-zA-Z0-9_]* (types may start with '$', variables with '?')."
            }
            ErrorCode::UnsupportedVersion => "Check which KIP versions this system supports.",
            ErrorCode::TypeMismatch => {
                "Run DESCRIBE CONCEPT TYPES or DESCRIBE PROPOSITION TYPES to confirm the name; names are case-sensitive (Drug, not drug)."
            }
            ErrorCode::AttributeUndefined => {
                "Check the type's instance_schema with DESCRIBE CONCEPT TYPE \"<Type>\"."
            }
            ErrorCode::ConstraintViolation => "Supply the missing or corrected values.",
            ErrorCode::InvalidValueType => "Correct the JSON type of the value.",
            ErrorCode::ReferenceError => {
                "Define a variable in a WHERE pattern, or a handle in an earlier CONCEPT/PROPOSITION block, before using it."
            }
            ErrorCode::NotFound => {
                "The target may have been deleted or never created; confirm it with SEARCH or FIND first."
            }
            ErrorCode::DuplicateExists => "If you meant to update, use UPSERT.",
            ErrorCode::ImmutableTarget => {
                "Do not modify or delete system meta-definitions or core identity nodes."
            }
            ErrorCode::VersionConflict => {
                "Re-read the element to get its fresh _version and current value, re-apply your change in memory, then retry the guarded write. Never blindly retry with the stale version."
            }
            ErrorCode::ExecutionTimeout => {
                "Simplify the query: fewer UNIONs, a lower LIMIT, fewer hops or regular expressions."
            }
            ErrorCode::ResourceExhausted => "Use LIMIT and CURSOR to fetch results page by page.",
            ErrorCode::InternalError => "Retry later or contact the administrator.",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A KIP error object: `{code, message, hint, data?}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct KipError {
    pub code: ErrorCode,
    pub message: String,
    pub hint: String,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub data: Map<String, Value>,
}

impl KipError {
    /// An error with the code's default hint.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> KipError {
        KipError {
            code,
            message: message.into(),
            hint: code.default_hint().to_owned(),
            data: Map::new(),
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> KipError {
        self.hint = hint.into();
        self
    }

    pub fn with_data(mut self, key: &str, value: impl Into<Value>) -> KipError {
        self.data.insert(key.to_owned(), value.into());
        self
    }

    /// Adds `line`, `column`, `offset` and `length` for `span` in `source`.
    pub fn at(mut self, source: &str, span: Span) -> KipError {
        let pos = Position::of(source, span.start);
        self.data.insert("line".into(), pos.line.into());
        self.data.insert("column".into(), pos.column.into());
        self.data.insert("offset".into(), span.start.into());
        self.data.insert("length".into(), span.len().into());
        self
    }

    /// Adds "did you mean" suggestions (`data.suggestions`).
    pub fn with_suggestions(mut self, suggestions: &[String]) -> KipError {
        if !suggestions.is_empty() {
            self.data.insert("suggestions".into(), suggestions.into());
        }
        self
    }

    /// The byte offset this error points at, if any.
    pub fn offset(&self) -> Option<usize> {
        self.data
            .get("offset")
            .and_then(Value::as_u64)
            .and_then(|o| usize::try_from(o).ok())
    }

    /// The error as the `error` member of a KIP response.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Several errors found in one text, in source order. The first one is the
/// error a KIP response reports; all of them are listed in its
/// `data.errors` when there is more than one.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}", .0.first().map(ToString::to_string).unwrap_or_default())]
pub struct Errors(pub Vec<KipError>);

impl Errors {
    /// Collapses the list into the one error object of a KIP response.
    pub fn into_response_error(self) -> KipError {
        let mut errors = self.0;
        if errors.len() <= 1 {
            return errors.pop().unwrap_or_else(|| {
                KipError::new(ErrorCode::InternalError, "an empty error list was reported")
            });
        }
        let all: Vec<Value> = errors.iter().map(KipError::to_json).collect();
        let mut first = errors.swap_remove(0);
        let more = all.len() - 1;
        let noun = if more == 1 { "error" } else { "errors" };
        first.message = format!("{} (and {more} more {noun})", first.message);
        first.data.insert("errors".into(), Value::Array(all));
        first
    }
}

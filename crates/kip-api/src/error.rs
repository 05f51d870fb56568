//! The API's error model: a closed [`ErrorCode`] enum and the
//! `{code, message, hint, data?}` object ([`ApiError`]) every host returns.
//!
//! The codes are KIP's own (seed 001, appendix 4) plus the few a host adds
//! for requests that never reach the engine (a malformed body, an unknown
//! operation, a missing token, a file that cannot be read). The wire shape
//! is exactly KIP's error object, so a UI or an agent handles both the same
//! way and matches on `code`, never on message text. The JSON of every code
//! is pinned by the tests at the bottom of this file.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// Every error code a host of this API can return. Closed on purpose: a new
/// code is a breaking change for the UI, which matches on all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum ErrorCode {
    /// KIP_1001: the text cannot be parsed (or the request is not a valid `execute_kip` call).
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
    /// KIP_3004: the target is protected, or the host is read-only.
    #[serde(rename = "KIP_3004")]
    ImmutableTarget,
    /// KIP_4001: the query exceeded its time or work budget.
    #[serde(rename = "KIP_4001")]
    ExecutionTimeout,
    /// KIP_4002: the result or memory budget is exhausted.
    #[serde(rename = "KIP_4002")]
    ResourceExhausted,
    /// KIP_4003: an internal error.
    #[serde(rename = "KIP_4003")]
    InternalError,
    /// The request body is not what the operation takes (not JSON, a
    /// missing or unknown field, a wrong type).
    #[serde(rename = "API_BAD_REQUEST")]
    BadRequest,
    /// No operation of that name exists.
    #[serde(rename = "API_UNKNOWN_OPERATION")]
    UnknownOperation,
    /// The host requires a bearer token and the request had none or a wrong one.
    #[serde(rename = "API_UNAUTHORIZED")]
    Unauthorized,
    /// A file named in the request cannot be read.
    #[serde(rename = "API_IO")]
    Io,
}

impl ErrorCode {
    /// Every code, in the order of the enum.
    pub const ALL: [ErrorCode; 18] = [
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
        ErrorCode::ExecutionTimeout,
        ErrorCode::ResourceExhausted,
        ErrorCode::InternalError,
        ErrorCode::BadRequest,
        ErrorCode::UnknownOperation,
        ErrorCode::Unauthorized,
        ErrorCode::Io,
    ];

    /// The wire form, e.g. `"KIP_1001"` or `"API_BAD_REQUEST"`.
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
            ErrorCode::ExecutionTimeout => "KIP_4001",
            ErrorCode::ResourceExhausted => "KIP_4002",
            ErrorCode::InternalError => "KIP_4003",
            ErrorCode::BadRequest => "API_BAD_REQUEST",
            ErrorCode::UnknownOperation => "API_UNKNOWN_OPERATION",
            ErrorCode::Unauthorized => "API_UNAUTHORIZED",
            ErrorCode::Io => "API_IO",
        }
    }

    /// The code of a wire form, if it is one of ours.
    pub fn from_wire(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == code)
    }

    /// Whether the code comes from KIP itself (`KIP_xxxx`) rather than the host.
    pub fn is_kip(self) -> bool {
        self.as_str().starts_with("KIP_")
    }
}

impl From<kip_lang::ErrorCode> for ErrorCode {
    fn from(code: kip_lang::ErrorCode) -> ErrorCode {
        // `kip_lang::ErrorCode` is `#[non_exhaustive]`, so map through the
        // wire form: every KIP code has the same spelling here, and a code
        // added there before it is added here degrades to an internal error
        // instead of failing to compile in every host.
        ErrorCode::from_wire(code.as_str()).unwrap_or(ErrorCode::InternalError)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error object: `{code, message, hint, data?}`, the same shape as a KIP
/// error. `data` carries positions (`line`, `column`, `offset`, `length`),
/// `suggestions`, `errors` (all problems of a text), or a `path`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[error("{code}: {message}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub hint: String,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[cfg_attr(test, ts(optional, type = "{ [key in string]?: JsonValue }"))]
    pub data: Map<String, Json>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>, hint: impl Into<String>) -> ApiError {
        ApiError {
            code,
            message: message.into(),
            hint: hint.into(),
            data: Map::new(),
        }
    }

    pub fn with_data(mut self, key: &str, value: impl Into<Json>) -> ApiError {
        self.data.insert(key.to_owned(), value.into());
        self
    }

    /// A request body that does not fit the operation.
    pub fn bad_request(operation: &str, problem: impl std::fmt::Display) -> ApiError {
        ApiError::new(
            ErrorCode::BadRequest,
            format!("invalid `{operation}` request: {problem}"),
            "Send a JSON object with the fields this operation takes (see the generated TypeScript types in ui/src/transport/generated/kip-api.ts).",
        )
    }

    /// A write refused because the host serves read-only access.
    pub fn read_only(what: &str) -> ApiError {
        ApiError::new(
            ErrorCode::ImmutableTarget,
            format!("this host is read-only: {what} is refused"),
            "Use KQL (FIND) and META (DESCRIBE, SEARCH) here; ask the operator for read-write access to make changes.",
        )
    }

    /// The error as the `{"error": …}` object of a response.
    pub fn to_response(&self) -> Json {
        serde_json::json!({ "error": self })
    }
}

impl From<kip_lang::KipError> for ApiError {
    fn from(e: kip_lang::KipError) -> ApiError {
        ApiError {
            code: e.code.into(),
            message: e.message,
            hint: e.hint,
            data: e.data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The wire form of every code, pinned: the UI and agents match on these strings.
    #[test]
    fn every_code_serializes_to_its_pinned_wire_form() {
        let pinned = [
            (ErrorCode::InvalidSyntax, "KIP_1001"),
            (ErrorCode::InvalidIdentifier, "KIP_1002"),
            (ErrorCode::UnsupportedVersion, "KIP_1003"),
            (ErrorCode::TypeMismatch, "KIP_2001"),
            (ErrorCode::AttributeUndefined, "KIP_2002"),
            (ErrorCode::ConstraintViolation, "KIP_2003"),
            (ErrorCode::InvalidValueType, "KIP_2004"),
            (ErrorCode::ReferenceError, "KIP_3001"),
            (ErrorCode::NotFound, "KIP_3002"),
            (ErrorCode::DuplicateExists, "KIP_3003"),
            (ErrorCode::ImmutableTarget, "KIP_3004"),
            (ErrorCode::ExecutionTimeout, "KIP_4001"),
            (ErrorCode::ResourceExhausted, "KIP_4002"),
            (ErrorCode::InternalError, "KIP_4003"),
            (ErrorCode::BadRequest, "API_BAD_REQUEST"),
            (ErrorCode::UnknownOperation, "API_UNKNOWN_OPERATION"),
            (ErrorCode::Unauthorized, "API_UNAUTHORIZED"),
            (ErrorCode::Io, "API_IO"),
        ];
        assert_eq!(pinned.len(), ErrorCode::ALL.len());
        for (code, wire) in pinned {
            assert_eq!(serde_json::to_value(code).ok(), Some(json!(wire)));
            assert_eq!(code.as_str(), wire);
            assert_eq!(
                serde_json::from_value::<ErrorCode>(json!(wire)).ok(),
                Some(code)
            );
            assert_eq!(ErrorCode::from_wire(wire), Some(code));
        }
        assert!(serde_json::from_value::<ErrorCode>(json!("KIP_9999")).is_err());
    }

    #[test]
    fn every_kip_code_maps_to_the_same_wire_form() {
        for code in kip_lang::ErrorCode::ALL {
            let ours = ErrorCode::from(code);
            assert_eq!(ours.as_str(), code.as_str());
            assert!(ours.is_kip());
        }
        assert!(!ErrorCode::BadRequest.is_kip());
    }

    #[test]
    fn an_error_object_has_the_kip_shape() {
        let e = ApiError::new(ErrorCode::BadRequest, "m", "h");
        assert_eq!(
            serde_json::to_value(&e).ok(),
            Some(json!({"code": "API_BAD_REQUEST", "message": "m", "hint": "h"}))
        );
        let kip =
            kip_lang::KipError::new(kip_lang::ErrorCode::InvalidSyntax, "bad").with_data("line", 2);
        let converted = ApiError::from(kip.clone());
        assert_eq!(
            serde_json::to_value(&converted).ok(),
            serde_json::to_value(&kip).ok()
        );
        assert_eq!(
            e.to_response(),
            json!({"error": {"code": "API_BAD_REQUEST", "message": "m", "hint": "h"}})
        );
    }
}

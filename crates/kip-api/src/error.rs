//! The API's error model: a closed [`ErrorCode`] enum and the
//! `{code, message, hint, data?}` object ([`ApiError`]) every host returns.
//!
//! The codes are KIP's own (seed 001, appendix 4) plus the few a host adds
//! for requests that never reach the engine (a malformed body, an unknown
//! operation, a missing token, a file that cannot be read). The wire shape
//! is exactly KIP's error object, so a UI or an agent handles both the same
//! way and matches on `code`, never on message text. The JSON of every code
//! is pinned by the tests at the bottom of this file.

pub use kip_lang::ErrorCode as KipCode;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// Every error code a host of this API can return: KIP's own codes, as the
/// engine defines them, plus the few a host adds. Closed on purpose: a new
/// code is a breaking change for the UI, which matches on all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// A code of KIP itself (`KIP_xxxx`, seed 001 appendix 4), exactly as
    /// the engine returns it.
    Kip(KipCode),
    /// The request body is not what the operation takes (not JSON, a
    /// missing or unknown field, a wrong type).
    BadRequest,
    /// No operation of that name exists.
    UnknownOperation,
    /// The host requires a bearer token and the request had none or a wrong one.
    Unauthorized,
    /// A file named in the request cannot be read.
    Io,
    /// Resolving logic properties: an input parameter is missing
    /// (`data.missing` lists them per property; the seed's own code).
    MissingInputParams,
    /// Resolving logic properties: the LLM endpoint is unreachable,
    /// misconfigured (`data.setting` names the setting) or keeps failing.
    LlmUnavailable,
    /// Resolving logic properties: the LLM's parameters stay invalid after
    /// the repair rounds.
    LlmInvalidOutput,
    /// Resolving logic properties: an operator's service failed (its
    /// `data.status` and `data.body` passed through).
    OperatorFailed,
}

/// The codes only a host adds, in order, with their wire forms.
const API_CODES: [(ErrorCode, &str); 8] = [
    (ErrorCode::BadRequest, "API_BAD_REQUEST"),
    (ErrorCode::UnknownOperation, "API_UNKNOWN_OPERATION"),
    (ErrorCode::Unauthorized, "API_UNAUTHORIZED"),
    (ErrorCode::Io, "API_IO"),
    (ErrorCode::MissingInputParams, "MISSING_INPUT_PARAMS"),
    (ErrorCode::LlmUnavailable, "LOGIC_LLM_UNAVAILABLE"),
    (ErrorCode::LlmInvalidOutput, "LOGIC_LLM_INVALID_OUTPUT"),
    (ErrorCode::OperatorFailed, "LOGIC_OPERATOR_FAILED"),
];

impl ErrorCode {
    /// Every code: KIP's, in their order, then the host's.
    pub const ALL: [ErrorCode; KipCode::ALL.len() + API_CODES.len()] = {
        let mut all = [ErrorCode::BadRequest; KipCode::ALL.len() + API_CODES.len()];
        let mut i = 0;
        while i < KipCode::ALL.len() {
            all[i] = ErrorCode::Kip(KipCode::ALL[i]);
            i += 1;
        }
        let mut j = 0;
        while j < API_CODES.len() {
            all[i + j] = API_CODES[j].0;
            j += 1;
        }
        all
    };

    /// The wire form, e.g. `"KIP_1001"` or `"API_BAD_REQUEST"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Kip(code) => code.as_str(),
            ErrorCode::BadRequest => "API_BAD_REQUEST",
            ErrorCode::UnknownOperation => "API_UNKNOWN_OPERATION",
            ErrorCode::Unauthorized => "API_UNAUTHORIZED",
            ErrorCode::Io => "API_IO",
            ErrorCode::MissingInputParams => "MISSING_INPUT_PARAMS",
            ErrorCode::LlmUnavailable => "LOGIC_LLM_UNAVAILABLE",
            ErrorCode::LlmInvalidOutput => "LOGIC_LLM_INVALID_OUTPUT",
            ErrorCode::OperatorFailed => "LOGIC_OPERATOR_FAILED",
        }
    }

    /// The code of a wire form, if it is one of ours.
    pub fn from_wire(code: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == code)
    }

    /// Whether the code comes from KIP itself (`KIP_xxxx`) rather than the host.
    pub fn is_kip(self) -> bool {
        matches!(self, ErrorCode::Kip(_))
    }
}

/// A resolver's failure as KIP's error object: the code mapped, `data`
/// with `trace_id` (and `missing`, `property`, `span_id`, … as the
/// resolver gives them).
impl From<kip_logic::ResolveError> for ApiError {
    fn from(e: kip_logic::ResolveError) -> ApiError {
        let code = match e.code {
            kip_logic::Code::Kip(k) => ErrorCode::Kip(k),
            kip_logic::Code::BadRequest => ErrorCode::BadRequest,
            kip_logic::Code::MissingInputParams => ErrorCode::MissingInputParams,
            kip_logic::Code::LlmUnavailable => ErrorCode::LlmUnavailable,
            kip_logic::Code::LlmInvalidOutput => ErrorCode::LlmInvalidOutput,
            kip_logic::Code::OperatorFailed => ErrorCode::OperatorFailed,
        };
        let data = e.data_with_trace();
        ApiError {
            code,
            message: e.message,
            hint: e.hint,
            data,
        }
    }
}

impl From<KipCode> for ErrorCode {
    fn from(code: KipCode) -> ErrorCode {
        ErrorCode::Kip(code)
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ErrorCode, D::Error> {
        let wire = std::borrow::Cow::<'de, str>::deserialize(d)?;
        ErrorCode::from_wire(&wire)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown error code `{wire}`")))
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[error("{code}: {message}")]
pub struct ApiError {
    #[cfg_attr(feature = "ts", ts(type = "ErrorCode"))]
    pub code: ErrorCode,
    pub message: String,
    pub hint: String,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional, type = "{ [key in string]?: JsonValue }"))]
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
            ErrorCode::Kip(KipCode::ImmutableTarget),
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
            (ErrorCode::Kip(KipCode::InvalidSyntax), "KIP_1001"),
            (ErrorCode::Kip(KipCode::InvalidIdentifier), "KIP_1002"),
            (ErrorCode::Kip(KipCode::UnsupportedVersion), "KIP_1003"),
            (ErrorCode::Kip(KipCode::TypeMismatch), "KIP_2001"),
            (ErrorCode::Kip(KipCode::AttributeUndefined), "KIP_2002"),
            (ErrorCode::Kip(KipCode::ConstraintViolation), "KIP_2003"),
            (ErrorCode::Kip(KipCode::InvalidValueType), "KIP_2004"),
            (ErrorCode::Kip(KipCode::ReferenceError), "KIP_3001"),
            (ErrorCode::Kip(KipCode::NotFound), "KIP_3002"),
            (ErrorCode::Kip(KipCode::DuplicateExists), "KIP_3003"),
            (ErrorCode::Kip(KipCode::ImmutableTarget), "KIP_3004"),
            (ErrorCode::Kip(KipCode::VersionConflict), "KIP_3005"),
            (ErrorCode::Kip(KipCode::ExecutionTimeout), "KIP_4001"),
            (ErrorCode::Kip(KipCode::ResourceExhausted), "KIP_4002"),
            (ErrorCode::Kip(KipCode::InternalError), "KIP_4003"),
            (ErrorCode::BadRequest, "API_BAD_REQUEST"),
            (ErrorCode::UnknownOperation, "API_UNKNOWN_OPERATION"),
            (ErrorCode::Unauthorized, "API_UNAUTHORIZED"),
            (ErrorCode::Io, "API_IO"),
            (ErrorCode::MissingInputParams, "MISSING_INPUT_PARAMS"),
            (ErrorCode::LlmUnavailable, "LOGIC_LLM_UNAVAILABLE"),
            (ErrorCode::LlmInvalidOutput, "LOGIC_LLM_INVALID_OUTPUT"),
            (ErrorCode::OperatorFailed, "LOGIC_OPERATOR_FAILED"),
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

//! The resolver's error: a closed set of codes (KIP's own where one fits,
//! plus the seed's `MISSING_INPUT_PARAMS` and three for the services it
//! calls), a `trace_id` on every error, and the span id of the property
//! that failed where one did.

use kip_lang::{ErrorCode as KipCode, KipError};
use serde_json::{Map, Value as Json, json};

use crate::types::MissingInputs;

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// A KIP code: `KIP_2001` unknown type, `KIP_2002` unknown logic
    /// property, `KIP_2003` a parameter out of its domain, `KIP_2004` a
    /// parameter of the wrong type, `KIP_3002` an instance that does not
    /// exist, `KIP_4002` a series of too many buckets, `KIP_4003` internal.
    Kip(KipCode),
    /// The request body is not a resolver request (`API_BAD_REQUEST`, as
    /// kip-api says it).
    BadRequest,
    /// Some property lacks an input parameter: `missing` says which.
    MissingInputParams,
    /// The LLM endpoint is unreachable, refuses the request, or keeps
    /// failing after the retries; the message names the setting to check.
    LlmUnavailable,
    /// The LLM's answer is not valid strict JSON (or not valid parameters)
    /// even after the repair rounds.
    LlmInvalidOutput,
    /// An operator's service failed; its status and body are passed through.
    OperatorFailed,
}

impl Code {
    /// The codes beside KIP's own.
    pub const ALL: [Code; 5] = [
        Code::BadRequest,
        Code::MissingInputParams,
        Code::LlmUnavailable,
        Code::LlmInvalidOutput,
        Code::OperatorFailed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::Kip(k) => k.as_str(),
            Code::BadRequest => "API_BAD_REQUEST",
            Code::MissingInputParams => "MISSING_INPUT_PARAMS",
            Code::LlmUnavailable => "LOGIC_LLM_UNAVAILABLE",
            Code::LlmInvalidOutput => "LOGIC_LLM_INVALID_OUTPUT",
            Code::OperatorFailed => "LOGIC_OPERATOR_FAILED",
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed resolve. Nothing is ever partly answered: one failing property
/// fails the request.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ResolveError {
    pub code: Code,
    pub message: String,
    pub hint: String,
    /// The request's trace id (also in the logs).
    pub trace_id: String,
    /// For `MISSING_INPUT_PARAMS`: per property, what to supply.
    pub missing: Vec<MissingInputs>,
    /// More detail: `property`, `span_id`, `status`, `body`, `available`,
    /// `instances`, `path`, `setting`, …
    pub data: Map<String, Json>,
}

impl ResolveError {
    pub fn new(code: Code, message: impl Into<String>, hint: impl Into<String>) -> ResolveError {
        ResolveError {
            code,
            message: message.into(),
            hint: hint.into(),
            trace_id: String::new(),
            missing: Vec::new(),
            data: Map::new(),
        }
    }

    pub fn kip(code: KipCode, message: impl Into<String>, hint: impl Into<String>) -> ResolveError {
        ResolveError::new(Code::Kip(code), message, hint)
    }

    pub fn with_data(mut self, key: &str, value: impl Into<Json>) -> ResolveError {
        self.data.insert(key.to_owned(), value.into());
        self
    }

    /// Marks the error as the failure of one property (its span).
    pub fn in_property(self, property: &str, span_id: &str) -> ResolveError {
        self.with_data("property", property)
            .with_data("span_id", span_id)
    }

    pub(crate) fn traced(mut self, trace_id: &str) -> ResolveError {
        if self.trace_id.is_empty() {
            self.trace_id = trace_id.to_owned();
        }
        self
    }

    /// The seed's wire shape (§9.1): `{error_code, message, hint,
    /// missing?, trace_id, …data}`.
    pub fn to_seed_json(&self) -> Json {
        let mut out = Map::new();
        out.insert("error_code".into(), json!(self.code.as_str()));
        out.insert("message".into(), json!(self.message));
        out.insert("hint".into(), json!(self.hint));
        if self.code == Code::MissingInputParams {
            out.insert("missing".into(), json!(self.missing));
        }
        out.insert("trace_id".into(), json!(self.trace_id));
        for (k, v) in &self.data {
            out.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Json::Object(out)
    }

    /// `data` as KIP's error object carries it: the extra fields, with
    /// `trace_id` and `missing`.
    pub fn data_with_trace(&self) -> Map<String, Json> {
        let mut data = self.data.clone();
        data.insert("trace_id".into(), json!(self.trace_id));
        if self.code == Code::MissingInputParams {
            data.insert("missing".into(), json!(self.missing));
        }
        data
    }
}

impl From<KipError> for ResolveError {
    fn from(e: KipError) -> ResolveError {
        ResolveError {
            code: Code::Kip(e.code),
            message: e.message,
            hint: e.hint,
            trace_id: String::new(),
            missing: Vec::new(),
            data: e.data,
        }
    }
}

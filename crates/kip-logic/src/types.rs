//! The resolver's request and response: the seed's body (§5.2) and the
//! shapes of BRIEF §8. Serde types with TypeScript declarations (the `ts`
//! feature, turned on by kip-api's bindings test only).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// One instance to resolve for: by id (`{"id": "C:12"}`) or by name within
/// the type (`{"name": "Aspirin"}`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Identity {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub name: Option<String>,
}

impl Identity {
    pub fn named(name: impl Into<String>) -> Identity {
        Identity {
            id: None,
            name: Some(name.into()),
        }
    }

    /// How the identity reads in a message.
    pub fn label(&self) -> String {
        match (&self.id, &self.name) {
            (Some(id), _) => id.clone(),
            (None, Some(name)) => format!("\"{name}\""),
            (None, None) => "{}".to_owned(),
        }
    }
}

/// `options` of a request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default)]
pub struct ResolveOptions {
    /// Add `debug` to the answer: now_ms, the parameters used and where
    /// they came from, per-property timings and span ids.
    pub return_debug: bool,
    /// Repair calls to the LLM after an answer that is not valid (default 1).
    pub max_repair_rounds: u32,
    /// LLM calls in flight at once (default 4; the seed's `max_concurrency`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub max_concurrency: Option<u32>,
}

impl Default for ResolveOptions {
    fn default() -> ResolveOptions {
        ResolveOptions {
            return_debug: false,
            max_repair_rounds: 1,
            max_concurrency: None,
        }
    }
}

/// `POST /api/kn/logic-property-resolver`, the MCP tool
/// `resolve_logic_properties`, `kip resolve` and kip-api's
/// `resolve_logic_properties` operation all take this.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ResolveRequest {
    /// The nexus (`""` for the one the host serves).
    #[serde(default)]
    pub kn_id: String,
    /// The concept type whose logic properties are resolved.
    pub ot_id: String,
    /// The user's question, for the LLM.
    #[serde(default)]
    pub query: String,
    /// The instances, in the order `datas` answers them.
    pub unique_identities: Vec<Identity>,
    /// The logic properties to compute.
    pub properties: Vec<String>,
    /// Free text (or a JSON string) for the LLM: instance facts, constraints,
    /// time hints.
    #[serde(default)]
    pub additional_context: String,
    /// Parameters per property (`{property: {param: value}}`), used as given;
    /// the LLM (if configured) fills the properties left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "ts",
        ts(
            optional,
            type = "{ [key in string]?: { [key in string]?: JsonValue } }"
        )
    )]
    pub dynamic_params: Option<Map<String, Json>>,
    /// "Now" in ms since the epoch; the server's clock when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "number"))]
    pub now_ms: Option<i64>,
    #[serde(default)]
    pub options: ResolveOptions,
}

/// A successful answer: one object per identity, in order, with `id`,
/// `name` and each property's value (a number, or for a series
/// `[{"t": <bucket start ms>, "value": …}]`, or an operator's answer).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ResolveResponse {
    #[cfg_attr(feature = "ts", ts(type = "Array<{ [key in string]?: JsonValue }>"))]
    pub datas: Vec<Map<String, Json>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub debug: Option<ResolveDebug>,
}

/// Where a property's parameters came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ParamsFrom {
    Request,
    Llm,
}

/// One property's part of `debug`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PropertyDebug {
    pub property: String,
    /// `metric` or `operator`.
    pub kind: String,
    /// The id of the property's `tracing` span (`logic_property`).
    pub span_id: String,
    pub params_from: ParamsFrom,
    /// Chat-completion calls made (retries and repairs included).
    pub llm_calls: u32,
    pub repair_rounds: u32,
    /// Time to get and check the parameters, in ms.
    pub params_ms: f64,
    /// Time to compute the property for every instance, in ms.
    pub eval_ms: f64,
}

/// `debug` of an answer (`options.return_debug`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ResolveDebug {
    pub trace_id: String,
    /// The "now" used (the server's clock unless the request gave one).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub now_ms: i64,
    /// The parameters used, per property.
    #[cfg_attr(
        feature = "ts",
        ts(type = "{ [key in string]?: { [key in string]?: JsonValue } }")
    )]
    pub dynamic_params: Map<String, Json>,
    pub properties: Vec<PropertyDebug>,
    pub total_ms: f64,
}

/// One parameter a caller must supply (`MISSING_INPUT_PARAMS`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MissingParam {
    pub name: String,
    /// INTEGER, NUMBER, STRING, BOOLEAN, OBJECT or ARRAY.
    #[serde(rename = "type")]
    pub ty: String,
    pub hint: String,
}

/// The missing parameters of one property.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MissingInputs {
    pub property: String,
    pub params: Vec<MissingParam>,
}

/// A requested instance, found: what the resolver hands the evaluation of
/// a metric and the call of an operator. Internal, not a wire type; it is
/// here, beside the request it answers, so that those steps need not import
/// the resolver that calls them.
#[derive(Debug)]
pub(crate) struct Instance {
    pub id: kip_nexus::ConceptId,
    pub name: String,
    pub attributes: Map<String, Json>,
}

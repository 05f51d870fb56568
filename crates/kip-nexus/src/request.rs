//! The arguments of `execute_kip` (seed 001 §6.1), as every face receives them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// `{command | commands, parameters?, dry_run?}` (`ExecuteRequest` on the
/// wire of `kip-api`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "ExecuteRequest"))]
#[serde(deny_unknown_fields)]
pub struct ExecuteKip {
    /// One KIP command. Mutually exclusive with `commands`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub command: Option<String>,
    /// A batch, run in order, stopping at the first error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub commands: Option<Vec<BatchItem>>,
    /// Values for `:name` placeholders (shared by a batch's commands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional, type = "{ [key in string]?: JsonValue }"))]
    pub parameters: Option<Map<String, Json>>,
    /// Validate (KQL, META) or preview in an aborted transaction (KML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub dry_run: Option<bool>,
    /// An extension of KIP Explorer: also return how a FIND was evaluated
    /// (plan, rows per step, samples) and, when it found nothing, why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub explain: Option<bool>,
    /// An extension of KIP Explorer: why the caller sends this command. It
    /// becomes a THINK `DecisionRationale` entry of the cognitive trace,
    /// linked to the command's own entry (writes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reason: Option<String>,
    /// An extension of KIP Explorer: run the reads as of a past time (ISO
    /// 8601) or trace entry (`T:n`), on the nexus rebuilt from the trace's
    /// before-images. Writes are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub as_of: Option<String>,
}

/// One command of a batch: text using the shared parameters, or an object
/// whose own parameters override the shared ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(untagged)]
pub enum BatchItem {
    Text(String),
    WithParameters {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional, type = "{ [key in string]?: JsonValue }"))]
        parameters: Option<Map<String, Json>>,
    },
}

impl ExecuteKip {
    /// A request for one command.
    pub fn command(text: impl Into<String>) -> ExecuteKip {
        ExecuteKip {
            command: Some(text.into()),
            ..ExecuteKip::default()
        }
    }

    pub fn with_parameters(mut self, parameters: Map<String, Json>) -> ExecuteKip {
        self.parameters = Some(parameters);
        self
    }

    pub fn dry_run(mut self) -> ExecuteKip {
        self.dry_run = Some(true);
        self
    }
}

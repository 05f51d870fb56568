//! The typed model of a declaration: kinds, parameter types, parameters,
//! data sources and the properties they make up.

use serde::Serialize;
use serde_json::Value as Json;

/// The attribute of a `$ConceptType` definition that declares them.
pub const LOGIC_PROPERTIES: &str = "logic_properties";

/// The step of a series: one calendar unit (seed 004 §7.3).
pub const STEPS: [&str; 5] = ["day", "week", "month", "quarter", "year"];

/// The placeholders a `kip` data source may use besides its parameters.
pub const QUERY_PLACEHOLDERS: [&str; 3] = ["self", "start_iso", "end_iso"];

/// A metric's system parameters, always generated (`if_system_generate`).
pub const SYSTEM_PARAMETERS: [(&str, ParamType); 4] = [
    ("instant", ParamType::Boolean),
    ("start", ParamType::Integer),
    ("end", ParamType::Integer),
    ("step", ParamType::String),
];

/// Whether a property is a metric or an operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogicKind {
    Metric,
    Operator,
}

impl LogicKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LogicKind::Metric => "metric",
            LogicKind::Operator => "operator",
        }
    }
}

/// A parameter's JSON type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ParamType {
    Integer,
    Number,
    String,
    Boolean,
    Object,
    Array,
}

impl ParamType {
    pub const ALL: [ParamType; 6] = [
        ParamType::Integer,
        ParamType::Number,
        ParamType::String,
        ParamType::Boolean,
        ParamType::Object,
        ParamType::Array,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ParamType::Integer => "INTEGER",
            ParamType::Number => "NUMBER",
            ParamType::String => "STRING",
            ParamType::Boolean => "BOOLEAN",
            ParamType::Object => "OBJECT",
            ParamType::Array => "ARRAY",
        }
    }

    pub fn from_name(name: &str) -> Option<ParamType> {
        ParamType::ALL.into_iter().find(|t| t.as_str() == name)
    }

    /// Whether `value` is of this type (an INTEGER is a whole number; a
    /// NUMBER any number).
    pub fn accepts(self, value: &Json) -> bool {
        match self {
            ParamType::Integer => value.is_i64() || value.is_u64(),
            ParamType::Number => value.is_number(),
            ParamType::String => value.is_string(),
            ParamType::Boolean => value.is_boolean(),
            ParamType::Object => value.is_object(),
            ParamType::Array => value.is_array(),
        }
    }
}

/// Where a parameter's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueFrom {
    /// The caller (or the LLM) supplies it in `dynamic_params`.
    Input,
    /// An attribute of each instance (`property`).
    Property,
    /// A constant (`value`).
    Const,
}

/// One declared parameter.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Parameter {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: ParamType,
    pub value_from: ValueFrom,
    /// The instance attribute of a `value_from: property` parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    /// The value of a `value_from: const` parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<Json>,
    pub if_system_generate: bool,
    /// Whether an input must be supplied (default true).
    pub required: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// How a property is computed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DataSource {
    /// A KQL FIND with exactly one aggregate, run per instance (and per
    /// step bucket of a series).
    Kip { query: String },
    /// An external service, called once per request.
    Http { url: String },
}

/// One declared logic property.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LogicProperty {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: LogicKind,
    pub description: String,
    pub parameters: Vec<Parameter>,
    pub data_source: DataSource,
}

impl LogicProperty {
    /// The parameters the caller or the LLM must supply.
    pub fn inputs(&self) -> impl Iterator<Item = &Parameter> {
        self.parameters
            .iter()
            .filter(|p| p.value_from == ValueFrom::Input)
    }
}

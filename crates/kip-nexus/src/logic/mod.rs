//! Logic properties (BRIEF §8, seed 004): the declaration a `$ConceptType`
//! definition carries in its `logic_properties` attribute, read into a typed
//! model and checked when it is written.
//!
//! A logic property is computed on demand, never stored: a **metric** (a
//! value over a time window, or a series of one value per step bucket) or an
//! **operator** (a call to a service). This module owns the declaration's
//! shape and its checks — the same reader serves the KML writer (which
//! refuses a bad declaration with `KIP_2003` and the path inside it) and the
//! resolver (`kip-logic`, which reads the definition fresh on every request).
//! It does not resolve or evaluate anything.

use kip_lang::ast::{Command, Projection};
use kip_lang::{ErrorCode, KipError};
use serde::Serialize;
use serde_json::{Map, Value as Json, json};

use crate::ConceptId;
use crate::graph::{CONCEPT_TYPE, Graph, Result};

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

/// The logic properties a definition's attributes declare (none when it
/// has no `logic_properties`), or every problem of the declaration as one
/// `KIP_2003` whose `data.path` points inside it (all problems in
/// `data.errors` when there are several).
pub fn declared(attributes: &Map<String, Json>) -> Result<Vec<LogicProperty>> {
    let Some(decl) = attributes.get(LOGIC_PROPERTIES) else {
        return Ok(Vec::new());
    };
    let mut checker = Checker {
        schema: attributes.get("instance_schema").and_then(Json::as_object),
        problems: Vec::new(),
    };
    let props = checker.declaration(decl);
    let mut problems = checker.problems;
    if problems.is_empty() {
        return Ok(props);
    }
    let all: Vec<Json> = problems
        .iter()
        .map(|(path, m)| json!({"path": path, "message": m}))
        .collect();
    let (path, message) = problems.swap_remove(0);
    let more = all.len() - 1;
    let message = if more == 0 {
        format!("{path}: {message}")
    } else {
        format!("{path}: {message} (and {more} more)")
    };
    let mut e = KipError::new(ErrorCode::ConstraintViolation, message)
        .with_hint("Fix the logic property declaration at `data.path` (BRIEF §8: type metric|operator, parameters with name, type INTEGER|NUMBER|STRING|BOOLEAN|OBJECT|ARRAY and value_from input|property|const, and a data_source {kind: \"kip\", query} or {kind: \"http\", url}).")
        .with_data("path", path);
    if more > 0 {
        e = e.with_data("errors", all);
    }
    Err(e)
}

/// The writer's check (one call in `kml/upsert.rs`): when the concept `id`
/// is a `$ConceptType` definition, its `logic_properties` (against its
/// current `instance_schema`) must be valid.
pub(crate) fn check_definition(g: &Graph<'_>, id: ConceptId) -> Result<()> {
    let Some(rec) = g.concept(id)? else {
        return Ok(());
    };
    if &*g.type_name(rec.type_id)? != CONCEPT_TYPE {
        return Ok(());
    }
    declared(&rec.attributes).map(|_| ())
}

/// The short form DESCRIBE CONCEPT TYPE adds: per property its kind,
/// description, source kind and the inputs a caller supplies.
pub(crate) fn summary(attributes: &Map<String, Json>) -> Option<Json> {
    let props = declared(attributes).ok()?;
    if props.is_empty() {
        return None;
    }
    let list = props
        .iter()
        .map(|p| {
            let inputs: Vec<Json> = p
                .inputs()
                .map(|i| json!({"name": i.name, "type": i.ty.as_str(), "required": i.required}))
                .collect();
            let source = match &p.data_source {
                DataSource::Kip { .. } => "kip",
                DataSource::Http { .. } => "http",
            };
            json!({"name": p.name, "type": p.kind.as_str(), "description": p.description, "source": source, "inputs": inputs})
        })
        .collect();
    Some(Json::Array(list))
}

struct Checker<'a> {
    schema: Option<&'a Map<String, Json>>,
    problems: Vec<(String, String)>,
}

impl Checker<'_> {
    fn problem(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push((path.into(), message.into()));
    }

    fn declaration(&mut self, decl: &Json) -> Vec<LogicProperty> {
        let Some(map) = decl.as_object() else {
            self.problem(
                LOGIC_PROPERTIES,
                format!(
                    "expected an object of properties by name, found {}",
                    json_kind(decl)
                ),
            );
            return Vec::new();
        };
        map.iter()
            .filter_map(|(name, def)| self.property(name, def))
            .collect()
    }

    fn property(&mut self, name: &str, def: &Json) -> Option<LogicProperty> {
        let at = format!("{LOGIC_PROPERTIES}.{name}");
        if !kip_lang::is_identifier(name) {
            self.problem(
                &at,
                format!("`{name}` is not a valid property name ([a-zA-Z_][a-zA-Z0-9_]*)"),
            );
        }
        let Some(def) = def.as_object() else {
            self.problem(&at, format!("expected an object, found {}", json_kind(def)));
            return None;
        };
        let kind = match def.get("type").and_then(Json::as_str) {
            Some("metric") => Some(LogicKind::Metric),
            Some("operator") => Some(LogicKind::Operator),
            other => {
                self.problem(
                    format!("{at}.type"),
                    format!(
                        "expected \"metric\" or \"operator\", found {}",
                        other.map_or("nothing".to_owned(), |s| format!("\"{s}\""))
                    ),
                );
                None
            }
        };
        let description = match def.get("description") {
            None => String::new(),
            Some(Json::String(s)) => s.clone(),
            Some(other) => {
                self.problem(
                    format!("{at}.description"),
                    format!("expected a string, found {}", json_kind(other)),
                );
                String::new()
            }
        };
        let parameters = self.parameters(&at, def.get("parameters"));
        if kind == Some(LogicKind::Metric) {
            for (system, ty) in SYSTEM_PARAMETERS {
                match parameters.iter().find(|p| p.name == system) {
                    None => self.problem(
                        format!("{at}.parameters"),
                        format!("a metric needs the system parameter `{system}` ({}, value_from input, if_system_generate true)", ty.as_str()),
                    ),
                    Some(p) if p.ty != ty || p.value_from != ValueFrom::Input => self.problem(
                        format!("{at}.parameters.{system}"),
                        format!("the system parameter `{system}` must be {} with value_from input", ty.as_str()),
                    ),
                    Some(_) => {}
                }
            }
        }
        let data_source = self.data_source(&at, def.get("data_source"), &parameters, kind);
        for key in def.keys() {
            if !["type", "description", "parameters", "data_source"].contains(&key.as_str()) {
                self.problem(
                    format!("{at}.{key}"),
                    "unknown key: a logic property has type, description, parameters and data_source",
                );
            }
        }
        Some(LogicProperty {
            name: name.to_owned(),
            kind: kind?,
            description,
            parameters,
            data_source: data_source?,
        })
    }

    fn parameters(&mut self, at: &str, v: Option<&Json>) -> Vec<Parameter> {
        let list = match v {
            None => return Vec::new(),
            Some(Json::Array(list)) => list,
            Some(other) => {
                self.problem(
                    format!("{at}.parameters"),
                    format!("expected a list of parameters, found {}", json_kind(other)),
                );
                return Vec::new();
            }
        };
        let mut out: Vec<Parameter> = Vec::new();
        for (i, p) in list.iter().enumerate() {
            let here = format!("{at}.parameters[{i}]");
            if let Some(p) = self.parameter(&here, p) {
                if out.iter().any(|q| q.name == p.name) {
                    self.problem(
                        format!("{here}.name"),
                        format!("`{}` is declared twice", p.name),
                    );
                }
                out.push(p);
            }
        }
        out
    }

    fn parameter(&mut self, here: &str, p: &Json) -> Option<Parameter> {
        let Some(p) = p.as_object() else {
            self.problem(here, format!("expected an object, found {}", json_kind(p)));
            return None;
        };
        let name = p.get("name").and_then(Json::as_str);
        if !name.is_some_and(kip_lang::is_identifier) {
            self.problem(
                format!("{here}.name"),
                "expected an identifier ([a-zA-Z_][a-zA-Z0-9_]*)",
            );
        }
        let ty = match p.get("type").and_then(Json::as_str) {
            Some(t) => match ParamType::from_name(t) {
                Some(ty) => Some(ty),
                None => {
                    self.problem(
                        format!("{here}.type"),
                        format!("unknown parameter type \"{t}\": use INTEGER, NUMBER, STRING, BOOLEAN, OBJECT or ARRAY"),
                    );
                    None
                }
            },
            None => {
                self.problem(
                    format!("{here}.type"),
                    "expected a parameter type (INTEGER, NUMBER, STRING, BOOLEAN, OBJECT or ARRAY)",
                );
                None
            }
        };
        let value_from = match p.get("value_from").and_then(Json::as_str) {
            Some("input") | None => Some(ValueFrom::Input),
            Some("property") => Some(ValueFrom::Property),
            Some("const") => Some(ValueFrom::Const),
            Some(other) => {
                self.problem(
                    format!("{here}.value_from"),
                    format!("expected \"input\", \"property\" or \"const\", found \"{other}\""),
                );
                None
            }
        };
        let property = p.get("property").and_then(Json::as_str).map(str::to_owned);
        let value = p.get("value").cloned();
        match value_from {
            Some(ValueFrom::Property) => {
                match &property {
                    None => self.problem(
                        format!("{here}.property"),
                        "value_from property needs `property`: the instance attribute to read",
                    ),
                    Some(attr) => {
                        if !self.schema.is_some_and(|s| s.contains_key(attr)) {
                            let known: Vec<&str> = self
                                .schema
                                .map(|s| s.keys().map(String::as_str).collect())
                                .unwrap_or_default();
                            self.problem(
                            format!("{here}.property"),
                            format!(
                                "the type's instance_schema has no attribute `{attr}` (it has: {})",
                                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
                            ),
                        );
                        }
                    }
                }
            }
            Some(ValueFrom::Const) => match (&value, ty) {
                (None, _) => {
                    self.problem(format!("{here}.value"), "value_from const needs `value`")
                }
                (Some(v), Some(ty)) if !ty.accepts(v) => self.problem(
                    format!("{here}.value"),
                    format!("expected {}, found {}", ty.as_str(), json_kind(v)),
                ),
                _ => {}
            },
            _ => {}
        }
        let flag = |key: &str, default: bool, checker: &mut Self| match p.get(key) {
            None => default,
            Some(Json::Bool(b)) => *b,
            Some(other) => {
                checker.problem(
                    format!("{here}.{key}"),
                    format!("expected true or false, found {}", json_kind(other)),
                );
                default
            }
        };
        let if_system_generate = flag("if_system_generate", false, self);
        let required = flag("required", true, self);
        let description = p
            .get("description")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned();
        Some(Parameter {
            name: name?.to_owned(),
            ty: ty?,
            value_from: value_from?,
            property,
            value,
            if_system_generate,
            required,
            description,
        })
    }

    fn data_source(
        &mut self,
        at: &str,
        v: Option<&Json>,
        parameters: &[Parameter],
        kind: Option<LogicKind>,
    ) -> Option<DataSource> {
        let here = format!("{at}.data_source");
        let Some(ds) = v.and_then(Json::as_object) else {
            self.problem(
                &here,
                "expected {\"kind\": \"kip\", \"query\": \"FIND(…)\"} or {\"kind\": \"http\", \"url\": \"http(s)://…\"}",
            );
            return None;
        };
        match ds.get("kind").and_then(Json::as_str) {
            Some("kip") => {
                if kind == Some(LogicKind::Operator) {
                    self.problem(
                        format!("{here}.kind"),
                        "an operator is computed by a service: use {\"kind\": \"http\", \"url\": …}",
                    );
                }
                let Some(query) = ds.get("query").and_then(Json::as_str) else {
                    self.problem(format!("{here}.query"), "expected a KQL FIND text");
                    return None;
                };
                if let Err(m) = check_query(query, parameters) {
                    self.problem(format!("{here}.query"), m);
                }
                Some(DataSource::Kip {
                    query: query.to_owned(),
                })
            }
            Some("http") => match ds.get("url").and_then(Json::as_str) {
                None => {
                    self.problem(
                        format!("{here}.url"),
                        "an http data source needs `url` (http:// or https://)",
                    );
                    None
                }
                Some(url) => {
                    if let Err(m) = check_url(url) {
                        self.problem(format!("{here}.url"), m);
                    }
                    Some(DataSource::Http {
                        url: url.to_owned(),
                    })
                }
            },
            other => {
                self.problem(
                    format!("{here}.kind"),
                    format!(
                        "expected \"kip\" or \"http\", found {}",
                        other.map_or("nothing".to_owned(), |s| format!("\"{s}\""))
                    ),
                );
                None
            }
        }
    }
}

/// An operator's URL must be `http://` or `https://` with a host.
pub fn check_url(url: &str) -> std::result::Result<(), String> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    match rest {
        Some(r) if !r.is_empty() && !r.starts_with('/') => Ok(()),
        Some(_) => Err(format!("`{url}` has no host")),
        None => Err(format!(
            "`{url}` is not an http(s) URL: only http:// and https:// services can be called"
        )),
    }
}

/// A `kip` data source: one FIND whose only expression is an aggregate and
/// whose placeholders are parameters or `:self`, `:start_iso`, `:end_iso`.
fn check_query(query: &str, parameters: &[Parameter]) -> std::result::Result<(), String> {
    let commands = kip_lang::parse(query).map_err(|e| {
        format!(
            "the query does not parse: {}",
            e.into_response_error().message
        )
    })?;
    let [Command::Find(find)] = commands.as_slice() else {
        return Err("expected exactly one FIND command".to_owned());
    };
    let aggregates = find
        .find
        .iter()
        .filter(|p| matches!(p, Projection::Aggregate(_)))
        .count();
    if aggregates != 1 || find.find.len() != 1 {
        return Err(format!(
            "a metric's FIND returns exactly one aggregate (e.g. FIND(COUNT(?x))); this one has {} expression(s), {aggregates} of them aggregate(s)",
            find.find.len()
        ));
    }
    for name in kip_lang::placeholders(&commands) {
        if !QUERY_PLACEHOLDERS.contains(&name.as_str())
            && !parameters.iter().any(|p| p.name == name)
        {
            return Err(format!(
                "`:{name}` is neither a parameter of the property nor one of :self, :start_iso, :end_iso"
            ));
        }
    }
    Ok(())
}

fn json_kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(decl: Json, schema: Json) -> std::result::Result<Vec<LogicProperty>, KipError> {
        let mut attrs = Map::new();
        attrs.insert(LOGIC_PROPERTIES.into(), decl);
        attrs.insert("instance_schema".into(), schema);
        declared(&attrs)
    }

    fn system() -> Vec<Json> {
        vec![
            json!({"name": "instant", "type": "BOOLEAN", "value_from": "input", "if_system_generate": true}),
            json!({"name": "start", "type": "INTEGER", "value_from": "input", "if_system_generate": true}),
            json!({"name": "end", "type": "INTEGER", "value_from": "input", "if_system_generate": true}),
            json!({"name": "step", "type": "STRING", "value_from": "input", "if_system_generate": true, "required": false}),
        ]
    }

    fn metric(query: &str, extra: Vec<Json>) -> Json {
        let mut params = system();
        params.extend(extra);
        json!({"m": {"type": "metric", "parameters": params, "data_source": {"kind": "kip", "query": query}}})
    }

    const Q: &str = r#"FIND(COUNT(?l)) WHERE { ?d {id: :self} ?l (?d, "treats", ?s) FILTER(?l.metadata.added_at >= :start_iso && ?l.metadata.added_at < :end_iso) }"#;

    fn path(e: &KipError) -> &str {
        e.data["path"].as_str().unwrap_or_default()
    }

    #[test]
    fn a_good_metric_and_operator_read_into_the_model() {
        let mut decl = metric(Q, vec![]);
        decl["op"] = json!({"type": "operator", "description": "d", "parameters": [
            {"name": "code", "type": "STRING", "value_from": "property", "property": "atc"},
            {"name": "k", "type": "INTEGER", "value_from": "const", "value": 3},
            {"name": "region", "type": "STRING", "value_from": "input"}
        ], "data_source": {"kind": "http", "url": "http://127.0.0.1:1/x"}});
        let props = check(decl, json!({"atc": {"type": "string"}})).expect("valid");
        assert_eq!(props.len(), 2);
        assert_eq!(props[1].kind, LogicKind::Operator);
        assert_eq!(props[1].inputs().count(), 1);
    }

    #[test]
    fn each_bad_declaration_names_its_path() {
        let cases = [
            (
                metric(Q, vec![json!({"name": "x", "type": "DATE"})]),
                "logic_properties.m.parameters[4].type",
            ),
            (
                metric(
                    Q,
                    vec![
                        json!({"name": "x", "type": "STRING", "value_from": "property", "property": "nope"}),
                    ],
                ),
                "logic_properties.m.parameters[4].property",
            ),
            (
                json!({"m": {"type": "metric", "parameters": [], "data_source": {"kind": "kip", "query": Q}}}),
                "logic_properties.m.parameters",
            ),
            (
                metric("FIND(?d.name) WHERE { ?d {id: :self} }", vec![]),
                "logic_properties.m.data_source.query",
            ),
            (
                metric("FIND(COUNT(?d) WHERE {", vec![]),
                "logic_properties.m.data_source.query",
            ),
            (
                metric("FIND(COUNT(?d)) WHERE { ?d {id: :other} }", vec![]),
                "logic_properties.m.data_source.query",
            ),
            (
                json!({"o": {"type": "operator", "parameters": [], "data_source": {"kind": "http"}}}),
                "logic_properties.o.data_source.url",
            ),
            (
                json!({"o": {"type": "operator", "parameters": [], "data_source": {"kind": "http", "url": "ftp://x/y"}}}),
                "logic_properties.o.data_source.url",
            ),
            (
                json!({"o": {"type": "gauge", "data_source": {"kind": "http", "url": "http://x"}}}),
                "logic_properties.o.type",
            ),
        ];
        for (decl, expected) in cases {
            let e = check(decl.clone(), json!({"atc": {"type": "string"}}))
                .expect_err(&decl.to_string());
            assert_eq!(e.code, ErrorCode::ConstraintViolation, "{decl}");
            assert_eq!(path(&e), expected, "{decl}: {e}");
        }
    }

    #[test]
    fn several_problems_are_all_listed() {
        let decl = json!({"o": {"type": "operator", "parameters": [{"name": "a", "type": "X"}], "data_source": {"kind": "http", "url": "file:///etc"}}});
        let e = check(decl, json!({})).expect_err("two problems");
        assert_eq!(e.data["errors"].as_array().map(Vec::len), Some(2));
    }
}

//! Reading a declaration into the model while checking it, every problem
//! named by its path inside the declaration.

use kip_lang::ast::{Command, Projection};
use kip_lang::{ErrorCode, KipError};
use serde_json::{Map, Value as Json, json};

use crate::graph::{CONCEPT_TYPE, Graph, Result};
use kip_store::ConceptId;

use super::model::{
    DataSource, LOGIC_PROPERTIES, LogicKind, LogicProperty, ParamType, Parameter,
    QUERY_PLACEHOLDERS, SYSTEM_PARAMETERS, ValueFrom,
};

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

pub(super) struct Checker<'a> {
    pub(super) schema: Option<&'a Map<String, Json>>,
    pub(super) problems: Vec<(String, String)>,
}

impl Checker<'_> {
    pub(super) fn problem(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push((path.into(), message.into()));
    }

    pub(super) fn declaration(&mut self, decl: &Json) -> Vec<LogicProperty> {
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

    pub(super) fn property(&mut self, name: &str, def: &Json) -> Option<LogicProperty> {
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

    pub(super) fn parameters(&mut self, at: &str, v: Option<&Json>) -> Vec<Parameter> {
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

    pub(super) fn parameter(&mut self, here: &str, p: &Json) -> Option<Parameter> {
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
        let ty = self.param_type(here, p);
        let value_from = self.value_from(here, p);
        let property = p.get("property").and_then(Json::as_str).map(str::to_owned);
        let value = p.get("value").cloned();
        self.parameter_value(here, value_from, ty, property.as_deref(), value.as_ref());
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

    /// A parameter's `type`.
    pub(super) fn param_type(&mut self, here: &str, p: &Map<String, Json>) -> Option<ParamType> {
        match p.get("type").and_then(Json::as_str) {
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
        }
    }

    /// Where a parameter's value comes from (`input` when not said).
    pub(super) fn value_from(&mut self, here: &str, p: &Map<String, Json>) -> Option<ValueFrom> {
        match p.get("value_from").and_then(Json::as_str) {
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
        }
    }

    /// What `value_from` needs: the attribute a `property` parameter
    /// reads, which the type's instance schema must have, or the value of
    /// a `const` one, of the parameter's type.
    pub(super) fn parameter_value(
        &mut self,
        here: &str,
        value_from: Option<ValueFrom>,
        ty: Option<ParamType>,
        property: Option<&str>,
        value: Option<&Json>,
    ) {
        match value_from {
            Some(ValueFrom::Property) => {
                match property {
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
            Some(ValueFrom::Const) => match (value, ty) {
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
    }

    pub(super) fn data_source(
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
pub(super) fn check_query(
    query: &str,
    parameters: &[Parameter],
) -> std::result::Result<(), String> {
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

pub(super) fn json_kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

//! Checking one property's `dynamic_params` (seed 004 §8 step 5, BRIEF §8):
//! strict JSON object, every `value_from: input` parameter present and of
//! its type, `step` one of day|week|month|quarter|year, `instant: false`
//! only with a `step`, `start ≤ end`, and a series of at most
//! [`MAX_BUCKETS`] buckets. Missing inputs are collected (they become
//! `MISSING_INPUT_PARAMS`); any other problem is an error naming the path.

use kip_lang::ErrorCode as KipCode;
use kip_nexus::{LogicKind, LogicProperty, STEPS};
use serde_json::{Map, Value as Json};

use crate::error::ResolveError;
use crate::types::MissingParam;
use crate::window::{self, MAX_BUCKETS, Step};

/// What is wrong with a property's parameters.
#[derive(Debug)]
pub enum Problem {
    /// These inputs are missing (nothing else is wrong).
    Missing(Vec<MissingParam>),
    /// A value is there but not acceptable.
    Invalid(ResolveError),
}

/// The hint of a missing parameter: its description, else what the system
/// parameters mean.
pub fn hint(p: &kip_nexus::Parameter) -> String {
    let what = match p.name.as_str() {
        "instant" if p.if_system_generate => {
            "true for one value over [start, end], false for a series of one value per step"
        }
        "start" if p.if_system_generate => {
            "the window's start in ms since the epoch: infer it from the query and now_ms, or state the time range in additional_context"
        }
        "end" if p.if_system_generate => {
            "the window's end in ms since the epoch: infer it from the query and now_ms, or state the time range in additional_context"
        }
        "step" if p.if_system_generate => "the series step: day, week, month, quarter or year",
        _ => "",
    };
    match (p.description.is_empty(), what.is_empty()) {
        (false, _) => format!(
            "{}; supply it in dynamic_params or additional_context",
            p.description
        ),
        (true, false) => what.to_owned(),
        (true, true) => format!(
            "a {} value; supply it in dynamic_params or additional_context",
            p.ty.as_str()
        ),
    }
}

fn missing(p: &kip_nexus::Parameter, why: Option<&str>) -> MissingParam {
    MissingParam {
        name: p.name.clone(),
        ty: p.ty.as_str().to_owned(),
        hint: match why {
            Some(w) => format!("{} ({w})", hint(p)),
            None => hint(p),
        },
    }
}

/// Every input `prop` needs when nothing was supplied (for a metric,
/// `step` only as a series needs it).
pub fn all_missing(prop: &LogicProperty) -> Vec<MissingParam> {
    prop.inputs()
        .filter(|p| p.required && !(prop.kind == LogicKind::Metric && p.name == "step"))
        .map(|p| missing(p, None))
        .collect()
}

/// Checks `given` for `prop`; the checked inputs on success.
pub fn check(prop: &LogicProperty, given: &Json) -> Result<Map<String, Json>, Problem> {
    let Some(obj) = given.as_object() else {
        return Err(invalid(
            prop,
            KipCode::InvalidValueType,
            format!("dynamic_params.{}", prop.name),
            format!(
                "the parameters of `{}` must be a JSON object, found {given}",
                prop.name
            ),
            "Send {\"<param>\": value, …} for each property.",
        ));
    };
    for key in obj.keys() {
        if !prop.inputs().any(|p| &p.name == key) {
            let inputs: Vec<&str> = prop.inputs().map(|p| p.name.as_str()).collect();
            return Err(invalid(
                prop,
                KipCode::ConstraintViolation,
                at(prop, key),
                format!("`{key}` is not an input parameter of `{}`", prop.name),
                &format!("Its inputs are: {}.", inputs.join(", ")),
            ));
        }
    }
    let mut lacking = Vec::new();
    let mut out = Map::new();
    for p in prop.inputs() {
        match obj.get(&p.name) {
            Some(v) if !v.is_null() => {
                if !p.ty.accepts(v) {
                    return Err(invalid(
                        prop,
                        KipCode::InvalidValueType,
                        at(prop, &p.name),
                        format!(
                            "`{}` of `{}` must be {}, found {v}",
                            p.name,
                            prop.name,
                            p.ty.as_str()
                        ),
                        "Correct the JSON type of the value.",
                    ));
                }
                out.insert(p.name.clone(), v.clone());
            }
            _ => {
                let needed = p.required && !(prop.kind == LogicKind::Metric && p.name == "step");
                if needed {
                    lacking.push(missing(p, None));
                }
            }
        }
    }
    if prop.kind == LogicKind::Metric {
        check_metric(prop, &out, lacking)?;
    } else if !lacking.is_empty() {
        return Err(Problem::Missing(lacking));
    }
    Ok(out)
}

/// A metric's system inputs among the checked ones `out`: a known step,
/// one when a series is asked for, a window the calendar holds and whose
/// series is not too long; then nothing required may be `lacking`.
fn check_metric(
    prop: &LogicProperty,
    out: &Map<String, Json>,
    mut lacking: Vec<MissingParam>,
) -> Result<(), Problem> {
    let instant = out.get("instant").and_then(Json::as_bool);
    match out.get("step") {
        Some(Json::String(s)) if !STEPS.contains(&s.as_str()) => {
            return Err(invalid(
                prop,
                KipCode::ConstraintViolation,
                at(prop, "step"),
                format!("`step` must be one of {}, found \"{s}\"", STEPS.join(", ")),
                "Use one calendar unit: day, week, month, quarter or year.",
            ));
        }
        None if instant == Some(false) => {
            if let Some(p) = prop.inputs().find(|p| p.name == "step") {
                lacking.push(missing(
                    p,
                    Some("instant: false asks for a series, which needs a step"),
                ));
            }
        }
        _ => {}
    }
    if !lacking.is_empty() {
        return Err(Problem::Missing(lacking));
    }
    let start = out.get("start").and_then(Json::as_i64).unwrap_or_default();
    let end = out.get("end").and_then(Json::as_i64).unwrap_or_default();
    if !window::in_range(start) || !window::in_range(end) {
        return Err(invalid(
            prop,
            KipCode::ConstraintViolation,
            at(prop, "start"),
            format!("`start` ({start}) or `end` ({end}) is not a time the calendar holds"),
            "Give ms since 1970-01-01T00:00:00Z.",
        ));
    }
    if start > end {
        return Err(invalid(
            prop,
            KipCode::ConstraintViolation,
            at(prop, "start"),
            format!("`start` ({start}) is after `end` ({end})"),
            "Swap them: start ≤ end.",
        ));
    }
    if instant == Some(false)
        && let Some(step) = out
            .get("step")
            .and_then(Json::as_str)
            .and_then(Step::from_name)
        && let Err(n) = window::buckets(start, end, step)
    {
        return Err(invalid(
            prop,
            KipCode::ResourceExhausted,
            at(prop, "step"),
            format!(
                "the series of `{}` would have more than {MAX_BUCKETS} buckets ({n} or more)",
                prop.name
            ),
            "Use a larger step (week, month, quarter, year) or a shorter window.",
        ));
    }
    Ok(())
}

/// Where an input of `prop` is in a request.
fn at(prop: &LogicProperty, name: &str) -> String {
    format!("dynamic_params.{}.{name}", prop.name)
}

/// A problem with an input of `prop`, at `path`.
fn invalid(
    prop: &LogicProperty,
    code: KipCode,
    path: String,
    message: String,
    hint: &str,
) -> Problem {
    Problem::Invalid(
        ResolveError::kip(code, message, hint)
            .with_data("path", path)
            .with_data("property", prop.name.clone()),
    )
}

/// The inputs an LLM's `_error` answer names (whole words), else every
/// required input: what the caller is asked for.
pub fn missing_from_message(prop: &LogicProperty, message: &str) -> Vec<MissingParam> {
    let words: Vec<&str> = message
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    let named: Vec<MissingParam> = prop
        .inputs()
        .filter(|p| words.contains(&p.name.as_str()))
        .map(|p| missing(p, Some(message)))
        .collect();
    if named.is_empty() {
        all_missing(prop)
            .into_iter()
            .map(|mut m| {
                m.hint = format!("{} ({message})", m.hint);
                m
            })
            .collect()
    } else {
        named
    }
}

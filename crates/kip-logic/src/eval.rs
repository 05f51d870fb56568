//! `kip` metrics: the data source's FIND, parsed once, bound and run per
//! instance (and per step bucket for a series) in the caller's one read
//! snapshot. Bound names: `:self` (the instance's id), every parameter
//! (inputs, constants, and the instance's `value_from: property` values),
//! and for each window or bucket `:start` / `:end` (ms) with `:start_iso` /
//! `:end_iso`.

use kip_lang::ast::Command;
use kip_lang::{ErrorCode, Errors, KipError};
use kip_nexus::{DataSource, ElementId, LogicProperty, Snapshot};
use serde_json::{Map, Value as Json, json};

use crate::operator::instance_params;
use crate::types::Instance;
use crate::window::{self, Step};

/// The metric's values, one per instance: a number (instant) or a series
/// `[{"t", "value"}]`.
pub(crate) fn metric(
    snapshot: &Snapshot<'_, '_>,
    def: &LogicProperty,
    params: &Map<String, Json>,
    instances: &[Instance],
) -> kip_nexus::Result<Vec<Json>> {
    let DataSource::Kip { query } = &def.data_source else {
        return Err(KipError::new(
            ErrorCode::InternalError,
            "an http source reached the kip evaluator",
        ));
    };
    let commands = kip_lang::parse(query).map_err(Errors::into_response_error)?;
    let start = params
        .get("start")
        .and_then(Json::as_i64)
        .unwrap_or_default();
    let end = params.get("end").and_then(Json::as_i64).unwrap_or_default();
    let series = params.get("instant").and_then(Json::as_bool) == Some(false);
    let windows = if series {
        let step = params
            .get("step")
            .and_then(Json::as_str)
            .and_then(Step::from_name)
            .unwrap_or(Step::Day);
        window::buckets(start, end, step).map_err(|n| {
            KipError::new(
                ErrorCode::ResourceExhausted,
                format!("more than {n} buckets"),
            )
        })?
    } else {
        vec![(start, end)]
    };
    let isos: Vec<(Json, Json)> = windows
        .iter()
        .map(|(a, b)| (json!(window::iso(*a)), json!(window::iso(*b))))
        .collect();
    let mut out = Vec::with_capacity(instances.len());
    for inst in instances {
        let mut bound = params.clone();
        bound.extend(instance_params(def, inst));
        bound.insert(
            "self".into(),
            json!(ElementId::Concept(inst.id).to_string()),
        );
        let mut values = Vec::with_capacity(windows.len());
        for ((a, b), (a_iso, b_iso)) in windows.iter().zip(&isos) {
            bound.insert("start".into(), json!(a));
            bound.insert("end".into(), json!(b));
            bound.insert("start_iso".into(), a_iso.clone());
            bound.insert("end_iso".into(), b_iso.clone());
            let value = run(snapshot, query, &commands, &bound)?;
            values.push(if series {
                json!({"t": a, "value": value})
            } else {
                value
            });
        }
        out.push(if series {
            Json::Array(values)
        } else {
            values.pop().unwrap_or(Json::Null)
        });
    }
    Ok(out)
}

fn run(
    snapshot: &Snapshot<'_, '_>,
    source: &str,
    commands: &[Command],
    params: &Map<String, Json>,
) -> kip_nexus::Result<Json> {
    let bound =
        kip_lang::bind(source, commands.to_vec(), params).map_err(Errors::into_response_error)?;
    match bound.first() {
        Some(Command::Find(q)) => snapshot.find(source, q),
        _ => Err(KipError::new(
            ErrorCode::InternalError,
            "a metric's query is not a FIND",
        )),
    }
}

//! `http` data sources: one POST per property per request with the seed's
//! body `{unique_identities, properties, dynamic_params}` (and
//! `instance_params`, each instance's `value_from: property` parameters,
//! aligned with `unique_identities`) and headers (`x-http-method-override:
//! GET`, `x-account-id`, `x-account-type`). The service answers
//! `{"datas": [{"<property>": value, …}, …]}` aligned with the identities.
//! Failures are passed through, never retried (seed §9.2).

use std::time::Duration;

use kip_nexus::{ElementId, LogicProperty, ValueFrom};
use serde_json::{Map, Value as Json, json};

use crate::error::{Code, ResolveError};
use crate::llm::clip;
use crate::types::Instance;

/// How long an operator may take.
const TIMEOUT: Duration = Duration::from_secs(60);

fn failed(url: &str, message: String) -> ResolveError {
    ResolveError::new(
        Code::OperatorFailed,
        message,
        "The operator's service failed; its answer is in `data`. Check the service, or the property's data_source.url.",
    )
    .with_data("url", url)
}

/// Each instance's `value_from: property` and `const` parameters.
pub(crate) fn instance_params(def: &LogicProperty, inst: &Instance) -> Map<String, Json> {
    def.parameters
        .iter()
        .filter_map(|p| match p.value_from {
            ValueFrom::Property => Some((
                p.name.clone(),
                p.property
                    .as_ref()
                    .and_then(|a| inst.attributes.get(a))
                    .cloned()
                    .unwrap_or(Json::Null),
            )),
            ValueFrom::Const => Some((p.name.clone(), p.value.clone().unwrap_or(Json::Null))),
            ValueFrom::Input => None,
        })
        .collect()
}

pub(crate) async fn call(
    client: &reqwest::Client,
    url: &str,
    def: &LogicProperty,
    params: &Map<String, Json>,
    instances: &[Instance],
    (account_id, account_type): (&str, &str),
    trace_id: &str,
) -> Result<Vec<Json>, ResolveError> {
    kip_nexus::check_logic_url(url).map_err(|m| {
        ResolveError::kip(
            kip_lang::ErrorCode::ConstraintViolation,
            m,
            "Correct the property's data_source.url.",
        )
    })?;
    let identities: Vec<Json> = instances
        .iter()
        .map(|i| json!({"id": ElementId::Concept(i.id).to_string(), "name": i.name}))
        .collect();
    let per_instance: Vec<Json> = instances
        .iter()
        .map(|i| Json::Object(instance_params(def, i)))
        .collect();
    let body = json!({
        "unique_identities": identities,
        "properties": [def.name],
        "dynamic_params": {def.name.clone(): params},
        "instance_params": per_instance,
    });
    let response = client
        .post(url)
        .timeout(TIMEOUT)
        .header("x-http-method-override", "GET")
        .header("x-account-id", account_id)
        .header("x-account-type", account_type)
        .header("x-trace-id", trace_id)
        .json(&body)
        .send()
        .await
        .map_err(|e| {
            failed(
                url,
                format!(
                    "the operator `{}` at {url} cannot be reached: {e}",
                    def.name
                ),
            )
        })?;
    let status = response.status();
    let text = response.text().await.map_err(|e| {
        failed(
            url,
            format!("the operator `{}` broke off its answer: {e}", def.name),
        )
    })?;
    if !status.is_success() {
        return Err(failed(
            url,
            format!("the operator `{}` answered HTTP {status}", def.name),
        )
        .with_data("status", status.as_u16())
        .with_data("body", clip(&text)));
    }
    let value: Json = serde_json::from_str(&text).map_err(|e| {
        failed(
            url,
            format!("the operator `{}` did not answer JSON: {e}", def.name),
        )
        .with_data("body", clip(&text))
    })?;
    let Some(datas) = value.get("datas").and_then(Json::as_array) else {
        return Err(failed(
            url,
            format!("the operator `{}` answered without `datas`", def.name),
        )
        .with_data("body", clip(&text)));
    };
    if datas.len() != instances.len() {
        return Err(failed(
            url,
            format!(
                "the operator `{}` answered {} rows for {} instances",
                def.name,
                datas.len(),
                instances.len()
            ),
        ));
    }
    Ok(datas
        .iter()
        .map(|row| row.get(&def.name).cloned().unwrap_or(Json::Null))
        .collect())
}

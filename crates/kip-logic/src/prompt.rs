//! The LLM prompts of seed 004 §7: one call per property (the minimal
//! input: the question, the instances, the context, now_ms and that
//! property's declaration), a metric prompt and an operator prompt with the
//! seed's hard rules, strict JSON out, and the repair prompt.

use kip_nexus::{LogicKind, LogicProperty, STEPS};
use serde_json::{Value as Json, json};

use crate::types::Identity;

/// The shared context of one request's prompts.
#[derive(Debug)]
pub struct Context<'a> {
    pub query: &'a str,
    pub kn_id: &'a str,
    pub ot_id: &'a str,
    pub identities: &'a [Identity],
    pub additional_context: &'a str,
    pub now_ms: i64,
}

const OUTPUT_RULES: &str = "Output ONLY strict, valid JSON (no prose, no code fences, no comments), exactly of the form {\"<property_name>\": {\"<param>\": <value>, …}}. If a required parameter cannot be determined from the context, output instead {\"_error\": \"missing required parameters: <name> (<what it is>), …\"} — still strict JSON.";

/// The system prompt for `prop` (seed §7.3 for metrics, §7.4 for operators).
pub fn system(prop: &LogicProperty) -> String {
    let rules = match prop.kind {
        LogicKind::Metric => format!(
            "You generate the dynamic_params of one METRIC logic property of a knowledge graph.\n\
             Hard rules:\n\
             1. Generate ONLY the parameters whose value_from is \"input\", and ALL of them.\n\
             2. The system parameters instant, start, end and step (if_system_generate: true) are ALWAYS generated.\n\
             3. step is one of {} (exactly one unit).\n\
             4. instant: true = one value now or over one window (start/end); instant: false = a trend (a series over [start, end]) and then step is REQUIRED.\n\
             5. start and end are integers, milliseconds since the Unix epoch (UTC), start <= end; derive them from the question, the context and now_ms (e.g. \"last 12 months\" = [now_ms - 12 months, now_ms]; \"now\" = start = end = now_ms).\n\
             6. Take other input parameters from additional_context first, then from the question; if one is required and cannot be found, answer with _error.\n",
            STEPS.join("/")
        ),
        LogicKind::Operator => "You generate the dynamic_params of one OPERATOR logic property of a knowledge graph (a call to a service).\n\
             Hard rules:\n\
             1. Generate ONLY the parameters whose value_from is \"input\", and ALL of them.\n\
             2. A parameter may be a number, string, boolean, object or array: keep the structure and the type its declaration requires.\n\
             3. Take values from additional_context first, then from the question, then from declared defaults or examples; if a required one cannot be found, answer with _error.\n"
            .to_owned(),
    };
    format!("{rules}{OUTPUT_RULES}")
}

/// The user message: the request's context and the property's declaration
/// (inputs only: the others are not the model's to fill).
pub fn user(ctx: &Context<'_>, prop: &LogicProperty) -> String {
    let inputs: Vec<Json> = prop
        .inputs()
        .map(|p| {
            json!({"name": p.name, "type": p.ty.as_str(), "required": p.required,
                   "if_system_generate": p.if_system_generate, "description": p.description})
        })
        .collect();
    let body = json!({
        "query": ctx.query,
        "kn_id": ctx.kn_id,
        "ot_id": ctx.ot_id,
        "unique_identities": ctx.identities,
        "additional_context": ctx.additional_context,
        "now_ms": ctx.now_ms,
        "property_name": prop.name,
        "logic_property": {
            "type": prop.kind.as_str(),
            "description": prop.description,
            "parameters": inputs,
        },
    });
    format!(
        "Generate dynamic_params for the property \"{}\".\n{}",
        prop.name,
        serde_json::to_string_pretty(&body).unwrap_or_default()
    )
}

/// The repair message after an answer that was not acceptable.
pub fn repair(previous: &str, problem: &str, prop: &LogicProperty) -> String {
    format!(
        "Your previous answer was not acceptable: {problem}\nPrevious answer:\n{previous}\n\
         Answer again with ONLY strict JSON of the form {{\"{}\": {{…}}}} (or {{\"_error\": \"…\"}}), following every rule.",
        prop.name
    )
}

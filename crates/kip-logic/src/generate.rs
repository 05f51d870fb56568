//! One property's parameters from the LLM: a permit of the request's
//! semaphore, the call (with the client's retries), the answer read as
//! strict JSON and checked, and at most `max_repairs` repair calls when it
//! is not acceptable. `_error` answers and missing inputs are not repaired:
//! they go back to the caller as `MISSING_INPUT_PARAMS` (seed §9.2).

use std::sync::Arc;
use std::time::Instant;

use kip_nexus::LogicProperty;
use serde_json::{Map, Value as Json, json};
use tokio::sync::Semaphore;

use crate::error::{Code, ResolveError};
use crate::llm::{Llm, clip};
use crate::params::{self, Problem};
use crate::prompt;

/// One property's generation.
#[derive(Debug)]
pub(crate) struct Job {
    pub llm: Arc<Llm>,
    pub semaphore: Arc<Semaphore>,
    pub def: LogicProperty,
    pub messages: Vec<Json>,
    pub max_repairs: u32,
}

/// What a [`Job`] produced.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub result: Result<Map<String, Json>, Problem>,
    pub calls: u32,
    pub repairs: u32,
    pub ms: f64,
}

/// How an answer reads.
enum Reading {
    Params(Map<String, Json>),
    Missing(Problem),
    /// Not acceptable; the text says why (for the repair prompt).
    Invalid(String, Option<ResolveError>),
}

impl Job {
    pub async fn run(mut self) -> Outcome {
        let started = Instant::now();
        let mut calls = 0;
        let mut repairs = 0;
        let _permit = self.semaphore.clone().acquire_owned().await;
        let result = loop {
            let completion = self.llm.complete(&self.messages).await;
            calls += completion.calls;
            let content = match completion.content {
                Ok(c) => c,
                Err(e) => break Err(Problem::Invalid(e)),
            };
            match read(&self.def, &content) {
                Reading::Params(p) => break Ok(p),
                Reading::Missing(m) => break Err(m),
                Reading::Invalid(why, error) => {
                    tracing::debug!(reason = %why, "the LLM's answer is not acceptable");
                    if repairs >= self.max_repairs {
                        let e = error.unwrap_or_else(|| {
                            ResolveError::new(
                                Code::LlmInvalidOutput,
                                format!("the LLM's parameters for `{}` are not valid: {why}", self.def.name),
                                "Supply dynamic_params for this property in the request, or rephrase the question and additional_context.",
                            )
                        });
                        break Err(Problem::Invalid(
                            e.with_data("answer", clip(&content))
                                .with_data("repair_rounds", repairs),
                        ));
                    }
                    repairs += 1;
                    self.messages
                        .push(json!({"role": "assistant", "content": content}));
                    self.messages.push(json!({"role": "user", "content": prompt::repair(&content, &why, &self.def)}));
                }
            }
        };
        Outcome {
            result,
            calls,
            repairs,
            ms: started.elapsed().as_secs_f64() * 1000.0,
        }
    }
}

/// Reads an answer: strict JSON, `{"_error": …}` or `{"<property>": {…}}`
/// whose parameters pass [`params::check`].
fn read(def: &LogicProperty, content: &str) -> Reading {
    let value: Json = match serde_json::from_str(content.trim()) {
        Ok(v) => v,
        Err(e) => return Reading::Invalid(format!("it is not valid JSON ({e})"), None),
    };
    if let Some(message) = value.get("_error") {
        let message = message
            .as_str()
            .map_or_else(|| message.to_string(), str::to_owned);
        return Reading::Missing(Problem::Missing(params::missing_from_message(
            def, &message,
        )));
    }
    let Some(params) = value.get(&def.name) else {
        return Reading::Invalid(
            format!(
                "it has no key \"{}\": the answer must be {{\"{}\": {{…}}}}",
                def.name, def.name
            ),
            None,
        );
    };
    match params::check(def, params) {
        Ok(p) => Reading::Params(p),
        Err(Problem::Missing(m)) => Reading::Missing(Problem::Missing(m)),
        Err(Problem::Invalid(e)) => {
            let why = e.message.clone();
            let e = ResolveError {
                code: Code::LlmInvalidOutput,
                message: format!("the LLM's parameters for `{}` are not valid: {}", def.name, e.message),
                hint: "Supply dynamic_params for this property in the request, or rephrase the question and additional_context.".to_owned(),
                ..e
            };
            Reading::Invalid(why, Some(e))
        }
    }
}

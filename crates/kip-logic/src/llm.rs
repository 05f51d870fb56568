//! The OpenAI-compatible chat-completions client (`POST
//! <KIP_LLM_URL>/chat/completions`, reqwest over rustls) with the seed's
//! retry policy (§9.2): only 429, 5xx and time-outs are retried, twice,
//! after 100 ms and then 200 ms; any other 4xx, an unreachable host, or an
//! answer that is not a chat completion fails at once with a message naming
//! the setting to check.

use std::time::Duration;

use serde_json::{Value as Json, json};

use crate::error::{Code, ResolveError};

pub const URL_VAR: &str = "KIP_LLM_URL";
pub const MODEL_VAR: &str = "KIP_LLM_MODEL";
pub const KEY_VAR: &str = "KIP_LLM_API_KEY";
/// Optional: one call's time-out in ms (default 30,000).
pub const TIMEOUT_VAR: &str = "KIP_LLM_TIMEOUT_MS";

/// Where the LLM is and how to call it.
#[derive(Clone)]
pub struct LlmConfig {
    /// The API base (`https://host/v1`) or the full `…/chat/completions` URL.
    pub url: String,
    pub model: String,
    pub api_key: Option<String>,
    /// One call's time-out (a time-out is retried).
    pub timeout: Duration,
    /// The waits before the first and the second retry.
    pub backoff: [Duration; 2],
}

impl std::fmt::Debug for LlmConfig {
    // The key never reaches a log or an error message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmConfig")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

fn misconfigured(setting: &str, message: String, hint: &str) -> ResolveError {
    ResolveError::new(Code::LlmUnavailable, message, hint).with_data("setting", setting)
}

impl LlmConfig {
    /// An endpoint with the seed's defaults (30 s time-out, 100/200 ms back-off).
    pub fn new(url: impl Into<String>, model: impl Into<String>) -> LlmConfig {
        LlmConfig {
            url: url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(30),
            backoff: [Duration::from_millis(100), Duration::from_millis(200)],
        }
    }

    /// From `KIP_LLM_URL`, `KIP_LLM_MODEL`, `KIP_LLM_API_KEY` (and
    /// `KIP_LLM_TIMEOUT_MS`): `None` when no URL is set (then parameters
    /// come from the request or are reported missing); an error naming the
    /// setting when one is set but unusable.
    pub fn from_env() -> Result<Option<LlmConfig>, ResolveError> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let Some(url) = var(URL_VAR) else {
            return Ok(None);
        };
        let Some(model) = var(MODEL_VAR) else {
            return Err(misconfigured(
                MODEL_VAR,
                format!("{URL_VAR} is set but {MODEL_VAR} is not: the LLM needs a model name"),
                "Set KIP_LLM_MODEL to the model the endpoint serves (e.g. gpt-4o-mini), or unset KIP_LLM_URL to supply dynamic_params yourself.",
            ));
        };
        let mut config = LlmConfig::new(url.trim(), model.trim());
        config.api_key = var(KEY_VAR);
        if let Some(ms) = var(TIMEOUT_VAR) {
            let ms: u64 = ms.trim().parse().map_err(|_| {
                misconfigured(
                    TIMEOUT_VAR,
                    format!("{TIMEOUT_VAR} must be a whole number of ms, found `{ms}`"),
                    "Set it to e.g. 30000, or unset it.",
                )
            })?;
            config.timeout = Duration::from_millis(ms);
        }
        config.check()?;
        Ok(Some(config))
    }

    /// The URL must be http(s).
    pub fn check(&self) -> Result<(), ResolveError> {
        kip_nexus::check_logic_url(&self.url).map_err(|m| {
            misconfigured(
                URL_VAR,
                format!("{URL_VAR} is not usable: {m}"),
                "Set KIP_LLM_URL to an OpenAI-compatible API base such as https://api.openai.com/v1 or http://127.0.0.1:11434/v1.",
            )
        })
    }

    /// The chat-completions URL.
    pub fn endpoint(&self) -> String {
        let base = self.url.trim_end_matches('/');
        if base.ends_with("/chat/completions") {
            base.to_owned()
        } else {
            format!("{base}/chat/completions")
        }
    }
}

/// A chat-completions client.
#[derive(Debug)]
pub struct Llm {
    config: LlmConfig,
    client: reqwest::Client,
}

/// The answer of [`Llm::complete`]: the message's content, or the error,
/// with the number of HTTP calls made either way.
#[derive(Debug)]
pub struct Completion {
    pub content: Result<String, ResolveError>,
    pub calls: u32,
}

/// One call's outcome before the retry decision.
enum Attempt {
    Done(Result<String, ResolveError>),
    Retry(String),
}

impl Llm {
    pub fn new(config: LlmConfig, client: reqwest::Client) -> Llm {
        Llm { config, client }
    }

    /// Sends `messages` (system, user, …) and returns the reply's content,
    /// retrying 429, 5xx and time-outs twice with the configured back-off.
    pub async fn complete(&self, messages: &[Json]) -> Completion {
        let body = json!({
            "model": self.config.model,
            "messages": messages,
            "temperature": 0,
        });
        let mut calls = 0;
        let mut last = String::new();
        for attempt in 0..=self.config.backoff.len() {
            if attempt > 0 {
                tracing::debug!(attempt, reason = %last, "retrying the LLM call");
                tokio::time::sleep(self.config.backoff[attempt - 1]).await;
            }
            calls += 1;
            match self.attempt(&body).await {
                Attempt::Done(content) => return Completion { content, calls },
                Attempt::Retry(why) => last = why,
            }
        }
        Completion {
            content: Err(ResolveError::new(
                Code::LlmUnavailable,
                format!("the LLM at {URL_VAR}={} failed {calls} times: {last}", self.config.endpoint()),
                "The endpoint is overloaded or failing: retry later, raise KIP_LLM_TIMEOUT_MS if it is slow, or supply dynamic_params in the request.",
            )
            .with_data("setting", URL_VAR)
            .with_data("calls", calls)),
            calls,
        }
    }

    async fn attempt(&self, body: &Json) -> Attempt {
        let endpoint = self.config.endpoint();
        let mut request = self
            .client
            .post(&endpoint)
            .timeout(self.config.timeout)
            .json(body);
        if let Some(key) = &self.config.api_key {
            request = request.bearer_auth(key);
        }
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return Attempt::Retry(format!(
                    "no answer within {} ms",
                    self.config.timeout.as_millis()
                ));
            }
            Err(e) => {
                return Attempt::Done(Err(misconfigured(
                    URL_VAR,
                    format!(
                        "the LLM endpoint {URL_VAR}={endpoint} cannot be reached: {}",
                        error_chain(&e)
                    ),
                    "Check KIP_LLM_URL (scheme, host, port) and that the service runs; or unset it and supply dynamic_params in the request.",
                )));
            }
        };
        let status = response.status();
        let text = match response.text().await {
            Ok(t) => t,
            Err(e) if e.is_timeout() => {
                return Attempt::Retry(format!(
                    "no answer within {} ms",
                    self.config.timeout.as_millis()
                ));
            }
            Err(e) => return Attempt::Retry(format!("the answer broke off: {e}")),
        };
        if status.as_u16() == 429 || status.is_server_error() {
            return Attempt::Retry(format!("HTTP {status}: {}", clip(&text)));
        }
        if !status.is_success() {
            let (setting, hint) = match status.as_u16() {
                401 | 403 => (KEY_VAR, "Check KIP_LLM_API_KEY: the endpoint refused it."),
                404 => (
                    URL_VAR,
                    "Check KIP_LLM_URL (the API base, e.g. …/v1) and KIP_LLM_MODEL.",
                ),
                _ => (
                    MODEL_VAR,
                    "Check KIP_LLM_MODEL and KIP_LLM_URL: the endpoint refused the request.",
                ),
            };
            return Attempt::Done(Err(misconfigured(
                setting,
                format!(
                    "the LLM endpoint {endpoint} answered HTTP {status}: {}",
                    clip(&text)
                ),
                hint,
            )
            .with_data("status", status.as_u16())));
        }
        let content = serde_json::from_str::<Json>(&text).ok().and_then(|v| {
            v.pointer("/choices/0/message/content")
                .and_then(Json::as_str)
                .map(str::to_owned)
        });
        Attempt::Done(content.ok_or_else(|| {
            misconfigured(
                URL_VAR,
                format!("{endpoint} did not answer with a chat completion: {}", clip(&text)),
                "KIP_LLM_URL must be an OpenAI-compatible API (POST …/chat/completions answering {choices: [{message: {content}}]}).",
            )
        }))
    }
}

/// An error with its causes (reqwest's own message is terse).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// At most 300 characters of a body, for messages.
pub fn clip(text: &str) -> String {
    let mut out: String = text.chars().take(300).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

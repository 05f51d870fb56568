//! Test servers on loopback, started by the tests themselves (never the
//! internet): a fake OpenAI-compatible LLM that answers scripted
//! completions per property and records every call, and the medical
//! example's interactions service (the `interaction_check` operator).
//! Also used by the end-to-end tests of the faces (`tests/logic.rs`).

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value as Json, json};

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// 200 with this message content.
    Content(String),
    /// This HTTP status with an error body.
    Status(u16),
    /// The content after a delay.
    Slow(Duration, String),
}

impl Reply {
    pub fn json(v: Json) -> Reply {
        Reply::Content(v.to_string())
    }
}

/// A recorded call: the property it was about and when it arrived.
#[derive(Clone, Debug)]
pub struct Call {
    pub property: String,
    pub at: Instant,
    pub messages: usize,
}

#[derive(Default)]
struct LlmState {
    script: Mutex<HashMap<String, VecDeque<Reply>>>,
    calls: Mutex<Vec<Call>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

/// The fake LLM.
#[derive(Clone)]
pub struct FakeLlm {
    pub addr: SocketAddr,
    state: Arc<LlmState>,
}

impl FakeLlm {
    /// Its API base (`http://127.0.0.1:<port>/v1`).
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Scripts the answers for `property`, in order; the last one repeats.
    pub fn script(&self, property: &str, replies: Vec<Reply>) {
        self.state
            .script
            .lock()
            .expect("script")
            .insert(property.to_owned(), replies.into());
    }

    pub fn calls(&self) -> Vec<Call> {
        self.state.calls.lock().expect("calls").clone()
    }

    pub fn calls_for(&self, property: &str) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| c.property == property)
            .collect()
    }

    pub fn max_in_flight(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }
}

/// The property a prompt is about (the user message names it).
fn property_of(body: &Json) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    messages
        .iter()
        .filter_map(|m| m["content"].as_str())
        .find_map(|c| {
            let rest = c
                .split("Generate dynamic_params for the property \"")
                .nth(1)?;
            Some(rest.split('"').next()?.to_owned())
        })
        .unwrap_or_default()
}

async fn complete(State(state): State<Arc<LlmState>>, body: axum::Json<Json>) -> Response {
    let property = property_of(&body);
    state.calls.lock().expect("calls").push(Call {
        property: property.clone(),
        at: Instant::now(),
        messages: body["messages"].as_array().map_or(0, Vec::len),
    });
    let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let reply = {
        let mut script = state.script.lock().expect("script");
        let queue = script.entry(property).or_default();
        if queue.len() > 1 {
            queue.pop_front()
        } else {
            queue.front().cloned()
        }
    };
    // Every answer takes a little time, so that concurrent calls overlap.
    tokio::time::sleep(Duration::from_millis(30)).await;
    let response = match reply {
        None => (StatusCode::BAD_REQUEST, "no script for this property").into_response(),
        Some(Reply::Status(code)) => (
            StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            axum::Json(json!({"error": {"message": "scripted failure"}})),
        )
            .into_response(),
        Some(Reply::Content(content)) => chat(&content),
        Some(Reply::Slow(delay, content)) => {
            tokio::time::sleep(delay).await;
            chat(&content)
        }
    };
    state.in_flight.fetch_sub(1, Ordering::SeqCst);
    response
}

fn chat(content: &str) -> Response {
    axum::Json(json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }))
    .into_response()
}

/// Starts the fake LLM on an ephemeral loopback port.
pub async fn fake_llm() -> FakeLlm {
    let state = Arc::new(LlmState::default());
    let app = Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state(state.clone());
    let addr = serve(app).await;
    FakeLlm { addr, state }
}

async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

// ------------------------------------------------------------ the operator

/// The example interactions service: how risky it is to take each drug with
/// `other_drug`. Refuses requests without the seed's headers.
pub struct Interactions {
    pub addr: SocketAddr,
    calls: Arc<AtomicUsize>,
    /// Answer every request with this status instead (to test failures).
    pub fail_with: Option<u16>,
}

impl Interactions {
    pub fn url(&self) -> String {
        format!("http://{}/interactions", self.addr)
    }

    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

fn risk(a: &str, b: &str) -> &'static str {
    let nsaids = ["Aspirin", "Ibuprofen", "Mefenamic Acid"];
    if a == b {
        "none"
    } else if nsaids.contains(&a) && nsaids.contains(&b) {
        "high"
    } else if [a, b]
        .iter()
        .any(|d| ["Paracetamol", "Vitamin C"].contains(d))
    {
        "low"
    } else {
        "unknown"
    }
}

async fn interactions(
    State((calls, fail)): State<(Arc<AtomicUsize>, Option<u16>)>,
    headers: HeaderMap,
    body: axum::Json<Json>,
) -> Response {
    calls.fetch_add(1, Ordering::SeqCst);
    if let Some(code) = fail {
        return (
            StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            "the interactions database is down",
        )
            .into_response();
    }
    let header = |n: &str| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    if header("x-http-method-override") != "GET"
        || header("x-account-id").is_empty()
        || header("x-account-type").is_empty()
    {
        return (
            StatusCode::BAD_REQUEST,
            "missing the x-http-method-override, x-account-id or x-account-type header",
        )
            .into_response();
    }
    let Some(other) = body["dynamic_params"]["interaction_check"]["other_drug"].as_str() else {
        return (
            StatusCode::BAD_REQUEST,
            "dynamic_params.interaction_check.other_drug is required",
        )
            .into_response();
    };
    let ids = body["unique_identities"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let per = body["instance_params"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let datas: Vec<Json> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let name = id["name"].as_str().unwrap_or_default();
            json!({"interaction_check": {
                "with": other,
                "risk": risk(name, other),
                "formula": per.get(i).map_or(Json::Null, |p| p["formula"].clone()),
                "source": per.get(i).map_or(Json::Null, |p| p["source"].clone()),
            }})
        })
        .collect();
    axum::Json(json!({"datas": datas})).into_response()
}

/// Starts the interactions service on an ephemeral loopback port.
pub async fn interactions_service(fail_with: Option<u16>) -> Interactions {
    let calls = Arc::new(AtomicUsize::new(0));
    let app = Router::new()
        .route("/interactions", post(interactions))
        .with_state((calls.clone(), fail_with));
    let addr = serve(app).await;
    Interactions {
        addr,
        calls,
        fail_with,
    }
}

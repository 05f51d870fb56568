//! Safe retries (BRIEF §5): a write sent with an idempotency key is applied
//! once. A repeat with the same key and the same request answers the first
//! response without applying again; the same key with another request is
//! refused. Keys live in the nexus's host-state table (`idempotency/<key>`),
//! so they survive restarts and every process on the nexus shares them,
//! for [`keep_for`] (24 hours unless `KIP_IDEMPOTENCY_HOURS` says otherwise).
//!
//! The key is claimed before the request runs, in a write transaction of
//! its own ([`kip_nexus::Nexus::claim_state`]), so a retry that arrives
//! while the first attempt still waits for the writer never applies the
//! request a second time: it waits for the first attempt's answer. A
//! request that fails changes nothing (every KIP write is atomic), so its
//! key is released and a retry runs it again.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value as Json, json};

use crate::error::{ApiError, ErrorCode};
use crate::{Api, ExecuteRequest};

/// The host-state prefix of the keys.
const PREFIX: &str = "idempotency/";
/// The longest key accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 200;
/// The environment variable that sets how long keys are kept, in hours.
pub const KEEP_VAR: &str = "KIP_IDEMPOTENCY_HOURS";
/// How long a retry waits for a first attempt that is still running.
const WAIT_FOR_FIRST: Duration = Duration::from_secs(30);

/// How long a key is kept: `KIP_IDEMPOTENCY_HOURS`, else 24 hours.
pub fn keep_for() -> Duration {
    let hours = std::env::var(KEEP_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(24);
    Duration::from_secs(hours.saturating_mul(3600))
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn refused(message: String, hint: &str) -> ApiError {
    ApiError::new(ErrorCode::BadRequest, message, hint)
}

impl Api {
    /// `execute_kip` applied at most once per `key` (see the module).
    pub fn execute_once(&self, request: ExecuteRequest, key: &str) -> Result<Json, ApiError> {
        // A read-only host writes nothing, the key's memory included; what
        // it runs (reads) is safe to repeat anyway.
        if self.read_only {
            return Ok(self.execute(request));
        }
        if key.is_empty() || key.len() > MAX_KEY_BYTES || key.chars().any(char::is_control) {
            return Err(refused(
                format!(
                    "an idempotency key must hold 1 to {MAX_KEY_BYTES} bytes and no control characters"
                ),
                "Send a unique string per logical write, e.g. a UUID, and the same one when you retry it.",
            ));
        }
        let state_key = format!("{PREFIX}{key}");
        let fingerprint = kip_capsule::content_hash(
            serde_json::to_string(&request)
                .unwrap_or_default()
                .as_bytes(),
        );
        let claim = json!({"request": fingerprint, "at": now_secs(), "done": false});
        let held = match self.nexus.claim_state(&state_key, &claim)? {
            // Kept past its time: forgotten, then claimed afresh.
            Some(held) if expired(&held) => {
                self.nexus.remove_state(&state_key)?;
                self.nexus.claim_state(&state_key, &claim)?
            }
            other => other,
        };
        let Some(mut held) = held else {
            return self.execute_claimed(request, &state_key, &fingerprint);
        };
        if held["request"] != json!(fingerprint) {
            return Err(refused(
                format!("the idempotency key `{key}` was used for another request"),
                "Use a new key for a new request; reuse a key only to retry the very same request.",
            ));
        }
        // The first attempt may still be running (waiting for the writer):
        // its answer is this one's.
        let deadline = std::time::Instant::now() + WAIT_FOR_FIRST;
        while held["done"] != json!(true) {
            if std::time::Instant::now() >= deadline {
                return Err(ApiError::new(
                    ErrorCode::Kip(crate::KipCode::ExecutionTimeout),
                    format!("the first request with the idempotency key `{key}` has not finished"),
                    "Retry later with the same key; `kip trace list` shows whether the write was applied.",
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
            match self.nexus.state(&state_key)? {
                Some(h) => held = h,
                // Released: the first attempt failed and changed nothing.
                None => return self.execute_once(request, key),
            }
        }
        Ok(held["response"].clone())
    }

    /// [`Api::call`], with an idempotency key for the operations that take
    /// one (`execute`): what a transport calls when the request named a key.
    pub fn call_keyed(
        &self,
        operation: crate::Operation,
        body: Json,
        key: Option<&str>,
    ) -> Result<Json, ApiError> {
        match (operation, key) {
            (crate::Operation::Execute, Some(key)) => {
                self.execute_once(crate::parse(operation.name(), body)?, key)
            }
            _ => self.call(operation, body),
        }
    }

    fn execute_claimed(
        &self,
        request: ExecuteRequest,
        state_key: &str,
        fingerprint: &str,
    ) -> Result<Json, ApiError> {
        let batch = request.commands.is_some();
        let response = self.execute(request);
        if crate::response_failed(&response, batch) {
            // Nothing was applied: a retry may run it again.
            self.nexus.remove_state(state_key)?;
        } else {
            self.nexus.set_state(
                state_key,
                &json!({"request": fingerprint, "at": now_secs(), "done": true, "response": response}),
            )?;
        }
        Ok(response)
    }

    /// Forgets the keys kept past [`keep_for`] (a host's chore).
    pub fn forget_expired_idempotency_keys(&self) -> Result<usize, ApiError> {
        if self.read_only {
            return Ok(0);
        }
        let mut forgotten = 0;
        for (key, held) in self.nexus.states_with_prefix(PREFIX)? {
            if expired(&held) && self.nexus.remove_state(&key)? {
                forgotten += 1;
            }
        }
        Ok(forgotten)
    }
}

fn expired(held: &Json) -> bool {
    let at = held["at"].as_u64().unwrap_or(0);
    now_secs().saturating_sub(at) > keep_for().as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api() -> (tempfile::TempDir, Api) {
        let dir = tempfile::tempdir().expect("tempdir");
        let api = Api::open(dir.path(), "test").expect("open");
        (dir, api)
    }

    /// A domain with a `visits` counter at 0, and the write that adds one.
    fn counter(api: &Api) -> ExecuteRequest {
        api.execute(ExecuteRequest::command(
            r#"UPSERT { CONCEPT ?d { {type: "Domain", name: "Retry"} SET ATTRIBUTES { visits: 0 } } }"#,
        ));
        ExecuteRequest::command(
            r#"UPDATE ?d SET ATTRIBUTES { visits: ADD(?d.attributes.visits, 1) } WHERE { ?d {type: "Domain", name: "Retry"} }"#,
        )
    }

    fn count(api: &Api) -> Json {
        api.execute(ExecuteRequest::command(
            r#"FIND(?d.attributes.visits) WHERE { ?d {type: "Domain", name: "Retry"} }"#,
        ))["result"]
            .clone()
    }

    #[test]
    fn a_retried_write_with_the_same_key_applies_once_and_answers_the_first_response() {
        let (_dir, api) = api();
        let add = counter(&api);
        let first = api.execute_once(add.clone(), "k-1").expect("first");
        let again = api.execute_once(add.clone(), "k-1").expect("retry");
        assert_eq!(first, again);
        assert_eq!(count(&api), json!([1]), "{first}");
        // Another key applies again; the same key with another request is refused.
        api.execute_once(add, "k-2").expect("second key");
        assert_eq!(count(&api), json!([2]));
        let other = ExecuteRequest::command("DESCRIBE PRIMER");
        let e = api.execute_once(other, "k-1").expect_err("another request");
        assert_eq!(e.code, ErrorCode::BadRequest);
        assert!(e.message.contains("k-1"), "{}", e.message);
    }

    #[test]
    fn a_failed_write_releases_its_key_and_bad_keys_are_refused() {
        let (_dir, api) = api();
        let bad = ExecuteRequest::command(r#"UPSERT { CONCEPT ?x { {type: "Nope", name: "x"} } }"#);
        let r = api.execute_once(bad.clone(), "k").expect("answered");
        assert!(r.get("error").is_some(), "{r}");
        assert!(api.nexus.state("idempotency/k").expect("state").is_none());
        for key in ["", "a\nb", &"k".repeat(MAX_KEY_BYTES + 1)] {
            assert!(api.execute_once(bad.clone(), key).is_err(), "{key:?}");
        }
    }

    #[test]
    fn concurrent_attempts_with_one_key_apply_once() {
        let (_dir, api) = api();
        let add = counter(&api);
        let answers: Vec<Json> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let (api, add) = (api.clone(), add.clone());
                    s.spawn(move || api.execute_once(add, "same").expect("answered"))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .collect()
        });
        assert_eq!(count(&api), json!([1]));
        assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:?}");
    }
}

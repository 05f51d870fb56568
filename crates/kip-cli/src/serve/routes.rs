//! The routes of `kip serve` onto `kip_api::Api`: `/api/<operation>` and
//! the extra routes the operations table names, `POST /api/kip` and the
//! `{method, params}` envelope of `POST /kip`, the resolver's seed path,
//! the bearer-token check, body limits, and the one mapping from an
//! `ErrorCode` to an HTTP status.

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, RawPathParams, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::MethodRouter;
use kip_api::{Api, ApiError, ErrorCode, KipCode, Operation};

use crate::runtime::blocking;
use serde::Deserialize;
use serde_json::{Value as Json, json};

use super::AppState;

/// The extra routes the operations table names (BRIEF §5's trace paths,
/// such as `GET /api/trace` and `POST /api/trace/revert`), grouped by path
/// so one path may answer a `GET` and a `POST`.
pub(super) fn operation_routes(router: Router<AppState>) -> Router<AppState> {
    let mut paths: std::collections::BTreeMap<&str, MethodRouter<AppState>> =
        std::collections::BTreeMap::new();
    for &op in Operation::ALL {
        let Some(route) = op.route() else {
            continue;
        };
        let methods = paths.remove(route.path).unwrap_or_default();
        let methods = if route.get {
            methods.get(
                move |State(state): State<AppState>,
                      headers: HeaderMap,
                      params: RawPathParams,
                      Query(query): Query<std::collections::BTreeMap<String, String>>| async move {
                    let pairs = params
                        .iter()
                        .map(|(k, v)| (k.to_owned(), v.to_owned()))
                        .chain(query);
                    match query_body(op, pairs) {
                        Ok(body) => answer(named_by(state.api, &headers), op, body).await,
                        Err(e) => error_response(&e),
                    }
                },
            )
        } else {
            methods.post(
                move |State(state): State<AppState>,
                      headers: HeaderMap,
                      body: Result<Bytes, BytesRejection>| async move {
                    match read_body(body) {
                        Ok(body) => {
                            let key = idempotency_key(&headers);
                            call(named_by(state.api, &headers), op, op.name(), body, key).await
                        }
                        Err(r) => r,
                    }
                },
            )
        };
        paths.insert(route.path, methods);
    }
    paths.into_iter().fold(router, |router, (path, methods)| {
        router.route(path, methods)
    })
}

/// A `GET`'s body: its path and query parameters as the operation's fields,
/// numbers where the operation's [`kip_api::Query`] says so (`access_token`
/// is the guard's, not a field).
fn query_body(
    op: Operation,
    pairs: impl IntoIterator<Item = (String, String)>,
) -> Result<Json, ApiError> {
    let numbers = op.query().map(|q| q.numbers).unwrap_or_default();
    let mut body = serde_json::Map::new();
    for (key, value) in pairs {
        if key == "access_token" {
            continue;
        }
        let value = if numbers.contains(&key.as_str()) {
            match value.parse::<u64>() {
                Ok(n) => json!(n),
                Err(_) => {
                    return Err(ApiError::bad_request(
                        op.name(),
                        format!("`{key}` must be a whole number, found `{value}`"),
                    ));
                }
            }
        } else {
            json!(value)
        };
        body.insert(key, value);
    }
    Ok(if body.is_empty() {
        Json::Null
    } else {
        Json::Object(body)
    })
}

/// The operation's answer as an HTTP response.
async fn answer(api: Api, operation: Operation, body: Json) -> Response {
    match blocking(api, move |api| api.call(operation, body)).await {
        Ok(answer) => axum::Json(answer).into_response(),
        Err(e) => error_response(&e),
    }
}

fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorCode::UnknownOperation | ErrorCode::Kip(KipCode::NotFound) => StatusCode::NOT_FOUND,
        ErrorCode::Kip(KipCode::ImmutableTarget) => StatusCode::FORBIDDEN,
        ErrorCode::Kip(
            KipCode::ExecutionTimeout | KipCode::ResourceExhausted | KipCode::InternalError,
        )
        | ErrorCode::Io => StatusCode::INTERNAL_SERVER_ERROR,
        // The resolver: what to ask the user for, and the services it calls.
        ErrorCode::MissingInputParams => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorCode::LlmUnavailable | ErrorCode::LlmInvalidOutput | ErrorCode::OperatorFailed => {
            StatusCode::BAD_GATEWAY
        }
        // Every other KIP code (syntax, schema, values, references,
        // uniqueness — and any code KIP adds later) is the client's mistake.
        ErrorCode::BadRequest | ErrorCode::Kip(_) => StatusCode::BAD_REQUEST,
    }
}

/// The answer to a body above `limit` bytes: 413, in KIP's error shape.
fn too_large(limit: usize, found: Option<u64>) -> Response {
    let e = ApiError::new(
        ErrorCode::Kip(KipCode::ResourceExhausted),
        match found {
            Some(n) => format!(
                "the request body of {n} bytes is larger than this server's limit of {limit} bytes"
            ),
            None => format!("the request body is larger than this server's limit of {limit} bytes"),
        },
        "Split the import into smaller files, or start `kip serve` with a larger --max-body-mib.",
    )
    .with_data("limit", json!(limit));
    (StatusCode::PAYLOAD_TOO_LARGE, axum::Json(e.to_response())).into_response()
}

/// Refuses a body whose `Content-Length` is above the limit before reading
/// any of it (a chunked body is cut off by the extractors' limit instead).
pub(super) async fn refuse_large_bodies(
    State(limit): State<usize>,
    request: Request,
    next: Next,
) -> Response {
    let length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match length {
        Some(n) if n > limit as u64 => too_large(limit, Some(n)),
        _ => next.run(request).await,
    }
}

/// The body, or the answer to a body that could not be read (too large).
fn read_body(body: Result<Bytes, BytesRejection>) -> Result<Bytes, Response> {
    body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            too_large(MAX_BODY.get().copied().unwrap_or(0), None)
        } else {
            error_response(&ApiError::bad_request(
                "the request",
                format!("the body cannot be read: {rejection}"),
            ))
        }
    })
}

/// The limit in force, for the messages of [`read_body`].
pub(super) static MAX_BODY: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

fn error_response(e: &ApiError) -> Response {
    (status_of(e.code), axum::Json(e.to_response())).into_response()
}

/// `POST /api/kn/logic-property-resolver`: the seed's path and shapes.
pub(super) async fn resolve_logic_properties(
    State(state): State<AppState>,
    body: Bytes,
) -> Response {
    let body = match json_body("resolve_logic_properties", &body) {
        Ok(b) => b,
        Err(e) => return error_response(&e),
    };
    let outcome = crate::runtime::off_runtime(state.api, move |api| {
        api.resolve_logic_properties_json(body)
    })
    .await;
    match outcome {
        Ok(Ok(answer)) => axum::Json(answer).into_response(),
        Ok(Err(error)) => {
            let code = error["error_code"]
                .as_str()
                .and_then(ErrorCode::from_wire)
                .unwrap_or(ErrorCode::Kip(KipCode::InternalError));
            (status_of(code), axum::Json(error)).into_response()
        }
        Err(e) => error_response(&e),
    }
}

fn json_body(operation: &str, body: &Bytes) -> Result<Json, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Json::Null);
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(operation, format!("the body is not JSON: {e}")))
}

/// Bearer-token check on every API route (when a token is configured).
pub(super) async fn authorize(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = &state.token else {
        return next.run(request).await;
    };
    let from_header = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let from_query = request.uri().query().and_then(|q| {
        q.split('&')
            .find_map(|pair| pair.strip_prefix("access_token="))
            .map(str::to_owned)
    });
    let presented = from_header.or(from_query).unwrap_or_default();
    if token_matches(expected, &presented) {
        return next.run(request).await;
    }
    let e = ApiError::new(
        ErrorCode::Unauthorized,
        "a valid bearer token is required",
        "Send `Authorization: Bearer <token>` with the token `kip serve` was started with (or `?access_token=<token>` for server-sent events).",
    );
    let mut response = error_response(&e);
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    response
}

/// Compares in time independent of where the texts differ, so the token
/// cannot be guessed byte by byte from response times.
fn token_matches(expected: &str, presented: &str) -> bool {
    use subtle::ConstantTimeEq as _;
    expected.as_bytes().ct_eq(presented.as_bytes()).into()
}

pub(super) async fn execute_kip(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match read_body(body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let key = idempotency_key(&headers);
    let api = named_by(state.api, &headers);
    call(api, Operation::Execute, "execute_kip", body, key).await
}

/// The header that makes a write safe to retry (BRIEF §5): a repeat with
/// the same key and request answers the first response, applied once.
const IDEMPOTENCY_HEADER: &str = "idempotency-key";

fn idempotency_key(headers: &HeaderMap) -> Option<String> {
    headers
        .get(IDEMPOTENCY_HEADER)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// The header that names who acts, for the cognitive trace (BRIEF §7).
const ORIGINATOR_HEADER: &str = "x-kip-originator";

/// The API naming the request's `X-KIP-Originator` (else the host's
/// originator, `http`); `--originator` overrides both.
fn named_by(api: Api, headers: &HeaderMap) -> Api {
    if crate::db::originator_override().is_some() {
        return api;
    }
    match headers
        .get(ORIGINATOR_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
    {
        Some(name) => api.with_originator(name),
        None => api,
    }
}

async fn call(
    api: Api,
    operation: Operation,
    name: &'static str,
    body: Bytes,
    key: Option<String>,
) -> Response {
    let body = match json_body(name, &body) {
        Ok(b) => b,
        Err(e) => return error_response(&e),
    };
    match blocking(api, move |api| {
        api.call_keyed(operation, body, key.as_deref())
    })
    .await
    {
        Ok(answer) => axum::Json(answer).into_response(),
        Err(e) => error_response(&e),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MethodCall {
    method: String,
    #[serde(default)]
    params: Json,
}

/// `POST /kip`: the `{method, params}` envelope of existing KIP clients.
pub(super) async fn kip_method(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match read_body(body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let parsed: Result<MethodCall, ApiError> = json_body("kip", &body)
        .and_then(|b| serde_json::from_value(b).map_err(|e| ApiError::bad_request("kip", e)));
    let call_ = match parsed {
        Ok(c) => c,
        Err(e) => return error_response(&e),
    };
    let operation = match call_.method.as_str() {
        "execute_kip" => Operation::Execute,
        "execute_kip_readonly" => Operation::ExecuteReadonly,
        "list_logs" => Operation::ListLogs,
        other => {
            let e = ApiError::new(
                ErrorCode::UnknownOperation,
                format!("unknown method `{other}`"),
                "Use `execute_kip`, `execute_kip_readonly` or `list_logs`.",
            );
            return error_response(&e);
        }
    };
    let key = idempotency_key(&headers);
    let api = named_by(state.api, &headers);
    match blocking(api, move |api| {
        api.call_keyed(operation, call_.params, key.as_deref())
    })
    .await
    {
        Ok(answer) => axum::Json(answer).into_response(),
        Err(e) => error_response(&e),
    }
}

fn operation_named(name: &str) -> Result<Operation, ApiError> {
    Operation::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Operation::ALL.iter().map(|o| o.name()).collect();
        ApiError::new(
            ErrorCode::UnknownOperation,
            format!("there is no operation `{name}`"),
            format!("Use one of: {}.", names.join(", ")),
        )
    })
}

pub(super) async fn operation_post(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match read_body(body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    match operation_named(&name) {
        Ok(op) => {
            let key = idempotency_key(&headers);
            call(named_by(state.api, &headers), op, op.name(), body, key).await
        }
        Err(e) => error_response(&e),
    }
}

/// `GET /api/<operation>` for the operations the table lets be read with a
/// `GET` (no body, or only scalars: `changes?since=N`).
pub(super) async fn operation_get(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    Query(query): Query<std::collections::BTreeMap<String, String>>,
) -> Response {
    let op = match operation_named(&name) {
        Ok(op) => op,
        Err(e) => return error_response(&e),
    };
    if op.query().is_none() {
        let e = ApiError::new(
            ErrorCode::BadRequest,
            format!("`{name}` takes a JSON body"),
            format!("Send `POST /api/{name}` with the request as JSON."),
        );
        return (StatusCode::METHOD_NOT_ALLOWED, axum::Json(e.to_response())).into_response();
    }
    match query_body(op, query) {
        Ok(body) => answer(named_by(state.api, &headers), op, body).await,
        Err(e) => error_response(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_by_content() {
        assert!(token_matches("s3cret", "s3cret"));
        assert!(!token_matches("s3cret", "s3cre"));
        assert!(!token_matches("s3cret", "s3creT"));
        assert!(!token_matches("s3cret", ""));
    }

    #[test]
    fn every_error_code_has_an_http_status() {
        for code in ErrorCode::ALL {
            let status = status_of(code);
            assert!(
                status.is_client_error() || status.is_server_error(),
                "{code}"
            );
        }
        assert_eq!(status_of(ErrorCode::Unauthorized), StatusCode::UNAUTHORIZED);
        assert_eq!(
            status_of(ErrorCode::Kip(KipCode::ImmutableTarget)),
            StatusCode::FORBIDDEN
        );
    }
}

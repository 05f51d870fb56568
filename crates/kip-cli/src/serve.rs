//! `kip serve`: the `kip-api` operations over HTTP, server-sent events for
//! changes, and the web UI's static files.
//!
//! Routes:
//! - `POST /api/kip` — body: `execute_kip` arguments; answer: the KIP
//!   response, HTTP 200 also when it carries a KIP error.
//! - `POST /kip` — `{"method": "execute_kip" | "execute_kip_readonly", "params": {…}}`,
//!   for existing KIP clients; answer: the KIP response.
//! - `POST /api/<operation>` — every [`kip_api::Operation`] by its wire
//!   name; `GET` (query parameters as fields) for those the operations
//!   table marks as readable so (`info`, `schema`, `changes?since=N`, …). Failures
//!   answer `{"error": {code, message, hint, data?}}` with a 4xx/5xx status.
//! - `POST /api/kn/logic-property-resolver` — seed 004's resolver (BRIEF
//!   §8): body `{kn_id, ot_id, query, unique_identities, properties,
//!   additional_context, dynamic_params?, now_ms?, options}`; answer
//!   `{datas, debug?}`, or the seed's error shape `{error_code, message,
//!   hint, missing?, trace_id, …}` with a 4xx/5xx status.
//! - The cognitive trace (BRIEF §7), the extra routes the operations table
//!   names for the `trace_*` operations: `GET /api/trace?originator=&type=&tag=&flag=&since=&until=&text=&element=&before=&after=&limit=`
//!   (`trace_list`: `{entries, next_before?, last_id}`, newest first; page
//!   on with `before=<next_before>`), `GET /api/trace/{id}` (`trace_entry`),
//!   `POST /api/trace` (`trace_add`), `POST /api/trace/revert`
//!   (`trace_revert`), `POST /api/trace/revert-to` (`trace_revert_to`: an
//!   element back as one of its entries left it), `POST /api/trace/flag` (`trace_flag`), `POST
//!   /api/trace/promote` (`trace_promote`). Every request may name who acts
//!   with `X-KIP-Originator` (else `http`); the server records its start
//!   and stop as SPACE `SpaceAcquire` / `SpaceRelease` entries.
//! - `GET /api/events` — server-sent events: `ready` once, then one
//!   `change` per change-log entry (`id:` is its sequence number, so a
//!   reconnecting `EventSource` resumes where it stopped), `reset` when the
//!   client fell too far behind.
//! - anything else — the web UI: built into the binary (`serve/ui.rs`), or a
//!   folder given with `--ui`.
//!
//! With `--capsules DIR` the server also watches a capsule folder, as the
//! desktop app does ([`kip_api::Api::watch_folder`]): `watch_status`
//! reports the folder and each file's status, the imports are written as
//! `kip-serve/watch` and reach browsers as `change` events like any other
//! write. The web UI reads `watch_status` again on every change notice.
//!
//! Changes are found by polling the nexus's change log, not by listening to
//! this process's own writes, so writes by other processes (`kip exec`, an
//! agent through `kip mcp`, the desktop app) reach the browser within one
//! poll interval.
//!
//! Security: loopback by default; any other address requires a token
//! (`--token-file FILE`, `KIP_SERVE_TOKEN`, or `--token`, which warns that
//! the process list shows it), checked on every API request in constant
//! time (`Authorization: Bearer`, or `?access_token=` for `EventSource`,
//! which cannot send headers) and never logged. Before that, every request
//! — API, events and web UI files alike — passes [`guard`]: a foreign
//! `Host` (DNS rebinding), a foreign `Origin`, a body that is not
//! `application/json` and a CORS preflight are refused unless
//! `--allow-host` / `--allow-origin` say otherwise, so no web page the
//! curator visits can read or write the nexus through their browser.
//! `--read-only` refuses every write with `KIP_3004`.
//!
//! This module only adapts HTTP to `kip_api::Api`; it holds no KIP logic.

mod guard;
mod ui;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, RawPathParams, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use kip_api::{Api, ApiError, ChangesRequest, ErrorCode, KipCode, Operation};

use crate::runtime::blocking;
use kip_capsule::{WatchEvent, Watcher};
use serde::Deserialize;
use serde_json::{Value as Json, json};
use tokio::sync::watch;

/// How often the change log is polled for writes by any process.
const POLL_INTERVAL: Duration = Duration::from_millis(200);
/// The largest request body by default, in MiB (an imported bundle can be
/// big); `--max-body-mib` changes it. A larger body is refused with 413 and
/// `KIP_4002` before it is read (by its `Content-Length`) or as soon as it
/// passes the limit (a chunked body).
pub const DEFAULT_MAX_BODY_MIB: usize = 64;

/// The environment variable that may hold the bearer token.
const TOKEN_VAR: &str = "KIP_SERVE_TOKEN";

/// Who may use `kip serve`: its token and the hosts and origins it accepts
/// beside its own (flattened into the subcommand's arguments).
#[derive(clap::Args)]
pub struct Access {
    /// Require `Authorization: Bearer TOKEN` on every API request. Other users of this machine can read command-line arguments in the process list: prefer --token-file or the KIP_SERVE_TOKEN environment variable.
    #[arg(long, value_name = "TOKEN", conflicts_with = "token_file")]
    pub token: Option<String>,
    /// Like --token, with the token read from the first line of FILE (surrounding whitespace trimmed).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Also accept requests from web pages of ORIGIN (scheme://host[:port], e.g. http://localhost:5173 for the UI's dev server), and answer their CORS preflights; repeatable. Requests that carry any other Origin than the server's own are refused (403).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
    /// Also answer requests addressed to the host name NAME, on any port (a LAN name, a reverse proxy); repeatable. Otherwise only localhost, loopback addresses and the bound address, with the bound port, are answered (421), which stops DNS rebinding. Bound to 0.0.0.0 or ::, every IP address is answered but a name only when listed here.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_hosts: Vec<String>,
}

impl std::fmt::Debug for Access {
    // The token never reaches a log or an error message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("token_file", &self.token_file)
            .field("allow_origins", &self.allow_origins)
            .field("allow_hosts", &self.allow_hosts)
            .finish()
    }
}

impl Access {
    /// The bearer token: `--token-file`, else `--token` (with a warning),
    /// else `KIP_SERVE_TOKEN`; empty means none.
    fn token(&self) -> anyhow::Result<Option<String>> {
        if let Some(file) = &self.token_file {
            return read_token_file(file).map(Some);
        }
        if let Some(token) = &self.token {
            tracing::warn!(
                "--token puts the token on the command line, where other users of this machine can read it in the process list; use --token-file FILE or the {TOKEN_VAR} environment variable instead"
            );
            return Ok(Some(token.clone()).filter(|t| !t.is_empty()));
        }
        Ok(std::env::var(TOKEN_VAR).ok().filter(|t| !t.is_empty()))
    }
}

/// The first line of `file`, trimmed; an error naming the file when it
/// cannot be read or holds no token.
fn read_token_file(file: &std::path::Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| anyhow::anyhow!("cannot read the token file {}: {e}", file.display()))?;
    let token = text.lines().next().unwrap_or_default().trim();
    if token.is_empty() {
        anyhow::bail!(
            "the token file {} is empty: its first line must hold the token",
            file.display()
        );
    }
    Ok(token.to_owned())
}

/// The options of `kip serve`.
#[derive(Debug)]
pub struct Options {
    pub addr: SocketAddr,
    pub read_only: bool,
    pub access: Access,
    /// The web UI's folder; `None` serves the UI built into the binary
    /// (see [`ui::Ui::choose`]).
    pub ui: Option<PathBuf>,
    /// The capsule folder to watch (created if missing); not with `read_only`.
    pub capsules: Option<PathBuf>,
    /// The largest request body, in bytes.
    pub max_body: usize,
}

#[derive(Clone)]
struct AppState {
    api: Api,
    token: Option<Arc<str>>,
    /// The last change sequence number seen by the poller.
    seq: watch::Receiver<u64>,
}

/// Runs the server until the process is stopped.
pub fn run(api: Api, options: Options) -> anyhow::Result<ExitCode> {
    let allowed = guard::Allowed::new(&options.access.allow_hosts, &options.access.allow_origins)?;
    let token = options.access.token()?;
    if !options.addr.ip().is_loopback() && token.is_none() {
        anyhow::bail!(
            "refusing to serve on {} without a token: any address other than loopback needs one, from `--token-file FILE`, the {TOKEN_VAR} environment variable or `--token TOKEN` (clients then send `Authorization: Bearer TOKEN`)",
            options.addr
        );
    }
    let api = api.read_only(options.read_only);
    // The browser's preferences (theme, panels) in this machine's config folder.
    let api = match kip_api::paths::prefs_file() {
        Some(file) => api.with_prefs(file),
        None => api,
    };
    // Watching lasts while `_watcher` lives: until the server stops.
    let (api, _watcher) = match &options.capsules {
        Some(dir) => watch_capsules(api, dir)?,
        None => (api, None),
    };
    let ui = ui::Ui::choose(options.ui);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(serve(
        api,
        options.addr,
        token,
        allowed,
        ui,
        options.max_body,
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Starts watching the capsule folder `dir` (creating it), logging each
/// file's outcome to standard error. A folder that cannot be watched is
/// logged and reported by `watch_status`; the server still starts, as the
/// desktop app does.
fn watch_capsules(api: Api, dir: &std::path::Path) -> anyhow::Result<(Api, Option<Watcher>)> {
    if api.is_read_only() {
        anyhow::bail!("`--capsules` imports into the nexus, which `--read-only` forbids");
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create the capsule folder {}: {e}", dir.display()))?;
    let (api, watcher) = api.watch_folder(dir, |event, _| log_watch_event(event));
    match &watcher {
        Some(w) => tracing::info!("watching the capsule folder {}", w.dir().display()),
        None => tracing::warn!(
            "not watching {}: {}",
            dir.display(),
            api.watch_status().note.unwrap_or_default()
        ),
    }
    Ok((api, watcher))
}

fn log_watch_event(event: &WatchEvent) {
    match event {
        WatchEvent::Imported { file, .. } => tracing::info!("imported {}", file.display()),
        WatchEvent::Failed { file, report } => tracing::warn!(
            "{} did not import ({} error{}; the watch_status operation lists them)",
            file.display(),
            report.errors.len(),
            if report.errors.len() == 1 { "" } else { "s" }
        ),
        WatchEvent::Removed { file } => tracing::info!("{} was removed", file.display()),
        WatchEvent::Ready { files } => {
            tracing::info!("the capsule folder's {files} file(s) are taken up")
        }
        WatchEvent::Error { message } => tracing::warn!("watching the capsule folder: {message}"),
        WatchEvent::Queued { .. }
        | WatchEvent::Importing { .. }
        | WatchEvent::Progress { .. }
        | WatchEvent::Unchanged { .. } => {}
    }
}

async fn serve(
    api: Api,
    addr: SocketAddr,
    token: Option<String>,
    allowed: guard::Allowed,
    ui: ui::Ui,
    max_body: usize,
) -> anyhow::Result<()> {
    let _ = MAX_BODY.set(max_body);
    // Bound first: the guard accepts the real port (not 0).
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr()?;
    let guard = Arc::new(guard::Guard::new(local.ip(), local.port(), allowed));

    let initial = blocking(api.clone(), |api| api.last_change_seq())
        .await
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let (tx, rx) = watch::channel(initial);
    // The change log's sequence number, published whenever it moves, and
    // the scheduled backup; they stop with the server.
    let _chores = api.start_chores(
        POLL_INTERVAL,
        move |_, _, current| {
            tx.send_if_modified(|last| {
                let moved = *last != current;
                *last = current;
                moved
            });
            current
        },
        |message| tracing::warn!("{message}"),
    )?;

    let state = AppState {
        api: api.clone(),
        token: token.map(Arc::from),
        seq: rx,
    };
    let guarded = Router::new()
        .route("/api/kip", post(execute_kip))
        .route("/kip", post(kip_method))
        .route(
            "/api/kn/logic-property-resolver",
            post(resolve_logic_properties),
        )
        .route("/api/events", get(events))
        .route("/api/{operation}", post(operation_post).get(operation_get));
    let guarded =
        operation_routes(guarded).layer(middleware::from_fn_with_state(state.clone(), authorize));
    let mut app = guarded.with_state(state);
    app = ui.serve(app);
    // Layered after the fallback, so the guard sees every request: the
    // API, the event stream and the web UI's files.
    let app = app
        .layer(axum::extract::DefaultBodyLimit::max(max_body))
        .layer(middleware::from_fn_with_state(
            max_body,
            refuse_large_bodies,
        ))
        .layer(middleware::from_fn_with_state(guard, guard::check));
    tracing::info!(
        "serving the nexus at {} on http://{local} ({}{})",
        api.path().display(),
        if api.is_read_only() {
            "read-only"
        } else {
            "read-write"
        },
        ui.describe()
    );
    // The one line on standard output: scripts and tests read the port from it.
    crate::out(&format!("listening on http://{local}\n"));
    let session = api.open_session(
        None,
        "The HTTP server opened the nexus.",
        "The HTTP server closed the nexus.",
        |message| tracing::warn!("{message}"),
    );
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await;
    drop(session);
    served?;
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM: the server then stops accepting and
/// records its release of the nexus.
async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}

/// The extra routes the operations table names (BRIEF §5's trace paths,
/// such as `GET /api/trace` and `POST /api/trace/revert`), grouped by path
/// so one path may answer a `GET` and a `POST`.
fn operation_routes(router: Router<AppState>) -> Router<AppState> {
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
                        Ok(body) => call(named_by(state.api, &headers), op, op.name(), body).await,
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
async fn refuse_large_bodies(State(limit): State<usize>, request: Request, next: Next) -> Response {
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
static MAX_BODY: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

fn error_response(e: &ApiError) -> Response {
    (status_of(e.code), axum::Json(e.to_response())).into_response()
}

/// `POST /api/kn/logic-property-resolver`: the seed's path and shapes.
async fn resolve_logic_properties(State(state): State<AppState>, body: Bytes) -> Response {
    let body = match json_body("resolve_logic_properties", &body) {
        Ok(b) => b,
        Err(e) => return error_response(&e),
    };
    let outcome =
        tokio::task::spawn_blocking(move || state.api.resolve_logic_properties_json(body)).await;
    match outcome {
        Ok(Ok(answer)) => axum::Json(answer).into_response(),
        Ok(Err(error)) => {
            let code = error["error_code"]
                .as_str()
                .and_then(ErrorCode::from_wire)
                .unwrap_or(ErrorCode::Kip(KipCode::InternalError));
            (status_of(code), axum::Json(error)).into_response()
        }
        Err(e) => error_response(&ApiError::new(
            ErrorCode::Kip(KipCode::InternalError),
            format!("the request failed: {e}"),
            "Retry; if it keeps failing, report it with the request that caused it.",
        )),
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
async fn authorize(State(state): State<AppState>, request: Request, next: Next) -> Response {
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

async fn execute_kip(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match read_body(body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let api = named_by(state.api, &headers);
    call(api, Operation::Execute, "execute_kip", body).await
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

async fn call(api: Api, operation: Operation, name: &'static str, body: Bytes) -> Response {
    let body = match json_body(name, &body) {
        Ok(b) => b,
        Err(e) => return error_response(&e),
    };
    match blocking(api, move |api| api.call(operation, body)).await {
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
async fn kip_method(
    State(state): State<AppState>,
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
        other => {
            let e = ApiError::new(
                ErrorCode::UnknownOperation,
                format!("unknown method `{other}`"),
                "Use `execute_kip` or `execute_kip_readonly`.",
            );
            return error_response(&e);
        }
    };
    match blocking(state.api, move |api| api.call(operation, call_.params)).await {
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

async fn operation_post(
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
        Ok(op) => call(named_by(state.api, &headers), op, op.name(), body).await,
        Err(e) => error_response(&e),
    }
}

/// `GET /api/<operation>` for the operations the table lets be read with a
/// `GET` (no body, or only scalars: `changes?since=N`).
async fn operation_get(
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

#[derive(Deserialize)]
struct EventsQuery {
    since: Option<u64>,
}

/// `GET /api/events`: change notifications as server-sent events.
async fn events(
    State(state): State<AppState>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Response {
    // A reconnecting EventSource sends the id of the last event it got.
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let current = *state.seq.borrow();
    let since = resume.or(query.since).unwrap_or(current);
    let stream = futures_util::stream::unfold(
        Feed {
            api: state.api,
            seq: state.seq,
            since,
            pending: std::collections::VecDeque::from([ready_event(since, current)]),
        },
        Feed::next,
    );
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

fn ready_event(since: u64, last_seq: u64) -> Event {
    Event::default()
        .event("ready")
        .data(json!({"since": since, "last_seq": last_seq}).to_string())
}

/// The state of one event stream.
struct Feed {
    api: Api,
    seq: watch::Receiver<u64>,
    since: u64,
    pending: std::collections::VecDeque<Event>,
}

impl Feed {
    async fn next(mut self) -> Option<(Result<Event, std::convert::Infallible>, Feed)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some((Ok(event), self));
            }
            // Catch up on what is already logged before waiting: the first
            // time through this also delivers what happened before the
            // client connected, from `since` on.
            if *self.seq.borrow_and_update() > self.since {
                self.fetch().await;
                if !self.pending.is_empty() {
                    continue;
                }
            }
            // The poller closed: the server is shutting down.
            self.seq.changed().await.ok()?;
        }
    }

    async fn fetch(&mut self) {
        let since = self.since;
        let request = ChangesRequest { since, limit: None };
        match blocking(self.api.clone(), move |api| api.changes(&request)).await {
            Ok(r) if r.reset => {
                self.since = r.last_seq;
                self.pending.push_back(
                    Event::default()
                        .event("reset")
                        .id(r.last_seq.to_string())
                        .data(json!({"last_seq": r.last_seq}).to_string()),
                );
            }
            Ok(r) => {
                for change in r.changes {
                    self.since = change.seq;
                    let data = serde_json::to_string(&change).unwrap_or_default();
                    self.pending.push_back(
                        Event::default()
                            .event("change")
                            .id(change.seq.to_string())
                            .data(data),
                    );
                }
            }
            Err(e) => tracing::warn!("reading the change log failed: {e}"),
        }
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

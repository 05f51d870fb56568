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

mod events;
mod guard;
mod routes;
mod ui;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::middleware::{self};
use axum::routing::{get, post};
use kip_api::Api;

use crate::runtime::blocking;
use events::events;
use kip_capsule::{WatchEvent, Watcher};
use routes::{
    MAX_BODY, authorize, execute_kip, kip_method, operation_get, operation_post, operation_routes,
    refuse_large_bodies, resolve_logic_properties,
};
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

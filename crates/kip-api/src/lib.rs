//! `kip-api`: the one transport-agnostic API every KIP Explorer host serves
//! — the desktop shell (Tauri commands), `kip serve` (HTTP) and `kip mcp`
//! (agents).
//!
//! An [`Api`] wraps a shared [`kip_nexus::Nexus`] with the identity its
//! host writes under ([`kip_nexus::Origin`], recorded in the change log) and
//! its access level (read-write, or read-only for agents and for
//! `kip serve --read-only`). Its operations ([`Operation`]) take and return
//! the serde types of [`types`]; [`Api::call`] dispatches an operation by
//! name on a JSON body, so a host only maps its transport onto that one
//! function. Errors are [`ApiError`]s with a closed [`ErrorCode`] set and
//! the wire shape of KIP's own error object.
//!
//! TypeScript declarations of every request and response type are
//! generated into `ui/src/transport/generated/kip-api.ts` by a test that
//! fails when the committed file is stale (`UPDATE_BINDINGS=1 cargo test -p
//! kip-api` rewrites it).
//!
//! This crate knows no transport: no HTTP, no MCP, no Tauri, no async
//! runtime. Every operation is a blocking call that finishes quickly
//! (reads are one LMDB snapshot; a write waits for the nexus's single
//! writer); async hosts run them on a blocking thread. The one exception in
//! duration is `resolve_logic_properties`, which may wait seconds for an
//! LLM or an operator's service: it calls `kip-logic`'s blocking entry
//! point, which runs its async work on a small runtime of its own.

#[cfg(all(test, feature = "ts"))]
mod bindings;
mod capsule;
mod changes;
mod contradictions;
mod error;
mod host;
mod idempotent;
mod local;
mod maintenance;
mod neighbourhood;
mod ops;
pub mod paths;
mod paths_between;
pub mod prefs;
mod profile;
mod promote;
mod queues;
mod recall;
pub use recall::RelatedRequest;
mod settings;
mod time_travel;
pub mod tools;
mod trace;
mod triage;
pub mod types;
mod validate;
mod watch;

use std::sync::{Arc, OnceLock};

use kip_nexus::{Access, Context, Nexus, Origin};
use serde::de::DeserializeOwned;
use serde_json::{Value as Json, json};

pub use changes::MAX_CHANGES_PER_REQUEST;
pub use contradictions::{
    ContradictionResolveRequest, ContradictionsRequest, DEFAULT_CONTRADICTIONS,
};
pub use error::{ApiError, ErrorCode, KipCode};
pub use host::{Chores, Log, Session, install_staged, opened_elsewhere, restore};
pub use idempotent::{
    KEEP_VAR as IDEMPOTENCY_KEEP_VAR, MAX_KEY_BYTES as MAX_IDEMPOTENCY_KEY_BYTES,
};
pub use kip_capsule::{ImportReport, KnowledgeSchema};
pub use kip_nexus::MAX_TRACE_PAGE;
pub use local::capsule_files;
pub use neighbourhood::{DEFAULT_PAGE, MAX_PAGE};
pub use ops::{Effect, NoBody, Operation, Query, Route};
pub use paths_between::{DEFAULT_MAX_HOPS, DEFAULT_PATHS, LINK_BUDGET, MAX_HOPS, MAX_PATHS};
pub use profile::{InstallProfileRequest, InstallProfileResponse, ProfileInfo, ProfilesResponse};
pub use promote::{
    INVOLVES, MAX_PROMOTED_ENTRIES, MAX_PROMOTED_LINKS, TracePromoteRequest, TracePromoteResponse,
};
pub use queues::{
    DEFAULT_DUPLICATES, DismissRequest, DismissResponse, DuplicatesRequest, DuplicatesResponse,
    HealthResponse, MAX_HUBS, SchemaMapRequest,
};
pub use time_travel::DiffRequest;
pub use trace::{
    LIST_LOGS_DEFAULT, LIST_LOGS_MAX, ListLogsRequest, ListLogsResponse, TraceAddRequest,
    TraceEntryRequest, TraceFlagRequest, TraceImportRequest, TraceImportResponse,
    TraceRevertRequest, TraceRevertToRequest, jsonl_line,
};
pub use types::*;
pub use validate::position;
pub use watch::WatchBoard;

/// The API of one host over one nexus. Cheap to clone; share it between
/// threads.
#[derive(Clone, Debug)]
pub struct Api {
    nexus: Arc<Nexus>,
    origin: Origin,
    /// Who the cognitive trace says acts through this API (see
    /// [`Api::with_originator`]); `None` names the origin.
    originator: Option<String>,
    /// Who the trace names for a watched folder's imports (see
    /// [`Api::with_watch_originator`]); `None`: `watcher`.
    watch_originator: Option<String>,
    /// The caller is an agent: its writes are flagged `Unverified`.
    agent: bool,
    read_only: bool,
    watch: Option<WatchBoard>,
    /// The host's preferences file (`prefs_get` / `prefs_put`); `None`: it keeps none.
    prefs: Option<std::path::PathBuf>,
    /// The logic-property resolver, made on first use (its LLM comes from
    /// the environment: `KIP_LLM_URL`, `KIP_LLM_MODEL`, `KIP_LLM_API_KEY`).
    resolver: Arc<OnceLock<kip_logic::Resolver>>,
}

impl Api {
    /// An API writing under `origin` (e.g. `kip-serve`, `kip-mcp`).
    pub fn new(nexus: Arc<Nexus>, origin: impl Into<String>) -> Api {
        Api {
            nexus,
            origin: Origin {
                name: origin.into(),
            },
            read_only: false,
            watch: None,
            prefs: None,
            resolver: Arc::new(OnceLock::new()),
            originator: None,
            watch_originator: None,
            agent: false,
        }
    }

    /// Answers `prefs_get` / `prefs_put` from `file` (see [`prefs`]).
    pub fn with_prefs(mut self, file: std::path::PathBuf) -> Api {
        self.prefs = Some(file);
        self
    }

    /// Names who acts, for the cognitive trace (BRIEF §7): an MCP client's
    /// `clientInfo.name`, the HTTP header `X-KIP-Originator`, `curator`,
    /// `watcher`, `cli`. Cheap: hosts call it per request.
    pub fn with_originator(mut self, originator: impl Into<String>) -> Api {
        self.originator = Some(originator.into());
        self
    }

    /// Names who the trace says imports a watched folder's files
    /// ([`Api::watch_folder`], [`Api::watch_events`]) instead of BRIEF §7's
    /// `watcher`: a host's explicit `--originator`.
    pub fn with_watch_originator(mut self, originator: impl Into<String>) -> Api {
        self.watch_originator = Some(originator.into());
        self
    }

    /// Marks the caller as an agent: its writes are flagged `Unverified`.
    pub fn as_agent(mut self, agent: bool) -> Api {
        self.agent = agent;
        self
    }

    /// Who the trace names for this API's requests.
    pub fn originator(&self) -> &str {
        self.originator.as_deref().unwrap_or(&self.origin.name)
    }

    /// Resolves logic properties with `resolver` instead of one made from
    /// the environment (tests, hosts with their own LLM settings).
    pub fn with_resolver(mut self, resolver: kip_logic::Resolver) -> Api {
        self.resolver = Arc::new(OnceLock::from(resolver));
        self
    }

    fn resolver(&self) -> &kip_logic::Resolver {
        self.resolver.get_or_init(|| {
            kip_logic::Resolver::from_env(self.nexus.clone())
                .with_account(self.origin.name.clone(), "app")
        })
    }

    /// `resolve_logic_properties` (BRIEF §8, seed 004): the type's logic
    /// properties computed for every instance, in one batch. Blocking: an
    /// LLM or an operator's service may take seconds, so async hosts call
    /// it on a blocking thread (never on a runtime's own thread). Reads
    /// only; allowed on read-only hosts.
    pub fn resolve_logic_properties(
        &self,
        request: ResolveRequest,
    ) -> Result<ResolveResponse, kip_logic::ResolveError> {
        // Recorded as a read (BRIEF §7): folded like KIP reads, so a
        // dashboard polling the same resolve costs one entry with a count.
        let text = format!(
            "RESOLVE {} ({}) FOR {} instance{}",
            request.ot_id,
            request.properties.join(", "),
            request.unique_identities.len(),
            if request.unique_identities.len() == 1 {
                ""
            } else {
                "s"
            },
        );
        let answer = self.resolver().resolve_blocking(request);
        let code = answer.as_ref().err().map(|e| e.code.as_str());
        self.nexus.trace_fold_read(self.originator(), &text, code);
        answer
    }

    /// [`Api::resolve_logic_properties`] on a JSON body, failing in the
    /// seed's shape (`{error_code, message, missing?, trace_id, …}`): what
    /// `POST /api/kn/logic-property-resolver` and the MCP tool answer.
    pub fn resolve_logic_properties_json(&self, body: Json) -> Result<Json, Json> {
        let request: ResolveRequest = serde_json::from_value(body).map_err(|e| {
            kip_logic::ResolveError::new(
                kip_logic::Code::BadRequest,
                format!("the body is not a resolve request: {e}"),
                "Send {\"ot_id\": \"<type>\", \"unique_identities\": [{\"name\": \"…\"}], \"properties\": [\"…\"], \"dynamic_params\"?: {…}, \"query\"?: \"…\", \"additional_context\"?: \"…\"}.",
            )
            .to_seed_json()
        })?;
        let answer = self
            .resolve_logic_properties(request)
            .map_err(|e| e.to_seed_json())?;
        to_json(&answer).map_err(|e| e.to_response())
    }

    /// Reports the watched capsule folder through `watch_status`; the host
    /// feeds the board with the watcher's events ([`WatchBoard::apply`]).
    pub fn with_watch(mut self, board: WatchBoard) -> Api {
        self.watch = Some(board);
        self
    }

    /// Makes every write refused (`KIP_3004`): KML in `execute`, and imports.
    pub fn read_only(mut self, read_only: bool) -> Api {
        self.read_only = read_only;
        self
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    pub fn origin(&self) -> &str {
        &self.origin.name
    }

    /// `execute_kip`: the KIP response (`{"result"…}` or `{"error"…}`). A
    /// KIP error is a normal response, not an `Err`. On a read-only host,
    /// KML is refused with `KIP_3004` before anything runs.
    pub fn execute(&self, request: ExecuteRequest) -> Json {
        let access = if self.read_only {
            Access::ReadOnly
        } else {
            Access::ReadWrite
        };
        self.nexus.execute(&request, &self.context(access))
    }

    /// `execute_kip_readonly`: KQL and META only, whatever the host allows.
    pub fn execute_readonly(&self, request: ExecuteRequest) -> Json {
        self.nexus
            .execute(&request, &self.context(Access::ReadOnly))
    }

    fn context(&self, access: Access) -> Context {
        Context {
            origin: self.origin.clone(),
            access,
            originator: self.originator.clone(),
            agent: self.agent,
        }
    }

    /// Every problem of an editor's text, with exact ranges.
    pub fn validate(&self, request: &ValidateRequest) -> ValidateResponse {
        validate::validate(&self.nexus, &self.origin, request)
    }

    /// `get_knowledge_schema`: `{full_bundle_schema, example_yaml}`.
    pub fn knowledge_schema(&self) -> Result<KnowledgeSchema, ApiError> {
        capsule::knowledge_schema(&self.nexus)
    }

    /// Imports one file's contents atomically and returns the import report
    /// (a failed import is a report with its errors, not an `Err`).
    pub fn import(&self, request: &ImportRequest) -> Result<ImportReport, ApiError> {
        let dry_run = request.dry_run.unwrap_or(false);
        if self.read_only && !dry_run {
            return Err(ApiError::read_only("importing"));
        }
        Ok(capsule::import_text(
            &self.nexus,
            request,
            dry_run,
            &self.origin,
            self.originator(),
        ))
    }

    /// The profiles this version offers and whether the nexus carries each.
    pub fn profiles(&self) -> Result<ProfilesResponse, ApiError> {
        profile::profiles(&self.nexus)
    }

    /// Installs a profile as any client's import (a dry run is allowed on a
    /// read-only host).
    pub fn install_profile(
        &self,
        request: &InstallProfileRequest,
    ) -> Result<InstallProfileResponse, ApiError> {
        if self.read_only && request.dry_run != Some(true) {
            return Err(ApiError::read_only("installing a profile"));
        }
        profile::install(&self.nexus, &self.origin, self.originator(), request)
    }

    /// An element's links counted by predicate, and one page of them.
    pub fn neighbourhood(
        &self,
        request: &NeighbourhoodRequest,
    ) -> Result<NeighbourhoodResponse, ApiError> {
        neighbourhood::neighbourhood(&self.nexus, request)
    }

    /// The shortest paths between two elements (bounded; see [`MAX_HOPS`],
    /// [`MAX_PATHS`], [`LINK_BUDGET`]).
    pub fn paths(&self, request: &PathsRequest) -> Result<PathsResponse, ApiError> {
        paths_between::paths(&self.nexus, request)
    }

    /// The settings clients keep with this nexus, by key.
    pub fn settings_get(&self, request: &SettingsGetRequest) -> Result<SettingsResponse, ApiError> {
        settings::get(&self.nexus, request)
    }

    fn prefs_file(&self) -> Result<&std::path::Path, ApiError> {
        self.prefs.as_deref().ok_or_else(|| {
            ApiError::new(
                ErrorCode::BadRequest,
                "this host keeps no preferences",
                "Keep them in the client (e.g. the browser's local storage).",
            )
        })
    }

    /// This machine's preferences, by key (see [`prefs`]).
    pub fn prefs_get(&self, request: &SettingsGetRequest) -> Result<SettingsResponse, ApiError> {
        Ok(prefs::get(self.prefs_file()?, request))
    }

    /// Stores one preference (`null` forgets it). Allowed on a read-only
    /// host: it writes the config folder, never the nexus.
    pub fn prefs_put(&self, request: &SettingsPutRequest) -> Result<SettingsResponse, ApiError> {
        prefs::put(self.prefs_file()?, request)
    }

    /// Stores one setting (`null` forgets it). Refused on a read-only host:
    /// it writes the nexus folder, though not its knowledge.
    pub fn settings_put(&self, request: &SettingsPutRequest) -> Result<SettingsResponse, ApiError> {
        self.gate(Operation::SettingsPut)?;
        settings::put(&self.nexus, request)
    }

    /// Change-log entries after `request.since`.
    pub fn changes(&self, request: &ChangesRequest) -> Result<ChangesResponse, ApiError> {
        changes::changes(&self.nexus, request)
    }

    /// The sequence number of the last committed change, by any process:
    /// the cheap poll a host runs on a timer.
    pub fn last_change_seq(&self) -> Result<u64, ApiError> {
        changes::last_change_seq(&self.nexus)
    }

    /// The canonical form of a KIP text, comments kept; a text that does
    /// not parse is a `KIP_1001` with its position.
    pub fn format(&self, request: &FormatRequest) -> Result<FormatResponse, ApiError> {
        let formatted = kip_lang::format_source(&request.text)
            .map_err(|errors| ApiError::from(errors.into_response_error()))?;
        Ok(FormatResponse {
            changed: formatted != request.text,
            formatted,
        })
    }

    /// The watched folder's files and their status (a host that watches no
    /// folder says so in `note`).
    pub fn watch_status(&self) -> WatchStatus {
        match &self.watch {
            Some(board) => board.status(),
            None => watch::unwatched(),
        }
    }

    /// `check_store`: the store's invariants, verified in one snapshot.
    pub fn check_store(&self) -> Result<StoreCheck, ApiError> {
        maintenance::check_store(&self.nexus)
    }

    /// `backup`: a consistent, compacted copy of the nexus into a new
    /// subfolder of `dest`, and/or the scheduled backup set or turned off.
    /// Refused on a read-only host (it writes files and the schedule).
    pub fn backup(&self, request: &BackupRequest) -> Result<BackupResponse, ApiError> {
        self.gate(Operation::Backup)?;
        maintenance::backup(&self.nexus, request)
    }

    /// A backup into exactly `dest/data.mdb` (the command line's `kip
    /// backup DEST`); an existing file there is refused.
    pub fn backup_to(&self, dest: &std::path::Path) -> Result<BackupDone, ApiError> {
        maintenance::backup_to(&self.nexus, dest)
    }

    /// The scheduled backup, if one is set.
    pub fn backup_schedule(&self) -> Result<Option<BackupSchedule>, ApiError> {
        maintenance::schedule(&self.nexus)
    }

    /// Runs the scheduled backup if it is due (hosts call this on a timer);
    /// `Ok(None)` when none is set or due, or on a read-only host.
    pub fn run_scheduled_backup(&self) -> Result<Option<BackupDone>, ApiError> {
        if self.read_only {
            return Ok(None);
        }
        maintenance::run_scheduled(&self.nexus)
    }

    /// What this host serves.
    pub fn info(&self) -> Result<NexusInfo, ApiError> {
        let (concepts, propositions) = self
            .nexus
            .read(|g| Ok((g.total_concepts()?, g.total_propositions()?)))?;
        Ok(NexusInfo {
            path: self.nexus.path().display().to_string(),
            read_only: self.read_only,
            origin: self.origin.name.clone(),
            pid: std::process::id(),
            concepts,
            propositions,
            last_change_seq: self.last_change_seq()?,
            version: env!("CARGO_PKG_VERSION").to_owned(),
        })
    }

    /// Runs `operation` on a JSON body and returns its JSON answer: the one
    /// entry point a transport needs, and the one read-only gate (the
    /// operation's [`Effect`]). For `execute` and `execute_readonly` the
    /// answer is the KIP response, whether it carries a result or a KIP
    /// error; `Err` is for requests that never reached the engine and for
    /// the other operations' failures.
    pub fn call(&self, operation: Operation, body: Json) -> Result<Json, ApiError> {
        self.gate(operation)?;
        self.dispatch(operation, body)
    }

    /// Refuses a writing operation on a read-only host.
    fn gate(&self, operation: Operation) -> Result<(), ApiError> {
        match operation.effect() {
            Effect::Writes(what) if self.read_only => Err(ApiError::read_only(what)),
            _ => Ok(()),
        }
    }

    /// [`Api::call`] with the operation given by its wire name.
    pub fn call_named(&self, operation: &str, body: Json) -> Result<Json, ApiError> {
        let op = Operation::from_name(operation).ok_or_else(|| {
            let names: Vec<&str> = Operation::ALL.iter().map(|o| o.name()).collect();
            ApiError::new(
                ErrorCode::UnknownOperation,
                format!("there is no operation `{operation}`"),
                format!("Use one of: {}.", names.join(", ")),
            )
            .with_data("operations", json!(names))
        })?;
        self.call(op, body)
    }
}

/// A body for `operation`; `null` (no body) reads as `{}` so operations
/// whose fields are all optional can be called without one.
pub(crate) fn parse<T: DeserializeOwned>(operation: &str, body: Json) -> Result<T, ApiError> {
    let body = if body.is_null() { json!({}) } else { body };
    serde_json::from_value(body).map_err(|e| ApiError::bad_request(operation, e))
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<Json, ApiError> {
    serde_json::to_value(value).map_err(|e| {
        ApiError::new(
            ErrorCode::Kip(KipCode::InternalError),
            format!("the answer cannot be serialized: {e}"),
            "This is a bug in KIP Explorer; please report it with the request that caused it.",
        )
    })
}

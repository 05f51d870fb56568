//! Every operation of the API, declared once: [`operations!`]'s table
//! below is the only place an operation is written out. From each row come
//! the [`Operation`] variant, its wire name, its [`Effect`] (the one
//! read-only gate every face goes through, in [`Api::call`]), its extra
//! HTTP routes ([`Route`]), its dispatch (a body parsed into the row's
//! request type, handed to the row's handler, answered as the row's
//! response type — checked by the compiler through [`Answer`]) and, in
//! tests, the TypeScript map `Operations` the UI's typed `call` is built on.
//!
//! Adding an operation is one row here (and its handler's code, in the
//! module that owns the work); every host serves it from then on: HTTP at
//! `POST /api/<name>`, the desktop shell through its one `api_call`
//! command, the UI through `call('<name>', …)`.
//!
//! This module does not know the transports: a [`Route`] is data that
//! `kip serve` turns into axum routes.

use serde::Serialize;
use serde_json::Value as Json;

use crate::error::ApiError;
use crate::trace;
use crate::types::*;
use crate::{
    Api, ListLogsRequest, ListLogsResponse, TraceAddRequest, TraceEntryRequest, TraceFlagRequest,
    TraceImportRequest, TraceImportResponse, TracePromoteRequest, TracePromoteResponse,
    TraceRevertRequest, TraceRevertToRequest,
};

/// What an operation may do to the nexus folder: the one read-only gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Changes nothing in the nexus folder: served by every host, read-only
    /// or not.
    Reads,
    /// Writes: refused on a read-only host before its handler runs, with
    /// `what` named in the refusal ("reverting is refused").
    Writes(&'static str),
    /// Writes or not by what the body says, so its handler keeps the gate:
    /// KML in `execute` (the engine refuses it on a read-only host), an
    /// import unless it is a dry run.
    Depends,
}

/// An extra HTTP route of an operation (besides `POST /api/<name>`): the
/// paths BRIEF §5 names, such as `GET /api/trace`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// `GET` (the body is built from the path's and the query's parameters)
    /// or `POST` (a JSON body).
    pub get: bool,
    /// An axum path; `{name}` segments become body fields.
    pub path: &'static str,
}

/// How a `GET` builds an operation's body from a query string: which
/// parameters are numbers (the others are strings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Query {
    pub numbers: &'static [&'static str],
}

/// What a handler may answer for an operation whose wire response is `W`:
/// `W` itself, or (for KIP responses, which the engine builds as JSON) the
/// JSON of one. The table names `W`; the compiler checks the handler.
pub(crate) trait Answer<W> {
    fn into_json(self) -> Result<Json, ApiError>;
}

impl<T: Serialize> Answer<T> for T {
    fn into_json(self) -> Result<Json, ApiError> {
        crate::to_json(&self)
    }
}

impl Answer<KipResponse> for Json {
    fn into_json(self) -> Result<Json, ApiError> {
        Ok(self)
    }
}

/// No body: the operation reads none (any body is ignored).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct NoBody;

impl<'de> serde::Deserialize<'de> for NoBody {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<NoBody, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| NoBody)
    }
}

/// The table. A row: doc comment, `Variant = "wire_name"`, its [`Effect`],
/// optionally `get [numeric query keys]` (it may also be called as
/// `GET /api/<name>`) and `at "/path"` (an extra route), then its handler
/// as `fn(api, request: Request) -> Response { … }` returning
/// `Result<impl Answer<Response>, ApiError>`.
macro_rules! operations {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $name:literal, $effect:expr,
        $(get [$($number:literal),*],)?
        $(at $path:literal,)?
        fn($api:ident, $req:ident: $Req:ty) -> $Resp:ty $handler:block
    )*) => {
        /// The operations of the API, by their wire name (`/api/<name>`
        /// over HTTP, the operation of the desktop shell's `api_call`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        pub enum Operation {
            $( $(#[doc = $doc])* #[serde(rename = $name)] $variant, )*
        }

        impl Operation {
            /// Every operation, in the table's order.
            pub const ALL: &'static [Operation] = &[$(Operation::$variant),*];

            /// The wire name, e.g. `"execute_readonly"`.
            pub fn name(self) -> &'static str {
                match self { $(Operation::$variant => $name,)* }
            }

            /// What it may do to the nexus folder (the read-only gate).
            pub fn effect(self) -> Effect {
                match self { $(Operation::$variant => $effect,)* }
            }

            /// How `GET /api/<name>` builds its body, for the operations
            /// that may be read with a `GET`.
            pub fn query(self) -> Option<Query> {
                match self {
                    $(Operation::$variant => {
                        #[allow(unused_mut, unused_assignments)]
                        let mut query = None;
                        $(query = Some(Query { numbers: &[$($number),*] });)?
                        query
                    })*
                }
            }

            /// Its extra HTTP route, if BRIEF §5 names one.
            pub fn route(self) -> Option<Route> {
                match self {
                    $(Operation::$variant => {
                        #[allow(unused_mut, unused_assignments)]
                        let mut route = None;
                        $(route = Some(Route { get: self.query().is_some(), path: $path });)?
                        route
                    })*
                }
            }
        }

        impl Api {
            /// The row's handler on a JSON body (the gate is [`Api::call`]'s).
            pub(crate) fn dispatch(&self, operation: Operation, body: Json) -> Result<Json, ApiError> {
                match operation {
                    $(Operation::$variant => {
                        let $api = self;
                        let $req: $Req = crate::parse($name, body)?;
                        let answer = $handler?;
                        <_ as Answer<$Resp>>::into_json(answer)
                    })*
                }
            }
        }

        /// The TypeScript map from wire name to request and response types.
        #[cfg(all(test, feature = "ts"))]
        pub(crate) fn typescript(cfg: &ts_rs::Config) -> String {
            use ts_rs::TS as _;
            let mut out = String::from(
                "\n/** Every operation: its request body and its answer (`call` in the UI's transport). */\nexport interface Operations {\n",
            );
            $(out.push_str(&format!(
                "  {}: {{ request: {}; response: {} }};\n",
                $name,
                <$Req>::name(cfg),
                <$Resp>::name(cfg),
            ));)*
            out.push_str("}\n");
            out
        }
    };
}

operations! {
    /// `execute_kip`: KQL, KML and META; on a read-only host the engine
    /// refuses KML with `KIP_3004`.
    Execute = "execute", Effect::Depends,
    fn(api, r: ExecuteRequest) -> KipResponse { Ok::<_, ApiError>(api.execute(r)) }

    /// `execute_kip_readonly`: KQL and META only; KML is refused with `KIP_3004`.
    ExecuteReadonly = "execute_readonly", Effect::Reads,
    fn(api, r: ExecuteRequest) -> KipResponse { Ok::<_, ApiError>(api.execute_readonly(r)) }

    /// Diagnostics for an editor.
    Validate = "validate", Effect::Reads,
    fn(api, r: ValidateRequest) -> ValidateResponse { Ok::<_, ApiError>(api.validate(&r)) }

    /// `get_knowledge_schema`: `{full_bundle_schema, example_yaml}`.
    Schema = "schema", Effect::Reads, get [],
    fn(api, _r: NoBody) -> kip_capsule::KnowledgeSchema { api.knowledge_schema() }

    /// `import_knowledge_bundle` / capsule import of file contents (a dry
    /// run is allowed on a read-only host).
    Import = "import", Effect::Depends,
    fn(api, r: ImportRequest) -> kip_capsule::ImportReport { api.import(&r) }

    /// The profiles this version offers (the RC11 memory profile) and
    /// whether the nexus carries each.
    Profiles = "profiles", Effect::Reads, get [],
    fn(api, _r: NoBody) -> crate::ProfilesResponse { api.profiles() }

    /// Installs a profile: its capsules imported in order as any client's.
    InstallProfile = "install_profile", Effect::Depends,
    fn(api, r: crate::InstallProfileRequest) -> crate::InstallProfileResponse {
        api.install_profile(&r)
    }

    /// The memory's health: counts per type, predicate and domain, and
    /// what needs a curator (orphans, expired, fading, weakly supported,
    /// unconsolidated episodes, unreviewed agent writes), each with the
    /// first elements it counts.
    Health = "health", Effect::Reads, get [],
    fn(api, _r: NoBody) -> crate::HealthResponse { crate::queues::health(&api.nexus) }

    /// Duplicate candidates: concept pairs of one type that may be one,
    /// with their reasons and a score, best first.
    Duplicates = "duplicates", Effect::Reads, get ["limit"],
    fn(api, r: crate::DuplicatesRequest) -> crate::DuplicatesResponse {
        crate::queues::duplicates(&api.nexus, &r)
    }

    /// Remembers that two concepts are not the same: the pair is no
    /// duplicate candidate from then on.
    DuplicatesDismiss = "duplicates_dismiss", Effect::Writes("dismissing a duplicate"),
    fn(api, r: crate::DismissRequest) -> crate::DismissResponse {
        crate::queues::dismiss(&api.nexus, &r)
    }

    /// The memory's shape: concept types with their counts, links counted
    /// by (subject type, predicate, object type), and the best-connected
    /// concepts — a large memory's first view.
    SchemaMap = "schema_map", Effect::Reads, get ["hubs"],
    fn(api, r: crate::SchemaMapRequest) -> kip_nexus::overview::SchemaMap {
        crate::queues::schema_map(&api.nexus, &r)
    }

    /// Decay triage: one page of the expired, fading or untouched
    /// memories, each with the metadata triage decides by.
    Triage = "triage", Effect::Reads,
    fn(api, r: kip_nexus::triage::TriageQuery) -> kip_nexus::triage::TriagePage {
        crate::triage::triage(api, &r)
    }

    /// A decay-triage action (pin, renew, archive, delete) over chosen
    /// memories or a whole list: one traced, revertible write, or its dry
    /// run with the counts and the diff.
    TriageApply = "triage_apply", Effect::Writes("applying a triage action"),
    fn(api, r: kip_nexus::triage_apply::TriageApply) -> kip_nexus::triage_apply::TriageOutcome {
        crate::triage::apply(api, &r)
    }

    /// Contradictions: subjects with more than one live object of a
    /// functional predicate, each side with its provenance.
    Contradictions = "contradictions", Effect::Reads, get ["limit"],
    fn(api, r: crate::ContradictionsRequest) -> kip_nexus::contradictions::Contradictions {
        crate::contradictions::list(api, &r)
    }

    /// Resolves a contradiction: keeps one link and marks the others
    /// superseded (with the reason), one traced write; `dry_run` previews.
    ContradictionResolve = "contradiction_resolve", Effect::Writes("resolving a contradiction"),
    fn(api, r: crate::ContradictionResolveRequest) -> kip_nexus::contradictions::Resolved {
        crate::contradictions::resolve(api, &r)
    }

    /// What changed between two times (or trace entries): the elements
    /// added, changed and removed, each with its state at both.
    Diff = "diff", Effect::Reads, get ["limit"],
    fn(api, r: crate::DiffRequest) -> kip_nexus::Diff { crate::time_travel::diff(&api.nexus, &r) }

    /// Recall heat: per element, how many agent reads returned it and by
    /// which originators, over a window of the trace.
    ReadHeat = "read_heat", Effect::Reads, get ["limit"],
    fn(api, r: kip_nexus::HeatQuery) -> kip_nexus::ReadHeat { api.read_heat(&r) }

    /// The recall simulator: what an agent's SEARCH for a text would
    /// recall, ranked, with each score's parts and one-hop context.
    Recall = "recall", Effect::Reads,
    fn(api, r: kip_nexus::recall::RecallQuery) -> kip_nexus::recall::Recall { api.recall(&r) }

    /// The concepts nearest in meaning to one concept (the inspector's
    /// "related by meaning"; empty with `available: false` without a model).
    Related = "related", Effect::Reads,
    fn(api, r: crate::recall::RelatedRequest) -> kip_nexus::related::Related { api.related(&r) }

    /// Pins or demotes a recalled concept (a traced, revertible UPDATE;
    /// `dry_run` previews it).
    RecallAction = "recall_action", Effect::Writes("pinning or demoting a memory"),
    fn(api, r: kip_nexus::recall::RecallAction) -> kip_nexus::recall::RecallActionOutcome {
        api.recall_action(&r)
    }

    /// An element's links, counted by predicate, and one page of them.
    Neighbourhood = "neighbourhood", Effect::Reads,
    fn(api, r: NeighbourhoodRequest) -> NeighbourhoodResponse { api.neighbourhood(&r) }

    /// Change-log entries after a sequence number.
    Changes = "changes", Effect::Reads, get ["since", "limit"],
    fn(api, r: ChangesRequest) -> ChangesResponse { api.changes(&r) }

    /// What this host serves.
    Info = "info", Effect::Reads, get [],
    fn(api, _r: NoBody) -> NexusInfo { api.info() }

    /// Canonical KIP text (the formatter, keeping comments).
    Format = "format", Effect::Reads,
    fn(api, r: FormatRequest) -> FormatResponse { api.format(&r) }

    /// The watched capsule folder's files and their import status.
    WatchStatus = "watch_status", Effect::Reads, get [],
    fn(api, _r: NoBody) -> WatchStatus { Ok::<_, ApiError>(api.watch_status()) }

    /// Computes logic properties (metrics, operators) of a concept type for
    /// a batch of instances (BRIEF §8); `MISSING_INPUT_PARAMS` lists what
    /// to supply.
    ResolveLogicProperties = "resolve_logic_properties", Effect::Reads,
    fn(api, r: ResolveRequest) -> ResolveResponse {
        api.resolve_logic_properties(r).map_err(ApiError::from)
    }

    /// Verifies the store's invariants.
    CheckStore = "check_store", Effect::Reads,
    fn(api, _r: NoBody) -> StoreCheck { api.check_store() }

    /// A consistent, compacted copy of the nexus, now and/or on a schedule.
    Backup = "backup", Effect::Writes("backing up"),
    fn(api, r: BackupRequest) -> BackupResponse { crate::maintenance::backup(&api.nexus, &r) }

    /// The shortest paths between two elements, up to a number of hops,
    /// optionally over given predicates only.
    Paths = "paths", Effect::Reads,
    fn(api, r: PathsRequest) -> PathsResponse { api.paths(&r) }

    /// A client's settings kept in the nexus (styling rules, saved queries,
    /// …), by key.
    SettingsGet = "settings_get", Effect::Reads,
    fn(api, r: SettingsGetRequest) -> SettingsResponse { api.settings_get(&r) }

    /// Stores (or, with `null`, forgets) one setting: it writes the nexus
    /// folder's host-state table, though not its knowledge.
    SettingsPut = "settings_put", Effect::Writes("saving settings"),
    fn(api, r: SettingsPutRequest) -> SettingsResponse { crate::settings::put(&api.nexus, &r) }

    /// Cognitive-trace entries, newest first.
    TraceList = "trace_list", Effect::Reads, get ["limit"], at "/api/trace",
    fn(api, r: kip_nexus::TraceFilter) -> kip_nexus::TracePage {
        api.nexus.trace_list(&r).map_err(ApiError::from)
    }

    /// One trace entry.
    TraceEntry = "trace_entry", Effect::Reads, get [], at "/api/trace/{id}",
    fn(api, r: TraceEntryRequest) -> kip_nexus::TraceEntry {
        api.nexus.trace_entry(&r.id).map_err(ApiError::from)
    }

    /// Records a THINK or SAY entry.
    TraceAdd = "trace_add", Effect::Writes("recording a trace entry"), at "/api/trace",
    fn(api, r: TraceAddRequest) -> kip_nexus::TraceEntry {
        trace::add(&api.nexus, api.originator(), r)
    }

    /// Sets and clears an entry's flags (the review state).
    TraceFlag = "trace_flag", Effect::Writes("flagging a trace entry"), at "/api/trace/flag",
    fn(api, r: TraceFlagRequest) -> kip_nexus::TraceEntry {
        api.nexus.trace_flag(&r.id, &r.set, &r.clear, api.originator()).map_err(ApiError::from)
    }

    /// Reverts the write an entry describes.
    TraceRevert = "trace_revert", Effect::Writes("reverting"), at "/api/trace/revert",
    fn(api, r: TraceRevertRequest) -> kip_nexus::Reverted {
        trace::revert(&api.nexus, api.originator(), &r)
    }

    /// Imports an exported trace (JSON Lines).
    TraceImport = "trace_import", Effect::Writes("importing a trace"),
    fn(api, r: TraceImportRequest) -> TraceImportResponse {
        let imported = api.nexus.trace_import(&r.jsonl)?;
        Ok::<_, ApiError>(TraceImportResponse { imported })
    }

    /// This machine's preferences (theme, panels, …), from the host's
    /// config folder; refused by a host that keeps none.
    PrefsGet = "prefs_get", Effect::Reads,
    fn(api, r: SettingsGetRequest) -> SettingsResponse { api.prefs_get(&r) }

    /// Stores (or, with `null`, forgets) one preference. Allowed on a
    /// read-only host: it writes the config folder, never the nexus.
    PrefsPut = "prefs_put", Effect::Reads,
    fn(api, r: SettingsPutRequest) -> SettingsResponse { api.prefs_put(&r) }

    /// Promotes entries to one episodic memory, an `Event` concept.
    TracePromote = "trace_promote", Effect::Writes("promoting trace entries"),
    at "/api/trace/promote",
    fn(api, r: TracePromoteRequest) -> TracePromoteResponse { crate::promote::promote(api, &r) }

    /// The cognitive trace oldest first, a page at a time: the official KIP
    /// MCP bridge's `list_logs` (also `POST /kip` with that method).
    ListLogs = "list_logs", Effect::Reads,
    fn(api, r: ListLogsRequest) -> ListLogsResponse { trace::list_logs(&api.nexus, &r) }

    /// Puts an element back as one of its trace entries left it: every
    /// later write that touched it, reverted newest first in one transaction.
    TraceRevertTo = "trace_revert_to", Effect::Writes("reverting"),
    at "/api/trace/revert-to",
    fn(api, r: TraceRevertToRequest) -> kip_nexus::RevertedTo {
        trace::revert_to(&api.nexus, api.originator(), &r)
    }
}

impl Operation {
    pub fn from_name(name: &str) -> Option<Operation> {
        Operation::ALL.iter().copied().find(|op| op.name() == name)
    }

    /// Whether it may change the nexus folder (see [`Effect`]).
    pub fn writes(self) -> bool {
        self.effect() != Effect::Reads
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_are_unique_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for op in Operation::ALL {
            assert!(seen.insert(op.name()), "{} twice", op.name());
            assert_eq!(Operation::from_name(op.name()), Some(*op));
            let wire = serde_json::to_value(op).expect("serialize");
            assert_eq!(wire, Json::String(op.name().to_owned()));
        }
    }

    #[test]
    fn routes_are_unique_per_method() {
        let mut seen = std::collections::BTreeSet::new();
        for op in Operation::ALL {
            if let Some(route) = op.route() {
                assert!(seen.insert((route.get, route.path)), "{route:?} twice");
            }
        }
    }

    #[test]
    fn a_read_only_host_refuses_every_writing_operation_before_it_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let nexus = kip_nexus::Nexus::open(dir.path()).expect("nexus");
        let api = Api::new(std::sync::Arc::new(nexus), "test").read_only(true);
        for op in Operation::ALL {
            if let Effect::Writes(what) = op.effect() {
                // An empty body: the gate answers before the body is read.
                let e = api.call(*op, Json::Null).expect_err(op.name());
                assert_eq!(
                    e.message,
                    format!("this host is read-only: {what} is refused"),
                    "{}",
                    op.name()
                );
            }
        }
    }
}

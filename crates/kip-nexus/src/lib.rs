//! `kip-nexus`: the Cognitive Nexus — the KIP engine behind `execute_kip`.
//!
//! [`Nexus::open`] opens (or creates and bootstraps with the Genesis
//! capsules) a nexus folder; [`Nexus::execute`] takes the arguments of the
//! spec's `execute_kip` function (one command or a batch, parameters,
//! dry run) and returns the KIP response object. Every command runs in one
//! LMDB transaction: readers see a consistent snapshot, a KML command is
//! atomic (any error aborts everything it did), and a dry run executes
//! exactly and then aborts.
//!
//! Modules: [`kql`] plans and runs queries, [`kml`] writes, [`meta`]
//! answers DESCRIBE and SEARCH, [`search`] keeps the text index, [`schema`]
//! knows the in-graph schema and the protected elements, [`graph`] is the
//! read view of the store. This crate knows nothing of files, windows or
//! sockets.

pub mod cursor;
pub mod explain;
pub mod filter;
pub mod genesis;
pub mod graph;
pub mod kml;
pub mod kql;
pub mod meta;
pub mod pattern;
pub mod request;
pub mod schema;
pub mod search;
pub mod tokenize;
pub mod value;

use std::path::Path;

use graph::TxnError;
use kip_lang::ast::{Command, CommandKind};
use kip_lang::{ErrorCode, Errors, KipError};
use kip_store::Store;
use serde_json::{Map, Value as Json, json};

pub use graph::Result;
pub use kml::Stats;
pub use request::{BatchItem, ExecuteKip};

/// Who sent a command: recorded in the change log so that other processes
/// can tell their own writes from others'.
#[derive(Clone, Debug)]
pub struct Origin {
    pub name: String,
}

impl Default for Origin {
    fn default() -> Origin {
        Origin {
            name: "library".into(),
        }
    }
}

/// What a caller may do: everything, or only KQL and META.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Access {
    #[default]
    ReadWrite,
    /// KML is refused with `KIP_3004` before anything runs.
    ReadOnly,
}

/// A Cognitive Nexus on disk.
pub struct Nexus {
    store: Store,
    /// Keys the cursors this nexus issues (see [`cursor`]).
    secret: u64,
}

impl std::fmt::Debug for Nexus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nexus").finish_non_exhaustive()
    }
}

/// What one executed command produced.
#[derive(Debug)]
pub struct Outcome {
    pub result: Json,
    pub next_cursor: Option<String>,
    pub stats: Stats,
    /// The `explain` profile of a FIND, when asked for.
    pub explain: Option<Json>,
}

/// How to run commands.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Validate (KQL, META) or preview in an aborted transaction (KML).
    pub dry_run: bool,
    /// Profile FIND queries (see [`explain`]).
    pub explain: bool,
}

/// The timestamp of a command: ISO 8601, UTC, whole seconds.
pub(crate) fn now() -> String {
    let format = time::format_description::well_known::Rfc3339;
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_default()
}

impl Nexus {
    /// Opens the nexus in `dir`, creating and bootstrapping it if needed.
    pub fn open(dir: &Path) -> Result<Nexus> {
        let store = Store::open(dir).map_err(graph::internal)?;
        let secret = genesis::ensure(&store)?;
        Ok(Nexus { store, secret })
    }

    /// The underlying store (for the capsule pipeline and change polling).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Executes an `execute_kip` request and returns the KIP response.
    pub fn execute(&self, request: &ExecuteKip) -> Json {
        self.execute_as(request, &Origin::default())
    }

    /// [`Nexus::execute`] on behalf of `origin`.
    pub fn execute_as(&self, request: &ExecuteKip, origin: &Origin) -> Json {
        self.execute_with(request, origin, Access::ReadWrite)
    }

    /// Runs `f` on a read view of one consistent snapshot.
    pub fn read<T>(&self, f: impl FnOnce(&graph::Graph<'_>) -> Result<T>) -> Result<T> {
        self.store
            .read(|txn| {
                let g = graph::Graph::new(&self.store, txn);
                f(&g).map_err(TxnError)
            })
            .map_err(|e| e.0)
    }

    /// [`Nexus::execute_as`] with an access level (`execute_kip_readonly`
    /// uses [`Access::ReadOnly`]).
    pub fn execute_with(&self, request: &ExecuteKip, origin: &Origin, access: Access) -> Json {
        let access_ok = |text: &str| -> Result<()> {
            if access == Access::ReadOnly
                && let Ok(commands) = kip_lang::parse(text)
                && let Some(kml) = commands.iter().find(|c| c.kind() == CommandKind::Kml)
            {
                return Err(KipError::new(
                    ErrorCode::ImmutableTarget,
                    "this endpoint is read-only: KML (UPSERT, DELETE) is refused",
                )
                .with_hint("Use KQL (FIND) and META (DESCRIBE, SEARCH) here; send changes through execute_kip.")
                .at(text, kml.span()));
            }
            Ok(())
        };
        let texts: Vec<&str> = match (&request.command, &request.commands) {
            (Some(c), None) => vec![c.as_str()],
            (None, Some(batch)) => batch
                .iter()
                .map(|b| match b {
                    BatchItem::Text(t) => t.as_str(),
                    BatchItem::WithParameters { command, .. } => command.as_str(),
                })
                .collect(),
            _ => Vec::new(),
        };
        for text in texts {
            if let Err(e) = access_ok(text) {
                return json!({"error": e});
            }
        }
        let dry_run = request.dry_run.unwrap_or(false);
        let shared = request.parameters.clone().unwrap_or_default();
        self.dispatch(request, dry_run, &shared, origin)
    }

    fn dispatch(
        &self,
        request: &ExecuteKip,
        dry_run: bool,
        shared: &Map<String, Json>,
        origin: &Origin,
    ) -> Json {
        let options = RunOptions {
            dry_run,
            explain: request.explain.unwrap_or(false),
        };
        match (&request.command, &request.commands) {
            (Some(command), None) => {
                let outcome = self.run_text_with(command, shared, options, origin);
                let refused = match (&outcome, options.explain) {
                    (Err(e), true) => explain::for_error(command, e),
                    _ => None,
                };
                let mut r = response(outcome);
                if let Some(e) = refused {
                    r["explain"] = e.to_json();
                }
                r
            }
            (None, Some(batch)) => {
                let mut results = Vec::new();
                for item in batch {
                    let (text, params) = match item {
                        BatchItem::Text(t) => (t.as_str(), shared.clone()),
                        BatchItem::WithParameters {
                            command,
                            parameters,
                        } => {
                            let mut p = shared.clone();
                            p.extend(parameters.clone().unwrap_or_default());
                            (command.as_str(), p)
                        }
                    };
                    let r = response(self.run_text_with(text, &params, options, origin));
                    let failed = r.get("error").is_some();
                    results.push(r);
                    if failed {
                        break; // a batch stops at its first error
                    }
                }
                json!({"result": results})
            }
            _ => json!({"error": KipError::new(
                ErrorCode::InvalidSyntax,
                "execute_kip needs exactly one of `command` or `commands`",
            ).with_hint("Send {\"command\": \"FIND(…) WHERE {…}\"} for one command, or {\"commands\": [\"…\", \"…\"]} for a batch.")}),
        }
    }

    /// Parses, binds and runs one command text (a capsule may hold several
    /// commands: they then run in one transaction and the result lists each).
    pub fn run_text(
        &self,
        text: &str,
        params: &Map<String, Json>,
        dry_run: bool,
        origin: &Origin,
    ) -> Result<Outcome> {
        let options = RunOptions {
            dry_run,
            explain: false,
        };
        self.run_text_with(text, params, options, origin)
    }

    /// [`Nexus::run_text`] with every option.
    pub fn run_text_with(
        &self,
        text: &str,
        params: &Map<String, Json>,
        options: RunOptions,
        origin: &Origin,
    ) -> Result<Outcome> {
        let commands = kip_lang::parse(text).map_err(Errors::into_response_error)?;
        let commands =
            kip_lang::bind(text, commands, params).map_err(Errors::into_response_error)?;
        self.run_commands_with(text, &commands, options, origin)
    }

    /// Runs parsed, bound commands: reads in a read transaction, writes in
    /// one write transaction for all of them.
    pub fn run_commands(
        &self,
        source: &str,
        commands: &[Command],
        dry_run: bool,
        origin: &Origin,
    ) -> Result<Outcome> {
        let options = RunOptions {
            dry_run,
            explain: false,
        };
        self.run_commands_with(source, commands, options, origin)
    }

    /// [`Nexus::run_commands`] with every option.
    pub fn run_commands_with(
        &self,
        source: &str,
        commands: &[Command],
        options: RunOptions,
        origin: &Origin,
    ) -> Result<Outcome> {
        let RunOptions { dry_run, explain } = options;
        let writes = commands.iter().any(|c| c.kind() == CommandKind::Kml);
        let single = commands.len() == 1;
        if dry_run && !writes {
            self.store
                .read(|txn| {
                    let g = graph::Graph::new(&self.store, txn);
                    for c in commands {
                        validate_read(&g, source, c)?;
                    }
                    Ok::<_, TxnError>(())
                })
                .map_err(|e| e.0)?;
            return Ok(Outcome::of(json!({"valid": true})));
        }
        let secret = self.secret;
        if !writes {
            return self
                .store
                .read(|txn| {
                    let g = graph::Graph::new(&self.store, txn);
                    let mut outcomes = Vec::new();
                    for c in commands {
                        outcomes.push(read_command(&g, source, c, secret, explain)?);
                    }
                    Ok::<_, TxnError>(combine(outcomes, single))
                })
                .map_err(|e| e.0);
        }
        let run = |txn: &mut kip_store::RwTxn<'_>| -> std::result::Result<Outcome, TxnError> {
            let mut outcomes = Vec::new();
            let mut total = Stats::default();
            for c in commands {
                let outcome = match c {
                    Command::Upsert(u) => {
                        let mut w = kml::Writer::new(&self.store, txn, source, now());
                        let result = w.upsert(u)?;
                        Outcome {
                            stats: w.stats,
                            ..Outcome::of(result)
                        }
                    }
                    Command::Delete(d) => {
                        let mut w = kml::Writer::new(&self.store, txn, source, now());
                        let result = w.delete(d)?;
                        Outcome {
                            stats: w.stats,
                            ..Outcome::of(result)
                        }
                    }
                    other => {
                        let g = graph::Graph::new(&self.store, txn);
                        read_command(&g, source, other, secret, explain)?
                    }
                };
                total = add_stats(total, outcome.stats);
                outcomes.push(outcome);
            }
            if total.changed() && !dry_run {
                let entry = json!({
                    "origin": origin.name,
                    "pid": std::process::id(),
                    "at": now(),
                    "stats": total,
                });
                self.store.append_change(txn, &entry)?;
            }
            let mut out = combine(outcomes, single);
            out.stats = total;
            if dry_run {
                mark_dry_run(&mut out.result);
            }
            Ok(out)
        };
        self.store.write_with(!dry_run, run).map_err(|e| e.0)
    }
}

impl Outcome {
    fn of(result: Json) -> Outcome {
        Outcome {
            result,
            next_cursor: None,
            stats: Stats::default(),
            explain: None,
        }
    }
}

/// Marks a preview: the result object of one command, or each command's
/// result object when a text held several.
fn mark_dry_run(result: &mut Json) {
    match result {
        Json::Object(obj) => {
            obj.insert("dry_run".into(), json!(true));
        }
        Json::Array(items) => {
            for item in items {
                if let Some(obj) = item.get_mut("result").and_then(Json::as_object_mut) {
                    obj.insert("dry_run".into(), json!(true));
                }
            }
        }
        _ => {}
    }
}

fn add_stats(a: Stats, b: Stats) -> Stats {
    Stats {
        concepts_created: a.concepts_created + b.concepts_created,
        concepts_updated: a.concepts_updated + b.concepts_updated,
        concepts_deleted: a.concepts_deleted + b.concepts_deleted,
        propositions_created: a.propositions_created + b.propositions_created,
        propositions_updated: a.propositions_updated + b.propositions_updated,
        propositions_deleted: a.propositions_deleted + b.propositions_deleted,
    }
}

fn read_command(
    g: &graph::Graph<'_>,
    source: &str,
    c: &Command,
    secret: u64,
    explain: bool,
) -> Result<Outcome> {
    match c {
        Command::Find(q) => {
            let out = kql::find(g, source, q, secret, explain)?;
            Ok(Outcome {
                next_cursor: out.next_cursor,
                explain: out.explain.map(|e| e.to_json()),
                ..Outcome::of(out.result)
            })
        }
        Command::Describe(d) => {
            let out = meta::describe(g, source, d, secret)?;
            Ok(Outcome {
                next_cursor: out.next_cursor,
                ..Outcome::of(out.result)
            })
        }
        Command::Search(s) => Ok(Outcome::of(meta::search_command(g, source, s)?)),
        Command::Upsert(_) | Command::Delete(_) => Err(KipError::new(
            ErrorCode::InternalError,
            "a write reached the read path",
        )),
    }
}

/// Checks a read command against the schema without running it (dry run).
fn validate_read(g: &graph::Graph<'_>, source: &str, c: &Command) -> Result<()> {
    match c {
        Command::Find(q) => {
            let mut vars = kql::Vars::default();
            kql::compile(g, source, &q.where_, &mut vars)?;
        }
        Command::Search(s) => {
            let mut probe = s.clone();
            probe.limit = Some(kip_lang::ast::Arg::Lit(0, s.span));
            meta::search_command(g, source, &probe)?;
        }
        Command::Describe(_) | Command::Upsert(_) | Command::Delete(_) => {}
    }
    Ok(())
}

fn combine(mut outcomes: Vec<Outcome>, single: bool) -> Outcome {
    if single && let Some(o) = outcomes.pop() {
        return o;
    }
    let result = outcomes.into_iter().map(|o| response(Ok(o))).collect();
    Outcome::of(Json::Array(result))
}

/// The KIP response object of an outcome.
pub fn response(outcome: Result<Outcome>) -> Json {
    match outcome {
        Ok(o) => {
            let mut r = json!({"result": o.result});
            if let Some(c) = o.next_cursor {
                r["next_cursor"] = json!(c);
            }
            if let Some(e) = o.explain {
                r["explain"] = e;
            }
            r
        }
        Err(e) => json!({"error": e}),
    }
}

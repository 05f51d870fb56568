//! `execute_kip` requests: one command or a batch, shared and per-command
//! parameters, dry runs, `explain`, and the caller's [`Context`].
//!
//! Each text is parsed once: the access check of a read-only caller looks
//! at the same parsed commands that then run. A batch is checked whole
//! before anything runs (a read-only caller's batch with one write runs
//! nothing), then runs in order and stops at its first error.

use kip_lang::ast::{Command, CommandKind};
use kip_lang::{ErrorCode, Errors, KipError};
use serde_json::{Map, Value as Json, json};

use crate::explain;
use crate::graph::Result;
use crate::limits::{MAX_BATCH_COMMANDS, MAX_REQUEST_TEXT};
use crate::nexus::Nexus;
use crate::options::{Mode, Origin, RunOptions};
use crate::request::{BatchItem, ExecuteKip};
use crate::run::{Outcome, response};
use crate::trace::TraceNote;

/// What a caller may do: everything, or only KQL and META.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Access {
    #[default]
    ReadWrite,
    /// KML is refused with `KIP_3004` before anything runs.
    ReadOnly,
}

/// Who sends a request and what they may do.
#[derive(Clone, Debug, Default)]
pub struct Context {
    pub origin: Origin,
    pub access: Access,
    /// Who the cognitive trace says acted (else the origin's name): an MCP
    /// client's name, `X-KIP-Originator`, `curator`, `cli`, `watcher`.
    pub originator: Option<String>,
    /// The caller is an agent: its writes are flagged `Unverified`.
    pub agent: bool,
}

impl Context {
    /// A read-write context writing under `origin`.
    pub fn new(origin: impl Into<String>) -> Context {
        Context {
            origin: Origin::new(origin),
            access: Access::ReadWrite,
            originator: None,
            agent: false,
        }
    }

    /// Names who acts, for the cognitive trace.
    pub fn with_originator(mut self, originator: impl Into<String>) -> Context {
        self.originator = Some(originator.into());
        self
    }

    /// Marks the caller as an agent (see [`Context::agent`]).
    pub fn as_agent(mut self, agent: bool) -> Context {
        self.agent = agent;
        self
    }

    pub fn with_access(mut self, access: Access) -> Context {
        self.access = access;
        self
    }
}

/// One text of a request, parsed (or the error parsing it gave) with the
/// parameters it binds.
struct Parsed<'r> {
    text: &'r str,
    commands: Result<Vec<Command>>,
    params: Map<String, Json>,
}

impl Nexus {
    /// Runs a request's reads on the nexus as of `at` (see
    /// [`Nexus::as_of`]); the response says where the view stands
    /// (`as_of`). The caller has refused its writes.
    fn execute_as_of(&self, request: &ExecuteKip, ctx: &Context, at: &str) -> Json {
        let view = match self.as_of(at) {
            Ok(v) => v,
            Err(e) => return json!({"error": e}),
        };
        let present = ExecuteKip {
            as_of: None,
            ..request.clone()
        };
        let ctx = ctx.clone().with_access(Access::ReadOnly);
        let mut r = view.nexus().execute(&present, &ctx);
        if let Some(o) = r.as_object_mut() {
            o.insert(
                "as_of".into(),
                serde_json::to_value(&view.point).unwrap_or_default(),
            );
        }
        r
    }

    /// Executes an `execute_kip` request for `ctx` and returns the KIP
    /// response (`{"result"…}` or `{"error"…}`; a batch answers
    /// `{"result": [response, …]}`).
    pub fn execute(&self, request: &ExecuteKip, ctx: &Context) -> Json {
        let shared = request.parameters.clone().unwrap_or_default();
        let texts: Vec<(&str, Map<String, Json>)> = match (&request.command, &request.commands) {
            (Some(c), None) => vec![(c.as_str(), shared)],
            (None, Some(batch)) => batch.iter().map(|b| batch_item(b, &shared)).collect(),
            _ => {
                return json!({"error": KipError::new(
                    ErrorCode::InvalidSyntax,
                    "execute_kip needs exactly one of `command` or `commands`",
                ).with_hint("Send {\"command\": \"FIND(…) WHERE {…}\"} for one command, or {\"commands\": [\"…\", \"…\"]} for a batch.")});
            }
        };
        if let Some(e) = over_limits(&texts) {
            return json!({"error": e});
        }
        let parsed: Vec<Parsed<'_>> = texts
            .into_iter()
            .map(|(text, params)| Parsed {
                text,
                commands: kip_lang::parse(text).map_err(Errors::into_response_error),
                params,
            })
            .collect();
        let past = request.as_of.is_some();
        if (ctx.access == Access::ReadOnly || past)
            && let Some(e) = parsed.iter().find_map(|p| refuse_writes(p, past))
        {
            return json!({"error": e});
        }
        if let Some(at) = &request.as_of {
            return self.execute_as_of(request, ctx, at);
        }
        // SEARCH by meaning first embeds what writes left waiting (up to a
        // bound; beyond it the answer says how many wait).
        let searches = |p: &Parsed<'_>| {
            (p.commands.as_ref()).is_ok_and(|cs| cs.iter().any(|c| matches!(c, Command::Search(_))))
        };
        if self.searches_by_meaning() && parsed.iter().any(searches) {
            // A failure here only leaves vectors waiting; the search says so.
            let _ = self.catch_up_vectors(crate::semantic::SEARCH_CATCH_UP);
        }
        let options = RunOptions {
            mode: Mode::dry_run_if(request.dry_run.unwrap_or(false)),
            explain: request.explain.unwrap_or(false),
            origin: ctx.origin.clone(),
            trace: TraceNote {
                originator: ctx.originator.clone(),
                parameters: request.parameters.clone().map(Json::Object),
                agent: ctx.agent,
                reason: request.reason.clone(),
                ..TraceNote::default()
            },
            known: None,
            retried_on_failure: false,
            // `execute_kip` (every agent-facing face) never has the owner's
            // authority.
            owner: false,
        };
        if request.command.is_some() {
            let Some(one) = parsed.into_iter().next() else {
                return json!({"result": []});
            };
            let text = one.text;
            let outcome = self.run_parsed(one, &options);
            let refused = match (&outcome, options.explain) {
                (Err(e), true) => explain::for_error(text, e),
                _ => None,
            };
            let mut r = response(outcome);
            if let Some(e) = refused {
                r["explain"] = e.to_json();
            }
            return r;
        }
        let mut results = Vec::new();
        for one in parsed {
            let r = response(self.run_parsed(one, &options));
            let failed = r.get("error").is_some();
            results.push(r);
            if failed {
                break; // a batch stops at its first error
            }
        }
        json!({"result": results})
    }

    /// Binds a parsed text's placeholders and runs it.
    fn run_parsed(&self, one: Parsed<'_>, options: &RunOptions) -> Result<Outcome> {
        let commands = one.commands?;
        if commands.is_empty() {
            return Err(empty_command(one.text));
        }
        let commands =
            kip_lang::bind(one.text, commands, &one.params).map_err(Errors::into_response_error)?;
        self.run(one.text, &commands, options)
    }
}

/// The `KIP_4002` of a request above [`MAX_BATCH_COMMANDS`] or
/// [`MAX_REQUEST_TEXT`], before anything is parsed.
fn over_limits(texts: &[(&str, Map<String, Json>)]) -> Option<KipError> {
    let bytes: usize = texts.iter().map(|(t, _)| t.len()).sum();
    if texts.len() > MAX_BATCH_COMMANDS {
        return Some(
            KipError::new(
                ErrorCode::ResourceExhausted,
                format!(
                    "the batch holds {} commands, more than the {MAX_BATCH_COMMANDS} one request may hold",
                    texts.len()
                ),
            )
            .with_hint("Split the batch into several requests, or import the writes as a capsule."),
        );
    }
    (bytes > MAX_REQUEST_TEXT).then(|| {
        KipError::new(
            ErrorCode::ResourceExhausted,
            format!("the request holds {bytes} bytes of KIP, more than the {MAX_REQUEST_TEXT} one request may hold"),
        )
        .with_hint("Split it into several requests, or import it as a capsule (kip import, import_knowledge_bundle), which is read part by part.")
    })
}

/// The `KIP_1001` of a request text holding no command at all (empty,
/// whitespace or comments only). A capsule file may be empty (it imports
/// as nothing), but a request always asks for something to run.
fn empty_command(text: &str) -> KipError {
    KipError::new(
        ErrorCode::InvalidSyntax,
        "empty command: the text holds no KIP command",
    )
    .with_hint("Send a FIND, UPSERT, UPDATE, MERGE, DELETE, DESCRIBE, SEARCH or EXPORT command, e.g. DESCRIBE PRIMER.")
    .at(text, kip_lang::ast::Span::new(text.len(), text.len()))
}

/// A batch item's text with its parameters: the shared ones, overridden by
/// its own.
fn batch_item<'r>(item: &'r BatchItem, shared: &Map<String, Json>) -> (&'r str, Map<String, Json>) {
    match item {
        BatchItem::Text(t) => (t.as_str(), shared.clone()),
        BatchItem::WithParameters {
            command,
            parameters,
        } => {
            let mut p = shared.clone();
            p.extend(parameters.clone().unwrap_or_default());
            (command.as_str(), p)
        }
    }
}

/// For a read-only caller, or a request as of a past time (`past`): the
/// `KIP_3004` error of a text's first KML command. A text that does not
/// parse is not refused here: running it reports its syntax error.
fn refuse_writes(one: &Parsed<'_>, past: bool) -> Option<KipError> {
    let commands = one.commands.as_ref().ok()?;
    let kml = commands.iter().find(|c| c.kind() == CommandKind::Kml)?;
    if past {
        return Some(
            KipError::new(
                ErrorCode::ImmutableTarget,
                "the nexus as of a past time is read-only: KML (UPSERT, UPDATE, MERGE, DELETE) is refused",
            )
            .with_hint("Leave out as_of (--as-of) to change the nexus as it is now; to put elements back as they were, revert their writes from the trace.")
            .at(one.text, kml.span()),
        );
    }
    Some(
        KipError::new(
            ErrorCode::ImmutableTarget,
            "this endpoint is read-only: KML (UPSERT, UPDATE, MERGE, DELETE) is refused",
        )
        .with_hint(
            "Use KQL (FIND) and META (DESCRIBE, SEARCH, EXPORT) here; send changes through execute_kip.",
        )
        .at(one.text, kml.span()),
    )
}

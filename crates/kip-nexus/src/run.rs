//! Running parsed, bound commands: the transactions.
//!
//! [`Nexus::run`] is the one place that opens transactions for commands: a
//! text with no KML runs in one read transaction, a text with KML runs all
//! its commands in one write transaction (any error aborts everything), and
//! a dry run either checks reads against the schema or executes the writes
//! exactly and aborts. Every committed write that changed something appends
//! a change-log entry with its origin in the same transaction, and every
//! committed write appends its cognitive-trace entry (with the before-image
//! of what it changed) in that transaction too; reads are folded in memory
//! and written later (see `trace`).

use std::collections::HashMap;

use kip_lang::ast::{Command, CommandKind};
use kip_lang::{ErrorCode, KipError};
use kip_store::ElementId;
use serde_json::{Value as Json, json};

use crate::clock::now;
use crate::graph::{Graph, Result, TxnError};
use crate::kml::{self, BeforeImage, Stats};
use crate::known::KnownConcepts;
use crate::nexus::Nexus;
use crate::options::{Mode, RunOptions};
use crate::trace;
use crate::write::{EndOfWrite, Traced};
use crate::{export, kql, meta};

impl RunOptions {
    /// The concepts a write in `txn` may take from [`RunOptions::known`].
    pub(crate) fn known_in(
        &self,
        store: &kip_store::Store,
        txn: &kip_store::RwTxn<'_>,
    ) -> std::result::Result<Option<&KnownConcepts>, TxnError> {
        let Some((known, seq)) = &self.known else {
            return Ok(None);
        };
        let now = store.last_change_seq(txn)?;
        known.rewind();
        Ok((now == *seq).then_some(&**known))
    }
}

/// What one executed command (or one text of several) produced.
#[derive(Debug)]
pub struct Outcome {
    pub result: Json,
    pub next_cursor: Option<String>,
    pub stats: Stats,
    /// The `explain` profile of a FIND, when asked for.
    pub explain: Option<Json>,
    /// What the command did other than asked, for the caller to know (a
    /// `SEARCH … MODE "semantic"` served by keyword): the response's
    /// `warnings`.
    pub warnings: Vec<String>,
}

impl Outcome {
    pub(crate) fn of(result: Json) -> Outcome {
        Outcome {
            result,
            next_cursor: None,
            stats: Stats::default(),
            explain: None,
            warnings: Vec::new(),
        }
    }
}

/// What a run hands one command of a write besides the command: the
/// handles an UPSERT continues with (a streamed part's), concepts the
/// caller looked up ([`KnownConcepts`], when they hold), and whether a
/// read among the writes is profiled.
pub(crate) struct Given<'x> {
    pub handles: Option<&'x mut HashMap<String, ElementId>>,
    pub known: Option<&'x KnownConcepts>,
    /// Profile a FIND among the writes (see `explain`).
    pub explain: bool,
    /// The owner's authority (see [`RunOptions::owner`]).
    pub owner: bool,
}

impl Nexus {
    /// Runs parsed, bound commands (`source` is the text their spans point
    /// into): reads in one read transaction, writes in one write transaction
    /// for all of them. A capsule of several commands returns each one's
    /// response in a list.
    pub fn run(&self, source: &str, commands: &[Command], options: &RunOptions) -> Result<Outcome> {
        self.run_reporting(source, commands, options, &|_| {})
    }

    /// [`Nexus::run`], calling `progress` with the number of commands done
    /// after each write's command (see [`crate::bulk::Bulk::run`]).
    pub(crate) fn run_reporting(
        &self,
        source: &str,
        commands: &[Command],
        options: &RunOptions,
        progress: &dyn Fn(usize),
    ) -> Result<Outcome> {
        let writes = commands.iter().any(|c| c.kind() == CommandKind::Kml);
        match (writes, options.mode) {
            (false, Mode::DryRun) => self.check_reads(source, commands),
            (false, Mode::Commit) => {
                let outcome = self.run_reads(source, commands, options.explain);
                self.trace_read(source, options, outcome.as_ref().map(|o| &o.result));
                outcome
            }
            (true, Mode::DryRun) => {
                self.run_writes(source, commands, options, Mode::DryRun, progress)
            }
            (true, Mode::Commit) => {
                let outcome = self.run_writes(source, commands, options, Mode::Commit, progress);
                if let Err(e) = &outcome {
                    self.trace_failure(source, commands, options, e);
                }
                outcome
            }
        }
    }

    /// A dry run of reads: checked against the schema, not run.
    fn check_reads(&self, source: &str, commands: &[Command]) -> Result<Outcome> {
        self.read(|g| {
            for c in commands {
                validate_read(g, source, c)?;
            }
            Ok(())
        })?;
        Ok(Outcome::of(json!({"valid": true})))
    }

    fn run_reads(&self, source: &str, commands: &[Command], explain: bool) -> Result<Outcome> {
        let secret = self.secret;
        self.read(|g| {
            let mut outcomes = Vec::new();
            for c in commands {
                outcomes.push(read_command(g, source, c, secret, explain)?);
            }
            Ok(combine(outcomes, commands.len() == 1))
        })
    }

    fn run_writes(
        &self,
        source: &str,
        commands: &[Command],
        options: &RunOptions,
        mode: Mode,
        progress: &dyn Fn(usize),
    ) -> Result<Outcome> {
        let commit = mode == Mode::Commit;
        let started = std::time::Instant::now();
        let run = |txn: &mut kip_store::RwTxn<'_>,
                   traced: Traced<'_>|
         -> std::result::Result<Outcome, TxnError> {
            let mut outcomes = Vec::new();
            let mut total = Stats::default();
            let mut changes = BeforeImage::default();
            let known = options.known_in(&self.store, txn)?;
            for c in commands {
                let outcome = self.command_in_write(
                    txn,
                    source,
                    c,
                    commit,
                    traced.on().then_some(&mut changes),
                    Given {
                        handles: None,
                        known,
                        explain: options.explain,
                        owner: options.owner,
                    },
                )?;
                total += outcome.stats;
                outcomes.push(outcome);
                progress(outcomes.len());
            }
            let write = EndOfWrite {
                options,
                traced,
                commit,
                started,
            };
            self.log_and_trace(
                txn,
                &write,
                trace::verbs(commands),
                source,
                total,
                &mut changes,
            )?;
            let mut out = combine(outcomes, commands.len() == 1);
            out.stats = total;
            if !commit {
                mark_dry_run(&mut out.result);
            }
            Ok(out)
        };
        self.write_traced(commit, run)
    }
}

impl Nexus {
    /// Runs one command of a write in `txn`: a read as in a read
    /// transaction, a KML command with [`Nexus::write_command`].
    pub(crate) fn command_in_write(
        &self,
        txn: &mut kip_store::RwTxn<'_>,
        source: &str,
        c: &Command,
        commit: bool,
        traced: Option<&mut BeforeImage>,
        given: Given<'_>,
    ) -> std::result::Result<Outcome, TxnError> {
        match c {
            Command::Upsert(_) | Command::Delete(_) | Command::Update(_) | Command::Merge(_) => {
                self.write_command(txn, source, c, commit, traced, given)
            }
            read => {
                let g = Graph::new(&self.store, txn).with_embedder(self.semantic.model.clone());
                Ok(read_command(&g, source, read, self.secret, given.explain)?)
            }
        }
    }

    /// Runs one KML command in `txn`. A preview (`commit` false) also
    /// collects each element's change, before → after, into the result; a
    /// traced write collects them into `traced` (the before-image).
    fn write_command(
        &self,
        txn: &mut kip_store::RwTxn<'_>,
        source: &str,
        c: &Command,
        commit: bool,
        traced: Option<&mut BeforeImage>,
        given: Given<'_>,
    ) -> std::result::Result<Outcome, TxnError> {
        let mut w = kml::Writer::new(&self.store, txn, source, now());
        w.known = given.known;
        w.bootstrap = given.owner;
        // A sweep's hint only serves the first KML command of a write.
        if self.sweep_starts.command(w.txn.id()) {
            w.sweep_starts = Some(&self.sweep_starts);
        }
        if !commit {
            w.collect_changes();
        } else if traced.is_some() {
            w.collect_before_image();
        }
        let result = match c {
            Command::Upsert(u) => match given.handles {
                Some(handles) => w.upsert_with(u, handles)?,
                None => w.upsert(u)?,
            },
            Command::Delete(d) => w.delete(d)?,
            Command::Update(u) => w.update(u)?,
            Command::Merge(m) => w.merge(m)?,
            Command::Find(_) | Command::Describe(_) | Command::Search(_) | Command::Export(_) => {
                return Err(TxnError(KipError::new(
                    ErrorCode::InternalError,
                    "a read reached the write path",
                )));
            }
        };
        if let Some(traced) = traced {
            traced.extend(w.take_before_image());
        }
        Ok(Outcome {
            stats: w.stats,
            ..Outcome::of(w.with_changes(result))
        })
    }
}

/// Marks a preview: the result object of one command, or each command's
/// result object when a text held several.
pub(crate) fn mark_dry_run(result: &mut Json) {
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

fn read_command(
    g: &Graph<'_>,
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
        Command::Search(s) => {
            let (result, warning) = meta::search_command(g, source, s)?;
            Ok(Outcome {
                warnings: warning.into_iter().collect(),
                ..Outcome::of(result)
            })
        }
        Command::Export(e) => {
            let out = export::export(g, source, e, secret)?;
            Ok(Outcome {
                next_cursor: out.next_cursor,
                ..Outcome::of(out.result)
            })
        }
        Command::Upsert(_) | Command::Update(_) | Command::Merge(_) | Command::Delete(_) => Err(
            KipError::new(ErrorCode::InternalError, "a write reached the read path"),
        ),
    }
}

/// Checks a read command against the schema without running it (dry run).
fn validate_read(g: &Graph<'_>, source: &str, c: &Command) -> Result<()> {
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
        Command::Export(e) => {
            let mut vars = kql::Vars::default();
            kql::compile(g, source, &e.where_, &mut vars)?;
        }
        Command::Describe(_)
        | Command::Upsert(_)
        | Command::Update(_)
        | Command::Merge(_)
        | Command::Delete(_) => {}
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
            if !o.warnings.is_empty() {
                r["warnings"] = json!(o.warnings);
            }
            r
        }
        Err(e) => json!({"error": e}),
    }
}

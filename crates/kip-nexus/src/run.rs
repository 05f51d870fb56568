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

use kip_lang::ast::{Command, CommandKind, FindQuery};
use kip_lang::{ErrorCode, KipError};
use kip_store::ElementId;
use serde_json::{Value as Json, json};

use crate::graph::{Graph, Result, TxnError};
use crate::kml::{self, BeforeImage, Stats};
use crate::trace::{self, Append, CommandRecord, TraceNote};
use crate::{KnownConcepts, Nexus, export, kql, meta};

/// Who sent a command: recorded in the change log so that other processes
/// can tell their own writes from others'.
#[derive(Clone, Debug)]
pub struct Origin {
    pub name: String,
}

impl Origin {
    pub fn new(name: impl Into<String>) -> Origin {
        Origin { name: name.into() }
    }
}

impl Default for Origin {
    fn default() -> Origin {
        Origin::new("library")
    }
}

/// Whether a run's writes are kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Run and commit.
    #[default]
    Commit,
    /// Validate reads against the schema without running them; execute
    /// writes exactly in a transaction that is then aborted (a preview).
    DryRun,
}

impl Mode {
    /// [`Mode::DryRun`] when `dry_run`, else [`Mode::Commit`].
    pub fn dry_run_if(dry_run: bool) -> Mode {
        if dry_run { Mode::DryRun } else { Mode::Commit }
    }
}

/// How to run commands.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub mode: Mode,
    /// Profile FIND queries (see `explain`).
    pub explain: bool,
    /// Who the change log says wrote.
    pub origin: Origin,
    /// Who the cognitive trace says acted, and what it adds.
    pub trace: TraceNote,
    /// Concepts the caller has already looked up, and the change-log
    /// sequence number the write must find for them to hold (see
    /// [`KnownConcepts`]).
    pub known: Option<(std::sync::Arc<KnownConcepts>, u64)>,
    /// The caller runs the commands again another way if this write fails
    /// (and that run is traced): [`Nexus::run_parts`] then leaves its
    /// failure out of the trace, which would otherwise hold it twice.
    pub retried_on_failure: bool,
}

impl RunOptions {
    /// Committing runs on behalf of `origin`.
    pub fn new(origin: Origin) -> RunOptions {
        RunOptions {
            origin,
            ..RunOptions::default()
        }
    }

    pub fn with_mode(mut self, mode: Mode) -> RunOptions {
        self.mode = mode;
        self
    }

    pub fn with_explain(mut self, explain: bool) -> RunOptions {
        self.explain = explain;
        self
    }

    pub fn with_trace(mut self, trace: TraceNote) -> RunOptions {
        self.trace = trace;
        self
    }

    /// Writes may take concept ids from `known` if the last change-log
    /// entry they find is `change_seq` (see [`KnownConcepts`]).
    pub fn with_known(
        mut self,
        known: std::sync::Arc<KnownConcepts>,
        change_seq: u64,
    ) -> RunOptions {
        self.known = Some((known, change_seq));
        self
    }

    /// See [`RunOptions::retried_on_failure`].
    pub fn retried_on_failure(mut self) -> RunOptions {
        self.retried_on_failure = true;
        self
    }

    /// The concepts a write in `txn` may take from [`RunOptions::known`].
    fn known_in(
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

    /// Who the trace names: the note's originator, else the origin.
    pub fn originator(&self) -> &str {
        self.trace
            .originator
            .as_deref()
            .unwrap_or(&self.origin.name)
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

/// One part of a text too large to hold at once (see [`Nexus::run_parts`]):
/// whole commands, parsed and bound, except that its first command may
/// continue the previous part's last UPSERT and its last may go on in the
/// next part.
#[derive(Debug)]
pub struct Part {
    /// The text the commands' spans point into (shared: the parts of a
    /// bundle all point into the whole file).
    pub text: std::sync::Arc<str>,
    pub commands: Vec<Command>,
    /// The first command is an UPSERT that continues the previous part's
    /// last one: the handles that one defined are still defined.
    pub continues: bool,
}

/// How [`Nexus::run_parts`] asks for parts: `(graph, n)` asks for part `n`
/// (0 starts over from the first: a write whose map had to grow runs
/// again), checked against `graph`, the write's state before the part
/// (every earlier part applied). `Ok(None)` after the last part; an error
/// stops the run and undoes every part (it is the caller's to report, as a
/// capsule's check errors are: the trace records failures of the write
/// itself).
pub type NextPart<'a> =
    dyn FnMut(&Graph<'_>, usize) -> std::result::Result<Option<Part>, KipError> + 'a;

/// One text of a group write (see [`Nexus::run_group`]): UPSERTs only,
/// parsed and bound, with the options it would run with on its own.
#[derive(Debug)]
pub struct GroupText {
    pub text: String,
    pub commands: Vec<Command>,
    pub options: RunOptions,
    /// Where the syntax tree goes once the text is written, to be freed
    /// there rather than on the writer's thread, which holds the write
    /// lock (freeing a 20,000-link capsule's tree took 6% of a bulk
    /// import's writer; a pipelined import frees it on its reader's
    /// thread, which has time to spare). `None`: freed here.
    pub retire: Option<std::sync::mpsc::Sender<Vec<Command>>>,
}

/// How [`Nexus::run_group`] asks for texts: `(n, pending)` asks for text
/// `n` (0 first) when `pending` links and concepts' search documents are
/// decided and not written yet; `None` ends the group.
pub type NextText<'a> = dyn FnMut(usize, usize) -> Option<GroupStep> + 'a;

/// What [`NextText`] hands a group write.
#[derive(Debug)]
pub enum GroupStep {
    /// The next text.
    Text(Box<GroupText>),
    /// The next text is not ready yet: the group writes the links it has
    /// decided so far (what it would otherwise write at its end; their
    /// search documents still wait for it, being cheaper in one batch), or
    /// when there are none the search documents, then asks again. A
    /// pipelined import asks for this while its reader is still checking
    /// the next file, so the writer works instead of waiting.
    NotReady,
}

/// What a group write keeps of a text once its commands ran: its trace
/// entry's and change-log entry's makings.
struct Ran {
    options: RunOptions,
    verbs: String,
    head: String,
    commands: usize,
    stats: Stats,
    started: std::time::Instant,
}

/// What the end of a write needs to know about it (see
/// `Nexus::log_and_trace`).
struct EndOfWrite<'a> {
    options: &'a RunOptions,
    traced: Traced<'a>,
    commit: bool,
    started: std::time::Instant,
}

/// How a write is traced (see `Nexus::write_traced`): the trace's
/// settings when it is, and the closed read folds its entry writes first.
#[derive(Clone, Copy)]
struct Traced<'a> {
    settings: Option<&'a trace::TraceSettings>,
    folds: &'a [trace::Fold],
}

impl Traced<'_> {
    fn on(&self) -> bool {
        self.settings.is_some()
    }
}

/// What a run hands one command of a write besides the command: the
/// handles an UPSERT continues with (a streamed part's), concepts the
/// caller looked up ([`KnownConcepts`], when they hold), and whether a
/// read among the writes is profiled.
struct Given<'x> {
    handles: Option<&'x mut HashMap<String, ElementId>>,
    known: Option<&'x KnownConcepts>,
    /// Profile a FIND among the writes (see `explain`).
    explain: bool,
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
    /// Runs parsed, bound commands (`source` is the text their spans point
    /// into): reads in one read transaction, writes in one write transaction
    /// for all of them. A capsule of several commands returns each one's
    /// response in a list.
    pub fn run(&self, source: &str, commands: &[Command], options: &RunOptions) -> Result<Outcome> {
        self.run_with_progress(source, commands, options, &|_| {})
    }

    /// [`Nexus::run`], calling `progress` with the number of commands done
    /// after each write's command: the capsule pipeline's progress while it
    /// applies a file (one transaction, so nothing shows before its end).
    /// It is called again from 0 when the write is re-run (the map grew).
    pub fn run_with_progress(
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
                self.trace_read(source, options, outcome.as_ref().err());
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

    /// Runs the parts `next` gives, in order, in one write transaction: a
    /// text too large to parse whole (a streamed capsule) applied all or
    /// nothing, like [`Nexus::run`] applies one text. `head` is what the
    /// trace records as the command's text (its start). The outcome has
    /// the counts; the results of the single commands are not kept.
    pub fn run_parts(
        &self,
        head: &str,
        options: &RunOptions,
        next: &mut NextPart<'_>,
    ) -> Result<Outcome> {
        let commit = options.mode == Mode::Commit;
        let started = std::time::Instant::now();
        // Whether `next` stopped the write: its error is the caller's to
        // report, not a failed write to trace.
        let stopped = std::cell::Cell::new(false);
        let run = |txn: &mut kip_store::RwTxn<'_>,
                   traced: Traced<'_>|
         -> std::result::Result<Outcome, TxnError> {
            let mut total = Stats::default();
            let mut changes = BeforeImage::default();
            let mut verbs: Vec<&'static str> = Vec::new();
            let mut handles: HashMap<String, ElementId> = HashMap::new();
            let known = options.known_in(&self.store, txn)?;
            let mut n = 0;
            loop {
                let part = {
                    let g = Graph::new(&self.store, txn);
                    next(&g, n).map_err(|e| {
                        stopped.set(true);
                        TxnError(e)
                    })?
                };
                let Some(part) = part else { break };
                n += 1;
                for (i, c) in part.commands.iter().enumerate() {
                    trace::add_verb(&mut verbs, c);
                    // An UPSERT starts with no handles unless it continues
                    // the previous part's last; the last one's are kept
                    // for the next part.
                    if matches!(c, Command::Upsert(_)) && !(i == 0 && part.continues) {
                        handles.clear();
                    }
                    let outcome = self.command_in_write(
                        txn,
                        &part.text,
                        c,
                        commit,
                        traced.on().then_some(&mut changes),
                        Given {
                            handles: Some(&mut handles),
                            known,
                            explain: false,
                        },
                    )?;
                    total += outcome.stats;
                }
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
                trace::join_verbs(&verbs),
                head,
                total,
                &mut changes,
            )?;
            let mut out = Outcome::of(json!({"parts": n, "stats": total}));
            out.stats = total;
            if !commit {
                mark_dry_run(&mut out.result);
            }
            Ok(out)
        };
        let outcome = self.write_traced(commit, run);
        if let Err(e) = &outcome
            && commit
            && !stopped.get()
            && !options.retried_on_failure
        {
            self.trace_failure(head, &[], options, e);
        }
        outcome
    }

    /// Runs the texts `next` gives, each as [`Nexus::run`] would commit it
    /// on its own (its own change-log entry, its own TRACE entry with its
    /// before-image), but all in one write transaction, and with the links
    /// and search documents they defer written together at the end: one
    /// sorted batch instead of one per text, which is what makes many
    /// small files as fast as one large one. Only UPSERTs are grouped
    /// (anything else is refused before anything is written). Returns each
    /// text's counts. Any error undoes the whole group and is the caller's
    /// to handle (a capsule import then applies the texts one by one, so
    /// each still lands whole or not at all and reports its own errors);
    /// so is a write the map had to grow for (the texts are gone by then).
    pub fn run_group(&self, next: &mut NextText<'_>) -> Result<Vec<Stats>> {
        let ran_once = std::cell::Cell::new(false);
        let mut recent =
            (self.recent_groups.lock()).unwrap_or_else(std::sync::PoisonError::into_inner);
        // The sequence numbers before and after, and the links created.
        let mut created = None;
        let run = |txn: &mut kip_store::RwTxn<'_>,
                   traced: Traced<'_>|
         -> std::result::Result<Vec<Stats>, TxnError> {
            if ran_once.replace(true) {
                return Err(TxnError(KipError::new(
                    ErrorCode::InternalError,
                    "a group write cannot run again once its texts are gone",
                )));
            }
            let before = self.store.last_change_seq(txn)?;
            let mut carry = kml::Carry::new(&recent);
            let mut texts: Vec<Ran> = Vec::new();
            while let Some(step) = next(texts.len(), carry.pending()) {
                let t = match step {
                    GroupStep::Text(t) => *t,
                    GroupStep::NotReady => {
                        let w = kml::Writer::new(&self.store, txn, "", now());
                        carry = w.write_decided(carry)?;
                        continue;
                    }
                };
                let started = std::time::Instant::now();
                if t.options.mode != Mode::Commit
                    || t.commands.iter().any(|c| !matches!(c, Command::Upsert(_)))
                {
                    return Err(TxnError(KipError::new(
                        ErrorCode::InternalError,
                        "a group write runs committed UPSERTs only",
                    )));
                }
                let known = t.options.known_in(&self.store, txn)?;
                let mut stats = Stats::default();
                for c in &t.commands {
                    let Command::Upsert(u) = c else { continue };
                    let mut w = kml::Writer::new(&self.store, txn, &t.text, now());
                    w.known = known;
                    w.recent = Some(&recent);
                    if traced.on() {
                        w.collect_before_image();
                    }
                    w.resume(carry);
                    w.upsert(u)?;
                    stats += w.stats;
                    carry = w.suspend()?;
                }
                carry.forget_concepts();
                let mut options = t.options;
                // What the checks ahead found is this text's alone: not
                // kept with the group's other texts until its end.
                options.known = None;
                texts.push(Ran {
                    verbs: trace::verbs(&t.commands),
                    head: trace::kept_head(&t.text).to_owned(),
                    commands: t.commands.len(),
                    options,
                    stats,
                    started,
                });
                if let Some(retire) = t.retire {
                    // Freed here if the receiver is gone.
                    let _ = retire.send(t.commands);
                }
            }
            let w = kml::Writer::new(&self.store, txn, "", now());
            let mut carry = w.finish_group(carry)?;
            let written = carry.take_written();
            let mut images = carry.into_images().into_iter();
            for (i, t) in texts.iter().enumerate() {
                let mut image = BeforeImage::default();
                for _ in 0..t.commands {
                    image.extend(images.next().unwrap_or_default());
                }
                // The closed read folds go with the first entry.
                let write = EndOfWrite {
                    options: &t.options,
                    traced: if i == 0 {
                        traced
                    } else {
                        Traced {
                            folds: &[],
                            ..traced
                        }
                    },
                    commit: true,
                    started: t.started,
                };
                self.log_and_trace(txn, &write, t.verbs.clone(), &t.head, t.stats, &mut image)?;
            }
            created = Some((before, self.store.last_change_seq(txn)?, written));
            Ok(texts.iter().map(|t| t.stats).collect())
        };
        let outcome = self.write_traced(true, run);
        // Committed: the next groups may count on what this one created.
        if outcome.is_ok()
            && let Some((before, after, written)) = created
        {
            recent.record(before, after, written);
        }
        outcome
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

    /// Runs `run` in a write transaction ([`kip_store::Store::write_with`]:
    /// committed or, for a preview, aborted), traced when it commits and
    /// the trace is on. The closed read folds are taken before the
    /// transaction, which may run twice, and put back if the write fails.
    fn write_traced<T>(
        &self,
        commit: bool,
        mut run: impl FnMut(&mut kip_store::RwTxn<'_>, Traced<'_>) -> std::result::Result<T, TxnError>,
    ) -> Result<T> {
        let settings = self.tracer.settings();
        let tracing = commit && settings.enabled;
        let folds = if tracing {
            self.tracer.take_folds(true)
        } else {
            Vec::new()
        };
        let traced = Traced {
            settings: tracing.then_some(&settings),
            folds: &folds,
        };
        let outcome = self
            .store
            .write_with(commit, |txn| run(txn, traced))
            .map_err(|e| e.0);
        if outcome.is_err() {
            self.tracer.restore_folds(folds);
        }
        outcome
    }

    /// The end of a write's transaction: the change-log entry of a
    /// committed write that changed something, and when tracing the closed
    /// read folds and the write's TRACE entry (its verbs, its text, its
    /// counts and the changes it collected).
    fn log_and_trace(
        &self,
        txn: &mut kip_store::RwTxn<'_>,
        write: &EndOfWrite<'_>,
        verbs: String,
        text: &str,
        stats: Stats,
        changes: &mut BeforeImage,
    ) -> std::result::Result<(), TxnError> {
        let options = write.options;
        let mut change_seq = None;
        if stats.changed() && write.commit {
            let entry = json!({
                "origin": options.origin.name,
                "pid": std::process::id(),
                "at": now(),
                "stats": stats,
            });
            change_seq = Some(self.store.append_change(txn, &entry)?);
        }
        if let Some(settings) = write.traced.settings {
            let append = Append {
                store: &self.store,
                settings,
                at: now(),
            };
            trace::Tracer::write_folds(&append, txn, write.traced.folds)?;
            append.command(
                txn,
                CommandRecord {
                    originator: options.originator(),
                    note: &options.trace,
                    verbs,
                    text,
                    stats,
                    changes: std::mem::take(&mut changes.changes),
                    created: std::mem::take(&mut changes.created),
                    change_seq,
                    duration: write.started.elapsed(),
                },
            )?;
        }
        Ok(())
    }

    /// Folds a read into the trace; writes the closed folds when one has
    /// waited a whole window (a small write of its own, at most once a
    /// window).
    fn trace_read(&self, source: &str, options: &RunOptions, error: Option<&KipError>) {
        if !self.tracer.settings().enabled {
            return;
        }
        let code = error.map(|e| e.code.as_str().to_owned());
        if self.tracer.fold_read(options.originator(), source, code) {
            self.flush_trace_folds(false);
        }
    }

    /// Writes the folded reads (all of them, or only those whose window
    /// closed) in a write of their own. Tracing must never fail a read, so
    /// a failure puts them back for the next write.
    pub(crate) fn flush_trace_folds(&self, all: bool) {
        let folds = self.tracer.take_folds(all);
        if folds.is_empty() {
            return;
        }
        let settings = self.tracer.settings();
        let written = self.store.write(|txn| {
            let append = Append {
                store: &self.store,
                settings: &settings,
                at: now(),
            };
            trace::Tracer::write_folds(&append, txn, &folds).map_err(TxnError)
        });
        if written.is_err() {
            self.tracer.restore_folds(folds);
        }
    }

    /// The TRACE entry of a write that failed: nothing was committed, so it
    /// goes in a small write of its own.
    fn trace_failure(
        &self,
        source: &str,
        commands: &[Command],
        options: &RunOptions,
        e: &KipError,
    ) {
        let settings = self.tracer.settings();
        if !settings.enabled {
            return;
        }
        let _ = self.store.write(|txn| {
            let append = Append {
                store: &self.store,
                settings: &settings,
                at: now(),
            };
            append
                .failure(
                    txn,
                    options.originator(),
                    &options.trace,
                    &trace::verbs(commands),
                    source,
                    e,
                )
                .map_err(TxnError)
        });
    }
}

impl Nexus {
    /// Runs one command of a write in `txn`: a read as in a read
    /// transaction, a KML command with [`Nexus::write_command`].
    fn command_in_write(
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
                let g = Graph::new(&self.store, txn);
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
        Command::Search(s) => Ok(Outcome::of(meta::search_command(g, source, s)?)),
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
            r
        }
        Err(e) => json!({"error": e}),
    }
}

/// One consistent read snapshot that runs many parsed, bound FIND queries:
/// what a caller needs when it evaluates one query for many instances and
/// time buckets (the logic-property resolver, `kip-logic`) and every answer
/// must come from the same data. Obtained from [`Nexus::read_queries`].
pub struct Snapshot<'s, 't> {
    graph: &'s Graph<'t>,
    secret: u64,
}

impl std::fmt::Debug for Snapshot<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").finish_non_exhaustive()
    }
}

impl<'t> Snapshot<'_, 't> {
    /// The read view of the snapshot (names, records, counters).
    pub fn graph(&self) -> &Graph<'t> {
        self.graph
    }

    /// Runs one bound FIND (`source` is the text its spans point into) and
    /// returns its `result` value: a scalar for a single aggregate. One page
    /// only; the cursor of a longer result is dropped.
    pub fn find(&self, source: &str, query: &FindQuery) -> Result<Json> {
        Ok(kql::find(self.graph, source, query, self.secret, false)?.result)
    }
}

impl Nexus {
    /// Runs `f` with a [`Snapshot`] of one read transaction: every FIND it
    /// runs, and every read of its [`Snapshot::graph`], sees the same data.
    /// Keep `f` short: a long read transaction holds old pages in the file.
    pub fn read_queries<T>(&self, f: impl FnOnce(&Snapshot<'_, '_>) -> Result<T>) -> Result<T> {
        let secret = self.secret;
        self.read(|graph| f(&Snapshot { graph, secret }))
    }
}

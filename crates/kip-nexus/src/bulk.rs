//! The bulk writes of an import: the one seam `kip-capsule`'s import
//! pipeline writes through, and everything its optimistic checks need.
//!
//! [`Nexus::bulk`] opens a [`Bulk`]: [`Bulk::run`] applies one text with
//! progress, [`Bulk::parts`] applies a text too large to hold at once part
//! by part in one transaction, and [`Bulk::group`] applies many small
//! additive texts in one transaction with their links and search
//! documents written together. The pipeline checks files ahead of the
//! writer on another thread, in an older snapshot; what those checks found
//! travels with the text ([`KnownConcepts`], trusted only if the writer
//! finds the change log where the checks left it) and from file to file
//! ([`FoundConcepts`]). The writer remembers what its last groups created
//! (`kml::RecentGroups`) so checks made before them still spare look-ups.
//!
//! Every write here is traced and logged exactly as [`Nexus::run`]'s.

use std::collections::HashMap;

use kip_lang::ast::Command;
use kip_lang::{ErrorCode, KipError};
use kip_store::{ConceptId, ElementId};
use serde_json::json;

use crate::clock::now;
use crate::graph::{Graph, Result, TxnError};
use crate::kml::{self, BeforeImage, Stats};
use crate::nexus::Nexus;
use crate::options::{Mode, RunOptions};
use crate::run::{Given, Outcome, mark_dry_run};
use crate::trace;
use crate::write::{EndOfWrite, Traced};

pub use crate::known::{KnownConcepts, LinkKey};

/// The bulk writes of one nexus (see the module's documentation).
#[derive(Clone, Copy)]
pub struct Bulk<'n> {
    nexus: &'n Nexus,
}

impl std::fmt::Debug for Bulk<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bulk").finish_non_exhaustive()
    }
}

impl Nexus {
    /// The bulk writes of this nexus: an import's seam.
    pub fn bulk(&self) -> Bulk<'_> {
        Bulk { nexus: self }
    }
}

impl Bulk<'_> {
    /// [`Nexus::run`], calling `progress` with the number of commands done
    /// after each write's command: the capsule pipeline's progress while it
    /// applies a file (one transaction, so nothing shows before its end).
    /// It is called again from 0 when the write is re-run (the map grew).
    pub fn run(
        &self,
        source: &str,
        commands: &[Command],
        options: &RunOptions,
        progress: &dyn Fn(usize),
    ) -> Result<Outcome> {
        self.nexus
            .run_reporting(source, commands, options, progress)
    }

    /// Runs the parts `next` gives, in order, in one write transaction: a
    /// text too large to parse whole (a streamed capsule) applied all or
    /// nothing, like [`Nexus::run`] applies one text. `head` is what the
    /// trace records as the command's text (its start). The outcome has
    /// the counts; the results of the single commands are not kept.
    pub fn parts(
        &self,
        head: &str,
        options: &RunOptions,
        next: &mut NextPart<'_>,
    ) -> Result<Outcome> {
        self.nexus.run_parts(head, options, next)
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
    pub fn group(&self, next: &mut NextText<'_>) -> Result<Vec<Stats>> {
        self.nexus.run_group(next)
    }
}

/// One part of a text too large to hold at once (see [`Bulk::parts`]):
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

/// How [`Bulk::parts`] asks for parts: `(graph, n)` asks for part `n`
/// (0 starts over from the first: a write whose map had to grow runs
/// again), checked against `graph`, the write's state before the part
/// (every earlier part applied). `Ok(None)` after the last part; an error
/// stops the run and undoes every part (it is the caller's to report, as a
/// capsule's check errors are: the trace records failures of the write
/// itself).
pub type NextPart<'a> =
    dyn FnMut(&Graph<'_>, usize) -> std::result::Result<Option<Part>, KipError> + 'a;

/// One text of a group write (see [`Bulk::group`]): UPSERTs only,
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

/// How [`Bulk::group`] asks for texts: `(n, pending)` asks for text
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

impl Nexus {
    /// The body of [`Bulk::parts`].
    pub(crate) fn run_parts(
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
                            owner: options.owner,
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

    /// The body of [`Bulk::group`].
    pub(crate) fn run_group(&self, next: &mut NextText<'_>) -> Result<Vec<Stats>> {
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
                carry = match step {
                    GroupStep::Text(t) => {
                        let (ran, carry) = self.group_text(txn, *t, carry, &recent, traced.on())?;
                        texts.push(ran);
                        carry
                    }
                    GroupStep::NotReady => {
                        let w = kml::Writer::new(&self.store, txn, "", now());
                        w.write_decided(carry)?
                    }
                };
            }
            let written = self.end_group(txn, carry, &texts, traced)?;
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

    /// One text of a group write: its UPSERTs, each run by a writer that
    /// takes the group up where the last one left it (see [`kml::Carry`]),
    /// collecting their before-images when `traced`. Returns what the
    /// text's change-log and TRACE entries are made of, and the carry.
    fn group_text(
        &self,
        txn: &mut kip_store::RwTxn<'_>,
        t: GroupText,
        mut carry: kml::Carry,
        recent: &kml::RecentGroups,
        traced: bool,
    ) -> std::result::Result<(Ran, kml::Carry), TxnError> {
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
            w.bootstrap = t.options.owner;
            w.recent = Some(recent);
            if traced {
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
        let ran = Ran {
            verbs: trace::verbs(&t.commands),
            head: trace::kept_head(&t.text).to_owned(),
            commands: t.commands.len(),
            options,
            stats,
            started,
        };
        if let Some(retire) = t.retire {
            // Freed here if the receiver is gone.
            let _ = retire.send(t.commands);
        }
        Ok((ran, carry))
    }

    /// The end of a group write: writes everything its texts deferred (see
    /// [`kml::Carry`]), then each text's change-log and TRACE entries with
    /// its before-image, in order. Returns the links the group created.
    fn end_group(
        &self,
        txn: &mut kip_store::RwTxn<'_>,
        carry: kml::Carry,
        texts: &[Ran],
        traced: Traced<'_>,
    ) -> std::result::Result<kml::WrittenLinks, TxnError> {
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
        Ok(written)
    }
}

/// Concepts the checks of earlier files of one import found stored, by
/// type and name: the reader of a pipelined import checks file after file
/// against the nexus as the writer leaves it, and a bulk import's files
/// name the same concepts again and again (the 1M benchmark's 50 link
/// files look 200,000 concepts up 1.75 million times). UPSERTs never
/// delete or rename, so a concept found in one snapshot has the same id in
/// every later one as long as only additive files of the import were
/// written in between: the caller forgets everything otherwise
/// ([`FoundConcepts::start`]), and a check that used an entry counts as
/// made in the oldest snapshot it remembers ([`FoundConcepts::since`]).
/// Absent concepts are never remembered (a later file may create them).
#[derive(Debug, Default)]
pub struct FoundConcepts {
    by_type: HashMap<String, HashMap<Box<str>, ConceptId>>,
    len: usize,
    since: u64,
}

impl FoundConcepts {
    /// At most this many are remembered (~15 MB; the 1M benchmark has
    /// 200,000 concepts), so memory stays bounded at any size.
    const MOST: usize = 250_000;

    /// Starts a file's checks in the snapshot at `at`: what was found
    /// before `clean_since` (a write other than an additive file of this
    /// import came after it) is forgotten.
    pub fn start(&mut self, at: u64, clean_since: u64) {
        if self.len == 0 || self.since < clean_since {
            self.by_type.clear();
            self.len = 0;
            self.since = at;
        }
    }

    /// The oldest snapshot an entry was found in.
    pub fn since(&self) -> u64 {
        self.since
    }

    /// The id found for `(ty, name)`, if one was.
    pub fn get(&self, ty: &str, name: &str) -> Option<ConceptId> {
        self.by_type.get(ty)?.get(name).copied()
    }

    /// Remembers that `(ty, name)` was found stored as `id` (unless full).
    pub fn insert(&mut self, ty: &str, name: &str, id: ConceptId) {
        if self.len >= Self::MOST {
            return;
        }
        let names = match self.by_type.get_mut(ty) {
            Some(names) => names,
            None => self.by_type.entry(ty.to_owned()).or_default(),
        };
        if names.insert(name.into(), id).is_none() {
            self.len += 1;
        }
    }
}

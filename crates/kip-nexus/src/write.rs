//! The end of every write, whichever way it ran ([`Nexus::run`], the
//! bulk writes of [`crate::bulk`]): its transaction, traced when it
//! commits ([`Nexus::write_traced`]); its change-log entry and its TRACE
//! entry with the before-image ([`Nexus::log_and_trace`]); a failed
//! write's entry and the folded reads' own small writes.

use kip_lang::KipError;
use kip_lang::ast::Command;
use serde_json::{Value as Json, json};

use crate::clock::now;
use crate::graph::{Result, TxnError};
use crate::kml::{BeforeImage, Stats};
use crate::nexus::Nexus;
use crate::options::RunOptions;
use crate::trace::{self, Append, CommandRecord};

/// What the end of a write needs to know about it (see
/// `Nexus::log_and_trace`).
pub(crate) struct EndOfWrite<'a> {
    pub options: &'a RunOptions,
    pub traced: Traced<'a>,
    pub commit: bool,
    pub started: std::time::Instant,
}

/// How a write is traced (see `Nexus::write_traced`): the trace's
/// settings when it is, and the closed read folds its entry writes first.
#[derive(Clone, Copy)]
pub(crate) struct Traced<'a> {
    pub settings: Option<&'a trace::TraceSettings>,
    pub folds: &'a [trace::Fold],
}

impl Traced<'_> {
    pub fn on(&self) -> bool {
        self.settings.is_some()
    }
}

impl Nexus {
    /// Runs `run` in a write transaction ([`kip_store::Store::write_with`]:
    /// committed or, for a preview, aborted), traced when it commits and
    /// the trace is on. The closed read folds are taken before the
    /// transaction, which may run twice, and put back if the write fails.
    pub(crate) fn write_traced<T>(
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
        let mut txn_id = None;
        let outcome = self
            .store
            .write_with(commit, |txn| {
                txn_id = Some(txn.id());
                self.sweep_starts.begin(txn.id());
                run(txn, traced)
            })
            .map_err(|e| e.0);
        // The hints of the sweeps this write ran count only once committed.
        self.sweep_starts.end(txn_id, commit && outcome.is_ok());
        if outcome.is_err() {
            self.tracer.restore_folds(folds);
        }
        outcome
    }

    /// The end of a write's transaction: the change-log entry of a
    /// committed write that changed something, and when tracing the closed
    /// read folds and the write's TRACE entry (its verbs, its text, its
    /// counts and the changes it collected).
    pub(crate) fn log_and_trace(
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
        let mut logged = None;
        if stats.changed() && write.commit {
            let entry = json!({
                "origin": options.origin.name,
                "originator": options.originator(),
                "pid": std::process::id(),
                "at": now(),
                "stats": stats,
            });
            change_seq = Some(self.store.append_change(txn, &entry)?);
            logged = change_seq.map(|seq| (seq, entry));
        }
        if let Some(settings) = write.traced.settings {
            let append = Append {
                store: &self.store,
                settings,
                at: now(),
            };
            trace::Tracer::write_folds(&append, txn, write.traced.folds)?;
            let traced = append.command(
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
            // The change names its trace entry, so a live view links to it.
            if let Some((seq, mut entry)) = logged {
                entry["trace"] = json!(traced.id);
                self.store.amend_change(txn, seq, &entry)?;
            }
        }
        Ok(())
    }

    /// Folds a read into the trace with the ids it returned (bounded: see
    /// `trace::Returned`); writes the closed folds when one has waited a
    /// whole window (a small write of its own, at most once a window).
    pub(crate) fn trace_read(
        &self,
        source: &str,
        options: &RunOptions,
        outcome: std::result::Result<&Json, &KipError>,
    ) {
        if !self.tracer.settings().enabled {
            return;
        }
        let (code, returned) = match outcome {
            Ok(result) => (None, trace::Returned::of(result)),
            Err(e) => (Some(e.code.as_str().to_owned()), trace::Returned::default()),
        };
        if self
            .tracer
            .fold_read(options.originator(), source, code, returned)
        {
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
    pub(crate) fn trace_failure(
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

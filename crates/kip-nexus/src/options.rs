//! How commands are run: [`RunOptions`] (commit or preview, who wrote,
//! what the trace adds, concepts looked up ahead), shared by the runs
//! (`run`, `bulk`) and the end of every write (`write`). The options only
//! describe; `run` decides what they mean for a transaction (e.g. when the
//! concepts looked up ahead still hold).

use crate::known::KnownConcepts;
use crate::trace::TraceNote;

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
    /// (and that run is traced): [`crate::bulk::Bulk::parts`] then leaves its
    /// failure out of the trace, which would otherwise hold it twice.
    pub retried_on_failure: bool,
    /// The nexus's owner applies this with the engine's own authority over
    /// the protected scope (BRIEF §3: an official Genesis refresh, a
    /// persona's `id` and `core_directives`). Only a host the owner runs
    /// sets it (`kip import --owner`); no agent-facing face can.
    pub owner: bool,
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

    /// Who the trace names: the note's originator, else the origin.
    pub fn originator(&self) -> &str {
        self.trace
            .originator
            .as_deref()
            .unwrap_or(&self.origin.name)
    }
}

//! A capsule's import once it is read: parse and bind ([`parse_kip`],
//! which needs no nexus, so a pipelined import runs it ahead), check the
//! ops against the nexus unless they were checked ahead, and apply.

use kip_lang::KipError;
use kip_nexus::{Nexus, Origin};
use serde_json::Map;

use crate::apply::{Reporter, apply, op_end, run_options};
use crate::model::Model;
use crate::ops;
use crate::report::{ImportError, ImportReport, Phase};
use crate::semantic::{Checker, KIP_ROLES};
use crate::text::LineIndex;

/// A capsule's commands, parsed and bound, or every error found doing so;
/// `items` is the number of commands when parsing succeeded.
pub(super) struct Parsed {
    pub(super) items: Option<usize>,
    pub(super) commands: Result<Vec<kip_lang::ast::Command>, Vec<ImportError>>,
    /// Checked ahead (see [`crate::import_paths_with`]): the change-log sequence
    /// number of the snapshot the capsule checks passed against.
    pub(super) checked_at: Option<u64>,
    /// The file only adds (UPSERTs of concepts and links, no schema
    /// definition, no `{id}` block, no delete): what it writes cannot turn
    /// a later file's passing checks into failing ones.
    pub(super) additive: bool,
    /// The stored concepts the checks ahead found, when they passed and the
    /// file is additive: the writer takes their ids instead of looking
    /// them up again while `checked_at` is trusted.
    pub(super) known: Option<std::sync::Arc<kip_nexus::bulk::KnownConcepts>>,
    /// The change-log sequence number the write should find (the one after
    /// the previous file): `known` holds only if it does, so another
    /// process's write in between is caught inside the write's transaction.
    pub(super) write_seq: Option<u64>,
}

/// Parses and binds a capsule: the part of an import that needs no nexus,
/// so [`crate::import_paths_with`] runs it for the next file while the nexus
/// applies the current one.
pub(super) fn parse_kip(text: &str) -> Parsed {
    let commands = match kip_lang::parse(text) {
        Ok(c) => c,
        Err(errors) => {
            return Parsed {
                items: None,
                commands: Err(errors.0.iter().flat_map(ImportError::from_kip).collect()),
                checked_at: None,
                additive: false,
                known: None,
                write_seq: None,
            };
        }
    };
    let items = Some(commands.len());
    let commands = kip_lang::bind(text, commands, &Map::new())
        .map_err(|errors| errors.0.iter().flat_map(ImportError::from_kip).collect());
    Parsed {
        items,
        commands,
        checked_at: None,
        additive: false,
        known: None,
        write_seq: None,
    }
}

/// Checks and applies a capsule (`parsed`: parsed, and perhaps checked,
/// ahead), every error into `report`.
pub(super) fn run_kip(
    nexus: &Nexus,
    text: &str,
    lines: &LineIndex,
    origin: &Origin,
    report: &mut ImportReport,
    parsed: Option<Parsed>,
    progress: &Reporter<'_>,
) -> Result<(), KipError> {
    let parsed = parsed.unwrap_or_else(|| parse_kip(text));
    progress.report(
        Phase::Parsing,
        text.len() as u64,
        text.len() as u64,
        text.len(),
    );
    if let Some(items) = parsed.items {
        report.items = items;
    }
    let commands = match parsed.commands {
        Ok(c) => c,
        Err(errors) => {
            report.add_errors_sorted(errors);
            return Ok(());
        }
    };
    // Checked ahead against a snapshot nothing has changed since but
    // additive files of the same import (see `import_paths_with`), or
    // checked now. The ops and the checker's tables are dropped before the
    // writer starts: they are needed only to report every problem at once,
    // and apply's transaction is where memory peaks.
    let known = if parsed.checked_at.is_some() {
        let n = commands.len() as u64;
        progress.report(Phase::Validating, n, n, text.len());
        parsed.known.zip(parsed.write_seq)
    } else {
        let ops = ops::lower_kip(&commands);
        let total = ops.len() as u64;
        let errors = nexus.read(|g| {
            let model = Model::from_graph(g)?;
            let mut checker = Checker::new(g, &model, text, lines, KIP_ROLES, false, &ops)
                .with_owner(progress.options.owner);
            for (i, op) in ops.iter().enumerate() {
                progress.report(Phase::Validating, i as u64, total, op_end(op));
                checker.op(op)?;
            }
            Ok(checker.errors)
        })?;
        if !errors.is_empty() {
            report.add_errors_sorted(errors);
            return Ok(());
        }
        progress.report(Phase::Validating, total, total, text.len());
        None
    };
    let mut run = run_options(origin, &report.file, progress.options);
    if let Some((known, seq)) = known {
        run = run.with_known(known, seq);
    }
    apply(
        nexus,
        text,
        &commands,
        commands.len(),
        &run,
        report,
        progress,
    )
}

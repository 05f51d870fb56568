//! A bundle's import once it is read: the piped import for a large one
//! ([`crate::piped`]), else read the items, check them against the
//! nexus, and apply them as commands.

use kip_lang::KipError;
use kip_nexus::{Nexus, Origin};

use crate::apply::{Reporter, apply, run_options};
use crate::bundle;
use crate::model::Model;
use crate::ops;
use crate::report::{ImportReport, Phase, Progress};
use crate::semantic::{BUNDLE_ROLES, Checker};
use crate::text::LineIndex;

/// Checks and applies a bundle, every error into `report`.
pub(super) fn run_yaml(
    nexus: &Nexus,
    text: &str,
    lines: &LineIndex,
    origin: &Origin,
    report: &mut ImportReport,
    progress: &Reporter<'_>,
) -> Result<(), KipError> {
    let live = Model::load(nexus)?;
    if crate::piped::run(nexus, text, lines, &live, origin, report, progress).is_some() {
        return Ok(());
    }
    let mut errors = Vec::new();
    // The YAML is parsed before its items are read, so the bytes are in.
    let mut on_progress = |p: Progress| progress.forward(p, text.len());
    let stored = |ty: &str, name: &str, key: &str| {
        nexus
            .read(|g| bundle::stored_attribute(g, ty, name, key))
            .unwrap_or(false)
    };
    let read = bundle::read(text, lines, &live, &stored, &mut errors, &mut on_progress);
    report.items = read.items;
    // The reader reported the items as it checked them; this pass is
    // quick next to it.
    let semantic = nexus.read(|g| {
        let mut checker = Checker::new(g, &live, text, lines, BUNDLE_ROLES, true, &read.ops)
            .with_owner(progress.options.owner);
        for op in &read.ops {
            checker.op(op)?;
        }
        Ok(checker.errors)
    })?;
    errors.extend(semantic);
    if !errors.is_empty() {
        report.add_errors_sorted(errors);
        return Ok(());
    }
    progress.report(
        Phase::Validating,
        read.items as u64,
        read.items as u64,
        text.len(),
    );
    let commands = ops::to_commands(&read.ops);
    let run = run_options(origin, &report.file, progress.options);
    apply(nexus, text, &commands, read.items, &run, report, progress)
}

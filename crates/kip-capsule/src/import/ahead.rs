//! The checks a pipelined import's reader makes ahead of the writer, on
//! its own thread: a capsule parsed, bound and checked against the nexus
//! as it is now, with what the checks found kept for the write (see
//! [`crate::import_paths_with`] for when the writer may trust them). It
//! writes nothing and decides nothing about when a check is trusted.

use std::sync::atomic::{AtomicU64, Ordering};

use kip_nexus::Nexus;
use kip_nexus::bulk::FoundConcepts;

use crate::model::Model;
use crate::ops::{self, Op};
use crate::semantic::{Checker, KIP_ROLES};
use crate::text::LineIndex;

use super::kip::{Parsed, parse_kip};

/// What the reader of a pipelined import keeps from one file to the
/// next: the concepts its checks found stored (see [`FoundConcepts`]),
/// and the writer's `clean_since`, before which they are forgotten.
pub(super) struct Ahead<'n> {
    nexus: &'n Nexus,
    found: FoundConcepts,
    clean_since: &'n AtomicU64,
    /// The import has the owner's authority (see `ImportOptions::owner`).
    owner: bool,
}

impl<'n> Ahead<'n> {
    pub(super) fn new(nexus: &'n Nexus, clean_since: &'n AtomicU64, owner: bool) -> Ahead<'n> {
        Ahead {
            nexus,
            found: FoundConcepts::default(),
            clean_since,
            owner,
        }
    }
}

/// [`parse_kip`], then the capsule checks against the nexus as it is now,
/// on the reader's thread: when they pass, the writer can skip them if
/// nothing but additive files of the same import was written since
/// (`checked_at`; see [`crate::import_paths_with`]). Failing checks are left for
/// the writer to run again against the state the file will meet.
pub(super) fn parse_and_check_kip(ahead: &mut Ahead<'_>, text: &str) -> Parsed {
    let nexus = ahead.nexus;
    let owner = ahead.owner;
    let mut parsed = parse_kip(text);
    if let Ok(commands) = &parsed.commands {
        let lines = LineIndex::new(text);
        let upserts_only = commands
            .iter()
            .all(|c| matches!(c, kip_lang::ast::Command::Upsert(_)));
        // A capsule that defines no schema is lowered and checked a few
        // thousand items at a time (see `ops::Lowering`).
        let (all_ops, mut lowering) = if ops::defines_schema(commands) {
            (Some(ops::lower_kip(commands)), None)
        } else {
            (None, Some(ops::Lowering::new(commands)))
        };
        let mut additive_ops = all_ops.as_deref().is_none_or(additive);
        let found = &mut ahead.found;
        let clean_since = ahead.clean_since.load(Ordering::Relaxed);
        let checked = nexus.read(|g| {
            let at = g.change_seq()?;
            found.start(at, clean_since);
            let since = found.since();
            let model = Model::from_graph(g)?;
            let definitions = all_ops.as_deref().unwrap_or_default();
            let mut checker = Checker::new(g, &model, text, &lines, KIP_ROLES, false, definitions)
                .with_found(found)
                .with_owner(owner);
            // The first error ends the checks ahead: a failing check is
            // run again by the writer, against the state the file will
            // meet (an earlier file of the import may create what this one
            // names), so every further error and its "did you mean" would
            // be work thrown away — for a file of links to concepts that
            // the file before it creates, the whole file's.
            for op in definitions {
                checker.op(op)?;
                if !checker.errors.is_empty() {
                    return Ok(None);
                }
            }
            if let Some(lowering) = &mut lowering {
                let mut ops = Vec::new();
                while lowering.next(CHECK_ITEMS, &mut ops) {
                    additive_ops &= additive(&ops);
                    for op in &ops {
                        checker.op(op)?;
                        if !checker.errors.is_empty() {
                            return Ok(None);
                        }
                    }
                }
            }
            let additive = upserts_only && additive_ops;
            if !checker.errors.is_empty() {
                return Ok(None);
            }
            let known = additive.then(|| {
                let mut known = checker.known_concepts();
                if let Some(links) = checker.checked_links() {
                    known.set_links(at, links.iter().copied());
                }
                std::sync::Arc::new(known)
            });
            Ok(Some((since, known)))
        });
        // A check that took concepts earlier files found counts as made
        // in the oldest snapshot they were found in.
        if let Ok(Some((since, known))) = checked {
            parsed.checked_at = Some(since);
            parsed.known = known;
        }
        // Known once every item is lowered (the checks ran to the end).
        parsed.additive = upserts_only && additive_ops && lowering.is_none_or(|l| l.done());
    }
    parsed
}

/// How many items of a capsule are lowered and checked at a time (see
/// `ops::Lowering`).
const CHECK_ITEMS: usize = 2_048;

/// Whether an UPSERT-only file's ops only add concepts and links that are
/// not schema: writing them cannot make a passing check of a later file
/// fail (names stay, types and signatures stay). Other commands lower to
/// no ops; the caller requires every command to be an UPSERT.
fn additive(ops: &[Op]) -> bool {
    ops.iter().all(|op| match op {
        Op::Concept { ty, action, .. } => {
            *action == ops::Action::Upsert
                && ty != kip_nexus::CONCEPT_TYPE
                && ty != kip_nexus::PROPOSITION_TYPE
        }
        Op::Link { action, .. } => *action == ops::Action::Upsert,
        Op::ById { .. } | Op::Placeholder { .. } => false,
    })
}

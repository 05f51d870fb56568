//! A large bundle read and applied at once: this thread parses, reads and
//! checks the items while another applies what is already checked, in one
//! write transaction (all or nothing, as every import).
//!
//! The reading side is [`bundle::stream`] (items handed over as the YAML
//! parser completes them) and the same [`Checker`] the whole-file import
//! runs, fed op by op against the snapshot taken before the write; the
//! applying side is [`kip_nexus::bulk::Bulk::parts`], which asks for the next part when
//! it has applied the last. On 2 cores the file then takes about as long as
//! its slower half (the writer) instead of the sum of both.
//!
//! The fast path only ever succeeds where the whole-file import would have
//! written the same thing: any problem — an item with an error, a bundle
//! whose `metadata` follows its `items` or that defines a type after other
//! items, a write the nexus refuses, a map that had to grow — undoes
//! everything it applied and declines, and the caller imports the file
//! whole, which reports exactly what it always has.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use kip_lang::{ErrorCode, KipError};
use kip_nexus::bulk::Part;
use kip_nexus::{Graph, Nexus, Origin};

use crate::apply::{Reporter, op_end, run_options};
use crate::bundle::{self, Streamed};
use crate::model::Model;
use crate::ops::{self, Op};
use crate::report::{ImportReport, Phase};
use crate::semantic::{BUNDLE_ROLES, Checker};
use crate::text::LineIndex;

/// Bundles from this size on are read and applied at once; below it the
/// second thread is not worth its start (a bundle under 1 MiB imports in
/// well under a tenth of a second).
pub(crate) const MIN_BYTES: usize = 1 << 20;

/// Items per part: small enough for the writer to start early, large
/// enough that a part's flush (links, search documents) stays batched.
const PART_ITEMS: usize = 4096;

/// A message to the writer: the next part, and how far the file is read
/// at its end; `None` after the last.
type Message = Option<(Part, Mark)>;

/// A point in the file: items before it, and its byte offset.
#[derive(Clone, Copy, Default)]
struct Mark {
    items: usize,
    bytes: usize,
}

/// How far the writer has got: the [`Mark`] at the end of the parts it
/// has applied (what the progress bar shows, the writer being the slower
/// side).
#[derive(Default)]
struct Written {
    items: AtomicUsize,
    bytes: AtomicUsize,
}

impl Written {
    fn set(&self, at: Mark) {
        self.items.store(at.items, Ordering::Relaxed);
        self.bytes.store(at.bytes, Ordering::Relaxed);
    }

    /// Reports it: items written of `total` (0 while unknown), and the
    /// bytes of the file they came from.
    fn report(&self, progress: &Reporter<'_>, total: usize) {
        let items = self.items.load(Ordering::Relaxed) as u64;
        let bytes = self.bytes.load(Ordering::Relaxed);
        progress.report(Phase::Applying, items, total as u64, bytes);
    }
}

/// Imports the bundle `text` (already known to be YAML) through the two
/// threads, `live` being the nexus's schema; `None` when it declined,
/// having written nothing.
pub(crate) fn run(
    nexus: &Nexus,
    text: &str,
    lines: &LineIndex,
    live: &Model,
    origin: &Origin,
    report: &mut ImportReport,
    progress: &Reporter<'_>,
) -> Option<()> {
    if text.len() < MIN_BYTES {
        return None;
    }
    // A map that fills mid-write makes the writer run again, which this
    // path cannot (its parts are gone): room for the whole file first.
    nexus.reserve((text.len() as u64).saturating_mul(12));
    let run = run_options(origin, &report.file, progress.options).retried_on_failure();
    let shared: Arc<str> = Arc::from(text);
    // Unbounded: the reader never waits for the writer, so its snapshot
    // (held until the whole file is read) cannot keep the writer waiting
    // on a map growth that waits for the snapshot to end.
    let (to_writer, parts) = mpsc::channel::<Message>();
    let written = Written::default();
    std::thread::scope(|s| {
        let writer = s.spawn(|| apply(nexus, text, &run, parts, &written));
        let read = nexus.read(|g| {
            Ok(read_and_check(
                g, text, lines, live, &shared, &to_writer, &written, progress,
            ))
        });
        let items = match read {
            Ok(Streamed::Done(items)) if to_writer.send(None).is_ok() => Some(items),
            _ => None,
        };
        drop(to_writer);
        // The writer's tail: how far it gets, of every item.
        while let Some(total) = items
            && !writer.is_finished()
        {
            std::thread::sleep(Duration::from_millis(20));
            written.report(progress, total);
        }
        let outcome = writer.join().ok()?.ok()?;
        let items = items?;
        report.items = items;
        report.stats = outcome.stats;
        let n = items as u64;
        progress.report(Phase::Applying, n, n, text.len());
        Some(())
    })
}

/// The writer's side: the parts as they come, in one write.
fn apply(
    nexus: &Nexus,
    text: &str,
    run: &kip_nexus::RunOptions,
    parts: mpsc::Receiver<Message>,
    written: &Written,
) -> kip_nexus::Result<kip_nexus::Outcome> {
    let stop = || {
        KipError::new(
            ErrorCode::InternalError,
            "the bundle's reading stopped; it is imported whole instead",
        )
    };
    let mut asked = false;
    let mut end = Mark::default();
    let mut next = |_: &Graph<'_>, n: usize| -> Result<Option<Part>, KipError> {
        if n == 0 && std::mem::replace(&mut asked, true) {
            // The write runs again (its map grew): the parts are gone.
            return Err(stop());
        }
        // Asked for the next part: the last one is applied.
        written.set(end);
        match parts.recv() {
            Ok(Some((part, at))) => {
                end = at;
                Ok(Some(part))
            }
            // A bundle that wrote nothing is the whole-file import's to
            // report (it makes no trace entry).
            Ok(None) if n > 0 => Ok(None),
            _ => Err(stop()),
        }
    };
    nexus.bulk().parts(text, run, &mut next)
}

/// The reader's side, in the snapshot `g`: each run of items, read and
/// checked, goes to the writer as a part.
#[allow(clippy::too_many_arguments)]
fn read_and_check(
    g: &Graph<'_>,
    text: &str,
    lines: &LineIndex,
    live: &Model,
    shared: &Arc<str>,
    to_writer: &mpsc::Sender<Message>,
    written: &Written,
    progress: &Reporter<'_>,
) -> Streamed {
    let stored = |ty: &str, name: &str, key: &str| {
        bundle::stored_attribute(g, ty, name, key).unwrap_or(false)
    };
    let mut checker = Checker::new(g, live, text, lines, BUNDLE_ROLES, true, &[])
        .with_owner(progress.options.owner);
    let mut sink = |ops: Vec<Op>, items: usize| -> bool {
        for op in &ops {
            if checker.op(op).is_err() || !checker.errors.is_empty() {
                return false;
            }
        }
        // The total is not known until the whole file is read.
        written.report(progress, 0);
        let at = Mark {
            items,
            bytes: ops.last().map_or(0, op_end),
        };
        let part = Part {
            text: shared.clone(),
            commands: ops::to_commands(&ops),
            continues: false,
        };
        to_writer.send(Some((part, at))).is_ok()
    };
    bundle::stream(text, lines, live, &stored, PART_ITEMS, &mut sink)
}

//! A run of additive capsules written in one transaction
//! ([`kip_nexus::bulk::Bulk::group`]), each still with its own report, and
//! imported again one by one if the group write fails. It owns how large
//! a group grows and how long it waits for the reader; which files may
//! join is [`super::prepared::groupable`]'s to say.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::time::{Duration, Instant};

use kip_lang::ast::Command;
use kip_nexus::bulk::{GroupStep, GroupText};
use kip_nexus::{Nexus, Origin, Stats};

use crate::apply::{ImportOptions, Reporter, about_file, run_options};
use crate::report::{ImportReport, Phase};

use super::file::{finish, import_path_with};
use super::prepared::{Prepared, distrust_older_checks, groupable};

/// A group write stops taking files once this many links and concepts'
/// search documents wait to be written (their ends, names and terms are
/// held until then: at 60,000 links the 1M import peaks at 174–193 MB of
/// its 200 MB budget, at 100,000 at 201–203 MB; counting the documents
/// too keeps a run of concept files from holding 260,000 of them, which
/// took the 10M bench to 265 MB)...
const GROUP_PENDING: usize = 60_000;
/// ...or once its files hold this many bytes of text (three of the 1M
/// bench's 20,000-link capsules: a group that writes its links while it
/// waits for the next file no longer reaches `GROUP_PENDING`, and a
/// longer one only spills more of LMDB's dirty pages; at 32 MiB the 1M
/// import peaked at 178–194 MB, at 8 MiB at 156–161)...
const GROUP_BYTES: usize = 8 << 20;
/// ...or when the reader has not handed the next file over within this
/// time (the group holds the nexus's write lock meanwhile).
const GROUP_WAIT: Duration = Duration::from_secs(1);

/// A file a group write took: what its report needs once the group is
/// written, or its path to import it again alone if the group fails.
struct Member {
    path: PathBuf,
    report: ImportReport,
    /// When its import started (reading included).
    started: Instant,
    /// The bytes of its text.
    len: usize,
    /// Its position in the import.
    index: usize,
}

/// Imports `first` and the groupable files that follow it from the reader
/// in one write ([`kip_nexus::bulk::Bulk::group`]): each file gets its own change-log
/// and trace entries and its own report, but their links are written in
/// one sorted batch. A file that cannot join is left in `held`. If the
/// group write fails, its files are imported again one by one (from their
/// paths), so each still lands whole or not at all with its own errors.
/// Returns the number of files that changed the nexus (one change-log
/// entry each).
#[allow(clippy::too_many_arguments)]
pub(super) fn import_group(
    nexus: &Nexus,
    first: (usize, Prepared),
    rx: &Receiver<(usize, Prepared)>,
    held: &mut Option<(usize, Prepared)>,
    origin: &Origin,
    options: &ImportOptions<'_>,
    each: &mut impl FnMut(ImportReport),
    seen: u64,
    clean_since: u64,
    retire: &Sender<Vec<Command>>,
) -> u64 {
    // Room in the map for the whole group first: one that fills the map
    // cannot grow it and go on (its files are dropped as it goes), so it
    // would be undone and redone file by file.
    nexus.reserve((GROUP_BYTES * 6) as u64);
    let mut members: Vec<Member> = Vec::new();
    let mut first = Some(first);
    let mut bytes = 0;
    // The file the group last wrote while waiting for, and how many times.
    let mut paused = (0, 0);
    let outcome = nexus.bulk().group(&mut |n, pending| {
        let (index, prepared) = if n == 0 {
            first.take()?
        } else {
            if pending >= GROUP_PENDING || bytes >= GROUP_BYTES {
                return None;
            }
            let mut next = match rx.try_recv() {
                Ok(next) => next,
                // Still being checked: the group writes the links it has
                // decided meanwhile, then their search documents, then
                // waits.
                Err(TryRecvError::Empty) if pending > 0 && paused < (n, 2) => {
                    paused = (n, if paused.0 == n { paused.1 + 1 } else { 1 });
                    return Some(GroupStep::NotReady);
                }
                // Bounded: the reader may itself be waiting (a map another
                // thread of this process grows waits for this write to end).
                Err(TryRecvError::Empty) => rx.recv_timeout(GROUP_WAIT).ok()?,
                Err(TryRecvError::Disconnected) => return None,
            };
            distrust_older_checks(&mut next.1, clean_since);
            if !groupable(&next.1) {
                *held = Some(next);
                return None;
            }
            next
        };
        let (step, member) = join(index, prepared, origin, options, seen, retire)?;
        bytes += member.len;
        members.push(member);
        Some(step)
    });
    match outcome {
        Ok(stats) => report_group(members, stats, options, each),
        Err(_) => import_one_by_one(nexus, members, origin, options, each),
    }
}

/// Hands the group write file `index`, prepared and groupable: its text
/// and commands to write, and the member that reports it. Its progress so
/// far (parsed, checked ahead) is reported now, as it starts applying.
fn join(
    index: usize,
    prepared: Prepared,
    origin: &Origin,
    options: &ImportOptions<'_>,
    seen: u64,
    retire: &Sender<Vec<Command>>,
) -> Option<(GroupStep, Member)> {
    let Prepared::Ready {
        path,
        mut report,
        text,
        parsed: Some(parsed),
        started,
    } = prepared
    else {
        return None;
    };
    let Ok(commands) = parsed.commands else {
        return None;
    };
    report.items = commands.len();
    let n = commands.len() as u64;
    about_file(options, index, |options| {
        let progress = Reporter::new(options, started, text.len());
        let len = text.len() as u64;
        progress.report(Phase::Parsing, len, len, text.len());
        progress.report(Phase::Validating, n, n, text.len());
        progress.report(Phase::Applying, 0, n, text.len());
    });
    let mut run = run_options(origin, &report.file, options);
    if let Some(known) = parsed.known {
        // No entry is appended before the group's end.
        run = run.with_known(known, seen);
    }
    let member = Member {
        path,
        report,
        started,
        len: text.len(),
        index,
    };
    let step = GroupStep::Text(Box::new(GroupText {
        text,
        commands,
        options: run,
        retire: Some(retire.clone()),
    }));
    Some((step, member))
}

/// Reports each file of a group that was written, with its own stats;
/// returns how many of them changed the nexus.
fn report_group(
    members: Vec<Member>,
    stats: Vec<Stats>,
    options: &ImportOptions<'_>,
    each: &mut impl FnMut(ImportReport),
) -> u64 {
    let mut changed = 0;
    for (member, stats) in members.into_iter().zip(stats) {
        let Member {
            mut report,
            started,
            len,
            index,
            ..
        } = member;
        report.stats = stats;
        changed += u64::from(stats.changed());
        let n = report.items as u64;
        about_file(options, index, |options| {
            Reporter::new(options, started, len).report(Phase::Applying, n, n, len);
        });
        each(finish(report, started, options));
    }
    changed
}

/// After a failed group write, imports its files again one by one, so
/// that each lands or fails on its own; returns how many change-log
/// entries they wrote.
fn import_one_by_one(
    nexus: &Nexus,
    members: Vec<Member>,
    origin: &Origin,
    options: &ImportOptions<'_>,
    each: &mut impl FnMut(ImportReport),
) -> u64 {
    let before = nexus.last_change_seq().unwrap_or(0);
    for Member { path, index, .. } in members {
        each(about_file(options, index, |options| {
            import_path_with(nexus, &path, origin, options)
        }));
    }
    nexus.last_change_seq().unwrap_or(0).saturating_sub(before)
}

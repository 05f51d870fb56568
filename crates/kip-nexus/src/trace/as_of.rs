//! Time travel (issue 31 §6): the nexus as it was at a past time, rebuilt
//! from the trace's before-images, for reads only.
//!
//! A view is a throwaway copy: the store is copied (one consistent
//! snapshot, compacted, into a temporary folder), then every committed
//! write after the chosen point is undone in the copy, newest first, with
//! the same [`Writer::restore`] a revert uses, in its exact mode (reserved
//! metadata back as it was, no staleness checks, nothing traced). The
//! copy's text index and attribute indexes are rewound with it, because
//! `restore` keeps them; vectors for SEARCH by meaning are marked stale by
//! the store as in any write and re-embedded by the search's catch-up.
//!
//! One view is cached per nexus (the last point asked for), so a slider and
//! repeated queries reuse it; a point further back rewinds the cached copy
//! further when no one else holds it, and asking for "now" (a point with
//! no later write) frees it and answers from the nexus itself.
//!
//! The point of a time `T` is the newest entry stamped at or before `T`
//! (stamps are whole seconds). How far back a view reaches is the trace's
//! retention: once entries were dropped, a time before the oldest kept
//! entry is refused, naming it. Imported entries (`data.imported_from`)
//! describe another nexus's history and are never undone. Writes made
//! while the trace was off have no before-image: the view cannot undo
//! them, and says how many there are (`untraced`, counted from the change
//! log's numbering).

use std::sync::{Arc, Mutex};

use kip_lang::{ErrorCode, KipError};
use serde::Serialize;
use serde_json::Value as Json;

use super::entry::{Entry, EntryType, TraceSettings, from_body, parse_entry_id};
use super::ops::changes_of;
use crate::clock;
use crate::graph::{OrInternal as _, Result, TxnError};
use crate::kml::{VersionFloors, Writer};
use crate::nexus::{DATA_FILE, Nexus};

/// Where a view stands, as every face reports it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AsOfPoint {
    /// What was asked for: a time as the engine stamps times (ISO 8601,
    /// UTC, whole seconds), or a trace entry id.
    pub at: String,
    /// The newest write entry the view includes (`T:0`: none).
    pub entry: String,
    /// When that entry was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub entry_at: Option<String>,
    /// How far back the trace reaches: the time of its oldest kept entry
    /// (absent when the trace is empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub oldest_at: Option<String>,
    /// Whether retention dropped older entries (then no view reaches
    /// before `oldest_at`).
    pub dropped: bool,
    /// Whether the view is the nexus as it is now (no write after the
    /// point).
    pub now: bool,
    /// Writes committed after the point while the trace was off: the
    /// trace holds no before-image of them, so the view (and a diff) does
    /// not undo them and is not exact when this is above 0.
    pub untraced: u64,
}

/// A read-only view of the nexus as of a past point ([`Nexus::as_of`]).
/// Its [`AsOf::nexus`] is a throwaway copy: anything written to it is lost,
/// and the faces refuse writes before they reach it.
pub struct AsOf<'n> {
    pub point: AsOfPoint,
    base: &'n Nexus,
    view: Option<Arc<Nexus>>,
}

impl std::fmt::Debug for AsOf<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsOf").field("point", &self.point).finish()
    }
}

impl AsOf<'_> {
    /// The nexus as of the point: run reads on it.
    pub fn nexus(&self) -> &Nexus {
        self.view.as_deref().unwrap_or(self.base)
    }
}

/// The cached view of a nexus (the last point asked for).
#[derive(Default)]
pub(crate) struct TimeTravel {
    cached: Mutex<Option<Rewound>>,
}

/// A rewound copy. The view is declared before its folder so it closes
/// before the folder is removed.
struct Rewound {
    position: u64,
    view: Arc<Nexus>,
    _dir: tempfile::TempDir,
}

/// A resolved point: the last entry included, and what is reported.
pub(super) struct Point {
    pub(super) position: u64,
    pub(super) report: AsOfPoint,
}

fn outside(at: &str, oldest_at: &str) -> KipError {
    KipError::new(
        ErrorCode::NotFound,
        format!("the trace reaches back to {oldest_at}: retention dropped the entries before it, so the nexus as of {at} cannot be rebuilt"),
    )
    .with_hint(format!("Choose a time at or after {oldest_at}; keep more entries (trace retention) to travel further back."))
    .with_data("oldest_at", Json::from(oldest_at))
}

fn not_a_time(at: &str) -> KipError {
    KipError::new(
        ErrorCode::InvalidSyntax,
        format!("`{at}` is not a time or a trace entry id"),
    )
    .with_hint("Give an ISO 8601 time such as 2026-11-28T09:30:00Z (or a date, 2026-11-28, meaning midnight UTC), or an entry id such as T:42.")
}

/// Whether `entry` is a committed write of this nexus (not an imported
/// record of another's).
fn is_own_write(entry: &Entry) -> bool {
    entry.kind == EntryType::Trace
        && entry
            .data
            .as_ref()
            .is_none_or(|d| d.get("imported_from").is_none())
}

impl Nexus {
    /// A read-only view of the nexus as of `at`: an ISO 8601 time (the
    /// state after every write stamped at or before it) or a trace entry id
    /// `T:n` (the state right after that entry; `T:0` before the first).
    /// Refused for a time in the future, for a time before the trace's
    /// reach once retention dropped entries (naming the oldest time kept),
    /// and for an entry that does not exist.
    pub fn as_of(&self, at: &str) -> Result<AsOf<'_>> {
        let point = self.resolve_point(at)?;
        let mut cached = self
            .time_travel
            .cached
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if point.report.now {
            *cached = None;
            return Ok(AsOf {
                point: point.report,
                base: self,
                view: None,
            });
        }
        let reuse = match cached.as_mut() {
            Some(c) if c.position == point.position => true,
            Some(c) if c.position > point.position && Arc::strong_count(&c.view) == 1 => {
                rewind(&c.view, point.position, Some(c.position))?;
                c.position = point.position;
                true
            }
            _ => false,
        };
        if !reuse {
            *cached = None;
            *cached = Some(self.rewound_copy(point.position)?);
        }
        let view = cached.as_ref().map(|c| Arc::clone(&c.view));
        Ok(AsOf {
            point: point.report,
            base: self,
            view,
        })
    }

    /// Frees the cached view, if any (a host calls it when the curator
    /// goes back to now).
    pub fn forget_as_of(&self) {
        if let Ok(mut cached) = self.time_travel.cached.lock() {
            *cached = None;
        }
    }

    /// A fresh copy of the store rewound to `position`.
    fn rewound_copy(&self, position: u64) -> Result<Rewound> {
        sweep_left_behind();
        let dir = tempfile::Builder::new()
            .prefix(&format!("{COPY_PREFIX}{}-", std::process::id()))
            .tempdir()
            .map_err(|e| {
                KipError::new(
                    ErrorCode::InternalError,
                    format!("cannot make a folder for the view as of a past time: {e}"),
                )
            })?;
        self.store
            .copy_compacted(&dir.path().join(DATA_FILE))
            .kip()?;
        let view = Nexus::open_existing(dir.path())?;
        view.set_trace_settings(TraceSettings {
            enabled: false,
            ..TraceSettings::default()
        });
        rewind(&view, position, None)?;
        Ok(Rewound {
            position,
            view: Arc::new(view),
            _dir: dir,
        })
    }

    /// The entry `at` stands for, with what a face reports of it.
    pub(super) fn resolve_point(&self, at: &str) -> Result<Point> {
        let asked = at.trim();
        let entry = asked
            .strip_prefix("T:")
            .map(|_| {
                if asked == "T:0" {
                    Ok(0)
                } else {
                    parse_entry_id(asked)
                }
            })
            .transpose()?;
        let time = match entry {
            Some(_) => None,
            None => Some(clock::parse(asked).ok_or_else(|| not_a_time(asked))?),
        };
        if let Some(t) = &time
            && *t > clock::now()
        {
            return Err(KipError::new(
                ErrorCode::InvalidSyntax,
                format!("{t} is in the future: the nexus has no state there yet"),
            )
            .with_hint("Choose a past time; leave the time out to see the nexus as it is now."));
        }
        self.store
            .read(|txn| {
                let last = self.store.last_trace_id(txn)?;
                let mut oldest: Option<(u64, String)> = None;
                self.store.visit_trace(txn, None, None, false, |id, body| {
                    let at = body.get("at").and_then(Json::as_str).unwrap_or_default();
                    oldest = Some((id, at.to_owned()));
                    Ok(false)
                })?;
                let dropped = oldest.as_ref().is_some_and(|(id, _)| *id > 1);
                let oldest_at = oldest.as_ref().map(|(_, a)| a.clone());
                let position = match (entry, &time) {
                    (Some(n), _) => {
                        if n > last {
                            return Err(TxnError(
                                KipError::new(
                                    ErrorCode::NotFound,
                                    format!(
                                        "there is no trace entry {asked}: the newest is T:{last}"
                                    ),
                                )
                                .with_hint("`kip trace list` shows the entries kept."),
                            ));
                        }
                        if dropped && oldest.as_ref().is_some_and(|(o, _)| n + 1 < *o) {
                            return Err(TxnError(outside(
                                asked,
                                oldest_at.as_deref().unwrap_or(""),
                            )));
                        }
                        n
                    }
                    (None, Some(t)) => {
                        let found = self.entry_at_or_before(txn, t)?;
                        match found {
                            Some(n) => n,
                            None if dropped => {
                                return Err(TxnError(outside(
                                    t,
                                    oldest_at.as_deref().unwrap_or(""),
                                )));
                            }
                            None => 0,
                        }
                    }
                    (None, None) => 0,
                };
                let entry_at = match position {
                    0 => None,
                    n => self
                        .store
                        .trace_entry(txn, n)?
                        .and_then(|b| b.get("at").and_then(Json::as_str).map(str::to_owned)),
                };
                let now = !self.writes_after(txn, position)?;
                let untraced = if dropped && position == 0 {
                    0
                } else {
                    self.untraced_after(txn, position, dropped)?
                };
                Ok::<_, TxnError>(Point {
                    position,
                    report: AsOfPoint {
                        at: time.clone().unwrap_or_else(|| asked.to_owned()),
                        entry: format!("T:{position}"),
                        entry_at,
                        oldest_at,
                        dropped,
                        now,
                        untraced,
                    },
                })
            })
            .map_err(|e| e.0)
    }

    /// The newest entry of this nexus stamped at or before `t`.
    fn entry_at_or_before(
        &self,
        txn: &kip_store::RoTxn<'_>,
        t: &str,
    ) -> std::result::Result<Option<u64>, TxnError> {
        let mut found = None;
        let mut failed = None;
        self.store.visit_trace(txn, None, None, true, |id, body| {
            match from_body(id, body) {
                Ok(e) => {
                    let own = e
                        .data
                        .as_ref()
                        .is_none_or(|d| d.get("imported_from").is_none());
                    if own && e.at.as_str() <= t {
                        found = Some(id);
                        return Ok(false);
                    }
                    Ok(true)
                }
                Err(e) => {
                    failed = Some(TxnError(e));
                    Ok(false)
                }
            }
        })?;
        match failed {
            Some(e) => Err(e),
            None => Ok(found),
        }
    }

    /// How many writes committed after entry `position` no entry holds
    /// (made while the trace was off). The change log numbers every
    /// committed write one after the other, and each write's entry names
    /// its number (`data.change_seq`), so the gap is the count.
    fn untraced_after(
        &self,
        txn: &kip_store::RoTxn<'_>,
        position: u64,
        dropped: bool,
    ) -> std::result::Result<u64, TxnError> {
        let seqs = |body: &Json| -> Vec<u64> {
            let data = body.get("data");
            if data.is_some_and(|d| d.get("imported_from").is_some()) {
                return Vec::new();
            }
            data.and_then(|d| d.get("change_seq"))
                .and_then(Json::as_array)
                .map(|a| a.iter().filter_map(Json::as_u64).collect())
                .unwrap_or_default()
        };
        let mut base = None;
        self.store
            .visit_trace(txn, None, Some(position + 1), true, |_, body| {
                base = seqs(&body).into_iter().max();
                Ok(base.is_none())
            })?;
        // Without a numbered write kept at or before the point, the count
        // starts at the first write only if retention dropped nothing.
        let Some(base) = base.or((!dropped).then_some(0)) else {
            return Ok(0);
        };
        let mut traced = 0u64;
        self.store
            .visit_trace(txn, Some(position), None, false, |_, body| {
                traced += seqs(&body).into_iter().filter(|&s| s > base).count() as u64;
                Ok(true)
            })?;
        let last = self.store.last_change_seq(txn)?;
        Ok(last.saturating_sub(base).saturating_sub(traced))
    }

    /// Whether a write of this nexus committed after entry `position`.
    fn writes_after(
        &self,
        txn: &kip_store::RoTxn<'_>,
        position: u64,
    ) -> std::result::Result<bool, TxnError> {
        let mut any = false;
        self.store
            .visit_trace(txn, Some(position), None, false, |id, body| {
                any = from_body(id, body).is_ok_and(|e| {
                    is_own_write(&e) && changes_of(&e).is_some_and(|c| !c.is_empty())
                });
                Ok(!any)
            })?;
        Ok(any)
    }
}

/// The name of a view's temporary folder begins with this and the id of
/// the process that made it.
const COPY_PREFIX: &str = "kip-as-of-";

/// Removes the views that processes which ended without closing them (a
/// killed `kip serve`) left in the temporary folder. Only where a process's
/// liveness can be read (`/proc`); elsewhere they stay until the system
/// cleans its temporary folder.
fn sweep_left_behind() {
    #[cfg(target_os = "linux")]
    {
        let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let pid = name
                .to_str()
                .and_then(|n| n.strip_prefix(COPY_PREFIX))
                .and_then(|rest| rest.split('-').next())
                .and_then(|p| p.parse::<u32>().ok());
            if let Some(pid) = pid
                && !std::path::Path::new("/proc").join(pid.to_string()).exists()
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

/// Undoes, in `view` and untraced, every write after entry `to` (up to and
/// including entry `from`, else to the newest), newest first; returns how
/// many writes were undone.
fn rewind(view: &Nexus, to: u64, from: Option<u64>) -> Result<u64> {
    view.store
        .write(|txn| {
            let mut entries = Vec::new();
            view.store
                .visit_trace(txn, Some(to), from.map(|f| f + 1), true, |id, body| {
                    entries.push((id, body));
                    Ok(true)
                })?;
            let mut undone = 0;
            for (id, body) in entries {
                let entry = from_body(id, body)?;
                if !is_own_write(&entry) {
                    continue;
                }
                let Some(changes) = changes_of(&entry).filter(|c| !c.is_empty()) else {
                    continue;
                };
                let mut w = Writer::new(&view.store, txn, "", clock::now());
                w.rewind = true;
                w.restore(&changes, &VersionFloors::new()).map_err(|e| {
                    TxnError(KipError::new(
                        ErrorCode::InternalError,
                        format!(
                            "the trace cannot rebuild the nexus before {}: {}",
                            entry.id, e.message
                        ),
                    ))
                })?;
                undone += 1;
            }
            Ok::<_, TxnError>(undone)
        })
        .map_err(|e| e.0)
}

//! Folding reads: the same text from the same originator within
//! [`FOLD_WINDOW_SECS`] is one entry with a count, kept in memory until a
//! write flushes it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kip_store::RwTxn;
use serde_json::json;

use crate::graph::Result;

use super::append::{Append, Draft, rfc3339};
use super::entry::{EntryType, FOLD_WINDOW_SECS, MAX_COMMAND_TEXT, TraceSettings};
use super::returned::Returned;
use super::text::truncated;

/// The in-memory state of one nexus's trace: settings and the read folder.
#[derive(Debug, Default)]
pub(crate) struct Tracer {
    pub settings: Mutex<TraceSettings>,
    pub(super) folder: Mutex<Folder>,
}

#[derive(Debug, Default)]
pub(super) struct Folder {
    /// Open folds by originator, then by text (looked up without
    /// allocating: a read that folds costs a lock and two hash lookups).
    pub(super) open: HashMap<String, HashMap<String, Fold>>,
    /// Folds whose window closed, waiting for a write.
    pub(super) ready: Vec<Fold>,
    pub(super) since_flush: Option<Instant>,
}

#[derive(Clone, Debug)]
pub(crate) struct Fold {
    pub(super) originator: String,
    pub(super) text: String,
    pub(super) first_at: String,
    pub(super) last: std::time::SystemTime,
    pub(super) started: Instant,
    pub(super) count: u64,
    pub(super) error: Option<String>,
    /// What the fold's reads returned (see [`Returned`]).
    pub(super) returned: Returned,
}

impl Tracer {
    pub fn settings(&self) -> TraceSettings {
        self.settings.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Counts a read in the folder, with what it returned; `true` if a
    /// closed window waits long enough that the caller should flush it
    /// with a small write.
    pub fn fold_read(
        &self,
        originator: &str,
        text: &str,
        error: Option<String>,
        returned: Returned,
    ) -> bool {
        let Ok(mut f) = self.folder.lock() else {
            return false;
        };
        let now = Instant::now();
        let window = Duration::from_secs(FOLD_WINDOW_SECS);
        if let Some(open) = f.open.get_mut(originator).and_then(|m| m.get_mut(text))
            && now.duration_since(open.started) < window
        {
            open.count += 1;
            open.last = std::time::SystemTime::now();
            if error.is_some() {
                open.error = error;
            }
            open.returned.merge(&returned);
            return false;
        }
        // A new window: close every window that ended (this one included).
        let mut closed = Vec::new();
        for texts in f.open.values_mut() {
            texts.retain(|_, v| {
                let ended = now.duration_since(v.started) >= window;
                if ended {
                    closed.push(v.clone());
                }
                !ended
            });
        }
        f.open.retain(|_, m| !m.is_empty());
        f.ready.extend(closed);
        f.open.entry(originator.to_owned()).or_default().insert(
            text.to_owned(),
            Fold {
                originator: originator.to_owned(),
                text: text.to_owned(),
                first_at: crate::clock::now(),
                last: std::time::SystemTime::now(),
                started: now,
                count: 1,
                error,
                returned,
            },
        );
        let due = !f.ready.is_empty()
            && f.since_flush
                .is_none_or(|t| now.duration_since(t) >= window);
        if due {
            f.since_flush = Some(now);
        }
        due
    }

    /// Takes the folds to write: the closed ones, or all of them (`all`,
    /// when the nexus closes or a write goes by). A write closure may run
    /// twice, so folds are taken before it and put back if it fails.
    pub(crate) fn take_folds(&self, all: bool) -> Vec<Fold> {
        let Ok(mut f) = self.folder.lock() else {
            return Vec::new();
        };
        let mut out = std::mem::take(&mut f.ready);
        if all {
            out.extend(f.open.drain().flat_map(|(_, m)| m.into_values()));
        }
        out
    }

    /// Writes `folds` (taken by [`Tracer::take_folds`]) in `txn`.
    pub(crate) fn write_folds(
        append: &Append<'_>,
        txn: &mut RwTxn<'_>,
        folds: &[Fold],
    ) -> Result<()> {
        for fold in folds {
            append.append(txn, fold_draft(fold))?;
        }
        Ok(())
    }

    pub(crate) fn restore_folds(&self, folds: Vec<Fold>) {
        if let Ok(mut f) = self.folder.lock() {
            f.ready.extend(folds);
        }
    }

    pub(crate) fn has_folds(&self) -> bool {
        self.folder
            .lock()
            .is_ok_and(|f| !f.ready.is_empty() || !f.open.is_empty())
    }
}

pub(super) fn fold_draft(f: &Fold) -> Draft {
    let verb = f
        .text
        .split_whitespace()
        .next()
        .map(|w| {
            w.split(|c: char| !c.is_ascii_alphabetic())
                .next()
                .unwrap_or_default()
                .to_ascii_uppercase()
        })
        .filter(|w| !w.is_empty())
        .unwrap_or_else(|| "KIP".into());
    let (text, _) = truncated(&f.text, MAX_COMMAND_TEXT);
    let times = if f.count == 1 {
        "once".to_owned()
    } else {
        format!("{} times", f.count)
    };
    let mut data = json!({
        "command": text,
        "read_only": true,
        "count": f.count,
        "first_at": f.first_at,
        "last_at": rfc3339(f.last),
    });
    if !f.returned.is_empty() {
        data["returned"] = f.returned.to_json();
        if f.returned.more > 0 {
            data["returned_more"] = json!(f.returned.more);
        }
    }
    let mut tag = vec!["ToolOutput".to_owned()];
    if let Some(code) = &f.error {
        data["outcome"] = json!({"error": code});
        tag = vec!["TraceError".into()];
    }
    Draft {
        originator: f.originator.clone(),
        kind: EntryType::Trace,
        message: format!("{verb}: read {times}"),
        tag,
        flags: Vec::new(),
        data: Some(data),
        elements: Vec::new(),
    }
}

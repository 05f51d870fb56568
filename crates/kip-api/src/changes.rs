//! Change notifications: the entries of the store's change log after a
//! sequence number, marked with the writing process.
//!
//! The engine appends one entry per committed write inside the write's own
//! transaction (`{origin, pid, at, stats}`), so an entry exists exactly when
//! its change is visible, whichever process made it. A host polls
//! [`crate::Api::last_change_seq`] (one small read transaction) on a timer
//! and asks for the entries when the number moves. This module does no
//! timing of its own: hosts own their event loops.

use kip_nexus::Nexus;
use serde_json::Value as Json;

use crate::error::ApiError;
use crate::types::{Change, ChangesRequest, ChangesResponse};

/// The most entries one request returns.
pub const MAX_CHANGES_PER_REQUEST: u32 = 1_000;

pub(crate) fn last_change_seq(nexus: &Nexus) -> Result<u64, ApiError> {
    Ok(nexus.last_change_seq()?)
}

pub(crate) fn changes(
    nexus: &Nexus,
    request: &ChangesRequest,
) -> Result<ChangesResponse, ApiError> {
    let since = request.since;
    let limit = request
        .limit
        .unwrap_or(MAX_CHANGES_PER_REQUEST)
        .clamp(1, MAX_CHANGES_PER_REQUEST) as usize;
    let kip_nexus::ChangeLog { last_seq, entries } = nexus.changes_since(since)?;
    // A reader that asks from 0 wants whatever the log still has; anyone
    // else who finds the entries right after `since` gone (the log keeps
    // the last 10,000) or a sequence number from the future (the nexus
    // folder was replaced) has missed changes and must reload.
    let first = entries.first().map(|(seq, _)| *seq);
    let reset = since > last_seq
        || (since > 0 && first.is_some_and(|f| f > since + 1))
        || (since > 0 && first.is_none() && last_seq > since);
    let more = entries.len() > limit;
    let me = std::process::id();
    let changes = entries
        .into_iter()
        .take(limit)
        .map(|(seq, entry)| change(seq, &entry, me))
        .collect();
    Ok(ChangesResponse {
        last_seq,
        changes,
        reset,
        more,
    })
}

/// Reads an entry leniently: fields another version may not have written
/// take neutral values instead of hiding the change.
fn change(seq: u64, entry: &Json, me: u32) -> Change {
    let text = |k: &str| entry.get(k).and_then(Json::as_str).map(str::to_owned);
    let pid = entry
        .get("pid")
        .and_then(Json::as_u64)
        .and_then(|p| u32::try_from(p).ok())
        .unwrap_or(0);
    Change {
        seq,
        origin: entry
            .get("origin")
            .and_then(Json::as_str)
            .unwrap_or("unknown")
            .to_owned(),
        originator: text("originator"),
        trace: text("trace"),
        pid,
        at: entry
            .get("at")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_owned(),
        own_process: pid == me,
        stats: entry
            .get("stats")
            .and_then(|s| serde_json::from_value::<kip_nexus::Stats>(s.clone()).ok())
            .unwrap_or_default(),
    }
}

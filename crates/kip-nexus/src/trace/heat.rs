//! Recall heat (issue 31 §7): per element, how many reads returned it and
//! by whom, over a time window, from the folded read entries' `returned`
//! ids (see `returned.rs`).
//!
//! Cost: one scan of the trace, newest first, that stops at the window's
//! start or after [`MAX_HEAT_SCAN`] entries (whichever comes first; the
//! answer says whether it saw the whole window), plus a hash map of at most
//! [`MAX_READ_IDS`](super::MAX_READ_IDS) ids per read entry scanned. An
//! entry too large to be a read (a bulk write's before-image) is passed
//! over by its stored size; the others are parsed into the few fields heat
//! reads, the rest skipped unbuilt. So the cost is linear in the entries of
//! the window up to that bound, and does not grow with the size of the
//! writes among them.

use std::collections::HashMap;

use kip_store::stored_trace_json;
use serde::{Deserialize, Serialize};

use crate::graph::{OrInternal as _, Result};

use super::entry::MAX_COMMAND_TEXT;
use crate::nexus::Nexus;

/// The most trace entries one heat request reads.
pub const MAX_HEAT_SCAN: u64 = 200_000;
/// The default and largest number of elements one answer lists.
pub const DEFAULT_HEAT_ELEMENTS: usize = 1_000;
pub const MAX_HEAT_ELEMENTS: usize = 10_000;

/// Which reads to count.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default, deny_unknown_fields)]
pub struct HeatQuery {
    /// ISO 8601: reads folded at or after (all kept entries when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub since: Option<String>,
    /// ISO 8601: reads folded at or before.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub until: Option<String>,
    /// Only this originator's reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub originator: Option<String>,
    /// At most this many elements, hottest first (default 1,000, at most
    /// 10,000).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub limit: Option<usize>,
}

/// How many reads of one originator returned an element.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ReadsBy {
    pub originator: String,
    pub reads: u64,
}

/// One element's heat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Heat {
    /// `C:…` or `P:…`.
    pub id: String,
    /// How many reads returned it.
    pub reads: u64,
    /// The same, per originator, most reads first.
    pub by: Vec<ReadsBy>,
}

/// The heat of the window, hottest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ReadHeat {
    pub elements: Vec<Heat>,
    /// Reads counted (a folded entry counts its `count`).
    pub reads: u64,
    /// Returned ids past the per-read bound, not attributed to an element.
    pub unrecorded: u64,
    /// Trace entries read.
    pub scanned: u64,
    /// Whether the scan reached the window's start (else it stopped after
    /// [`MAX_HEAT_SCAN`] entries and older reads are not counted).
    pub complete: bool,
}

#[derive(Default)]
struct Tally {
    reads: u64,
    by: HashMap<String, u64>,
}

/// The most bytes a read entry takes as stored: its command is cut at
/// [`MAX_COMMAND_TEXT`] and its ids at [`MAX_READ_IDS`](super::MAX_READ_IDS),
/// so anything larger (a bulk write's before-image) is passed over without
/// being inflated or parsed.
const MAX_READ_ENTRY_BYTES: usize = 4 * MAX_COMMAND_TEXT;

/// What heat reads of an entry; everything else in it is skipped by the
/// parser without being built.
#[derive(Deserialize)]
struct Body {
    #[serde(default)]
    at: String,
    #[serde(default)]
    originator: String,
    #[serde(default)]
    data: Option<ReadData>,
}

#[derive(Deserialize)]
struct ReadData {
    #[serde(default)]
    read_only: Option<bool>,
    #[serde(default)]
    count: Option<u64>,
    #[serde(default)]
    returned: Option<HashMap<String, u64>>,
    #[serde(default)]
    returned_more: Option<u64>,
}

impl Nexus {
    /// Recall heat over the trace's read entries (see the module doc).
    pub fn read_heat(&self, q: &HeatQuery) -> Result<ReadHeat> {
        let limit = q
            .limit
            .unwrap_or(DEFAULT_HEAT_ELEMENTS)
            .clamp(1, MAX_HEAT_ELEMENTS);
        let mut tally: HashMap<String, Tally> = HashMap::new();
        let (mut reads, mut unrecorded, mut scanned, mut complete) = (0, 0, 0, true);
        self.store
            .read(|txn| {
                self.store
                    .visit_trace_stored(txn, None, None, true, |_, stored| {
                        if scanned >= MAX_HEAT_SCAN {
                            complete = false;
                            return Ok(false);
                        }
                        scanned += 1;
                        if stored.len() > MAX_READ_ENTRY_BYTES {
                            return Ok(true);
                        }
                        // An entry this version cannot read as a read is no read.
                        let Ok(body) = serde_json::from_slice::<Body>(&stored_trace_json(stored)?)
                        else {
                            return Ok(true);
                        };
                        if q.since.as_deref().is_some_and(|s| body.at.as_str() < s) {
                            return Ok(false);
                        }
                        if q.until.as_deref().is_some_and(|u| body.at.as_str() > u)
                            || q.originator.as_ref().is_some_and(|o| &body.originator != o)
                        {
                            return Ok(true);
                        }
                        let Some(data) = body.data.filter(|d| d.read_only == Some(true)) else {
                            return Ok(true);
                        };
                        reads += data.count.unwrap_or(1);
                        unrecorded += data.returned_more.unwrap_or(0);
                        for (id, n) in data.returned.into_iter().flatten() {
                            let t = tally.entry(id).or_default();
                            t.reads += n;
                            *t.by.entry(body.originator.clone()).or_default() += n;
                        }
                        Ok(true)
                    })
            })
            .kip()?;
        Ok(ReadHeat {
            elements: hottest(tally, limit),
            reads,
            unrecorded,
            scanned,
            complete,
        })
    }
}

fn hottest(tally: HashMap<String, Tally>, limit: usize) -> Vec<Heat> {
    let mut out: Vec<Heat> = tally
        .into_iter()
        .map(|(id, t)| {
            let mut by: Vec<ReadsBy> =
                t.by.into_iter()
                    .map(|(originator, reads)| ReadsBy { originator, reads })
                    .collect();
            by.sort_by(|a, b| b.reads.cmp(&a.reads).then(a.originator.cmp(&b.originator)));
            Heat {
                id,
                reads: t.reads,
                by,
            }
        })
        .collect();
    out.sort_by(|a, b| b.reads.cmp(&a.reads).then_with(|| a.id.cmp(&b.id)));
    out.truncate(limit);
    out
}

//! One read snapshot for many queries ([`Nexus::read_queries`]): what the
//! logic-property resolver (`kip-logic`) evaluates a metric in, so every
//! instance and time bucket sees the same data.

use kip_lang::ast::FindQuery;
use serde_json::Value as Json;

use crate::graph::{Graph, Result};
use crate::kql;
use crate::nexus::Nexus;

/// One consistent read snapshot that runs many parsed, bound FIND queries:
/// what a caller needs when it evaluates one query for many instances and
/// time buckets (the logic-property resolver, `kip-logic`) and every answer
/// must come from the same data. Obtained from [`Nexus::read_queries`].
pub struct Snapshot<'s, 't> {
    graph: &'s Graph<'t>,
    secret: u64,
}

impl std::fmt::Debug for Snapshot<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").finish_non_exhaustive()
    }
}

impl<'t> Snapshot<'_, 't> {
    /// The read view of the snapshot (names, records, counters).
    pub fn graph(&self) -> &Graph<'t> {
        self.graph
    }

    /// Runs one bound FIND (`source` is the text its spans point into) and
    /// returns its `result` value: a scalar for a single aggregate. One page
    /// only; the cursor of a longer result is dropped.
    pub fn find(&self, source: &str, query: &FindQuery) -> Result<Json> {
        Ok(kql::find(self.graph, source, query, self.secret, false)?.result)
    }
}

impl Nexus {
    /// Runs `f` with a [`Snapshot`] of one read transaction: every FIND it
    /// runs, and every read of its [`Snapshot::graph`], sees the same data.
    /// Keep `f` short: a long read transaction holds old pages in the file.
    pub fn read_queries<T>(&self, f: impl FnOnce(&Snapshot<'_, '_>) -> Result<T>) -> Result<T> {
        let secret = self.secret;
        self.read(|graph| f(&Snapshot { graph, secret }))
    }
}

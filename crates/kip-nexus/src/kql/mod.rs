//! KQL: compiling a WHERE block, planning it by selectivity, and executing
//! it into solution rows; then FIND's grouping, ordering, paging and the
//! columnar result.
//!
//! Split by job, as oxigraph's `spareval` splits evaluation:
//!
//! - `compile` resolves type and predicate names and flattens the block
//!   into atoms over variable slots;
//! - `column` runs a lone type clause's FILTERs over one key on the
//!   attribute index read as a column (no record decoded);
//! - `plan` estimates each atom's output from the counters and picks the
//!   cheapest next;
//! - `exec` is the [`Executor`]: joins, FILTER placement, NOT / OPTIONAL /
//!   UNION, the work meter;
//! - `row` is what the executor joins: a [`Val`] per variable slot;
//! - `path` walks hop-range paths breadth-first;
//! - `sweep` scans UPDATE's lone link pattern in id order, capped, from
//!   where the previous cycle of the same sweep stopped (`cycle` holds
//!   what a cycle is told and leaves);
//! - `trace` holds the `explain` profile of the top-level block, which
//!   `record` fills;
//! - `find` turns solution rows into the FIND result: groups, order, page,
//!   columns.
//!
//! Why an empty result is empty is [`crate::explain`]'s job: it reads the
//! trace and probes clauses through the executor.

mod column;
mod compile;
mod cycle;
mod exec;
mod find;
mod index;
mod path;
mod plan;
mod read;
mod record;
mod row;
mod sweep;
mod trace;

pub use compile::{CompiledGroup, Slot, Vars, compile};
pub use cycle::{Sweep, SweepFrom, SweepHint, SweepStarts};
pub use exec::{Executor, ROW_BUDGET, WORK_BUDGET, solve};
pub use find::{DEFAULT_PAGE, find};
pub use read::path_value;
pub use row::{Row, Val};
pub use sweep::{solve_sweep, still_clean};

pub(crate) use compile::{Atom, PredTest};
pub(crate) use trace::Failed;

//! `kip-nexus`: the Cognitive Nexus — the KIP engine behind `execute_kip`.
//!
//! The whole public surface is here, at the crate root:
//!
//! - [`Nexus::open`] opens (or creates and bootstraps with the Genesis
//!   capsules) a nexus folder.
//! - [`Nexus::execute`] takes the arguments of the spec's `execute_kip`
//!   function (one command or a batch, parameters, dry run, explain) with a
//!   [`Context`] (who asks, and whether they may write) and returns the KIP
//!   response object.
//! - [`Nexus::run`] runs commands a caller has already parsed and bound
//!   (the capsule pipeline), with [`RunOptions`].
//! - [`Nexus::read`] hands a [`Graph`] over one consistent snapshot to
//!   readers that need more than KIP (export, the bundle schema, the
//!   neighbourhood of a concept); [`Nexus::read_queries`] hands a
//!   [`Snapshot`] that also runs parsed FINDs, all in that one snapshot
//!   (the logic-property resolver's batches).
//! - [`logic_properties`] reads (and checks) the logic properties a
//!   `$ConceptType` definition declares (BRIEF §8); the KML writer refuses
//!   a bad declaration with `KIP_2003`.
//! - Maintenance: [`Nexus::check_store`] verifies the store's invariants,
//!   [`Nexus::backup`] writes a consistent, compacted copy while others keep
//!   writing, [`restore`] puts a backup in place of a nexus no process has
//!   open, and [`Nexus::open_existing`] refuses a folder that holds none.
//! - The change log ([`Nexus::last_change_seq`], [`Nexus::changes_since`])
//!   and a small key-value state table for hosts ([`Nexus::state`] and
//!   friends).
//! - The cognitive trace (BRIEF §7): every command's entry, written with
//!   it; [`Nexus::trace_list`], [`Nexus::trace_add`], [`Nexus::trace_flag`],
//!   [`Nexus::revert`] and friends.
//!
//! Every command runs in one LMDB transaction: readers see a consistent
//! snapshot, a KML command is atomic (any error aborts everything it did),
//! and a dry run executes exactly and then aborts.
//!
//! Modules (all private; what other crates need is re-exported below):
//! `kql` plans and runs queries, `kml` writes, `meta` answers DESCRIBE and
//! SEARCH, `search` keeps the text index, `schema` knows the in-graph schema
//! and the protected elements, `graph` is the read view of the store,
//! `execute` handles `execute_kip` requests and `run` owns the
//! transactions, `options` says how commands run, `nexus` holds the
//! [`Nexus`] handle and `backup` its copies. This file only declares the
//! modules and re-exports: no module imports from it. This crate knows
//! nothing of files, windows or sockets, and nothing above it sees
//! `kip-store`.

mod backup;
pub mod bulk;
mod clock;
pub mod contradictions;
mod cursor;
pub mod duplicates;
mod embedding;
mod execute;
mod explain;
mod export;
mod filter;
mod genesis;
mod graph;
pub mod health;
mod kml;
mod known;
mod kql;
mod limits;
mod logic;
mod meta;
mod nexus;
mod options;
pub mod overview;
mod pattern;
pub mod profile;
pub mod recall;
pub mod related;
mod request;
mod run;
mod schema;
mod search;
mod semantic;
mod snapshot;
mod stats;
mod tokenize;
mod trace;
pub mod triage;
pub mod triage_apply;
mod upgrade;
mod value;
mod write;

pub use backup::{Backup, install_staged, opened_elsewhere, restore};
pub use execute::{Access, Context};
pub use explain::{Cause, Explain, Fix, Range, Step};
pub use graph::{BELONGS_TO_DOMAIN, CONCEPT_TYPE, DOMAIN, Graph, PROPOSITION_TYPE, Result};
pub use kip_store::{
    CheckCounts, CheckReport, ConceptId, ConceptRecord, ElementId, PropositionId,
    PropositionRecord, Violation,
};
pub use kip_store::{DatabaseSize, StoreSizes};
pub use kml::{ChangeEnd, ChangeKind, ChangeOp, ChangeState, ElementChange};
pub use logic::{
    DataSource, LOGIC_PROPERTIES, LogicKind, LogicProperty, ParamType, Parameter, STEPS, ValueFrom,
    check_url as check_logic_url, declared as logic_properties,
};
pub use nexus::{ChangeLog, Nexus};
pub use options::{Mode, Origin, RunOptions};
pub use pattern::{Block, Edge, Filter, Node, Pattern, outline};
pub use request::{BatchItem, ExecuteKip};
pub use run::{Outcome, response};
pub use schema::{has_immutable_id, is_protected, type_list};
pub use snapshot::Snapshot;
pub use stats::Stats;
pub use trace::{
    AsOf, AsOfPoint, DEFAULT_HEAT_ELEMENTS, DEFAULT_TRACE_PAGE, Diff, DiffElement, DiffState,
    DiffTotals, Entry as TraceEntry, EntryType as TraceEntryType, Heat, HeatQuery,
    MAX_HEAT_ELEMENTS, MAX_HEAT_SCAN, MAX_READ_IDS, MAX_TRACE_PAGE, NewEntry as NewTraceEntry,
    ReadHeat, ReadsBy, Reverted, RevertedTo, TraceFilter, TraceNote, TracePage, TraceSettings,
};

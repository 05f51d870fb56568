//! `kip-capsule`: knowledge in files, for the Cognitive Nexus.
//!
//! - **Import** ([`import_text`], [`import_path`]): the one pipeline for
//!   `.kip` capsules (KIP commands) and `.yaml` / `.yml` knowledge bundles
//!   (BRIEF §4). Read → parse → check the whole file (structure against the
//!   JSON Schema of [`knowledge_schema`], meaning against the nexus) →
//!   apply in one nexus transaction → [`ImportReport`]. Every error is
//!   reported with its code, path, line, column and a hint; a file with any
//!   error applies nothing.
//! - **Schema** ([`knowledge_schema`]): `get_knowledge_schema`, a draft-07
//!   JSON Schema of a bundle generated from the live `$ConceptType` /
//!   `$PropositionType` definitions, with an example bundle.
//! - **Export** ([`export`]): what is stored, as a capsule or a bundle that
//!   re-imports into an identical graph.
//! - **Watched folder** ([`Watcher`]): imports what a folder holds and what
//!   is dropped into it, remembering in the nexus what it imported.
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! let nexus = kip_nexus::Nexus::open(dir.path()).unwrap();
//! let origin = kip_nexus::Origin::default();
//! let bundle = "- type: Domain\n  name: Botany\n  description: Plants.\n";
//! let report = kip_capsule::import_text(&nexus, "botany.yaml", bundle, &origin);
//! assert!(report.is_imported());
//! assert_eq!(report.stats.concepts_created, 1);
//!
//! let broken = "- type: Domian\n  name: Zoology\n";
//! let report = kip_capsule::import_text(&nexus, "zoology.yaml", broken, &origin);
//! assert_eq!(report.errors[0].path.as_deref(), Some("[0].type"));
//! assert_eq!((report.errors[0].line, report.errors[0].column), (Some(1), Some(9)));
//! assert_eq!(report.errors[0].suggestions, ["Domain"]);
//! ```
//!
//! This crate writes the graph only through the nexus (`Nexus::run` and
//! its variants); it keeps the watcher's memory in the nexus's `state`
//! database, beside the graph. It knows nothing of windows, sockets or wire
//! formats.

mod apply;
mod bundle;
mod emit;
mod export;
mod files;
mod import;
mod model;
mod ops;
mod piped;
mod report;
mod schema;
mod semantic;
mod source;
mod stream;
mod text;
mod watch;
mod yaml;

pub use apply::{ImportOptions, PROGRESS_EVERY};
pub use export::{ExportFormat, ExportOptions, export};
pub use files::{
    DEFAULT_MAX_FILE_MIB, MAX_FILE_VAR, capsule_files, is_capsule_file, max_file_bytes,
};
pub use import::{
    import_path, import_path_with, import_paths_with, import_source, import_streamed, import_text,
    import_text_with,
};
pub use report::{Format, ImportError, ImportReport, MAX_ERRORS, Phase, Progress, Status};
pub use schema::{KnowledgeSchema, knowledge_schema};
pub use source::{Source, content_hash};
pub use watch::{WatchError, WatchEvent, WatchOptions, Watcher};

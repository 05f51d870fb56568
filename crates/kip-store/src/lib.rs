//! `kip-store`: the Cognitive Nexus's storage, in LMDB through heed.
//!
//! One [`Store`] per folder: concept and proposition records, their indexes,
//! interned names, counters, the text index's postings, application state,
//! a change log, the cognitive trace and the format version, all in one LMDB environment
//! (`data.mdb` + `lock.mdb`). Several processes may open the same folder at
//! once. The crate knows nothing of KIP syntax or semantics: the engine
//! (`kip-nexus`) decides what to store; this crate stores it atomically,
//! indexes it and keeps its counts exact.
//!
//! # Transactions
//!
//! [`Store::read`] runs a closure on a snapshot; [`Store::write`] runs one
//! on a write transaction that commits if the closure returns `Ok` and
//! leaves nothing behind if it returns `Err` (and reruns the closure after
//! growing the map if it ran out of room); [`Store::write_uncommitted`]
//! always aborts, for dry runs. Every data method takes the transaction:
//!
//! ```
//! use kip_store::{ConceptRecord, Namespace, Store, StoreError};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let store = Store::open(dir.path()).unwrap();
//! let id = store
//!     .write(|txn| {
//!         let drug = store.intern(txn, Namespace::ConceptType, "Drug")?;
//!         let record = ConceptRecord { type_id: drug, name: "Aspirin".into(), ..Default::default() };
//!         store.create_concept(txn, &record)
//!     })
//!     .unwrap();
//! let name = store
//!     .read(|txn| Ok::<_, StoreError>(store.get_concept(txn, id)?.map(|c| c.name)))
//!     .unwrap();
//! assert_eq!(name.as_deref(), Some("Aspirin"));
//! assert_eq!(id.to_string(), "C:1");
//! ```
//!
//! # On-disk layout (format version 5)
//!
//! All integers in keys are big-endian, so keys sort as the numbers they
//! encode: fixed-width, except in the triple indexes, whose parts carry
//! their length ([`codec::triple`]). An element id is 9 bytes: a tag (`0x00` concept,
//! `0x01` proposition) and the number. A "name key" is a text as UTF-8, or
//! for texts of 448 bytes and more, their first 432 bytes and a 16-byte hash
//! ([`codec::name_key`]). "Fields" is a map whose keys are interned
//! attribute-key ids, with values in the compact value encoding
//! ([`codec::value`]).
//!
//! | database (`db_name`) | key | value |
//! |---|---|---|
//! | `meta` | `format_version`, `next_concept_id`, `next_proposition_id`, `next_term_id`, `last_change_seq`, `last_trace_id`, `next_vector_seq`; `vector_model`; `vector_sum_<group>`; `vector_code_centre_<group>` | `u32` / `u64` BE; the embedding model's name and version (UTF-8); a group's vector count `u64` BE and sum (`f64` LE each); its code centre (`f32` LE each) |
//! | `names` | namespace byte · name key | id `u32` |
//! | `name_ids` | namespace byte · id `u32` | name (UTF-8) |
//! | `concepts` | concept id `u64` | type `u32` · len-prefixed name · len-prefixed attribute fields · metadata fields ([`codec::concept`]) |
//! | `concept_keys` | type `u32` · name key | concept id `u64` (unique `(type, name)`) |
//! | `concepts_by_type` | type `u32` · concept id `u64` | empty |
//! | `concepts_by_name` | name key · `0x00` · concept id `u64` | empty |
//! | `propositions` | proposition id `u64` | the triple in compact parts (9 + 4 + 9 bytes before format 5) · len-prefixed attribute fields · metadata fields ([`codec::proposition`]) |
//! | `spo` / `pos` / `osp` | the triple in that order, compact parts ([`codec::triple`], since format 5; 22 fixed bytes before) | proposition id in the fewest bytes (8 before) |
//! | `stats` | `'T'`·type, `'P'`·predicate, `'c'`, `'p'`, `'d'`, `'l'` ([`codec::stat_key`]) | `u64` |
//! | `counters` | the engine's key bytes | `i64` BE |
//! | `terms` | term (UTF-8) | term id `u32` (since format 5; the document frequency before) |
//! | `term_ids` | term id `u32` | document frequency `u32` · the term (since format 5) |
//! | `postings` | term id `u32` · first element's ordinal `u64` | a block of up to 128 postings, delta-varint elements and frequencies ([`codec::posting`], since format 5; one key per posting before) |
//! | `documents` | element (9) | length `u32` · the document's term ids with frequencies ([`codec::document`]; the terms' texts before format 5) |
//! | `state` | name key of the state key | len-prefixed full key · value ([`codec::state`]) |
//! | `changes` | sequence `u64` | value ([`codec::value`]) |
//! | `trace` | entry id `u64` | the entry: `0` · JSON text, or `1` · JSON text compressed with raw DEFLATE (for 512 bytes and more) (since format 4; bare JSON text in formats 2 and 3) |
//! | `trace_seqs` | originator (UTF-8, ≤ 256 bytes) | its last sequence number `u64` |
//! | `trace_elements` | element (9) · entry id `u64` | empty (the entries that touched an element) |
//! | `trace_touches` | entry id `u64` | the elements it touched, 9 bytes each |
//! | `vectors` | concept id `u64` | its embedding: scale `f32` LE · one `i8` per dimension ([`codec::vector`]) |
//! | `vector_backlog` | concept id `u64` | the sequence `u64` of the write that made its vector stale |
//! | `vector_codes` | concept id / 64 `u64` | the binary codes of those 64 concepts' vectors: presence mask `u64` LE · 64 slots of one bit per dimension ([`codec::vector_code`], since format 7) |
//! | `attr_index` | type `u32` · kind (1 attributes, 2 metadata) · key `u32` · order-preserving scalar value, or `0x04` for an array or an object (since format 6) · concept id `u64` ([`codec::attr_key`], since format 3) | empty |
//!
//! Namespace bytes: 1 concept types, 2 predicates, 3 attribute and metadata
//! keys. Ids of every kind start at 1 and are never reused.
//!
//! # Integrity the store keeps
//!
//! `(type, name)` and `(subject, predicate, object)` are unique; a
//! proposition's ends exist when it is written; an element a proposition
//! refers to cannot be deleted (delete the referring propositions first, as
//! a DETACH does); deleting an element removes its text-index document; and
//! every count changes in the transaction that changes what it counts.
//!
//! Errors are [`StoreError`]s; no heed or LMDB type other than the
//! transaction types crosses this crate's boundary.
//!
//! # Performance notes
//!
//! Pattern lookups ([`Store::propositions_matching`]) read index keys only
//! and never decode records; [`Store::concept_head`] and
//! [`Store::proposition_triple`] read a record's fixed part without its
//! maps. For bulk loads, [`Store::create_propositions`] fills each index in
//! key order and is several times faster than creating propositions one by
//! one. `cargo bench -p kip-store` measures both on a generated graph.

mod attrs;
mod changes;
mod check;
pub mod codec;
mod column;
mod concepts;
mod counters;
mod data_file;
mod env;
mod error;
mod format;
mod ids;
mod names;
mod propositions;
mod scan;
mod sizes;
mod state;
mod store;
mod text;
mod trace;
mod turns;
mod vector_codes;
mod vectors;

pub use attrs::{AttrEntries, AttrMatches, AttrQuery};
pub use changes::MAX_CHANGES;
pub use check::{CheckCounts, CheckReport, MAX_LISTED_VIOLATIONS, Violation};
pub use codec::attr_key::{Cell, FieldKind};
pub use codec::triple::Triple;
pub use concepts::ConceptRecord;
pub use env::{INITIAL_MAP_VAR, MAX_MAP_VAR, StoreOptions, opened_elsewhere};
pub use error::StoreError;
pub use format::FORMAT_VERSION;
pub use heed::{RoTxn, RwTxn};
pub use ids::{ConceptId, ElementId, ParseIdError, PropositionId};
pub use names::Namespace;
pub use propositions::{NewProposition, PropositionMatch, PropositionMatches, PropositionRecord};
pub use scan::{RawProposition, encoded_field};
pub use sizes::{DatabaseSize, StoreSizes};
pub use store::Store;
pub use text::{DocumentBatch, NewDocument, PrefixPosting};
pub use trace::{MAX_ORIGINATOR_LEN, TraceSlot, stored_trace_json};
pub use vector_codes::Nearest;

/// The names of the store's LMDB databases (see the table in the crate
/// documentation for their keys and values).
pub mod db_name {
    pub const META: &str = "meta";
    pub const NAMES: &str = "names";
    pub const NAME_IDS: &str = "name_ids";
    pub const CONCEPTS: &str = "concepts";
    pub const CONCEPT_KEYS: &str = "concept_keys";
    pub const CONCEPTS_BY_TYPE: &str = "concepts_by_type";
    pub const CONCEPTS_BY_NAME: &str = "concepts_by_name";
    pub const PROPOSITIONS: &str = "propositions";
    pub const SPO: &str = "spo";
    pub const POS: &str = "pos";
    pub const OSP: &str = "osp";
    pub const STATS: &str = "stats";
    pub const COUNTERS: &str = "counters";
    pub const TERMS: &str = "terms";
    pub const POSTINGS: &str = "postings";
    pub const DOCUMENTS: &str = "documents";
    pub const STATE: &str = "state";
    pub const CHANGES: &str = "changes";
    pub const TRACE: &str = "trace";
    pub const TRACE_SEQS: &str = "trace_seqs";
    pub const TRACE_ELEMENTS: &str = "trace_elements";
    pub const TRACE_TOUCHES: &str = "trace_touches";
    pub const ATTR_INDEX: &str = "attr_index";
    pub const TERM_IDS: &str = "term_ids";
    pub const VECTORS: &str = "vectors";
    pub const VECTOR_BACKLOG: &str = "vector_backlog";
    pub const VECTOR_CODES: &str = "vector_codes";

    /// Every database, in creation order.
    pub const ALL: [&str; 27] = [
        META,
        NAMES,
        NAME_IDS,
        CONCEPTS,
        CONCEPT_KEYS,
        CONCEPTS_BY_TYPE,
        CONCEPTS_BY_NAME,
        PROPOSITIONS,
        SPO,
        POS,
        OSP,
        STATS,
        COUNTERS,
        TERMS,
        POSTINGS,
        DOCUMENTS,
        STATE,
        CHANGES,
        TRACE,
        TRACE_SEQS,
        TRACE_ELEMENTS,
        TRACE_TOUCHES,
        ATTR_INDEX,
        TERM_IDS,
        VECTORS,
        VECTOR_BACKLOG,
        VECTOR_CODES,
    ];
}

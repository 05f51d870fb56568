//! The integration tests of kip-nexus, one test binary (each file is a module:
//! `cargo test -p kip-nexus --test integration <file>::`). Files that compare
//! insta snapshots keep their own binaries, whose names the snapshots carry.

mod attr_index;
mod attribute_conflicts;
mod column_scan;
mod common;
mod compat;
mod concurrency;
mod contradictions;
mod curator;
mod duplicates;
mod engine;
mod error_codes;
mod group;
mod health;
mod known;
mod nesting;
mod overview;
mod rc11;
mod reads;
mod recall;
mod revert;
mod semantic;
mod sweep;
mod time_travel;
mod trace;
mod triage;

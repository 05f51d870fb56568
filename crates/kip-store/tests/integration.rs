//! The integration tests of kip-store, one test binary (each file is a module:
//! `cargo test -p kip-store --test integration <file>::`). Files that compare
//! insta snapshots keep their own binaries, whose names the snapshots carry.

mod attrs;
mod codec;
mod common;
mod format;
mod model;
mod store;
mod trace;
mod transactions;
mod vector_codes;

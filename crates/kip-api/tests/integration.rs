//! The integration tests of kip-api, one test binary (each file is a module:
//! `cargo test -p kip-api --test integration <file>::`). Files that compare
//! insta snapshots keep their own binaries, whose names the snapshots carry.

mod api;
mod fuzz_corpus;
mod paths_settings;

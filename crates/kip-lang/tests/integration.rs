//! The integration tests of kip-lang, one test binary (each file is a module:
//! `cargo test -p kip-lang --test integration <file>::`). Files that compare
//! insta snapshots keep their own binaries, whose names the snapshots carry.

mod binding;
mod fast_differential;
mod fuzz_corpus;
mod nesting;
mod positions;
mod regressions;
mod roundtrip_prop;
mod spec_examples;

//! The checks the fuzz targets run, shared with the stable replay test
//! `crates/kip-lang/tests/fuzz_corpus.rs` (which includes `check.rs` by path).

mod check;

pub use check::parse_roundtrip;

//! The checks the fuzz targets run, shared with the stable replay test
//! `crates/kip-lang/tests/fuzz_corpus.rs` (which includes `check.rs` by path)
//! and `crates/kip-api/tests/fuzz_corpus.rs` (which includes `request.rs`).

mod check;
pub mod differential;
pub mod request;

pub use check::parse_roundtrip;

//! KQL (being split by job; see `exec.rs` for now).

mod exec;

pub use exec::*;

//! The end-to-end tests, one binary: each file is a module
//! (`cargo test -p kip-e2e --test e2e <file>::`).

mod bridge;
mod capsules;
mod cli;
mod common;
mod concurrency;
mod faults;
mod load;
mod logic;
mod mcp;
mod nesting;
mod nexus_cli;
mod recall;
mod serve;
mod tidy;
mod time_travel;
mod trace;
mod triage;

//! One module per subcommand: each turns its arguments into calls of the
//! library crates and prints what they answer. Whatever touches the nexus
//! goes through [`kip_api::Api`] (opened by [`crate::db::open_api`]), as
//! `kip serve` and `kip mcp` do; `check` and `fmt` need no nexus and call
//! `kip-lang` directly.
//!
//! Exit codes: 0 success, 1 when the result carries a KIP error (or a
//! `--check` finds unformatted text), 2 on usage or I/O problems (an `Err`
//! from a subcommand).

pub mod bench;
pub mod check;
pub mod contradictions;
pub mod exec;
pub mod export;
pub mod fmt;
pub mod import;
pub mod init;
pub mod queues;
pub mod recall;
pub mod resolve;
pub mod schema;
pub mod search;
pub mod shield;
pub mod store;
pub mod trace;
pub mod triage;
pub mod watch;

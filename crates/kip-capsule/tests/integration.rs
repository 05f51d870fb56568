//! The integration tests of kip-capsule, one test binary (each file is a module:
//! `cargo test -p kip-capsule --test integration <file>::`). Files that compare
//! insta snapshots keep their own binaries, whose names the snapshots carry.

mod common;
mod export;
mod nesting;
mod no_panic;
mod piped;
mod schema;
mod stream;
mod watch;

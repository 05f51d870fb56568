//! The limits of one request, kept by `execute` and stated by `DESCRIBE
//! PRIMER`'s `capabilities.limits` (`meta`): a leaf both read.

/// The most commands one `execute_kip` batch may hold (`DESCRIBE PRIMER`
/// states it under `capabilities.limits`).
pub const MAX_BATCH_COMMANDS: usize = 10_000;

/// The most KIP text one `execute_kip` request may hold, all its commands
/// together (64 MiB, as `kip serve`'s default body limit; a larger graph is
/// imported as a capsule, which is read part by part).
pub const MAX_REQUEST_TEXT: usize = 64 << 20;

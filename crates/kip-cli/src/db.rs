//! Where the nexus lives: `--db`, else `$KIP_DB`, else the platform data
//! directory's `kip-explorer/nexus`, and the [`Api`] every subcommand that
//! touches the nexus goes through.
//!
//! The default is [`kip_api::paths`], which the desktop shell shares.

use std::path::PathBuf;
use std::sync::OnceLock;

use kip_api::Api;

/// The nexus folder: `--db`, else `$KIP_DB`, else the platform data directory.
pub fn db_dir(cli_db: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    kip_api::paths::nexus_dir(cli_db)
        .ok_or_else(|| anyhow::anyhow!("no data directory on this platform; pass --db DIR"))
}

/// `--originator`: who the cognitive trace names, overriding every face's
/// default.
static ORIGINATOR: OnceLock<String> = OnceLock::new();

/// Records `--originator` (once, at start-up).
pub fn set_originator(name: Option<String>) {
    if let Some(name) = name {
        let _ = ORIGINATOR.set(name);
    }
}

/// `--originator`, if given.
pub fn originator_override() -> Option<&'static str> {
    ORIGINATOR.get().map(String::as_str)
}

/// The trace's originator of a host (BRIEF §7): `--originator`, else `cli`
/// for the command line and `http` for `kip serve` (whose requests may name
/// themselves with `X-KIP-Originator`); `kip mcp` names each client.
fn default_originator(origin: &str) -> &str {
    match origin {
        "kip-cli" => "cli",
        "kip-serve" => "http",
        "kip-mcp" => "mcp",
        other => other,
    }
}

/// Opens (creating if need be) the nexus named by `--db` and the API over
/// it that writes under `origin` (`kip-cli`, `kip-serve`, …).
pub fn open_api(db: Option<PathBuf>, origin: &str) -> anyhow::Result<Api> {
    let dir = db_dir(db)?;
    let api = Api::open(&dir, origin).map_err(|e| {
        anyhow::anyhow!("cannot open the nexus at {}: {}", dir.display(), e.message)
    })?;
    Ok(match originator_override() {
        // An explicit name wins everywhere, the watched folder's imports
        // (`kip watch`, `kip serve --capsules`) included.
        Some(name) => api.with_originator(name).with_watch_originator(name),
        None => api.with_originator(default_originator(origin)),
    })
}

/// Opens the nexus named by `--db` only if one is there (a folder without
/// one is refused, naming it, instead of being created): for the
/// maintenance subcommands.
pub fn open_existing_api(db: Option<PathBuf>, origin: &str) -> anyhow::Result<Api> {
    let dir = db_dir(db)?;
    Api::open_existing(&dir, origin)
        .map_err(|e| anyhow::anyhow!("cannot open the nexus at {}: {}", dir.display(), e.message))
}

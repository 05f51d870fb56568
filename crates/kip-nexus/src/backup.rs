//! Copies of a nexus and the way back: [`Nexus::backup`] (a compacted
//! copy written while others keep writing), [`Nexus::packed_copy`] (what
//! `kip compact` puts in place), [`restore`] and [`install_staged`], which
//! put a copy in place of a nexus no process has open after checking it.

use std::path::Path;

use kip_lang::{ErrorCode, KipError};
use kip_store::CheckReport;

use crate::graph::{OrInternal as _, Result};
use crate::nexus::{DATA_FILE, Nexus, not_a_nexus};

impl Nexus {
    /// Writes a packed copy of the nexus (one snapshot, every database in key
    /// order, full pages, no free pages) as a new store in the folder `dest`;
    /// returns its size in bytes. What `kip compact` puts in place.
    pub fn packed_copy(&self, dest: &Path) -> Result<u64> {
        self.store.copy_packed(dest).kip()
    }

    /// Writes a consistent, compacted copy of the nexus into the folder
    /// `dest` (created if needed), as `dest/data.mdb`, while other threads
    /// and processes keep reading and writing: the copy is one snapshot.
    /// The copy is written beside and renamed into place, so an interrupted
    /// backup leaves no half file; an existing `dest/data.mdb` is refused.
    pub fn backup(&self, dest: &Path) -> Result<Backup> {
        let io = |what: &str, e: std::io::Error| {
            KipError::new(
                ErrorCode::InternalError,
                format!("cannot {what} {}: {e}", dest.display()),
            )
        };
        std::fs::create_dir_all(dest).map_err(|e| io("create the backup folder", e))?;
        let target = dest.join(DATA_FILE);
        if target.exists() {
            return Err(KipError::new(
                ErrorCode::DuplicateExists,
                format!("{} already holds a backup", target.display()),
            )
            .with_hint("Back up into a new or empty folder."));
        }
        let partial = dest.join(format!("{DATA_FILE}.partial"));
        let _ = std::fs::remove_file(&partial);
        self.store.copy_compacted(&partial).kip()?;
        std::fs::rename(&partial, &target).map_err(|e| io("complete the backup in", e))?;
        let bytes = std::fs::metadata(&target)
            .map_err(|e| io("read the backup in", e))?
            .len();
        Ok(Backup {
            path: target,
            bytes,
            last_change_seq: self.last_change_seq()?,
        })
    }
}

/// What [`Nexus::backup`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backup {
    /// The copy (`dest/data.mdb`).
    pub path: std::path::PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// The last change the copy may include (changes committed while the
    /// copy ran may be in it or not; none is half in it).
    pub last_change_seq: u64,
}

/// The process id of another process that has the nexus in `dir` open
/// (a server, a watcher, the app), if any.
pub fn opened_elsewhere(dir: &Path) -> Result<Option<u32>> {
    kip_store::opened_elsewhere(dir).kip()
}

/// Puts the backup in `src` (a folder holding `data.mdb`, or that file) in
/// place of the nexus in `dest`. The backup is checked first (it must open
/// and pass [`Nexus::check_store`]); a `dest` that holds a nexus is only
/// replaced with `force`, and never while another process has it open. The
/// replaced data file is kept as `data.mdb.before-restore`. Returns the
/// restored nexus's check report.
pub fn restore(src: &Path, dest: &Path, force: bool) -> Result<CheckReport> {
    let src_file = if src.is_dir() {
        src.join(DATA_FILE)
    } else {
        src.to_path_buf()
    };
    if !src_file.is_file() {
        return Err(not_a_nexus(src));
    }
    let io = |what: &str, path: &Path, e: std::io::Error| {
        KipError::new(
            ErrorCode::InternalError,
            format!("cannot {what} {}: {e}", path.display()),
        )
    };
    if let Some(pid) = opened_elsewhere(dest)? {
        return Err(KipError::new(
            ErrorCode::ImmutableTarget,
            format!("the nexus at {} is in use by process {pid}", dest.display()),
        )
        .with_hint("Stop every process that has it open (kip serve, kip mcp, kip watch, the app), then restore."));
    }
    let target = dest.join(DATA_FILE);
    if target.exists() && !force {
        return Err(KipError::new(
            ErrorCode::DuplicateExists,
            format!("{} already holds a nexus", dest.display()),
        )
        .with_hint(
            "Pass --force to replace it (its data file is kept as data.mdb.before-restore).",
        ));
    }
    // Check the backup in a staging folder beside the target, so the final
    // step is a rename on one file system.
    std::fs::create_dir_all(dest).map_err(|e| io("create", dest, e))?;
    let staging = dest.join(".restoring");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|e| io("create", &staging, e))?;
    std::fs::copy(&src_file, staging.join(DATA_FILE)).map_err(|e| io("copy", &src_file, e))?;
    install_staged(&staging, dest, &src_file)
}

/// The end of a restore: checks the store in `staging` (a folder beside
/// `dest`'s data file, on the same file system), and if it passes, sets
/// `dest`'s data file aside as `data.mdb.before-restore` and renames the
/// staged one into its place (owner-only), then removes `staging`.
/// `kip compact` stages its packed copy there directly, so the file is
/// written once. `source` names the store in errors. The caller has made
/// sure no other process has `dest` open.
pub fn install_staged(staging: &Path, dest: &Path, source: &Path) -> Result<CheckReport> {
    let io = |what: &str, path: &Path, e: std::io::Error| {
        KipError::new(
            ErrorCode::InternalError,
            format!("cannot {what} {}: {e}", path.display()),
        )
    };
    let target = dest.join(DATA_FILE);
    let report = {
        let staged = Nexus::open_existing(staging).map_err(|e| {
            KipError::new(
                e.code,
                format!(
                    "the backup {} cannot be opened: {}",
                    source.display(),
                    e.message
                ),
            )
        })?;
        staged.check_store()?
    };
    if !report.ok {
        let _ = std::fs::remove_dir_all(staging);
        return Err(KipError::new(
            ErrorCode::InternalError,
            format!(
                "the backup {} fails the integrity check ({} violations)",
                source.display(),
                report.violations.len() as u64 + report.unlisted
            ),
        )
        .with_data("check", serde_json::to_value(&report).unwrap_or_default()));
    }
    if target.exists() {
        std::fs::rename(&target, dest.join(format!("{DATA_FILE}.before-restore")))
            .map_err(|e| io("set aside", &target, e))?;
    }
    // Only the owner reads a nexus, as LMDB creates it (a copy would take
    // the umask's wider mode).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let staged = staging.join(DATA_FILE);
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| io("restrict", &staged, e))?;
    }
    // LMDB rebuilds its lock file; a stale one could describe the old map.
    let _ = std::fs::remove_file(dest.join("lock.mdb"));
    std::fs::rename(staging.join(DATA_FILE), &target)
        .map_err(|e| io("move the backup to", &target, e))?;
    let _ = std::fs::remove_dir_all(staging);
    Ok(report)
}

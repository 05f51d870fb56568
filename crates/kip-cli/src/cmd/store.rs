//! `kip check-store`, `kip backup`, `kip restore` and `kip compact`: the
//! store's integrity check and consistent copies. Each refuses a `--db` folder that holds no
//! nexus instead of creating one, naming the folder. The check and the
//! backup read every page of the store, so they run in a child process
//! ([`super::shield`]): damage that crashes the read is reported, not
//! shared.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;

use crate::db::open_existing_api;
use crate::stdio::{out, print_error};

/// Prints the check report (JSON); exit 1 if an invariant is violated or
/// reading the store crashed. `unshielded`: check in this process (the
/// shield's child).
pub fn check(db: Option<PathBuf>, unshielded: bool) -> anyhow::Result<ExitCode> {
    if !unshielded {
        return super::shield::run(&crate::db::db_dir(db)?, "check-store", &[], &[]);
    }
    match open_existing_api(db, "kip-cli")?.check_store() {
        Ok(report) => {
            out(&format!("{}\n", serde_json::to_string_pretty(&report)?));
            Ok(if report.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Err(e) => print_error(&e),
    }
}

/// `kip check-store --sizes`: prints where the store's bytes go (JSON), per
/// database: entries, key and value bytes as stored, LMDB pages by kind and
/// their bytes; then the pages no database holds (LMDB's own and free
/// pages). The walk only reads, like a query, so it runs in this process.
pub fn sizes(db: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let dir = crate::db::db_dir(db.clone())?;
    match open_existing_api(db, "kip-cli")?.store_sizes() {
        Ok(s) => {
            let page = s.page_size;
            let databases: Vec<_> = s
                .databases
                .iter()
                .map(|d| {
                    json!({
                        "database": d.name,
                        "entries": d.entries,
                        "key_bytes": d.key_bytes,
                        "value_bytes": d.value_bytes,
                        "depth": d.depth,
                        "branch_pages": d.branch_pages,
                        "leaf_pages": d.leaf_pages,
                        "overflow_pages": d.overflow_pages,
                        "bytes": d.pages() * page,
                    })
                })
                .collect();
            let report = json!({
                "page_size": page,
                "used_bytes": s.used_pages * page,
                "file_bytes": std::fs::metadata(dir.join("data.mdb")).map_or(0, |m| m.len()),
                "other_bytes": s.other_pages() * page,
                "databases": databases,
            });
            out(&format!("{}\n", serde_json::to_string_pretty(&report)?));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

/// Writes `dest/data.mdb`, a compacted copy of one snapshot, while other
/// processes keep writing. `unshielded`: copy in this process (the shield's
/// child); otherwise a crash of the copy removes its partial file.
pub fn backup(db: Option<PathBuf>, dest: &Path, unshielded: bool) -> anyhow::Result<ExitCode> {
    if !unshielded {
        // The partial file of the backup (`Api::backup_to`).
        let partial = dest.join("data.mdb.partial");
        return super::shield::run(
            &crate::db::db_dir(db)?,
            "backup",
            &[dest.as_os_str().to_owned()],
            &[partial],
        );
    }
    match open_existing_api(db, "kip-cli")?.backup_to(dest) {
        Ok(b) => {
            out(&format!("{}\n", serde_json::to_string(&b)?));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

/// Puts the backup `src` in place of the `--db` nexus (see
/// [`kip_api::restore`]); prints the restored store's check report.
pub fn restore(db: Option<PathBuf>, src: &Path, force: bool) -> anyhow::Result<ExitCode> {
    let dir = crate::db::db_dir(db)?;
    match kip_api::restore(src, &dir, force) {
        Ok(check) => {
            out(&format!(
                "{}\n",
                json!({
                    "restored": dir.display().to_string(),
                    "from": src.display().to_string(),
                    "check": check,
                })
            ));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

/// Rewrites the `--db` nexus without the free pages LMDB keeps for reuse
/// (after a bulk import a third of the file can be free) and with every
/// page full: a packed copy of one snapshot (`Nexus::packed_copy`), checked,
/// then renamed into place. Refused while any
/// other process has the nexus open, as a restore is; the original is
/// removed only after the copy passed the integrity check. Prints the file's
/// size before and after and the check report.
pub fn compact(db: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let dir = crate::db::db_dir(db.clone())?;
    match kip_api::opened_elsewhere(&dir) {
        Ok(Some(pid)) => {
            return print_error(&kip_lang::KipError::new(
                kip_lang::ErrorCode::ImmutableTarget,
                format!("the nexus at {} is in use by process {pid}", dir.display()),
            ).with_hint("Stop every process that has it open (kip serve, kip mcp, kip watch, the app), then compact."));
        }
        Ok(None) => {}
        Err(e) => return print_error(&e),
    }
    let data = dir.join("data.mdb");
    let before = std::fs::metadata(&data).map_or(0, |m| m.len());
    let staging = dir.join(".compacting");
    let _ = std::fs::remove_dir_all(&staging);
    let copied = open_existing_api(db, "kip-cli")?.packed_copy(&staging);
    if let Err(e) = copied {
        let _ = std::fs::remove_dir_all(&staging);
        return print_error(&e);
    }
    // The packed copy is checked and renamed into place where it is.
    let restored = kip_api::install_staged(&staging, &dir, &staging.join("data.mdb"));
    let _ = std::fs::remove_dir_all(&staging);
    match restored {
        Ok(check) => {
            // The copy passed the check and is in place: the old file goes.
            let _ = std::fs::remove_file(dir.join("data.mdb.before-restore"));
            let after = std::fs::metadata(&data).map_or(0, |m| m.len());
            out(&format!(
                "{}\n",
                json!({
                    "compacted": dir.display().to_string(),
                    "bytes_before": before,
                    "bytes_after": after,
                    "check": check,
                })
            ));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

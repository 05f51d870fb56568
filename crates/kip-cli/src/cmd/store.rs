//! `kip check-store`, `kip backup` and `kip restore`: the store's integrity
//! check and consistent copies. Each refuses a `--db` folder that holds no
//! nexus instead of creating one, naming the folder.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;

use crate::db::open_existing_api;
use crate::stdio::{out, print_error};

/// Prints the check report (JSON); exit 1 if an invariant is violated.
pub fn check(db: Option<PathBuf>) -> anyhow::Result<ExitCode> {
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

/// Writes `dest/data.mdb`, a compacted copy of one snapshot, while other
/// processes keep writing.
pub fn backup(db: Option<PathBuf>, dest: &Path) -> anyhow::Result<ExitCode> {
    match open_existing_api(db, "kip-cli")?.backup_to(dest) {
        Ok(b) => {
            out(&format!("{}\n", serde_json::to_string(&b)?));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

/// Puts the backup `src` in place of the `--db` nexus (see
/// [`kip_nexus::restore`]); prints the restored store's check report.
pub fn restore(db: Option<PathBuf>, src: &Path, force: bool) -> anyhow::Result<ExitCode> {
    let dir = crate::db::db_dir(db)?;
    match kip_nexus::restore(src, &dir, force) {
        Ok(report) => {
            out(&format!(
                "{}\n",
                json!({
                    "restored": dir.display().to_string(),
                    "from": src.display().to_string(),
                    "check": kip_api::store_check(report),
                })
            ));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}

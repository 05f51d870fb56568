//! `kip init [--profile memory]`: creates a nexus (Genesis applied) at
//! `--db`, or finds the one there, and installs a profile when asked (the
//! RC11 memory profile, as any client's import; installing it again changes
//! nothing). Prints `{"path", "created", "profile"?}`; exit 1 if the profile
//! did not install.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use crate::stdio::out;

pub fn run(db: Option<PathBuf>, profile: Option<String>) -> anyhow::Result<ExitCode> {
    let dir = crate::db::db_dir(db.clone())?;
    let created = !dir.join("data.mdb").is_file();
    let api = crate::db::open_api(db, "kip-cli")?;
    let mut answer = json!({"path": api.path(), "created": created});
    let mut failed = false;
    if let Some(name) = profile {
        let installed = api
            .install_profile(&kip_api::InstallProfileRequest {
                name,
                dry_run: None,
            })
            .map_err(|e| anyhow::anyhow!("{} {}", e.message, e.hint))?;
        for report in &installed.reports {
            for line in report.error_lines() {
                eprintln!("{line}");
            }
        }
        failed = !installed.profile.installed;
        answer["profile"] = serde_json::to_value(&installed)?;
    }
    out(&format!("{answer}\n"));
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

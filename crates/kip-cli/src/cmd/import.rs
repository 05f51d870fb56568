//! `kip import PATH…`: capsules and bundles through
//! [`kip_api::Api::import_file`], each file whole or not at all.

use std::path::PathBuf;
use std::process::ExitCode;

use kip_capsule::{ImportOptions, Phase, Progress};

use crate::stdio::out;

/// Files at least this large print their progress on standard error.
const PROGRESS_MIN_BYTES: u64 = 1024 * 1024;

/// One JSON report per file on standard output, each error as a
/// `file:line:column` line on standard error; exit 1 if any file failed.
pub fn run(db: Option<PathBuf>, paths: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let api = crate::db::open_api(db, "kip-cli")?;
    let mut any_failed = false;
    for file in files(paths)? {
        let large = std::fs::metadata(&file).is_ok_and(|m| m.len() >= PROGRESS_MIN_BYTES);
        let name = file.display().to_string();
        let show = |p: Progress| {
            if large {
                eprintln!(
                    "kip import: {name}: {} {}/{}",
                    phase(p.phase),
                    p.done,
                    p.total
                );
            }
        };
        let options = ImportOptions {
            dry_run: false,
            progress: Some(&show),
            originator: None,
        };
        let report = api.import_file(&file, &options)?;
        any_failed |= !report.is_imported();
        for line in report.error_lines() {
            eprintln!("{line}");
        }
        out(&format!("{}\n", serde_json::to_string(&report)?));
    }
    Ok(if any_failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The capsule files named: files as given, folders walked (hidden and
/// temporary files skipped).
fn files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        if meta.is_dir() {
            let found = kip_capsule::capsule_files(path)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
            out.extend(found);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

fn phase(p: Phase) -> &'static str {
    match p {
        Phase::Parsing => "parsing",
        Phase::Validating => "validating",
        Phase::Applying => "applying",
    }
}
